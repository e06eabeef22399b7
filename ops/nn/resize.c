/* Spatial resizing of data (N, C, H, W):
 *
 * _contrib_BilinearResize2D: bilinear interpolation to (OH, OW), chosen
 * by mode: 'size' (height/width, or the input extent times
 * scale_height/scale_width when given), 'odd_scale' (odd extents E go to
 * (E - 1) * scale + 1, even ones to E * scale), 'like' (the extents of a
 * second input), 'to_even_down/up', 'to_odd_down/up' (the nearest even or
 * odd extent). Output pixel o samples input position
 *   align_corners: o * (I - 1) / (O - 1)          (0 when O == 1)
 *   otherwise:     max((o + 0.5) * I / O - 0.5, 0)
 * from its two neighbours along each axis (the second clamped to I - 1).
 *
 * _contrib_AdaptiveAvgPooling2D: the mean of bin [floor(o * I / O),
 * ceil((o + 1) * I / O)) along each axis, for output_size (OH, OW) (one
 * entry: square; none: 1 x 1).
 *
 * Gradients scatter the output gradient with the same weights. */
#include <math.h>

#include "ops/nn/nn.h"
#include "ops/nn/resize_params.h"
#include "ops/nn/resize_tap.h"

enum { RS_SIZE, RS_ODD_SCALE, RS_LIKE, RS_EVEN_DOWN, RS_EVEN_UP, RS_ODD_DOWN,
       RS_ODD_UP };
static const char *const k_modes[] = {"size",       "odd_scale",   "like",
                                      "to_even_down", "to_even_up",
                                      "to_odd_down", "to_odd_up",   NULL};

typedef mxc__rs_param rs_param;

static const mxc__param_def k_rs_params[] = {
    MXC__PARAM_RANGE(rs_param, height, MXC__P_INT, "1", 1, 1e9,
                     "Output height (mode 'size' without scale_height)."),
    MXC__PARAM_RANGE(rs_param, width, MXC__P_INT, "1", 1, 1e9,
                     "Output width (mode 'size' without scale_width)."),
    MXC__PARAM(rs_param, scale_height, MXC__P_OPT_FLOAT, "None",
               "Height scale ('size', 'odd_scale')."),
    MXC__PARAM(rs_param, scale_width, MXC__P_OPT_FLOAT, "None",
               "Width scale ('size', 'odd_scale')."),
    MXC__PARAM_ENUM(rs_param, mode, "size", k_modes,
                    "How the output extents are chosen (see the doc)."),
    MXC__PARAM(rs_param, align_corners, MXC__P_BOOL, "true",
               "Map the corner pixels of input and output onto each other."),
};

static int rs_check(const char *op_name, void *param) {
  const rs_param *p = param;
  double s[2] = {p->scale_height, p->scale_width};
  for (int i = 0; i < 2; ++i) {
    MXC_RETURN_ERROR_IF(!isnan(s[i]) && !(s[i] > 0 && s[i] < 1e9),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter '%s' = %g must be positive "
                        "(and below 1e9) or None",
                        op_name, i ? "scale_width" : "scale_height", s[i]);
  }
  MXC_RETURN_ERROR_IF(p->mode == RS_ODD_SCALE && (isnan(s[0]) || isnan(s[1])),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': mode 'odd_scale' needs scale_height and "
                      "scale_width",
                      op_name);
  return MXC_OK;
}

static int rs_num_inputs(const void *param) {
  return ((const rs_param *)param)->mode == RS_LIKE ? 2 : 1;
}

static const char *rs_input_name(const void *param, int i) {
  (void)param;
  return i == 0 ? "data" : "like";
}

static int rs_bwd_num_inputs(const void *param) {
  return rs_num_inputs(param) + 1;
}

static const char *rs_bwd_input_name(const void *param, int i) {
  static const char *const names[] = {"ograd", "data", "like"};
  (void)param;
  return names[i];
}

