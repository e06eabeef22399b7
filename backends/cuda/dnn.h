/* The plug-in's cuDNN kernels (dnn_conv.c, dnn_norm.c), listed in the
 * kernel table of plugin.c by MXC__CUDA_DNN_ROWS.
 *
 * cuDNN 9 (libcudnn.so.9) is opened on first use through dynlib.h, not
 * linked: where it is missing the plug-in still loads and these kernels
 * answer MXC_ERR_UNSUPPORTED naming the library and what to install.
 * The descriptor values come from dnn_plan.h (host-tested).
 *
 * Thread-safety: the kernels may run on several threads at once. Each
 * thread has its own cuDNN handle per device (created on first use,
 * destroyed when the thread exits); the workspace is one cached device
 * buffer per device, held under a mutex for the whole call. */
#ifndef MXC_BACKENDS_CUDA_DNN_H_
#define MXC_BACKENDS_CUDA_DNN_H_

#include <stddef.h>

#include "backends/cuda/dnn_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Convolution: inputs (data, weight[, bias]), output (out). float32,
 * float16 or bfloat16 (float32 accumulation), 1-D to 3-D, channel-first,
 * any stride, pad, dilate and num_group. */
int mxc__cuda_conv_forward(const mxc__gpu_call *c, char *why, size_t why_len);
/* _backward_Convolution: inputs (ograd, data, weight[, bias]), outputs
 * (ddata, dweight[, dbias]), each in its own write mode. */
int mxc__cuda_conv_backward(const mxc__gpu_call *c, char *why, size_t why_len);

/* Deconvolution: inputs (data, weight[, bias]), output out, as the
 * adjoint of a convolution (dnn_plan.h); _backward_Deconvolution: inputs
 * (ograd, data, weight[, bias]), outputs (ddata, dweight[, dbias]). */
int mxc__cuda_deconv_forward(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_deconv_backward(const mxc__gpu_call *c, char *why,
                              size_t why_len);

/* Pooling: input data, output out; max or avg (with or without the
 * padding in the divisor), global_pool, conventions whose windows are
 * cuDNN's (dnn_plan.h); other calls answer MXC_ERR_UNSUPPORTED. */
int mxc__cuda_pool_forward(const mxc__gpu_call *c, char *why, size_t why_len);
/* _backward_Pooling: inputs (ograd, data), output ddata. */
int mxc__cuda_pool_backward(const mxc__gpu_call *c, char *why, size_t why_len);

/* softmax and log_softmax along any axis (temperature 1, no use_length;
 * other calls answer MXC_ERR_UNSUPPORTED), and their gradients: inputs
 * (ograd[, data], output), output dx. */
int mxc__cuda_softmax_forward(const mxc__gpu_call *c, char *why,
                              size_t why_len);
int mxc__cuda_softmax_backward(const mxc__gpu_call *c, char *why,
                               size_t why_len);
int mxc__cuda_log_softmax_forward(const mxc__gpu_call *c, char *why,
                                  size_t why_len);
int mxc__cuda_log_softmax_backward(const mxc__gpu_call *c, char *why,
                                   size_t why_len);

/* BatchNorm (training and inference, as the call's is_train says) and its
 * gradient; the operator's semantics (ops/nn/batch_norm.c: the var
 * output is the inverse std, the moving variance is updated with the
 * biased batch variance) through cuDNN's spatial batch norm. */
int mxc__cuda_bn_forward(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_bn_backward(const mxc__gpu_call *c, char *why, size_t why_len);

/* The rows of the plug-in's kernel table: float32, float16 and bfloat16
 * (dnn_plan.h's supports: one dtype for every array, BatchNorm's
 * per-channel arrays float32). */
#define MXC__CUDA_DNN_ROWS                                                  \
  {"Convolution", mxc__dnn_supports_same, mxc__cuda_conv_forward},          \
      {"_backward_Convolution", mxc__dnn_supports_same,                     \
       mxc__cuda_conv_backward},                                            \
      {"Deconvolution", mxc__dnn_supports_same, mxc__cuda_deconv_forward},  \
      {"_backward_Deconvolution", mxc__dnn_supports_same,                   \
       mxc__cuda_deconv_backward},                                          \
      {"Pooling", mxc__dnn_supports_same, mxc__cuda_pool_forward},          \
      {"_backward_Pooling", mxc__dnn_supports_same,                         \
       mxc__cuda_pool_backward},                                            \
      {"softmax", mxc__dnn_supports_same, mxc__cuda_softmax_forward},       \
      {"_backward_softmax", mxc__dnn_supports_same,                         \
       mxc__cuda_softmax_backward},                                         \
      {"log_softmax", mxc__dnn_supports_same, mxc__cuda_log_softmax_forward}, \
      {"_backward_log_softmax", mxc__dnn_supports_same,                     \
       mxc__cuda_log_softmax_backward},                                     \
      {"BatchNorm", mxc__dnn_supports_bn, mxc__cuda_bn_forward},            \
      {"_backward_BatchNorm", mxc__dnn_supports_bn_bwd,                     \
       mxc__cuda_bn_backward},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_DNN_H_ */
