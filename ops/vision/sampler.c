/* Spatial transformer networks: GridGenerator, BilinearSampler and
 * SpatialTransformer, with MXNet 1.9's layouts.
 *
 * A sampling grid is (N, 2, H, W): channel 0 holds x, channel 1 y, both
 * normalized so that -1 and 1 are the centres of the first and last
 * pixels. GridGenerator makes one from an affine matrix (data (N, 6), the
 * rows of a 2 x 3 matrix applied to (x, y, 1) of the target grid) or from
 * a pixel flow (data (N, 2, H, W) added to the identity grid, then
 * normalized). BilinearSampler reads data (N, C, H, W) at the grid's
 * points: 4 neighbours weighted bilinearly, neighbours outside the image
 * count as 0. SpatialTransformer is the two in one (affine, bilinear).
 * All three pass gradients to every input (the grid too). */
#include <math.h>
#include <string.h>

#include "ops/vision/sampler_params.h"
#include "ops/vision/vision.h"

enum { GG_AFFINE = MXC__GG_AFFINE, GG_WARP = MXC__GG_WARP };
static const char *const k_transforms[] = {"affine", "warp", NULL};
static const char *const k_affine_only[] = {"affine", NULL};
static const char *const k_bilinear_only[] = {"bilinear", NULL};

typedef mxc__st_param st_param;

static const mxc__param_def k_gg_params[] = {
    MXC__PARAM_ENUM(st_param, transform_type, NULL, k_transforms,
                    "affine: data (N, 6) is a 2 x 3 matrix per sample; warp: "
                    "data (N, 2, H, W) is a flow in pixels."),
    MXC__PARAM(st_param, target_shape, MXC__P_TUPLE, "(0,0)",
               "Output grid (H, W) of the affine transform; ignored by "
               "warp."),
};

static const mxc__param_def k_bs_params[] = {
    MXC__PARAM(st_param, cudnn_off, MXC__P_BOOL, "false",
               "Accepted for compatibility; no effect on CPU."),
};

static const mxc__param_def k_st_params[] = {
    MXC__PARAM(st_param, target_shape, MXC__P_TUPLE, "(0,0)", "Output (H, W)."),
    MXC__PARAM_ENUM(st_param, transform_type, NULL, k_affine_only,
                    "Only affine."),
    MXC__PARAM_ENUM(st_param, sampler_type, NULL, k_bilinear_only,
                    "Only bilinear."),
    MXC__PARAM(st_param, cudnn_off, MXC__P_BOOL, "false",
               "Accepted for compatibility; no effect on CPU."),
};

/* target_shape must be two positive extents where it is used. */
static int target_check(const char *op_name, const mxc__tuple *t) {
  MXC_RETURN_ERROR_IF(t->ndim != 2 || t->d[0] < 1 || t->d[1] < 1 ||
                          t->d[0] > (1 << 24) || t->d[1] > (1 << 24),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': target_shape must be two positive "
                      "extents (height, width) up to 2^24 for an affine "
                      "transform",
                      op_name);
  return MXC_OK;
}

static int gg_check(const char *op_name, void *param) {
  const st_param *p = param;
  if (p->transform_type == GG_WARP) return MXC_OK;
  return target_check(op_name, &p->target_shape);
}

static int st_check(const char *op_name, void *param) {
  const st_param *p = param;
  return target_check(op_name, &p->target_shape);
}

/* ---- shapes ---- */

static int theta_shape(const mxc__op *op, mxc__shape *s) {
  char b[160];
  MXC_RETURN_ERROR_IF(s->ndim >= 0 && (s->ndim != 2 || s->dims[1] != 6),
                      MXC_ERR_SHAPE,
                      "operator '%s': the affine parameters must be (N, 6); "
                      "got shape %s",
                      op->name, mxc__shape_str(s, b, sizeof b));
  return MXC_OK;
}

