/* What the cuDNN kernels (dnn_conv.c, dnn_norm.c) hand to cuDNN,
 * computed from mxc's parameters and shapes by plain C with no CUDA
 * call: the risky part (dims, strides, pads, dilations, groups, windows,
 * modes, moving-average factors, write modes) is here so that it is
 * host-tested (tests/gpu/test_cuda_dnn_plan.cc runs naive versions of
 * the cuDNN routines that follow exactly these values and compares them
 * with mxc's CPU operators).
 *
 * cuDNN's legacy descriptors take int dims and need 4-D or 5-D tensors:
 * a 1-D convolution (N, C, W) is described as 2-D (N, C, 1, W) with a
 * kernel, pad, stride and dilation of (1, k), (0, p), (1, s), (1, d).
 * Tensors are compact row-major (NCHW / NCDHW), which is what mxc's
 * arrays are (core/base/gpu_plugin.h).
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_DNN_PLAN_H_
#define MXC_BACKENDS_CUDA_DNN_PLAN_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXC__DNN_MAX_DIMS 5

/* One tensor descriptor (cudnnSetTensorNdDescriptor) or, for the
 * filter, dims only (cudnnSetFilterNdDescriptor, NCHW: compact). */
typedef struct mxc__dnn_tensor {
  int dims[MXC__DNN_MAX_DIMS];
  int strides[MXC__DNN_MAX_DIMS];
} mxc__dnn_tensor;

/* A Convolution call as cuDNN sees it (CUDNN_CROSS_CORRELATION, the
 * same as mxc's CPU operator: no kernel flip). */
typedef struct mxc__dnn_conv_plan {
  int nbdims;                         /* tensor rank: 4 (1-D, 2-D) or 5 (3-D) */
  mxc__dnn_tensor x;                  /* data (N, C, spatial) */
  mxc__dnn_tensor w;                  /* weight (F, C / groups, kernel) */
  mxc__dnn_tensor y;                  /* output (N, F, out spatial) */
  mxc__dnn_tensor b;                  /* bias as (1, F, 1, ...) */
  int pad[3], stride[3], dilation[3]; /* nbdims - 2 entries */
  int groups;
  int has_bias;
  int batch_empty; /* N == 0: nothing to convolve (gradients are 0) */
} mxc__dnn_conv_plan;

/* Fills plan for Convolution with parameters `param` (the operator's
 * parsed and checked mxc__conv_param of ops/linalg/linalg.h, which only
 * dnn_plan.c includes: it is C11, not C++) over data of dims `data`
 * (ndim of them, from the call).
 * out_dims, when non-NULL, is the output array of the call: it must
 * match what the plan computes. MXC_OK; MXC_ERR_SHAPE when the shapes
 * do not fit the parameters; MXC_ERR_UNSUPPORTED (reason in why) when
 * cuDNN cannot describe the call: a dim or a tensor's element count
 * beyond int, a channel-last layout, an empty tensor other than the
 * batch. */
int mxc__dnn_conv_plan_make(const void *param, const int64_t *data, int ndim,
                            const mxc__gpu_array *out, mxc__dnn_conv_plan *plan,
                            char *why, size_t why_len);

/* Pooling modes, as cudnnPoolingMode_t names them. */
enum {
  MXC__DNN_POOL_MAX,             /* CUDNN_POOLING_MAX_DETERMINISTIC */
  MXC__DNN_POOL_AVG_INCLUDE_PAD, /* ..._AVERAGE_COUNT_INCLUDE_PADDING */
  MXC__DNN_POOL_AVG_EXCLUDE_PAD  /* ..._AVERAGE_COUNT_EXCLUDE_PADDING */
};

/* A Pooling call as cuDNN sees it: window o of an axis covers input
 * positions [o*stride - pad, o*stride - pad + window), padding excluded
 * from max, and cuDNN's output extent floor((in + 2*pad - window) /
 * stride) + 1. A 1-D call is 2-D with the axis last, as for
 * convolutions; global_pool is a window of the whole plane. */
typedef struct mxc__dnn_pool_plan {
  int nbdims;
  mxc__dnn_tensor x, y;
  int window[3], pad[3], stride[3]; /* nbdims - 2 entries */
  int mode;                         /* MXC__DNN_POOL_* */
} mxc__dnn_pool_plan;

