/* GridGenerator, BilinearSampler, SpatialTransformer and their gradients
 * as ops/vision/sampler.c computes them for float32, over
 * ops/vision/sampler_params.h's coordinate rules:
 *
 * - grids: one thread per grid element (affine: (float) of the double
 *   affine map; warp: the flow plus the pixel, normalized);
 * - sampling: one thread per output element, its 4 taps summed in double
 *   in the CPU's order; SpatialTransformer computes its affine grid point
 *   in the thread, rounded to float as the CPU's temporary grid;
 * - sampler gradients: one thread per grid point, summing dgrid over the
 *   channels and taps in the CPU's order (bitwise), and adding each
 *   tap's (float)(ograd * weight) into ddata with an atomic add: ddata's
 *   sums are NOT bitwise deterministic (the order of the atomic adds
 *   varies from run to run; each value is the CPU's float terms summed in
 *   some order);
 * - affine gradients (GridGenerator's, SpatialTransformer's dloc): one
 *   thread per (sample, parameter), summing over the grid in the CPU's
 *   order (bitwise).
 *
 * Plain C with no CUDA header, shared by samp.cu and the host test
 * (tests/gpu:test_cuda_nn3_plan, which runs the atomic adds as plain adds
 * in the CPU's order). Thread-safety: pure functions, but for the
 * caller-supplied add of ddata. */
#ifndef MXC_BACKENDS_CUDA_SAMP_PLAN_H_
#define MXC_BACKENDS_CUDA_SAMP_PLAN_H_

#include <stdint.h>

#ifdef __CUDACC__
#define MXC__SAMPK_HD __host__ __device__ __forceinline__
#define MXC__SAMP_HD __host__ __device__ static inline
#else
#define MXC__SAMPK_HD static inline
#endif

#include "core/base/gpu_plugin.h"
#include "ops/vision/sampler_params.h"

/* data (n, c, h, w) sampled at a grid of (oh, ow) points per sample. */
typedef struct mxc__sampk_plan {
  int64_t n, c, h, w, oh, ow;
  int on[2], add[2]; /* per output */
} mxc__sampk_plan;

/* Host only: data x, output (or ograd) y of (n, c, oh, ow). */
static inline mxc__sampk_plan mxc__sampk_plan_make(const mxc__gpu_array *x,
                                                   const mxc__gpu_array *y,
                                                   const int *req, int n_out) {
  mxc__sampk_plan q;
  q.n = x->dims[0], q.c = x->dims[1], q.h = x->dims[2], q.w = x->dims[3];
  q.oh = y->dims[2], q.ow = y->dims[3];
  for (int k = 0; k < 2; ++k) {
    q.on[k] = k < n_out && req[k] != MXC__GPU_REQ_NULL;
    q.add[k] = k < n_out && req[k] == MXC__GPU_REQ_ADD;
  }
  return q;
}

/* Affine grid value (ch 0: x, 1: y) at (i, j) of an h x w grid for
 * theta's sample n (N, 6), as the CPU stores it in float. */
MXC__SAMPK_HD float mxc__sampk_affine(const float *theta, int64_t n, int ch,
                                      int64_t i, int64_t j, int64_t h,
                                      int64_t w) {
  const float *t = theta + n * 6 + ch * 3;
  double x = mxc__samp_norm_coord(j, w), y = mxc__samp_norm_coord(i, h);
  return (float)((double)t[0] * x + (double)t[1] * y + (double)t[2]);
}

/* Grid point q of sample n: from grid (N, 2, oh, ow), or from theta. */
MXC__SAMPK_HD void mxc__sampk_point(const mxc__sampk_plan *q, const float *grid,
                                    const float *theta, int64_t n, int64_t p,
                                    float *gx, float *gy) {
  int64_t op = q->oh * q->ow;
  if (theta) {
    *gx = mxc__sampk_affine(theta, n, 0, p / q->ow, p % q->ow, q->oh, q->ow);
    *gy = mxc__sampk_affine(theta, n, 1, p / q->ow, p % q->ow, q->oh, q->ow);
    return;
  }
  *gx = grid[n * 2 * op + p];
  *gy = grid[n * 2 * op + op + p];
}

/* Forward, output element e of (n, c, oh, ow). */
MXC__SAMPK_HD void mxc__sampk_fwd(const mxc__sampk_plan *q, const float *x,
                                  const float *grid, const float *theta,
                                  float *y, int64_t e) {
  int64_t op = q->oh * q->ow, p = e % op, nc = e / op, n = nc / q->c;
  float gx, gy;
  mxc__sampk_point(q, grid, theta, n, p, &gx, &gy);
  mxc__samp_taps t;
  mxc__samp_taps_of((double)gx, (double)gy, q->h, q->w, &t);
  const float *xs = x + nc * q->h * q->w;
  double v = 0;
  for (int k = 0; k < 4; ++k) {
    if (t.idx[k] >= 0) v += t.wt[k] * (double)xs[t.idx[k]];
  }
  y[e] = q->add[0] ? y[e] + (float)v : (float)v;
}

