/* cuDNN kernels of the plug-in (dnn.h): Convolution, Deconvolution and
 * their gradients through cuDNN 9's descriptor API
 * (cudnnConvolutionForward, BackwardData, BackwardFilter, BackwardBias),
 * algorithms chosen by the cudnnGet*Algorithm_v7 heuristics.
 *
 * Precision: for float32 the convolution descriptor asks for
 * CUDNN_FMA_MATH, so no TF32 tensor-core kernel is used (TF32 keeps 10
 * mantissa bits, far from what the CPU computes); results then differ
 * from the CPU's only by summation order. float16 and bfloat16 data
 * (dnn_plan.h's types) are convolved with a float32 compute type (cuDNN's
 * PSEUDO_HALF / PSEUDO_BFLOAT16 configurations: float32 accumulation,
 * one rounding into the half output, as the CPU's float32 kernel under
 * half_compute.h) and may use tensor cores (CUDNN_TENSOR_OP_MATH), whose
 * products of half values are exact in float32. */
#include <stdio.h>

#include "backends/cuda/dnn.h"
#include "backends/cuda/dnn_lib.h"

/* ---- descriptors of one call ---- */

typedef struct conv_descs {
  cudnnTensorDescriptor_t x, y, b;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
} conv_descs;

static void descs_free(conv_descs *d) {
  if (d->x) (void)DN(cudnnDestroyTensorDescriptor)(d->x);
  if (d->y) (void)DN(cudnnDestroyTensorDescriptor)(d->y);
  if (d->b) (void)DN(cudnnDestroyTensorDescriptor)(d->b);
  if (d->w) (void)DN(cudnnDestroyFilterDescriptor)(d->w);
  if (d->conv) (void)DN(cudnnDestroyConvolutionDescriptor)(d->conv);
}

/* Every descriptor of plan p into d (zeroed by the caller; descs_free
 * releases what was made, also after a failure). */
