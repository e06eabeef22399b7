/* The iteration boxes of tile and repeat, shared by the CPU operators
 * (ops/shape/broadcast.c) and the GPU's plan (backends/cuda/copy_plan.c),
 * so both devices copy (and sum the gradient over) the same elements.
 *
 * The box's row-major order is the output's; in_stride gives the input
 * element step per box axis, 0 along an axis of copies (rep[k] set).
 * tile splits output axis k into (reps_k, d_k), input and reps both
 * right-aligned and padded with leading 1s; repeat splits the repeated
 * axis into (d, repeats), and without an axis repeats the flattened
 * input: (N) -> (N, repeats).
 *
 * Plain C, no allocation; pure functions (any thread). */
#ifndef MXC_OPS_SHAPE_REP_BOX_H_
#define MXC_OPS_SHAPE_REP_BOX_H_

#include <stdint.h>

#include "mxc/mxc.h"

typedef struct mxc__rep_box {
  int nd;                              /* box axes */
  int64_t dims[2 * MXC_MAX_NDIM];
  int64_t in_stride[2 * MXC_MAX_NDIM]; /* 0 along an axis of copies */
  int rep[2 * MXC_MAX_NDIM];           /* 1: an axis of copies */
  int out_nd;                          /* the output's shape */
  int64_t out[MXC_MAX_NDIM];
} mxc__rep_box;

/* Why a box cannot be made. */
enum {
  MXC__REP_BOX_OK = 0,
  MXC__REP_BOX_NDIM = 1,     /* tile: more than MXC_MAX_NDIM axes */
  MXC__REP_BOX_OVERFLOW = 2  /* an output extent beyond int64 */
};

/* Appends a box axis. */
static inline void mxc__rep_box_axis(mxc__rep_box *b, int64_t ext,
                                     int64_t stride, int rep) {
  b->dims[b->nd] = ext;
  b->in_stride[b->nd] = rep ? 0 : stride;
  b->rep[b->nd++] = rep;
}

/* Row-major strides of dims (the input's element steps). */
static inline void mxc__rep_box_strides(const int64_t *dims, int nd,
                                        int64_t *str) {
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; --k) {
    str[k] = s;
    s *= dims[k];
  }
}

/* tile of an input of extents in[0..nd) by reps[0..nr): MXC__REP_BOX_*. */
static inline int mxc__tile_box(const int64_t *in, int nd,
                                const int64_t *reps, int nr,
                                mxc__rep_box *b) {
  nr = nr < 0 ? 0 : nr;
  int n = nd > nr ? nd : nr;
  if (n > MXC_MAX_NDIM) return MXC__REP_BOX_NDIM;
  int64_t d[MXC_MAX_NDIM] = {0}, str[MXC_MAX_NDIM] = {0};
  for (int k = 0; k < n; ++k) d[k] = k - (n - nd) >= 0 ? in[k - (n - nd)] : 1;
  mxc__rep_box_strides(d, n, str);
  b->nd = 0;
  b->out_nd = n;
  for (int k = 0; k < n; ++k) {
    int64_t r = k - (n - nr) >= 0 ? reps[k - (n - nr)] : 1;
    mxc__rep_box_axis(b, r, 0, 1);
    mxc__rep_box_axis(b, d[k], str[k], 0);
    if (__builtin_mul_overflow(r, d[k], &b->out[k]))
      return MXC__REP_BOX_OVERFLOW;
  }
  return MXC__REP_BOX_OK;
}

/* repeat of an input of extents in[0..nd), `repeats` copies of each
 * element along axis ax (normalized, in [0, nd)), or of the flattened
 * input when ax < 0: MXC__REP_BOX_*. */
static inline int mxc__repeat_box(const int64_t *in, int nd, int64_t repeats,
                                  int ax, mxc__rep_box *b) {
  b->nd = 0;
  if (ax < 0) {
    int64_t n = 1;
    for (int k = 0; k < nd; ++k) n *= in[k];
    mxc__rep_box_axis(b, n, 1, 0);
    mxc__rep_box_axis(b, repeats, 0, 1);
    b->out_nd = 1;
    return __builtin_mul_overflow(n, repeats, &b->out[0])
               ? MXC__REP_BOX_OVERFLOW
               : MXC__REP_BOX_OK;
  }
  int64_t str[MXC_MAX_NDIM] = {0};
  mxc__rep_box_strides(in, nd, str);
  b->out_nd = nd;
  for (int k = 0; k < nd; ++k) {
    mxc__rep_box_axis(b, in[k], str[k], 0);
    b->out[k] = in[k];
    if (k == ax) mxc__rep_box_axis(b, repeats, 0, 1);
  }
  return __builtin_mul_overflow(in[ax], repeats, &b->out[ax])
             ? MXC__REP_BOX_OVERFLOW
             : MXC__REP_BOX_OK;
}

#endif /* MXC_OPS_SHAPE_REP_BOX_H_ */
