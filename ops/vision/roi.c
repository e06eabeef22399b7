/* Region-of-interest pooling: ROIPooling (max over integer bins, Fast
 * R-CNN) and _contrib_ROIAlign (average of bilinear samples, Mask R-CNN),
 * with MXNet 1.9's parameters and rules.
 *
 * ROIPooling: rois (R, 5) rows [batch, x1, y1, x2, y2] in image
 * coordinates; each is scaled by spatial_scale and rounded (half away from
 * zero), its extent is max(end - start + 1, 1) pixels, and bin (ph, pw)
 * covers rows floor(ph * h / PH) .. ceil((ph + 1) * h / PH) of it, clipped
 * to the feature map. An empty bin gives 0. The hidden second output keeps
 * the arg-max (index y * W + x in the channel plane, -1 for empty bins) for
 * the gradient, which routes each output gradient to that element.
 *
 * ROIAlign: rois (R, 5) as above or (R, 4) without the batch column (batch
 * 0). Coordinates are scaled, not rounded (minus 0.5 when `aligned`); a
 * bin averages sample_ratio^2 bilinear samples (or ceil(extent / bins) per
 * axis when sample_ratio <= 0). Samples more than one pixel outside the
 * map count as 0; others clamp to the border. ROIs with a negative batch
 * index give zeros. position_sensitive (R-FCN) takes bin (ph, pw) of
 * output channel c from input channel (c * PH + ph) * PW + pw. The
 * gradient spreads each output gradient back with the same weights. */
#include <math.h>

#include "ops/vision/vision.h"

/* Samples per bin and axis above this are refused: a corrupt ROI spanning
 * 1e12 pixels (or a huge sample_ratio) would otherwise loop for hours.
 * Real models sample a few points per bin (sample_ratio 2, or a ROI
 * spanning the feature map over 7 bins: ~150). */
#define ROI_MAX_GRID 1024
/* Scaled coordinates beyond this are refused before any integer
 * conversion. */
#define ROI_MAX_COORD 1e15

typedef struct roi_param {
  mxc__tuple pooled_size;
  double spatial_scale;
  int64_t sample_ratio;
  int position_sensitive, aligned;
} roi_param;

static const mxc__param_def k_pool_params[] = {
    MXC__PARAM(roi_param, pooled_size, MXC__P_TUPLE, NULL,
               "Output bins per ROI, (height, width)."),
    MXC__PARAM_RANGE(roi_param, spatial_scale, MXC__P_FLOAT, NULL, 0, 1e30,
                     "Ratio of the feature map to the image the ROIs are "
                     "given in (1/16 for a stride-16 map)."),
};

static const mxc__param_def k_align_params[] = {
    MXC__PARAM(roi_param, pooled_size, MXC__P_TUPLE, NULL,
               "Output bins per ROI, (height, width)."),
    MXC__PARAM_RANGE(roi_param, spatial_scale, MXC__P_FLOAT, NULL, 0, 1e30,
                     "Ratio of the feature map to the image the ROIs are "
                     "given in."),
    MXC__PARAM_RANGE(roi_param, sample_ratio, MXC__P_INT, "-1", -1e9,
                     ROI_MAX_GRID,
                     "Samples per bin and axis (at most 1024); <= 0: "
                     "ceil(ROI extent / bins)."),
    MXC__PARAM(roi_param, position_sensitive, MXC__P_BOOL, "false",
               "R-FCN position-sensitive pooling: bin (ph, pw) reads its "
               "own group of channels."),
    MXC__PARAM(roi_param, aligned, MXC__P_BOOL, "false",
               "Shift coordinates by -0.5 pixel (pixel centres at "
               "half-integers); ROIs must then have positive extent."),
};

