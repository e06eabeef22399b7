/* gather_nd and scatter_nd: indexing the leading M axes of an array with
 * an index array of shape (M, Y...).
 *
 * gather_nd(data (X0..X{N-1}), indices (M, Y...)) has shape
 * (Y..., X_M..X{N-1}): each position y of Y reads the run of
 * inner = X_M*...*X{N-1} elements at data[indices[0, y], ..., indices[M-1,
 * y]]. scatter_nd is its transpose: out of shape `shape` starts at zero
 * and each run of data is ADDED at its position, so duplicate indices sum
 * (MXNet leaves duplicates undefined; summing is deterministic and makes
 * gather_nd of the output gradient the exact gradient w.r.t. data).
 *
 * Negative indices count from the end of their axis (-X_d..X_d-1); any
 * other out-of-range index is an error at run time naming the operator,
 * the index and the axis (there is no clip mode: MXNet does not check). */
#include <string.h>

#include "ops/indexing/internal.h"

typedef struct scatter_param {
  mxc__tuple shape;
} scatter_param;

static const mxc__param_def k_scatter_params[] = {
    MXC__PARAM(scatter_param, shape, MXC__P_TUPLE, NULL,
               "Shape of the output (X0, ..., X{N-1})."),
};

static int scatter_check(const char *op_name, void *param) {
  const scatter_param *p = param;
  MXC_RETURN_ERROR_IF(p->shape.ndim < 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'shape' must be a tuple "
                      "such as (3,4), not None",
                      op_name);
  return MXC_OK;
}

/* indices (M, Y...) against the full shape X: 1 <= M <= ndim(X), and the
 * result (Y..., X_M...) within the supported dimensions. Writes that
 * result shape to *out. `x_name` says what X is in messages. */
static int nd_result_shape(const mxc__op *op, const mxc__shape *x,
                           const mxc__shape *idx, const char *x_name,
                           mxc__shape *out) {
  char b1[160], b2[160];
  int64_t m = idx->ndim > 0 ? idx->dims[0] : 0;
  MXC_RETURN_ERROR_IF(
      idx->ndim < 1 || m < 1 || m > x->ndim, MXC_ERR_SHAPE,
      "operator '%s': indices has shape %s and %s has shape %s; indices "
      "must have shape (M, ...) with 1 <= M <= %d (the number of leading "
      "axes it indexes)",
      op->name, mxc__shape_str(idx, b1, sizeof b1), x_name,
      mxc__shape_str(x, b2, sizeof b2), x->ndim);
  int nd = idx->ndim - 1 + x->ndim - (int)m;
  MXC_RETURN_ERROR_IF(nd > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the result would have %d dimensions; "
                      "at most %d are supported",
                      op->name, nd, MXC_MAX_NDIM);
  mxc__shape s;
  s.ndim = nd;
  int k = 0;
  for (int i = 1; i < idx->ndim; ++i) s.dims[k++] = idx->dims[i];
  for (int i = (int)m; i < x->ndim; ++i) s.dims[k++] = x->dims[i];
  *out = s;
  return MXC_OK;
}

/* gather_nd: (data, indices) -> out. */
static int gather_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  (void)param, (void)n_in, (void)n_out;
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(nd_result_shape(op, &in[0], &in[1], "data", &s));
  return mxc__idx_assign_shape(op, &out[0], &s, "output 0");
}

/* _backward_gather_nd: (ograd, data, indices) -> gradient of data. */
static int gather_bwd_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  (void)param, (void)n_in, (void)n_out;
  if (in[1].ndim < 0 || in[2].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(nd_result_shape(op, &in[1], &in[2], "data", &s));
  MXC_FORWARD_IF_ERROR(mxc__idx_assign_shape(op, &in[0], &s, "ograd"));
  return mxc__idx_assign_shape(op, &out[0], &in[1], "output 0");
}

/* scatter_nd: (data, indices) -> out of shape `shape`. */
static int scatter_shape(const mxc__op *op, const void *param,
                         mxc__shape *in, int n_in, mxc__shape *out,
                         int n_out) {
  (void)n_in, (void)n_out;
  const scatter_param *p = param;
  char what[96];
  mxc__shape x;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(
      p->shape.d, p->shape.ndim, 1,
      mxc__idx_what(what, sizeof what, op->name, "parameter 'shape'"), &x));
  MXC_FORWARD_IF_ERROR(mxc__idx_assign_shape(op, &out[0], &x, "output 0"));
  if (in[1].ndim < 0) return MXC_OK;
  mxc__shape want;
  MXC_FORWARD_IF_ERROR(nd_result_shape(op, &x, &in[1], "shape", &want));
  if (in[0].ndim < 0) {
    in[0] = want;
    return MXC_OK;
  }
  char b1[160], b2[160], b3[160], b4[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&in[0], &want), MXC_ERR_SHAPE,
                      "operator '%s': data has shape %s but indices of "
                      "shape %s into shape %s need data of shape %s",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1),
                      mxc__shape_str(&in[1], b2, sizeof b2),
                      mxc__shape_str(&x, b3, sizeof b3),
                      mxc__shape_str(&want, b4, sizeof b4));
  return MXC_OK;
}

