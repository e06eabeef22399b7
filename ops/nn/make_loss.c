/* Loss heads that pass data through unchanged and start the backward pass
 * with a constant gradient, whatever the incoming one:
 *   MakeLoss:  ddata = grad_scale / norm, where norm is 1 ('null'), the
 *              batch size data.shape[0] ('batch'), or the number of
 *              elements above valid_thresh, at least 1 ('valid');
 *   make_loss: ddata = 1 (an all-ones array, through ones_like). */
#include "ops/nn/make_loss_params.h"
#include "ops/nn/nn.h"

enum {
  NORM_NULL = MXC__ML_NORM_NULL,
  NORM_BATCH = MXC__ML_NORM_BATCH,
  NORM_VALID = MXC__ML_NORM_VALID
};
static const char *const k_norms[] = {"null", "batch", "valid", NULL};

typedef mxc__ml_param ml_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(ml_param, grad_scale, MXC__P_FLOAT, "1",
               "The gradient's value before normalization."),
    MXC__PARAM(ml_param, valid_thresh, MXC__P_FLOAT, "0",
               "'valid': elements greater than this count as valid."),
    MXC__PARAM_ENUM(ml_param, normalization, "null", k_norms,
                    "Divides grad_scale by 1, the batch size or the valid "
                    "element count."),
};

static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};

static int ml_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req[0], y[i], x[i]);
  });
  return MXC_OK;
}

/* The normalizer of the gradient for data x. */
static double ml_norm(const ml_param *p, const mxc__blob *x) {
  if (p->normalization == NORM_BATCH) {
    return x->shape.ndim > 0 && x->shape.dims[0] > 0 ? x->shape.dims[0] : 1;
  }
  if (p->normalization != NORM_VALID) return 1;
  int64_t n = mxc__shape_size(&x->shape), valid = 0;
  for (int64_t i = 0; i < n; ++i) valid += mxc__blob_get(x, i) > p->valid_thresh;
  return valid > 0 ? (double)valid : 1;
}

/* _backward_MakeLoss: (ograd, data) -> the constant gradient. */
static int ml_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const ml_param *p = param;
  int64_t n = mxc__shape_size(&in[1].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  double v = p->grad_scale / ml_norm(p, &in[1]);
  MXC__FLOAT_TYPED(in[1].dtype, {
    T *dx = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req[0], dx[i], (T)v);
  });
  return MXC_OK;
}

static int ml_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  return MXC_OK;
}

/* make_loss: the gradient is ones_like(data). */
static int make_loss_grad(const mxc__node *fwd, const mxc__entry *ograd,
                          mxc__entry *igrad) {
  (void)ograd;
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op("ones_like", NULL, NULL, 0, fwd->inputs, 1, NULL, &b));
  igrad[0] = mxc__entry_ref(b, 0);
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

static const mxc__op k_ops[] = {
    {
        .name = "MakeLoss",
        .doc = "Marks data as a loss: the output is data, the gradient is "
               "grad_scale (normalized by 'normalization') whatever the "
               "incoming gradient.",
        MXC__PARAMS_OF(ml_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = mxc__nn_type_float,
        .compute = ml_forward,
        .gradient = mxc__grad_use_in,
        MXC__INPLACE(k_inplace),
        .backward_uses_inputs = 1,
    },
    {
        MXC__BACKWARD("MakeLoss"),
        MXC__PARAMS_OF(ml_param, k_params),
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = ml_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = ml_backward,
    },
    {
        .name = "make_loss",
        .doc = "Marks data as a loss: the output is data, the gradient is "
               "all ones whatever the incoming gradient.",
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = mxc__nn_type_float,
        .compute = ml_forward,
        .gradient = make_loss_grad,
        MXC__INPLACE(k_inplace),
    },
};

int mxc__nn_register_make_loss(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
