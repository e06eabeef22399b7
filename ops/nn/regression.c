/* Regression output layers (losses as in MXNet): the forward pass maps
 * data, the backward pass ignores the incoming gradient and produces the
 * loss gradient from (output, label):
 *   LinearRegressionOutput:   out = data,          d = out - label
 *   LogisticRegressionOutput: out = sigmoid(data), d = out - label
 *   MAERegressionOutput:      out = data,          d = sign(out - label)
 *   ddata = d * grad_scale / num_output,
 * where num_output = label.size / label.shape[0], the number of outputs per
 * sample. Dividing by it follows MXNet (the loss is the per-sample mean
 * over outputs); for data (N) or (N, 1) it is 1.
 *
 * label has data's element count and first extent; when data is (N, 1) and
 * label unknown, label is inferred as (N), otherwise as data's shape. The
 * label shares data's dtype and gets no gradient. */
#include <math.h>

#include "ops/nn/loss_params.h"
#include "ops/nn/nn.h"

typedef mxc__reg_param reg_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(reg_param, grad_scale, MXC__P_FLOAT, "1",
               "Scale of the gradient."),
};

enum { REG_LINEAR, REG_LOGISTIC, REG_MAE, REG_COUNT };
static const mxc__op k_fwd[REG_COUNT];
static const mxc__op k_bwd[REG_COUNT];

static int kind_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + REG_COUNT) return (int)(op - k_fwd);
  return (int)(op - k_bwd);
}

static int reg_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 1, MXC_ERR_SHAPE,
                      "operator '%s': data must have a batch axis; got shape "
                      "()",
                      op->name);
  out[0] = in[0];
  if (in[1].ndim < 0) {
    in[1] = in[0];
    if (in[0].ndim == 2 && in[0].dims[1] == 1) in[1].ndim = 1;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(
      in[1].ndim < 1 || in[1].dims[0] != in[0].dims[0] ||
          mxc__shape_size(&in[1]) != mxc__shape_size(&in[0]),
      MXC_ERR_SHAPE,
      "operator '%s': input 1 ('label') has shape %s but data has shape "
      "%s; the label needs the same first extent and element count",
      op->name, mxc__shape_str(&in[1], b1, sizeof b1),
      mxc__shape_str(&in[0], b2, sizeof b2));
  return MXC_OK;
}

static int reg_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  int logistic = kind_of(op) == REG_LOGISTIC;
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) {
      T v = logistic ? (T)(1 / (1 + exp(-(double)x[i]))) : x[i];
      MXC__ASSIGN(req[0], y[i], v);
    }
  });
  return MXC_OK;
}

/* _backward_*RegressionOutput: (output, label) -> ddata. */
static int reg_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const reg_param *p = param;
  int mae = kind_of(op) == REG_MAE;
  int64_t n = mxc__shape_size(&in[0].shape);
  int64_t rows = in[1].shape.dims[0];
  double scale = p->grad_scale / (rows > 0 ? (double)(n / rows) : 1);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *y = in[0].ptr;
    const T *label = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) {
      double d = (double)y[i] - (double)label[i];
      if (mae) d = (d > 0) - (d < 0);
      MXC__ASSIGN(req[0], dx[i], (T)(d * scale));
    }
  });
  return MXC_OK;
}

static int reg_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  out[0] = in[0];
  return MXC_OK;
}

/* The backward node reads (output, label), not the head gradient. */
static int reg_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                        mxc__entry *igrad) {
  mxc__entry ins[2] = {{(mxc__node *)fwd, 0}, fwd->inputs[1]};
  static const int grad_of[2] = {0, -1};
  return mxc__grad_node_pick(fwd, k_bwd[kind_of(fwd->op)].name, ins, 2, grad_of,
                           igrad);
}

static const char *const k_in[] = {"data", "label", NULL};
static const char *const k_bwd_in[] = {"output", "label", NULL};

#define FWD(kind, nm, doc_)                \
  [kind] = {                               \
      .name = nm,                          \
      .doc = doc_,                         \
      MXC__PARAMS_OF(reg_param, k_params), \
      .n_inputs = 2,                       \
      .input_names = k_in,                 \
      .n_outputs = 1,                      \
      .infer_shape = reg_shape,            \
      .infer_type = mxc__nn_type_float,    \
      .compute = reg_forward,              \
      .gradient = reg_gradient,            \
      .backward_uses_inputs = 1u << 1,     \
      .backward_uses_outputs = 1u,         \
  }
#define BWD(kind, nm)                                                \
  [kind] = {                                                         \
      MXC__BACKWARD_DOC(                                             \
          nm, "Loss gradient of " nm ": (output, label) -> ddata."), \
      MXC__PARAMS_OF(reg_param, k_params),                           \
      .n_inputs = 2,                                                 \
      .input_names = k_bwd_in,                                       \
      .n_outputs = 1,                                                \
      .infer_shape = reg_bwd_shape,                                  \
      .infer_type = mxc__nn_type_float,                              \
      .compute = reg_backward,                                       \
  }

static const mxc__op k_fwd[REG_COUNT] = {
    FWD(REG_LINEAR, "LinearRegressionOutput",
        "Identity; gradient (out - label) * grad_scale / num_output, "
        "ignoring the head gradient."),
    FWD(REG_LOGISTIC, "LogisticRegressionOutput",
        "sigmoid(data); gradient (out - label) * grad_scale / num_output, "
        "ignoring the head gradient."),
    FWD(REG_MAE, "MAERegressionOutput",
        "Identity; gradient sign(out - label) * grad_scale / num_output, "
        "ignoring the head gradient."),
};

static const mxc__op k_bwd[REG_COUNT] = {
    BWD(REG_LINEAR, "LinearRegressionOutput"),
    BWD(REG_LOGISTIC, "LogisticRegressionOutput"),
    BWD(REG_MAE, "MAERegressionOutput"),
};

int mxc__nn_register_regression(mxc__registry *r) {
  for (int i = 0; i < REG_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
  }
  return MXC_OK;
}
