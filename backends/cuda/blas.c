/* cuBLAS kernels: execute the steps of blas_plan.h.
 *
 * cuBLAS is opened on first use through dynlib.h (never linked): the
 * plug-in loads without it, and only these kernels fail, with a message
 * naming the library. MXC_CUBLAS_LIBRARY, read once, names the file to open
 * instead of libcublas.so.13 (a wheel's copy; the tests name a missing
 * file to check that message).
 *
 * Handles: a cublasHandle_t must not be used by two threads at once, and
 * engine workers call kernels concurrently, so each (thread, device) pair
 * has its own handle and its own vector of ones (the bias and bias
 * gradient operand), created on first use and released when the thread
 * exits (cuda_rt.h's mxc__cuda_tls_slot). Nothing is shared between
 * threads, so nothing needs a lock.
 *
 * Half precision (blas_plan.h): float16 / bfloat16 calls go through
 * cublasGemmEx / cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F, so
 * products accumulate in float32 as on the CPU and each output rounds
 * once. The handles forbid reduced-precision reductions
 * (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION): without it cuBLAS
 * may add split-k partial sums in the output's half type. Default math
 * otherwise: half inputs may use tensor cores, whose products of half
 * values are exact in float32 and accumulate in float32.
 *
 * Stream: the call's (cublasSetStream per call: the engine worker's
 * stream, or the legacy default stream for direct calls); the memset of
 * an empty contraction and the ones go there too. On an engine stream
 * run returns once the work is enqueued (the worker waits for its
 * stream); on the legacy stream it waits for it (ABI 2, gpu_plugin.h). */
#include "backends/cuda/blas.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dynlib.h"

enum {
  F_CREATE,
  F_DESTROY,
  F_MATH,
  F_GEMM,
  F_GEMM_BATCHED,
  F_GEMV,
  F_STATUS,
  F_STREAM,
  F_GEMM_EX,
  F_GEMM_BATCHED_EX,
  F_F64 /* the float64 calls of the linalg kernels (blas.h) */
};

static const char *const k_symbols[] = {
    "cublasCreate_v2",           "cublasDestroy_v2",
    "cublasSetMathMode",         "cublasSgemm_v2",
    "cublasSgemmStridedBatched", "cublasSgemv_v2",
    "cublasGetStatusString",     "cublasSetStream_v2",
    "cublasGemmEx",              "cublasGemmStridedBatchedEx",
    /* MXC__CUBLAS_F64_* (blas.h), in that order */
    "cublasDgemmStridedBatched", "cublasDgetrfBatched",
    "cublasDgetriBatched",       NULL};
static void *g_fns[sizeof k_symbols / sizeof k_symbols[0]];
static const char *g_files[] = {"libcublas.so.13", NULL};

static mxc__cuda_dynlib g_cublas = {
    .what = "cuBLAS",
    .install =
        "NVIDIA's cuBLAS for CUDA 13 (the CUDA repository's libcublas-13-0 "
        "package, or pip's nvidia-cublas wheel)",
    .files = g_files,
    .symbols = k_symbols,
    .fns = g_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

/* The prototypes of cublas_api.h, applied to the resolved addresses. */
#define FN(i, name) ((__typeof__(&name))g_fns[i])

/* The ones vectors, one per dtype (half_types.h's slots would do, but
 * this file stays plain C without the kernels' headers). */
enum { ONES_F32, ONES_F16, ONES_BF16, N_ONES };

typedef struct blas_ctx {
  cublasHandle_t h;
  void *ones[N_ONES];
  int64_t n_ones[N_ONES];
} blas_ctx;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  const char *env = getenv("MXC_CUBLAS_LIBRARY");
  if (env && *env) g_files[0] = env;
}

static int blas_fail(char *why, size_t len, const char *what,
                     cublasStatus_t s) {
  snprintf(why, len, "%s: %s (cublasStatus_t %d)", what,
           FN(F_STATUS, cublasGetStatusString)(s), (int)s);
  return MXC_ERR_INTERNAL;
}

