/* The plug-in's UpSampling and _backward_UpSampling (up.cu over
 * up_plan.h), float32: nearest (any number of inputs, concat or sum) and
 * bilinear (the depthwise transposed convolution with its weight). */
#ifndef MXC_BACKENDS_CUDA_UP_H_
#define MXC_BACKENDS_CUDA_UP_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (the CPU operator's inputs and outputs, float32,
 * (N, C, H, W) arrays) on gpu(c->dev), on the call's stream, ending with
 * mxc__cuda_finish; each output in its own write mode. Thread-safety: any
 * thread (no state). */
int mxc__cuda_upsampling(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_upsampling_bwd(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_UP_ROWS                     \
  {"UpSampling", NULL, mxc__cuda_upsampling}, \
      {"_backward_UpSampling", NULL, mxc__cuda_upsampling_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_UP_H_ */