static int descs_make(const mxc__dnn_conv_plan *p, const mxc__dnn_types *ty,
                      conv_descs *d, char *why, size_t len) {
  int rc = mxc__cudnn_tensor_desc(p->nbdims, &p->x, ty->data, &d->x, why, len);
  if (rc == MXC_OK) {
    rc = mxc__cudnn_tensor_desc(p->nbdims, &p->y, ty->data, &d->y, why, len);
  }
  if (rc == MXC_OK && p->has_bias) {
    rc = mxc__cudnn_tensor_desc(p->nbdims, &p->b, ty->data, &d->b, why, len);
  }
  if (rc != MXC_OK) return rc;
  DN_TRY(DN(cudnnCreateFilterDescriptor)(&d->w), "cudnnCreateFilterDescriptor");
  DN_TRY(DN(cudnnSetFilterNdDescriptor)(d->w, (cudnnDataType_t)ty->data,
                                        CUDNN_TENSOR_NCHW, p->nbdims,
                                        p->w.dims),
         "cudnnSetFilterNdDescriptor");
  DN_TRY(DN(cudnnCreateConvolutionDescriptor)(&d->conv),
         "cudnnCreateConvolutionDescriptor");
  DN_TRY(DN(cudnnSetConvolutionNdDescriptor)(
             d->conv, p->nbdims - 2, p->pad, p->stride, p->dilation,
             CUDNN_CROSS_CORRELATION, (cudnnDataType_t)ty->compute),
         "cudnnSetConvolutionNdDescriptor");
  DN_TRY(DN(cudnnSetConvolutionGroupCount)(d->conv, p->groups),
         "cudnnSetConvolutionGroupCount");
  DN_TRY(DN(cudnnSetConvolutionMathType)(
             d->conv, ty->tensor_math ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
         "cudnnSetConvolutionMathType");
  return MXC_OK;
}

/* ---- algorithms ---- */

/* The most workspace an algorithm may ask for: beyond it, the next
 * algorithm of the heuristic's list is taken. */
#define MAX_WORKSPACE ((size_t)1 << 30)
#define N_PERF 16

/* The first usable entry of a heuristic's list (fastest first): it must
 * have run the query successfully, stay in FMA math for float32 (no TF32;
 * tensor cores are allowed for half data: `tensor`), never convert
 * float32 data down to half (ALLOW_CONVERSION) and fit the workspace
 * limit. Index, or -1. The three perf structs of cuDNN share these
 * fields. */
#define PICK(perf, n, tensor, out)                                        \
  do {                                                                    \
    (out) = -1;                                                           \
    for (int i_ = 0; i_ < (n) && (out) < 0; ++i_) {                       \
      if ((perf)[i_].status == CUDNN_STATUS_SUCCESS &&                    \
          ((tensor) || (perf)[i_].mathType != CUDNN_TENSOR_OP_MATH) &&    \
          (perf)[i_].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && \
          (perf)[i_].memory <= MAX_WORKSPACE)                             \
        (out) = i_;                                                       \
    }                                                                     \
  } while (0)

static int no_algo(char *why, size_t len, const char *what, int tensor) {
  snprintf(why, len,
           "cuDNN has no %s algorithm for this convolution in %s within "
           "%zu MiB of workspace",
           what,
           tensor ? "half data with float32 accumulation"
                  : "float32 FMA math",
           MAX_WORKSPACE >> 20);
  return MXC_ERR_UNSUPPORTED;
}

/* ---- one call: device, handle, descriptors, workspace ---- */

typedef struct conv_call {
  mxc__dnn_conv_plan plan;
  mxc__dnn_types ty;
  cudnnHandle_t h;
  conv_descs d;
  mxc__cudnn_ws *ws; /* locked */
} conv_call;

/* Everything before the cuDNN calls, for the plan k->plan (made by the
 * caller first: a call cuDNN cannot describe is refused without touching
 * the device); on failure nothing is held. */
static int call_begin(const mxc__gpu_call *c, conv_call *k, char *why,
                      size_t len) {
  int rc = mxc__dnn_call_types(MXC__DNN_OP_SAME, c, &k->ty, why, len);
  if (rc == MXC_OK) rc = mxc__cudnn_begin(c->dev, &k->h, why, len);
  if (rc != MXC_OK) return rc;
  k->d = (conv_descs){0};
  if ((rc = descs_make(&k->plan, &k->ty, &k->d, why, len)) != MXC_OK) {
    descs_free(&k->d);
    return rc;
  }
  k->ws = mxc__cudnn_workspace(c->dev);
  pthread_mutex_lock(&k->ws->mu);
  return MXC_OK;
}

/* Waits for the call's work (ABI v1: results are in device memory when
 * run returns) while the workspace is still held, then releases all. */
static int call_end(conv_call *k, int rc, char *why, size_t len) {
  rc = mxc__cuda_wait(rc, "cuDNN convolution", why, len);
  pthread_mutex_unlock(&k->ws->mu);
  descs_free(&k->d);
  return rc;
}

/* ---- the three convolution routines, in the plan's roles ----
 *
 * x: image side (a convolution's data, a deconvolution's output), y:
 * column side, w: cuDNN's filter. Each picks its algorithm, sizes the
 * workspace and runs with out = result + beta * out. */

/* The workspace for an algorithm: the heuristic's figure or the
 * algorithm's own size query, whichever is larger (the first has been an
 * underestimate in some cuDNN versions). */
static int reserve_for(conv_call *k, size_t heuristic, size_t queried,
                       char *why, size_t len) {
  return mxc__cudnn_ws_reserve(k->ws, queried > heuristic ? queried : heuristic,
                               why, len);
}

/* y = conv(x, w). */
static int conv_fwd(conv_call *k, const void *x, const void *w, float beta,
                    void *y, char *why, size_t len) {
  cudnnConvolutionFwdAlgoPerf_t perf[N_PERF];
  int n = 0, i;
  DN_TRY(DN(cudnnGetConvolutionForwardAlgorithm_v7)(
             k->h, k->d.x, k->d.w, k->d.conv, k->d.y, N_PERF, &n, perf),
         "cudnnGetConvolutionForwardAlgorithm_v7");
  PICK(perf, n, k->ty.tensor_math, i);
  if (i < 0) return no_algo(why, len, "forward", k->ty.tensor_math);
  size_t bytes = 0;
  DN_TRY(DN(cudnnGetConvolutionForwardWorkspaceSize)(
             k->h, k->d.x, k->d.w, k->d.conv, k->d.y, perf[i].algo, &bytes),
         "cudnnGetConvolutionForwardWorkspaceSize");
  int rc = reserve_for(k, perf[i].memory, bytes, why, len);
  if (rc != MXC_OK) return rc;
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionForward)(k->h, &one, k->d.x, x, k->d.w, w,
                                     k->d.conv, perf[i].algo, k->ws->ptr,
                                     k->ws->bytes, &beta, k->d.y, y),
         "cudnnConvolutionForward");
  return MXC_OK;
}

/* dx = conv^T(dy, w): a convolution's data gradient, a deconvolution's
 * forward. */
