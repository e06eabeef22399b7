/* Operators that only rearrange elements or read the shape:
 *   reshape_like:   lhs's elements in lhs's shape with the axes
 *                   [lhs_begin, lhs_end) replaced by rhs's axes
 *                   [rhs_begin, rhs_end) (all axes by default);
 *   shape_array, size_array: the shape (ndim) / element count (1) as int64;
 *   depth_to_space, space_to_depth: (N, C, H, W) blocks of block_size^2
 *                   channels <-> block_size x block_size spatial tiles,
 *                   in MXNet's order: depth channel (i * b + j) * C' + c
 *                   holds space channel c at tile offset (i, j);
 *   diag:           a 1-D array -> the matrix with it on diagonal k; an
 *                   N-D array -> diagonal k of the (axis1, axis2) planes,
 *                   as the last axis.
 * Each is one strided copy (mxc__shp_copy) between a contiguous side and a
 * strided view; gradients copy the other way. */
#include <string.h>

#include "ops/shape/rearrange_map.h"
#include "ops/shape/shape_internal.h"

/* ---- reshape_like ---- */

typedef struct rl_param {
  mxc__opt_int lhs_begin, lhs_end, rhs_begin, rhs_end;
} rl_param;

static const mxc__param_def k_rl_params[] = {
    MXC__PARAM(rl_param, lhs_begin, MXC__P_OPT_INT, "None",
               "First axis of lhs to replace (None: 0)."),
    MXC__PARAM(rl_param, lhs_end, MXC__P_OPT_INT, "None",
               "Axis past the last of lhs to replace (None: ndim)."),
    MXC__PARAM(rl_param, rhs_begin, MXC__P_OPT_INT, "None",
               "First axis of rhs to use (None: 0)."),
    MXC__PARAM(rl_param, rhs_end, MXC__P_OPT_INT, "None",
               "Axis past the last of rhs to use (None: ndim)."),
};

/* [*b, *e) from optional begin/end on nd axes (negative counts from the
 * end). */
static int axis_range(const mxc__op *op, const char *which,
                      const mxc__opt_int *begin, const mxc__opt_int *end,
                      int nd, int64_t *b, int64_t *e) {
  *b = begin->has ? begin->v : 0;
  *e = end->has ? end->v : nd;
  if (*b < 0) *b += nd;
  if (*e < 0) *e += nd;
  MXC_RETURN_ERROR_IF(*b < 0 || *e > nd || *b > *e, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %s_begin/%s_end select no valid axis "
                      "range of a %d-d %s; expected 0 <= begin <= end <= %d "
                      "after adding ndim to negative values",
                      op->name, which, which, nd, which, nd);
  return MXC_OK;
}

static int rl_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const rl_param *p = param;
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  int64_t lb, le, rb, re;
  MXC_FORWARD_IF_ERROR(
      axis_range(op, "lhs", &p->lhs_begin, &p->lhs_end, in[0].ndim, &lb, &le));
  MXC_FORWARD_IF_ERROR(
      axis_range(op, "rhs", &p->rhs_begin, &p->rhs_end, in[1].ndim, &rb, &re));
  char b1[160], b2[160];
  int nd = (int)(lb + (re - rb) + (in[0].ndim - le));
  MXC_RETURN_ERROR_IF(nd > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the result of lhs %s and rhs %s would "
                      "have %d axes; at most %d are supported",
                      op->name, MXC__SHP_STR(&in[0], b1),
                      MXC__SHP_STR(&in[1], b2), nd, MXC_MAX_NDIM);
  int64_t d[MXC_MAX_NDIM];
  int k = 0;
  for (int64_t a = 0; a < lb; ++a) d[k++] = in[0].dims[a];
  for (int64_t a = rb; a < re; ++a) d[k++] = in[1].dims[a];
  for (int64_t a = le; a < in[0].ndim; ++a) d[k++] = in[0].dims[a];
  mxc__shape s = mxc__shp_make(d, nd);
  MXC_RETURN_ERROR_IF(mxc__shape_size(&s) != mxc__shape_size(&in[0]),
                      MXC_ERR_SHAPE,
                      "operator '%s': lhs %s reshaped like rhs %s gives %s, "
                      "which has a different number of elements",
                      op->name, MXC__SHP_STR(&in[0], b1),
                      MXC__SHP_STR(&in[1], b2), MXC__SHP_STR(&s, b1));
  return mxc__shp_set_out(op, out, 0, &s);
}

