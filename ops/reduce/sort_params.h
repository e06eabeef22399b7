/* The parameter struct of sort, argsort, topk and their gradients
 * (sort.c) and their order's key, in a header of their own because the
 * CUDA plug-in's kernels read the struct and order by the same key
 * (backends/cuda/sort_plan.h, compiled by nvcc for the device): one text,
 * so both devices order NaN, -0 and ties alike. Header-only; an includer
 * may define MXC__SORT_HD (e.g. __host__ __device__ static inline) first.
 * Thread-safety: pure. */
#ifndef MXC_OPS_REDUCE_SORT_PARAMS_H_
#define MXC_OPS_REDUCE_SORT_PARAMS_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/op/param.h"

#ifndef MXC__SORT_HD
#define MXC__SORT_HD static inline
#endif

/* The operators, and topk's ret_typ values (in its enum's order). */
enum { MXC__SORT_SORT, MXC__SORT_ARGSORT, MXC__SORT_TOPK };
enum {
  MXC__SORT_RET_VALUE,
  MXC__SORT_RET_INDICES,
  MXC__SORT_RET_MASK,
  MXC__SORT_RET_BOTH
};

typedef struct mxc__sort_param {
  mxc__opt_int axis;
  int is_ascend;
  int dtype;   /* argsort, topk: dtype of indices */
  int64_t k;   /* topk */
  int ret_typ; /* topk: MXC__SORT_RET_* */
} mxc__sort_param;

/* Order-preserving int64 of a double: IEEE order for numbers (the bit
 * pattern, with negative values' magnitude bits flipped), -0 equal to +0,
 * and every NaN above +inf. */
MXC__SORT_HD int64_t mxc__sort_key_of_double(double v) {
  if (isnan(v)) return INT64_MAX;
  if (v == 0) return 0;
  int64_t i = 0;
  memcpy(&i, &v, sizeof i);
  return i < 0 ? i ^ INT64_MAX : i;
}

/* Descending order is ascending order of the complement (~k = -k - 1). */
MXC__SORT_HD int64_t mxc__sort_directed(int64_t key, int asc) {
  return asc ? key : ~key;
}

#endif /* MXC_OPS_REDUCE_SORT_PARAMS_H_ */
