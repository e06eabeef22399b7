/* The broadcast binary kernels' index plan (bcast.cu): numpy's rules as
 * the CPU's broadcast_add/sub/mul/div (ops/binary/broadcast.c), shapes
 * aligned at their last axes, an extent-1 axis repeated. The plan holds
 * the output's extents and each operand's element stride per axis (0
 * where it repeats), with axes of extent 1 dropped and neighbouring axes
 * that are contiguous for both operands merged, so the device work per
 * element is one division per kept axis.
 *
 * Plain C with no CUDA header, host-tested against the CPU operators
 * (tests/gpu:test_cuda_bcast_plan); MXC__HD functions run on both. */
#ifndef MXC_BACKENDS_CUDA_BCAST_PLAN_H_
#define MXC_BACKENDS_CUDA_BCAST_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"

#ifdef __CUDACC__
#define MXC__BC_HD __host__ __device__ __forceinline__
#else
#define MXC__BC_HD static inline
#endif

/* The operators, in the kernel table's order (bcast.h). */
enum { MXC__BC_ADD, MXC__BC_SUB, MXC__BC_MUL, MXC__BC_DIV };

typedef struct mxc__bcast_plan {
  int nd;                     /* kept axes, outermost first (>= 1) */
  int64_t ext[MXC_MAX_NDIM];  /* their extents */
  int64_t sa[MXC_MAX_NDIM];   /* lhs element strides (0: repeated) */
  int64_t sb[MXC_MAX_NDIM];   /* rhs element strides */
} mxc__bcast_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The plan of out = a (op) b: MXC_OK, or MXC_ERR_SHAPE with the reason in
 * why when a and b do not broadcast to out's shape. */
int mxc__bcast_plan_make(const mxc__gpu_array *a, const mxc__gpu_array *b,
                         const mxc__gpu_array *out, mxc__bcast_plan *p,
                         char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

/* Offsets into a and b of output element i (row-major). */
MXC__BC_HD void mxc__bcast_offsets(const mxc__bcast_plan *p, int64_t i,
                                   int64_t *ia, int64_t *ib) {
  int64_t oa = 0, ob = 0;
  for (int d = p->nd - 1; d >= 0; --d) {
    int64_t k = i % p->ext[d];
    i /= p->ext[d];
    oa += k * p->sa[d];
    ob += k * p->sb[d];
  }
  *ia = oa, *ib = ob;
}

/* The CPU's float32 operation (one rounding). */
MXC__BC_HD float mxc__bcast_apply(int op, float a, float b) {
  switch (op) {
    case MXC__BC_ADD: return a + b;
    case MXC__BC_SUB: return a - b;
    case MXC__BC_MUL: return a * b;
    default: return a / b;
  }
}

#endif /* MXC_BACKENDS_CUDA_BCAST_PLAN_H_ */
