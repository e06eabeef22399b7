/* _contrib_BilinearResize2D, _contrib_AdaptiveAvgPooling2D and their
 * gradients as ops/nn/resize.c computes them for float32, planes of
 * (N, C, H, W) data:
 *
 * forward, per output pixel: the bilinear taps' weighted sum, or the
 * bin's mean, in double in the CPU's order, rounded once (ADD adds the
 * rounded value in float, MXC__ASSIGN);
 *
 * gradient, per input pixel: the CPU scatters each output pixel's
 * contributions (float(w * g), float(g / area)) into the input with
 * float adds in raster order of the output; here each input pixel
 * gathers the same contributions in the same order: it scans a window of
 * output rows and columns that surely holds every pixel reading it
 * (mxc__rs_window: a margin around the inverse of the coordinate map)
 * and keeps those whose taps or bins are exactly it, so the float sums
 * are the CPU's.
 *
 * Plain C with no CUDA header, shared by resize.cu and the host test
 * (tests/gpu:test_cuda_fill_plan). */
#ifndef MXC_BACKENDS_CUDA_RESIZE_PLAN_H_
#define MXC_BACKENDS_CUDA_RESIZE_PLAN_H_

#include <math.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/nn/resize_params.h"

#ifdef __CUDACC__
#define MXC__RS_HD __host__ __device__ __forceinline__
#else
#define MXC__RS_HD static inline
#endif

#include "ops/nn/resize_tap.h"

/* The planes: input (h, w), output (oh, ow), planes = n * c. */
typedef struct mxc__rs_plan {
  int64_t planes, h, w, oh, ow;
  int align, add;
} mxc__rs_plan;

/* Host only: from data (or its gradient) x and the output (or ograd) y. */
static inline mxc__rs_plan mxc__rs_plan_make(const mxc__gpu_array *x,
                                             const mxc__gpu_array *y, int align,
                                             int add) {
  mxc__rs_plan q = {x->dims[0] * x->dims[1],
                    x->dims[2],
                    x->dims[3],
                    y->dims[2],
                    y->dims[3],
                    align,
                    add};
  return q;
}

/* ---- bilinear taps ---- */

/* mxc__rs_tap and mxc__rs_tap_of: ops/nn/resize_tap.h (included above,
 * with this file's MXC__RS_HD). */

MXC__RS_HD int64_t mxc__rs_clamp(double v, int64_t n) {
  return v < 0 ? 0 : v > (double)n ? n : (int64_t)v;
}

/* Output positions [*lo, *hi) that may read input position i: a margin
 * of 2 around the positions whose source lies in [i - 1, i + 1] (from 0
 * for the first two, which the clamped sources read). */
MXC__RS_HD void mxc__rs_window(int64_t i, int64_t in, int64_t n, int align,
                               int64_t *lo, int64_t *hi) {
  double a, b;
  if (align) {
    double r = in > 1 ? (double)(n - 1) / (double)(in - 1) : (double)n;
    a = (double)(i - 1) * r, b = (double)(i + 1) * r;
    if (in <= 1) a = 0, b = (double)n;
  } else {
    double r = (double)n / (double)in;
    a = ((double)i - 0.5) * r - 0.5, b = ((double)i + 1.5) * r;
    /* sources below 0 are clamped to 0: taps 0 and 1 from there on */
    if (i <= 1) a = 0;
  }
  *lo = mxc__rs_clamp(floor(a) - 2, n);
  *hi = mxc__rs_clamp(ceil(b) + 3, n);
}

/* Forward, output element e (planes * oh * ow). */
MXC__RS_HD void mxc__rs_fwd(const mxc__rs_plan *q, const float *x, float *y,
                            int64_t e) {
  int64_t c = e % q->ow, r = e / q->ow % q->oh, pl = e / (q->ow * q->oh);
  const float *a = x + pl * q->h * q->w;
  mxc__rs_tap th = mxc__rs_tap_of(r, q->h, q->oh, q->align);
  mxc__rs_tap tw = mxc__rs_tap_of(c, q->w, q->ow, q->align);
  double w00 = (1 - th.l) * (1 - tw.l), w01 = (1 - th.l) * tw.l;
  double w10 = th.l * (1 - tw.l), w11 = th.l * tw.l;
  double v = w00 * a[th.i0 * q->w + tw.i0] + w01 * a[th.i0 * q->w + tw.i1] +
             w10 * a[th.i1 * q->w + tw.i0] + w11 * a[th.i1 * q->w + tw.i1];
  y[e] = q->add ? y[e] + (float)v : (float)v;
}

