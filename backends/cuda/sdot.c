/* cuSPARSE kernel of dot with a CSR lhs: executes sdot_plan.h's plan with
 * cusparseSpMM (generic API).
 *
 * cuSPARSE is opened on first use through dynlib.h (never linked): the
 * plug-in loads without it, and only this kernel fails, naming the
 * library. cusparse.h gives the types and prototypes; the addresses come
 * from dynlib.
 *
 * Handles and workspace: a cusparseHandle_t must not be used by two
 * threads at once, and engine workers call kernels concurrently, so each
 * (thread, device) pair has its own handle and its own SpMM workspace,
 * created on first use, grown on demand, released at thread exit
 * (cuda_rt.h's mxc__cuda_tls_slot). A
 * thread's work goes to one stream (its worker's), which orders the
 * reuse of its workspace; growing it frees the old one with cudaFree,
 * which waits for the device. Nothing is shared, nothing is locked.
 *
 * Stream: the call's (cusparseSetStream on every call); on an engine
 * stream run returns once the work is enqueued, on the legacy default
 * stream it waits (mxc__cuda_finish). */
#include "backends/cuda/sdot.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dynlib.h"

enum {
  F_CREATE,
  F_DESTROY,
  F_STREAM,
  F_ERROR,
  F_CSR,
  F_DNMAT,
  F_DESTROY_SP,
  F_DESTROY_DN,
  F_BUFSIZE,
  F_SPMM
};

static const char *const k_symbols[] = {
    "cusparseCreate",         "cusparseDestroy",
    "cusparseSetStream",      "cusparseGetErrorString",
    "cusparseCreateCsr",      "cusparseCreateDnMat",
    "cusparseDestroySpMat",   "cusparseDestroyDnMat",
    "cusparseSpMM_bufferSize", "cusparseSpMM",
    NULL};
static void *g_fns[sizeof k_symbols / sizeof k_symbols[0]];
static const char *g_files[] = {"libcusparse.so.12", NULL};

static mxc__cuda_dynlib g_cusparse = {
    .what = "cuSPARSE",
    .install =
        "NVIDIA's cuSPARSE 12 for CUDA 13 (the CUDA repository's "
        "libcusparse-13-0 package, or pip's nvidia-cusparse wheel)",
    .files = g_files,
    .symbols = k_symbols,
    .fns = g_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

/* The prototypes of cusparse.h, applied to the resolved addresses. */
#define FN(i, name) ((__typeof__(&name))g_fns[i])

typedef struct sp_ctx {
  cusparseHandle_t h;
  void *work;
  size_t work_bytes;
} sp_ctx;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  const char *env = getenv("MXC_CUSPARSE_LIBRARY");
  if (env && *env) g_files[0] = env;
}

static int sp_fail(char *why, size_t len, const char *what,
                   cusparseStatus_t s) {
  snprintf(why, len, "%s: %s (cusparseStatus_t %d)", what,
           FN(F_ERROR, cusparseGetErrorString)(s), (int)s);
  return MXC_ERR_INTERNAL;
}

static int ctx_create(void *obj, int dev, char *why, size_t len) {
  (void)dev;
  sp_ctx *s = obj;
  cusparseStatus_t st = FN(F_CREATE, cusparseCreate)(&s->h);
  if (st == CUSPARSE_STATUS_SUCCESS) return MXC_OK;
  s->h = NULL;
  snprintf(why, len, "%s", FN(F_ERROR, cusparseGetErrorString)(st));
  return MXC_ERR_UNSUPPORTED;
}

/* At the exit of the thread that made it: the handle and the workspace. */
static void ctx_destroy(void *obj, int dev) {
  sp_ctx *s = obj;
  if (cudaSetDevice(dev) != cudaSuccess) return;
  (void)FN(F_DESTROY, cusparseDestroy)(s->h);
  if (s->work) (void)cudaFree(s->work);
}

