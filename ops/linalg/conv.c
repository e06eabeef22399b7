/* Convolution (1-D, 2-D, 3-D, channel-first) and its gradient, plus the
 * parameter handling shared with Deconvolution.
 *
 * Forward, per chunk of samples (see mxc__conv_chunk) and per group g:
 *   col = im2col(data chunk)                  (C*K, nb*P)
 *   Y_g = W_g col_g                           (F/g, nb*P)
 * then Y is scattered to (nb, F, P) with the bias. A chunk of one sample
 * needs no scatter: GEMM writes the output in place. A 1x1 kernel with
 * stride 1 and no padding needs no im2col either: the data is the column
 * matrix.
 * Backward, with dY gathered per chunk as (F, nb*P):
 *   dW_g += dY_g col_g^T,  dcol_g = W_g^T dY_g,  ddata = col2im(dcol),
 *   dbias = sums of dY over samples and positions. */
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/parallel.h"
#include "core/op/half_compute.h"

/* ---- parameters (shared with Deconvolution) ---- */

const char *const mxc__linalg_layouts[] = {"None", "NCW",  "NCHW",  "NCDHW",
                                           "NWC",  "NHWC", "NDHWC", NULL};

int mxc__linalg_check_layout(const char *op_name, int layout, int nsp) {
  static const int want[4] = {0, MXC__LAYOUT_NCW, MXC__LAYOUT_NCHW,
                              MXC__LAYOUT_NCDHW};
  MXC_RETURN_ERROR_IF(layout >= MXC__LAYOUT_NWC, MXC_ERR_UNSUPPORTED,
                      "operator '%s': layout '%s' is not supported; use the "
                      "channel-first layouts NCW, NCHW or NCDHW",
                      op_name, mxc__linalg_layouts[layout]);
  MXC_RETURN_ERROR_IF(
      layout != MXC__LAYOUT_NONE && nsp >= 1 && nsp <= 3 && layout != want[nsp],
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': layout '%s' does not match a %d-D "
      "kernel (expected '%s')",
      op_name, mxc__linalg_layouts[layout], nsp,
      mxc__linalg_layouts[want[nsp]]);
  return MXC_OK;
}

static const char *tuple_str(const mxc__tuple *t, char *buf, size_t len) {
  size_t pos = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < t->ndim && pos < len; ++i) {
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", i ? "," : "",
                            (long long)t->d[i]);
  }
  if (pos < len) snprintf(buf + pos, len - pos, ")");
  return buf;
}

/* Gives tuple t (named `name`) nsp entries: `dflt` each when absent,
 * otherwise checks its length and that entries are >= lo. */
