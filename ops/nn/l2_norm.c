/* L2Normalization: divides data by the L2 norm sqrt(sum x^2 + eps) of
 * each group of elements:
 *   instance: each sample (all axes but 0),
 *   channel:  each (sample, spatial position) across axis 1,
 *   spatial:  each (sample, channel) across axes 2.. .
 * The norms are a hidden output (instance (N), channel data's shape with
 * axis 1 of extent 1, spatial (N, C)) that the gradient reads. */
#include <math.h>

#include "ops/nn/nn.h"
#include "ops/nn/norm_params.h"

enum {
  L2_CHANNEL = MXC__L2N_CHANNEL,
  L2_INSTANCE = MXC__L2N_INSTANCE,
  L2_SPATIAL = MXC__L2N_SPATIAL
};
static const char *const k_modes[] = {"channel", "instance", "spatial", NULL};

typedef mxc__l2n_param l2_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(l2_param, eps, MXC__P_FLOAT, "1e-10", 0, INFINITY,
                     "Added to the sum of squares before the square root."),
    MXC__PARAM_ENUM(l2_param, mode, "instance", k_modes,
                    "Which elements share a norm (see the operator doc)."),
};

static const char *const k_in[] = {"data", NULL};
static const char *const k_out[] = {"output", "norm", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", "output", "norm", NULL};

/* Groups as (outer, n, inner): the n elements of group (o, k) are
 * x[(o * n + j) * inner + k]; the group's norm is norm[o * inner + k]. */
static mxc__nn_layout l2_layout(const l2_param *p, const mxc__shape *s) {
  mxc__nn_layout l = {s->dims[0], 1, 1};
  int64_t spatial = 1;
  for (int d = 2; d < s->ndim; ++d) spatial *= s->dims[d];
  switch (p->mode) {
    case L2_CHANNEL:
      l.n = s->dims[1];
      l.inner = spatial;
      break;
    case L2_SPATIAL:
      l.outer = s->dims[0] * s->dims[1];
      l.n = spatial;
      break;
    default:
      l.n = s->dims[1] * spatial;
      break;
  }
  return l;
}

static int l2_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const l2_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 2, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least 2 axes "
                      "(batch, channel, ...); got shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape norm = in[0];
  if (p->mode == L2_CHANNEL) {
    norm.dims[1] = 1;
  } else if (p->mode == L2_SPATIAL) {
    norm.ndim = 2;
  } else {
    norm.ndim = 1;
  }
  out[0] = in[0];
  out[1] = norm;
  return MXC_OK;
}

static int l2_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  return MXC_OK;
}

static int l2_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const l2_param *p = param;
  mxc__nn_layout l = l2_layout(p, &in[0].shape);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double q = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          double v = x[base + j * l.inner];
          q += v * v;
        }
        double norm = sqrt(q + p->eps);
        for (int64_t j = 0; req[0] != MXC__REQ_NULL && j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], y[i], (T)(x[i] / norm));
        }
        if (n_out > 1 && req[1] != MXC__REQ_NULL) {
          MXC__ASSIGN(req[1], ((T *)out[1].ptr)[o * l.inner + k], (T)norm);
        }
      }
    }
  });
  return MXC_OK;
}

/* _backward_L2Normalization: (ograd, data, output, norm) -> ddata. With
 * y = x / norm per group: ddata = (ograd - y * sum(ograd * y)) / norm. */
static int l2_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const l2_param *p = param;
  mxc__nn_layout l = l2_layout(p, &in[1].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    const T *y = in[2].ptr;
    const T *norm = in[3].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t k = 0; k < l.inner; ++k) {
        int64_t base = o * l.n * l.inner + k;
        double s = 0;
        for (int64_t j = 0; j < l.n; ++j) {
          s += (double)g[base + j * l.inner] * y[base + j * l.inner];
        }
        double nv = norm[o * l.inner + k];
        for (int64_t j = 0; j < l.n; ++j) {
          int64_t i = base + j * l.inner;
          MXC__ASSIGN(req[0], dx[i], (T)((g[i] - y[i] * s) / nv));
        }
      }
    }
  });
  return MXC_OK;
}

static const mxc__op k_ops[] = {
    {
        .name = "L2Normalization",
        .doc = "Divides data (N, C, ...) by the L2 norm of each instance, "
               "channel vector or spatial map (mode); output has the data's "
               "shape.",
        MXC__PARAMS_OF(l2_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_out,
        .infer_shape = l2_shape,
        .infer_type = mxc__nn_type_float,
        .compute = l2_forward,
        .gradient = mxc__grad_use_in_out,
        /* What the backward node references (data unused by the kernel). */
        .backward_uses_inputs = 1u,
        .backward_uses_outputs = (1u << 0) | (1u << 1),
    },
    {
        .name = "_backward_L2Normalization",
        .doc = "Gradient of L2Normalization -> ddata.",
        MXC__PARAMS_OF(l2_param, k_params),
        .n_inputs = 4,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = l2_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = l2_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_l2_norm(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
