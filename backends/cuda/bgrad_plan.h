/* The broadcast binary operators' gradients (bgrad.cu:
 * _backward_broadcast_add, _sub, _mul, _div; inputs ograd, lhs, rhs;
 * outputs dlhs in lhs's shape, drhs in rhs's), as the CPU computes them
 * (ops/binary/broadcast.c, bc_backward): each partial derivative
 * og * d(f)/d(operand) in float (the same-shape operators' float rows,
 * train_plan.h's mxc__bin_grad_a/b), summed in double over the axes the
 * operand was stretched along, rounded once to float; in add mode the
 * old value joins the double sum before that rounding (store_acc).
 *
 * The plan reuses the forward's two plans: the broadcast plan
 * (bcast_plan.h) maps an ograd element to its lhs and rhs elements, and
 * per gradient a reduction plan (sum_plan.h) over ograd's shape groups
 * the ograd elements of each operand element (the stretched axes
 * reduced, the others kept: the kept axes are the operand's own, so the
 * groups come in the operand's row-major order). Same-shape operands are
 * groups of one element, whose rounding is the CPU's float row's.
 *
 * A group is summed by one thread in order when it holds at most
 * MXC__BGRAD_THREAD_MAX elements, else by one block (256 strided double
 * partials, then sum.cu's fixed tree): the order is a function of the
 * plan, never of scheduling. The CPU sums in another order (rows of up to
 * 256 elements, then across rows), so groups of more than one element
 * may differ in the float's last bit.
 *
 * Plain C with no CUDA header, host-tested against the CPU operators
 * (tests/gpu:test_cuda_bgrad_plan); MXC__BGRAD_HD functions run on both
 * sides. */
#ifndef MXC_BACKENDS_CUDA_BGRAD_PLAN_H_
#define MXC_BACKENDS_CUDA_BGRAD_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/bcast_plan.h"
#include "backends/cuda/sum_plan.h"
#include "backends/cuda/train_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __CUDACC__
#define MXC__BGRAD_HD __host__ __device__ __forceinline__
#else
#define MXC__BGRAD_HD static inline
#endif

/* Groups of at most this many elements are summed by one thread. */
#define MXC__BGRAD_THREAD_MAX 32

typedef struct mxc__bgrad_plan {
  mxc__bcast_plan map;  /* ograd element -> lhs and rhs offsets */
  mxc__sum_plan red[2]; /* per gradient (0: lhs, 1: rhs): its groups */
  int per_thread[2];    /* 1: a thread per group; 0: a block per group */
} mxc__bgrad_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The plan of call c (inputs ograd, lhs, rhs; outputs dlhs, drhs):
 * MXC_OK, or MXC_ERR_SHAPE with the reason in why when lhs and rhs do not
 * broadcast to ograd's shape or a gradient's element count is not its
 * operand's. */
int mxc__bgrad_plan_make(const mxc__gpu_call *c, mxc__bgrad_plan *p,
                         char *why, size_t why_len);

/* The plan of _backward_broadcast_to, _axis and _like (inputs ograd,
 * data; output ddata in data's shape), as the CPU's expand_backward
 * (ops/shape/broadcast.c): ograd summed over the axes data was repeated
 * along, a sum_plan.h reduction of ograd (sum.cu runs it: double sums,
 * rounded once, then added in float in add mode, as the CPU's
 * mxc__shp_sum for float32). MXC_OK, or MXC_ERR_SHAPE /
 * MXC_ERR_INVALID_ARGUMENT with the reason in why. */
int mxc__bgrad_expand_plan(const mxc__gpu_call *c, mxc__sum_plan *p,
                           char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

/* The float partial of ograd element j for gradient x (0: lhs, 1: rhs)
 * of operator op (MXC__BG_*): what bgrad.cu's partial<Basic<op>>
 * computes for float32 (the same mxc__bcast_offsets and
 * mxc__bin_grad_a/b), the host tests' reference of it. */
MXC__BGRAD_HD float mxc__bgrad_partial(const mxc__bgrad_plan *p, int op,
                                       int x, const float *og,
                                       const float *a, const float *b,
                                       int64_t j) {
  int64_t ia, ib;
  mxc__bcast_offsets(&p->map, j, &ia, &ib);
  return x ? mxc__bin_grad_b(op, og[j], a[ia], b[ib])
           : mxc__bin_grad_a(op, og[j], a[ia], b[ib]);
}

/* A gradient element from its group's double sum: with the old value in
 * add mode, rounded once (the CPU's store_acc). */
MXC__BGRAD_HD float mxc__bgrad_final(double acc, int add, float old) {
  return (float)(add ? acc + (double)old : acc);
}

#endif /* MXC_BACKENDS_CUDA_BGRAD_PLAN_H_ */