static int conv_bwd_data(conv_call *k, const void *w, const void *dy,
                         float beta, void *dx, char *why, size_t len) {
  cudnnConvolutionBwdDataAlgoPerf_t perf[N_PERF];
  int n = 0, i;
  DN_TRY(DN(cudnnGetConvolutionBackwardDataAlgorithm_v7)(
             k->h, k->d.w, k->d.y, k->d.conv, k->d.x, N_PERF, &n, perf),
         "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  PICK(perf, n, k->ty.tensor_math, i);
  if (i < 0) return no_algo(why, len, "backward-data", k->ty.tensor_math);
  size_t bytes = 0;
  DN_TRY(DN(cudnnGetConvolutionBackwardDataWorkspaceSize)(
             k->h, k->d.w, k->d.y, k->d.conv, k->d.x, perf[i].algo, &bytes),
         "cudnnGetConvolutionBackwardDataWorkspaceSize");
  int rc = reserve_for(k, perf[i].memory, bytes, why, len);
  if (rc != MXC_OK) return rc;
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionBackwardData)(k->h, &one, k->d.w, w, k->d.y, dy,
                                          k->d.conv, perf[i].algo, k->ws->ptr,
                                          k->ws->bytes, &beta, k->d.x, dx),
         "cudnnConvolutionBackwardData");
  return MXC_OK;
}

/* dw = the filter gradient from x and dy. */
static int conv_bwd_filter(conv_call *k, const void *x, const void *dy,
                           float beta, void *dw, char *why, size_t len) {
  cudnnConvolutionBwdFilterAlgoPerf_t perf[N_PERF];
  int n = 0, i;
  DN_TRY(DN(cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
             k->h, k->d.x, k->d.y, k->d.conv, k->d.w, N_PERF, &n, perf),
         "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  PICK(perf, n, k->ty.tensor_math, i);
  if (i < 0) return no_algo(why, len, "backward-filter", k->ty.tensor_math);
  size_t bytes = 0;
  DN_TRY(DN(cudnnGetConvolutionBackwardFilterWorkspaceSize)(
             k->h, k->d.x, k->d.y, k->d.conv, k->d.w, perf[i].algo, &bytes),
         "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  int rc = reserve_for(k, perf[i].memory, bytes, why, len);
  if (rc != MXC_OK) return rc;
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionBackwardFilter)(k->h, &one, k->d.x, x, k->d.y, dy,
                                            k->d.conv, perf[i].algo, k->ws->ptr,
                                            k->ws->bytes, &beta, k->d.w, dw),
         "cudnnConvolutionBackwardFilter");
  return MXC_OK;
}

/* out (described by od) += bias broadcast over (1, channels, 1, ...),
 * after the convolution (in add mode too: out_old + conv + bias, as the
 * CPU). */
static int add_bias(conv_call *k, const void *b, cudnnTensorDescriptor_t od,
                    void *out, char *why, size_t len) {
  const float one = 1.f;
  DN_TRY(DN(cudnnAddTensor)(k->h, &one, k->d.b, b, &one, od, out),
         "cudnnAddTensor");
  return MXC_OK;
}

/* db = sums of g (described by gd) over all but the channel axis. */
static int bias_grad(conv_call *k, cudnnTensorDescriptor_t gd, const void *g,
                     float beta, void *db, char *why, size_t len) {
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionBackwardBias)(k->h, &one, gd, g, &beta, k->d.b, db),
         "cudnnConvolutionBackwardBias");
  return MXC_OK;
}

/* An empty batch: the weight and bias gradients are sums over nothing,
 * 0 (written unless adding); the data gradient has no element. */
static int bwd_empty(const mxc__gpu_call *c, char *why, size_t len) {
  mxc__dnn_types ty;
  int rc = mxc__dnn_call_types(MXC__DNN_OP_SAME, c, &ty, why, len);
  for (int o = 1; rc == MXC_OK && o < c->n_out; ++o) {
    if (mxc__dnn_beta(c->req[o]) != 0 || c->out[o].size == 0) continue;
    if ((rc = mxc__cuda_use_device(c->dev, why, len)) != MXC_OK) return rc;
    /* all-zero bits are +0 in float32, float16 and bfloat16 */
    cudaError_t e = cudaMemsetAsync(c->out[o].ptr, 0,
                                    (size_t)c->out[o].size * (size_t)ty.elem,
                                    mxc__cuda_stream());
    if (e != cudaSuccess) return mxc__cuda_rt_fail(why, len, "cudaMemset", e);
    if ((rc = mxc__cuda_wait(MXC_OK, "cudaMemset", why, len)) != MXC_OK) {
      return rc;
    }
  }
  return rc;
}

/* The write modes of a backward's outputs as betas (-1: NULL); 0 when
 * nothing is to be written. */
