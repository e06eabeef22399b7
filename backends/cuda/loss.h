/* The kernels ResNet training needed besides the cuDNN/cuBLAS ones
 * (tests/gpu's ResNet-50 check found them missing): SoftmaxOutput and its
 * gradient (loss.cu, so_plan.h), and the operators that only copy their
 * input in another shape (reshape_copy.c: Reshape, Flatten, expand_dims,
 * squeeze and their gradients, through the element-wise _copy kernel). */
#ifndef MXC_BACKENDS_CUDA_LOSS_H_
#define MXC_BACKENDS_CUDA_LOSS_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SoftmaxOutput (data, label) -> output and _backward_SoftmaxOutput
 * (output, label) -> ddata, as ops/nn/softmax_loss.c computes them, with
 * every layout (multi_output, preserve_shape), class or probability
 * labels, use_ignore and smooth_alpha; normalization 'valid' is
 * MXC_ERR_UNSUPPORTED backward. float32 data and labels. Thread-safety:
 * any thread (no state). */
int mxc__cuda_softmax_output(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_softmax_output_bwd(const mxc__gpu_call *c, char *why,
                                 size_t why_len);

/* Input 0 copied into output 0 (same size, any shapes), in its write
 * mode: the forward (data) and backward (ograd, data) of the reshaping
 * operators. */
int mxc__cuda_reshape_copy(const mxc__gpu_call *c, char *why, size_t why_len);

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_LOSS_ROWS                                            \
  {"SoftmaxOutput", NULL, mxc__cuda_softmax_output},                   \
      {"_backward_SoftmaxOutput", NULL, mxc__cuda_softmax_output_bwd}, \
      {"Reshape", NULL, mxc__cuda_reshape_copy},                       \
      {"_backward_Reshape", NULL, mxc__cuda_reshape_copy},             \
      {"Flatten", NULL, mxc__cuda_reshape_copy},                       \
      {"_backward_Flatten", NULL, mxc__cuda_reshape_copy},             \
      {"expand_dims", NULL, mxc__cuda_reshape_copy},                   \
      {"_backward_expand_dims", NULL, mxc__cuda_reshape_copy},         \
      {"squeeze", NULL, mxc__cuda_reshape_copy},                       \
      {"_backward_squeeze", NULL, mxc__cuda_reshape_copy},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_LOSS_H_ */