static int gg_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const st_param *p = param;
  int known;
  if (p->transform_type == GG_WARP) {
    MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(
        op->name, &in[0], 4, "data", "4-D (N, 2, H, W) flow", &known));
    char b[160];
    MXC_RETURN_ERROR_IF(known && in[0].dims[1] != 2, MXC_ERR_SHAPE,
                        "operator '%s': a warp flow must have 2 channels; "
                        "got shape %s",
                        op->name, mxc__shape_str(&in[0], b, sizeof b));
    return known ? mxc__vision_assign(op->name, &out[0], &in[0], "output")
                 : MXC_OK;
  }
  MXC_FORWARD_IF_ERROR(theta_shape(op, &in[0]));
  if (in[0].ndim < 0) return MXC_OK;
  int64_t d[4] = {in[0].dims[0], 2, p->target_shape.d[0], p->target_shape.d[1]};
  mxc__shape o = mxc__vision_shape(4, d);
  return mxc__vision_assign(op->name, &out[0], &o, "output");
}

/* Backward operators whose inputs are (ograd, x0, x1, ...) and whose
 * outputs are shaped like x0, x1, ... */
static int like_inputs_shape(const mxc__op *op, const void *param,
                             mxc__shape *in, int n_in, mxc__shape *out,
                             int n_out) {
  for (int i = 0; i < n_out; ++i) {
    if (in[i + 1].ndim < 0) continue;
    MXC_FORWARD_IF_ERROR(
        mxc__vision_assign(op->name, &out[i], &in[i + 1], "gradient"));
  }
  return MXC_OK;
}

static int bs_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  int kd, kg;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 4, "data",
                                             "4-D (N, C, H, W)", &kd));
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[1], 4, "grid",
                                             "4-D (N, 2, H, W)", &kg));
  if (!kd || !kg) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(in[1].dims[1] != 2 || in[1].dims[0] != in[0].dims[0],
                      MXC_ERR_SHAPE,
                      "operator '%s': grid must be (N, 2, H, W) with the "
                      "data's N; got data %s and grid %s",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1),
                      mxc__shape_str(&in[1], b2, sizeof b2));
  int64_t d[4] = {in[0].dims[0], in[0].dims[1], in[1].dims[2], in[1].dims[3]};
  mxc__shape o = mxc__vision_shape(4, d);
  return mxc__vision_assign(op->name, &out[0], &o, "output");
}

static int st_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const st_param *p = param;
  int kd;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 4, "data",
                                             "4-D (N, C, H, W)", &kd));
  MXC_FORWARD_IF_ERROR(theta_shape(op, &in[1]));
  if (!kd) return MXC_OK;
  mxc__shape loc = mxc__vision_shape(2, (int64_t[]){in[0].dims[0], 6});
  MXC_FORWARD_IF_ERROR(mxc__vision_assign(op->name, &in[1], &loc, "loc"));
  int64_t d[4] = {in[0].dims[0], in[0].dims[1], p->target_shape.d[0],
                  p->target_shape.d[1]};
  mxc__shape o = mxc__vision_shape(4, d);
  return mxc__vision_assign(op->name, &out[0], &o, "output");
}

/* ---- grid generation ---- */

/* The rules of sampler_params.h, shared with the CUDA plug-in. */
static double norm_coord(int64_t i, int64_t n) {
  return mxc__samp_norm_coord(i, n);
}

/* grid (N, 2, h, w) from theta (N, 6), in double; nb samples. */
static void affine_grid(const mxc__blob *theta, int64_t nb, int64_t h,
                        int64_t w, const mxc__blob *grid, mxc__req req) {
  for (int64_t n = 0; n < nb; ++n) {
    double t[6];
    for (int k = 0; k < 6; ++k) t[k] = mxc__blob_get(theta, n * 6 + k);
    MXC__FLOAT_TYPED(grid->dtype, {
      T *gx = (T *)grid->ptr + n * 2 * h * w, *gy = gx + h * w;
      for (int64_t i = 0; i < h; ++i) {
        double y = norm_coord(i, h);
        for (int64_t j = 0; j < w; ++j) {
          double x = norm_coord(j, w);
          MXC__ASSIGN(req, gx[i * w + j], (T)(t[0] * x + t[1] * y + t[2]));
          MXC__ASSIGN(req, gy[i * w + j], (T)(t[3] * x + t[4] * y + t[5]));
        }
      }
    });
  }
}

