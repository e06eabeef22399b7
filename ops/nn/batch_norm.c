/* BatchNorm: normalizes each channel (the `axis` extent) of data with
 * per-channel statistics, then scales by gamma and shifts by beta.
 *
 * Inputs: data, gamma, beta, moving_mean, moving_var. The last two are
 * auxiliary states (n_aux = 2): never differentiated, updated in place in
 * training mode (mutate_inputs), so the engine orders them as writes.
 *
 * Outputs: out, mean and var: the statistics the normalization used,
 * batch statistics in training mode and the moving ones otherwise. As in
 * MXNet 1.9 (CPU), "var" holds the inverse standard deviation
 * 1/sqrt(var + eps). The gradient reads them instead of recomputing them,
 * so it matches the forward pass even though the moving statistics have
 * changed since. mean and var are hidden unless output_mean_var is true
 * (num_visible_outputs); callers may also ask for all three outputs.
 *
 * Mode: batch statistics are used when ctx->is_train and not
 * use_global_stats. The backward operator decides the same way from its
 * own context, so it must run in the mode of the forward pass (as
 * autograd does: both in one training scope). As in MXNet, the variance
 * is the biased one (divided by the count), in the normalization and in
 * the moving_var update alike.
 *
 * Dtypes as MXNet's: float32/float64 throughout, or float16/bfloat16 data
 * (and output, and their gradients) with float32 gamma, beta and
 * statistics; half data computes through float32 copies
 * (core/op/half_compute.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/op/half_compute.h"
#include "ops/nn/nn.h"

typedef mxc__bn_param bn_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(bn_param, eps, MXC__P_FLOAT, "0.001", 0, INFINITY,
                     "Added to the variance before the square root."),
    MXC__PARAM_RANGE(bn_param, momentum, MXC__P_FLOAT, "0.9", 0, 1,
                     "moving = moving * momentum + batch * (1 - momentum)."),
    MXC__PARAM(bn_param, fix_gamma, MXC__P_BOOL, "true",
               "Use gamma = 1 (and give gamma a zero gradient)."),
    MXC__PARAM(bn_param, use_global_stats, MXC__P_BOOL, "false",
               "Normalize with the moving statistics in training mode too."),
    MXC__PARAM(bn_param, output_mean_var, MXC__P_BOOL, "false",
               "Also output mean and var (MXNet's var output: the inverse "
               "standard deviation 1/sqrt(var + eps)); they get no "
               "gradient."),
    MXC__PARAM(bn_param, axis, MXC__P_INT, "1",
               "Channel axis (negative counts from the end)."),
    MXC__PARAM(bn_param, cudnn_off, MXC__P_BOOL, "false",
               "Accepted for compatibility; ignored."),
};

static const char *const k_in[] = {"data",        "gamma",      "beta",
                                   "moving_mean", "moving_var", NULL};
static const char *const k_out[] = {"output", "mean", "var", NULL};
static const char *const k_bwd_in[] = {
    "ograd",      "data",   "gamma", "beta", "moving_mean",
    "moving_var", "output", "mean",  "var",  NULL};

/* mean and var are visible with output_mean_var, as in MXNet. */
static int bn_visible(const void *param) {
  return ((const bn_param *)param)->output_mean_var ? 3 : 1;
}

static int bn_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const bn_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  int axis = 0;
  MXC_FORWARD_IF_ERROR(mxc__nn_axis(op->name, "axis", p->axis, &in[0], &axis));
  mxc__shape c = mxc__nn_shape1(in[0].dims[axis]);
  char why[256], what[64], b[160];
  snprintf(why, sizeof why, "one value per channel of data %s along axis %d",
           mxc__shape_str(&in[0], b, sizeof b), axis);
  for (int i = 1; i < 5; ++i) {
    snprintf(what, sizeof what, "input %d ('%s')", i, k_in[i]);
    MXC_FORWARD_IF_ERROR(mxc__nn_assign_shape(op->name, &in[i], &c, what, why));
  }
  out[0] = in[0];
  out[1] = c;
  out[2] = c;
  return MXC_OK;
}