static int copy_flat(const mxc__op *op, const mxc__opctx *ctx,
                     const void *param, const mxc__blob *in, int n_in,
                     const mxc__blob *out, int n_out, const mxc__req *req) {
  mxc__shp_copy_flat(&out[0], &in[0], req[0]);
  return MXC_OK;
}

/* The output has lhs's dtype; rhs may have any. */
static int rl_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u);
}

/* _backward_reshape_like: (ograd, lhs) -> dlhs. */
static int rl_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  if (in[1].ndim < 0) return MXC_OK;
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

/* Only lhs gets a gradient; rhs lends its shape. */
static int rl_grad(const mxc__node *fwd, const mxc__entry *ograd,
                   mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op_like("_backward_reshape_like", fwd, ins, 2, &b));
  igrad[0].node = b; /* takes the creation reference */
  igrad[0].index = 0;
  igrad[1].node = NULL;
  igrad[1].index = 0;
  return MXC_OK;
}

/* ---- shape_array, size_array ---- */

static const mxc__op k_shape_array;

static int sa_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int64_t n = op == &k_shape_array ? in[0].ndim : 1;
  char b[160];
  MXC_RETURN_ERROR_IF(n == 0, MXC_ERR_SHAPE,
                      "operator '%s': data of shape %s has no axes; the "
                      "result would be empty",
                      op->name, MXC__SHP_STR(&in[0], b));
  mxc__shape s = mxc__shp_make(&n, 1);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* Any input dtype; int64 output. */
static int int64_type(const mxc__op *op, const void *param, int *in, int n_in,
                      int *out, int n_out) {
  if (out[0] >= 0 && out[0] != MXC_DTYPE_INT64) {
    return mxc__unsupported_dtype(op->name, out[0], "the output is int64");
  }
  out[0] = MXC_DTYPE_INT64;
  return MXC_OK;
}

static int sa_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__shape *s = &in[0].shape;
  int64_t n = mxc__shape_size(&out[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = op == &k_shape_array ? s->dims[i] : mxc__shape_size(s);
    if (req[0] == MXC__REQ_ADD) v += mxc__blob_get_i64(&out[0], i);
    mxc__blob_set_i64(&out[0], i, v);
  }
  return MXC_OK;
}

/* ---- depth_to_space, space_to_depth ---- */

typedef struct ds_param {
  int64_t block_size;
} ds_param;

static const mxc__param_def k_ds_params[] = {
    MXC__PARAM_RANGE(ds_param, block_size, MXC__P_INT, NULL, 1, 1e9,
                     "Side of the spatial tiles."),
};

static const mxc__op k_d2s, k_d2s_bwd, k_s2d, k_s2d_bwd;

/* depth_to_space maps (N, C, H, W) -> (N, C/b^2, H*b, W*b). */
static int d2s_shape_of(const mxc__op *op, int64_t b, const mxc__shape *x,
                        int to_space, mxc__shape *o) {
  char s1[160];
  MXC_RETURN_ERROR_IF(x->ndim != 4, MXC_ERR_SHAPE,
                      "operator '%s': data must be 4-D (N, C, H, W); got %s",
                      op->name, MXC__SHP_STR(x, s1));
  int64_t bb;
  *o = *x;
  if (to_space) {
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(b, b, &bb) || x->dims[1] % bb != 0 ||
                            !mxc__mul_i64(x->dims[2], b, &o->dims[2]) ||
                            !mxc__mul_i64(x->dims[3], b, &o->dims[3]),
                        MXC_ERR_SHAPE,
                        "operator '%s': the channels of data %s must be a "
                        "multiple of block_size^2 (block_size %lld)",
                        op->name, MXC__SHP_STR(x, s1), (long long)b);
    o->dims[1] = x->dims[1] / bb;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(x->dims[2] % b != 0 || x->dims[3] % b != 0 ||
                          !mxc__mul_i64(b, b, &bb) ||
                          !mxc__mul_i64(x->dims[1], bb, &o->dims[1]),
                      MXC_ERR_SHAPE,
                      "operator '%s': the height and width of data %s must "
                      "be multiples of block_size %lld",
                      op->name, MXC__SHP_STR(x, s1), (long long)b);
  o->dims[2] = x->dims[2] / b;
  o->dims[3] = x->dims[3] / b;
  return MXC_OK;
}

