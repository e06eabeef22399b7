/* take's and pick's index modes and the mapping of a raw index into an
 * axis, shared by the CPU operators (ops/indexing/internal.h includes it)
 * and the CUDA plug-in's kernels (backends/cuda/index_hd.h, compiled by
 * nvcc for the device too). Header-only because the plug-in cannot call
 * libmxc's hidden functions. An includer may define MXC__IDX_MODE_HD
 * (e.g. __host__ __device__) first. Thread-safety: pure. */
#ifndef MXC_OPS_INDEXING_INDEX_MODE_H_
#define MXC_OPS_INDEXING_INDEX_MODE_H_

#include <stdint.h>

#ifndef MXC__IDX_MODE_HD
#define MXC__IDX_MODE_HD static inline
#endif

/* Index modes of take and pick (the order of the parameter's choices). */
enum { MXC__IDX_CLIP = 0, MXC__IDX_WRAP = 1, MXC__IDX_RAISE = 2 };

/* Maps a raw index into [0, n) (n > 0): clip clamps; wrap takes it modulo
 * n (negative indices count from the end); raise accepts -n..n-1 (numpy's
 * rule) and returns -1 for anything else. */
MXC__IDX_MODE_HD int64_t mxc__idx_fix(int64_t v, int64_t n, int mode) {
  switch (mode) {
    case MXC__IDX_WRAP: {
      int64_t r = v % n;
      return r < 0 ? r + n : r;
    }
    case MXC__IDX_RAISE:
      if (v < -n || v >= n) return -1;
      return v < 0 ? v + n : v;
    default:
      return v < 0 ? 0 : (v >= n ? n - 1 : v);
  }
}

#endif /* MXC_OPS_INDEXING_INDEX_MODE_H_ */