/* A handle in math mode CUBLAS_DEFAULT_MATH: no TF32 (blas.h); half
 * products reduce in float32 (above). */
static int ctx_create(void *obj, int dev, char *why, size_t len) {
  (void)dev;
  blas_ctx *b = obj;
  cublasStatus_t s = FN(F_CREATE, cublasCreate_v2)(&b->h);
  if (s != CUBLAS_STATUS_SUCCESS) {
    b->h = NULL;
    snprintf(why, len, "%s", FN(F_STATUS, cublasGetStatusString)(s));
    return MXC_ERR_UNSUPPORTED;
  }
  s = FN(F_MATH, cublasSetMathMode)(
      b->h, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                           CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  if (s == CUBLAS_STATUS_SUCCESS) return MXC_OK;
  /* Never keep a handle whose math mode is unknown (it could be TF32). */
  (void)FN(F_DESTROY, cublasDestroy_v2)(b->h);
  b->h = NULL;
  return blas_fail(why, len, "cublasSetMathMode", s);
}

/* At the exit of the thread that made it: the handle and the ones. */
static void ctx_destroy(void *obj, int dev) {
  blas_ctx *b = obj;
  if (cudaSetDevice(dev) != cudaSuccess) return;
  (void)FN(F_DESTROY, cublasDestroy_v2)(b->h);
  for (int i = 0; i < N_ONES; ++i) {
    if (b->ones[i]) (void)cudaFree(b->ones[i]);
  }
}

/* The handle works on the call's stream (the engine worker's, or the
 * legacy default stream for direct calls). */
static int ctx_bind(void *obj, cudaStream_t st, char *why, size_t len) {
  const blas_ctx *b = obj;
  cublasStatus_t s = FN(F_STREAM, cublasSetStream_v2)(b->h, st);
  return s == CUBLAS_STATUS_SUCCESS ? MXC_OK
                                    : blas_fail(why, len, "cublasSetStream", s);
}

/* One context per (thread, device): nothing is shared between threads,
 * so nothing is locked (cuda_rt.h). */
static const mxc__cuda_tls_lib k_ctx_lib = {
    .name = "cuBLAS",
    .size = sizeof(blas_ctx),
    .create = ctx_create,
    .destroy = ctx_destroy,
    .bind = ctx_bind,
};

/* The slot of dtype dt in blas_ctx's ones, its element size and the bits
 * of 1.0 in it (float16 0x3c00, bfloat16 0x3f80). */
static int ones_slot(int dt, size_t *size, uint32_t *one) {
  switch (dt) {
    case MXC_DTYPE_FLOAT16: *size = 2, *one = 0x3c00u; return ONES_F16;
    case MXC_DTYPE_BFLOAT16: *size = 2, *one = 0x3f80u; return ONES_BF16;
    default: *size = 4, *one = 0x3f800000u; return ONES_F32;
  }
}

/* want elements of value 1 in dtype dt, in host memory (free). */
static void *host_ones(int dt, int64_t want) {
  size_t size;
  uint32_t one;
  (void)ones_slot(dt, &size, &one);
  unsigned char *host = malloc((size_t)want * size);
  for (int64_t i = 0; host && i < want; ++i) {
    if (size == 2) {
      uint16_t v = (uint16_t)one;
      memcpy(host + i * 2, &v, 2);
    } else {
      memcpy(host + i * 4, &one, 4);
    }
  }
  return host;
}

/* b's ones of dtype dt hold at least n ones (filled from the host once
 * per size). */
static int ensure_ones(blas_ctx *b, int dt, int64_t n, char *why,
                       size_t len) {
  size_t size;
  uint32_t one;
  int k = ones_slot(dt, &size, &one);
  if (n <= b->n_ones[k]) return MXC_OK;
  int64_t want = (n + 1023) / 1024 * 1024;
  void *host = host_ones(dt, want);
  if (!host) {
    snprintf(why, len, "out of host memory for %lld ones", (long long)want);
    return MXC_ERR_OOM;
  }
  if (b->ones[k]) (void)cudaFree(b->ones[k]);
  b->ones[k] = NULL;
  b->n_ones[k] = 0;
  cudaError_t e = cudaMalloc(&b->ones[k], (size_t)want * size);
  if (e == cudaSuccess) {
    /* On the call's stream: ordered before the products that read it
     * (pageable memory: the host buffer is copied before the call
     * returns). */
    e = cudaMemcpyAsync(b->ones[k], host, (size_t)want * size,
                        cudaMemcpyHostToDevice, mxc__cuda_stream());
  }
  free(host);
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, len, "ones for cuBLAS", e);
  }
  b->n_ones[k] = want;
  return MXC_OK;
}