/* One ddata term: an atomic add on the device (threads of several grid
 * points meet at one pixel), a plain add on the host (the host test runs
 * the grid points in the CPU's order). */
MXC__SAMPK_HD void mxc__sampk_add(float *p, float v) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

/* Gradient at grid point p of sample n (thread e = n * oh * ow + p): the
 * ddata terms (when output 0 is on; ddata cleared first in write mode),
 * dgrid's two values into dg (N, 2, oh, ow) when dg_on (added in float
 * with dg_add). */
MXC__SAMPK_HD void mxc__sampk_bwd(const mxc__sampk_plan *q, const float *og,
                                  const float *x, const float *grid,
                                  const float *theta, float *dx, float *dg,
                                  int dg_on, int dg_add, int64_t e) {
  int64_t op = q->oh * q->ow, p = e % op, n = e / op, ip = q->h * q->w;
  float fx, fy;
  mxc__sampk_point(q, grid, theta, n, p, &fx, &fy);
  mxc__samp_taps t;
  mxc__samp_taps_of((double)fx, (double)fy, q->h, q->w, &t);
  double gx = 0, gy = 0;
  for (int64_t c = 0; c < q->c; ++c) {
    int64_t base = (n * q->c + c) * ip;
    double go = (double)og[(n * q->c + c) * op + p];
    for (int k = 0; k < 4; ++k) {
      if (t.idx[k] < 0) continue;
      if (q->on[0]) mxc__sampk_add(dx + base + t.idx[k], (float)(go * t.wt[k]));
      gx += go * t.dwx[k] * (double)x[base + t.idx[k]];
      gy += go * t.dwy[k] * (double)x[base + t.idx[k]];
    }
  }
  if (!dg_on) return;
  float *d = dg + n * 2 * op;
  d[p] = dg_add ? d[p] + (float)gx : (float)gx;
  d[op + p] = dg_add ? d[op + p] + (float)gy : (float)gy;
}

/* Affine gradient: parameter k of sample n (thread n * 6 + k) from the
 * grid gradient g (N, 2, h, w), summed as the CPU (double, grid order),
 * added to the old value in double in ADD mode. */
MXC__SAMPK_HD void mxc__sampk_dtheta(const float *g, int64_t h, int64_t w,
                                     float *dtheta, int add, int64_t e) {
  int64_t n = e / 6;
  int k = (int)(e % 6), ch = k / 3, r = k % 3;
  double s = 0;
  for (int64_t i = 0; i < h; ++i) {
    double y = mxc__samp_norm_coord(i, h);
    for (int64_t j = 0; j < w; ++j) {
      double x = mxc__samp_norm_coord(j, w);
      double gv = (double)g[((n * 2 + ch) * h + i) * w + j];
      s += r == 0 ? gv * x : r == 1 ? gv * y : gv;
    }
  }
  if (add) s += (double)dtheta[e];
  dtheta[e] = (float)s;
}

/* GridGenerator forward, grid element e of (N, 2, h, w): affine from
 * theta (N, 6), or warp from the flow (N, 2, h, w). */
MXC__SAMPK_HD void mxc__sampk_gg(int warp, const float *in, int64_t h,
                                 int64_t w, float *out, int add, int64_t e) {
  int64_t j = e % w, i = e / w % h, ch = e / (w * h) % 2, n = e / (2 * w * h);
  float v;
  if (warp) {
    double s = ch == 0 ? mxc__samp_half_extent(w) : mxc__samp_half_extent(h);
    v = (float)((in[e] + (double)(ch == 0 ? j : i)) / s - 1);
  } else {
    v = mxc__sampk_affine(in, n, (int)ch, i, j, h, w);
  }
  out[e] = add ? out[e] + v : v;
}

/* GridGenerator's warp gradient, element e of (N, 2, h, w). */
MXC__SAMPK_HD void mxc__sampk_gg_warp_bwd(const float *g, int64_t h, int64_t w,
                                          float *dx, int add, int64_t e) {
  int64_t plane = h * w;
  double s = (e / plane) % 2 == 0 ? mxc__samp_half_extent(w)
                                  : mxc__samp_half_extent(h);
  float v = (float)(g[e] / s);
  dx[e] = add ? dx[e] + v : v;
}

#endif /* MXC_BACKENDS_CUDA_SAMP_PLAN_H_ */
