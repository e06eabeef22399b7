/* LayerNorm: normalizes data along one axis (per position of the other
 * axes), then scales by gamma and shifts by beta, both of the axis'
 * extent.
 *
 * Outputs: out, mean and std (data's shape with the axis extent 1), which
 * the gradient reads. std = sqrt(var + eps) with the biased variance.
 * mean and std are hidden unless output_mean_var is true, as in MXNet
 * (num_visible_outputs). */
#include <math.h>
#include <stdio.h>

#include "ops/nn/nn.h"
#include "ops/nn/norm_params.h"

typedef mxc__ln_param ln_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(ln_param, axis, MXC__P_INT, "-1",
               "Axis to normalize along (negative counts from the end)."),
    MXC__PARAM_RANGE(ln_param, eps, MXC__P_FLOAT, "1e-05", 0, INFINITY,
                     "Added to the variance before the square root."),
    MXC__PARAM(ln_param, output_mean_var, MXC__P_BOOL, "false",
               "Also output mean and std (sqrt(var + eps)); they get no "
               "gradient."),
};

static const char *const k_in[] = {"data", "gamma", "beta", NULL};
static const char *const k_out[] = {"output", "mean", "std", NULL};
static const char *const k_bwd_in[] = {"ograd",  "data", "gamma", "beta",
                                       "output", "mean", "std",   NULL};

/* mean and std are visible with output_mean_var, as in MXNet. */
static int ln_visible(const void *param) {
  return ((const ln_param *)param)->output_mean_var ? 3 : 1;
}

static int ln_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const ln_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  int axis = 0;
  MXC_FORWARD_IF_ERROR(mxc__nn_axis(op->name, "axis", p->axis, &in[0], &axis));
  mxc__shape c = mxc__nn_shape1(in[0].dims[axis]);
  char why[256], b[160];
  snprintf(why, sizeof why, "the extent of data %s along axis %d",
           mxc__shape_str(&in[0], b, sizeof b), axis);
  MXC_FORWARD_IF_ERROR(
      mxc__nn_assign_shape(op->name, &in[1], &c, "input 1 ('gamma')", why));
  MXC_FORWARD_IF_ERROR(
      mxc__nn_assign_shape(op->name, &in[2], &c, "input 2 ('beta')", why));
  mxc__shape stat = in[0];
  stat.dims[axis] = 1;
  out[0] = in[0];
  out[1] = stat;
  out[2] = stat;
  return MXC_OK;
}

static int ln_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  for (int i = 0; i < 3; ++i) out[i] = in[1 + i];
  return MXC_OK;
}

static mxc__nn_layout layout_of(const ln_param *p, const mxc__shape *data) {
  int64_t a = p->axis < 0 ? p->axis + data->ndim : p->axis;
  return mxc__nn_split(data, (int)a); /* axis validated by ln_shape */
}

/* Each group (o, k) is the n elements x[(o * n + j) * inner + k]. */
static int ln_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const ln_param *p = param;
  mxc__nn_layout l = layout_of(p, &in[0].shape);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    const T *gamma = in[1].ptr;
    const T *beta = in[2].ptr;
    T *y = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        const T *xg = x + o * l.n * l.inner + k;
        double s = 0, q = 0;
        for (int64_t j = 0; j < l.n; ++j) s += xg[j * l.inner];
        double mean = l.n > 0 ? s / (double)l.n : 0;
        for (int64_t j = 0; j < l.n; ++j) {
          double d = xg[j * l.inner] - mean;
          q += d * d;
        }
        double std = sqrt((l.n > 0 ? q / (double)l.n : 0) + p->eps);
        T *yg = y + o * l.n * l.inner + k;
        for (int64_t j = 0; req[0] != MXC__REQ_NULL && j < l.n; ++j) {
          T v = (T)((xg[j * l.inner] - mean) / std * gamma[j] + beta[j]);
          MXC__ASSIGN(req[0], yg[j * l.inner], v);
        }
        int64_t g = o * l.inner + k; /* index into mean/std */
        if (n_out > 1 && req[1] != MXC__REQ_NULL) {
          MXC__ASSIGN(req[1], ((T *)out[1].ptr)[g], (T)mean);
        }
        if (n_out > 2 && req[2] != MXC__REQ_NULL) {
          MXC__ASSIGN(req[2], ((T *)out[2].ptr)[g], (T)std);
        }
      }
    }
  });
  return MXC_OK;
}

