/* Python's slice.indices on one axis, shared by the CPU's slice operators
 * (slice.c) and the CUDA plug-in's slice plans (backends/cuda/copy_plan.c).
 * Header-only because the plug-in is a separate library that cannot call
 * libmxc's hidden functions; one text keeps the two devices' boxes equal.
 * Thread-safety: pure. */
#ifndef MXC_OPS_SHAPE_PY_SLICE_H_
#define MXC_OPS_SHAPE_PY_SLICE_H_

#include <stdint.h>

/* start/stop (INT64_MIN for None) on an axis of extent n with a non-zero
 * step -> first index and count. */
static inline void mxc__py_slice(int64_t start, int64_t stop, int64_t step,
                                 int64_t n, int64_t *first, int64_t *count) {
  const int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? n - 1 : n;
  if (start == INT64_MIN) {
    start = step < 0 ? hi : lo;
  } else {
    if (start < 0) start += n;
    start = start < lo ? lo : start > hi ? hi : start;
  }
  if (stop == INT64_MIN) {
    stop = step < 0 ? lo : hi;
  } else {
    if (stop < 0) stop += n;
    stop = stop < lo ? lo : stop > hi ? hi : stop;
  }
  *first = start;
  if (step > 0) {
    *count = start < stop ? (stop - start - 1) / step + 1 : 0;
  } else { /* x / step == -(x / -step) for x >= 0, without forming -step
              (step may be INT64_MIN) */
    *count = stop < start ? -((start - stop - 1) / step) + 1 : 0;
  }
}

#endif /* MXC_OPS_SHAPE_PY_SLICE_H_ */