/* A scaled extent, saturated far above any valid one (the caller rejects
 * it) so that the conversion from double is defined. */
static int64_t scaled(double v) { return v < 1e10 ? (int64_t)v : (int64_t)1e10; }

/* Output extent along one axis of extent e (scale s, NaN: None; size n). */
static int64_t rs_extent(const rs_param *p, int64_t e, double s, int64_t n,
                         int64_t like) {
  switch (p->mode) {
    case RS_SIZE:
      return isnan(s) ? n : scaled(s * (double)e);
    case RS_ODD_SCALE:
      return e % 2 == 0 ? scaled((double)e * s)
                        : scaled((double)(e - 1) * s) + 1;
    case RS_LIKE:
      return like;
    case RS_EVEN_DOWN:
      return e % 2 == 0 ? e : e - 1;
    case RS_EVEN_UP:
      return e % 2 == 0 ? e : e + 1;
    case RS_ODD_DOWN:
      return e % 2 == 1 ? e : e - 1;
    default:
      return e % 2 == 1 ? e : e + 1;
  }
}

/* 4-D with a non-empty plane: every output pixel reads input pixels. */
static int need_4d(const mxc__op *op, const mxc__shape *s, const char *what) {
  char b[160];
  MXC_RETURN_ERROR_IF(s->ndim != 4 || s->dims[2] < 1 || s->dims[3] < 1,
                      MXC_ERR_SHAPE,
                      "operator '%s': %s must be 4-D (N, C, H, W) with H, W "
                      ">= 1; got shape %s",
                      op->name, what, mxc__shape_str(s, b, sizeof b));
  return MXC_OK;
}

static int rs_out_shape(const mxc__op *op, const rs_param *p,
                        const mxc__shape *x, const mxc__shape *like,
                        mxc__shape *o) {
  MXC_FORWARD_IF_ERROR(need_4d(op, x, "data"));
  if (p->mode == RS_LIKE) MXC_FORWARD_IF_ERROR(need_4d(op, like, "like"));
  *o = *x;
  o->dims[2] = rs_extent(p, x->dims[2], p->scale_height, p->height,
                         like ? like->dims[2] : 0);
  o->dims[3] = rs_extent(p, x->dims[3], p->scale_width, p->width,
                         like ? like->dims[3] : 0);
  char b[160];
  MXC_RETURN_ERROR_IF(o->dims[2] < 1 || o->dims[3] < 1 ||
                          o->dims[2] > (int64_t)1e9 || o->dims[3] > (int64_t)1e9,
                      MXC_ERR_SHAPE,
                      "operator '%s': resizing data %s gives an output "
                      "extent of %lld x %lld; expected 1..1e9",
                      op->name, mxc__shape_str(x, b, sizeof b),
                      (long long)o->dims[2], (long long)o->dims[3]);
  return MXC_OK;
}

static int rs_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || (n_in > 1 && in[1].ndim < 0)) return MXC_OK;
  return rs_out_shape(op, param, &in[0], n_in > 1 ? &in[1] : NULL, &out[0]);
}

/* (ograd, data[, like]) -> (ddata[, dlike]). */
static int rs_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  for (int i = 0; i < n_out; ++i) out[i] = in[1 + i];
  return MXC_OK;
}

