/* The index maps of depth_to_space / space_to_depth and diag, shared by
 * the CPU operators (ops/shape/rearrange.c) and the GPU's plans
 * (backends/cuda/copy_plan.c), so both devices move the same elements.
 * Each map is an iteration box whose row-major order is the contiguous
 * side's, with the other side's element strides (and first offset).
 *
 * Plain C, no allocation; pure functions (any thread). */
#ifndef MXC_OPS_SHAPE_REARRANGE_MAP_H_
#define MXC_OPS_SHAPE_REARRANGE_MAP_H_

#include <stdint.h>

#include "mxc/mxc.h"

/* depth_to_space's permutation as a box over (N, C', H, b, W, b), the
 * space side (N, C', H*b, W*b) contiguous in that order; depth[] gets the
 * depth side's (N, C'*b*b, H, W) strides: box element (n, c, h, i, w, j)
 * is depth channel (i * b + j) * C' + c at (h, w), MXNet's order. */
static inline void mxc__ds_map(const int64_t *space, int64_t b,
                               int64_t dims[6], int64_t depth[6]) {
  int64_t n = space[0], c = space[1], h = space[2] / b, w = space[3] / b;
  int64_t hw = h * w;
  dims[0] = n, dims[1] = c, dims[2] = h, dims[3] = b, dims[4] = w;
  dims[5] = b;
  depth[0] = c * b * b * hw, depth[1] = hw, depth[2] = w;
  depth[3] = b * c * hw, depth[4] = 1, depth[5] = c * hw;
}

/* Diagonal k of the (a1, a2) planes of a matrix-side array m (nd axes,
 * a1 != a2 in [0, nd)): the box is m's other axes in order, then the
 * diagonal; stride[] the steps in m, *off the first element's offset.
 * Returns the box's axes, or 0 when the diagonal is empty (k outside the
 * planes). */
static inline int mxc__diag_map(const int64_t *m, int nd, int a1, int a2,
                                int64_t k, int64_t *dims, int64_t *stride,
                                int64_t *off) {
  int64_t st[MXC_MAX_NDIM], s = 1;
  for (int a = nd - 1; a >= 0; --a) {
    st[a] = s;
    s *= m[a];
  }
  int64_t r = m[a1], c = m[a2];
  k = k > c ? c : k < -r ? -r : k; /* clamped first: no sum overflows */
  int64_t len = k >= 0 ? (r < c - k ? r : c - k) : (r + k < c ? r + k : c);
  if (len <= 0) return 0;
  int n = 0;
  for (int a = 0; a < nd; ++a) {
    if (a == a1 || a == a2) continue;
    stride[n] = st[a];
    dims[n++] = m[a];
  }
  stride[n] = st[a1] + st[a2];
  dims[n++] = len;
  *off = k >= 0 ? k * st[a2] : -k * st[a1];
  return n;
}

#endif /* MXC_OPS_SHAPE_REARRANGE_MAP_H_ */