static int roi_check(const char *op_name, void *param) {
  const roi_param *p = param;
  const mxc__tuple *t = &p->pooled_size;
  MXC_RETURN_ERROR_IF(t->ndim != 2 || t->d[0] < 1 || t->d[1] < 1 ||
                          t->d[0] > (1 << 20) || t->d[1] > (1 << 20),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': pooled_size must be two positive "
                      "extents (height, width), each at most 2^20",
                      op_name);
  MXC_RETURN_ERROR_IF(!(p->spatial_scale > 0), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': spatial_scale must be positive; got %g",
                      op_name, p->spatial_scale);
  return MXC_OK;
}

/* Channels of the output: C, or C / (PH * PW) when position-sensitive. */
static int roi_out_channels(const char *name, const roi_param *p, int64_t c,
                            int64_t *out) {
  *out = c;
  if (!p->position_sensitive) return MXC_OK;
  int64_t bins = p->pooled_size.d[0] * p->pooled_size.d[1];
  MXC_RETURN_ERROR_IF(c % bins != 0, MXC_ERR_SHAPE,
                      "operator '%s': position_sensitive needs the data's "
                      "channels (%lld) divisible by pooled height x width "
                      "(%lld)",
                      name, (long long)c, (long long)bins);
  *out = c / bins;
  return MXC_OK;
}

/* Forward shape inference for both operators: (data, rois) -> outputs
 * (R, C', PH, PW), all n_out of them (ROIPooling's hidden arg-max too). */
static int roi_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const roi_param *p = param;
  int kd, kr;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 4, "data",
                                             "4-D (N, C, H, W)", &kd));
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[1], 2, "rois",
                                             "2-D (num_rois, 5)", &kr));
  if (!kd || !kr) return MXC_OK;
  int align = op->params == k_align_params;
  int64_t cols = in[1].dims[1];
  char b[160];
  MXC_RETURN_ERROR_IF(cols != 5 && !(align && cols == 4), MXC_ERR_SHAPE,
                      "operator '%s': rois must have 5 columns [batch, x1, "
                      "y1, x2, y2]%s; got shape %s",
                      op->name, align ? " or 4 [x1, y1, x2, y2]" : "",
                      mxc__shape_str(&in[1], b, sizeof b));
  int64_t d[4] = {in[1].dims[0], 0, p->pooled_size.d[0], p->pooled_size.d[1]};
  MXC_FORWARD_IF_ERROR(roi_out_channels(op->name, p, in[0].dims[1], &d[1]));
  mxc__shape o = mxc__vision_shape(4, d);
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__vision_assign(op->name, &out[i], &o, "output"));
  }
  return MXC_OK;
}

/* Backward operators take (ograd, data, rois[, argmax]) and give ddata
 * shaped like data. */
static int roi_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  if (in[1].ndim < 0) return MXC_OK;
  return mxc__vision_assign(op->name, &out[0], &in[1], "data gradient");
}

/* Reads ROI r's batch index: MXC_OK with *b (-1 for a negative index,
 * which ROIAlign maps to zeros), or an error for NaN or b >= batch. */
static int roi_batch(const char *name, double v, int64_t r, int64_t batch,
                     int64_t *b) {
  MXC_RETURN_ERROR_IF(!(v < (double)batch), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': ROI %lld has batch index %g; the data "
                      "holds %lld images",
                      name, (long long)r, v, (long long)batch);
  *b = v < 0 ? -1 : (int64_t)v;
  return MXC_OK;
}

/* Checks that the scaled corners of ROI r are finite and in range. */
static int roi_coords(const char *name, const double *c, int64_t r) {
  for (int i = 0; i < 4; ++i) {
    MXC_RETURN_ERROR_IF(!(fabs(c[i]) <= ROI_MAX_COORD),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': ROI %lld has coordinate %g after "
                        "scaling; expected a finite value within 1e15",
                        name, (long long)r, c[i]);
  }
  return MXC_OK;
}

/* ---- ROIPooling ---- */

/* One ROI's geometry in feature-map pixels. */
typedef struct pool_roi {
  int64_t b, x0, y0;
  double bin_h, bin_w;
} pool_roi;