static int fill_tuple(const char *op_name, const char *name, mxc__tuple *t,
                      int nsp, int64_t dflt, int64_t lo) {
  char b[128];
  if (t->ndim <= 0) {
    t->ndim = nsp;
    for (int i = 0; i < nsp; ++i) t->d[i] = dflt;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(t->ndim != nsp, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %s %s has %d entries; the kernel has %d "
                      "spatial dimensions",
                      op_name, name, tuple_str(t, b, sizeof b), t->ndim, nsp);
  for (int i = 0; i < nsp; ++i) {
    MXC_RETURN_ERROR_IF(t->d[i] < lo, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': %s %s must have entries >= %lld",
                        op_name, name, tuple_str(t, b, sizeof b),
                        (long long)lo);
  }
  return MXC_OK;
}

int mxc__conv_param_check(const char *op_name, mxc__conv_param *p, int deconv) {
  char b[128];
  int nsp = p->kernel.ndim;
  MXC_RETURN_ERROR_IF(nsp < 1 || nsp > 3, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': kernel %s must have 1, 2 or 3 entries "
                      "(1-D, 2-D or 3-D convolution)",
                      op_name, tuple_str(&p->kernel, b, sizeof b));
  MXC_FORWARD_IF_ERROR(fill_tuple(op_name, "kernel", &p->kernel, nsp, 1, 1));
  MXC_FORWARD_IF_ERROR(fill_tuple(op_name, "stride", &p->stride, nsp, 1, 1));
  MXC_FORWARD_IF_ERROR(fill_tuple(op_name, "dilate", &p->dilate, nsp, 1, 1));
  MXC_FORWARD_IF_ERROR(fill_tuple(op_name, "pad", &p->pad, nsp, 0, 0));
  if (deconv) {
    MXC_FORWARD_IF_ERROR(fill_tuple(op_name, "adj", &p->adj, nsp, 0, 0));
    for (int i = 0; i < nsp; ++i) {
      int64_t lim =
          p->stride.d[i] > p->dilate.d[i] ? p->stride.d[i] : p->dilate.d[i];
      MXC_RETURN_ERROR_IF(p->adj.d[i] >= lim, MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': adj %s must be smaller than the "
                          "stride or the dilation of each axis",
                          op_name, tuple_str(&p->adj, b, sizeof b));
    }
    if (p->target_shape.ndim > 0) {
      MXC_FORWARD_IF_ERROR(
          fill_tuple(op_name, "target_shape", &p->target_shape, nsp, 1, 1));
    }
  }
  MXC_RETURN_ERROR_IF(
      p->num_filter % p->num_group != 0, MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': num_filter (%lld) is not divisible by "
      "num_group (%lld)",
      op_name, (long long)p->num_filter, (long long)p->num_group);
  return mxc__linalg_check_layout(op_name, p->layout, nsp);
}

int mxc__conv_num_inputs(const void *param) {
  return ((const mxc__conv_param *)param)->no_bias ? 2 : 3;
}
int mxc__conv_bwd_num_inputs(const void *param) {
  return 1 + mxc__conv_num_inputs(param);
}
int mxc__conv_bwd_num_outputs(const void *param) {
  return mxc__conv_num_inputs(param);
}

const char *const mxc__conv_input_names[] = {"data", "weight", "bias", NULL};
const char *const mxc__conv_bwd_input_names[] = {"ograd", "data", "weight",
                                                 "bias", NULL};
const char *mxc__conv_input_name(const void *param, int i) {
  (void)param;
  return i >= 0 && i < 3 ? mxc__conv_input_names[i] : "?";
}
const char *mxc__conv_bwd_input_name(const void *param, int i) {
  return i == 0 ? "ograd" : mxc__conv_input_name(param, i - 1);
}

int mxc__conv_span(const char *op_name, const mxc__conv_param *p, int i,
                   int64_t *out) {
  int64_t span;
  MXC_RETURN_ERROR_IF(
      !mxc__mul_i64(p->dilate.d[i], p->kernel.d[i] - 1, &span) ||
          !mxc__add_i64(span, 1, &span),
      MXC_ERR_SHAPE,
      "operator '%s': kernel %lld with dilate %lld along spatial axis %d "
      "spans more than int64 elements",
      op_name, (long long)p->kernel.d[i], (long long)p->dilate.d[i], i);
  *out = span;
  return MXC_OK;
}

/* ---- shapes ---- */

static int conv_check(const char *op_name, void *param) {
  return mxc__conv_param_check(op_name, param, 0);
}

/* Output shape and geometry of a convolution of `data`. */
static int conv_plan(const mxc__op *op, const mxc__conv_param *p,
                     const mxc__shape *data, mxc__conv_geom *g,
                     mxc__shape *out) {
  int nsp = p->kernel.ndim;
  char b1[160];
  MXC_RETURN_ERROR_IF(data->ndim != nsp + 2, MXC_ERR_SHAPE,
                      "operator '%s': data %s must have %d axes (batch, "
                      "channel and %d spatial) for a %d-D kernel",
                      op->name, mxc__shape_str(data, b1, sizeof b1), nsp + 2,
                      nsp, nsp);
  int64_t c = data->dims[1];
  MXC_RETURN_ERROR_IF(c % p->num_group != 0, MXC_ERR_SHAPE,
                      "operator '%s': data %s has %lld channels, not "
                      "divisible by num_group (%lld)",
                      op->name, mxc__shape_str(data, b1, sizeof b1),
                      (long long)c, (long long)p->num_group);
  int64_t osp[3] = {0, 0, 0};
  for (int i = 0; i < nsp; ++i) {
    int64_t in = data->dims[2 + i], span, padded;
    MXC_FORWARD_IF_ERROR(mxc__conv_span(op->name, p, i, &span));
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(p->pad.d[i], 2, &padded) ||
                            !mxc__add_i64(padded, in, &padded),
                        MXC_ERR_SHAPE,
                        "operator '%s': pad %lld along spatial axis %d "
                        "overflows int64",
                        op->name, (long long)p->pad.d[i], i);
    MXC_RETURN_ERROR_IF(span > padded, MXC_ERR_SHAPE,
                        "operator '%s': the kernel (extent %lld with "
                        "dilation) is larger than the padded input (%lld = "
                        "%lld + 2*%lld) along spatial axis %d of data %s",
                        op->name, (long long)span, (long long)padded,
                        (long long)in, (long long)p->pad.d[i], i,
                        mxc__shape_str(data, b1, sizeof b1));
    osp[i] = (padded - span) / p->stride.d[i] + 1;
  }
  MXC_FORWARD_IF_ERROR(mxc__conv_geom_fill(op->name, p, p->pad.d,
                                           data->dims[0], c, p->num_filter,
                                           data->dims + 2, osp, g));
  out->ndim = nsp + 2;
  out->dims[0] = data->dims[0];
  out->dims[1] = p->num_filter;
  for (int i = 0; i < nsp; ++i) out->dims[2 + i] = osp[i];
  return MXC_OK;
}