/* dtheta (N, 6) from the gradient of the grid (N, 2, h, w). */
static void affine_grid_grad(const mxc__blob *g, int64_t nb, int64_t h,
                             int64_t w, const mxc__blob *dtheta, mxc__req req) {
  for (int64_t n = 0; n < nb; ++n) {
    double s[6] = {0, 0, 0, 0, 0, 0};
    for (int64_t i = 0; i < h; ++i) {
      double y = norm_coord(i, h);
      for (int64_t j = 0; j < w; ++j) {
        double x = norm_coord(j, w);
        double gx = mxc__blob_get(g, (n * 2 * h + i) * w + j);
        double gy = mxc__blob_get(g, ((n * 2 + 1) * h + i) * w + j);
        s[0] += gx * x, s[1] += gx * y, s[2] += gx;
        s[3] += gy * x, s[4] += gy * y, s[5] += gy;
      }
    }
    for (int k = 0; k < 6; ++k) {
      double v = s[k];
      if (req == MXC__REQ_ADD) v += mxc__blob_get(dtheta, n * 6 + k);
      mxc__blob_set(dtheta, n * 6 + k, v);
    }
  }
}

static double half_extent(int64_t n) { return mxc__samp_half_extent(n); }

static int gg_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  const st_param *p = param;
  const int64_t *d = out[0].shape.dims;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (p->transform_type == GG_AFFINE) {
    affine_grid(&in[0], d[0], d[2], d[3], &out[0], req[0]);
    return MXC_OK;
  }
  double sx = half_extent(d[3]), sy = half_extent(d[2]);
  MXC__FLOAT_TYPED(in[0].dtype, {
    for (int64_t n = 0; n < d[0]; ++n) {
      const T *fx = (const T *)in[0].ptr + n * 2 * d[2] * d[3];
      const T *fy = fx + d[2] * d[3];
      T *ox = (T *)out[0].ptr + n * 2 * d[2] * d[3], *oy = ox + d[2] * d[3];
      for (int64_t i = 0; i < d[2]; ++i) {
        for (int64_t j = 0; j < d[3]; ++j) {
          int64_t k = i * d[3] + j;
          MXC__ASSIGN(req[0], ox[k], (T)((fx[k] + (double)j) / sx - 1));
          MXC__ASSIGN(req[0], oy[k], (T)((fy[k] + (double)i) / sy - 1));
        }
      }
    }
  });
  return MXC_OK;
}

/* _backward_GridGenerator: (ograd, data) -> ddata. */
static int gg_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const st_param *p = param;
  const int64_t *d = in[0].shape.dims;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (p->transform_type == GG_AFFINE) {
    affine_grid_grad(&in[0], d[0], d[2], d[3], &out[0], req[0]);
    return MXC_OK;
  }
  int64_t plane = d[2] * d[3];
  double sx = half_extent(d[3]), sy = half_extent(d[2]);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr;
    T *dx = out[0].ptr;
    for (int64_t k = 0; k < d[0] * 2 * plane; ++k) {
      double s = (k / plane) % 2 == 0 ? sx : sy;
      MXC__ASSIGN(req[0], dx[k], (T)(g[k] / s));
    }
  });
  return MXC_OK;
}

/* ---- bilinear sampling ---- */

/* The 4 neighbours of a grid point (sampler_params.h). */
typedef mxc__samp_taps taps;

static void taps_of(double gx, double gy, int64_t h, int64_t w, taps *t) {
  mxc__samp_taps_of(gx, gy, h, w, t);
}

/* The sampler's geometry: data (n, c, h, w), grid (n, 2, oh, ow). */
typedef struct samp {
  int64_t n, c, h, w, oh, ow;
} samp;

static samp samp_of(const mxc__shape *data, const mxc__shape *out) {
  samp s = {data->dims[0], data->dims[1], data->dims[2],
            data->dims[3], out->dims[2],  out->dims[3]};
  return s;
}