static int pool_roi_of(const char *name, const roi_param *p,
                       const mxc__blob *rois, int64_t batch, int64_t r,
                       pool_roi *g) {
  double v[5], c[4];
  for (int i = 0; i < 5; ++i) v[i] = mxc__blob_get(rois, r * 5 + i);
  for (int i = 0; i < 4; ++i) c[i] = round(v[i + 1] * p->spatial_scale);
  MXC_FORWARD_IF_ERROR(roi_coords(name, c, r));
  MXC_FORWARD_IF_ERROR(roi_batch(name, v[0], r, batch, &g->b));
  MXC_RETURN_ERROR_IF(g->b < 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': ROI %lld has a negative batch index "
                      "%g",
                      name, (long long)r, v[0]);
  double w = fmax(c[2] - c[0] + 1, 1), h = fmax(c[3] - c[1] + 1, 1);
  g->x0 = (int64_t)c[0];
  g->y0 = (int64_t)c[1];
  g->bin_h = h / (double)p->pooled_size.d[0];
  g->bin_w = w / (double)p->pooled_size.d[1];
  return MXC_OK;
}

/* Pixel range [*lo, *hi) of bin i along an axis of `size` pixels. */
static void pool_range(int64_t i, double bin, int64_t start, int64_t size,
                       int64_t *lo, int64_t *hi) {
  int64_t a = (int64_t)floor((double)i * bin) + start;
  int64_t e = (int64_t)ceil((double)(i + 1) * bin) + start;
  *lo = a < 0 ? 0 : (a > size ? size : a);
  *hi = e < 0 ? 0 : (e > size ? size : e);
}

static int pool_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const roi_param *p = param;
  const int64_t *d = in[0].shape.dims;
  int64_t nr = in[1].shape.dims[0], ph_n = p->pooled_size.d[0],
          pw_n = p->pooled_size.d[1], plane = d[2] * d[3];
  for (int64_t r = 0; r < nr; ++r) {
    pool_roi g;
    MXC_FORWARD_IF_ERROR(pool_roi_of(op->name, p, &in[1], d[0], r, &g));
    MXC__FLOAT_TYPED(in[0].dtype, {
      for (int64_t c = 0; c < d[1]; ++c) {
        const T *x = (const T *)in[0].ptr + (g.b * d[1] + c) * plane;
        int64_t o = (r * d[1] + c) * ph_n * pw_n;
        for (int64_t ph = 0; ph < ph_n; ++ph) {
          int64_t h0, h1, w0, w1;
          pool_range(ph, g.bin_h, g.y0, d[2], &h0, &h1);
          for (int64_t pw = 0; pw < pw_n; ++pw, ++o) {
            pool_range(pw, g.bin_w, g.x0, d[3], &w0, &w1);
            /* The first maximum wins; an empty bin gives 0. */
            T best = 0;
            int64_t arg = -1;
            for (int64_t y = h0; y < h1; ++y) {
              for (int64_t xx = w0; xx < w1; ++xx) {
                T v = x[y * d[3] + xx];
                if (arg < 0 || v > best) {
                  best = v;
                  arg = y * d[3] + xx;
                }
              }
            }
            if (req[0] != MXC__REQ_NULL)
              MXC__ASSIGN(req[0], ((T *)out[0].ptr)[o], best);
            if (n_out > 1 && req[1] != MXC__REQ_NULL)
              ((T *)out[1].ptr)[o] = (T)arg;
          }
        }
      }
    });
  }
  return MXC_OK;
}