/* Forward (bwd 0): y[o] = sum w x[i]; backward: dx[i] += w g[o]. */
static void rs_planes(const rs_param *p, const mxc__blob *x_or_dx,
                      const mxc__blob *y_or_g, int bwd, mxc__req req) {
  const int64_t *d = x_or_dx->shape.dims, *e = y_or_g->shape.dims;
  int64_t planes = d[0] * d[1], ih = d[2], iw = d[3], oh = e[2], ow = e[3];
  MXC__FLOAT_TYPED(x_or_dx->dtype, {
    for (int64_t pl = 0; pl < planes; ++pl) {
      T *a = (T *)x_or_dx->ptr + pl * ih * iw;
      T *b = (T *)y_or_g->ptr + pl * oh * ow;
      for (int64_t r = 0; r < oh; ++r) {
        mxc__rs_tap th = mxc__rs_tap_of(r, ih, oh, p->align_corners);
        for (int64_t c = 0; c < ow; ++c) {
          mxc__rs_tap tw = mxc__rs_tap_of(c, iw, ow, p->align_corners);
          int64_t i00 = th.i0 * iw + tw.i0, i01 = th.i0 * iw + tw.i1;
          int64_t i10 = th.i1 * iw + tw.i0, i11 = th.i1 * iw + tw.i1;
          double w00 = (1 - th.l) * (1 - tw.l), w01 = (1 - th.l) * tw.l;
          double w10 = th.l * (1 - tw.l), w11 = th.l * tw.l;
          if (bwd) {
            double g = b[r * ow + c];
            a[i00] += (T)(w00 * g);
            a[i01] += (T)(w01 * g);
            a[i10] += (T)(w10 * g);
            a[i11] += (T)(w11 * g);
          } else {
            double v = w00 * a[i00] + w01 * a[i01] + w10 * a[i10] + w11 * a[i11];
            MXC__ASSIGN(req, b[r * ow + c], (T)v);
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

static int rs_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  rs_planes(param, &in[0], &out[0], 0, req[0]);
  return MXC_OK;
}

static int rs_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (n_out > 1) clear_unless_add(&out[1], req[1]); /* like: no gradient */
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  clear_unless_add(&out[0], req[0]);
  rs_planes(param, &out[0], &in[0], 1, req[0]);
  return MXC_OK;
}

/* ---- adaptive average pooling ---- */

typedef mxc__ap_param ap_param;

static const mxc__param_def k_ap_params[] = {
    MXC__PARAM(ap_param, output_size, MXC__P_TUPLE, "()",
               "Output (height, width); one entry for both; empty: 1 x 1."),
};

static int ap_check(const char *op_name, void *param) {
  ap_param *p = param;
  int n = p->output_size.ndim < 0 ? 0 : p->output_size.ndim;
  MXC_RETURN_ERROR_IF(n > 2, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': output_size has %d entries; expected "
                      "at most 2 (height, width)",
                      op_name, n);
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(p->output_size.d[i] < 1 || p->output_size.d[i] > 1e9,
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': output_size entries must be 1..1e9 "
                        "(got %lld)",
                        op_name, (long long)p->output_size.d[i]);
  }
  return MXC_OK;
}

static void ap_extents(const ap_param *p, int64_t *oh, int64_t *ow) {
  const mxc__tuple *t = &p->output_size;
  *oh = t->ndim > 0 ? t->d[0] : 1;
  *ow = t->ndim > 1 ? t->d[1] : *oh;
}

static int ap_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  MXC_FORWARD_IF_ERROR(need_4d(op, &in[0], "data"));
  out[0] = in[0];
  ap_extents(param, &out[0].dims[2], &out[0].dims[3]);
  return MXC_OK;
}

static int ap_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  out[0] = in[1];
  return MXC_OK;
}

/* Bin [*lo, *hi) of output position o (extent n) over input extent e. */
static void bin_of(int64_t o, int64_t e, int64_t n, int64_t *lo, int64_t *hi) {
  *lo = (int64_t)floor((double)o * (double)e / (double)n);
  *hi = (int64_t)ceil((double)(o + 1) * (double)e / (double)n);
}

/* Forward (bwd 0): y = bin mean of x; backward: dx += g / bin size. */
static void ap_planes(const mxc__blob *x_or_dx, const mxc__blob *y_or_g,
                      int bwd, mxc__req req) {
  const int64_t *d = x_or_dx->shape.dims, *e = y_or_g->shape.dims;
  int64_t planes = d[0] * d[1], ih = d[2], iw = d[3], oh = e[2], ow = e[3];
  MXC__FLOAT_TYPED(x_or_dx->dtype, {
    for (int64_t pl = 0; pl < planes; ++pl) {
      T *a = (T *)x_or_dx->ptr + pl * ih * iw;
      T *b = (T *)y_or_g->ptr + pl * oh * ow;
      for (int64_t r = 0; r < oh; ++r) {
        int64_t r0, r1;
        bin_of(r, ih, oh, &r0, &r1);
        for (int64_t c = 0; c < ow; ++c) {
          int64_t c0, c1;
          bin_of(c, iw, ow, &c0, &c1);
          double area = (double)((r1 - r0) * (c1 - c0)), s = 0;
          for (int64_t i = r0; i < r1; ++i) {
            for (int64_t j = c0; j < c1; ++j) {
              if (bwd) {
                a[i * iw + j] += (T)(b[r * ow + c] / area);
              } else {
                s += a[i * iw + j];
              }
            }
          }
          if (!bwd) MXC__ASSIGN(req, b[r * ow + c], (T)(s / area));
        }
      }
    }
  });
}

static int ap_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  ap_planes(&in[0], &out[0], 0, req[0]);
  return MXC_OK;
}

static int ap_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  clear_unless_add(&out[0], req[0]);
  ap_planes(&out[0], &in[0], 1, req[0]);
  return MXC_OK;
}

