/* UpSampling of data (N, C, H, W) by an integer scale.
 *
 * nearest: each input pixel repeated over a scale x scale block. With
 * num_args > 1 inputs arg0..argK-1, the output has the spatial extents of
 * arg0 times scale and every input i is repeated by its own factor
 * (output extent / its extent, which must be a whole number); the results
 * are concatenated along the channels (multi_input_mode 'concat') or
 * summed ('sum', equal channel counts).
 *
 * bilinear: inputs data and weight (C, 1, k, k); a depthwise transposed
 * convolution of each channel with its k x k kernel, k = 2 * scale -
 * scale % 2, stride scale, padding ceil((scale - 1) / 2), no bias, as
 * MXNet builds it (the weight is a learned parameter, usually initialized
 * to a bilinear kernel). Output (N, C, H*scale, W*scale).
 *
 * Gradients: nearest sums each block of the output gradient into its
 * input pixel; bilinear is the convolution adjoint for data and the
 * correlation of data with the output gradient for the weight. */
#include "core/op/arity.h"
#include "ops/nn/nn.h"
#include "ops/nn/upsampling_params.h"

enum { UP_NEAREST = MXC__UP_NEAREST, UP_BILINEAR = MXC__UP_BILINEAR };
enum { MULTI_CONCAT = MXC__UP_CONCAT, MULTI_SUM = MXC__UP_SUM };
static const char *const k_sample_types[] = {"nearest", "bilinear", NULL};
static const char *const k_multi_modes[] = {"concat", "sum", NULL};

typedef mxc__up_param up_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(up_param, scale, MXC__P_INT, NULL, 1, 1e9,
                     "Upsampling factor for both spatial axes."),
    MXC__PARAM_RANGE(up_param, num_filter, MXC__P_INT, "0", 0, 1e18,
                     "bilinear: channels of data (0: taken from data)."),
    MXC__PARAM_ENUM(up_param, sample_type, "nearest", k_sample_types,
                    "nearest (pixel repetition) or bilinear (a learned "
                    "depthwise transposed convolution)."),
    MXC__PARAM_ENUM(up_param, multi_input_mode, "concat", k_multi_modes,
                    "nearest with several inputs: concatenate or sum them."),
    MXC__PARAM_RANGE(up_param, num_args, MXC__P_INT, "1", 1, 1e6,
                     "nearest: number of inputs; bilinear: 1 or 2 (data "
                     "and weight either way)."),
    MXC__PARAM_RANGE(up_param, workspace, MXC__P_INT, "512", 0, 1e18,
                     "Accepted for compatibility; ignored."),
};

static int up_check(const char *op_name, void *param) {
  const up_param *p = param;
  MXC_RETURN_ERROR_IF(p->sample_type == UP_BILINEAR && p->num_args > 2,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': bilinear takes data and weight; "
                      "num_args = %lld (expected 1 or 2)",
                      op_name, (long long)p->num_args);
  return MXC_OK;
}

static int up_bilinear(const void *param) {
  return ((const up_param *)param)->sample_type == UP_BILINEAR;
}

static int up_num_inputs(const void *param) {
  const up_param *p = param;
  return up_bilinear(p) ? 2 : (int)p->num_args;
}

/* MXNet's names: arg0.. for several nearest inputs. */
static const char *up_input_name(const void *param, int i) {
  const up_param *p = param;
  if (up_bilinear(p)) return i == 0 ? "data" : "weight";
  return p->num_args == 1 ? "data" : mxc__op_arg_name(i);
}

static int up_bwd_num_inputs(const void *param) {
  return up_num_inputs(param) + 1;
}

static const char *up_bwd_input_name(const void *param, int i) {
  return i == 0 ? "ograd" : up_input_name(param, i - 1);
}

/* Kernel side and padding of bilinear upsampling by s. */
static int64_t bil_kernel(int64_t s) { return 2 * s - s % 2; }
static int64_t bil_pad(int64_t s) { return s / 2; } /* ceil((s - 1) / 2) */