static int conv_infer_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  (void)n_out;
  const mxc__conv_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(conv_plan(op, p, &in[0], &g, &o));
  mxc__shape w = {p->kernel.ndim + 2, {p->num_filter, g.img_c / g.groups}};
  for (int i = 0; i < p->kernel.ndim; ++i) w.dims[2 + i] = p->kernel.d[i];
  MXC_FORWARD_IF_ERROR(
      mxc__linalg_assign_shape(op, param, &in[1], &w, "input 1 ('weight')"));
  if (n_in > 2) {
    mxc__shape b = {1, {p->num_filter}};
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &in[2], &b, "input 2 ('bias')"));
  }
  return mxc__linalg_assign_shape(op, param, &out[0], &o, "output");
}

static int conv_bwd_infer_shape(const mxc__op *op, const void *param,
                                mxc__shape *in, int n_in, mxc__shape *out,
                                int n_out) {
  if (in[1].ndim >= 0) {
    mxc__shape o = {-1, {0}};
    MXC_FORWARD_IF_ERROR(conv_infer_shape(op, param, in + 1, n_in - 1, &o, 1));
    if (in[0].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(
          mxc__linalg_assign_shape(op, param, &in[0], &o, "ograd"));
    }
  }
  return mxc__linalg_bwd_infer_shape(op, param, in, n_in, out, n_out);
}

/* ---- compute ----
 *
 * Both directions split the batch into one part per kernel thread
 * (core/op/parallel.h) and walk each part in chunks of nb images: im2col of a
 * chunk into the part's own buffers, sized to stay in one core's L2
 * cache, then GEMMs on them in the part's thread (a GEMM or im2col called
 * inside a part finds the pool busy and runs where it is). Splitting the
 * batch rather than each GEMM keeps everything a chunk touches in one
 * core's cache and needs no hand-off per chunk: LeNet's second layer went
 * from 8.5 to ~4 ms forward and from 21 to ~8 ms backward on the 2-core
 * machine. The weight gradient is summed from per-part partials at the
 * end (part 0 writes the output itself). With one part (one thread, or a
 * batch of one) the GEMMs may still split themselves over the pool. */

#define AT(ptr, elems) ((char *)(ptr) + (size_t)(elems)*es)
/* AT for the per-part buffers, which are NULL when they would hold no
 * elements (zero input channels): stays NULL, as arithmetic on a null
 * pointer is undefined even with offset 0; GEMM reads nothing then. */
#define AT0(ptr, elems) ((ptr) ? AT(ptr, elems) : NULL)

/* Bytes of column buffer (plus gathered output) per chunk: half of a
 * 1 MiB L2, leaving room for the weights and the GEMM's own packing. */
#ifndef PART_CHUNK_BYTES
#define PART_CHUNK_BYTES ((int64_t)512 << 10)
#endif