static const char *const k_rs_in[] = {"data", "like", NULL};
static const char *const k_rs_bwd_in[] = {"ograd", "data", "like", NULL};
static const char *const k_ap_in[] = {"data", NULL};
static const char *const k_ap_bwd_in[] = {"ograd", "data", NULL};
static const char *const k_rs_alias[] = {"BilinearResize2D", NULL};
static const char *const k_ap_alias[] = {"AdaptiveAvgPooling2D", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_contrib_BilinearResize2D",
        .aliases = k_rs_alias,
        .doc = "Bilinear resize of data (N, C, H, W) to (N, C, OH, OW), the "
               "extents chosen by mode (size, odd_scale, like, to_even_*, "
               "to_odd_*).",
        MXC__PARAMS_OF(rs_param, k_rs_params),
        .param_check = rs_check,
        .num_inputs = rs_num_inputs,
        .input_names = k_rs_in,
        .input_name = rs_input_name,
        .n_outputs = 1,
        .infer_shape = rs_shape,
        .infer_type = mxc__nn_type_float,
        .compute = rs_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 3u,
    },
    {
        MXC__BACKWARD("_contrib_BilinearResize2D"),
        MXC__PARAMS_OF(rs_param, k_rs_params),
        .param_check = rs_check,
        .num_inputs = rs_bwd_num_inputs,
        .input_names = k_rs_bwd_in,
        .input_name = rs_bwd_input_name,
        .num_outputs = rs_num_inputs,
        .infer_shape = rs_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = rs_backward,
    },
    {
        .name = "_contrib_AdaptiveAvgPooling2D",
        .aliases = k_ap_alias,
        .doc = "Average pooling of data (N, C, H, W) over output_size (OH, "
               "OW) evenly spread bins -> (N, C, OH, OW).",
        MXC__PARAMS_OF(ap_param, k_ap_params),
        .param_check = ap_check,
        .n_inputs = 1,
        .input_names = k_ap_in,
        .n_outputs = 1,
        .infer_shape = ap_shape,
        .infer_type = mxc__nn_type_float,
        .compute = ap_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 1u,
    },
    {
        MXC__BACKWARD("_contrib_AdaptiveAvgPooling2D"),
        MXC__PARAMS_OF(ap_param, k_ap_params),
        .param_check = ap_check,
        .n_inputs = 2,
        .input_names = k_ap_bwd_in,
        .n_outputs = 1,
        .infer_shape = ap_bwd_shape,
        .infer_type = mxc__nn_type_float,
        .compute = ap_backward,
    },
};

int mxc__nn_register_resize(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
