/* cuDNN kernels of the plug-in (dnn.h): Pooling, softmax, log_softmax,
 * BatchNorm and their gradients, in float32, float16 and bfloat16
 * (dnn_plan.h's types: half data described as such, BatchNorm's
 * per-channel tensors float32, scaling factors float; cuDNN computes in
 * float32 and rounds once into a half output). */
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/dnn.h"
#include "backends/cuda/dnn_lib.h"
#include "ops/reduce/reduce_impl.h"

/* ---- pooling ---- */

typedef struct pool_call {
  mxc__dnn_pool_plan plan;
  mxc__dnn_types ty;
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
  int dt = k->ty.data;
  int rc = mxc__cudnn_tensor_desc(p->nbdims, &p->x, dt, &k->x, why, len);
  if (rc == MXC_OK) {
    rc = mxc__cudnn_tensor_desc(p->nbdims, &p->y, dt, &k->y, why, len);
  }
  if (rc != MXC_OK) return rc;
  DN_TRY(DN(cudnnCreatePoolingDescriptor)(&k->pool),
         "cudnnCreatePoolingDescriptor");
  DN_TRY(DN(cudnnSetPoolingNdDescriptor)(k->pool, k_pool_modes[p->mode],
                                         CUDNN_NOT_PROPAGATE_NAN, p->nbdims - 2,
                                         p->window, p->pad, p->stride),
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
  if (rc == MXC_OK) {
    rc = mxc__dnn_call_types(MXC__DNN_OP_SAME, c, &k->ty, why, len);
  }
  if (rc == MXC_OK) rc = mxc__cudnn_begin(c->dev, &k->h, why, len);
  if (rc == MXC_OK) rc = pool_descs(k, why, len);
  if (rc != MXC_OK) pool_descs_free(k);
  return rc;
}

static int pool_end(pool_call *k, int rc, char *why, size_t len) {
  rc = mxc__cuda_wait(rc, "cuDNN pooling", why, len);
  pool_descs_free(k);
  return rc;
}

static int pool_fwd_run(pool_call *k, const void *x, float beta, void *y,
                        char *why, size_t len) {
  const float one = 1.f;
  DN_TRY(DN(cudnnPoolingForward)(k->h, k->pool, &one, k->x, x, &beta, k->y, y),
         "cudnnPoolingForward");
  return MXC_OK;
}

int mxc__cuda_pool_forward(const mxc__gpu_call *c, char *why, size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  if (beta < 0 || c->out[0].size == 0) return MXC_OK;
  pool_call k;
  int rc = pool_begin(c, &c->in[0], &c->out[0], &k, why, why_len);
  if (rc != MXC_OK) return rc;
  rc = pool_fwd_run(&k, c->in[0].ptr, (float)beta, c->out[0].ptr, why, why_len);
  return pool_end(&k, rc, why, why_len);
}

/* cudnnPoolingBackward needs the forward's output, which
 * _backward_Pooling does not get (inputs: ograd, data): it is computed
 * again into the device's workspace. */
static int pool_bwd_run(pool_call *k, const mxc__gpu_call *c, float beta,
                        char *why, size_t len) {
  mxc__cudnn_ws *ws = mxc__cudnn_workspace(c->dev);
  pthread_mutex_lock(&ws->mu);
  int rc = mxc__cudnn_ws_reserve(ws, (size_t)c->in[0].size * (size_t)k->ty.elem,
                                 why, len);
  if (rc == MXC_OK) rc = pool_fwd_run(k, c->in[1].ptr, 0.f, ws->ptr, why, len);
  const float one = 1.f;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  if (rc == MXC_OK) {
    s = DN(cudnnPoolingBackward)(k->h, k->pool, &one, k->y, ws->ptr, k->y,
                                 c->in[0].ptr, k->x, c->in[1].ptr, &beta, k->x,
                                 c->out[0].ptr);
  }
  if (rc == MXC_OK && s != CUDNN_STATUS_SUCCESS) {
    rc = mxc__cudnn_fail(why, len, "cudnnPoolingBackward", s);
  }
  /* The workspace is in use until the device is done with it. */
  rc = mxc__cuda_wait(rc, "cuDNN pooling", why, len);
  pthread_mutex_unlock(&ws->mu);
  return rc;
}

int mxc__cuda_pool_backward(const mxc__gpu_call *c, char *why, size_t why_len) {
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
  int rc = mxc__dnn_softmax_plan_make(c->param, c->out[0].dims, c->out[0].ndim,
                                      &pl, why, len);
  if (rc != MXC_OK || pl.empty) return rc;
  mxc__dnn_types ty;
  rc = mxc__dnn_call_types(MXC__DNN_OP_SAME, c, &ty, why, len);
  if (rc != MXC_OK) return rc;
  cudnnHandle_t h;
  cudnnTensorDescriptor_t d = NULL;
  rc = mxc__cudnn_begin(c->dev, &h, why, len);
  if (rc == MXC_OK) {
    rc = mxc__cudnn_tensor_desc(4, &pl.t, ty.data, &d, why, len);
  }
  if (rc != MXC_OK) {
    if (d) (void)DN(cudnnDestroyTensorDescriptor)(d);
    return rc;
  }
  cudnnSoftmaxAlgorithm_t algo =
      log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  const float one = 1.f, b = (float)beta;
  const mxc__softmax_param *p = c->param;
  const void *y = c->in[p->dtype >= 0 ? 2 : 1].ptr;
  cudnnStatus_t s =
      bwd ? DN(cudnnSoftmaxBackward)(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                     d, y, d, c->in[0].ptr, &b, d,
                                     c->out[0].ptr)
          : DN(cudnnSoftmaxForward)(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                    d, c->in[0].ptr, &b, d, c->out[0].ptr);
  rc = s == CUDNN_STATUS_SUCCESS
           ? MXC_OK
           : mxc__cudnn_fail(why, len, "cuDNN softmax", s);
  rc = mxc__cuda_wait(rc, "cuDNN softmax", why, len);
  (void)DN(cudnnDestroyTensorDescriptor)(d);
  return rc;
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

/* BN_VAR1: 1 - eps, the variance whose 1 / sqrt(var + eps) is 1 (half
 * data's fixed-statistics gradient, bn_fixed_dx_half). */
enum {
  BN_ONES,
  BN_ZEROS,
  BN_MINUS_ONES,
  BN_VAR1,
  BN_A,
  BN_B,
  BN_C,
  BN_D,
  BN_SLOTS
};

typedef struct bn_call {
  mxc__dnn_bn_plan plan;
  mxc__dnn_types ty;
  cudnnHandle_t h;
  cudnnTensorDescriptor_t x, c;
  mxc__cudnn_ws *ws; /* locked */
  float *slot[BN_SLOTS];
  float *big; /* data-sized scratch, or NULL */
} bn_call;

/* Fills the constant slots from the host (C values each, small). */
static int bn_constants(bn_call *k, char *why, size_t len) {
  size_t C = (size_t)k->plan.c.dims[1];
  float *host = malloc(4 * C * sizeof *host);
  if (!host) {
    snprintf(why, len, "BatchNorm on the GPU: out of host memory");
    return MXC_ERR_OOM;
  }
  for (size_t i = 0; i < C; ++i) {
    host[i] = 1.f, host[C + i] = 0.f, host[2 * C + i] = -1.f;
    host[3 * C + i] = (float)(1.0 - k->plan.eps);
  }
  /* On the call's stream, before the cuDNN calls that read it (from
   * pageable memory: host is copied out before the call returns). */
  cudaError_t e =
      cudaMemcpyAsync(k->slot[BN_ONES], host, 4 * C * sizeof *host,
                      cudaMemcpyHostToDevice, mxc__cuda_stream());
  free(host);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaMemcpy", e);
}

/* Device, handle, descriptors, the workspace locked and laid out (with a
 * data-sized buffer when `big`); on failure nothing is held. */
static int bn_begin(const mxc__gpu_call *c, const mxc__gpu_array *data, int big,
                    bn_call *k, char *why, size_t len) {
  *k = (bn_call){0};
  int op = data == &c->in[0] ? MXC__DNN_OP_BN : MXC__DNN_OP_BN_BWD;
  int rc = mxc__dnn_bn_plan_make(c->param, data->dims, data->ndim, c->is_train,
                                 &k->plan, why, len);
  if (rc == MXC_OK) rc = mxc__dnn_call_types(op, c, &k->ty, why, len);
  if (rc == MXC_OK) rc = mxc__cudnn_begin(c->dev, &k->h, why, len);
  if (rc == MXC_OK) {
    rc = mxc__cudnn_tensor_desc(4, &k->plan.x, k->ty.data, &k->x, why, len);
  }
  if (rc == MXC_OK) {
    rc = mxc__cudnn_tensor_desc(4, &k->plan.c, k->ty.stats, &k->c, why, len);
  }
  if (rc != MXC_OK) goto fail;
  size_t C = (size_t)k->plan.c.dims[1];
  k->ws = mxc__cudnn_workspace(c->dev);
  pthread_mutex_lock(&k->ws->mu);
  size_t n = BN_SLOTS * C + (big ? (size_t)data->size : 0);
  rc = mxc__cudnn_ws_reserve(k->ws, n * sizeof(float), why, len);
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
  rc = mxc__cuda_wait(rc, "cuDNN batch norm", why, len);
  pthread_mutex_unlock(&k->ws->mu);
  (void)DN(cudnnDestroyTensorDescriptor)(k->x);
  (void)DN(cudnnDestroyTensorDescriptor)(k->c);
  return rc;
}

/* out (C values) = alpha * src + beta_of(req) * out; nothing for NULL. */
static int bn_put(bn_call *k, const mxc__gpu_call *c, int o, const void *src,
                  float alpha, char *why, size_t len) {
  if (o >= c->n_out) return MXC_OK;
  int beta = mxc__dnn_beta(c->req[o]);
  if (beta < 0) return MXC_OK;
  const float b = (float)beta;
  DN_TRY(DN(cudnnAddTensor)(k->h, &alpha, k->c, src, &b, k->c, c->out[o].ptr),
         "cudnnAddTensor");
  return MXC_OK;
}

/* Training: cuDNN's batch statistics into the scratch (factor 1: the
 * running slots get the batch mean and unbiased variance), then the
 * moving statistics updated as the CPU does (dnn_plan.h). */
static int bn_fwd_train(bn_call *k, const mxc__gpu_call *c, void *y, float beta,
                        char *why, size_t len) {
  const mxc__dnn_bn_plan *p = &k->plan;
  const void *scale = p->fix_gamma ? k->slot[BN_ONES] : c->in[1].ptr;
  const float one = 1.f;
  /* With factor 1 the running slots get (1 - 1) * old + batch: cleared
   * first, as 0 * NaN left in the workspace would be NaN. */
  size_t C = (size_t)p->c.dims[1];
  cudaError_t e = cudaMemsetAsync(k->slot[BN_C], 0, 2 * C * sizeof(float),
                                  mxc__cuda_stream());
  if (e != cudaSuccess) return mxc__cuda_rt_fail(why, len, "cudaMemset", e);
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
static int bn_fwd_infer(bn_call *k, const mxc__gpu_call *c, void *y, float beta,
                        char *why, size_t len) {
  const mxc__dnn_bn_plan *p = &k->plan;
  const void *scale = p->fix_gamma ? k->slot[BN_ONES] : c->in[1].ptr;
  const float one = 1.f, zero = 0.f;
  DN_TRY(
      DN(cudnnBatchNormalizationForwardInference)(
          k->h, CUDNN_BATCHNORM_SPATIAL, &one, &beta, k->x, c->in[0].ptr, k->x,
          y, k->c, scale, c->in[2].ptr, c->in[3].ptr, c->in[4].ptr, p->eps),
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
    s = DN(cudnnSetOpTensorDescriptor)(
        op, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN);
  }
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnOpTensor)(k->h, op, &one, k->c, scale, &one, k->c, c->in[8].ptr,
                          &zero, k->c, k->slot[BN_C]);
  }
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnOpTensor)(k->h, op, &one, k->x, c->in[0].ptr, &one, k->c,
                          k->slot[BN_C], &beta, k->x, c->out[0].ptr);
  }
  if (op) (void)DN(cudnnDestroyOpTensorDescriptor)(op);
  return s == CUDNN_STATUS_SUCCESS
             ? MXC_OK
             : mxc__cudnn_fail(why, len, "cudnnOpTensor", s);
}

