/* The plug-in's broadcast binary gradients (bgrad.cu):
 * _backward_broadcast_add, _sub, _mul, _div in float32, each gradient
 * reduced over the axes its operand was stretched along (bgrad_plan.h),
 * one table row each. */
#ifndef MXC_BACKENDS_CUDA_BGRAD_H_
#define MXC_BACKENDS_CUDA_BGRAD_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "backends/cuda/scalar.h"
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
/* The same for the rest of ops/binary/binary_ops.h's differentiable
 * operators (scalar.h's MXC__CUDA_SAME_GRAD: mod, power, maximum,
 * minimum, hypot), each partial scalar_hd.h's og * df/da (or df/db) in
 * float as the CPU's; power's and hypot's through CUDA's powf/hypotf
 * (a few ulps from glibc's). */
#define MXC__CUDA_BGRAD_DECL(name, stem)                                   \
  int mxc__cuda_backward_broadcast_##name(const mxc__gpu_call *c, char *why, \
                                          size_t n);
MXC__CUDA_SAME_GRAD(MXC__CUDA_BGRAD_DECL)

/* _backward_broadcast_to, _axis and _like (inputs ograd, data; output
 * ddata in data's shape, float32): ograd summed over the axes data was
 * repeated along (bgrad_plan.h's mxc__bgrad_expand_plan, sum.cu's
 * reduction: a fixed order, no atomics). Same contract as above. */
int mxc__cuda_backward_broadcast_expand(const mxc__gpu_call *c, char *why,
                                        size_t why_len);

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
       mxc__cuda_backward_broadcast_div},                      \
      MXC__CUDA_SAME_GRAD(MXC__CUDA_BGRAD_ROW)                 \
      {"_backward_broadcast_to", NULL,                         \
       mxc__cuda_backward_broadcast_expand},                   \
      {"_backward_broadcast_axis", NULL,                       \
       mxc__cuda_backward_broadcast_expand},                   \
      {"_backward_broadcast_like", NULL,                       \
       mxc__cuda_backward_broadcast_expand},
#define MXC__CUDA_BGRAD_ROW(name, stem)               \
  {"_backward_broadcast_" #name, mxc__half_supports_same, \
   mxc__cuda_backward_broadcast_##name},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BGRAD_H_ */
