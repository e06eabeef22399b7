/* The plug-in's broadcast binary kernels (bcast.cu): broadcast_add,
 * broadcast_sub, broadcast_mul, broadcast_div, and the rest of
 * ops/binary/binary_ops.h's list (scalar.h's MXC__CUDA_SAME_FWD:
 * broadcast_mod, _power, _maximum, _minimum, _hypot, the comparisons and
 * the logical operators, 1 or 0 in the input dtype) in float32, float16
 * and bfloat16 (computed in float, rounded once, as the CPU) with numpy's
 * broadcasting (bcast_plan.h), one table row each. Results are the CPU's
 * bitwise except broadcast_power and broadcast_hypot (CUDA's powf and
 * hypotf, within a few ulps of glibc's, as scalar.h says). */
#ifndef MXC_BACKENDS_CUDA_BCAST_H_
#define MXC_BACKENDS_CUDA_BCAST_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "backends/cuda/scalar.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (inputs lhs, rhs; one output) on gpu(c->dev) and waits
 * for it. Thread-safety: any thread (no state). */
int mxc__cuda_broadcast_add(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_broadcast_sub(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_broadcast_mul(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_broadcast_div(const mxc__gpu_call *c, char *why, size_t n);
#define MXC__CUDA_BCAST_DECL(name, stem) \
  int mxc__cuda_broadcast_##name(const mxc__gpu_call *c, char *why, size_t n);
MXC__CUDA_SAME_FWD(MXC__CUDA_BCAST_DECL)

/* The kernel table's rows (plugin.c): one dtype of float32, float16 and
 * bfloat16 for all three arrays (half_types.h). */
#define MXC__CUDA_BCAST_ROWS                                               \
  {"broadcast_add", mxc__half_supports_same, mxc__cuda_broadcast_add},     \
      {"broadcast_sub", mxc__half_supports_same, mxc__cuda_broadcast_sub}, \
      {"broadcast_mul", mxc__half_supports_same, mxc__cuda_broadcast_mul}, \
      {"broadcast_div", mxc__half_supports_same, mxc__cuda_broadcast_div}, \
      MXC__CUDA_SAME_FWD(MXC__CUDA_BCAST_ROW)
#define MXC__CUDA_BCAST_ROW(name, stem) \
  {"broadcast_" #name, mxc__half_supports_same, mxc__cuda_broadcast_##name},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BCAST_H_ */