/* _backward_ROIPooling: (ograd, data, rois, argmax) -> ddata. */
static int pool_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  const roi_param *p = param;
  const int64_t *d = in[1].shape.dims;
  int64_t nr = in[2].shape.dims[0],
          bins = p->pooled_size.d[0] * p->pooled_size.d[1], plane = d[2] * d[3];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__vision_clear(out[0].ptr, mxc__shape_size(&out[0].shape),
                    mxc__dtype_size(out[0].dtype), req[0]);
  for (int64_t r = 0; r < nr; ++r) {
    pool_roi g;
    MXC_FORWARD_IF_ERROR(pool_roi_of(op->name, p, &in[2], d[0], r, &g));
    MXC__FLOAT_TYPED(in[0].dtype, {
      for (int64_t c = 0; c < d[1]; ++c) {
        T *dx = (T *)out[0].ptr + (g.b * d[1] + c) * plane;
        int64_t o = (r * d[1] + c) * bins;
        const T *gy = (const T *)in[0].ptr + o;
        const T *am = (const T *)in[3].ptr + o;
        for (int64_t k = 0; k < bins; ++k) {
          /* Written so that NaN indices are skipped. */
          if (am[k] >= 0 && am[k] < (T)plane) dx[(int64_t)am[k]] += gy[k];
        }
      }
    });
  }
  return MXC_OK;
}

static int pool_grad(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad) {
  mxc__entry ins[4] = {
      ograd[0], fwd->inputs[0], fwd->inputs[1], {(mxc__node *)fwd, 1}};
  static const int grad_of[2] = {0, -1};
  return mxc__grad_node_pick(fwd, "_backward_ROIPooling", ins, 4, grad_of,
                               igrad);
}

/* ---- ROIAlign ---- */

/* One ROI's geometry: start corner, bin size and samples per bin. */
typedef struct align_roi {
  int64_t b;
  double y0, x0, bin_h, bin_w;
  int64_t gh, gw;
} align_roi;

static int align_grid(const char *name, const roi_param *p, double ext,
                      int64_t bins, int64_t r, int64_t *g) {
  double n = p->sample_ratio > 0 ? (double)p->sample_ratio : ceil(ext / bins);
  MXC_RETURN_ERROR_IF(!(n <= ROI_MAX_GRID), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': ROI %lld needs %g samples per bin and "
                      "axis; at most %d are supported",
                      name, (long long)r, n, ROI_MAX_GRID);
  *g = (int64_t)n;
  return MXC_OK;
}

static int align_roi_of(const char *name, const roi_param *p,
                        const mxc__blob *rois, int64_t batch, int64_t r,
                        align_roi *g) {
  int64_t cols = rois->shape.dims[1];
  double v[5] = {0, 0, 0, 0, 0}, c[4];
  for (int64_t i = 0; i < cols; ++i)
    v[5 - cols + i] = mxc__blob_get(rois, r * cols + i);
  double off = p->aligned ? 0.5 : 0;
  for (int i = 0; i < 4; ++i) c[i] = v[i + 1] * p->spatial_scale - off;
  MXC_FORWARD_IF_ERROR(roi_coords(name, c, r));
  MXC_FORWARD_IF_ERROR(roi_batch(name, v[0], r, batch, &g->b));
  double w = c[2] - c[0], h = c[3] - c[1];
  MXC_RETURN_ERROR_IF(p->aligned && !(w > 0 && h > 0), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': with aligned=true ROI %lld must have "
                      "positive width and height; got %g x %g",
                      name, (long long)r, w, h);
  if (!p->aligned) {
    w = fmax(w, 1);
    h = fmax(h, 1);
  }
  g->x0 = c[0];
  g->y0 = c[1];
  g->bin_h = h / (double)p->pooled_size.d[0];
  g->bin_w = w / (double)p->pooled_size.d[1];
  MXC_FORWARD_IF_ERROR(align_grid(name, p, h, p->pooled_size.d[0], r, &g->gh));
  return align_grid(name, p, w, p->pooled_size.d[1], r, &g->gw);
}

/* Bilinear weights of sample (y, x) on an h x w map: the four taps
 * idx[] and weights wt[]; all weights 0 when the sample lies more than a
 * pixel outside. */