static int data_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u);
}

static int bwd_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 3u);
}

/* ---- kernels ---- */

/* Where each index position points: full is the indexed shape X, m the
 * number of indexed axes, k the number of positions, inner the run. */
typedef struct nd_geom {
  const mxc__shape *full;
  const mxc__blob *idx;
  int m;
  int64_t k, inner;
} nd_geom;

static nd_geom nd_setup(const mxc__shape *full, const mxc__blob *idx) {
  nd_geom g;
  g.full = full;
  g.idx = idx;
  g.m = (int)idx->shape.dims[0];
  g.k = mxc__idx_span(&idx->shape, 1, idx->shape.ndim);
  g.inner = mxc__idx_span(full, g.m, full->ndim);
  return g;
}

/* Run number (in units of inner) of position y; -1 after setting the
 * error when an index is out of range. */
static int64_t nd_run(const mxc__op *op, const nd_geom *g, int64_t y) {
  int64_t lin = 0;
  for (int d = 0; d < g->m; ++d) {
    int64_t ext = g->full->dims[d];
    int64_t v = mxc__idx_at(g->idx, d * g->k + y);
    int64_t i = mxc__idx_fix(v, ext, MXC__IDX_RAISE);
    if (ext == 0 || i < 0) {
      mxc__idx_range_error(op->name, v, d, ext);
      return -1;
    }
    lin = lin * ext + i;
  }
  return lin;
}

/* Every index checked before anything is written. */
static int nd_validate(const mxc__op *op, const nd_geom *g) {
  for (int64_t y = 0; y < g->k; ++y) {
    if (nd_run(op, g, y) < 0) return MXC_ERR_INVALID_ARGUMENT;
  }
  return MXC_OK;
}

/* out[run(y)] += src[y] for every position y, over zeros unless req is
 * ADD: scatter_nd, and the gradient of gather_nd. */
static int scatter_add(const mxc__op *op, const mxc__blob *src,
                       const mxc__blob *idx, const mxc__blob *out,
                       mxc__req req) {
  nd_geom g = nd_setup(&out->shape, idx);
  MXC_FORWARD_IF_ERROR(nd_validate(op, &g));
  if (!mxc__idx_begin_accum(out, req)) return MXC_OK;
  for (int64_t y = 0; y < g.k; ++y) {
    mxc__idx_move(out, nd_run(op, &g, y) * g.inner, src, y * g.inner,
                  g.inner, MXC__REQ_ADD);
  }
  return MXC_OK;
}

static int gather_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  nd_geom g = nd_setup(&in[0].shape, &in[1]);
  MXC_FORWARD_IF_ERROR(nd_validate(op, &g));
  for (int64_t y = 0; y < g.k; ++y) {
    mxc__idx_move(&out[0], y * g.inner, &in[0], nd_run(op, &g, y) * g.inner,
                  g.inner, req[0]);
  }
  return MXC_OK;
}

static int gather_backward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  return scatter_add(op, &in[0], &in[2], &out[0], req[0]);
}

static int scatter_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  return scatter_add(op, &in[0], &in[1], &out[0], req[0]);
}

/* d scatter_nd / d data = gather_nd(ograd, indices); none for indices. */
static int scatter_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                            mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[1]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op("gather_nd", NULL, NULL, 0, ins, 2, fwd->name, &b));
  mxc__entry none = {NULL, 0};
  igrad[0] = mxc__entry_ref(b, 0);
  igrad[1] = none;
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in[] = {"data", "indices", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", "indices", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "gather_nd",
        .doc = "Gathers from data (X0..X{N-1}) at indices of shape (M, "
               "Y...): the output has shape (Y..., X_M..X{N-1}).",
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = gather_shape,
        .infer_type = data_type,
        .compute = gather_forward,
        .gradient = mxc__idx_grad_data_only,
        .backward_uses_inputs = 3,
    },
    {
        .name = "_backward_gather_nd",
        .doc = "Gradient of gather_nd with respect to data (repeated "
               "indices accumulate).",
        .n_inputs = 3,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = gather_bwd_shape,
        .infer_type = bwd_type,
        .compute = gather_backward,
        .hidden = 1,
    },
    {
        .name = "scatter_nd",
        .doc = "Scatters data (Y..., X_M..X{N-1}) into zeros of the given "
               "shape (X0..X{N-1}) at indices of shape (M, Y...); "
               "duplicate indices add up.",
        MXC__PARAMS_OF(scatter_param, k_scatter_params),
        .param_check = scatter_check,
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = scatter_shape,
        .infer_type = data_type,
        .compute = scatter_forward,
        .gradient = scatter_gradient,
        .backward_uses_inputs = 2,
    },
};

int mxc__idx_register_gather(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