/* Gradients have the shapes of data, gamma, beta. */
static int bn_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  for (int i = 0; i < 3; ++i) out[i] = in[1 + i];
  return MXC_OK;
}

static int axis_of(const bn_param *p, const mxc__shape *data) {
  int64_t a = p->axis < 0 ? p->axis + data->ndim : p->axis;
  return (int)a; /* validated by bn_shape before any kernel runs */
}

/* Mean and biased variance of channel c, two-pass in double. Inside an
 * MXC__FLOAT_TYPED body: x, l, m. */
#define CHANNEL_STATS(c, mean, var)                       \
  do {                                                    \
    double s_ = 0, q_ = 0;                                \
    for (int64_t o = 0; o < l.outer; ++o) {               \
      const T *row = x + (o * l.n + (c)) * l.inner;       \
      for (int64_t k = 0; k < l.inner; ++k) s_ += row[k]; \
    }                                                     \
    (mean) = m > 0 ? s_ / (double)m : 0;                  \
    for (int64_t o = 0; o < l.outer; ++o) {               \
      const T *row = x + (o * l.n + (c)) * l.inner;       \
      for (int64_t k = 0; k < l.inner; ++k) {             \
        double d_ = row[k] - (mean);                      \
        q_ += d_ * d_;                                    \
      }                                                   \
    }                                                     \
    (var) = m > 0 ? q_ / (double)m : 0;                   \
  } while (0)

static int bn_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const bn_param *p = param;
  mxc__nn_layout l = mxc__nn_split(&in[0].shape, axis_of(p, &in[0].shape));
  int64_t m = l.outer * l.inner; /* elements per channel */
  int batch_stats = ctx->is_train && !p->use_global_stats;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    const T *gamma = in[1].ptr;
    const T *beta = in[2].ptr;
    T *moving_mean = in[3].ptr; /* aux states, updated in place */
    T *moving_var = in[4].ptr;
    T *y = out[0].ptr;
    for (int64_t c = 0; c < l.n; ++c) {
      double mean = 0, var = 0;
      if (batch_stats) {
        CHANNEL_STATS(c, mean, var);
        if (m > 0) { /* an empty batch says nothing about the data */
          moving_mean[c] =
              (T)(moving_mean[c] * p->momentum + mean * (1 - p->momentum));
          moving_var[c] =
              (T)(moving_var[c] * p->momentum + var * (1 - p->momentum));
        }
      } else {
        mean = moving_mean[c];
        var = moving_var[c];
      }
      double g = p->fix_gamma ? 1 : (double)gamma[c];
      double scale = g / sqrt(var + p->eps);
      double shift = (double)beta[c] - mean * scale;
      for (int64_t o = 0; req[0] != MXC__REQ_NULL && o < l.outer; ++o) {
        int64_t base = (o * l.n + c) * l.inner;
        for (int64_t k = 0; k < l.inner; ++k) {
          T v = (T)(x[base + k] * scale + shift);
          MXC__ASSIGN(req[0], y[base + k], v);
        }
      }
      if (n_out > 1 && req[1] != MXC__REQ_NULL) {
        MXC__ASSIGN(req[1], ((T *)out[1].ptr)[c], (T)mean);
      }
      if (n_out > 2 && req[2] != MXC__REQ_NULL) {
        MXC__ASSIGN(req[2], ((T *)out[2].ptr)[c], (T)(1 / sqrt(var + p->eps)));
      }
    }
  });
  return MXC_OK;
}

/* _backward_BatchNorm: (ograd, data, gamma, beta, moving_mean, moving_var,
 * output, mean, var) -> (ddata, dgamma, dbeta); var is the forward's
 * inverse standard deviation. With xhat the normalized
 * data and g = gamma (1 under fix_gamma):
 *   dbeta = sum(ograd), dgamma = sum(ograd * xhat) (0 under fix_gamma),
 *   batch statistics: ddata = g/std * (ograd - dbeta/m - xhat*dgamma'/m)
 *     where dgamma' = sum(ograd * xhat) (mean and var depend on data),
 *   fixed statistics: ddata = g/std * ograd. */