static void align_taps(double y, double x, int64_t h, int64_t w, int64_t idx[4],
                       double wt[4]) {
  if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) {
    for (int i = 0; i < 4; ++i) idx[i] = 0, wt[i] = 0;
    return;
  }
  y = y <= 0 ? 0 : y;
  x = x <= 0 ? 0 : x;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y0 = y1 = h - 1, y = (double)y0;
  if (x0 >= w - 1) x0 = x1 = w - 1, x = (double)x0;
  double ly = y - (double)y0, lx = x - (double)x0;
  idx[0] = y0 * w + x0, idx[1] = y0 * w + x1;
  idx[2] = y1 * w + x0, idx[3] = y1 * w + x1;
  wt[0] = (1 - ly) * (1 - lx), wt[1] = (1 - ly) * lx;
  wt[2] = ly * (1 - lx), wt[3] = ly * lx;
}

/* Sample (iy, ix) of bin (ph, pw). */
static void align_sample(const align_roi *g, int64_t ph, int64_t pw, int64_t iy,
                         int64_t ix, int64_t h, int64_t w, int64_t idx[4],
                         double wt[4]) {
  double y = g->y0 + (double)ph * g->bin_h +
             ((double)iy + 0.5) * g->bin_h / (double)g->gh;
  double x = g->x0 + (double)pw * g->bin_w +
             ((double)ix + 0.5) * g->bin_w / (double)g->gw;
  align_taps(y, x, h, w, idx, wt);
}

/* Input channel read by output channel c at bin k (position-sensitive
 * pooling gives every bin its own channel group). */
static int64_t align_channel(const roi_param *p, int64_t c, int64_t k) {
  if (!p->position_sensitive) return c;
  return c * p->pooled_size.d[0] * p->pooled_size.d[1] + k;
}

/* Value (forward) or gradient scatter (backward) of one output bin. */
#define ALIGN_BIN(BODY)                                      \
  for (int64_t iy = 0; iy < g.gh; ++iy) {                    \
    for (int64_t ix = 0; ix < g.gw; ++ix) {                  \
      int64_t idx[4];                                        \
      double wt[4];                                          \
      align_sample(&g, ph, pw, iy, ix, d[2], d[3], idx, wt); \
      for (int t = 0; t < 4; ++t) {                          \
        BODY;                                                \
      }                                                      \
    }                                                        \
  }

static int align_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  const roi_param *p = param;
  const int64_t *d = in[0].shape.dims, *od = out[0].shape.dims;
  int64_t plane = d[2] * d[3], bins = od[2] * od[3];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  for (int64_t r = 0; r < od[0]; ++r) {
    align_roi g;
    MXC_FORWARD_IF_ERROR(align_roi_of(op->name, p, &in[1], d[0], r, &g));
    MXC__FLOAT_TYPED(in[0].dtype, {
      T *y = (T *)out[0].ptr + r * od[1] * bins;
      for (int64_t c = 0; c < od[1]; ++c) {
        for (int64_t ph = 0; ph < od[2]; ++ph) {
          for (int64_t pw = 0; pw < od[3]; ++pw) {
            int64_t k = ph * od[3] + pw;
            double s = 0;
            if (g.b >= 0) {
              const T *x = (const T *)in[0].ptr +
                           (g.b * d[1] + align_channel(p, c, k)) * plane;
              ALIGN_BIN(s += wt[t] * (double)x[idx[t]]);
              s /= (double)(g.gh * g.gw > 0 ? g.gh * g.gw : 1);
            }
            MXC__ASSIGN(req[0], y[c * bins + k], (T)s);
          }
        }
      }
    });
  }
  return MXC_OK;
}

