/* The plug-in's _contrib_BilinearResize2D and
 * _contrib_AdaptiveAvgPooling2D with their gradients (resize.cu over
 * resize_plan.h), float32. */
#ifndef MXC_BACKENDS_CUDA_RESIZE_H_
#define MXC_BACKENDS_CUDA_RESIZE_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (the CPU operator's inputs and outputs, float32,
 * (N, C, H, W) arrays) on gpu(c->dev), on the call's stream, ending with
 * mxc__cuda_finish. BilinearResize2D's 'like' input gets a zero gradient
 * (none in ADD mode), as on the CPU. Thread-safety: any thread. */
int mxc__cuda_resize(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_resize_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_adaptive_pool(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_adaptive_pool_bwd(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_RESIZE_ROWS                                              \
  {"_contrib_BilinearResize2D", NULL, mxc__cuda_resize},                   \
      {"_backward__contrib_BilinearResize2D", NULL, mxc__cuda_resize_bwd}, \
      {"_contrib_AdaptiveAvgPooling2D", NULL, mxc__cuda_adaptive_pool},    \
      {"_backward__contrib_AdaptiveAvgPooling2D", NULL,                    \
       mxc__cuda_adaptive_pool_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_RESIZE_H_ */
