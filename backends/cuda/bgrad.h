/* The plug-in's broadcast binary gradients (bgrad.cu):
 * _backward_broadcast_add, _sub, _mul, _div in float32, each gradient
 * reduced over the axes its operand was stretched along (bgrad_plan.h),
 * one table row each. */
#ifndef MXC_BACKENDS_CUDA_BGRAD_H_
#define MXC_BACKENDS_CUDA_BGRAD_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (inputs ograd, lhs, rhs; outputs dlhs, drhs in the
 * operands' shapes, each in its own write mode) on gpu(c->dev), on the
 * call's stream, ending with mxc__cuda_finish (cuda_rt.h). Thread-safety:
 * any thread (no state). */
int mxc__cuda_backward_broadcast_add(const mxc__gpu_call *c, char *why,
                                     size_t n);
int mxc__cuda_backward_broadcast_sub(const mxc__gpu_call *c, char *why,
                                     size_t n);
int mxc__cuda_backward_broadcast_mul(const mxc__gpu_call *c, char *why,
                                     size_t n);
int mxc__cuda_backward_broadcast_div(const mxc__gpu_call *c, char *why,
                                     size_t n);

/* The kernel table's rows (plugin.c): one dtype of float32, float16 and
 * bfloat16 for every array (half_types.h). */
#define MXC__CUDA_BGRAD_ROWS                                   \
  {"_backward_broadcast_add", mxc__half_supports_same,         \
   mxc__cuda_backward_broadcast_add},                          \
      {"_backward_broadcast_sub", mxc__half_supports_same,     \
       mxc__cuda_backward_broadcast_sub},                      \
      {"_backward_broadcast_mul", mxc__half_supports_same,     \
       mxc__cuda_backward_broadcast_mul},                      \
      {"_backward_broadcast_div", mxc__half_supports_same,     \
       mxc__cuda_backward_broadcast_div},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BGRAD_H_ */