static int ds_is_d2s(const mxc__op *op) {
  return op == &k_d2s || op == &k_d2s_bwd;
}

/* Forward operators map data; backward ones (ograd) map back. */
static int ds_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  int fwd = op == &k_d2s || op == &k_s2d;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(d2s_shape_of(op, ((const ds_param *)param)->block_size,
                                    &in[0], ds_is_d2s(op) == fwd, &s));
  return mxc__shp_set_out(op, out, 0, &s);
}

/* The permutation as an iteration over (N, C', H, b, W, b) with dst the
 * space side (N, C', H*b, W*b), contiguous in that order, and src the
 * depth side (N, C'*b*b, H, W): element (n, c, h, i, w, j) is depth
 * channel (i * b + j) * C' + c at (h, w). */
static void ds_iter(const mxc__shape *space, int64_t b, mxc__shp_iter *it) {
  int64_t dims[6], src[6];
  mxc__ds_map(space->dims, b, dims, src); /* shared with the GPU's plan */
  mxc__shp_iter_contig(it, dims, 6);
  memcpy(it->src_stride, src, sizeof src);
}

/* Swaps the two views: the copy then runs from the space side. */
static void iter_swap(mxc__shp_iter *it) {
  for (int k = 0; k < it->nd; ++k) {
    int64_t t = it->dst_stride[k];
    it->dst_stride[k] = it->src_stride[k];
    it->src_stride[k] = t;
  }
}

static int ds_compute(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  int64_t b = ((const ds_param *)param)->block_size;
  /* Output is the space side for depth_to_space and the gradient of
   * space_to_depth. */
  int out_is_space = (op == &k_d2s) || (op == &k_s2d_bwd);
  mxc__shp_iter it;
  ds_iter(out_is_space ? &out[0].shape : &in[0].shape, b, &it);
  if (!out_is_space) iter_swap(&it);
  mxc__shp_copy(&it, &out[0], &in[0], req[0]);
  return MXC_OK;
}

/* ---- diag ---- */

typedef struct diag_param {
  int64_t k, axis1, axis2;
} diag_param;

static const mxc__param_def k_diag_params[] = {
    MXC__PARAM(diag_param, k, MXC__P_INT, "0",
               "Diagonal: 0 the main one, > 0 above, < 0 below."),
    MXC__PARAM(diag_param, axis1, MXC__P_INT, "0",
               "N-D input: first axis of the planes."),
    MXC__PARAM(diag_param, axis2, MXC__P_INT, "1",
               "N-D input: second axis of the planes."),
};

/* The diagonal of matrix side m (the N-D input, or the 1-D input's
 * matrix): the copy's dims are m's other axes then the diagonal, src the
 * strided view into m, dst a contiguous array (ops/shape/rearrange_map.h,
 * shared with the GPU's plan). */
typedef struct diag_plan {
  int nd;
  int64_t dims[MXC_MAX_NDIM], stride[MXC_MAX_NDIM];
  int64_t off; /* the first diagonal element's offset */
} diag_plan;

static int diag_plan_of(const mxc__op *op, const diag_param *p,
                        const mxc__shape *m, diag_plan *d) {
  char b[160];
  int a1, a2;
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis1", p->axis1, m->ndim, &a1));
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis2", p->axis2, m->ndim, &a2));
  MXC_RETURN_ERROR_IF(a1 == a2, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': axis1 and axis2 name the same axis %d "
                      "of data %s",
                      op->name, a1, MXC__SHP_STR(m, b));
  d->nd = mxc__diag_map(m->dims, m->ndim, a1, a2, p->k, d->dims, d->stride,
                        &d->off);
  MXC_RETURN_ERROR_IF(d->nd == 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': diagonal k = %lld lies outside the "
                      "(%lld, %lld) planes of data %s",
                      op->name, (long long)p->k, (long long)m->dims[a1],
                      (long long)m->dims[a2], MXC__SHP_STR(m, b));
  return MXC_OK;
}