#ifndef PER_IMAGE_MIN_POSITIONS
#define PER_IMAGE_MIN_POSITIONS 256
#endif

/* 1x1 kernel, stride 1, no padding: the data is its own column matrix. */
static int is_pointwise(const mxc__conv_geom *g) {
  for (int i = 0; i < 3; ++i) {
    if (g->k[i] != 1 || g->s[i] != 1 || g->p[i] != 0) return 0;
  }
  return 1;
}

typedef struct conv_work {
  const mxc__conv_geom *g;
  int dt;
  size_t es;
  int pw;               /* pointwise: no im2col, one image per chunk */
  int per_image;        /* GEMMs per image straight into the output */
  int64_t nb;           /* images per chunk */
  int64_t per_part;     /* images per part (the last part may have fewer) */
  size_t col_bytes;     /* per part: column buffer ... */
  size_t slot_bytes;    /* ... plus the gathered (F, nb*P) block */
  char *tmp;            /* n_parts slots ... */
  char *partials;       /* ... then dW partials of parts 1.. (backward) */
  size_t dw_bytes;
  char *db_partials;    /* backward with a bias: db of every part */
  size_t db_bytes;
  const void *bias;     /* forward: NULL without a bias input */
  const mxc__blob *in, *out;
  const mxc__req *req;
} conv_work;

/* Splits the batch and sizes the chunks; *n_parts parts are needed. */
static void conv_work_plan(conv_work *w, const mxc__conv_geom *g, int dt,
                           int64_t rows, int64_t *n_parts) {
  w->g = g;
  w->dt = dt;
  w->es = mxc__dtype_size(dt);
  w->pw = is_pointwise(g);
  int64_t parts = mxc__parallel_threads();
  if (parts > g->batch) parts = g->batch;
  if (parts < 1) parts = 1;
  w->per_part = (g->batch + parts - 1) / parts;
  if (w->per_part < 1) w->per_part = 1;
  *n_parts = (g->batch + w->per_part - 1) / w->per_part;
  int64_t per_img = (rows + g->col_c) * g->col_n * (int64_t)w->es;
  int64_t nb = per_img > 0 ? PART_CHUNK_BYTES / per_img : 1;
  if (nb > w->per_part) nb = w->per_part;
  w->nb = w->pw || nb < 1 ? 1 : nb;
  /* Images with many positions (LeNet's first layer: 576) get one GEMM
   * each, reading their columns of the chunk's buffer (ldb = chunk width)
   * and writing the output in place: wide enough to run well, and no
   * gather/scatter pass. Small images share one wide GEMM per chunk. */
  w->per_image = g->col_n >= PER_IMAGE_MIN_POSITIONS || w->nb == 1;
  w->col_bytes = w->pw ? 0 : (size_t)(rows * w->nb * g->col_n) * w->es;
  size_t yt = w->per_image ? 0 : (size_t)(g->col_c * w->nb * g->col_n) * w->es;
  w->slot_bytes = (w->col_bytes + yt + 63) / 64 * 64;
}

/* Part `part`'s slot of the temporary space. Pointwise per-image work
 * needs none, and then tmp is NULL: even a zero offset on NULL is
 * undefined in C (clang's UBSan reports it), so no arithmetic then. */
static char *part_slot(const conv_work *w, int64_t part) {
  return w->tmp ? w->tmp + (size_t)part * w->slot_bytes : NULL;
}