/* Gradient, input element e (planes * h * w): g the output gradient. */
MXC__RS_HD void mxc__rs_bwd(const mxc__rs_plan *q, const float *g, float *dx,
                            int64_t e) {
  int64_t j = e % q->w, i = e / q->w % q->h, pl = e / (q->w * q->h);
  const float *b = g + pl * q->oh * q->ow;
  int64_t r0, r1, c0, c1;
  mxc__rs_window(i, q->h, q->oh, q->align, &r0, &r1);
  mxc__rs_window(j, q->w, q->ow, q->align, &c0, &c1);
  float acc = q->add ? dx[e] : 0.f;
  for (int64_t r = r0; r < r1; ++r) {
    mxc__rs_tap th = mxc__rs_tap_of(r, q->h, q->oh, q->align);
    if (th.i0 != i && th.i1 != i) continue;
    for (int64_t c = c0; c < c1; ++c) {
      mxc__rs_tap tw = mxc__rs_tap_of(c, q->w, q->ow, q->align);
      if (tw.i0 != j && tw.i1 != j) continue;
      double gv = b[r * q->ow + c];
      /* the taps 00, 01, 10, 11 in the CPU's order, each that is (i, j) */
      if (th.i0 == i && tw.i0 == j)
        acc += (float)((1 - th.l) * (1 - tw.l) * gv);
      if (th.i0 == i && tw.i1 == j) acc += (float)((1 - th.l) * tw.l * gv);
      if (th.i1 == i && tw.i0 == j) acc += (float)(th.l * (1 - tw.l) * gv);
      if (th.i1 == i && tw.i1 == j) acc += (float)(th.l * tw.l * gv);
    }
  }
  dx[e] = acc;
}

/* ---- adaptive average pooling ---- */

/* Bin [*lo, *hi) of output position o (extent n) over input extent e. */
MXC__RS_HD void mxc__ap_bin(int64_t o, int64_t e, int64_t n, int64_t *lo,
                            int64_t *hi) {
  *lo = (int64_t)floor((double)o * (double)e / (double)n);
  *hi = (int64_t)ceil((double)(o + 1) * (double)e / (double)n);
}

MXC__RS_HD void mxc__ap_fwd(const mxc__rs_plan *q, const float *x, float *y,
                            int64_t e) {
  int64_t c = e % q->ow, r = e / q->ow % q->oh, pl = e / (q->ow * q->oh);
  const float *a = x + pl * q->h * q->w;
  int64_t r0, r1, c0, c1;
  mxc__ap_bin(r, q->h, q->oh, &r0, &r1);
  mxc__ap_bin(c, q->w, q->ow, &c0, &c1);
  double area = (double)((r1 - r0) * (c1 - c0)), s = 0;
  for (int64_t i = r0; i < r1; ++i) {
    for (int64_t j = c0; j < c1; ++j) s += a[i * q->w + j];
  }
  float v = (float)(s / area);
  y[e] = q->add ? y[e] + v : v;
}

/* The output positions whose bins may hold input position i: a margin
 * around the inverse of the bin map. */
MXC__RS_HD void mxc__ap_window(int64_t i, int64_t in, int64_t n, int64_t *lo,
                               int64_t *hi) {
  double r = (double)n / (double)in;
  *lo = mxc__rs_clamp(floor((double)i * r) - 2, n);
  *hi = mxc__rs_clamp(ceil((double)(i + 1) * r) + 3, n);
}

MXC__RS_HD void mxc__ap_bwd(const mxc__rs_plan *q, const float *g, float *dx,
                            int64_t e) {
  int64_t j = e % q->w, i = e / q->w % q->h, pl = e / (q->w * q->h);
  const float *b = g + pl * q->oh * q->ow;
  int64_t rl, rh, cl, ch;
  mxc__ap_window(i, q->h, q->oh, &rl, &rh);
  mxc__ap_window(j, q->w, q->ow, &cl, &ch);
  float acc = q->add ? dx[e] : 0.f;
  for (int64_t r = rl; r < rh; ++r) {
    int64_t r0, r1;
    mxc__ap_bin(r, q->h, q->oh, &r0, &r1);
    if (i < r0 || i >= r1) continue;
    for (int64_t c = cl; c < ch; ++c) {
      int64_t c0, c1;
      mxc__ap_bin(c, q->w, q->ow, &c0, &c1);
      if (j < c0 || j >= c1) continue;
      double area = (double)((r1 - r0) * (c1 - c0));
      acc += (float)(b[r * q->ow + c] / area);
    }
  }
  dx[e] = acc;
}

#endif /* MXC_BACKENDS_CUDA_RESIZE_PLAN_H_ */
