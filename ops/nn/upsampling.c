/* UpSampling, nearest neighbour: data (N, C, H, W) -> (N, C, H*scale,
 * W*scale), each input pixel repeated over a scale x scale block. The
 * gradient sums each block of the output gradient.
 *
 * MXNet's operator also takes several inputs (num_args, concatenated or
 * summed) and a bilinear mode (a learned deconvolution); both are
 * rejected here with MXC_ERR_UNSUPPORTED when the parameters are parsed. */
#include "ops/nn/nn.h"

enum { UP_NEAREST, UP_BILINEAR };
static const char *const k_sample_types[] = {"nearest", "bilinear", NULL};
static const char *const k_multi_modes[] = {"concat", "sum", NULL};

typedef struct up_param {
  int64_t scale, num_filter, num_args, workspace;
  int sample_type, multi_input_mode;
} up_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(up_param, scale, MXC__P_INT, NULL, 1, 1e9,
                     "Upsampling factor for both spatial axes."),
    MXC__PARAM_RANGE(up_param, num_filter, MXC__P_INT, "0", 0, 1e18,
                     "Accepted for compatibility (bilinear only); ignored."),
    MXC__PARAM_ENUM(up_param, sample_type, "nearest", k_sample_types,
                    "Only nearest is supported."),
    MXC__PARAM_ENUM(up_param, multi_input_mode, "concat", k_multi_modes,
                    "Accepted for compatibility (several inputs only)."),
    MXC__PARAM_RANGE(up_param, num_args, MXC__P_INT, "1", 1, 1e6,
                     "Number of inputs; only 1 is supported."),
    MXC__PARAM_RANGE(up_param, workspace, MXC__P_INT, "512", 0, 1e18,
                     "Accepted for compatibility; ignored."),
};

static int up_check(const char *op_name, void *param) {
  const up_param *p = param;
  MXC_RETURN_ERROR_IF(p->sample_type != UP_NEAREST, MXC_ERR_UNSUPPORTED,
                      "operator '%s': sample_type 'bilinear' is not "
                      "supported; only 'nearest' is",
                      op_name);
  MXC_RETURN_ERROR_IF(p->num_args != 1, MXC_ERR_UNSUPPORTED,
                      "operator '%s': num_args = %lld is not supported; "
                      "only a single input (num_args = 1) is",
                      op_name, (long long)p->num_args);
  return MXC_OK;
}

static int up_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const up_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim != 4, MXC_ERR_SHAPE,
                      "operator '%s': data must be 4-D (N, C, H, W); got "
                      "shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape o = in[0];
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(in[0].dims[2], p->scale, &o.dims[2]) ||
                          !mxc__mul_i64(in[0].dims[3], p->scale, &o.dims[3]),
                      MXC_ERR_SHAPE,
                      "operator '%s': data of shape %s upsampled by %lld "
                      "overflows",
                      op->name, mxc__shape_str(&in[0], b, sizeof b),
                      (long long)p->scale);
  out[0] = o;
  return MXC_OK;
}

/* _backward_UpSampling: (ograd) -> ddata of the ograd's spatial extents
 * divided by scale. */
static int up_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  const up_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim != 4 || in[0].dims[2] % p->scale != 0 ||
                          in[0].dims[3] % p->scale != 0,
                      MXC_ERR_SHAPE,
                      "operator '%s': output gradient of shape %s is not 4-D "
                      "with spatial extents divisible by scale %lld",
                      op->name, mxc__shape_str(&in[0], b, sizeof b),
                      (long long)p->scale);
  out[0] = in[0];
  out[0].dims[2] /= p->scale;
  out[0].dims[3] /= p->scale;
  return MXC_OK;
}

static int up_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const up_param *p = param;
  const int64_t *d = in[0].shape.dims;
  int64_t planes = d[0] * d[1], h = d[2], w = d[3], s = p->scale;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  NN_TYPED(in[0].dtype, {
    const T *x = in[0].ptr;
    T *y = out[0].ptr;
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T *xp = x + pl * h * w;
      T *yp = y + pl * h * s * w * s;
      for (int64_t r = 0; r < h * s; ++r) {
        const T *xr = xp + (r / s) * w;
        T *yr = yp + r * w * s;
        for (int64_t c = 0; c < w * s; ++c)
          MXC__ASSIGN(req[0], yr[c], xr[c / s]);
      }
    }
  });
  return MXC_OK;
}

static int up_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const up_param *p = param;
  const int64_t *d = out[0].shape.dims;
  int64_t planes = d[0] * d[1], h = d[2], w = d[3], s = p->scale;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  NN_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    T *dx = out[0].ptr;
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T *gp = g + pl * h * s * w * s;
      T *dp = dx + pl * h * w;
      for (int64_t r = 0; r < h; ++r) {
        for (int64_t c = 0; c < w; ++c) {
          double sum = 0;
          for (int64_t i = 0; i < s; ++i) {
            const T *gr = gp + (r * s + i) * w * s + c * s;
            for (int64_t j = 0; j < s; ++j) sum += gr[j];
          }
          MXC__ASSIGN(req[0], dp[r * w + c], (T)sum);
        }
      }
    }
  });
  return MXC_OK;
}

static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "UpSampling",
        .doc = "Nearest-neighbour upsampling of data (N, C, H, W) to (N, C, "
               "H*scale, W*scale).",
        MXC__PARAMS_OF(up_param, k_params),
        .param_check = up_check,
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = up_shape,
        .infer_type = mxc__nn_type_float,
        .compute = up_forward,
        .gradient = mxc__grad_use_none,
    },
    {
        .name = "_backward_UpSampling",
        .doc = "Gradient of UpSampling: sums scale x scale blocks.",
        MXC__PARAMS_OF(up_param, k_params),
        .param_check = up_check,
        .n_inputs = 1,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = up_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = up_backward,
        .hidden = 1,
    },
};

int mxc__nn_register_upsampling(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