/* Forward over the images of one part. */
static void fwd_part(const conv_work *w, int64_t part) {
  const mxc__conv_geom *g = w->g;
  size_t es = w->es;
  int dt = w->dt;
  int64_t F = g->col_c, Fg = F / g->groups, P = g->col_n;
  int64_t CgK = g->img_c * g->k_n / g->groups;
  int64_t b0 = part * w->per_part;
  int64_t b1 = b0 + w->per_part < g->batch ? b0 + w->per_part : g->batch;
  char *colbuf = part_slot(w, part);
  char *yt = colbuf ? colbuf + w->col_bytes : NULL;
  const void *bias = w->bias;
  for (int64_t n0 = b0; n0 < b1; n0 += w->nb) {
    int64_t cur = b1 - n0 < w->nb ? b1 - n0 : w->nb;
    int64_t ncol = cur * P;
    const void *x = AT(w->in[0].ptr, n0 * g->img_c * g->img_n);
    void *y = AT(w->out[0].ptr, n0 * F * P);
    const void *col = x;
    if (!w->pw) {
      mxc__im2col(dt, g, x, cur, colbuf);
      col = colbuf;
    }
    if (w->per_image) { /* (F, P) per image is the output's own layout */
      int acc = w->req[0] == MXC__REQ_ADD;
      for (int64_t i = 0; i < cur; ++i) {
        void *yi = AT(y, i * F * P);
        for (int64_t gr = 0; gr < g->groups; ++gr) {
          mxc__gemm(dt, 0, 0, Fg, P, CgK, AT(w->in[1].ptr, gr * Fg * CgK),
                    CgK, AT0(col, gr * CgK * ncol + i * P), ncol, acc,
                    AT(yi, gr * Fg * P), P);
        }
      }
      if (bias) mxc__add_bias(dt, y, cur, F, P, bias);
      continue;
    }
    for (int64_t gr = 0; gr < g->groups; ++gr) {
      mxc__gemm(dt, 0, 0, Fg, ncol, CgK, AT(w->in[1].ptr, gr * Fg * CgK),
                CgK, AT0(col, gr * CgK * ncol), ncol, 0,
                AT0(yt, gr * Fg * ncol), ncol);
    }
    mxc__unpack_chunk(dt, yt, cur, F, P, bias, w->req[0], y);
  }
}

static int fwd_parts(void *arg, int64_t lo, int64_t hi) {
  for (int64_t part = lo; part < hi; ++part) fwd_part(arg, part);
  return MXC_OK;
}

static int conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_out;
  const mxc__conv_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(conv_plan(op, p, &in[0].shape, &g, &o));
  if (g.batch == 0) return MXC_OK;
  conv_work w;
  int64_t parts;
  conv_work_plan(&w, &g, in[0].dtype, g.img_c * g.k_n, &parts);
  w.in = in;
  w.out = out;
  w.req = req;
  w.dw_bytes = 0;
  w.tmp = w.partials = NULL;
  w.bias = n_in > 2 ? in[2].ptr : NULL;
  size_t need = (size_t)parts * w.slot_bytes;
  if (need) MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, need, (void **)&w.tmp));
  /* fwd_parts cannot fail, so neither can the loop. */
  (void)mxc__parallel_for(parts, 1, (int)parts, fwd_parts, &w);
  return MXC_OK;
}

/* Backward over the images of one part: dW into the output (part 0) or
 * the part's partial, ddata into the part's own images. */
