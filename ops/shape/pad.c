/* Pad: widens every axis k by pad_width[2k] elements before and
 * pad_width[2k+1] after, filled with a constant, the nearest edge element,
 * or the mirror image without repeating the edge (numpy's "reflect").
 * MXNet only pads the spatial axes of 4-d/5-d inputs; this version takes
 * any number of axes and pads any of them.
 *
 * Constant padding fills the output and copies the input into its interior
 * box; its gradient crops that box. Edge and reflect padding map each
 * output index to an input index per axis (index maps); their gradient adds
 * every output gradient element to the input element it came from, so
 * edge elements collect the gradients of all their copies. */
#include <inttypes.h>
#include <string.h>

#include "core/base/alloc.h"
#include "ops/shape/pad_params.h"
#include "ops/shape/shape_internal.h"

enum {
  PAD_CONSTANT = MXC__PAD_CONSTANT,
  PAD_EDGE = MXC__PAD_EDGE,
  PAD_REFLECT = MXC__PAD_REFLECT
};
static const char *const k_modes[] = {"constant", "edge", "reflect", NULL};

typedef mxc__pad_param pad_param;

static const mxc__param_def k_pad_params[] = {
    MXC__PARAM_ENUM(pad_param, mode, "constant", k_modes,
                    "how to fill the padding"),
    MXC__PARAM(pad_param, pad_width, MXC__P_TUPLE, NULL,
               "(before_0, after_0, before_1, after_1, ...): two entries "
               "per input axis"),
    MXC__PARAM(pad_param, constant_value, MXC__P_FLOAT, "0",
               "fill value of mode 'constant'"),
};

/* Checks pad_width against the input; fills the output shape. */
static int pad_out_shape(const mxc__op *op, const pad_param *p,
                         const mxc__shape *in, mxc__shape *out) {
  char b1[160], b2[256];
  const int nd = in->ndim;
  MXC_RETURN_ERROR_IF(p->pad_width.ndim != 2 * nd, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'pad_width' = %s has %d "
                      "entries; an input of shape %s needs %d (before and "
                      "after each axis)",
                      op->name,
                      mxc__shp_tuple_str(&p->pad_width, b2, sizeof b2),
                      p->pad_width.ndim, MXC__SHP_STR(in, b1), 2 * nd);
  *out = *in;
  for (int k = 0; k < nd; ++k) {
    int64_t before = p->pad_width.d[2 * k], after = p->pad_width.d[2 * k + 1];
    int64_t n = in->dims[k];
    MXC_RETURN_ERROR_IF(before < 0 || after < 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'pad_width' = %s has a "
                        "negative entry",
                        op->name,
                        mxc__shp_tuple_str(&p->pad_width, b2, sizeof b2));
    MXC_RETURN_ERROR_IF(p->mode == PAD_EDGE && n == 0 && before + after > 0,
                        MXC_ERR_SHAPE,
                        "operator '%s': mode 'edge' cannot pad axis %d of "
                        "the input (shape %s): it has no elements",
                        op->name, k, MXC__SHP_STR(in, b1));
    MXC_RETURN_ERROR_IF(p->mode == PAD_REFLECT && (before >= n || after >= n) &&
                            before + after > 0,
                        MXC_ERR_SHAPE,
                        "operator '%s': mode 'reflect' pads axis %d of the "
                        "input (shape %s) by (%" PRId64 ", %" PRId64
                        "); each must be below the axis extent %" PRId64,
                        op->name, k, MXC__SHP_STR(in, b1), before, after, n);
    MXC_RETURN_ERROR_IF(!mxc__add_i64(n, before, &out->dims[k]) ||
                            !mxc__add_i64(out->dims[k], after, &out->dims[k]),
                        MXC_ERR_SHAPE,
                        "operator '%s': padding axis %d (extent %" PRId64
                        ") by (%" PRId64 ", %" PRId64 ") overflows int64",
                        op->name, k, n, before, after);
  }
  return MXC_OK;
}

static int pad_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(pad_out_shape(op, param, &in[0], &s));
  return mxc__shp_set_out(op, out, 0, &s);
}

/* The interior box of the padded array (where the input lands) as an
 * iteration over the input's dims: the padded side's view gets strides
 * and offset written into pstride/poff. */
