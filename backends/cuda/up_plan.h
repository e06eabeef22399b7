/* UpSampling and _backward_UpSampling as ops/nn/upsampling.c computes
 * them for float32, one output element per call of an element function:
 *
 * nearest: input part k (one input: its channels at channel c0 of the
 * output for 'concat', 0 for 'sum') repeated over f x f blocks; the
 * inputs are written one after another, each in its mode (for 'sum' the
 * inputs after the first add, in float, as the CPU's MXC__ASSIGN). The
 * gradient of an input pixel is the float sum of its block of the output
 * gradient in row-major order, from 0 (or from its old value in ADD).
 *
 * bilinear: a depthwise transposed convolution with kernel k = 2s - s%2,
 * stride s, padding s/2. Each output pixel sums x * w (float products and
 * adds, no FMA) over the input pixels that reach it, in the CPU's loop
 * order (iy, then ix); ADD adds the finished value in double, rounded
 * once, as the CPU's workspace path. The data gradient sums g * w over
 * the taps (ky, kx) of each input pixel, the weight gradient x * g over
 * (n, iy, ix) for each tap, from 0 or (ADD) the old value, the CPU's
 * order.
 *
 * Plain C with no CUDA header, shared by up.cu and the host test
 * (tests/gpu:test_cuda_fill_plan). */
#ifndef MXC_BACKENDS_CUDA_UP_PLAN_H_
#define MXC_BACKENDS_CUDA_UP_PLAN_H_

#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/nn/upsampling_params.h"

#ifdef __CUDACC__
#define MXC__UP_HD __host__ __device__ __forceinline__
#else
#define MXC__UP_HD static inline
#endif

/* One nearest part: input (n, c, h, w) into output (n, oc, oh, ow) at
 * channel c0. */
typedef struct mxc__up_part {
  int64_t n, c, h, w, oc, oh, ow, c0;
  int add;
} mxc__up_part;

/* Host only: the part of input array x into output y. */
static inline mxc__up_part mxc__up_part_make(const mxc__gpu_array *x,
                                             const mxc__gpu_array *y,
                                             int64_t c0, int add) {
  mxc__up_part q = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], y->dims[1],
                    y->dims[2], y->dims[3], c0,         add};
  return q;
}

/* Forward, element i of the part (n * c * oh * ow elements). */
MXC__UP_HD void mxc__up_near_fwd(const mxc__up_part *q, const float *x,
                                 float *y, int64_t i) {
  int64_t qx = i % q->ow, r = i / q->ow % q->oh, nc = i / (q->ow * q->oh);
  int64_t c = nc % q->c, n = nc / q->c;
  int64_t fh = q->oh / q->h, fw = q->ow / q->w;
  float v = x[(nc * q->h + r / fh) * q->w + qx / fw];
  float *o = &y[((n * q->oc + q->c0 + c) * q->oh + r) * q->ow + qx];
  *o = q->add ? *o + v : v;
}

/* Backward, input pixel i of the part (n * c * h * w elements). */
MXC__UP_HD void mxc__up_near_bwd(const mxc__up_part *q, const float *g,
                                 float *dx, int64_t i) {
  int64_t xq = i % q->w, xr = i / q->w % q->h, nc = i / (q->w * q->h);
  int64_t c = nc % q->c, n = nc / q->c;
  int64_t fh = q->oh / q->h, fw = q->ow / q->w;
  const float *gp = g + (n * q->oc + q->c0 + c) * q->oh * q->ow;
  float acc = q->add ? dx[i] : 0.f;
  for (int64_t r = xr * fh; r < xr * fh + fh; ++r) {
    for (int64_t s = xq * fw; s < xq * fw + fw; ++s) acc += gp[r * q->ow + s];
  }
  dx[i] = acc;
}

/* ---- bilinear ---- */

typedef struct mxc__up_bil {
  int64_t n, c, h, w, s, k, pad;
  int add;
} mxc__up_bil;

/* Host only: from the data array x (N, C, H, W) and the scale. */
static inline mxc__up_bil mxc__up_bil_make(const mxc__up_param *p,
                                           const mxc__gpu_array *x, int add) {
  mxc__up_bil b = {x->dims[0],   x->dims[1], x->dims[2],
                   x->dims[3],   p->scale,   2 * p->scale - p->scale % 2,
                   p->scale / 2, add};
  return b;
}

