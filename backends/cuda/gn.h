/* The plug-in's GroupNorm, InstanceNorm, LRN and their gradients (gn.cu
 * over gn_plan.h), float32, with the hidden statistics outputs. */
#ifndef MXC_BACKENDS_CUDA_GN_H_
#define MXC_BACKENDS_CUDA_GN_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (the CPU operator's inputs and outputs, float32) on
 * gpu(c->dev), on the call's stream, ending with mxc__cuda_finish; each
 * output in its own write mode. Thread-safety: any thread (no state). */
int mxc__cuda_group_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_group_norm_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_instance_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_instance_norm_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_lrn(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_lrn_bwd(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_GN_ROWS                                            \
  {"GroupNorm", NULL, mxc__cuda_group_norm},                         \
      {"_backward_GroupNorm", NULL, mxc__cuda_group_norm_bwd},       \
      {"InstanceNorm", NULL, mxc__cuda_instance_norm},               \
      {"_backward_InstanceNorm", NULL, mxc__cuda_instance_norm_bwd}, \
      {"LRN", NULL, mxc__cuda_lrn},                                  \
      {"_backward_LRN", NULL, mxc__cuda_lrn_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_GN_H_ */