static void sample_forward(const samp *s, const mxc__blob *data,
                           const void *grid, const mxc__blob *out,
                           mxc__req req) {
  int64_t op = s->oh * s->ow, ip = s->h * s->w;
  MXC__FLOAT_TYPED(data->dtype, {
    for (int64_t n = 0; n < s->n; ++n) {
      const T *g = (const T *)grid + n * 2 * op;
      for (int64_t q = 0; q < op; ++q) {
        taps t;
        taps_of((double)g[q], (double)g[op + q], s->h, s->w, &t);
        for (int64_t c = 0; c < s->c; ++c) {
          const T *x = (const T *)data->ptr + (n * s->c + c) * ip;
          double v = 0;
          for (int k = 0; k < 4; ++k)
            if (t.idx[k] >= 0) v += t.wt[k] * (double)x[t.idx[k]];
          MXC__ASSIGN(req, ((T *)out->ptr)[(n * s->c + c) * op + q], (T)v);
        }
      }
    }
  });
}

/* Gradients of the sampler: ddata (scatter, req rd) and dgrid (req rg,
 * may be NULL with rg NULL). */
static void sample_backward(const samp *s, const void *ograd,
                            const mxc__blob *data, const void *grid,
                            void *ddata, mxc__req rd, void *dgrid,
                            mxc__req rg) {
  int64_t op = s->oh * s->ow, ip = s->h * s->w;
  size_t es = mxc__dtype_size(data->dtype);
  if (rd != MXC__REQ_NULL) mxc__vision_clear(ddata, s->n * s->c * ip, es, rd);
  MXC__FLOAT_TYPED(data->dtype, {
    for (int64_t n = 0; n < s->n; ++n) {
      const T *g = (const T *)grid + n * 2 * op;
      for (int64_t q = 0; q < op; ++q) {
        taps t;
        taps_of((double)g[q], (double)g[op + q], s->h, s->w, &t);
        double gx = 0, gy = 0;
        for (int64_t c = 0; c < s->c; ++c) {
          int64_t base = (n * s->c + c) * ip;
          double go = (double)((const T *)ograd)[(n * s->c + c) * op + q];
          const T *x = (const T *)data->ptr + base;
          for (int k = 0; k < 4; ++k) {
            if (t.idx[k] < 0) continue;
            if (rd != MXC__REQ_NULL)
              ((T *)ddata)[base + t.idx[k]] += (T)(go * t.wt[k]);
            gx += go * t.dwx[k] * (double)x[t.idx[k]];
            gy += go * t.dwy[k] * (double)x[t.idx[k]];
          }
        }
        if (rg == MXC__REQ_NULL) continue;
        T *dg = (T *)dgrid + n * 2 * op;
        MXC__ASSIGN(rg, dg[q], (T)gx);
        MXC__ASSIGN(rg, dg[op + q], (T)gy);
      }
    }
  });
}

static int bs_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  samp s = samp_of(&in[0].shape, &out[0].shape);
  sample_forward(&s, &in[0], in[1].ptr, &out[0], req[0]);
  return MXC_OK;
}

/* _backward_BilinearSampler: (ograd, data, grid) -> ddata, dgrid. */
static int bs_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  samp s = samp_of(&in[1].shape, &in[0].shape);
  sample_backward(&s, in[0].ptr, &in[1], in[2].ptr, out[0].ptr, req[0],
                  out[1].ptr, req[1]);
  return MXC_OK;
}

/* ---- SpatialTransformer ---- */

/* The affine grid of loc in temporary space. */
static int st_grid(const mxc__opctx *ctx, const samp *s, const mxc__blob *loc,
                   mxc__blob *grid) {
  size_t es = mxc__dtype_size(loc->dtype);
  void *p = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__opctx_temp(ctx, (size_t)(s->n * 2 * s->oh * s->ow) * es * 2, &p));
  grid->ptr = p;
  grid->dtype = loc->dtype;
  grid->shape = mxc__vision_shape(4, (int64_t[]){s->n, 2, s->oh, s->ow});
  affine_grid(loc, s->n, s->oh, s->ow, grid, MXC__REQ_WRITE);
  return MXC_OK;
}

static int st_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  samp s = samp_of(&in[0].shape, &out[0].shape);
  mxc__blob grid;
  MXC_FORWARD_IF_ERROR(st_grid(ctx, &s, &in[1], &grid));
  sample_forward(&s, &in[0], grid.ptr, &out[0], req[0]);
  return MXC_OK;
}

