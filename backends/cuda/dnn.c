/* cuDNN kernels of the plug-in (dnn.h): Convolution and its gradient
 * through cuDNN 9's descriptor API (cudnnConvolutionForward,
 * BackwardData, BackwardFilter, BackwardBias), algorithms chosen by the
 * cudnnGet*Algorithm_v7 heuristics.
 *
 * cuDNN's headers give the types only: every function is called through
 * an address resolved from libcudnn.so.9 by dynlib.h, so the plug-in has
 * no link-time dependency on cuDNN. (The legacy API is marked deprecated
 * in cuDNN 9's headers; BUILD turns that warning off for this file.)
 *
 * Precision: the convolution descriptor asks for CUDNN_FMA_MATH, so no
 * TF32 tensor-core kernel is used for float32 (TF32 keeps 10 mantissa
 * bits, far from what the CPU computes); results then differ from the
 * CPU's only by summation order. */
#include "backends/cuda/dnn.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/dnn_plan.h"
#include "backends/cuda/dynlib.h"
#include "ops/reduce/reduce_impl.h"

/* ---- cuDNN, opened on first use ---- */

#define CUDNN_FNS(X)                              \
  X(cudnnGetVersion)                              \
  X(cudnnGetErrorString)                          \
  X(cudnnCreate)                                  \
  X(cudnnDestroy)                                 \
  X(cudnnCreateTensorDescriptor)                  \
  X(cudnnDestroyTensorDescriptor)                 \
  X(cudnnSetTensorNdDescriptor)                   \
  X(cudnnCreateFilterDescriptor)                  \
  X(cudnnDestroyFilterDescriptor)                 \
  X(cudnnSetFilterNdDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnDestroyConvolutionDescriptor)            \
  X(cudnnSetConvolutionNdDescriptor)              \
  X(cudnnSetConvolutionGroupCount)                \
  X(cudnnSetConvolutionMathType)                  \
  X(cudnnGetConvolutionForwardAlgorithm_v7)       \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)  \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) \
  X(cudnnGetConvolutionForwardWorkspaceSize)      \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                      \
  X(cudnnConvolutionBackwardData)                 \
  X(cudnnConvolutionBackwardFilter)               \
  X(cudnnConvolutionBackwardBias)                 \
  X(cudnnAddTensor)                               \
  X(cudnnCreatePoolingDescriptor)                 \
  X(cudnnDestroyPoolingDescriptor)                \
  X(cudnnSetPoolingNdDescriptor)                  \
  X(cudnnPoolingForward)                          \
  X(cudnnPoolingBackward)                         \
  X(cudnnSoftmaxForward)                          \
  X(cudnnSoftmaxBackward)                         \
  X(cudnnBatchNormalizationForwardTraining)       \
  X(cudnnBatchNormalizationForwardInference)      \
  X(cudnnBatchNormalizationBackward)              \
  X(cudnnCreateOpTensorDescriptor)                \
  X(cudnnDestroyOpTensorDescriptor)               \
  X(cudnnSetOpTensorDescriptor)                   \
  X(cudnnOpTensor)

enum {
#define IDX(name) FN_##name,
  CUDNN_FNS(IDX)
#undef IDX
      FN_COUNT
};

static const char *const k_symbols[] = {
#define NAME(name) #name,
    CUDNN_FNS(NAME)
#undef NAME
        NULL};
static const char *const k_files[] = {"libcudnn.so.9", NULL};
static void *k_fns[FN_COUNT];

static mxc__cuda_dynlib k_cudnn = {
    .what = "cuDNN 9",
    .install =
        "cuDNN 9 for CUDA 13 (NVIDIA's cudnn9-cuda-13 package, or the "
        "nvidia-cudnn-cu13 Python wheel, whose nvidia/cudnn/lib folder "
        "then goes on LD_LIBRARY_PATH)",
    .files = k_files,
    .symbols = k_symbols,
    .fns = k_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

/* The resolved function `name`, with its prototype's type. */
#define DN(name) ((__typeof__(&name))k_fns[FN_##name])

/* Opens cuDNN and checks that it is a 9.x (the ABI of the header). */
static int cudnn_load(char *why, size_t len) {
  int rc = mxc__cuda_dynlib_load(&k_cudnn, why, len);
  if (rc != MXC_OK) return rc;
  size_t v = DN(cudnnGetVersion)();
  if (v / 10000 != CUDNN_MAJOR) {
    snprintf(why, len,
             "cuDNN %zu.%zu was loaded; the plug-in was built for cuDNN %d: "
             "install %s",
             v / 10000, v / 100 % 100, CUDNN_MAJOR, k_cudnn.install);
    return MXC_ERR_UNSUPPORTED;
  }
  return MXC_OK;
}

/* cuDNN 9's NOT_SUPPORTED family (3000..3999) is MXC_ERR_UNSUPPORTED: a
 * shape or layout it has no kernel for, an old driver, or one of its
 * sub-libraries (libcudnn_cnn.so.9, ...), which libcudnn.so.9 opens on
 * first use, missing; the latter says what to install. */
static int dn_fail(char *why, size_t len, const char *what,
                   cudnnStatus_t s) {
  int missing = s == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE;
  snprintf(why, len, "%s: %s%s%s", what, DN(cudnnGetErrorString)(s),
           missing ? "; install " : "", missing ? k_cudnn.install : "");
  return (int)s / 1000 == 3 ? MXC_ERR_UNSUPPORTED : MXC_ERR_INTERNAL;
}

static int rt_fail(char *why, size_t len, const char *what, cudaError_t e) {
  snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  return MXC_ERR_INTERNAL;
}

#define DN_TRY(call, what)                                  \
  do {                                                      \
    cudnnStatus_t s_ = (call);                              \
    if (s_ != CUDNN_STATUS_SUCCESS) return dn_fail(why, len, what, s_); \
  } while (0)

/* ---- one handle per (thread, device) ---- */

#define MAX_DEVICES 64

typedef struct thread_handles {
  cudnnHandle_t h[MAX_DEVICES];
} thread_handles;

static pthread_key_t g_handles_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* At thread exit: the thread's handles (cuDNN handles may not be shared
 * by threads running at the same time, so each engine worker has its
 * own). */
