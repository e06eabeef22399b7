/* Embedding: out[..., :] = weight[data[...], :] for indices data (any
 * numeric dtype) and weight (input_dim, output_dim); out has shape
 * data.shape + (output_dim).
 *
 * Indices are truncated to integers and clipped into [0, input_dim - 1]
 * (NaN to 0), as MXNet does, so an out-of-range index never reads outside
 * weight. The gradient with respect to weight is a scatter-add of the
 * output gradient rows; data gets none. The gradient is dense unless the
 * caller gives a row_sparse gradient array (an autograd buffer or an
 * executor gradient), which ops/sparse/embedding.c fills with the rows
 * looked up; sparse_grad itself is only recorded. */
#include <stdint.h>
#include <string.h>

#include "core/op/half_compute.h"
#include "ops/nn/nn.h"

typedef struct emb_param {
  int64_t input_dim, output_dim;
  int dtype;
  int sparse_grad;
} emb_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(emb_param, input_dim, MXC__P_INT, NULL, 1, 9.0e18,
                     "Number of rows of weight (the vocabulary size)."),
    MXC__PARAM_RANGE(emb_param, output_dim, MXC__P_INT, NULL, 1, 9.0e18,
                     "Length of each embedding vector."),
    MXC__PARAM(emb_param, dtype, MXC__P_DTYPE, "float32",
               "dtype of weight and output: float32, float64, float16 or "
               "bfloat16."),
    MXC__PARAM(emb_param, sparse_grad, MXC__P_BOOL, "false",
               "Accepted for compatibility; a row_sparse gradient comes from giving a "
               "row_sparse gradient array."),
};

/* float32/float64, or half precision: the lookup copies rows as they are
 * and sums (ADD, the gradient) run in float32 (core/op/half_compute.h). */
static int check_dtype(const char *op_name, int dt, const char *what) {
  if (mxc__dtype_is_half(dt)) return MXC_OK;
  return mxc__nn_check_float(op_name, dt, what);
}

static int emb_check(const char *op_name, void *param) {
  emb_param *p = param;
  if (p->dtype < 0) p->dtype = MXC_DTYPE_FLOAT32; /* "None": the default */
  return check_dtype(op_name, p->dtype, "parameter 'dtype'");
}

static mxc__shape weight_shape(const emb_param *p) {
  mxc__shape w;
  w.ndim = 2;
  w.dims[0] = p->input_dim;
  w.dims[1] = p->output_dim;
  return w;
}

/* data.shape + (output_dim), or an error when that has too many axes. */
static int out_shape(const mxc__op *op, const emb_param *p,
                     const mxc__shape *data, mxc__shape *out) {
  char b[160];
  MXC_RETURN_ERROR_IF(data->ndim + 1 > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': data of shape %s has %d axes; the "
                      "output would need %d (at most %d)",
                      op->name, mxc__shape_str(data, b, sizeof b), data->ndim,
                      data->ndim + 1, MXC_MAX_NDIM);
  *out = *data;
  out->dims[out->ndim++] = p->output_dim;
  return MXC_OK;
}

static int emb_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const emb_param *p = param;
  mxc__shape w = weight_shape(p);
  MXC_FORWARD_IF_ERROR(mxc__nn_assign_shape(
      op->name, &in[1], &w, "input 1 ('weight')", "(input_dim, output_dim)"));
  if (in[0].ndim < 0) return MXC_OK;
  return out_shape(op, p, &in[0], &out[0]);
}

static int emb_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  const emb_param *p = param;
  if (in[1] < 0) in[1] = p->dtype;
  MXC_RETURN_ERROR_IF(in[1] != p->dtype, MXC_ERR_DTYPE,
                      "operator '%s': input 1 ('weight') is %s but parameter "
                      "dtype is %s",
                      op->name, mxc__dtype_name(in[1]),
                      mxc__dtype_name(p->dtype));
  out[0] = p->dtype;
  return MXC_OK;
}

static int64_t clip_index(double v, int64_t n) {
  if (!(v > 0)) return 0; /* negative, zero or NaN */
  if (v >= (double)(n - 1)) return n - 1;
  return (int64_t)v;
}