static const void *operand(const mxc__gpu_call *c, const blas_ctx *b,
                           const mxc__blas_plan *p, int i) {
  size_t size;
  uint32_t one;
  return i == MXC__BLAS_ONES ? b->ones[ones_slot(p->dtype, &size, &one)]
                             : c->in[i].ptr;
}

static cublasOperation_t op_of(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

static cublasStatus_t gemm(const blas_ctx *b, const mxc__blas_step *s,
                           const float *A, const float *B, float *C) {
  const float one = 1.f;
  if (s->batch == 1) {
    return FN(F_GEMM, cublasSgemm_v2)(b->h, op_of(s->trans_a),
                                      op_of(s->trans_b), (int)s->m, (int)s->n,
                                      (int)s->k, &one, A, (int)s->lda, B,
                                      (int)s->ldb, &s->beta, C, (int)s->ldc);
  }
  return FN(F_GEMM_BATCHED, cublasSgemmStridedBatched)(
      b->h, op_of(s->trans_a), op_of(s->trans_b), (int)s->m, (int)s->n,
      (int)s->k, &one, A, (int)s->lda, s->stride_a, B, (int)s->ldb, s->stride_b,
      &s->beta, C, (int)s->ldc, s->stride_c, (int)s->batch);
}

/* A half product: inputs and output of type t, float32 accumulation and
 * alpha/beta (CUBLAS_COMPUTE_32F), one rounding into C. */
static cublasStatus_t gemm_ex(const blas_ctx *b, const mxc__blas_step *s,
                              cudaDataType t, const void *A, const void *B,
                              void *C) {
  const float one = 1.f;
  if (s->batch == 1) {
    return FN(F_GEMM_EX, cublasGemmEx)(
        b->h, op_of(s->trans_a), op_of(s->trans_b), (int)s->m, (int)s->n,
        (int)s->k, &one, A, t, (int)s->lda, B, t, (int)s->ldb, &s->beta, C, t,
        (int)s->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  return FN(F_GEMM_BATCHED_EX, cublasGemmStridedBatchedEx)(
      b->h, op_of(s->trans_a), op_of(s->trans_b), (int)s->m, (int)s->n,
      (int)s->k, &one, A, t, (int)s->lda, s->stride_a, B, t, (int)s->ldb,
      s->stride_b, &s->beta, C, t, (int)s->ldc, s->stride_c, (int)s->batch,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static int exec_zero(const mxc__blas_plan *p, const mxc__blas_step *s,
                     const mxc__gpu_call *c, char *why, size_t len) {
  size_t size;
  uint32_t one;
  (void)ones_slot(p->dtype, &size, &one);
  /* all-zero bits are +0 in every one of the dtypes */
  cudaError_t e = cudaMemsetAsync(c->out[s->c].ptr, 0,
                                  (size_t)c->out[s->c].size * size,
                                  mxc__cuda_stream());
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaMemset", e);
}

static int exec_step(const blas_ctx *b, const mxc__blas_plan *p,
                     const mxc__blas_step *s, const mxc__gpu_call *c,
                     char *why, size_t len) {
  void *C = c->out[s->c].ptr;
  const void *A = operand(c, b, p, s->a), *B = operand(c, b, p, s->b);
  const float one = 1.f;
  cublasStatus_t st;
  if (s->kind == MXC__BLAS_ZERO) return exec_zero(p, s, c, why, len);
  if (p->dtype != MXC_DTYPE_FLOAT32) { /* the plan has no GEMV for them */
    cudaDataType t = p->dtype == MXC_DTYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
    st = gemm_ex(b, s, t, A, B, C);
    return st == CUBLAS_STATUS_SUCCESS
               ? MXC_OK
               : blas_fail(why, len, "cublasGemmEx", st);
  }
  if (s->kind == MXC__BLAS_GEMV) {
    st = FN(F_GEMV, cublasSgemv_v2)(b->h, op_of(s->trans_a), (int)s->m,
                                    (int)s->n, &one, A, (int)s->lda, B, 1,
                                    &s->beta, C, 1);
    return st == CUBLAS_STATUS_SUCCESS ? MXC_OK
                                       : blas_fail(why, len, "cublasSgemv", st);
  }
  st = gemm(b, s, A, B, C);
  return st == CUBLAS_STATUS_SUCCESS ? MXC_OK
                                     : blas_fail(why, len, "cublasSgemm", st);
}

static int exec_plan(const mxc__blas_plan *p, const mxc__gpu_call *c, char *why,
                     size_t len) {
  void *obj = NULL;
  int rc = mxc__cuda_use_device(c->dev, why, len);
  if (rc == MXC_OK) rc = mxc__cuda_tls_slot(&k_ctx_lib, c->dev, &obj, why, len);
  blas_ctx *b = obj;
  if (rc == MXC_OK) rc = ensure_ones(b, p->dtype, p->ones, why, len);
  for (int i = 0; rc == MXC_OK && i < p->n; ++i) {
    rc = exec_step(b, p, &p->step[i], c, why, len);
  }
  /* Nothing shared outlives the call (the handle and ones are this
   * thread's): on an engine stream the engine waits for it. */
  return rc == MXC_OK ? mxc__cuda_finish("cuBLAS kernel", why, len)
                      : mxc__cuda_wait(rc, "cuBLAS kernel", why, len);
}

int mxc__cuda_blas_run(int op, const mxc__gpu_call *c, char *why,
                       size_t why_len) {
  mxc__blas_plan p;
  int rc = mxc__blas_plan_call(op, c, &p, why, why_len);
  if (rc != MXC_OK || p.n == 0) return rc;
  (void)pthread_once(&g_once, init_once);
  rc = mxc__cuda_dynlib_load(&g_cublas, why, why_len);
  return rc == MXC_OK ? exec_plan(&p, c, why, why_len) : rc;
}

int mxc__cuda_blas_f64(int dev, void **handle, void **fns, char *why,
                       size_t why_len) {
  (void)pthread_once(&g_once, init_once);
  int rc = mxc__cuda_dynlib_load(&g_cublas, why, why_len);
  if (rc == MXC_OK) rc = mxc__cuda_use_device(dev, why, why_len);
  void *obj = NULL;
  if (rc == MXC_OK) {
    rc = mxc__cuda_tls_slot(&k_ctx_lib, dev, &obj, why, why_len);
  }
  if (rc != MXC_OK) return rc;
  *handle = ((blas_ctx *)obj)->h;
  for (int i = 0; i < MXC__CUBLAS_N_F64; ++i) fns[i] = g_fns[F_F64 + i];
  return MXC_OK;
}

#define RUN(fn, op)                                           \
  int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return mxc__cuda_blas_run(op, c, why, why_len);           \
  }
RUN(mxc__cuda_blas_dot, MXC__BLAS_DOT)
RUN(mxc__cuda_blas_dot_bwd, MXC__BLAS_DOT_BWD)
RUN(mxc__cuda_blas_batch_dot, MXC__BLAS_BATCH_DOT)
RUN(mxc__cuda_blas_batch_dot_bwd, MXC__BLAS_BATCH_DOT_BWD)
RUN(mxc__cuda_blas_fc, MXC__BLAS_FC)
RUN(mxc__cuda_blas_fc_bwd, MXC__BLAS_FC_BWD)
#undef RUN