static void interior(const pad_param *p, const mxc__shape *in,
                     const mxc__shape *padded, mxc__shp_iter *it, int64_t *poff,
                     int64_t *pstride) {
  int64_t str[MXC_MAX_NDIM];
  mxc__shp_strides(padded->dims, padded->ndim, str);
  mxc__shp_iter_contig(it, in->dims, in->ndim);
  *poff = 0;
  for (int k = 0; k < in->ndim; ++k) {
    *poff += p->pad_width.d[2 * k] * str[k];
    pstride[k] = str[k];
  }
}

/* Index maps: for axis k, maps + start[k] holds the input index of each
 * output index (edge/reflect only; every entry valid). */
static int make_maps(const char *op_name, const pad_param *p,
                     const mxc__shape *in, const mxc__shape *out,
                     int64_t **maps, int64_t *start) {
  int64_t total = 0;
  for (int k = 0; k < out->ndim; ++k) {
    start[k] = total;
    total += out->dims[k];
  }
  int64_t *m = mxc__malloc((size_t)(total ? total : 1) * sizeof(int64_t));
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM, "operator '%s': out of memory", op_name);
  for (int k = 0; k < out->ndim; ++k) {
    int64_t n = in->dims[k], before = p->pad_width.d[2 * k];
    for (int64_t o = 0; o < out->dims[k]; ++o) {
      m[start[k] + o] = mxc__pad_map(p->mode, o, before, n);
    }
  }
  *maps = m;
  return MXC_OK;
}

/* Calls visit(ctx, out_index, in_index) for every element of the padded
 * array, in order, through the index maps. */
typedef void (*visit_fn)(void *ctx, int64_t o, int64_t i);

