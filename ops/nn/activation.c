/* Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU
 * (leaky, elu, selu, gelu, prelu), with their _backward_ operators.
 *
 * Each function is written as an expression of x (input) and y (output)
 * in double; the loops around them are typed. The backward operators take
 * (ograd, data[, gamma], output), as mxc__grad_use_in_out builds them. */
#include <math.h>

#include "core/op/vmath.h"
#include "ops/nn/act_params.h"
#include "ops/nn/nn.h"
#include "core/op/half_compute.h"

/* ---- Activation ---- */

/* The struct and the enum are in their own header: the GPU plug-in reads
 * them too. */
enum {
  ACT_RELU = MXC__ACT_RELU,
  ACT_SIGMOID = MXC__ACT_SIGMOID,
  ACT_TANH = MXC__ACT_TANH,
  ACT_SOFTRELU = MXC__ACT_SOFTRELU,
  ACT_SOFTSIGN = MXC__ACT_SOFTSIGN
};
static const char *const k_act_types[] = {"relu",     "sigmoid",  "tanh",
                                          "softrelu", "softsign", NULL};

typedef mxc__act_param act_param;

static const mxc__param_def k_act_params[] = {
    MXC__PARAM_ENUM(act_param, act_type, NULL, k_act_types,
                    "Activation function applied element-wise."),
};

/* softrelu = log(1 + e^x), written as x + log(1 + e^-x) for x > 0 so that
 * e^x never overflows and large x lose no precision. */
static double softrelu(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* The float32 tanh, sigmoid and relu kernels of core/op/vmath.h (vectorized,
 * threaded; within a few ulp), or -1 for the generic double path. */
static int act_vmath(const act_param *p, int dtype) {
  if (dtype != MXC_DTYPE_FLOAT32) return -1;
  if (p->act_type == ACT_TANH) return MXC__VM_TANH;
  if (p->act_type == ACT_RELU) return MXC__VM_RELU;
  return p->act_type == ACT_SIGMOID ? MXC__VM_SIGMOID : -1;
}

/* y[i] = expr(x) over n elements; inside an MXC__FLOAT_TYPED body. */
#define MAP_X(expr)                 \
  for (int64_t i = 0; i < n; ++i) { \
    double x = (double)xs[i];       \
    T v = (T)(expr);                \
    MXC__ASSIGN(req[0], ys[i], v);  \
  }

/* dx[i] = ograd[i] * expr(x, y); inside an MXC__FLOAT_TYPED body. */
#define MAP_GRAD(expr)                 \
  for (int64_t i = 0; i < n; ++i) {    \
    double x = (double)xs[i];          \
    double y = (double)ys[i];          \
    (void)x;                           \
    (void)y;                           \
    T v = (T)((double)gs[i] * (expr)); \
    MXC__ASSIGN(req[0], dx[i], v);     \
  }

static int act_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const act_param *p = param;
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int vm = act_vmath(p, in[0].dtype);
  if (vm >= 0) {
    return mxc__vmath_f32(vm, in[0].ptr, out[0].ptr, n,
                          req[0] == MXC__REQ_ADD);
  }
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *xs = in[0].ptr;
    T *ys = out[0].ptr;
    switch (p->act_type) {
      case ACT_RELU: /* MXNet keeps NaN (x != x) */
        MAP_X(x > 0 || x != x ? x : 0);
        break;
      case ACT_SIGMOID:
        MAP_X(1 / (1 + exp(-x)));
        break;
      case ACT_TANH:
        MAP_X(tanh(x));
        break;
      case ACT_SOFTRELU:
        MAP_X(softrelu(x));
        break;
      default:
        MAP_X(x / (1 + fabs(x)));
        break;
    }
  });
  return MXC_OK;
}

/* _backward_Activation: (ograd, data, output) -> ddata. */
static int act_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const act_param *p = param;
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int vm = act_vmath(p, in[0].dtype);
  if (vm >= 0) {
    return mxc__vmath_grad_f32(vm, in[0].ptr, in[2].ptr, out[0].ptr, n,
                               req[0] == MXC__REQ_ADD);
  }
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *gs = in[0].ptr;
    const T *xs = in[1].ptr;
    const T *ys = in[2].ptr;
    T *dx = out[0].ptr;
    switch (p->act_type) {
      case ACT_RELU: /* NaN in, NaN gradient (MXNet's relu_grad) */
        MAP_GRAD(x != x ? x : x > 0 ? 1 : 0);
        break;
      case ACT_SIGMOID:
        MAP_GRAD(y * (1 - y));
        break;
      case ACT_TANH:
        MAP_GRAD(1 - y * y);
        break;
      case ACT_SOFTRELU:
        MAP_GRAD(1 / (1 + exp(-x)));
        break;
      default:
        MAP_GRAD(1 / ((1 + fabs(x)) * (1 + fabs(x))));
        break;
    }
  });
  return MXC_OK;
}