static int bn_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const bn_param *p = param;
  mxc__nn_layout l = mxc__nn_split(&in[1].shape, axis_of(p, &in[1].shape));
  int64_t m = l.outer * l.inner;
  int batch_stats = ctx->is_train && !p->use_global_stats && m > 0;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *og = in[0].ptr;
    const T *x = in[1].ptr;
    const T *gamma = in[2].ptr;
    const T *saved_mean = in[7].ptr;
    const T *saved_inv_std = in[8].ptr;
    T *dx = out[0].ptr;
    for (int64_t c = 0; c < l.n; ++c) {
      double mean = saved_mean[c];
      double inv_std = saved_inv_std[c];
      double sum_g = 0, sum_gx = 0;
      for (int64_t o = 0; o < l.outer; ++o) {
        int64_t base = (o * l.n + c) * l.inner;
        for (int64_t k = 0; k < l.inner; ++k) {
          sum_g += og[base + k];
          sum_gx += og[base + k] * (x[base + k] - mean) * inv_std;
        }
      }
      double g = p->fix_gamma ? 1 : (double)gamma[c];
      for (int64_t o = 0; req[0] != MXC__REQ_NULL && o < l.outer; ++o) {
        int64_t base = (o * l.n + c) * l.inner;
        for (int64_t k = 0; k < l.inner; ++k) {
          double d = og[base + k];
          if (batch_stats) {
            double xhat = (x[base + k] - mean) * inv_std;
            d -= (sum_g + xhat * sum_gx) / (double)m;
          }
          MXC__ASSIGN(req[0], dx[base + k], (T)(g * inv_std * d));
        }
      }
      if (req[1] != MXC__REQ_NULL) {
        T dg = (T)(p->fix_gamma ? 0 : sum_gx);
        MXC__ASSIGN(req[1], ((T *)out[1].ptr)[c], dg);
      }
      if (req[2] != MXC__REQ_NULL) {
        MXC__ASSIGN(req[2], ((T *)out[2].ptr)[c], (T)sum_g);
      }
    }
  });
  return MXC_OK;
}

/* Slots that carry the data's dtype; the others (gamma, beta, the
 * statistics and their gradients) are float32 for half data. */
static int is_data_slot(const mxc__op *op, const void *param, int i) {
  const char *n = mxc__op_input_name(op, param, i);
  return !strcmp(n, "data") || !strcmp(n, "ograd") || !strcmp(n, "output");
}

static int bn_assign(const mxc__op *op, const void *param, int *slot,
                     int want, int i) {
  if (*slot < 0) *slot = want;
  char what[64]; /* i >= 0: input i; i < 0: output -i - 1 */
  snprintf(what, sizeof what, "%s %d", i < 0 ? "output" : "input",
           i < 0 ? -i - 1 : i);
  MXC_RETURN_ERROR_IF(*slot != want, MXC_ERR_DTYPE,
                      "operator '%s': %s is %s; expected %s (float16 and "
                      "bfloat16 data take float32 gamma, beta and "
                      "statistics, as in MXNet)",
                      op->name, what, mxc__dtype_name(*slot),
                      mxc__dtype_name(want));
  return MXC_OK;
}

static int bn_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  int d = out[0], p = -1;
  for (int i = 0; i < n_in; ++i) {
    if (in[i] < 0) continue;
    if (is_data_slot(op, param, i)) d = in[i];
    else p = in[i];
  }
  if (d < 0 && p >= 0 && !mxc__dtype_is_half(p)) d = p; /* one dtype */
  if (d < 0) return MXC_OK;
  if (!mxc__dtype_is_half(d)) {
    MXC_FORWARD_IF_ERROR(mxc__nn_check_float(op->name, d, "the data"));
  }
  p = mxc__dtype_is_half(d) ? MXC_DTYPE_FLOAT32 : d;
  for (int i = 0; i < n_in; ++i) {
    int want = is_data_slot(op, param, i) ? d : p;
    MXC_FORWARD_IF_ERROR(bn_assign(op, param, &in[i], want, i));
  }
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(bn_assign(op, param, &out[i], i ? p : d, -i - 1));
  }
  return MXC_OK;
}

