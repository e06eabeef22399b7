/* SoftmaxActivation (MXNet's legacy softmax layer, as in MTCNN):
 *   instance: softmax over all axes but 0 of each sample;
 *   channel:  softmax across axis 1 at each (sample, spatial position).
 * Gradient through the output: dx = y * (g - sum(g * y)) per group. */
#include <math.h>

#include "ops/nn/loss_params.h"
#include "ops/nn/nn.h"

enum { SA_INSTANCE = MXC__SA_INSTANCE, SA_CHANNEL = MXC__SA_CHANNEL };
static const char *const k_modes[] = {"instance", "channel", NULL};

typedef mxc__sa_param sa_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_ENUM(sa_param, mode, "instance", k_modes,
                    "instance: one softmax per sample over all its "
                    "elements; channel: one per (sample, position) across "
                    "axis 1."),
};

static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "output", NULL};

/* Groups as (outer, n, inner): group (o, k) holds
 * x[(o * n + j) * inner + k] for j < n. */
static mxc__nn_layout sa_layout(const sa_param *p, const mxc__shape *s) {
  mxc__nn_layout l = {s->ndim > 0 ? s->dims[0] : 1, 1, 1};
  for (int d = 1; d < s->ndim; ++d) l.n *= s->dims[d];
  if (p->mode == SA_CHANNEL && s->ndim > 1) {
    l.inner = l.n / (s->dims[1] > 0 ? s->dims[1] : 1);
    l.n = s->dims[1];
  }
  return l;
}

static int sa_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const sa_param *p = param;
  (void)n_in, (void)n_out;
  if (in[0].ndim < 0) return mxc__nn_assign_shape(op->name, &in[0], &out[0],
                                                  "data", "the output's");
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < (p->mode == SA_CHANNEL ? 2 : 1),
                      MXC_ERR_SHAPE,
                      "operator '%s': data has shape %s; mode %s needs at "
                      "least %d axes",
                      op->name, mxc__shape_str(&in[0], b, sizeof b),
                      k_modes[p->mode], p->mode == SA_CHANNEL ? 2 : 1);
  out[0] = in[0];
  return MXC_OK;
}

static int sa_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  (void)op, (void)param, (void)n_in, (void)n_out;
  out[0] = in[1];
  return MXC_OK;
}

static int sa_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  mxc__nn_layout l = sa_layout(param, &in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < l.n; ++j) m = fmax(m, x[base + j * l.inner]);
        for (int64_t j = 0; j < l.n; ++j) s += exp(x[base + j * l.inner] - m);
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], y[i], (T)(exp(x[i] - m) / s));
        }
      }
    }
  });
  return MXC_OK;
}

/* _backward_SoftmaxActivation: (ograd, output) -> ddata. */
static int sa_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  mxc__nn_layout l = sa_layout(param, &in[1].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    const T *y = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double s = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          s += (double)g[base + j * l.inner] * y[base + j * l.inner];
        }
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], dx[i], (T)(y[i] * (g[i] - s)));
        }
      }
    }
  });
  return MXC_OK;
}

static const mxc__op k_ops[] = {
    {
        .name = "SoftmaxActivation",
        .doc = "Softmax of each sample (mode instance) or across the "
               "channels of each position (mode channel); output has the "
               "data's shape.",
        MXC__PARAMS_OF(sa_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = sa_shape,
        .infer_type = mxc__nn_type_float,
        .compute = sa_forward,
        .gradient = mxc__grad_use_out,
        .backward_uses_outputs = 1u,
    },
    {
        .name = "_backward_SoftmaxActivation",
        .doc = "Gradient of SoftmaxActivation -> ddata.",
        MXC__PARAMS_OF(sa_param, k_params),
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = sa_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = sa_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_softmax_activation(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