/* Rows are copied as bytes, so every weight dtype is exact; accumulating
 * (ADD) needs arithmetic, typed for float32/float64. */
static int emb_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const emb_param *p = param;
  int64_t rows = mxc__shape_size(&in[0].shape), d = p->output_dim;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (req[0] != MXC__REQ_ADD) {
    size_t row_bytes = (size_t)d * mxc__dtype_size(out[0].dtype);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t k = clip_index(mxc__blob_get(&in[0], r), p->input_dim);
      memcpy((char *)out[0].ptr + (size_t)r * row_bytes,
             (const char *)in[1].ptr + (size_t)k * row_bytes, row_bytes);
    }
    return MXC_OK;
  }
  MXC__FLOAT_TYPED(out[0].dtype, {
    const T *w = in[1].ptr;
    T *y = out[0].ptr;
    for (int64_t r = 0; r < rows; ++r) {
      const T *src = w + clip_index(mxc__blob_get(&in[0], r), p->input_dim) * d;
      for (int64_t j = 0; j < d; ++j) y[r * d + j] += src[j];
    }
  });
  return MXC_OK;
}

/* Half precision: a lookup is a plain copy; ADD goes through float32. */
static int emb_forward_any(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  if (mxc__dtype_is_half(out[0].dtype) && req[0] == MXC__REQ_ADD) {
    return mxc__half_compute(emb_forward, op, ctx, param, in, n_in, out, n_out,
                             req, 0);
  }
  return emb_forward(op, ctx, param, in, n_in, out, n_out, req);
}

/* _backward_Embedding: (ograd, data) -> dweight. */
static int emb_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  const emb_param *p = param;
  out[0] = weight_shape(p);
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  mxc__shape want;
  MXC_FORWARD_IF_ERROR(out_shape(op, p, &in[1], &want));
  return mxc__nn_assign_shape(op->name, &in[0], &want, "input 0 ('ograd')",
                              "data.shape + (output_dim)");
}

static int emb_bwd_type(const mxc__op *op, const void *param, int *in, int n_in,
                        int *out, int n_out) {
  out[0] = in[0];
  return check_dtype(op->name, in[0], "the output gradient");
}

static int emb_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const emb_param *p = param;
  int64_t rows = mxc__shape_size(&in[1].shape), d = p->output_dim;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(out[0].dtype, {
    const T *g = in[0].ptr;
    T *dw = out[0].ptr;
    if (req[0] != MXC__REQ_ADD) {
      memset(dw, 0, (size_t)(p->input_dim * d) * sizeof(T));
    }
    for (int64_t r = 0; r < rows; ++r) {
      T *dst = dw + clip_index(mxc__blob_get(&in[1], r), p->input_dim) * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += g[r * d + j];
    }
  });
  return MXC_OK;
}

MXC__HALF_COMPUTE_FN(emb_backward_any, emb_backward, 0)

static int emb_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                        mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[0]};
  static const int grad_of[2] = {-1, 0}; /* indices get no gradient */
  return mxc__grad_node_pick(fwd, "_backward_Embedding", ins, 2, grad_of,
                             igrad);
}

static const char *const k_in[] = {"data", "weight", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "Embedding",
        .doc = "Looks up rows of weight (input_dim, output_dim) by the "
               "indices in data; output shape data.shape + (output_dim).",
        MXC__PARAMS_OF(emb_param, k_params),
        .param_check = emb_check,
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = emb_shape,
        .infer_type = emb_type,
        .compute = emb_forward_any,
        .gradient = emb_gradient,
        .backward_uses_inputs = 1u,
    },
    {
        .name = "_backward_Embedding",
        .doc = "Gradient of Embedding with respect to weight: "
               "scatter-add of the output gradient rows.",
        MXC__PARAMS_OF(emb_param, k_params),
        .param_check = emb_check,
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = emb_bwd_shape,
        .infer_type = emb_bwd_type,
        .compute = emb_backward_any,
        .hidden = 1,
    },
};

int mxc__nn_register_embedding(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