static void bwd_part(const conv_work *w, int64_t part) {
  const mxc__conv_geom *g = w->g;
  size_t es = w->es;
  int dt = w->dt;
  int64_t F = g->col_c, Fg = F / g->groups, P = g->col_n;
  int64_t CgK = g->img_c * g->k_n / g->groups;
  int64_t b0 = part * w->per_part;
  int64_t b1 = b0 + w->per_part < g->batch ? b0 + w->per_part : g->batch;
  char *colbuf = part_slot(w, part);
  char *dyt = colbuf ? colbuf + w->col_bytes : NULL;
  int need_dx = w->req[0] != MXC__REQ_NULL;
  int need_dw = w->req[1] != MXC__REQ_NULL;
  void *dw = part == 0      ? w->out[1].ptr
             : w->partials ? w->partials + (size_t)(part - 1) * w->dw_bytes
                           : NULL; /* dW holds no elements */
  int dw_add = part == 0 && w->req[1] == MXC__REQ_ADD;
  if (w->db_partials) {
    mxc__sum_bias(dt, AT(w->in[0].ptr, b0 * F * P), b1 - b0, F, P,
                  MXC__REQ_WRITE, w->db_partials + (size_t)part * w->db_bytes);
  }
  if (!need_dx && !need_dw) return;
  if (need_dx && !w->pw) {
    mxc__clear_unless_add(AT(w->out[0].ptr, b0 * g->img_c * g->img_n),
                          (size_t)((b1 - b0) * g->img_c * g->img_n) * es,
                          w->req[0]);
  }
  for (int64_t n0 = b0; n0 < b1; n0 += w->nb) {
    int64_t cur = b1 - n0 < w->nb ? b1 - n0 : w->nb;
    int64_t ncol = cur * P;
    size_t xoff = (size_t)(n0 * g->img_c * g->img_n);
    const void *dy = AT(w->in[0].ptr, n0 * F * P);
    /* Per image: GEMMs over each image's (F, P) block of dY as it lies;
     * otherwise dY is gathered to (F, ncol) for one wide GEMM. Either way
     * GEMM j of a group covers `span` columns starting at column j*P of
     * the chunk's column matrix. */
    int64_t n_gemm = w->per_image ? cur : 1, span = w->per_image ? P : ncol;
    int64_t ldy = span;
    if (!w->per_image) {
      mxc__pack_chunk(dt, dy, cur, F, P, dyt);
      dy = dyt;
    }
#define DY_AT(j, gr) AT0(dy, w->per_image ? ((j)*F + (gr)*Fg) * P : (gr)*Fg * ncol)
    if (need_dw) { /* dW_g (Fg, CgK) += dY_g (Fg, ncol) col_g^T */
      const void *col = AT(w->in[1].ptr, xoff);
      if (!w->pw) {
        mxc__im2col(dt, g, col, cur, colbuf);
        col = colbuf;
      }
      for (int64_t j = 0; j < n_gemm; ++j) {
        int acc = n0 > b0 || j > 0 || dw_add;
        for (int64_t gr = 0; gr < g->groups; ++gr) {
          mxc__gemm(dt, 0, 1, Fg, CgK, span, DY_AT(j, gr), ldy,
                    AT0(col, gr * CgK * ncol + j * P), ncol, acc,
                    AT0(dw, gr * Fg * CgK), CgK);
        }
      }
    }
    if (need_dx) { /* dcol_g (CgK, ncol) = W_g^T dY_g, then col2im */
      void *dcol = w->pw ? AT(w->out[0].ptr, xoff) : (void *)colbuf;
      int acc = w->pw && w->req[0] == MXC__REQ_ADD;
      for (int64_t j = 0; j < n_gemm; ++j) {
        for (int64_t gr = 0; gr < g->groups; ++gr) {
          mxc__gemm(dt, 1, 0, CgK, span, Fg, AT(w->in[2].ptr, gr * Fg * CgK),
                    CgK, DY_AT(j, gr), ldy, acc,
                    AT0(dcol, gr * CgK * ncol + j * P), ncol);
        }
      }
      if (!w->pw) mxc__col2im(dt, g, dcol, cur, AT(w->out[0].ptr, xoff));
    }
#undef DY_AT
  }
}

static int bwd_parts(void *arg, int64_t lo, int64_t hi) {
  for (int64_t part = lo; part < hi; ++part) bwd_part(arg, part);
  return MXC_OK;
}

/* dw += partial, n elements. */
static void add_partial(int dt, void *dw, const void *partial, int64_t n) {
  if (dt == MXC_DTYPE_FLOAT32) {
    float *restrict d = dw;
    const float *restrict s = partial;
    for (int64_t i = 0; i < n; ++i) d[i] += s[i];
  } else {
    double *restrict d = dw;
    const double *restrict s = partial;
    for (int64_t i = 0; i < n; ++i) d[i] += s[i];
  }
}

/* _backward_Convolution: inputs (ograd, data, weight[, bias]), outputs
 * (ddata, dweight[, dbias]). */
