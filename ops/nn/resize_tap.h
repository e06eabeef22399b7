/* The bilinear taps of _contrib_BilinearResize2D, shared by the CPU
 * operator (resize.c) and the CUDA plug-in's element rules
 * (backends/cuda/resize_plan.h, compiled by nvcc for the device too).
 * Header-only because the plug-in cannot call libmxc's hidden functions;
 * one text keeps the two devices' sources and weights equal. An includer
 * may define MXC__RS_HD (e.g. __host__ __device__) first. Thread-safety:
 * pure. */
#ifndef MXC_OPS_NN_RESIZE_TAP_H_
#define MXC_OPS_NN_RESIZE_TAP_H_

#include <stdint.h>

#ifndef MXC__RS_HD
#define MXC__RS_HD static inline
#endif

/* The two source neighbours i0, i1 of an output position and the weight
 * l of i1. */
typedef struct mxc__rs_tap {
  int64_t i0, i1;
  double l;
} mxc__rs_tap;

/* Output position o (extent n) over input extent in: its neighbours and
 * the weight of the second (align: corners map to corners). */
MXC__RS_HD mxc__rs_tap mxc__rs_tap_of(int64_t o, int64_t in, int64_t n,
                                      int align) {
  double src;
  if (align) {
    src = n > 1 ? (double)o * (double)(in - 1) / (double)(n - 1) : 0;
  } else {
    src = ((double)o + 0.5) * (double)in / (double)n - 0.5;
    if (src < 0) src = 0;
  }
  mxc__rs_tap t;
  t.i0 = (int64_t)src;
  if (t.i0 > in - 1) t.i0 = in - 1;
  t.i1 = t.i0 < in - 1 ? t.i0 + 1 : t.i0;
  t.l = src - (double)t.i0;
  return t;
}

#endif /* MXC_OPS_NN_RESIZE_TAP_H_ */