/* The handle works on the call's stream (cusparseSetStream per call). */
static int ctx_bind(void *obj, cudaStream_t stream, char *why, size_t len) {
  const sp_ctx *s = obj;
  cusparseStatus_t st = FN(F_STREAM, cusparseSetStream)(s->h, stream);
  return st == CUSPARSE_STATUS_SUCCESS
             ? MXC_OK
             : sp_fail(why, len, "cusparseSetStream", st);
}

/* One context per (thread, device) (cuda_rt.h): nothing shared. */
static const mxc__cuda_tls_lib k_ctx_lib = {
    .name = "cuSPARSE",
    .size = sizeof(sp_ctx),
    .create = ctx_create,
    .destroy = ctx_destroy,
    .bind = ctx_bind,
};

/* s->work holds at least n bytes. */
static int ensure_work(sp_ctx *s, size_t n, char *why, size_t len) {
  if (n <= s->work_bytes) return MXC_OK;
  if (s->work) (void)cudaFree(s->work);
  s->work = NULL;
  s->work_bytes = 0;
  cudaError_t e = cudaMalloc(&s->work, n);
  if (e != cudaSuccess) {
    s->work = NULL;
    return mxc__cuda_rt_fail(why, len, "cuSPARSE workspace", e);
  }
  s->work_bytes = n;
  return MXC_OK;
}

/* The call's three descriptors (sdot_plan.h: A as stored, B and C
 * row-major with their ld). */
typedef struct descs {
  cusparseSpMatDescr_t a;
  cusparseDnMatDescr_t b, c;
} descs;

static void descs_free(descs *d) {
  if (d->a) (void)FN(F_DESTROY_SP, cusparseDestroySpMat)(d->a);
  if (d->b) (void)FN(F_DESTROY_DN, cusparseDestroyDnMat)(d->b);
  if (d->c) (void)FN(F_DESTROY_DN, cusparseDestroyDnMat)(d->c);
}

static int descs_make(const mxc__sdot_plan *p, const mxc__gpu_call *c,
                      descs *d, char *why, size_t len) {
  cudaDataType vt = p->f64 ? CUDA_R_64F : CUDA_R_32F;
  cusparseIndexType_t it = p->index64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  const mxc__gpu_array *a = &c->in[0];
  cusparseStatus_t st = FN(F_CSR, cusparseCreateCsr)(
      &d->a, p->a_rows, p->a_cols, p->nnz, a->aux[0], a->aux[1], a->ptr, it,
      it, CUSPARSE_INDEX_BASE_ZERO, vt);
  if (st != CUSPARSE_STATUS_SUCCESS) return sp_fail(why, len, "cusparseCreateCsr", st);
  st = FN(F_DNMAT, cusparseCreateDnMat)(&d->b, p->b_rows, p->b_cols, p->ldb,
                                        c->in[1].ptr, vt, CUSPARSE_ORDER_ROW);
  if (st == CUSPARSE_STATUS_SUCCESS) {
    st = FN(F_DNMAT, cusparseCreateDnMat)(&d->c, p->c_rows, p->c_cols, p->ldc,
                                          c->out[0].ptr, vt,
                                          CUSPARSE_ORDER_ROW);
  }
  return st == CUSPARSE_STATUS_SUCCESS
             ? MXC_OK
             : sp_fail(why, len, "cusparseCreateDnMat", st);
}

/* alpha and beta in the compute type (float or double). */
typedef union scalar {
  float f;
  double d;
} scalar;

static scalar scalar_of(const mxc__sdot_plan *p, double v) {
  scalar s;
  if (p->f64) {
    s.d = v;
  } else {
    s.f = (float)v;
  }
  return s;
}

/* The algorithms tried, in order: the library's default, then CSR_ALG1,
 * which the documentation gives for every opA and dense order, in case
 * the default declines a transposed product with row-major operands
 * (CUSPARSE_STATUS_NOT_SUPPORTED). Unverified on a GPU so far. */