static void walk_maps(const mxc__shape *in, const mxc__shape *out,
                      const int64_t *maps, const int64_t *start, visit_fn visit,
                      void *ctx) {
  const int nd = out->ndim;
  if (mxc__shape_size(out) == 0) return;
  if (nd == 0) {
    visit(ctx, 0, 0);
    return;
  }
  int64_t istr[MXC_MAX_NDIM], idx[MXC_MAX_NDIM] = {0};
  mxc__shp_strides(in->dims, nd, istr);
  const int64_t *last = maps + start[nd - 1];
  int64_t o = 0;
  for (;;) {
    int64_t base = 0;
    for (int k = 0; k < nd - 1; ++k) base += maps[start[k] + idx[k]] * istr[k];
    for (int64_t j = 0; j < out->dims[nd - 1]; ++j)
      visit(ctx, o++, base + last[j]);
    int k = nd - 2;
    for (; k >= 0; --k) {
      if (++idx[k] < out->dims[k]) break;
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

typedef struct gather_ctx {
  char *dst;
  const char *src;
  size_t esize;
} gather_ctx;

static void visit_gather(void *c, int64_t o, int64_t i) {
  const gather_ctx *g = c;
  memcpy(g->dst + o * (int64_t)g->esize, g->src + i * (int64_t)g->esize,
         g->esize);
}

/* Fills b with v converted to b's dtype (bytes of element 0 replicated). */
static void fill_value(const mxc__blob *b, double v) {
  int64_t n = mxc__shape_size(&b->shape);
  if (n == 0) return;
  size_t es = mxc__dtype_size(b->dtype);
  mxc__blob_set(b, 0, v);
  char *p = b->ptr;
  size_t have = es, want = (size_t)n * es;
  while (have < want) { /* doubling copies */
    size_t c = have < want - have ? have : want - have;
    memcpy(p + have, p, c);
    have += c;
  }
}

/* Writes the padded input into out (overwriting). */
static int pad_write(const mxc__op *op, const pad_param *p, const mxc__blob *in,
                     const mxc__blob *out) {
  if (p->mode == PAD_CONSTANT) {
    fill_value(out, p->constant_value);
    mxc__shp_iter it;
    interior(p, &in->shape, &out->shape, &it, &it.dst_off, it.dst_stride);
    mxc__shp_copy(&it, out, in, MXC__REQ_WRITE);
    return MXC_OK;
  }
  int64_t *maps = NULL, start[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(
      make_maps(op->name, p, &in->shape, &out->shape, &maps, start));
  gather_ctx g = {out->ptr, in->ptr, mxc__dtype_size(in->dtype)};
  walk_maps(&in->shape, &out->shape, maps, start, visit_gather, &g);
  mxc__free(maps);
  return MXC_OK;
}

static int pad_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (req[0] != MXC__REQ_ADD) return pad_write(op, param, &in[0], &out[0]);
  /* Accumulating: pad into a scratch array, then add. */
  int64_t n = mxc__shape_size(&out[0].shape);
  mxc__blob tmp = out[0];
  tmp.ptr = mxc__malloc((size_t)(n ? n : 1) * mxc__dtype_size(out[0].dtype));
  MXC_RETURN_ERROR_IF(!tmp.ptr, MXC_ERR_OOM, "operator '%s': out of memory",
                      op->name);
  int rc = pad_write(op, param, &in[0], &tmp);
  if (rc == MXC_OK) mxc__shp_copy_flat(&out[0], &tmp, MXC__REQ_ADD);
  mxc__free(tmp.ptr);
  return rc;
}

/* ---- gradient: _backward_Pad (ograd, data) -> d data ---- */

static int pad_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  mxc__shape s;
  char b1[160], b2[160];
  MXC_FORWARD_IF_ERROR(pad_out_shape(op, param, &in[1], &s));
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&s, &in[0]), MXC_ERR_SHAPE,
                      "operator '%s': output gradient has shape %s; "
                      "expected %s",
                      op->name, MXC__SHP_STR(&in[0], b1), MXC__SHP_STR(&s, b2));
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

typedef struct scatter_ctx {
  double *acc;
  const mxc__blob *src;
} scatter_ctx;

static void visit_scatter(void *c, int64_t o, int64_t i) {
  const scatter_ctx *s = c;
  s->acc[i] += mxc__blob_get(s->src, o);
}

static int pad_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const pad_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (p->mode == PAD_CONSTANT) { /* crop the interior */
    mxc__shp_iter it;
    interior(p, &out[0].shape, &in[0].shape, &it, &it.src_off, it.src_stride);
    mxc__shp_copy(&it, &out[0], &in[0], req[0]);
    return MXC_OK;
  }
  int64_t n = mxc__shape_size(&out[0].shape);
  if (n == 0) return MXC_OK;
  int64_t *maps = NULL, start[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(
      make_maps(op->name, p, &out[0].shape, &in[0].shape, &maps, start));
  double *acc = mxc__calloc((size_t)n, sizeof(double));
  if (!acc) {
    mxc__free(maps);
    return mxc__error_set(MXC_ERR_OOM, "operator '%s': out of memory",
                          op->name);
  }
  scatter_ctx s = {acc, &in[0]};
  walk_maps(&out[0].shape, &in[0].shape, maps, start, visit_scatter, &s);
  for (int64_t i = 0; i < n; ++i) {
    double v = acc[i];
    if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i);
    mxc__blob_set(&out[0], i, v);
  }
  mxc__free(acc);
  mxc__free(maps);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const char *const k_pad_alias[] = {"pad", NULL};

static const mxc__op k_pad = {
    .name = "Pad",
    .aliases = k_pad_alias,
    .doc =
        "Pads every axis by pad_width (before, after) with a constant, "
        "the edge value, or a reflection.",
    MXC__PARAMS_OF(pad_param, k_pad_params),
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = pad_shape,
    .compute = pad_forward,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 1,
};

static const mxc__op k_pad_bwd = {
    .name = "_backward_Pad",
    .doc =
        "Gradient of Pad: the interior of the output gradient, plus the "
        "padding's gradient for edge/reflect.",
    MXC__PARAMS_OF(pad_param, k_pad_params),
    .n_inputs = 2,
    .input_names = k_bwd_in,
    .n_outputs = 1,
    .infer_shape = pad_bwd_shape,
    .compute = pad_backward,
    .hidden = 1,
};

int mxc__shp_register_pad(mxc__registry *r) {
  static const mxc__op *const ops[] = {&k_pad, &k_pad_bwd, NULL};
  return mxc__shp_add_all(r, ops);
}
