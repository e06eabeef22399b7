/* The plug-in's accepts table (core/base/gpu_plugin.h): the rows that
 * decline calls by their parameters and shapes, so that libmxc runs those
 * calls on the CPU (or, for the fused operator, unfused) instead of the
 * row failing in run. Each function runs the same check its row's run
 * makes (the plan functions), on a call without device pointers:
 *  - LeakyReLU, _backward_LeakyReLU: act_type prelu and rrelu (scalar.h);
 *  - _backward_SoftmaxOutput: normalization 'valid' with class labels
 *    (so_plan.h);
 *  - the cuDNN rows: what their plans answer MXC_ERR_UNSUPPORTED
 *    (Pooling's sum and lp and conventions cuDNN windows otherwise,
 *    softmax's temperature and use_length, BatchNorm's eps below 1e-5 or
 *    batch statistics over one element, a Deconvolution adj or
 *    target_shape cuDNN cannot reach, extents beyond int) (dnn_plan.h);
 *  - RNN, _backward_RNN: dropout in training, use_sequence_length, LSTM
 *    state clipping, sizes beyond cuDNN's int (dnn_rnn.h);
 *  - sort, argsort, topk and the gradients of sort and topk: rows longer
 *    than MXC__SORTK_MAX_LEN elements (nn3.h);
 *  - _fused_elemwise: a program the generator has no code for, or that
 *    NVRTC cannot compile here (fuse.h).
 * What stays a failure of run: a library that cannot be opened (cuBLAS,
 * cuDNN, cuSPARSE: their messages name what to install), cuDNN finding
 * no algorithm within its workspace, shapes the CPU refuses too. */
#ifndef MXC_BACKENDS_CUDA_ACCEPTS_H_
#define MXC_BACKENDS_CUDA_ACCEPTS_H_

#include "backends/cuda/dnn_plan.h"
#include "backends/cuda/dnn_rnn.h"
#include "backends/cuda/fuse.h"
#include "backends/cuda/nn3.h"
#include "backends/cuda/scalar.h"
#include "backends/cuda/so_plan.h"

#define MXC__CUDA_ACCEPTS_ROWS                                           \
  {"LeakyReLU", mxc__cuda_leaky_relu_accepts},                           \
      {"_backward_LeakyReLU", mxc__cuda_leaky_relu_bwd_accepts},         \
      {"_backward_SoftmaxOutput", mxc__so_bwd_accepts},                  \
      {"Convolution", mxc__dnn_conv_accepts},                            \
      {"_backward_Convolution", mxc__dnn_conv_bwd_accepts},              \
      {"Deconvolution", mxc__dnn_deconv_accepts},                        \
      {"_backward_Deconvolution", mxc__dnn_deconv_bwd_accepts},          \
      {"Pooling", mxc__dnn_pool_accepts},                                \
      {"_backward_Pooling", mxc__dnn_pool_bwd_accepts},                  \
      {"softmax", mxc__dnn_softmax_accepts},                             \
      {"_backward_softmax", mxc__dnn_softmax_accepts},                   \
      {"log_softmax", mxc__dnn_softmax_accepts},                         \
      {"_backward_log_softmax", mxc__dnn_softmax_accepts},               \
      {"BatchNorm", mxc__dnn_bn_accepts},                                \
      {"_backward_BatchNorm", mxc__dnn_bn_bwd_accepts},                  \
      {"RNN", mxc__cuda_rnn_accepts},                                    \
      {"_backward_RNN", mxc__cuda_rnn_bwd_accepts},                      \
      {"sort", mxc__cuda_sort_accepts},                                  \
      {"argsort", mxc__cuda_argsort_accepts},                            \
      {"topk", mxc__cuda_topk_accepts},                                  \
      {"_backward_sort", mxc__cuda_sort_bwd_accepts},                    \
      {"_backward_topk", mxc__cuda_topk_bwd_accepts},                    \
      {"_fused_elemwise", mxc__cuda_fused_accepts},

#endif /* MXC_BACKENDS_CUDA_ACCEPTS_H_ */