static int need_4d(const mxc__op *op, const mxc__shape *s, int i) {
  char b[160];
  MXC_RETURN_ERROR_IF(s->ndim != 4, MXC_ERR_SHAPE,
                      "operator '%s': input %d must be 4-D (N, C, H, W); got "
                      "shape %s",
                      op->name, i, mxc__shape_str(s, b, sizeof b));
  return MXC_OK;
}

static int bil_shape(const mxc__op *op, const up_param *p, mxc__shape *in,
                     mxc__shape *o) {
  int64_t c = p->num_filter > 0 ? p->num_filter : in[0].dims[1];
  char b[160];
  MXC_RETURN_ERROR_IF(c != in[0].dims[1], MXC_ERR_SHAPE,
                      "operator '%s': num_filter = %lld but data %s has %lld "
                      "channels",
                      op->name, (long long)p->num_filter,
                      mxc__shape_str(&in[0], b, sizeof b),
                      (long long)in[0].dims[1]);
  int64_t k = bil_kernel(p->scale);
  mxc__shape w = {4, {c, 1, k, k}};
  return mxc__nn_assign_shape(op->name, &in[1], &w, "input 1 ('weight')",
                              "(C, 1, k, k) with k = 2 * scale - scale % 2");
}

/* Nearest: every input's extents divide the output's; channels add up
 * (concat) or agree (sum). */
static int near_shape(const mxc__op *op, const up_param *p, mxc__shape *in,
                      int n_in, mxc__shape *o, int *known) {
  char b[160];
  int64_t ch = 0;
  *known = 0;
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) return MXC_OK; /* the graph pass calls again */
    MXC_FORWARD_IF_ERROR(need_4d(op, &in[i], i));
    MXC_RETURN_ERROR_IF(
        in[i].dims[0] != in[0].dims[0] || in[i].dims[2] < 1 ||
            in[i].dims[3] < 1 || o->dims[2] % in[i].dims[2] != 0 ||
            o->dims[3] % in[i].dims[3] != 0 ||
            (p->multi_input_mode == MULTI_SUM && in[i].dims[1] != in[0].dims[1]),
        MXC_ERR_SHAPE,
        "operator '%s': input %d of shape %s does not fit an output of %lld "
        "x %lld (needs the batch of input 0, extents dividing the output's"
        "%s)",
        op->name, i, mxc__shape_str(&in[i], b, sizeof b),
        (long long)o->dims[2], (long long)o->dims[3],
        p->multi_input_mode == MULTI_SUM ? ", input 0's channels" : "");
    MXC_RETURN_ERROR_IF(!mxc__add_i64(ch, in[i].dims[1], &ch), MXC_ERR_SHAPE,
                        "operator '%s': channel count overflows", op->name);
  }
  if (p->multi_input_mode == MULTI_CONCAT) o->dims[1] = ch;
  *known = 1;
  return MXC_OK;
}

static int up_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const up_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  MXC_FORWARD_IF_ERROR(need_4d(op, &in[0], 0));
  char b[160];
  mxc__shape o = in[0];
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(in[0].dims[2], p->scale, &o.dims[2]) ||
                          !mxc__mul_i64(in[0].dims[3], p->scale, &o.dims[3]),
                      MXC_ERR_SHAPE,
                      "operator '%s': data of shape %s upsampled by %lld "
                      "overflows",
                      op->name, mxc__shape_str(&in[0], b, sizeof b),
                      (long long)p->scale);
  if (up_bilinear(p)) {
    MXC_FORWARD_IF_ERROR(bil_shape(op, p, in, &o));
  } else {
    int known = 0;
    MXC_FORWARD_IF_ERROR(near_shape(op, p, in, n_in, &o, &known));
    if (!known) return MXC_OK;
  }
  out[0] = o;
  return MXC_OK;
}

/* _backward_UpSampling: (ograd, inputs...) -> one gradient per input. */
static int up_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  for (int i = 0; i < n_out; ++i) out[i] = in[1 + i];
  return MXC_OK;
}

/* ---- nearest ---- */

