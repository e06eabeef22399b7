/* Element-wise functions of neural-network models with their own
 * parameters, and softmin:
 *   smooth_l1(x; sigma = scalar):  0.5 (sigma x)^2 where |x| < 1/sigma^2,
 *                                  else |x| - 0.5/sigma^2 (Fast R-CNN);
 *   hard_sigmoid(x; alpha, beta):  clip(alpha x + beta, 0, 1);
 *   softmin(x; axis, temperature): softmax(-x / temperature) along axis.
 * Each has a _backward_ operator taking (ograd, data) (softmin: (ograd,
 * output)). */
#include <math.h>

#include "ops/nn/loss_params.h"
#include "ops/nn/nn.h"

typedef mxc__sl1_param sl1_param;

static const mxc__param_def k_sl1_params[] = {
    MXC__PARAM(sl1_param, scalar, MXC__P_FLOAT, "1",
               "sigma: the quadratic part covers |x| < 1/sigma^2."),
    MXC__PARAM(sl1_param, is_int, MXC__P_BOOL, "true",
               "Accepted for compatibility (MXNet's scalar operators); "
               "ignored."),
};

typedef struct hs_param {
  double alpha, beta;
} hs_param;

static const mxc__param_def k_hs_params[] = {
    MXC__PARAM(hs_param, alpha, MXC__P_FLOAT, "0.2", "Slope."),
    MXC__PARAM(hs_param, beta, MXC__P_FLOAT, "0.5", "Offset."),
};

static int sl1_check(const char *op_name, void *param) {
  const sl1_param *p = param;
  MXC_RETURN_ERROR_IF(!(p->scalar != 0) || !isfinite(p->scalar),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'scalar' (sigma) = %g must be "
                      "finite and non-zero",
                      op_name, p->scalar);
  return MXC_OK;
}

static const mxc__op k_ops[6];
#define IS_SL1(op) ((op) == &k_ops[0] || (op) == &k_ops[1])

/* f(x) and f'(x) of the operator's function. */
static double pw_value(const mxc__op *op, const void *param, double x,
                       double *deriv) {
  if (IS_SL1(op)) {
    double s2 = ((const sl1_param *)param)->scalar;
    s2 *= s2;
    if (fabs(x) < 1 / s2) {
      *deriv = s2 * x;
      return 0.5 * s2 * x * x;
    }
    *deriv = (x > 0) - (x < 0);
    return fabs(x) - 0.5 / s2;
  }
  const hs_param *p = param;
  double v = p->alpha * x + p->beta;
  *deriv = v > 0 && v < 1 ? p->alpha : 0;
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Forward (data) -> f(data); backward (ograd, data) -> ograd * f'. */
static int pw_compute(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  int bwd = n_in == 2;
  const mxc__blob *x = &in[bwd];
  int64_t n = mxc__shape_size(&x->shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(x->dtype, {
    const T *xs = x->ptr, *g = bwd ? in[0].ptr : NULL;
    T *y = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) {
      double d, v = pw_value(op, param, xs[i], &d);
      MXC__ASSIGN(req[0], y[i], (T)(bwd ? g[i] * d : v));
    }
  });
  return MXC_OK;
}

/* ---- softmin ---- */

typedef mxc__softmin_param softmin_param;

static const mxc__param_def k_sm_params[] = {
    MXC__PARAM(softmin_param, axis, MXC__P_INT, "-1",
               "Axis to normalize along."),
    MXC__PARAM(softmin_param, temperature, MXC__P_OPT_FLOAT, "None",
               "Divides the input (finite, non-zero; None means 1)."),
    MXC__PARAM(softmin_param, dtype, MXC__P_DTYPE, "None",
               "Output dtype: float32 or float64; None: the input's."),
    MXC__PARAM(softmin_param, use_length, MXC__P_BOOL, "false",
               "Only false is supported (no length input)."),
};

static int sm_check(const char *op_name, void *param) {
  const softmin_param *p = param;
  MXC_RETURN_ERROR_IF(
      !isnan(p->temperature) && (!isfinite(p->temperature) || p->temperature == 0),
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': parameter 'temperature' = %g must be finite and "
      "non-zero (or None)",
      op_name, p->temperature);
  MXC_RETURN_ERROR_IF(p->use_length, MXC_ERR_UNSUPPORTED,
                      "operator '%s': use_length = true is not supported",
                      op_name);
  return mxc__nn_check_float(op_name, p->dtype, "parameter 'dtype'");
}

static int sm_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const softmin_param *p = param;
  const mxc__shape *s = &in[0];
  if (s->ndim < 0) return MXC_OK;
  int axis;
  MXC_FORWARD_IF_ERROR(mxc__nn_axis(op->name, "axis", p->axis, s, &axis));
  out[0] = *s;
  return MXC_OK;
}