/* Fills plan for Pooling with parameters `param` (the operator's parsed
 * mxc__pool_param) over data dims `data`; out as for convolutions.
 * MXC_ERR_UNSUPPORTED (reason in why) for what cuDNN computes otherwise
 * than the CPU operator: pool types sum and lp, a convention ('full',
 * 'same') whose windows differ from cuDNN's floor rule for this shape,
 * a pad as large as the window (windows of padding alone), channel-last
 * layouts, empty or beyond-int tensors. */
int mxc__dnn_pool_plan_make(const void *param, const int64_t *data, int ndim,
                            const mxc__gpu_array *out, mxc__dnn_pool_plan *plan,
                            char *why, size_t why_len);

/* A softmax or log_softmax call as cuDNN sees it: data of any rank
 * split around the axis into (outer, len, inner) and described as the
 * 4-D tensor (outer, len, inner, 1), normalized over its channel axis
 * (CUDNN_SOFTMAX_MODE_CHANNEL), compact. */
typedef struct mxc__dnn_softmax_plan {
  mxc__dnn_tensor t; /* 4 dims */
  int empty;         /* no element: nothing to compute */
} mxc__dnn_softmax_plan;

/* Fills plan for softmax/log_softmax with parameters `param` (the
 * operator's parsed mxc__softmax_param of ops/reduce/reduce_impl.h) over
 * data dims `data`. MXC_ERR_UNSUPPORTED for what cuDNN does not compute:
 * a temperature other than 1, use_length, an extent beyond int;
 * MXC_ERR_SHAPE for an axis out of range. */
int mxc__dnn_softmax_plan_make(const void *param, const int64_t *data, int ndim,
                               mxc__dnn_softmax_plan *plan, char *why,
                               size_t why_len);

/* A BatchNorm call as cuDNN sees it (CUDNN_BATCHNORM_SPATIAL): data of
 * any rank split around the channel axis into (outer, C, inner) and
 * described as (outer, C, inner, 1); per-channel tensors (1, C, 1, 1).
 *
 * The moving statistics: cuDNN's running variance is the unbiased one
 * (divided by m - 1) while mxc's CPU operator, like MXNet's, updates
 * with the biased one (divided by m). So the kernel asks cuDNN for the
 * batch statistics alone (exponential average factor 1 into scratch
 * buffers) and updates moving = keep * moving + take * batch with
 * cudnnAddTensor, the variance's take carrying (m - 1) / m. */
typedef struct mxc__dnn_bn_plan {
  mxc__dnn_tensor x, c;
  int64_t m;       /* elements per channel: outer * inner */
  int batch_stats; /* training mode and not use_global_stats */
  int fix_gamma;   /* gamma taken as 1; its gradient 0 */
  double eps;
  double mean_keep, mean_take, var_keep, var_take;
} mxc__dnn_bn_plan;

/* Fills plan for BatchNorm (or its backward) with parameters `param` (the
 * operator's parsed mxc__bn_param of ops/nn/nn.h) over data dims `data`,
 * in training mode when is_train. MXC_ERR_UNSUPPORTED for what cuDNN
 * does not compute as the CPU does: eps below cuDNN's minimum (1e-5),
 * batch statistics over fewer than 2 elements per channel (cuDNN's
 * unbiased variance divides by m - 1), extents beyond int, no element;
 * MXC_ERR_SHAPE for an axis out of range. */
int mxc__dnn_bn_plan_make(const void *param, const int64_t *data, int ndim,
                          int is_train, mxc__dnn_bn_plan *plan, char *why,
                          size_t why_len);

/* Deconvolution as the convolution it is the adjoint of: the plan's x is
 * the deconvolution's output (N, num_filter, out spatial: the image
 * side), y its data (N, C, spatial: the column side), w its weight
 * (C, num_filter / groups, kernel), which is cuDNN's filter of that
 * convolution, and b its bias (1, num_filter, 1, ...). The forward is
 * cudnnConvolutionBackwardData, the data gradient cudnnConvolutionForward,
 * the weight gradient cudnnConvolutionBackwardFilter with x and y so
 * swapped. pad is the operator's, or the one target_shape implies.
 * out, when non-NULL, is the output array (the image side). Besides what
 * convolutions refuse: MXC_ERR_UNSUPPORTED when adj or target_shape
 * give an output extent from which cuDNN's convolution would not come
 * back to the data's extent (adj >= stride, or an odd padding total with
 * stride 1). */
int mxc__dnn_deconv_plan_make(const void *param, const int64_t *data, int ndim,
                              const mxc__gpu_array *out,
                              mxc__dnn_conv_plan *plan, char *why,
                              size_t why_len);

