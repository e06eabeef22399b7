/* The parameter structs of Pad and Crop (pad.c, crop.c) and their index
 * rules, in a header of their own because the CUDA plug-in's kernels read
 * the structs and run the rules too (backends/cuda/pad_plan.h, compiled
 * by nvcc for the device): one text for both devices. Header-only; an
 * includer may define MXC__PAD_HD (e.g. __host__ __device__ static
 * inline) first. Thread-safety: pure. */
#ifndef MXC_OPS_SHAPE_PAD_PARAMS_H_
#define MXC_OPS_SHAPE_PAD_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

#ifndef MXC__PAD_HD
#define MXC__PAD_HD static inline
#endif

/* Pad's modes, in the order of its enum parameter's names. */
enum { MXC__PAD_CONSTANT, MXC__PAD_EDGE, MXC__PAD_REFLECT };

typedef struct mxc__pad_param {
  int mode; /* MXC__PAD_* */
  mxc__tuple pad_width;
  double constant_value;
} mxc__pad_param;

/* Edge and reflect padding: the input index (extent n) of output index o
 * of an axis padded by `before` (reflect: one reflection suffices, the
 * pads being below the extent). */
MXC__PAD_HD int64_t mxc__pad_map(int mode, int64_t o, int64_t before,
                                 int64_t n) {
  int64_t i = o - before;
  if (mode == MXC__PAD_EDGE) return i < 0 ? 0 : i >= n ? n - 1 : i;
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

typedef struct mxc__crop_param {
  int64_t num_args;
  mxc__tuple offset, h_w;
  int center_crop;
} mxc__crop_param;

/* Crop's window in data (.., .., H, W): corner (y, x), size (h, w). */
typedef struct mxc__crop_window {
  int64_t y, x, h, w;
} mxc__crop_window;

/* The window for crop_like's last two extents (like_h, like_w; has_like)
 * or h_w, at offset or centred (not checked: the caller does). */
MXC__PAD_HD mxc__crop_window mxc__crop_window_of(const mxc__crop_param *p,
                                                 int64_t H, int64_t W,
                                                 int has_like, int64_t like_h,
                                                 int64_t like_w) {
  mxc__crop_window win;
  win.h = has_like ? like_h : p->h_w.d[0];
  win.w = has_like ? like_w : p->h_w.d[1];
  win.y = p->center_crop ? (H - win.h) / 2 : p->offset.d[0];
  win.x = p->center_crop ? (W - win.w) / 2 : p->offset.d[1];
  return win;
}

#endif /* MXC_OPS_SHAPE_PAD_PARAMS_H_ */