/* ---- LeakyReLU ---- */

/* rrelu: in training each element's slope is drawn uniformly from
 * [lower_bound, upper_bound) (value i of the call's random slice for
 * element i); in inference it is their mean. The slopes are a hidden
 * second output ("mask") the gradient reads. */
enum { LK_ELU, LK_GELU, LK_LEAKY, LK_PRELU, LK_SELU, LK_RRELU };
static const char *const k_leaky_types[] = {"elu",   "gelu", "leaky",
                                            "prelu", "selu", "rrelu", NULL};

typedef struct leaky_param {
  int act_type;
  double slope, lower_bound, upper_bound;
} leaky_param;

static const mxc__param_def k_leaky_params[] = {
    MXC__PARAM_ENUM(leaky_param, act_type, "leaky", k_leaky_types,
                    "leaky: x>0 ? x : slope*x; elu: x>0 ? x : "
                    "slope*(e^x-1); selu: scaled elu with fixed constants; "
                    "gelu: x*Phi(x) (erf form); prelu: x>0 ? x : "
                    "gamma[c]*x with a learned gamma per channel (axis 1)."),
    MXC__PARAM(leaky_param, slope, MXC__P_FLOAT, "0.25",
               "Slope for leaky, alpha for elu."),
    MXC__PARAM(leaky_param, lower_bound, MXC__P_FLOAT, "0.125",
               "rrelu: lower bound of the random slope."),
    MXC__PARAM(leaky_param, upper_bound, MXC__P_FLOAT, "0.334",
               "rrelu: upper bound of the random slope."),
};

static int leaky_check(const char *op_name, void *param) {
  const leaky_param *p = param;
  MXC_RETURN_ERROR_IF(p->act_type == LK_RRELU &&
                          !(p->lower_bound <= p->upper_bound &&
                            isfinite(p->lower_bound) && isfinite(p->upper_bound)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': rrelu needs finite lower_bound <= "
                      "upper_bound (got %g, %g)",
                      op_name, p->lower_bound, p->upper_bound);
  return MXC_OK;
}

#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_LAMBDA 1.0507009873554804934193349852946
#define SQRT1_2 0.70710678118654752440 /* 1/sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143267794

static int leaky_num_inputs(const void *param) {
  return ((const leaky_param *)param)->act_type == LK_PRELU ? 2 : 1;
}

/* rrelu adds the hidden slopes. */
static int leaky_num_outputs(const void *param) {
  return ((const leaky_param *)param)->act_type == LK_RRELU ? 2 : 1;
}

static const char *leaky_input_name(const void *param, int i) {
  (void)param;
  return i == 0 ? "data" : "gamma";
}

/* Backward: (ograd, data, [gamma,] output[, mask]). */
static int leaky_bwd_num_inputs(const void *param) {
  return 1 + leaky_num_inputs(param) + leaky_num_outputs(param);
}

static const char *leaky_bwd_input_name(const void *param, int i) {
  int prelu = leaky_num_inputs(param) == 2;
  if (i == 0) return "ograd";
  if (i == 1) return "data";
  if (prelu && i == 2) return "gamma";
  return i == leaky_bwd_num_inputs(param) - 1 &&
                 leaky_num_outputs(param) == 2
             ? "mask"
             : "output";
}

/* Where prelu's gamma has one slope per channel, it has the extent of
 * data's axis 1; a single slope (1) is shared by all channels. */
static int leaky_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  for (int i = 0; i < n_out; ++i) out[i] = in[0]; /* output[, mask] */
  if (n_in < 2) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 2, MXC_ERR_SHAPE,
                      "operator '%s': prelu needs data with a channel axis "
                      "(ndim >= 2); got shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  if (in[1].ndim == 1 && in[1].dims[0] == 1) return MXC_OK;
  mxc__shape g = mxc__nn_shape1(in[0].dims[1]);
  return mxc__nn_assign_shape(op->name, &in[1], &g, "input 1 ('gamma')",
                              "one slope per channel of data's axis 1, or "
                              "(1) for a shared slope");
}

