/* The cuDNN functions the plug-in's kernels call (dnn_lib.h resolves
 * them from libcudnn.so.9), as X-macro lists with no header of their
 * own, so that the fake cuDNN of the tests (tests/gpu/fake_cudnn.c) can
 * define the same symbols: cudnnGetVersion first (the version check),
 * then the rest. */
#ifndef MXC_BACKENDS_CUDA_DNN_FNS_H_
#define MXC_BACKENDS_CUDA_DNN_FNS_H_

#define MXC__CUDNN_FNS(X) X(cudnnGetVersion) MXC__CUDNN_FNS_REST(X)

#define MXC__CUDNN_FNS_REST(X)                      \
  X(cudnnGetErrorString)                            \
  X(cudnnCreate)                                    \
  X(cudnnDestroy)                                   \
  X(cudnnSetStream)                                 \
  X(cudnnCreateTensorDescriptor)                    \
  X(cudnnDestroyTensorDescriptor)                   \
  X(cudnnSetTensorNdDescriptor)                     \
  X(cudnnCreateFilterDescriptor)                    \
  X(cudnnDestroyFilterDescriptor)                   \
  X(cudnnSetFilterNdDescriptor)                     \
  X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnDestroyConvolutionDescriptor)              \
  X(cudnnSetConvolutionNdDescriptor)                \
  X(cudnnSetConvolutionGroupCount)                  \
  X(cudnnSetConvolutionMathType)                    \
  X(cudnnGetConvolutionForwardAlgorithm_v7)         \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)    \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)  \
  X(cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                        \
  X(cudnnConvolutionBackwardData)                   \
  X(cudnnConvolutionBackwardFilter)                 \
  X(cudnnConvolutionBackwardBias)                   \
  X(cudnnAddTensor)                                 \
  X(cudnnCreatePoolingDescriptor)                   \
  X(cudnnDestroyPoolingDescriptor)                  \
  X(cudnnSetPoolingNdDescriptor)                    \
  X(cudnnPoolingForward)                            \
  X(cudnnPoolingBackward)                           \
  X(cudnnSoftmaxForward)                            \
  X(cudnnSoftmaxBackward)                           \
  X(cudnnBatchNormalizationForwardTraining)         \
  X(cudnnBatchNormalizationForwardInference)        \
  X(cudnnBatchNormalizationBackward)                \
  X(cudnnCreateOpTensorDescriptor)                  \
  X(cudnnDestroyOpTensorDescriptor)                 \
  X(cudnnSetOpTensorDescriptor)                     \
  X(cudnnOpTensor)

#endif /* MXC_BACKENDS_CUDA_DNN_FNS_H_ */