/* ---- data types ----
 *
 * What the cuDNN kernels hand to cuDNN for a call's dtypes, as the CPU
 * operators compute them: float16 and bfloat16 arrays are computed in
 * float32 and rounded once (core/op/half_compute.h), BatchNorm keeps
 * gamma, beta, the statistics and their gradients in float32 for half
 * data (ops/nn/batch_norm.c), softmax rounds its result once to the
 * output dtype. */

/* cuDNN's data types as cudnnDataType_t numbers them (dnn_lib.c checks
 * the values against cudnn_graph.h when it is compiled). */
enum {
  MXC__DNN_DT_FLOAT = 0,
  MXC__DNN_DT_HALF = 2,
  MXC__DNN_DT_BFLOAT16 = 9
};

/* The kernels' families of array dtypes. */
enum {
  MXC__DNN_OP_SAME,  /* every array one dtype: Convolution, Deconvolution,
                        Pooling, softmax, log_softmax, their gradients */
  MXC__DNN_OP_BN,    /* BatchNorm: data and out of the data's dtype */
  MXC__DNN_OP_BN_BWD /* _backward_BatchNorm: ograd, data, output, ddata */
};

typedef struct mxc__dnn_types {
  int data;    /* MXC__DNN_DT_* of the data-side tensors and filters */
  int compute; /* a convolution's compute type (its accumulation):
                  MXC__DNN_DT_FLOAT for every data type (cuDNN's
                  PSEUDO_HALF and PSEUDO_BFLOAT16 configurations), as
                  the CPU's float32 kernels under half_compute.h */
  int stats;   /* BatchNorm's per-channel tensors: MXC__DNN_DT_FLOAT
                  (cuDNN asks float32 of them for half data, and mxc's
                  BatchNorm keeps them float32) */
  int tensor_math; /* convolutions: 0 for float32 (CUDNN_FMA_MATH: no
                      TF32, whose 10-bit products the CPU does not make),
                      1 for half data (CUDNN_TENSOR_OP_MATH: products of
                      half values are exact in float32, summed in float32) */
  int elem;        /* bytes of one data element */
} mxc__dnn_types;

/* The types of a call of family `op` (MXC__DNN_OP_*) whose arrays have
 * dtypes[] (MXC_DTYPE_*: n_in inputs, then n_out outputs; -1 where not
 * decided yet, for a row's supports). MXC_OK and *t (data FLOAT when no
 * data dtype is decided); MXC_ERR_UNSUPPORTED with the reason in why
 * when the kernels do not take them: a data dtype other than float32,
 * float16 and bfloat16, data arrays of different dtypes, BatchNorm's
 * per-channel arrays not float32. */
int mxc__dnn_types_make(int op, const int *dtypes, int n_in, int n_out,
                        mxc__dnn_types *t, char *why, size_t why_len);

/* mxc__dnn_types_make over the arrays of call c. */
int mxc__dnn_call_types(int op, const mxc__gpu_call *c, mxc__dnn_types *t,
                        char *why, size_t why_len);

/* The kernel rows' supports (core/base/gpu_plugin.h): 1 when
 * mxc__dnn_types_make takes the dtypes for the family. */
int mxc__dnn_supports_same(const int *dtypes, int n_in, int n_out);
int mxc__dnn_supports_bn(const int *dtypes, int n_in, int n_out);
int mxc__dnn_supports_bn_bwd(const int *dtypes, int n_in, int n_out);

/* The kernel rows' accepts (core/base/gpu_plugin.h): 0, with the plan's
 * reason in why, for a call whose plan answers MXC_ERR_UNSUPPORTED (what
 * cuDNN computes otherwise than the CPU: Pooling's sum and lp, softmax's
 * temperature, BatchNorm's eps below 1e-5, ...), so that libmxc runs it
 * on the CPU; 1 otherwise (and without shapes). */
int mxc__dnn_conv_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_conv_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_deconv_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_deconv_bwd_accepts(const mxc__gpu_call *c, char *why,
                                size_t len);
int mxc__dnn_pool_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_pool_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_softmax_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_bn_accepts(const mxc__gpu_call *c, char *why, size_t len);
int mxc__dnn_bn_bwd_accepts(const mxc__gpu_call *c, char *why, size_t len);

/* cuDNN's output = alpha * result + beta * output: the beta of write mode
 * req (0 for WRITE and INPLACE, 1 for ADD); -1 for NULL (skip). */
int mxc__dnn_beta(int req);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_DNN_PLAN_H_ */