/* bn_fixed_dx for half data, which cudnnOpTensor cannot multiply by a
 * float32 per-channel factor: the factor gamma * inv_std (float32, into
 * BN_C) scales ograd through cuDNN's inference normalization with mean
 * 0, variance 1 - eps (1 / sqrt(var + eps) = 1) and bias 0, computed in
 * float32 and rounded once into ddata. */
static int bn_fixed_dx_half(bn_call *k, const mxc__gpu_call *c,
                            const void *scale, float beta, char *why,
                            size_t len) {
  cudnnOpTensorDescriptor_t op = NULL;
  const float one = 1.f, zero = 0.f;
  cudnnStatus_t s = DN(cudnnCreateOpTensorDescriptor)(&op);
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnSetOpTensorDescriptor)(
        op, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN);
  }
  if (s == CUDNN_STATUS_SUCCESS) {
    s = DN(cudnnOpTensor)(k->h, op, &one, k->c, scale, &one, k->c, c->in[8].ptr,
                          &zero, k->c, k->slot[BN_C]);
  }
  if (op) (void)DN(cudnnDestroyOpTensorDescriptor)(op);
  if (s != CUDNN_STATUS_SUCCESS) {
    return mxc__cudnn_fail(why, len, "cudnnOpTensor", s);
  }
  DN_TRY(DN(cudnnBatchNormalizationForwardInference)(
             k->h, CUDNN_BATCHNORM_SPATIAL, &one, &beta, k->x, c->in[0].ptr,
             k->x, c->out[0].ptr, k->c, k->slot[BN_C], k->slot[BN_ZEROS],
             k->slot[BN_ZEROS], k->slot[BN_VAR1], k->plan.eps),
         "cudnnBatchNormalizationForwardInference (fixed-statistics "
         "gradient)");
  return MXC_OK;
}