/* _backward_SpatialTransformer: (ograd, data, loc) -> ddata, dloc. The
 * grid's gradient lives in the second half of the temporary block. */
static int st_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  samp s = samp_of(&in[1].shape, &in[0].shape);
  mxc__blob grid;
  MXC_FORWARD_IF_ERROR(st_grid(ctx, &s, &in[2], &grid));
  mxc__blob dgrid = grid;
  dgrid.ptr = (char *)grid.ptr +
              mxc__shape_size(&grid.shape) * mxc__dtype_size(grid.dtype);
  sample_backward(&s, in[0].ptr, &in[1], grid.ptr, out[0].ptr, req[0],
                  dgrid.ptr, MXC__REQ_WRITE);
  if (req[1] != MXC__REQ_NULL)
    affine_grid_grad(&dgrid, s.n, s.oh, s.ow, &out[1], req[1]);
  return MXC_OK;
}

static const char *const k_data[] = {"data", NULL};
static const char *const k_bwd_data[] = {"ograd", "data", NULL};
static const char *const k_bs_in[] = {"data", "grid", NULL};
static const char *const k_bs_bwd_in[] = {"ograd", "data", "grid", NULL};
static const char *const k_st_in[] = {"data", "loc", NULL};
static const char *const k_st_bwd_in[] = {"ograd", "data", "loc", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "GridGenerator",
        .doc = "Sampling grid (N, 2, H, W) of normalized (x, y) from affine "
               "parameters (N, 6) or a pixel flow (N, 2, H, W).",
        MXC__PARAMS_OF(st_param, k_gg_params),
        .param_check = gg_check,
        .n_inputs = 1,
        .input_names = k_data,
        .n_outputs = 1,
        .infer_shape = gg_shape,
        .infer_type = mxc__vision_type_float,
        .compute = gg_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 1,
    },
    {
        MXC__BACKWARD("GridGenerator"),
        MXC__PARAMS_OF(st_param, k_gg_params),
        .param_check = gg_check,
        .n_inputs = 2,
        .input_names = k_bwd_data,
        .n_outputs = 1,
        .infer_shape = like_inputs_shape,
        .infer_type = mxc__vision_type_float,
        .compute = gg_backward,
    },
    {
        .name = "BilinearSampler",
        .doc = "Samples data (N, C, H, W) bilinearly at grid (N, 2, Ho, Wo) "
               "of normalized (x, y); outside points read 0: (N, C, Ho, "
               "Wo).",
        MXC__PARAMS_OF(st_param, k_bs_params),
        .n_inputs = 2,
        .input_names = k_bs_in,
        .n_outputs = 1,
        .infer_shape = bs_shape,
        .infer_type = mxc__vision_type_float,
        .compute = bs_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 3,
    },
    {
        MXC__BACKWARD("BilinearSampler"),
        MXC__PARAMS_OF(st_param, k_bs_params),
        .n_inputs = 3,
        .input_names = k_bs_bwd_in,
        .n_outputs = 2,
        .infer_shape = like_inputs_shape,
        .infer_type = mxc__vision_type_float,
        .compute = bs_backward,
    },
    {
        .name = "SpatialTransformer",
        .doc = "Affine spatial transformer: samples data (N, C, H, W) on the "
               "grid of loc (N, 6): (N, C, target_shape).",
        MXC__PARAMS_OF(st_param, k_st_params),
        .param_check = st_check,
        .n_inputs = 2,
        .input_names = k_st_in,
        .n_outputs = 1,
        .infer_shape = st_shape,
        .infer_type = mxc__vision_type_float,
        .compute = st_forward,
        .gradient = mxc__grad_use_in,
        .backward_uses_inputs = 3,
        .resources = MXC__RES_TEMP,
    },
    {
        MXC__BACKWARD("SpatialTransformer"),
        MXC__PARAMS_OF(st_param, k_st_params),
        .param_check = st_check,
        .n_inputs = 3,
        .input_names = k_st_bwd_in,
        .n_outputs = 2,
        .infer_shape = like_inputs_shape,
        .infer_type = mxc__vision_type_float,
        .compute = st_backward,
        .resources = MXC__RES_TEMP,
    },
};

int mxc__vision_register_sampler(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