static const cusparseSpMMAlg_t k_algs[] = {CUSPARSE_SPMM_ALG_DEFAULT,
                                           CUSPARSE_SPMM_CSR_ALG1};

static int spmm(const mxc__sdot_plan *p, sp_ctx *s, const descs *d, char *why,
                size_t len) {
  cusparseOperation_t op_a = p->trans_a ? CUSPARSE_OPERATION_TRANSPOSE
                                        : CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseOperation_t op_b = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cudaDataType ct = p->f64 ? CUDA_R_64F : CUDA_R_32F;
  scalar alpha = scalar_of(p, p->alpha), beta = scalar_of(p, p->beta);
  size_t bytes = 0, i = 0;
  cusparseStatus_t st = CUSPARSE_STATUS_NOT_SUPPORTED;
  for (; i < sizeof k_algs / sizeof k_algs[0]; ++i) {
    st = FN(F_BUFSIZE, cusparseSpMM_bufferSize)(s->h, op_a, op_b, &alpha,
                                                d->a, d->b, &beta, d->c, ct,
                                                k_algs[i], &bytes);
    if (st != CUSPARSE_STATUS_NOT_SUPPORTED) break;
  }
  if (st != CUSPARSE_STATUS_SUCCESS) {
    return sp_fail(why, len, "cusparseSpMM_bufferSize", st);
  }
  int rc = ensure_work(s, bytes, why, len);
  if (rc != MXC_OK) return rc;
  st = FN(F_SPMM, cusparseSpMM)(s->h, op_a, op_b, &alpha, d->a, d->b, &beta,
                                d->c, ct, k_algs[i], s->work);
  return st == CUSPARSE_STATUS_SUCCESS ? MXC_OK
                                       : sp_fail(why, len, "cusparseSpMM", st);
}

/* Write mode clears C first: cuSPARSE does not promise that beta = 0
 * ignores C's old contents (0 * NaN is NaN), and outputs may hold
 * anything (the conformance tests poison them). */
static int clear(const mxc__sdot_plan *p, const mxc__gpu_call *c, char *why,
                 size_t len) {
  cudaError_t e = cudaMemsetAsync(c->out[0].ptr, 0, p->c_bytes,
                                  mxc__cuda_stream());
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaMemset", e);
}

static int exec_plan(const mxc__sdot_plan *p, const mxc__gpu_call *c,
                     char *why, size_t len) {
  sp_ctx *s = NULL;
  descs d = {0};
  int rc = mxc__cuda_use_device(c->dev, why, len);
  if (rc == MXC_OK && (p->kind == MXC__SDOT_ZERO || p->beta == 0)) {
    rc = clear(p, c, why, len);
  }
  if (rc == MXC_OK && p->kind == MXC__SDOT_SPMM) {
    void *obj = NULL;
    rc = mxc__cuda_tls_slot(&k_ctx_lib, c->dev, &obj, why, len);
    s = obj;
    if (rc == MXC_OK) rc = descs_make(p, c, &d, why, len);
    if (rc == MXC_OK) rc = spmm(p, s, &d, why, len);
    descs_free(&d);
  }
  return rc == MXC_OK ? mxc__cuda_finish("cuSPARSE kernel", why, len)
                      : mxc__cuda_wait(rc, "cuSPARSE kernel", why, len);
}

int mxc__cuda_sdot(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__sdot_plan p;
  int rc = mxc__sdot_plan_make(c, &p, why, why_len);
  if (rc != MXC_OK || p.kind == MXC__SDOT_NOTHING) return rc;
  if (p.kind == MXC__SDOT_SPMM) {
    (void)pthread_once(&g_once, init_once);
    rc = mxc__cuda_dynlib_load(&g_cusparse, why, why_len);
    if (rc != MXC_OK) return rc;
  }
  return exec_plan(&p, c, why, why_len);
}