/* The gamma gradient under fix_gamma: 0 (written unless adding). */
static int bn_zero_dgamma(const mxc__gpu_call *c, char *why, size_t len) {
  if (c->n_out < 2 || mxc__dnn_beta(c->req[1]) != 0) return MXC_OK;
  cudaError_t e = cudaMemsetAsync(c->out[1].ptr, 0,
                                  (size_t)c->out[1].size * sizeof(float),
                                  mxc__cuda_stream());
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaMemset", e);
}

/* _backward_BatchNorm: inputs (ograd, data, gamma, beta, moving_mean,
 * moving_var, output, mean, var), outputs (ddata, dgamma, dbeta); mean
 * and var are the forward's saved mean and inverse std, as cuDNN's
 * savedMean / savedInvVariance. cuDNN's backward always gives the batch
 * statistics' ddata and the two parameter sums; with fixed statistics
 * its ddata goes to scratch and bn_fixed_dx writes the real one. */
int mxc__cuda_bn_backward(const mxc__gpu_call *c, char *why, size_t why_len) {
  int beta = mxc__dnn_beta(c->req[0]);
  bn_call k;
  int rc = bn_begin(c, &c->in[1], 1, &k, why, why_len);
  if (rc != MXC_OK) return rc;
  const mxc__dnn_bn_plan *p = &k.plan;
  const void *scale = p->fix_gamma ? k.slot[BN_ONES] : c->in[2].ptr;
  int direct = p->batch_stats && beta >= 0;
  const float one = 1.f, zero = 0.f, bd = direct ? (float)beta : 0.f;
  cudnnStatus_t s = DN(cudnnBatchNormalizationBackward)(
      k.h, CUDNN_BATCHNORM_SPATIAL, &one, &bd, &one, &zero, k.x, c->in[1].ptr,
      k.x, c->in[0].ptr, k.x, direct ? c->out[0].ptr : k.big, k.c, scale,
      k.slot[BN_A], k.slot[BN_B], p->eps, c->in[7].ptr, c->in[8].ptr);
  if (s != CUDNN_STATUS_SUCCESS) {
    rc = mxc__cudnn_fail(why, why_len, "cudnnBatchNormalizationBackward", s);
  }
  if (rc == MXC_OK && !p->batch_stats && beta >= 0) {
    rc = k.ty.data == MXC__DNN_DT_FLOAT
             ? bn_fixed_dx(&k, c, scale, (float)beta, why, why_len)
             : bn_fixed_dx_half(&k, c, scale, (float)beta, why, why_len);
  }
  if (rc == MXC_OK) {
    rc = p->fix_gamma ? bn_zero_dgamma(c, why, why_len)
                      : bn_put(&k, c, 1, k.slot[BN_A], 1.f, why, why_len);
  }
  if (rc == MXC_OK) rc = bn_put(&k, c, 2, k.slot[BN_B], 1.f, why, why_len);
  return bn_end(&k, rc, why, why_len);
}
