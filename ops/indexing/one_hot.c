/* one_hot(indices): out[..., j] = on_value where j == indices[...], else
 * off_value, for j in [0, depth). Indices outside [0, depth) give a row of
 * off_value only (MXNet's behaviour); float indices are truncated, so -0.5
 * selects column 0 as in MXNet. Not differentiable in indices. */
#include "ops/indexing/internal.h"

typedef struct one_hot_param {
  int64_t depth;
  double on_value;
  double off_value;
  int dtype;
} one_hot_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(one_hot_param, depth, MXC__P_INT, NULL, 1,
                     4611686018427387904.0,
                     "Number of classes: the extent of the new last axis."),
    MXC__PARAM(one_hot_param, on_value, MXC__P_FLOAT, "1",
               "Value at the index."),
    MXC__PARAM(one_hot_param, off_value, MXC__P_FLOAT, "0",
               "Value elsewhere."),
    MXC__PARAM(one_hot_param, dtype, MXC__P_DTYPE, "float32",
               "Dtype of the output."),
};

static int out_dtype(const one_hot_param *p) {
  return p->dtype < 0 ? MXC_DTYPE_FLOAT32 : p->dtype;
}

static int one_hot_shape(const mxc__op *op, const void *param,
                         mxc__shape *in, int n_in, mxc__shape *out,
                         int n_out) {
  (void)n_in, (void)n_out;
  const one_hot_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(in[0].ndim + 1 > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': indices has %d dimensions; the output "
                      "would have %d but at most %d are supported",
                      op->name, in[0].ndim, in[0].ndim + 1, MXC_MAX_NDIM);
  int64_t dims[MXC_MAX_NDIM];
  for (int i = 0; i < in[0].ndim; ++i) dims[i] = in[0].dims[i];
  dims[in[0].ndim] = p->depth;
  char what[96];
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(
      dims, in[0].ndim + 1, mxc__dtype_size(out_dtype(p)),
      mxc__idx_what(what, sizeof what, op->name, "output"), &s));
  return mxc__idx_assign_shape(op, &out[0], &s, "output 0");
}

/* The output dtype comes from the parameter; indices may be any dtype. */
static int one_hot_type(const mxc__op *op, const void *param, int *in,
                        int n_in, int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  int t = out_dtype(param);
  MXC_RETURN_ERROR_IF(out[0] >= 0 && out[0] != t, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s (the "
                      "dtype parameter)",
                      op->name, mxc__dtype_name(out[0]), mxc__dtype_name(t));
  out[0] = t;
  return MXC_OK;
}

static int one_hot_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  const one_hot_param *p = param;
  int64_t rows = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (req[0] == MXC__REQ_ADD) {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t k = mxc__idx_at(&in[0], r);
      for (int64_t j = 0; j < p->depth; ++j) {
        int64_t at = r * p->depth + j;
        double v = j == k ? p->on_value : p->off_value;
        mxc__blob_set(&out[0], at, mxc__blob_get(&out[0], at) + v);
      }
    }
    return MXC_OK;
  }
  /* Fill with off_value at memcpy speed, then set one element per row. */
  mxc__idx_fill(&out[0], p->off_value, req[0]);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t k = mxc__idx_at(&in[0], r);
    if (k >= 0 && k < p->depth) {
      mxc__blob_set(&out[0], r * p->depth + k, p->on_value);
    }
  }
  return MXC_OK;
}

static const char *const k_in[] = {"indices", NULL};

static const mxc__op k_op = {
    .name = "one_hot",
    .doc = "One-hot encoding: output shape indices.shape + (depth,), "
           "on_value at each index and off_value elsewhere.",
    MXC__PARAMS_OF(one_hot_param, k_params),
    .n_inputs = 1,
    .input_names = k_in,
    .n_outputs = 1,
    .infer_shape = one_hot_shape,
    .infer_type = one_hot_type,
    .compute = one_hot_forward,
    .gradient = mxc__grad_none,
};

int mxc__idx_register_one_hot(mxc__registry *r) {
  return mxc__registry_add(r, &k_op);
}