static int leaky_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  if (n_out > 1) out[1] = in[2];
  return MXC_OK;
}

/* Channel of element i for prelu: data is (outer, C, inner). */
typedef struct chan_map {
  int64_t c, inner, n_gamma;
} chan_map;

static int64_t chan_of(const chan_map *m, int64_t i) {
  return m->n_gamma == 1 ? 0 : (i / m->inner) % m->c;
}

static chan_map chan_map_of(const mxc__blob *data, const mxc__blob *gamma) {
  chan_map m = {1, 1, 1};
  if (!gamma) return m;
  mxc__nn_layout l = mxc__nn_split(&data->shape, 1);
  m.c = l.n;
  m.inner = l.inner;
  m.n_gamma = mxc__shape_size(&gamma->shape);
  return m;
}

/* rrelu: slopes into mask (random in training, else the mean), then
 * y = x > 0 ? x : slope * x. */
static int rrelu_forward(const mxc__opctx *ctx, const leaky_param *p,
                         const mxc__blob *in, const mxc__blob *out,
                         const mxc__req *req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  double mean = 0.5 * (p->lower_bound + p->upper_bound);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *xs = in[0].ptr;
    T *ys = out[0].ptr, *mask = out[1].ptr;
    for (int64_t i = 0; i < n; ++i) {
      double a = mean, x = xs[i];
      if (ctx->is_train) {
        mxc__rng_uniform_f64(&ctx->rng, i, 1, p->lower_bound, p->upper_bound,
                             &a);
      }
      if (req[1] != MXC__REQ_NULL) mask[i] = (T)a;
      if (req[0] != MXC__REQ_NULL)
        MXC__ASSIGN(req[0], ys[i], (T)(x > 0 ? x : a * x));
    }
  });
  return MXC_OK;
}

static int leaky_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  const leaky_param *p = param;
  int64_t n = mxc__shape_size(&in[0].shape);
  double a = p->slope;
  if (p->act_type == LK_RRELU) return rrelu_forward(ctx, p, in, out, req);
  chan_map m = chan_map_of(&in[0], n_in > 1 ? &in[1] : NULL);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *xs = in[0].ptr;
    const T *gamma = n_in > 1 ? in[1].ptr : NULL;
    T *ys = out[0].ptr;
    switch (p->act_type) {
      case LK_ELU:
        MAP_X(x > 0 ? x : a * expm1(x));
        break;
      case LK_SELU:
        MAP_X(SELU_LAMBDA * (x > 0 ? x : SELU_ALPHA * expm1(x)));
        break;
      case LK_GELU:
        MAP_X(0.5 * x * (1 + erf(x * SQRT1_2)));
        break;
      case LK_PRELU:
        MAP_X(x > 0 ? x : (double)gamma[chan_of(&m, i)] * x);
        break;
      default:
        MAP_X(x > 0 ? x : a * x);
        break;
    }
  });
  return MXC_OK;
}

/* prelu's dgamma[c] = sum of ograd * x over the elements of channel c
 * where x <= 0 (where the slope was used). */
static void prelu_dgamma(const mxc__blob *og, const mxc__blob *x,
                         const chan_map *m, const mxc__blob *dg, mxc__req req) {
  int64_t n = mxc__shape_size(&x->shape);
  int64_t ng = mxc__shape_size(&dg->shape);
  MXC__FLOAT_TYPED(x->dtype, {
    const T *gs = og->ptr;
    const T *xs = x->ptr;
    T *d = dg->ptr;
    if (req != MXC__REQ_ADD) {
      for (int64_t c = 0; c < ng; ++c) d[c] = 0;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (xs[i] <= 0) d[chan_of(m, i)] += gs[i] * xs[i];
    }
  });
}

/* _backward_LeakyReLU: (ograd, data, [gamma,] output) ->
 * (ddata[, dgamma]). */
