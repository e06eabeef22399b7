/* The parameter struct of GridGenerator, BilinearSampler,
 * SpatialTransformer and their gradients (sampler.c) and their
 * coordinate rules, in a header of their own because the CUDA plug-in's
 * kernels read the struct and run the rules too (backends/cuda/
 * samp_plan.h, compiled by nvcc for the device): one text, so both
 * devices sample the same neighbours with the same weights. Header-only;
 * an includer may define MXC__SAMP_HD (e.g. __host__ __device__ static
 * inline) first. Thread-safety: pure. */
#ifndef MXC_OPS_VISION_SAMPLER_PARAMS_H_
#define MXC_OPS_VISION_SAMPLER_PARAMS_H_

#include <math.h>
#include <stdint.h>

#include "core/op/param.h"

#ifndef MXC__SAMP_HD
#define MXC__SAMP_HD static inline
#endif

/* GridGenerator's transform types, in its enum parameter's order. */
enum { MXC__GG_AFFINE, MXC__GG_WARP };

typedef struct mxc__st_param {
  int transform_type, sampler_type, cudnn_off;
  mxc__tuple target_shape;
} mxc__st_param;

/* Normalized coordinate of pixel i of n: -1 .. 1 (-1 when n == 1). */
MXC__SAMP_HD double mxc__samp_norm_coord(int64_t i, int64_t n) {
  return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
}

/* Scale from pixels to normalized units along an axis of n pixels. */
MXC__SAMP_HD double mxc__samp_half_extent(int64_t n) {
  return n > 1 ? (n - 1) / 2.0 : 1.0;
}

/* The 4 neighbours of grid point (gx, gy) on an h x w image: flat
 * indices (-1 outside the image), weights, and the weights' derivatives
 * along x and y in normalized units. */
typedef struct mxc__samp_taps {
  int64_t idx[4];
  double wt[4], dwx[4], dwy[4];
} mxc__samp_taps;

MXC__SAMP_HD void mxc__samp_taps_of(double gx, double gy, int64_t h, int64_t w,
                                    mxc__samp_taps *t) {
  double x = (gx + 1) * (double)(w - 1) / 2, y = (gy + 1) * (double)(h - 1) / 2;
  double x0 = floor(x), y0 = floor(y), fx = x - x0, fy = y - y0;
  double sx = (double)(w - 1) / 2, sy = (double)(h - 1) / 2;
  for (int k = 0; k < 4; ++k) {
    double xi = x0 + (k & 1), yi = y0 + (k >> 1);
    double wx = (k & 1) ? fx : 1 - fx, wy = (k >> 1) ? fy : 1 - fy;
    int in =
        xi >= 0 && xi <= (double)(w - 1) && yi >= 0 && yi <= (double)(h - 1);
    t->idx[k] = in ? (int64_t)yi * w + (int64_t)xi : -1;
    t->wt[k] = wx * wy;
    t->dwx[k] = ((k & 1) ? 1 : -1) * wy * sx;
    t->dwy[k] = ((k >> 1) ? 1 : -1) * wx * sy;
  }
}

#endif /* MXC_OPS_VISION_SAMPLER_PARAMS_H_ */