static int conv_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in;
  const mxc__conv_param *p = param;
  mxc__conv_geom g;
  mxc__shape o;
  MXC_FORWARD_IF_ERROR(conv_plan(op, p, &in[1].shape, &g, &o));
  int dt = in[0].dtype;
  size_t es = mxc__dtype_size(dt);
  int64_t F = g.col_c, CgK = g.img_c * g.k_n / g.groups;
  int need_dx = req[0] != MXC__REQ_NULL, need_dw = req[1] != MXC__REQ_NULL;
  int need_db = n_out > 2 && req[2] != MXC__REQ_NULL;
  if (g.batch == 0) {
    if (need_dw) mxc__clear_unless_add(out[1].ptr, (size_t)(F * CgK) * es, req[1]);
    if (need_db) mxc__clear_unless_add(out[2].ptr, (size_t)F * es, req[2]);
    return MXC_OK;
  }
  if (!need_dx && !need_dw && !need_db) return MXC_OK;
  conv_work w;
  int64_t parts;
  conv_work_plan(&w, &g, dt, g.img_c * g.k_n, &parts);
  w.in = in;
  w.out = out;
  w.req = req;
  w.dw_bytes = need_dw ? ((size_t)(F * CgK) * es + 63) / 64 * 64 : 0;
  w.bias = NULL;
  w.tmp = w.partials = w.db_partials = NULL;
  w.db_bytes = need_db ? ((size_t)F * es + 63) / 64 * 64 : 0;
  size_t dw_end = (size_t)parts * w.slot_bytes + (size_t)(parts - 1) * w.dw_bytes;
  size_t need = dw_end + (size_t)parts * w.db_bytes;
  if (need) MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, need, (void **)&w.tmp));
  if (w.tmp) w.partials = w.tmp + (size_t)parts * w.slot_bytes;
  if (need_db && w.tmp) w.db_partials = w.tmp + dw_end;
  (void)mxc__parallel_for(parts, 1, (int)parts, bwd_parts, &w);
  /* Without temporary space (zero input channels or filters) dW and db
   * hold no elements: nothing to sum. */
  for (int64_t k = 1; need_dw && w.partials && k < parts; ++k) {
    add_partial(dt, out[1].ptr, w.partials + (size_t)(k - 1) * w.dw_bytes,
                F * CgK);
  }
  if (need_db) { /* db (req) = sum of the parts' sums, in part order */
    mxc__clear_unless_add(out[2].ptr, (size_t)F * es, req[2]);
    for (int64_t k = 0; w.db_partials && k < parts; ++k) {
      add_partial(dt, out[2].ptr, w.db_partials + (size_t)k * w.db_bytes, F);
    }
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const mxc__param_def k_params[] = {MXC__CONV_PARAM_DEFS("false")};

#define CONV_PARAMS \
  MXC__PARAMS_OF(mxc__conv_param, k_params), .param_check = conv_check

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(conv_forward_any, conv_forward, 0)
MXC__HALF_COMPUTE_FN(conv_backward_any, conv_backward, 0)

int mxc__conv_infer_shape(const mxc__op *op, const mxc__conv_param *p,
                          mxc__shape *in, int n_in, mxc__shape *out) {
  return conv_infer_shape(op, p, in, n_in, out, 1);
}

int mxc__conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const mxc__conv_param *p, const mxc__blob *in, int n_in,
                      const mxc__blob *out, const mxc__req *req) {
  return conv_forward_any(op, ctx, p, in, n_in, out, 1, req);
}

static const mxc__op k_conv = {
    .name = "Convolution",
    .doc =
        "N-D convolution (1-D to 3-D, channel-first): data (N, C, ...), "
        "weight (num_filter, C/num_group, *kernel), bias (num_filter) -> "
        "(N, num_filter, ...).",
    CONV_PARAMS,
    .num_inputs = mxc__conv_num_inputs,
    .input_names = mxc__conv_input_names,
    .input_name = mxc__conv_input_name,
    .n_outputs = 1,
    .infer_shape = conv_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = conv_forward_any,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 3,
    .resources = MXC__RES_TEMP,
};

static const mxc__op k_conv_bwd = {
    .name = "_backward_Convolution",
    .doc = "Gradient of Convolution.",
    CONV_PARAMS,
    .num_inputs = mxc__conv_bwd_num_inputs,
    .input_names = mxc__conv_bwd_input_names,
    .input_name = mxc__conv_bwd_input_name,
    .num_outputs = mxc__conv_bwd_num_outputs,
    .infer_shape = conv_bwd_infer_shape,
    .infer_type = mxc__linalg_infer_type,
    .compute = conv_backward_any,
    .resources = MXC__RES_TEMP,
    .hidden = 1,
};

int mxc__linalg_register_convolution(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_conv));
  return mxc__registry_add(r, &k_conv_bwd);
}
