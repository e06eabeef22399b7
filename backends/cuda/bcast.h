/* The plug-in's broadcast binary kernels (bcast.cu): broadcast_add,
 * broadcast_sub, broadcast_mul, broadcast_div in float32 with numpy's
 * broadcasting (bcast_plan.h), one table row each. */
#ifndef MXC_BACKENDS_CUDA_BCAST_H_
#define MXC_BACKENDS_CUDA_BCAST_H_

#include <stddef.h>

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

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_BCAST_ROWS                              \
  {"broadcast_add", NULL, mxc__cuda_broadcast_add},       \
      {"broadcast_sub", NULL, mxc__cuda_broadcast_sub},   \
      {"broadcast_mul", NULL, mxc__cuda_broadcast_mul},   \
      {"broadcast_div", NULL, mxc__cuda_broadcast_div},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BCAST_H_ */