/* The output dtype is `dtype` when set. The backward's arrays all share
 * one dtype, so a gradient needs dtype None or the input's. */
static int sm_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  const softmin_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__nn_check_float(op->name, in[0], "the data"));
  if (n_in == 2) return mxc__nn_type_float(op, param, in, n_in, out, n_out);
  int want = p->dtype >= 0 ? p->dtype : in[0];
  if (want >= 0) out[0] = want;
  return MXC_OK;
}

static int sm_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const softmin_param *p = param;
  int axis = (int)(p->axis < 0 ? p->axis + in[0].shape.ndim : p->axis);
  mxc__nn_layout l = mxc__nn_split(&in[0].shape, axis);
  double t = isnan(p->temperature) ? 1 : p->temperature;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t k = 0; k < l.inner; ++k) {
      int64_t base = o * l.n * l.inner + k;
      /* z = -x / t, shifted by its maximum so that exp never overflows. */
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < l.n; ++j)
        m = fmax(m, -mxc__blob_get(&in[0], base + j * l.inner) / t);
      for (int64_t j = 0; j < l.n; ++j)
        s += exp(-mxc__blob_get(&in[0], base + j * l.inner) / t - m);
      for (int64_t j = 0; j < l.n; ++j) {
        int64_t i = base + j * l.inner;
        double v = exp(-mxc__blob_get(&in[0], i) / t - m) / s;
        if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i);
        mxc__blob_set(&out[0], i, v);
      }
    }
  }
  return MXC_OK;
}

/* _backward_softmin: (ograd, output) -> dx = -y (g - sum(g y)) / t. */
static int sm_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const softmin_param *p = param;
  int axis = (int)(p->axis < 0 ? p->axis + in[1].shape.ndim : p->axis);
  mxc__nn_layout l = mxc__nn_split(&in[1].shape, axis);
  double t = isnan(p->temperature) ? 1 : p->temperature;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[1].dtype, {
    const T *g = in[0].ptr, *y = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double s = 0;
        for (int64_t j = 0; j < l.n; ++j)
          s += (double)g[base + j * l.inner] * y[base + j * l.inner];
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], dx[i], (T)(-(double)y[i] * (g[i] - s) / t));
        }
      }
    }
  });
  return MXC_OK;
}

static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const char *const k_sm_bwd_in[] = {"ograd", "output", NULL};

#define PW_FWD(nm, st, table, check, doc_)                              \
  {                                                                    \
    .name = nm, .doc = doc_, MXC__PARAMS_OF(st, table),                \
    .param_check = check, .n_inputs = 1, .input_names = k_in,          \
    .n_outputs = 1, .infer_shape = mxc__infer_shape_same,              \
    .infer_type = mxc__nn_type_float, .compute = pw_compute,           \
    .gradient = mxc__grad_use_in, .backward_uses_inputs = 1,           \
  }
#define PW_BWD(nm, st, table, check)                                      \
  {                                                                      \
    MXC__BACKWARD(nm), MXC__PARAMS_OF(st, table), .param_check = check,  \
    .n_inputs = 2, .input_names = k_bwd_in, .n_outputs = 1,              \
    .infer_shape = mxc__infer_shape_same, .infer_type = mxc__nn_type_float,       \
    .compute = pw_compute,                                               \
  }

static const mxc__op k_ops[6] = {
    PW_FWD("smooth_l1", sl1_param, k_sl1_params, sl1_check,
           "Element-wise smooth L1 with sigma = scalar: 0.5 (sigma x)^2 "
           "where |x| < 1/sigma^2, else |x| - 0.5/sigma^2."),
    PW_BWD("smooth_l1", sl1_param, k_sl1_params, sl1_check),
    PW_FWD("hard_sigmoid", hs_param, k_hs_params, NULL,
           "Element-wise clip(alpha * x + beta, 0, 1)."),
    PW_BWD("hard_sigmoid", hs_param, k_hs_params, NULL),
    {
        .name = "softmin",
        .doc = "softmax(-x / temperature) along axis (same shape as x).",
        MXC__PARAMS_OF(softmin_param, k_sm_params),
        .param_check = sm_check,
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = sm_shape,
        .infer_type = sm_type,
        .compute = sm_forward,
        .gradient = mxc__grad_use_out,
        .backward_uses_outputs = 1,
    },
    {
        MXC__BACKWARD("softmin"),
        MXC__PARAMS_OF(softmin_param, k_sm_params),
        .param_check = sm_check,
        .n_inputs = 2,
        .input_names = k_sm_bwd_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = sm_type,
        .compute = sm_backward,
    },
};

int mxc__nn_register_pointwise(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