/* _FusedBatchNormReLU: BatchNorm whose output goes through relu (x above 0
 * or NaN, else 0, as Activation's relu), made by the executor's fusion
 * pass (core/fuse/bn_relu.c) where relu is the only reader of BatchNorm's
 * output. Write mode add would need the unrectified sum, and the pass
 * never asks for it. */
static int bn_relu_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  MXC_RETURN_ERROR_IF(req[0] == MXC__REQ_ADD, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': output 0 in write mode add; expected "
                      "write or null (relu of a sum is not a sum)",
                      op->name);
  MXC_FORWARD_IF_ERROR(
      bn_forward(op, ctx, param, in, n_in, out, n_out, req));
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t n = mxc__shape_size(&out[0].shape);
  MXC__FLOAT_TYPED(out[0].dtype, {
    T *y = out[0].ptr;
    for (int64_t i = 0; i < n; ++i) {
      if (y[i] <= 0) y[i] = 0; /* NaN stays */
    }
  });
  return MXC_OK;
}

MXC__HALF_COMPUTE_FN(bn_forward_any, bn_forward, 0)
MXC__HALF_COMPUTE_FN(bn_relu_forward_any, bn_relu_forward, 0)
MXC__HALF_COMPUTE_FN(bn_backward_any, bn_backward, 0)

static const mxc__op k_ops[] = {
    {
        .name = "BatchNorm",
        .doc = "Batch normalization over the channel axis: (x - mean) / "
               "sqrt(var + eps) * gamma + beta, batch statistics in training "
               "mode (updating moving_mean/moving_var in place), moving "
               "statistics otherwise. gamma, beta and the moving statistics "
               "have shape (C).",
        MXC__PARAMS_OF(bn_param, k_params),
        .n_inputs = 5,
        .input_names = k_in,
        .n_aux = 2,
        .n_outputs = 3,
        .n_visible_outputs = 1,
        .num_visible_outputs = bn_visible,
        .n_grad_outputs = 1,
        .output_names = k_out,
        .infer_shape = bn_shape,
        .infer_type = bn_type,
        .compute = bn_forward_any,
        .gradient = mxc__grad_use_in_out,
        .mutate_inputs = (1u << 3) | (1u << 4),
        /* What the backward node references: everything. */
        .backward_uses_inputs = 0x1fu,
        .backward_uses_outputs = 7u,
    },
    {
        .name = "_backward_BatchNorm",
        .doc = "Gradient of BatchNorm -> (ddata, dgamma, dbeta).",
        MXC__PARAMS_OF(bn_param, k_params),
        .n_inputs = 9,
        .input_names = k_bwd_in,
        .n_outputs = 3,
        .infer_shape = bn_bwd_shape,
        .infer_type = bn_type,
        .compute = bn_backward_any,
        .hidden = 1,
    },
    {
        .name = "_FusedBatchNormReLU",
        .doc = "relu(BatchNorm(...)) in one operator: BatchNorm's inputs, "
               "parameters and outputs, the output rectified. Made by the "
               "executor's fusion pass after the gradient pass (the "
               "gradient nodes are BatchNorm's and the relu's), so it "
               "has no gradient of its own.",
        MXC__PARAMS_OF(bn_param, k_params),
        .n_inputs = 5,
        .input_names = k_in,
        .n_aux = 2,
        .n_outputs = 3,
        .n_visible_outputs = 1,
        .num_visible_outputs = bn_visible,
        .output_names = k_out,
        .infer_shape = bn_shape,
        .infer_type = bn_type,
        .compute = bn_relu_forward_any,
        .mutate_inputs = (1u << 3) | (1u << 4),
        .hidden = 1,
    },
};

int mxc__nn_register_batch_norm(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
