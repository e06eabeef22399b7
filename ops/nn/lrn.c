/* LRN, local response normalization across channels (AlexNet,
 * GoogLeNet): for data (N, C, H, W),
 *   norm[c] = knorm + alpha / nsize * sum of x[c']^2 over the window
 *             c' in [c - nsize/2, c - nsize/2 + nsize) (clipped to 0..C-1)
 *   out[c]  = x[c] * norm[c]^-beta
 * at every (n, h, w). norm is a hidden output the gradient reads. */
#include <math.h>

#include "ops/nn/lrn_params.h"
#include "ops/nn/nn.h"

typedef mxc__lrn_param lrn_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(lrn_param, alpha, MXC__P_FLOAT, "0.0001",
               "Scale of the sum of squares (divided by nsize)."),
    MXC__PARAM(lrn_param, beta, MXC__P_FLOAT, "0.75",
               "Exponent of the normalizer."),
    MXC__PARAM(lrn_param, knorm, MXC__P_FLOAT, "2",
               "Added to the scaled sum of squares."),
    MXC__PARAM_RANGE(lrn_param, nsize, MXC__P_INT, NULL, 1, 1e9,
                     "Channels in the window around each channel."),
};

static const char *const k_in[] = {"data", NULL};
static const char *const k_out[] = {"output", "tmp_norm", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", "output", "tmp_norm",
                                       NULL};

static int lrn_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim != 4, MXC_ERR_SHAPE,
                      "operator '%s': data must be 4-D (N, C, H, W); got "
                      "shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  out[0] = in[0];
  out[1] = in[0];
  return MXC_OK;
}

static int lrn_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  return MXC_OK;
}

/* Window of channel c: [c - h, c - h + nsize) clipped to [0, C). */
static void window_of(int64_t c, int64_t nsize, int64_t nc, int64_t *lo,
                      int64_t *hi) {
  int64_t a = c - nsize / 2, b = a + nsize;
  *lo = a < 0 ? 0 : a;
  *hi = b > nc ? nc : b;
}

static int lrn_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const lrn_param *p = param;
  mxc__nn_layout l = mxc__nn_split(&in[0].shape, 1);
  double salpha = p->alpha / (double)p->nsize;
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr, *nm = n_out > 1 ? out[1].ptr : NULL;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < l.n; ++c) {
        int64_t lo, hi;
        window_of(c, p->nsize, l.n, &lo, &hi);
        for (int64_t k = 0; k < l.inner; ++k) {
          double q = 0;
          for (int64_t cc = lo; cc < hi; ++cc) {
            double v = x[(o * l.n + cc) * l.inner + k];
            q += v * v;
          }
          double norm = p->knorm + salpha * q;
          int64_t i = (o * l.n + c) * l.inner + k;
          if (req[0] != MXC__REQ_NULL)
            MXC__ASSIGN(req[0], y[i], (T)(x[i] * pow(norm, -p->beta)));
          if (nm && req[1] != MXC__REQ_NULL) MXC__ASSIGN(req[1], nm[i], (T)norm);
        }
      }
    }
  });
  return MXC_OK;
}

/* _backward_LRN: (ograd, data, output, tmp_norm) -> ddata. With
 * y_j = x_j s_j^-beta and s_j depending on x_i for the channels j whose
 * window holds i (j in [i + h - nsize + 1, i + h], h = nsize / 2):
 *   dx_i = g_i s_i^-beta - 2 beta alpha / nsize x_i sum_j g_j y_j / s_j. */
static int lrn_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const lrn_param *p = param;
  mxc__nn_layout l = mxc__nn_split(&in[1].shape, 1);
  double f = 2 * p->beta * p->alpha / (double)p->nsize;
  int64_t h = p->nsize / 2;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC__FLOAT_TYPED(in[1].dtype, {
    const T *g = in[0].ptr, *x = in[1].ptr, *y = in[2].ptr, *s = in[3].ptr;
    T *dx = out[0].ptr;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < l.n; ++c) {
        int64_t lo = c + h - p->nsize + 1, hi = c + h + 1;
        if (lo < 0) lo = 0;
        if (hi > l.n) hi = l.n;
        for (int64_t k = 0; k < l.inner; ++k) {
          double acc = 0;
          for (int64_t j = lo; j < hi; ++j) {
            int64_t ij = (o * l.n + j) * l.inner + k;
            acc += (double)g[ij] * y[ij] / s[ij];
          }
          int64_t i = (o * l.n + c) * l.inner + k;
          double v = g[i] * pow((double)s[i], -p->beta) - f * x[i] * acc;
          MXC__ASSIGN(req[0], dx[i], (T)v);
        }
      }
    }
  });
  return MXC_OK;
}

static const mxc__op k_ops[] = {
    {
        .name = "LRN",
        .doc = "Local response normalization across channels of data (N, "
               "C, H, W): x * (knorm + alpha/nsize * sum of x^2 over nsize "
               "neighbouring channels)^-beta; output has the data's shape.",
        MXC__PARAMS_OF(lrn_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_out,
        .infer_shape = lrn_shape,
        .infer_type = mxc__nn_type_float,
        .compute = lrn_forward,
        .gradient = mxc__grad_use_in_out,
        .backward_uses_inputs = 1u,
        .backward_uses_outputs = 3u,
    },
    {
        MXC__BACKWARD("LRN"),
        MXC__PARAMS_OF(lrn_param, k_params),
        .n_inputs = 4,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = lrn_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = lrn_backward,
    },
};

int mxc__nn_register_lrn(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