static void handles_free(void *p) {
  thread_handles *t = p;
  for (int i = 0; i < MAX_DEVICES; ++i) {
    if (t->h[i]) (void)DN(cudnnDestroy)(t->h[i]);
  }
  free(t);
}

/* ---- one cached workspace per device ---- */

typedef struct workspace {
  pthread_mutex_t mu; /* held for a whole call: the buffer is in use */
  void *ptr;
  size_t bytes;
} workspace;

static workspace g_ws[MAX_DEVICES];

static void init_once(void) {
  (void)pthread_key_create(&g_handles_key, handles_free);
  for (int i = 0; i < MAX_DEVICES; ++i) pthread_mutex_init(&g_ws[i].mu, NULL);
}

/* The calling thread's handle for device dev (current already). */
static int get_handle(int dev, cudnnHandle_t *out, char *why, size_t len) {
  thread_handles *t = pthread_getspecific(g_handles_key);
  if (!t) {
    t = calloc(1, sizeof *t);
    if (!t || pthread_setspecific(g_handles_key, t) != 0) {
      free(t);
      snprintf(why, len, "cuDNN: out of host memory for a handle");
      return MXC_ERR_OOM;
    }
  }
  if (!t->h[dev]) DN_TRY(DN(cudnnCreate)(&t->h[dev]), "cudnnCreate");
  *out = t->h[dev];
  return MXC_OK;
}

/* Grows device dev's workspace (its mutex held) to at least bytes. */
static int ws_reserve(workspace *w, size_t bytes, char *why, size_t len) {
  if (bytes <= w->bytes) return MXC_OK;
  if (w->ptr) (void)cudaFree(w->ptr);
  w->ptr = NULL;
  w->bytes = 0;
  cudaError_t e = cudaMalloc(&w->ptr, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    w->ptr = NULL;
    snprintf(why, len, "cuDNN workspace of %zu bytes: %s", bytes,
             cudaGetErrorString(e));
    return MXC_ERR_OOM;
  }
  w->bytes = bytes;
  return MXC_OK;
}

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

static int tensor_desc(int nbdims, const mxc__dnn_tensor *t,
                       cudnnTensorDescriptor_t *d, char *why, size_t len) {
  DN_TRY(DN(cudnnCreateTensorDescriptor)(d), "cudnnCreateTensorDescriptor");
  DN_TRY(DN(cudnnSetTensorNdDescriptor)(*d, CUDNN_DATA_FLOAT, nbdims,
                                        t->dims, t->strides),
         "cudnnSetTensorNdDescriptor");
  return MXC_OK;
}

/* Every descriptor of plan p into d (zeroed by the caller; descs_free
 * releases what was made, also after a failure). */