static void diag_iter(const diag_plan *d, mxc__shp_iter *it) {
  mxc__shp_iter_contig(it, d->dims, d->nd);
  memcpy(it->src_stride, d->stride, sizeof(int64_t) * (size_t)d->nd);
  it->src_off = d->off;
}

static const mxc__op k_diag, k_diag_bwd;

/* Matrix side of a call: the 1-D case's matrix is the output (forward)
 * or the ograd (backward); otherwise the data or the gradient. */
static int diag_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  const diag_param *p = param;
  const mxc__shape *x = &in[n_in - 1]; /* data (the backward's input 1) */
  if (x->ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(x->ndim == 0, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least 1 axis; got %s",
                      op->name, MXC__SHP_STR(x, b));
  if (op == &k_diag_bwd) return mxc__shp_set_out(op, out, 0, x);
  if (x->ndim == 1) {
    int64_t n = x->dims[0], s = 0;
    MXC_RETURN_ERROR_IF(p->k == INT64_MIN ||
                            !mxc__add_i64(n, p->k < 0 ? -p->k : p->k, &s),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': k = %lld is too large", op->name,
                        (long long)p->k);
    int64_t d[2] = {s, s};
    mxc__shape m = mxc__shp_make(d, 2);
    return mxc__shp_set_out(op, out, 0, &m);
  }
  diag_plan d;
  MXC_FORWARD_IF_ERROR(diag_plan_of(op, p, x, &d));
  mxc__shape s = mxc__shp_make(d.dims, d.nd);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* Copies between matrix m and the contiguous diagonal array v; into m
 * (to_matrix) the rest of m is zero unless accumulating. */
static int diag_copy(const mxc__op *op, const diag_param *p,
                     const mxc__blob *m, const mxc__blob *v, int to_matrix,
                     int one_d, mxc__req req) {
  diag_param q = *p;
  if (one_d) { /* the matrix of a 1-D input: its rows and columns */
    q.axis1 = 0;
    q.axis2 = 1;
  }
  diag_plan d;
  MXC_FORWARD_IF_ERROR(diag_plan_of(op, &q, &m->shape, &d));
  mxc__shp_iter it;
  diag_iter(&d, &it);
  if (!to_matrix) {
    mxc__shp_copy(&it, v, m, req);
    return MXC_OK;
  }
  if (req == MXC__REQ_NULL) return MXC_OK;
  if (req != MXC__REQ_ADD) mxc__shp_zero(m);
  iter_swap(&it);
  it.dst_off = it.src_off;
  it.src_off = 0;
  mxc__shp_copy(&it, m, v, req == MXC__REQ_ADD ? MXC__REQ_ADD : MXC__REQ_WRITE);
  return MXC_OK;
}

/* Forward (data) and backward (ograd, data). A 1-D data's forward writes
 * the matrix; its backward reads the matrix (ograd). */
static int diag_compute(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  int one_d = in[n_in - 1].shape.ndim == 1;
  if (op == &k_diag) {
    return one_d ? diag_copy(op, param, &out[0], &in[0], 1, 1, req[0])
                 : diag_copy(op, param, &in[0], &out[0], 0, 0, req[0]);
  }
  return one_d ? diag_copy(op, param, &in[0], &out[0], 0, 1, req[0])
               : diag_copy(op, param, &out[0], &in[0], 1, 0, req[0]);
}

/* ---- descriptors ---- */

static const char *const k_rl_in[] = {"lhs", "rhs", NULL};
static const char *const k_data[] = {"data", NULL};
static const char *const k_ograd[] = {"ograd", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};

static const mxc__op k_reshape_like = {
    .name = "reshape_like",
    .doc = "lhs's elements in lhs's shape with axes [lhs_begin, lhs_end) "
           "replaced by rhs's axes [rhs_begin, rhs_end).",
    MXC__PARAMS_OF(rl_param, k_rl_params),
    .n_inputs = 2,
    .input_names = k_rl_in,
    .n_outputs = 1,
    .infer_shape = rl_shape,
    .infer_type = rl_type,
    .compute = copy_flat,
    .gradient = rl_grad,
    MXC__INPLACE(k_inplace),
};

static const mxc__op k_reshape_like_bwd = {
    MXC__BACKWARD_DOC("reshape_like",
                      "Gradient of reshape_like: the output gradient in "
                      "lhs's shape."),
    MXC__PARAMS_OF(rl_param, k_rl_params),
    .n_inputs = 2,
    .input_names = k_bwd_in,
    .n_outputs = 1,
    .infer_shape = rl_bwd_shape,
    .compute = copy_flat,
    MXC__INPLACE(k_inplace),
};

static const mxc__op k_shape_array = {
    .name = "shape_array",
    .doc = "The shape of data as a 1-D int64 array of ndim elements.",
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = sa_shape,
    .infer_type = int64_type,
    .compute = sa_forward,
    .gradient = mxc__grad_none,
};

static const mxc__op k_size_array = {
    .name = "size_array",
    .doc = "The number of elements of data as an int64 array of shape (1).",
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = sa_shape,
    .infer_type = int64_type,
    .compute = sa_forward,
    .gradient = mxc__grad_none,
};

#define DS_FWD(var, nm, doc_)                                          \
  static const mxc__op var = {                                         \
      .name = nm, .doc = doc_, MXC__PARAMS_OF(ds_param, k_ds_params), \
      .n_inputs = 1, .input_names = k_data, .n_outputs = 1,           \
      .infer_shape = ds_shape, .compute = ds_compute,                 \
      .gradient = mxc__grad_use_none,                                 \
  }
#define DS_BWD(var, nm)                                                   \
  static const mxc__op var = {                                           \
      MXC__BACKWARD(nm), MXC__PARAMS_OF(ds_param, k_ds_params),          \
      .n_inputs = 1, .input_names = k_ograd, .n_outputs = 1,             \
      .infer_shape = ds_shape, .compute = ds_compute,                    \
  }

DS_FWD(k_d2s, "depth_to_space",
       "(N, C, H, W) -> (N, C/b^2, H*b, W*b): each group of b^2 channels "
       "becomes b x b tiles (b = block_size; MXNet's channel order).");
DS_BWD(k_d2s_bwd, "depth_to_space");
DS_FWD(k_s2d, "space_to_depth",
       "(N, C, H, W) -> (N, C*b^2, H/b, W/b): each b x b tile becomes b^2 "
       "channels (b = block_size); the inverse of depth_to_space.");
DS_BWD(k_s2d_bwd, "space_to_depth");

static const mxc__op k_diag = {
    .name = "diag",
    .doc = "1-D data (n): the (n+|k|, n+|k|) matrix with data on diagonal "
           "k. N-D data: diagonal k of the planes over (axis1, axis2), "
           "appended as the last axis.",
    MXC__PARAMS_OF(diag_param, k_diag_params),
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = diag_shape,
    .compute = diag_compute,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 1,
};

static const mxc__op k_diag_bwd = {
    MXC__BACKWARD("diag"),
    MXC__PARAMS_OF(diag_param, k_diag_params),
    .n_inputs = 2,
    .input_names = k_bwd_in,
    .n_outputs = 1,
    .infer_shape = diag_shape,
    .compute = diag_compute,
};

int mxc__shp_register_rearrange(mxc__registry *r) {
  static const mxc__op *const ops[] = {
      &k_reshape_like, &k_reshape_like_bwd, &k_shape_array, &k_size_array,
      &k_d2s,          &k_d2s_bwd,          &k_s2d,         &k_s2d_bwd,
      &k_diag,         &k_diag_bwd,         NULL};
  return mxc__shp_add_all(r, ops);
}