static int bwd_betas(const mxc__gpu_call *c, int beta[3]) {
  beta[0] = beta[1] = beta[2] = -1;
  for (int o = 0; o < c->n_out && o < 3; ++o)
    beta[o] = mxc__dnn_beta(c->req[o]);
  return beta[0] >= 0 || beta[1] >= 0 || beta[2] >= 0;
}

/* ---- Convolution ---- */

int mxc__cuda_conv_forward(const mxc__gpu_call *c, char *why, size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  conv_call k;
  int rc = mxc__dnn_conv_plan_make(c->param, c->in[0].dims, c->in[0].ndim,
                                   &c->out[0], &k.plan, why, why_len);
  if (rc == MXC_OK) rc = call_begin(c, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = conv_fwd(&k, c->in[0].ptr, c->in[1].ptr, (float)beta, c->out[0].ptr, why,
                why_len);
  if (rc == MXC_OK && k.plan.has_bias) {
    rc = add_bias(&k, c->in[2].ptr, k.d.y, c->out[0].ptr, why, why_len);
  }
  return call_end(&k, rc, why, why_len);
}

/* _backward_Convolution: inputs (ograd, data, weight[, bias]). */
int mxc__cuda_conv_backward(const mxc__gpu_call *c, char *why, size_t why_len) {
  int beta[3];
  if (!bwd_betas(c, beta)) return MXC_OK;
  /* An empty batch needs no cuDNN (which cannot describe it). */
  if (c->in[1].ndim > 0 && c->in[1].dims[0] == 0) {
    return bwd_empty(c, why, why_len);
  }
  conv_call k;
  /* The plan checks ograd (input 0) against the output it computes. */
  int rc = mxc__dnn_conv_plan_make(c->param, c->in[1].dims, c->in[1].ndim,
                                   &c->in[0], &k.plan, why, why_len);
  if (rc == MXC_OK) rc = call_begin(c, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  const void *dy = c->in[0].ptr;
  if (beta[0] >= 0) {
    rc = conv_bwd_data(&k, c->in[2].ptr, dy, (float)beta[0], c->out[0].ptr, why,
                       why_len);
  }
  if (rc == MXC_OK && beta[1] >= 0) {
    rc = conv_bwd_filter(&k, c->in[1].ptr, dy, (float)beta[1], c->out[1].ptr,
                         why, why_len);
  }
  if (rc == MXC_OK && beta[2] >= 0 && k.plan.has_bias) {
    rc = bias_grad(&k, k.d.y, dy, (float)beta[2], c->out[2].ptr, why, why_len);
  }
  return call_end(&k, rc, why, why_len);
}

/* ---- Deconvolution: the same routines with the roles swapped ---- */

int mxc__cuda_deconv_forward(const mxc__gpu_call *c, char *why,
                             size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  conv_call k;
  int rc = mxc__dnn_deconv_plan_make(c->param, c->in[0].dims, c->in[0].ndim,
                                     &c->out[0], &k.plan, why, why_len);
  if (rc == MXC_OK) rc = call_begin(c, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = conv_bwd_data(&k, c->in[1].ptr, c->in[0].ptr, (float)beta, c->out[0].ptr,
                     why, why_len);
  if (rc == MXC_OK && k.plan.has_bias) {
    rc = add_bias(&k, c->in[2].ptr, k.d.x, c->out[0].ptr, why, why_len);
  }
  return call_end(&k, rc, why, why_len);
}

/* _backward_Deconvolution: inputs (ograd, data, weight[, bias]); ograd
 * is on the image side (x), data on the column side (y). */
int mxc__cuda_deconv_backward(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  int beta[3];
  if (!bwd_betas(c, beta)) return MXC_OK;
  if (c->in[1].ndim > 0 && c->in[1].dims[0] == 0) {
    return bwd_empty(c, why, why_len);
  }
  conv_call k;
  int rc = mxc__dnn_deconv_plan_make(c->param, c->in[1].dims, c->in[1].ndim,
                                     &c->in[0], &k.plan, why, why_len);
  if (rc == MXC_OK) rc = call_begin(c, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  const void *g = c->in[0].ptr;
  if (beta[0] >= 0) {
    rc = conv_fwd(&k, g, c->in[2].ptr, (float)beta[0], c->out[0].ptr, why,
                  why_len);
  }
  if (rc == MXC_OK && beta[1] >= 0) {
    rc = conv_bwd_filter(&k, g, c->in[1].ptr, (float)beta[1], c->out[1].ptr,
                         why, why_len);
  }
  if (rc == MXC_OK && beta[2] >= 0 && k.plan.has_bias) {
    rc = bias_grad(&k, k.d.x, g, (float)beta[2], c->out[2].ptr, why, why_len);
  }
  return call_end(&k, rc, why, why_len);
}