/* The input rows iy reaching output row o: [*lo, *hi]. */
MXC__UP_HD void mxc__up_bil_range(const mxc__up_bil *b, int64_t o, int64_t in,
                                  int64_t *lo, int64_t *hi) {
  /* ky = o + pad - iy * s in [0, k) */
  int64_t top = o + b->pad, l = top - b->k + 1;
  *lo = l <= 0 ? 0 : (l + b->s - 1) / b->s;
  *hi = top / b->s < in - 1 ? top / b->s : in - 1;
}

/* Forward, output pixel i of (n, c, h*s, w*s). */
MXC__UP_HD void mxc__up_bil_fwd(const mxc__up_bil *b, const float *x,
                                const float *wt, float *y, int64_t i) {
  int64_t ow = b->w * b->s, oh = b->h * b->s;
  int64_t ox = i % ow, oy = i / ow % oh, nc = i / (ow * oh), c = nc % b->c;
  int64_t y0, y1, x0, x1;
  mxc__up_bil_range(b, oy, b->h, &y0, &y1);
  mxc__up_bil_range(b, ox, b->w, &x0, &x1);
  const float *xp = x + nc * b->h * b->w, *wp = wt + c * b->k * b->k;
  float acc = 0.f;
  for (int64_t iy = y0; iy <= y1; ++iy) {
    for (int64_t ix = x0; ix <= x1; ++ix) {
      int64_t ky = oy - iy * b->s + b->pad, kx = ox - ix * b->s + b->pad;
      acc += xp[iy * b->w + ix] * wp[ky * b->k + kx];
    }
  }
  y[i] = b->add ? (float)((double)y[i] + (double)acc) : acc;
}

/* The taps of input row iy that land inside the output: [*lo, *hi). */
MXC__UP_HD void mxc__up_bil_taps(const mxc__up_bil *b, int64_t iy, int64_t out,
                                 int64_t *lo, int64_t *hi) {
  *lo = b->pad - iy * b->s > 0 ? b->pad - iy * b->s : 0;
  *hi = out + b->pad - iy * b->s < b->k ? out + b->pad - iy * b->s : b->k;
}

/* Data gradient, input pixel i of (n, c, h, w): g the output gradient. */
MXC__UP_HD void mxc__up_bil_dx(const mxc__up_bil *b, const float *g,
                               const float *wt, float *dx, int64_t i) {
  int64_t ow = b->w * b->s, oh = b->h * b->s;
  int64_t ix = i % b->w, iy = i / b->w % b->h, nc = i / (b->w * b->h);
  int64_t c = nc % b->c, ky0, ky1, kx0, kx1;
  mxc__up_bil_taps(b, iy, oh, &ky0, &ky1);
  mxc__up_bil_taps(b, ix, ow, &kx0, &kx1);
  const float *gp = g + nc * oh * ow, *wp = wt + c * b->k * b->k;
  float acc = b->add ? dx[i] : 0.f;
  for (int64_t ky = ky0; ky < ky1; ++ky) {
    for (int64_t kx = kx0; kx < kx1; ++kx) {
      int64_t oy = iy * b->s - b->pad + ky, ox = ix * b->s - b->pad + kx;
      acc += gp[oy * ow + ox] * wp[ky * b->k + kx];
    }
  }
  dx[i] = acc;
}

/* Weight gradient, element i of (c, 1, k, k). */
MXC__UP_HD void mxc__up_bil_dw(const mxc__up_bil *b, const float *x,
                               const float *g, float *dw, int64_t i) {
  int64_t ow = b->w * b->s, oh = b->h * b->s;
  int64_t kx = i % b->k, ky = i / b->k % b->k, c = i / (b->k * b->k);
  float acc = b->add ? dw[i] : 0.f;
  for (int64_t n = 0; n < b->n; ++n) {
    const float *xp = x + (n * b->c + c) * b->h * b->w;
    const float *gp = g + (n * b->c + c) * oh * ow;
    for (int64_t iy = 0; iy < b->h; ++iy) {
      int64_t oy = iy * b->s - b->pad + ky;
      if (oy < 0 || oy >= oh) continue;
      for (int64_t ix = 0; ix < b->w; ++ix) {
        int64_t ox = ix * b->s - b->pad + kx;
        if (ox < 0 || ox >= ow) continue;
        acc += xp[iy * b->w + ix] * gp[oy * ow + ox];
      }
    }
  }
  dw[i] = acc;
}

#endif /* MXC_BACKENDS_CUDA_UP_PLAN_H_ */