/* _backward__contrib_ROIAlign: (ograd, data, rois) -> ddata. */
static int align_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  const roi_param *p = param;
  const int64_t *d = in[1].shape.dims, *od = in[0].shape.dims;
  int64_t plane = d[2] * d[3], bins = od[2] * od[3];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  mxc__vision_clear(out[0].ptr, mxc__shape_size(&out[0].shape),
                    mxc__dtype_size(out[0].dtype), req[0]);
  for (int64_t r = 0; r < od[0]; ++r) {
    align_roi g;
    MXC_FORWARD_IF_ERROR(align_roi_of(op->name, p, &in[2], d[0], r, &g));
    if (g.b < 0) continue;
    double cnt = (double)(g.gh * g.gw > 0 ? g.gh * g.gw : 1);
    MXC__FLOAT_TYPED(in[0].dtype, {
      const T *gy = (const T *)in[0].ptr + r * od[1] * bins;
      for (int64_t c = 0; c < od[1]; ++c) {
        for (int64_t ph = 0; ph < od[2]; ++ph) {
          for (int64_t pw = 0; pw < od[3]; ++pw) {
            int64_t k = ph * od[3] + pw;
            T *dx =
                (T *)out[0].ptr + (g.b * d[1] + align_channel(p, c, k)) * plane;
            double gk = (double)gy[c * bins + k] / cnt;
            ALIGN_BIN(dx[idx[t]] += (T)(gk * wt[t]));
          }
        }
      }
    });
  }
  return MXC_OK;
}

static int align_grad(const mxc__node *fwd, const mxc__entry *ograd,
                      mxc__entry *igrad) {
  mxc__entry ins[3] = {ograd[0], fwd->inputs[0], fwd->inputs[1]};
  static const int grad_of[2] = {0, -1};
  return mxc__grad_node_pick(fwd, "_backward__contrib_ROIAlign", ins, 3,
                               grad_of, igrad);
}

static const char *const k_in[] = {"data", "rois", NULL};
static const char *const k_out[] = {"output", "maxidx", NULL};
static const char *const k_pool_bwd_in[] = {"ograd", "data", "rois", "maxidx",
                                            NULL};
static const char *const k_align_bwd_in[] = {"ograd", "data", "rois", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "ROIPooling",
        .doc = "Max pooling of data (N, C, H, W) over each region of rois "
               "(R, 5) into pooled_size bins: (R, C, PH, PW).",
        MXC__PARAMS_OF(roi_param, k_pool_params),
        .param_check = roi_check,
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_out,
        .infer_shape = roi_shape,
        .infer_type = mxc__vision_type_float,
        .compute = pool_forward,
        .gradient = pool_grad,
        .backward_uses_inputs = 3,
        .backward_uses_outputs = 2,
    },
    {
        MXC__BACKWARD("ROIPooling"),
        MXC__PARAMS_OF(roi_param, k_pool_params),
        .param_check = roi_check,
        .n_inputs = 4,
        .input_names = k_pool_bwd_in,
        .n_outputs = 1,
        .infer_shape = roi_bwd_shape,
        .infer_type = mxc__vision_type_float,
        .compute = pool_backward,
    },
    {
        .name = "_contrib_ROIAlign",
        .doc = "Average of bilinear samples of data (N, C, H, W) over each "
               "region of rois (R, 5) or (R, 4) into pooled_size bins: (R, "
               "C, PH, PW), or (R, C / (PH * PW), PH, PW) when "
               "position_sensitive.",
        MXC__PARAMS_OF(roi_param, k_align_params),
        .param_check = roi_check,
        .n_inputs = 2,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = roi_shape,
        .infer_type = mxc__vision_type_float,
        .compute = align_forward,
        .gradient = align_grad,
        .backward_uses_inputs = 3,
    },
    {
        MXC__BACKWARD("_contrib_ROIAlign"),
        MXC__PARAMS_OF(roi_param, k_align_params),
        .param_check = roi_check,
        .n_inputs = 3,
        .input_names = k_align_bwd_in,
        .n_outputs = 1,
        .infer_shape = roi_bwd_shape,
        .infer_type = mxc__vision_type_float,
        .compute = align_backward,
    },
};

int mxc__vision_register_roi(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