static int leaky_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  const leaky_param *p = param;
  int prelu = p->act_type == LK_PRELU;
  const mxc__blob *gamma_b = prelu ? &in[2] : NULL;
  chan_map m = chan_map_of(&in[1], gamma_b);
  int64_t n = mxc__shape_size(&in[0].shape);
  double a = p->slope;
  if (prelu && req[1] != MXC__REQ_NULL) {
    prelu_dgamma(&in[0], &in[1], &m, &out[1], req[1]);
  }
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *gs = in[0].ptr;
    const T *xs = in[1].ptr;
    const T *gamma = prelu ? in[2].ptr : NULL;
    const T *ys = in[prelu ? 3 : 2].ptr;
    const T *mask = p->act_type == LK_RRELU ? in[3].ptr : NULL;
    T *dx = out[0].ptr;
    switch (p->act_type) {
      case LK_RRELU:
        MAP_GRAD(x > 0 ? 1 : (double)mask[i]);
        break;
      case LK_ELU:
        MAP_GRAD(x > 0 ? 1 : a * exp(x));
        break;
      case LK_SELU:
        MAP_GRAD(SELU_LAMBDA * (x > 0 ? 1 : SELU_ALPHA * exp(x)));
        break;
      case LK_GELU:
        MAP_GRAD(0.5 * (1 + erf(x * SQRT1_2)) +
                 x * INV_SQRT_2PI * exp(-0.5 * x * x));
        break;
      case LK_PRELU:
        MAP_GRAD(x > 0 ? 1 : (double)gamma[chan_of(&m, i)]);
        break;
      default:
        MAP_GRAD(x > 0 ? 1 : a);
        break;
    }
  });
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_act_bwd_in[] = {"ograd", "data", "output", NULL};
static const char *const k_leaky_in[] = {"data", "gamma", NULL};
static const char *const k_leaky_bwd_in[] = {"ograd", "data", "gamma", "output",
                                             NULL};
static const char *const k_leaky_out[] = {"output", "mask", NULL};

/* Half-precision arrays compute in float32 (core/op/half_compute.h). */
MXC__HALF_COMPUTE_FN(act_forward_any, act_forward, 0)
MXC__HALF_COMPUTE_FN(act_backward_any, act_backward, 0)

static const mxc__op k_ops[] = {
    {
        .name = "Activation",
        .doc = "Element-wise activation (relu, sigmoid, tanh, softrelu, "
               "softsign); output has the data's shape.",
        MXC__PARAMS_OF(act_param, k_act_params),
        .n_inputs = 1,
        .input_names = k_data,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = mxc__infer_type_float_or_half,
        .compute = act_forward_any,
        .elementwise = 1,
        /* No in-place pair: the gradient reads data as well as output. */
        .gradient = mxc__grad_use_in_out,
        .backward_uses_inputs = 1,
        .backward_uses_outputs = 1,
    },
    {
        .name = "_backward_Activation",
        .doc = "Gradient of Activation: (ograd, data, output) -> ddata.",
        MXC__PARAMS_OF(act_param, k_act_params),
        .n_inputs = 3,
        .input_names = k_act_bwd_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = mxc__infer_type_float_or_half,
        .compute = act_backward_any,
        .elementwise = 1,
        .hidden = 1,
    },
    {
        .name = "LeakyReLU",
        .doc = "Leaky rectifiers and relatives (leaky, elu, selu, gelu, "
               "prelu, rrelu); output has the data's shape. prelu takes a "
               "second input gamma of shape (C) for data (N, C, ...); "
               "rrelu's random slopes are a hidden second output.",
        MXC__PARAMS_OF(leaky_param, k_leaky_params),
        .param_check = leaky_check,
        .num_inputs = leaky_num_inputs,
        .input_names = k_leaky_in,
        .input_name = leaky_input_name,
        .num_outputs = leaky_num_outputs,
        .n_visible_outputs = 1,
        .output_names = k_leaky_out,
        .infer_shape = leaky_shape,
        .infer_type = mxc__nn_type_float,
        .compute = leaky_forward,
        .gradient = mxc__grad_use_in_out,
        .backward_uses_inputs = 3,
        .backward_uses_outputs = 3,
        .resources = MXC__RES_RANDOM,
    },
    {
        .name = "_backward_LeakyReLU",
        .doc = "Gradient of LeakyReLU: (ograd, data, [gamma,] output[, "
               "mask]) -> (ddata[, dgamma]).",
        MXC__PARAMS_OF(leaky_param, k_leaky_params),
        .param_check = leaky_check,
        .num_inputs = leaky_bwd_num_inputs,
        .input_names = k_leaky_bwd_in,
        .input_name = leaky_bwd_input_name,
        .num_outputs = leaky_num_inputs, /* one gradient per input */
        .infer_shape = leaky_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = leaky_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_activation(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