/* Input i's part of the output: its channels start at channel c0 of the
 * output (concat) or 0 (sum), and each of its pixels covers an f x f
 * block. Forward: y[block] (+)= x; backward: dx = sum of g over the block. */
static void near_part(const mxc__blob *x, const mxc__blob *y, int64_t c0,
                      int bwd, mxc__req req) {
  const int64_t *d = x->shape.dims, *e = y->shape.dims;
  int64_t h = d[2], w = d[3], fh = e[2] / d[2], fw = e[3] / d[3];
  int64_t oc = e[1], oh = e[2], ow = e[3];
  MXC__FLOAT_TYPED(x->dtype, {
    T *xs = x->ptr, *ys = y->ptr;
    for (int64_t n = 0; n < d[0]; ++n) {
      for (int64_t c = 0; c < d[1]; ++c) {
        T *xp = xs + (n * d[1] + c) * h * w;
        T *yp = ys + (n * oc + c0 + c) * oh * ow;
        for (int64_t r = 0; r < oh; ++r) {
          for (int64_t q = 0; q < ow; ++q) {
            T *src = &xp[(r / fh) * w + q / fw];
            if (bwd) {
              *src += yp[r * ow + q];
            } else {
              MXC__ASSIGN(req, yp[r * ow + q], *src);
            }
          }
        }
      }
    }
  });
}

/* Clears b unless accumulating. */
static void clear_unless_add(const mxc__blob *b, mxc__req req) {
  if (req == MXC__REQ_ADD || req == MXC__REQ_NULL) return;
  int64_t n = mxc__shape_size(&b->shape);
  for (int64_t i = 0; i < n; ++i) mxc__blob_set(b, i, 0);
}

static int near_forward(const up_param *p, const mxc__blob *in, int n_in,
                        const mxc__blob *out, mxc__req req) {
  int64_t c0 = 0;
  for (int i = 0; i < n_in; ++i) {
    /* sum: inputs after the first add to it */
    mxc__req r = p->multi_input_mode == MULTI_SUM && i > 0 ? MXC__REQ_ADD : req;
    near_part(&in[i], out, c0, 0, r);
    if (p->multi_input_mode == MULTI_CONCAT) c0 += in[i].shape.dims[1];
  }
  return MXC_OK;
}

static int near_backward(const up_param *p, const mxc__blob *in, int n_in,
                         const mxc__blob *out, const mxc__req *req) {
  int64_t c0 = 0;
  for (int i = 0; i + 1 < n_in; ++i) {
    if (req[i] != MXC__REQ_NULL) {
      clear_unless_add(&out[i], req[i]);
      near_part(&out[i], &in[0], c0, 1, req[i]);
    }
    if (p->multi_input_mode == MULTI_CONCAT) c0 += out[i].shape.dims[1];
  }
  return MXC_OK;
}

/* ---- bilinear: depthwise transposed convolution ---- */

/* mode 0: y += x (*) w; 1: dx += g (*)^T w; 2: dw += x . g. Output pixel
 * (oy, ox) gets input pixel (iy, ix) through tap (oy - iy*s + p,
 * ox - ix*s + p) when that lies inside the kernel. */