static int descs_make(const mxc__dnn_conv_plan *p, conv_descs *d, char *why,
                      size_t len) {
  int rc = tensor_desc(p->nbdims, &p->x, &d->x, why, len);
  if (rc == MXC_OK) rc = tensor_desc(p->nbdims, &p->y, &d->y, why, len);
  if (rc == MXC_OK && p->has_bias) {
    rc = tensor_desc(p->nbdims, &p->b, &d->b, why, len);
  }
  if (rc != MXC_OK) return rc;
  DN_TRY(DN(cudnnCreateFilterDescriptor)(&d->w), "cudnnCreateFilterDescriptor");
  DN_TRY(DN(cudnnSetFilterNdDescriptor)(d->w, CUDNN_DATA_FLOAT,
                                        CUDNN_TENSOR_NCHW, p->nbdims,
                                        p->w.dims),
         "cudnnSetFilterNdDescriptor");
  DN_TRY(DN(cudnnCreateConvolutionDescriptor)(&d->conv),
         "cudnnCreateConvolutionDescriptor");
  DN_TRY(DN(cudnnSetConvolutionNdDescriptor)(
             d->conv, p->nbdims - 2, p->pad, p->stride, p->dilation,
             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
         "cudnnSetConvolutionNdDescriptor");
  DN_TRY(DN(cudnnSetConvolutionGroupCount)(d->conv, p->groups),
         "cudnnSetConvolutionGroupCount");
  DN_TRY(DN(cudnnSetConvolutionMathType)(d->conv, CUDNN_FMA_MATH),
         "cudnnSetConvolutionMathType");
  return MXC_OK;
}

/* ---- algorithms ---- */

/* The most workspace an algorithm may ask for: beyond it, the next
 * algorithm of the heuristic's list is taken. */
#define MAX_WORKSPACE ((size_t)1 << 30)
#define N_PERF 16

/* The first usable entry of a heuristic's list (fastest first): it must
 * have run the query successfully, stay in FMA math (no TF32) and fit
 * the workspace limit. Index, or -1. The three perf structs of cuDNN
 * share these fields. */
#define PICK(perf, n, out)                                              \
  do {                                                                  \
    (out) = -1;                                                         \
    for (int i_ = 0; i_ < (n) && (out) < 0; ++i_) {                     \
      if ((perf)[i_].status == CUDNN_STATUS_SUCCESS &&                  \
          (perf)[i_].mathType != CUDNN_TENSOR_OP_MATH &&                \
          (perf)[i_].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && \
          (perf)[i_].memory <= MAX_WORKSPACE)                           \
        (out) = i_;                                                     \
    }                                                                   \
  } while (0)

static int no_algo(char *why, size_t len, const char *what) {
  snprintf(why, len,
           "cuDNN has no %s algorithm for this convolution in float32 "
           "FMA math within %zu MiB of workspace",
           what, MAX_WORKSPACE >> 20);
  return MXC_ERR_UNSUPPORTED;
}

/* ---- one call: device, handle, descriptors, workspace ---- */

/* cuDNN opened, device dev current, the thread's handle for it in *h. */
static int device_begin(int dev, cudnnHandle_t *h, char *why, size_t len) {
  if (dev < 0 || dev >= MAX_DEVICES) {
    snprintf(why, len, "cuDNN kernels: gpu(%d) is beyond the %d devices "
             "they keep handles for", dev, MAX_DEVICES);
    return MXC_ERR_UNSUPPORTED;
  }
  int rc = cudnn_load(why, len);
  if (rc != MXC_OK) return rc;
  (void)pthread_once(&g_once, init_once);
  cudaError_t e = cudaSetDevice(dev);
  if (e != cudaSuccess) return rt_fail(why, len, "cudaSetDevice", e);
  return get_handle(dev, h, why, len);
}

typedef struct conv_call {
  mxc__dnn_conv_plan plan;
  cudnnHandle_t h;
  conv_descs d;
  workspace *ws; /* locked */
} conv_call;

/* Everything before the cuDNN calls, for the plan k->plan (made by the
 * caller first: a call cuDNN cannot describe is refused without touching
 * the device); on failure nothing is held. */
static int call_begin(const mxc__gpu_call *c, conv_call *k, char *why,
                      size_t len) {
  int rc = device_begin(c->dev, &k->h, why, len);
  if (rc != MXC_OK) return rc;
  k->d = (conv_descs){0};
  if ((rc = descs_make(&k->plan, &k->d, why, len)) != MXC_OK) {
    descs_free(&k->d);
    return rc;
  }
  k->ws = &g_ws[c->dev];
  pthread_mutex_lock(&k->ws->mu);
  return MXC_OK;
}

/* Waits for the call's work (ABI v1: results are in device memory when
 * run returns) while the workspace is still held, then releases all. */
static int call_end(conv_call *k, int rc, char *why, size_t len) {
  cudaError_t e = cudaStreamSynchronize(0);
  pthread_mutex_unlock(&k->ws->mu);
  descs_free(&k->d);
  if (rc == MXC_OK && e != cudaSuccess) {
    rc = rt_fail(why, len, "cuDNN convolution", e);
  }
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
  return ws_reserve(k->ws, queried > heuristic ? queried : heuristic, why,
                    len);
}

/* y = conv(x, w). */
static int conv_fwd(conv_call *k, const void *x, const void *w, float beta,
                    void *y, char *why, size_t len) {
  cudnnConvolutionFwdAlgoPerf_t perf[N_PERF];
  int n = 0, i;
  DN_TRY(DN(cudnnGetConvolutionForwardAlgorithm_v7)(
             k->h, k->d.x, k->d.w, k->d.conv, k->d.y, N_PERF, &n, perf),
         "cudnnGetConvolutionForwardAlgorithm_v7");
  PICK(perf, n, i);
  if (i < 0) return no_algo(why, len, "forward");
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
  PICK(perf, n, i);
  if (i < 0) return no_algo(why, len, "backward-data");
  size_t bytes = 0;
  DN_TRY(DN(cudnnGetConvolutionBackwardDataWorkspaceSize)(
             k->h, k->d.w, k->d.y, k->d.conv, k->d.x, perf[i].algo, &bytes),
         "cudnnGetConvolutionBackwardDataWorkspaceSize");
  int rc = reserve_for(k, perf[i].memory, bytes, why, len);
  if (rc != MXC_OK) return rc;
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionBackwardData)(
             k->h, &one, k->d.w, w, k->d.y, dy, k->d.conv, perf[i].algo,
             k->ws->ptr, k->ws->bytes, &beta, k->d.x, dx),
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
  PICK(perf, n, i);
  if (i < 0) return no_algo(why, len, "backward-filter");
  size_t bytes = 0;
  DN_TRY(DN(cudnnGetConvolutionBackwardFilterWorkspaceSize)(
             k->h, k->d.x, k->d.y, k->d.conv, k->d.w, perf[i].algo, &bytes),
         "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  int rc = reserve_for(k, perf[i].memory, bytes, why, len);
  if (rc != MXC_OK) return rc;
  const float one = 1.f;
  DN_TRY(DN(cudnnConvolutionBackwardFilter)(
             k->h, &one, k->d.x, x, k->d.y, dy, k->d.conv, perf[i].algo,
             k->ws->ptr, k->ws->bytes, &beta, k->d.w, dw),
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
  DN_TRY(DN(cudnnConvolutionBackwardBias)(k->h, &one, gd, g, &beta, k->d.b,
                                          db),
         "cudnnConvolutionBackwardBias");
  return MXC_OK;
}

/* An empty batch: the weight and bias gradients are sums over nothing,
 * 0 (written unless adding); the data gradient has no element. */
static int bwd_empty(const mxc__gpu_call *c, char *why, size_t len) {
  for (int o = 1; o < c->n_out; ++o) {
    if (mxc__dnn_beta(c->req[o]) != 0 || c->out[o].size == 0) continue;
    cudaError_t e = cudaSetDevice(c->dev);
    if (e == cudaSuccess) {
      e = cudaMemset(c->out[o].ptr, 0, (size_t)c->out[o].size * sizeof(float));
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(0);
    if (e != cudaSuccess) return rt_fail(why, len, "cudaMemset", e);
  }
  return MXC_OK;
}

/* The write modes of a backward's outputs as betas (-1: NULL); 0 when
 * nothing is to be written. */
static int bwd_betas(const mxc__gpu_call *c, int beta[3]) {
  beta[0] = beta[1] = beta[2] = -1;
  for (int o = 0; o < c->n_out && o < 3; ++o) beta[o] = mxc__dnn_beta(c->req[o]);
  return beta[0] >= 0 || beta[1] >= 0 || beta[2] >= 0;
}

/* ---- Convolution ---- */

int mxc__cuda_conv_forward(const mxc__gpu_call *c, char *why,
                           size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  conv_call k;
  int rc = mxc__dnn_conv_plan_make(c->param, c->in[0].dims, c->in[0].ndim,
                                   &c->out[0], &k.plan, why, why_len);
  if (rc == MXC_OK) rc = call_begin(c, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = conv_fwd(&k, c->in[0].ptr, c->in[1].ptr, (float)beta, c->out[0].ptr,
                why, why_len);
  if (rc == MXC_OK && k.plan.has_bias) {
    rc = add_bias(&k, c->in[2].ptr, k.d.y, c->out[0].ptr, why, why_len);
  }
  return call_end(&k, rc, why, why_len);
}

/* _backward_Convolution: inputs (ograd, data, weight[, bias]). */
int mxc__cuda_conv_backward(const mxc__gpu_call *c, char *why,
                            size_t why_len) {
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
    rc = conv_bwd_data(&k, c->in[2].ptr, dy, (float)beta[0], c->out[0].ptr,
                       why, why_len);
  }
  if (rc == MXC_OK && beta[1] >= 0) {
    rc = conv_bwd_filter(&k, c->in[1].ptr, dy, (float)beta[1], c->out[1].ptr,
                         why, why_len);
  }
  if (rc == MXC_OK && beta[2] >= 0 && k.plan.has_bias) {
    rc = bias_grad(&k, k.d.y, dy, (float)beta[2], c->out[2].ptr, why,
                   why_len);
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
  rc = conv_bwd_data(&k, c->in[1].ptr, c->in[0].ptr, (float)beta,
                     c->out[0].ptr, why, why_len);
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
    rc = bias_grad(&k, k.d.x, g, (float)beta[2], c->out[2].ptr, why,
                   why_len);
  }
  return call_end(&k, rc, why, why_len);
}

/* ---- pooling ---- */

typedef struct pool_call {
  mxc__dnn_pool_plan plan;
  cudnnHandle_t h;
  cudnnTensorDescriptor_t x, y;
  cudnnPoolingDescriptor_t pool;
} pool_call;

static void pool_descs_free(pool_call *k) {
  if (k->x) (void)DN(cudnnDestroyTensorDescriptor)(k->x);
  if (k->y) (void)DN(cudnnDestroyTensorDescriptor)(k->y);
  if (k->pool) (void)DN(cudnnDestroyPoolingDescriptor)(k->pool);
}

static const cudnnPoolingMode_t k_pool_modes[] = {
    [MXC__DNN_POOL_MAX] = CUDNN_POOLING_MAX_DETERMINISTIC,
    [MXC__DNN_POOL_AVG_INCLUDE_PAD] =
        CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
    [MXC__DNN_POOL_AVG_EXCLUDE_PAD] =
        CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
};

/* The pooling descriptor; the CPU's max skips NaN (x > best), so NaN is
 * not propagated here either. */
static int pool_descs(pool_call *k, char *why, size_t len) {
  const mxc__dnn_pool_plan *p = &k->plan;
  int rc = tensor_desc(p->nbdims, &p->x, &k->x, why, len);
  if (rc == MXC_OK) rc = tensor_desc(p->nbdims, &p->y, &k->y, why, len);
  if (rc != MXC_OK) return rc;
  DN_TRY(DN(cudnnCreatePoolingDescriptor)(&k->pool),
         "cudnnCreatePoolingDescriptor");
  DN_TRY(DN(cudnnSetPoolingNdDescriptor)(
             k->pool, k_pool_modes[p->mode], CUDNN_NOT_PROPAGATE_NAN,
             p->nbdims - 2, p->window, p->pad, p->stride),
         "cudnnSetPoolingNdDescriptor");
  return MXC_OK;
}

/* Plan (data dims from `data`, checked against `check`), device, handle
 * and descriptors; on failure nothing is held. */
static int pool_begin(const mxc__gpu_call *c, const mxc__gpu_array *data,
                      const mxc__gpu_array *check, pool_call *k, char *why,
                      size_t len) {
  *k = (pool_call){0};
  int rc = mxc__dnn_pool_plan_make(c->param, data->dims, data->ndim, check,
                                   &k->plan, why, len);
  if (rc == MXC_OK) rc = device_begin(c->dev, &k->h, why, len);
  if (rc == MXC_OK) rc = pool_descs(k, why, len);
  if (rc != MXC_OK) pool_descs_free(k);
  return rc;
}

static int pool_end(pool_call *k, int rc, char *why, size_t len) {
  cudaError_t e = cudaStreamSynchronize(0);
  pool_descs_free(k);
  if (rc == MXC_OK && e != cudaSuccess) {
    rc = rt_fail(why, len, "cuDNN pooling", e);
  }
  return rc;
}

static int pool_fwd_run(pool_call *k, const void *x, float beta, void *y,
                        char *why, size_t len) {
  const float one = 1.f;
  DN_TRY(DN(cudnnPoolingForward)(k->h, k->pool, &one, k->x, x, &beta, k->y,
                                 y),
         "cudnnPoolingForward");
  return MXC_OK;
}

int mxc__cuda_pool_forward(const mxc__gpu_call *c, char *why,
                           size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  pool_call k;
  int rc = pool_begin(c, &c->in[0], &c->out[0], &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = pool_fwd_run(&k, c->in[0].ptr, (float)beta, c->out[0].ptr, why,
                    why_len);
  return pool_end(&k, rc, why, why_len);
}

/* cudnnPoolingBackward needs the forward's output, which
 * _backward_Pooling does not get (inputs: ograd, data): it is computed
 * again into the device's workspace. */
static int pool_bwd_run(pool_call *k, const mxc__gpu_call *c, float beta,
                        char *why, size_t len) {
  workspace *ws = &g_ws[c->dev];
  pthread_mutex_lock(&ws->mu);
  int rc = ws_reserve(ws, (size_t)c->in[0].size * sizeof(float), why, len);
  if (rc == MXC_OK) rc = pool_fwd_run(k, c->in[1].ptr, 0.f, ws->ptr, why, len);
  const float one = 1.f;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  if (rc == MXC_OK) {
    s = DN(cudnnPoolingBackward)(k->h, k->pool, &one, k->y, ws->ptr, k->y,
                                 c->in[0].ptr, k->x, c->in[1].ptr, &beta,
                                 k->x, c->out[0].ptr);
  }
  /* The workspace is in use until the device is done with it. */
  cudaError_t e = cudaStreamSynchronize(0);
  pthread_mutex_unlock(&ws->mu);
  if (rc != MXC_OK) return rc;
  if (s != CUDNN_STATUS_SUCCESS) return dn_fail(why, len, "cudnnPoolingBackward", s);
  return e == cudaSuccess ? MXC_OK : rt_fail(why, len, "cuDNN pooling", e);
}

int mxc__cuda_pool_backward(const mxc__gpu_call *c, char *why,
                            size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  pool_call k;
  /* The plan checks ograd (input 0) against the output it computes. */
  int rc = pool_begin(c, &c->in[1], &c->in[0], &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = pool_bwd_run(&k, c, (float)beta, why, why_len);
  return pool_end(&k, rc, why, why_len);
}

/* ---- softmax, log_softmax ---- */

/* The forward (bwd 0: y = out 0 from x = in 0) or the backward (dx =
 * out 0 from ograd = in 0 and the forward's output y, which follows the
 * data input when the dtype parameter is set). The CPU's max-subtracted
 * form is CUDNN_SOFTMAX_ACCURATE; log_softmax is CUDNN_SOFTMAX_LOG. */
static int softmax_run(const mxc__gpu_call *c, int log, int bwd, char *why,
                       size_t len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  mxc__dnn_softmax_plan pl;
  int rc = mxc__dnn_softmax_plan_make(c->param, c->out[0].dims,
                                      c->out[0].ndim, &pl, why, len);
  if (rc != MXC_OK || pl.empty) return rc;
  cudnnHandle_t h;
  cudnnTensorDescriptor_t d = NULL;
  rc = device_begin(c->dev, &h, why, len);
  if (rc == MXC_OK) rc = tensor_desc(4, &pl.t, &d, why, len);
  if (rc != MXC_OK) {
    if (d) (void)DN(cudnnDestroyTensorDescriptor)(d);
    return rc;
  }
  cudnnSoftmaxAlgorithm_t algo = log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  const float one = 1.f, b = (float)beta;
  const mxc__softmax_param *p = c->param;
  const void *y = c->in[p->dtype >= 0 ? 2 : 1].ptr;
  cudnnStatus_t s =
      bwd ? DN(cudnnSoftmaxBackward)(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                     d, y, d, c->in[0].ptr, &b, d,
                                     c->out[0].ptr)
          : DN(cudnnSoftmaxForward)(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                    d, c->in[0].ptr, &b, d, c->out[0].ptr);
  cudaError_t e = cudaStreamSynchronize(0);
  (void)DN(cudnnDestroyTensorDescriptor)(d);
  if (s != CUDNN_STATUS_SUCCESS) return dn_fail(why, len, "cuDNN softmax", s);
  return e == cudaSuccess ? MXC_OK : rt_fail(why, len, "cuDNN softmax", e);
}

int mxc__cuda_softmax_forward(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  return softmax_run(c, 0, 0, why, why_len);
}
int mxc__cuda_softmax_backward(const mxc__gpu_call *c, char *why,
                               size_t why_len) {
  return softmax_run(c, 0, 1, why, why_len);
}
int mxc__cuda_log_softmax_forward(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  return softmax_run(c, 1, 0, why, why_len);
}
int mxc__cuda_log_softmax_backward(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  return softmax_run(c, 1, 1, why, why_len);
}

/* ---- batch norm ----
 *
 * Per-channel scratch in the device's workspace, C floats each: constants
 * (ones for a fixed gamma, zeros, minus ones) and cuDNN's statistics;
 * then, where needed, a data-sized buffer. The outputs (mean, var, and
 * the gradients of gamma and beta) are copied from the scratch with
 * cudnnAddTensor in their own write modes: cuDNN writes its statistics
 * and parameter gradients in one mode for all. */

enum { BN_ONES, BN_ZEROS, BN_MINUS_ONES, BN_A, BN_B, BN_C, BN_D, BN_SLOTS };

typedef struct bn_call {
  mxc__dnn_bn_plan plan;
  cudnnHandle_t h;
  cudnnTensorDescriptor_t x, c;
  workspace *ws; /* locked */
  float *slot[BN_SLOTS];
  float *big; /* data-sized scratch, or NULL */
} bn_call;

/* Fills the constant slots from the host (C values each, small). */
static int bn_constants(bn_call *k, char *why, size_t len) {
  size_t C = (size_t)k->plan.c.dims[1];
  float *host = malloc(3 * C * sizeof *host);
  if (!host) {
    snprintf(why, len, "BatchNorm on the GPU: out of host memory");
    return MXC_ERR_OOM;
  }
  for (size_t i = 0; i < C; ++i) {
    host[i] = 1.f, host[C + i] = 0.f, host[2 * C + i] = -1.f;
  }
  cudaError_t e = cudaMemcpy(k->slot[BN_ONES], host, 3 * C * sizeof *host,
                             cudaMemcpyHostToDevice);
  free(host);
  return e == cudaSuccess ? MXC_OK : rt_fail(why, len, "cudaMemcpy", e);
}

/* Device, handle, descriptors, the workspace locked and laid out (with a
 * data-sized buffer when `big`); on failure nothing is held. */
static int bn_begin(const mxc__gpu_call *c, const mxc__gpu_array *data,
                    int big, bn_call *k, char *why, size_t len) {
  *k = (bn_call){0};
  int rc = mxc__dnn_bn_plan_make(c->param, data->dims, data->ndim,
                                 c->is_train, &k->plan, why, len);
  if (rc == MXC_OK) rc = device_begin(c->dev, &k->h, why, len);
  if (rc == MXC_OK) rc = tensor_desc(4, &k->plan.x, &k->x, why, len);
  if (rc == MXC_OK) rc = tensor_desc(4, &k->plan.c, &k->c, why, len);
  if (rc != MXC_OK) goto fail;
  size_t C = (size_t)k->plan.c.dims[1];
  k->ws = &g_ws[c->dev];
  pthread_mutex_lock(&k->ws->mu);
  size_t n = BN_SLOTS * C + (big ? (size_t)data->size : 0);
  rc = ws_reserve(k->ws, n * sizeof(float), why, len);
  if (rc == MXC_OK) {
    for (int i = 0; i < BN_SLOTS; ++i) k->slot[i] = (float *)k->ws->ptr + i * C;
    k->big = big ? (float *)k->ws->ptr + BN_SLOTS * C : NULL;
    rc = bn_constants(k, why, len);
  }
  if (rc == MXC_OK) return MXC_OK;
  pthread_mutex_unlock(&k->ws->mu);
fail:
  if (k->x) (void)DN(cudnnDestroyTensorDescriptor)(k->x);
  if (k->c) (void)DN(cudnnDestroyTensorDescriptor)(k->c);
  return rc;
}

static int bn_end(bn_call *k, int rc, char *why, size_t len) {
  cudaError_t e = cudaStreamSynchronize(0);
  pthread_mutex_unlock(&k->ws->mu);
  (void)DN(cudnnDestroyTensorDescriptor)(k->x);
  (void)DN(cudnnDestroyTensorDescriptor)(k->c);
  if (rc == MXC_OK && e != cudaSuccess) {
    rc = rt_fail(why, len, "cuDNN batch norm", e);
  }
  return rc;
}

/* out (C values) = alpha * src + beta_of(req) * out; nothing for NULL. */
static int bn_put(bn_call *k, const mxc__gpu_call *c, int o, const void *src,
                  float alpha, char *why, size_t len) {
  if (o >= c->n_out) return MXC_OK;
  int beta = mxc__dnn_beta(c->req[o]);
  if (beta < 0) return MXC_OK;
  const float b = (float)beta;
  DN_TRY(DN(cudnnAddTensor)(k->h, &alpha, k->c, src, &b, k->c,
                            c->out[o].ptr),
         "cudnnAddTensor");
  return MXC_OK;
}

/* Training: cuDNN's batch statistics into the scratch (factor 1: the
 * running slots get the batch mean and unbiased variance), then the
 * moving statistics updated as the CPU does (dnn_plan.h). */
static int bn_fwd_train(bn_call *k, const mxc__gpu_call *c, void *y,
                        float beta, char *why, size_t len) {
  const mxc__dnn_bn_plan *p = &k->plan;
  const void *scale = p->fix_gamma ? k->slot[BN_ONES] : c->in[1].ptr;
  const float one = 1.f;
  DN_TRY(DN(cudnnBatchNormalizationForwardTraining)(
             k->h, CUDNN_BATCHNORM_SPATIAL, &one, &beta, k->x, c->in[0].ptr,
             k->x, y, k->c, scale, c->in[2].ptr, 1.0, k->slot[BN_C],
             k->slot[BN_D], p->eps, k->slot[BN_A], k->slot[BN_B]),
         "cudnnBatchNormalizationForwardTraining");
  const float mt = (float)p->mean_take, mk = (float)p->mean_keep;
  const float vt = (float)p->var_take, vk = (float)p->var_keep;
  DN_TRY(DN(cudnnAddTensor)(k->h, &mt, k->c, k->slot[BN_C], &mk, k->c,
                            c->in[3].ptr),
         "cudnnAddTensor (moving mean)");
  DN_TRY(DN(cudnnAddTensor)(k->h, &vt, k->c, k->slot[BN_D], &vk, k->c,
                            c->in[4].ptr),
         "cudnnAddTensor (moving var)");
  int rc = bn_put(k, c, 1, k->slot[BN_A], 1.f, why, len);
  return rc == MXC_OK ? bn_put(k, c, 2, k->slot[BN_B], 1.f, why, len) : rc;
}

/* Moving statistics: the inverse std output 1/sqrt(moving_var + eps) is
 * cuDNN's inference normalization of (0 - (-1)) with scale 1, bias 0. */
static int bn_fwd_infer(bn_call *k, const mxc__gpu_call *c, void *y,
                        float beta, char *why, size_t len) {
  const mxc__dnn_bn_plan *p = &k->plan;
  const void *scale = p->fix_gamma ? k->slot[BN_ONES] : c->in[1].ptr;
  const float one = 1.f, zero = 0.f;
  DN_TRY(DN(cudnnBatchNormalizationForwardInference)(
             k->h, CUDNN_BATCHNORM_SPATIAL, &one, &beta, k->x, c->in[0].ptr,
             k->x, y, k->c, scale, c->in[2].ptr, c->in[3].ptr, c->in[4].ptr,
             p->eps),
         "cudnnBatchNormalizationForwardInference");
  DN_TRY(DN(cudnnBatchNormalizationForwardInference)(
             k->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->c,
             k->slot[BN_ZEROS], k->c, k->slot[BN_B], k->c, k->slot[BN_ONES],
             k->slot[BN_ZEROS], k->slot[BN_MINUS_ONES], c->in[4].ptr, p->eps),
         "cudnnBatchNormalizationForwardInference (inverse std)");
  int rc = bn_put(k, c, 1, c->in[3].ptr, 1.f, why, len);
  return rc == MXC_OK ? bn_put(k, c, 2, k->slot[BN_B], 1.f, why, len) : rc;
}

/* BatchNorm: inputs (data, gamma, beta, moving_mean, moving_var), outputs
 * (out[, mean, var]); the moving statistics are updated in place in
 * training mode whatever the write modes. */
int mxc__cuda_bn_forward(const mxc__gpu_call *c, char *why, size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  bn_call k;
  /* No place for y (NULL mode): a scratch one, cuDNN always writes it. */
  int rc = bn_begin(c, &c->in[0], beta < 0, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  void *y = beta < 0 ? (void *)k.big : c->out[0].ptr;
  float b = beta < 0 ? 0.f : (float)beta;
  rc = k.plan.batch_stats ? bn_fwd_train(&k, c, y, b, why, why_len)
                          : bn_fwd_infer(&k, c, y, b, why, why_len);
  return bn_end(&k, rc, why, why_len);
}

/* With the moving statistics fixed: ddata = gamma * inv_std * ograd,
 * per channel (cudnnOpTensor broadcasts the (1, C, 1, 1) factor). */
static int bn_fixed_dx(bn_call *k, const mxc__gpu_call *c, const void *scale,
                       float beta, char *why, size_t len) {
  cudnnOpTensorDescriptor_t op = NULL;
  const float one = 1.f, zero = 0.f;
  cudnnStatus_t s = DN(cudnnCreateOpTensorDescriptor)(&op);
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnSetOpTensorDescriptor)(op, CUDNN_OP_TENSOR_MUL,
                                       CUDNN_DATA_FLOAT,
                                       CUDNN_NOT_PROPAGATE_NAN);
  }
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnOpTensor)(k->h, op, &one, k->c, scale, &one, k->c,
                          c->in[8].ptr, &zero, k->c, k->slot[BN_C]);
  }
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnOpTensor)(k->h, op, &one, k->x, c->in[0].ptr, &one, k->c,
                          k->slot[BN_C], &beta, k->x, c->out[0].ptr);
  }
  if (op) (void)DN(cudnnDestroyOpTensorDescriptor)(op);
  return s == CUDNN_STATUS_SUCCESS ? MXC_OK
                                   : dn_fail(why, len, "cudnnOpTensor", s);
}