/* dgamma[j] = sum over groups of ograd * xhat, dbeta[j] = sum of ograd:
 * one pass over the groups per j, summed in double. */
static void ln_param_grads(const mxc__blob *og, const mxc__blob *x,
                           const mxc__blob *mean_b, const mxc__blob *std_b,
                           mxc__nn_layout l, const mxc__blob *dgamma,
                           const mxc__blob *dbeta, mxc__req req_g,
                           mxc__req req_b) {
  if (req_g == MXC__REQ_NULL && req_b == MXC__REQ_NULL) return;
  MXC__FLOAT_TYPED(x->dtype, {
    const T *g = og->ptr;
    const T *xs = x->ptr;
    const T *mean = mean_b->ptr;
    const T *std = std_b->ptr;
    T *dg = dgamma->ptr;
    T *db = dbeta->ptr;
    for (int64_t j = 0; j < l.n; ++j) {
      double sg = 0, sb = 0;
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t k = 0; k < l.inner; ++k) {
          int64_t i = (o * l.n + j) * l.inner + k;
          int64_t s = o * l.inner + k;
          sg += g[i] * ((xs[i] - mean[s]) / std[s]);
          sb += g[i];
        }
      }
      if (req_g != MXC__REQ_NULL) MXC__ASSIGN(req_g, dg[j], (T)sg);
      if (req_b != MXC__REQ_NULL) MXC__ASSIGN(req_b, db[j], (T)sb);
    }
  });
}

/* _backward_LayerNorm: (ograd, data, gamma, beta, output, mean, std) ->
 * (ddata, dgamma, dbeta). Per group, with xhat = (x - mean) / std and
 * h = ograd * gamma:  ddata = (h - mean(h) - xhat * mean(h * xhat)) / std. */
static int ln_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const ln_param *p = param;
  mxc__nn_layout l = layout_of(p, &in[1].shape);
  ln_param_grads(&in[0], &in[1], &in[5], &in[6], l, &out[1], &out[2], req[1],
                 req[2]);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    const T *x = in[1].ptr;
    const T *gamma = in[2].ptr;
    const T *mean = in[5].ptr;
    const T *std = in[6].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t s = o * l.inner + k, base = o * l.n * l.inner + k;
        double mu = mean[s], sd = std[s], sum_h = 0, sum_hx = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          double h = (double)g[i] * gamma[j];
          sum_h += h;
          sum_hx += h * ((x[i] - mu) / sd);
        }
        double nn = (double)l.n;
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          double h = (double)g[i] * gamma[j];
          double xhat = (x[i] - mu) / sd;
          T v = (T)((h - sum_h / nn - xhat * sum_hx / nn) / sd);
          MXC__ASSIGN(req[0], dx[i], v);
        }
      }
    }
  });
  return MXC_OK;
}

static const mxc__op k_ops[] = {
    {
        .name = "LayerNorm",
        .doc = "Layer normalization along `axis`: (x - mean) / sqrt(var + "
               "eps) * gamma + beta per position of the other axes; gamma "
               "and beta have the axis' extent.",
        MXC__PARAMS_OF(ln_param, k_params),
        .n_inputs = 3,
        .input_names = k_in,
        .n_outputs = 3,
        .n_visible_outputs = 1,
        .num_visible_outputs = ln_visible,
        .n_grad_outputs = 1,
        .output_names = k_out,
        .infer_shape = ln_shape,
        .infer_type = mxc__nn_type_float,
        .compute = ln_forward,
        .gradient = mxc__grad_use_in_out,
        /* What the backward node references: everything. */
        .backward_uses_inputs = 7u,
        .backward_uses_outputs = 7u,
    },
    {
        .name = "_backward_LayerNorm",
        .doc = "Gradient of LayerNorm -> (ddata, dgamma, dbeta).",
        MXC__PARAMS_OF(ln_param, k_params),
        .n_inputs = 7,
        .input_names = k_bwd_in,
        .n_outputs = 3,
        .infer_shape = ln_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = ln_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_layer_norm(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