static void bil_run(const up_param *p, const mxc__blob *x, const mxc__blob *w,
                    const mxc__blob *y, int mode) {
  const int64_t *d = x->shape.dims;
  int64_t s = p->scale, k = bil_kernel(s), pad = bil_pad(s);
  int64_t h = d[2], wd = d[3], oh = h * s, ow = wd * s;
  MXC__FLOAT_TYPED(x->dtype, {
    T *xs = x->ptr, *ws = w->ptr, *ys = y->ptr;
    for (int64_t n = 0; n < d[0]; ++n) {
      for (int64_t c = 0; c < d[1]; ++c) {
        T *xp = xs + (n * d[1] + c) * h * wd, *wp = ws + c * k * k;
        T *yp = ys + (n * d[1] + c) * oh * ow;
        for (int64_t iy = 0; iy < h; ++iy) {
          for (int64_t ix = 0; ix < wd; ++ix) {
            /* only the taps that land inside the output */
            int64_t ky0 = pad - iy * s > 0 ? pad - iy * s : 0;
            int64_t ky1 = oh + pad - iy * s < k ? oh + pad - iy * s : k;
            int64_t kx0 = pad - ix * s > 0 ? pad - ix * s : 0;
            int64_t kx1 = ow + pad - ix * s < k ? ow + pad - ix * s : k;
            for (int64_t ky = ky0; ky < ky1; ++ky) {
              int64_t oy = iy * s - pad + ky;
              for (int64_t kx = kx0; kx < kx1; ++kx) {
                int64_t ox = ix * s - pad + kx;
                T *xv = &xp[iy * wd + ix], *wv = &wp[ky * k + kx];
                T *yv = &yp[oy * ow + ox];
                if (mode == 0) *yv += *xv * *wv;
                if (mode == 1) *xv += *yv * *wv;
                if (mode == 2) *wv += *xv * *yv;
              }
            }
          }
        }
      }
    }
  });
}

/* Forward into zeroed workspace when accumulating, so that ADD adds the
 * finished result. */
static int bil_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const up_param *p, const mxc__blob *in,
                       const mxc__blob *out, mxc__req req) {
  mxc__blob y = out[0];
  if (req == MXC__REQ_ADD) {
    size_t nb = (size_t)mxc__shape_size(&y.shape) * mxc__dtype_size(y.dtype);
    MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, nb, &y.ptr));
  }
  clear_unless_add(&y, MXC__REQ_WRITE);
  bil_run(p, &in[0], &in[1], &y, 0);
  if (req != MXC__REQ_ADD) return MXC_OK;
  int64_t n = mxc__shape_size(&y.shape);
  for (int64_t i = 0; i < n; ++i)
    mxc__blob_set(&out[0], i, mxc__blob_get(&out[0], i) + mxc__blob_get(&y, i));
  return MXC_OK;
}

/* (ograd, data, weight) -> (ddata, dweight). */
static int bil_backward(const up_param *p, const mxc__blob *in,
                        const mxc__blob *out, const mxc__req *req) {
  if (req[0] != MXC__REQ_NULL) {
    clear_unless_add(&out[0], req[0]);
    bil_run(p, &out[0], &in[2], &in[0], 1);
  }
  if (req[1] != MXC__REQ_NULL) {
    clear_unless_add(&out[1], req[1]);
    bil_run(p, &in[1], &out[1], &in[0], 2);
  }
  return MXC_OK;
}

static int up_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const up_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (up_bilinear(p)) return bil_forward(op, ctx, p, in, out, req[0]);
  return near_forward(p, in, n_in, &out[0], req[0]);
}

static int up_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const up_param *p = param;
  if (up_bilinear(p)) return bil_backward(p, in, out, req);
  return near_backward(p, in, n_in, out, req);
}

static const char *const k_in[] = {"data", "weight", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", "weight", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "UpSampling",
        .doc = "Upsampling of data (N, C, H, W) to (N, C, H*scale, "
               "W*scale): nearest-neighbour (several inputs concatenated or "
               "summed) or bilinear (a learned depthwise deconvolution).",
        MXC__PARAMS_OF(up_param, k_params),
        .param_check = up_check,
        .num_inputs = up_num_inputs,
        .input_names = k_in,
        .input_name = up_input_name,
        .n_outputs = 1,
        .infer_shape = up_shape,
        .infer_type = mxc__nn_type_float,
        .compute = up_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 0xffffffffu,
        .resources = MXC__RES_TEMP,
    },
    {
        .name = "_backward_UpSampling",
        .doc = "Gradient of UpSampling: (ograd, inputs...) -> a gradient per "
               "input.",
        MXC__PARAMS_OF(up_param, k_params),
        .param_check = up_check,
        .num_inputs = up_bwd_num_inputs,
        .input_names = k_bwd_in,
        .input_name = up_bwd_input_name,
        .num_outputs = up_num_inputs,
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