/* The gamma gradient under fix_gamma: 0 (written unless adding). */
static int bn_zero_dgamma(const mxc__gpu_call *c, char *why, size_t len) {
  if (c->n_out < 2 || mxc__dnn_beta(c->req[1]) != 0) return MXC_OK;
  cudaError_t e = cudaMemset(c->out[1].ptr, 0,
                             (size_t)c->out[1].size * sizeof(float));
  return e == cudaSuccess ? MXC_OK : rt_fail(why, len, "cudaMemset", e);
}

/* _backward_BatchNorm: inputs (ograd, data, gamma, beta, moving_mean,
 * moving_var, output, mean, var), outputs (ddata, dgamma, dbeta); mean
 * and var are the forward's saved mean and inverse std, as cuDNN's
 * savedMean / savedInvVariance. cuDNN's backward always gives the batch
 * statistics' ddata and the two parameter sums; with fixed statistics
 * its ddata goes to scratch and bn_fixed_dx writes the real one. */
int mxc__cuda_bn_backward(const mxc__gpu_call *c, char *why,
                          size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  bn_call k;
  int rc = bn_begin(c, &c->in[1], 1, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  const mxc__dnn_bn_plan *p = &k.plan;
  const void *scale = p->fix_gamma ? k.slot[BN_ONES] : c->in[2].ptr;
  int direct = p->batch_stats && beta >= 0;
  const float one = 1.f, zero = 0.f, bd = direct ? (float)beta : 0.f;
  cudnnStatus_t s = DN(cudnnBatchNormalizationBackward)(
      k.h, CUDNN_BATCHNORM_SPATIAL, &one, &bd, &one, &zero, k.x,
      c->in[1].ptr, k.x, c->in[0].ptr, k.x, direct ? c->out[0].ptr : k.big,
      k.c, scale, k.slot[BN_A], k.slot[BN_B], p->eps, c->in[7].ptr,
      c->in[8].ptr);
  if (s != CUDNN_STATUS_SUCCESS) {
    rc = dn_fail(why, why_len, "cudnnBatchNormalizationBackward", s);
  }
  if (rc == MXC_OK && !p->batch_stats && beta >= 0) {
    rc = bn_fixed_dx(&k, c, scale, (float)beta, why, why_len);
  }
  if (rc == MXC_OK) {
    rc = p->fix_gamma ? bn_zero_dgamma(c, why, why_len)
                      : bn_put(&k, c, 1, k.slot[BN_A], 1.f, why, why_len);
  }
  if (rc == MXC_OK) rc = bn_put(&k, c, 2, k.slot[BN_B], 1.f, why, why_len);
  return bn_end(&k, rc, why, why_len);
}
