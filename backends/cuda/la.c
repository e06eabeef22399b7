/* The linalg kernels (la.h): execute the steps of la_plan.h.
 *
 * Memory: one stream-ordered block (cudaMallocAsync / cudaFreeAsync on the
 * call's stream) holds the float64 slots, the LU's pivots and infos and
 * the batched calls' pointer arrays; freed in stream order after the last
 * step, so nothing waits for it and no other stream can see it.
 *
 * Libraries: cuBLAS through blas.c (its loader, MXC_CUBLAS_LIBRARY, and its
 * per-thread handles), cuSOLVER here (libcusolver.so.12, opened on first
 * use; MXC_CUSOLVER_LIBRARY names another file), each with a handle per
 * (thread, device) (cuda_rt.h's mxc__cuda_tls_slot) bound to the call's
 * stream. A plan loads only the libraries its steps use: extractdiag,
 * makediag and sumlogdiag need neither, potrf only cuSOLVER.
 *
 * potrf: the CPU fails the call when a matrix is not positive definite,
 * so the kernel waits for the factorisation's infos (a copy to the host
 * and a wait on the call's stream) and fails the same way. A singular LU
 * (inverse, trsm, potri, det's gradient) needs no wait: its items become
 * NaN on the device (la_plan.c). */
#include "backends/cuda/la.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
/* cusolverDn.h declares a function without a prototype: its types only
 * are used here, the functions come from dynlib. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cusolverDn.h>
#pragma GCC diagnostic pop
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/blas.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dynlib.h"

/* ---- cuSOLVER, opened on first use ---- */

enum { S_CREATE, S_DESTROY, S_STREAM, S_POTRF_BATCHED };

static const char *const k_solver_symbols[] = {
    "cusolverDnCreate", "cusolverDnDestroy", "cusolverDnSetStream",
    "cusolverDnDpotrfBatched", NULL};
static void *g_sfns[sizeof k_solver_symbols / sizeof k_solver_symbols[0]];
static const char *g_solver_files[] = {"libcusolver.so.12", NULL};

static mxc__cuda_dynlib g_solver = {
    .what = "cuSOLVER",
    .install =
        "NVIDIA's cuSOLVER for CUDA 13 (the CUDA repository's "
        "libcusolver-13-0 package, or pip's nvidia-cusolver wheel, with the "
        "cuBLAS, cuSPARSE and nvJitLink it loads)",
    .files = g_solver_files,
    .symbols = k_solver_symbols,
    .fns = g_sfns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

#define SFN(i, name) ((__typeof__(&name))g_sfns[i])

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
  const char *env = getenv("MXC_CUSOLVER_LIBRARY");
  if (env && *env) g_solver_files[0] = env;
}

static int solver_create(void *obj, int dev, char *why, size_t len) {
  (void)dev;
  cusolverStatus_t s = SFN(S_CREATE, cusolverDnCreate)(obj);
  if (s == CUSOLVER_STATUS_SUCCESS) return MXC_OK;
  *(cusolverDnHandle_t *)obj = NULL;
  snprintf(why, len, "cusolverDnCreate failed (cusolverStatus_t %d)", (int)s);
  return MXC_ERR_UNSUPPORTED;
}

static void solver_destroy(void *obj, int dev) {
  if (cudaSetDevice(dev) != cudaSuccess) return;
  (void)SFN(S_DESTROY, cusolverDnDestroy)(*(cusolverDnHandle_t *)obj);
}

static int solver_bind(void *obj, cudaStream_t st, char *why, size_t len) {
  cusolverStatus_t s =
      SFN(S_STREAM, cusolverDnSetStream)(*(cusolverDnHandle_t *)obj, st);
  if (s == CUSOLVER_STATUS_SUCCESS) return MXC_OK;
  snprintf(why, len, "cusolverDnSetStream failed (cusolverStatus_t %d)",
           (int)s);
  return MXC_ERR_INTERNAL;
}

/* One handle per (thread, device): nothing shared, nothing locked. */
static const mxc__cuda_tls_lib k_solver_lib = {
    .name = "cuSOLVER",
    .size = sizeof(cusolverDnHandle_t),
    .create = solver_create,
    .destroy = solver_destroy,
    .bind = solver_bind,
};

/* ---- one call ---- */

typedef struct la_exec {
  const mxc__la_plan *p;
  const mxc__gpu_call *c;
  cublasHandle_t blas;
  void *bfn[MXC__CUBLAS_N_F64];
  cusolverDnHandle_t solver;
  void *block; /* the call's device memory */
  double *slot[MXC__LA_MAX_SLOTS];
  int *piv, *info, *info2;
  double **ptr_a, **ptr_c;
} la_exec;

#define BFN(e, i, name) ((__typeof__(&name))(e)->bfn[i])

static size_t round_up(size_t v) { return (v + 255) / 256 * 256; }

/* Carves e->block: slots, pivots and infos, pointer arrays. */
static size_t layout(la_exec *e, char *base) {
  const mxc__la_plan *p = e->p;
  size_t off = 0;
  for (int i = 0; i < p->n_slots; ++i) {
    if (base) e->slot[i] = (double *)(base + off);
    off += round_up((size_t)mxc__la_slot_size(p, i) * sizeof(double) + 8);
  }
  size_t nb = (size_t)p->batch;
  if (base) e->piv = (int *)(base + off);
  off += round_up((size_t)p->lu_n * nb * sizeof(int) + 8);
  if (base) e->info = (int *)(base + off), e->info2 = e->info + nb;
  off += round_up(2 * nb * sizeof(int));
  if (base) e->ptr_a = (double **)(base + off), e->ptr_c = e->ptr_a + nb;
  return off + round_up(2 * nb * sizeof(double *));
}

static int cublas_fail(const char *what, cublasStatus_t s, char *why,
                       size_t len) {
  snprintf(why, len, "%s failed (cublasStatus_t %d)", what, (int)s);
  return MXC_ERR_INTERNAL;
}

static int exec_gemm(la_exec *e, const mxc__la_step *s, char *why,
                     size_t len) {
  cublasStatus_t st = BFN(e, MXC__CUBLAS_F64_GEMM_SB, cublasDgemmStridedBatched)(
      e->blas, s->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, (int)s->m, (int)s->n, (int)s->k,
      &s->alpha, e->slot[s->a], (int)s->lda, s->stride_a, e->slot[s->b],
      (int)s->ldb, s->stride_b, &s->beta, e->slot[s->c], (int)s->ldc,
      s->stride_c, (int)e->p->batch);
  return st == CUBLAS_STATUS_SUCCESS
             ? MXC_OK
             : cublas_fail("cublasDgemmStridedBatched", st, why, len);
}

/* LU in place of slot a's items (pointer array ptr_a). */
static int exec_getrf(la_exec *e, const mxc__la_step *s, char *why,
                      size_t len) {
  if (s->n == 0) return MXC_OK;
  int64_t b = e->p->batch;
  mxc__la_cu_ptrs(e->ptr_a, e->slot[s->a], s->n * s->n, b);
  cublasStatus_t st = BFN(e, MXC__CUBLAS_F64_GETRF, cublasDgetrfBatched)(
      e->blas, (int)s->n, e->ptr_a, (int)s->n, e->piv, e->info, (int)b);
  return st == CUBLAS_STATUS_SUCCESS
             ? MXC_OK
             : cublas_fail("cublasDgetrfBatched", st, why, len);
}

/* The inverse from the LU of GETRF (same slot a, same pointer array). */
static int exec_getri(la_exec *e, const mxc__la_step *s, char *why,
                      size_t len) {
  if (s->n == 0) return MXC_OK;
  int64_t b = e->p->batch;
  mxc__la_cu_ptrs(e->ptr_a, e->slot[s->a], s->n * s->n, b);
  mxc__la_cu_ptrs(e->ptr_c, e->slot[s->c], s->n * s->n, b);
  cublasStatus_t st = BFN(e, MXC__CUBLAS_F64_GETRI, cublasDgetriBatched)(
      e->blas, (int)s->n, (const double *const *)e->ptr_a, (int)s->n, e->piv,
      e->ptr_c, (int)s->n, e->info2, (int)b);
  return st == CUBLAS_STATUS_SUCCESS
             ? MXC_OK
             : cublas_fail("cublasDgetriBatched", st, why, len);
}

/* Cholesky of slot a's items in place, then the CPU's error for a matrix
 * that is not positive definite (after waiting for the infos). */
static int exec_potrf(la_exec *e, const mxc__la_step *s, char *why,
                      size_t len) {
  if (s->n == 0) return MXC_OK;
  int64_t b = e->p->batch;
  mxc__la_cu_ptrs(e->ptr_a, e->slot[s->a], s->n * s->n, b);
  cusolverStatus_t st = SFN(S_POTRF_BATCHED, cusolverDnDpotrfBatched)(
      e->solver, s->fill ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER,
      (int)s->n, e->ptr_a, (int)s->n, e->info, (int)b);
  if (st != CUSOLVER_STATUS_SUCCESS) {
    snprintf(why, len, "cusolverDnDpotrfBatched failed (cusolverStatus_t %d)",
             (int)st);
    return MXC_ERR_INTERNAL;
  }
  int *host = malloc((size_t)b * sizeof(int));
  if (!host) {
    snprintf(why, len, "out of host memory for %lld infos", (long long)b);
    return MXC_ERR_OOM;
  }
  cudaError_t ce = cudaMemcpyAsync(host, e->info, (size_t)b * sizeof(int),
                                   cudaMemcpyDeviceToHost, mxc__cuda_stream());
  int rc = ce == cudaSuccess ? MXC_OK
                             : mxc__cuda_rt_fail(why, len, "cudaMemcpy", ce);
  rc = mxc__cuda_wait(rc, "cuSOLVER potrf", why, len);
  if (rc == MXC_OK) rc = mxc__la_potrf_check(host, b, why, len);
  free(host);
  return rc;
}

static int exec_step(la_exec *e, const mxc__la_step *s, char *why,
                     size_t len) {
  switch (s->kind) {
    case MXC__LA_S_GEMM: return exec_gemm(e, s, why, len);
    case MXC__LA_S_GETRF: return exec_getrf(e, s, why, len);
    case MXC__LA_S_GETRI: return exec_getri(e, s, why, len);
    case MXC__LA_S_POTRF: return exec_potrf(e, s, why, len);
    case MXC__LA_S_ELEM:
      mxc__la_cu_elem(s, e->slot, e->info, e->p->batch);
      return MXC_OK;
    default:
      mxc__la_cu_item(s, e->slot, e->piv, e->p->batch);
      return MXC_OK;
  }
}

/* Inputs widened, the steps, outputs rounded with their write modes. */
static int exec_all(la_exec *e, char *why, size_t len) {
  const mxc__la_plan *p = e->p;
  const mxc__gpu_call *c = e->c;
  for (int i = 0; i < p->n_in; ++i) {
    mxc__la_cu_load(c->in[i].ptr, p->dtype, e->slot[i], c->in[i].size);
  }
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < p->n_steps; ++i) {
    rc = exec_step(e, &p->step[i], why, len);
  }
  for (int i = 0; rc == MXC_OK && i < p->n_out; ++i) {
    mxc__la_cu_store(e->slot[p->n_in + i], c->out[i].ptr, p->dtype, c->req[i],
                     c->out[i].size);
  }
  return rc;
}

/* The libraries the plan uses (loaded before the device is touched: a
 * missing library is the answer even where no GPU is usable), the
 * device, the handles. */
static int open_libs(la_exec *e, char *why, size_t len) {
  int rc = MXC_OK;
  if (e->p->needs_solver) {
    (void)pthread_once(&g_once, init_once);
    rc = mxc__cuda_dynlib_load(&g_solver, why, len);
  }
  if (rc == MXC_OK && e->p->needs_blas) {
    void *h = NULL;
    rc = mxc__cuda_blas_f64(e->c->dev, &h, e->bfn, why, len);
    e->blas = h;
  }
  if (rc == MXC_OK) rc = mxc__cuda_use_device(e->c->dev, why, len);
  void *obj = NULL;
  if (rc == MXC_OK && e->p->needs_solver) {
    rc = mxc__cuda_tls_slot(&k_solver_lib, e->c->dev, &obj, why, len);
    if (rc == MXC_OK) e->solver = *(cusolverDnHandle_t *)obj;
  }
  return rc;
}

int mxc__cuda_la_run(int op, const mxc__gpu_call *c, char *why, size_t len) {
  mxc__la_plan p;
  int rc = mxc__la_plan_call(op, c, &p, why, len);
  if (rc != MXC_OK || p.n_steps == 0) return rc;
  la_exec e;
  memset(&e, 0, sizeof e);
  e.p = &p;
  e.c = c;
  rc = open_libs(&e, why, len);
  if (rc != MXC_OK) return rc;
  cudaError_t ce =
      cudaMallocAsync(&e.block, layout(&e, NULL), mxc__cuda_stream());
  if (ce != cudaSuccess) {
    (void)cudaGetLastError(); /* out of memory is not sticky */
    return mxc__cuda_rt_fail(why, len, "linalg scratch memory", ce);
  }
  (void)layout(&e, e.block);
  rc = exec_all(&e, why, len);
  (void)cudaFreeAsync(e.block, mxc__cuda_stream());
  return rc == MXC_OK ? mxc__cuda_finish("linalg kernel", why, len)
                      : mxc__cuda_wait(rc, "linalg kernel", why, len);
}

#define RUN(name, op, fn)                                               \
  int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t len) {   \
    return mxc__cuda_la_run(op, c, why, len);                           \
  }
MXC__CUDA_LA_OPS(RUN)
#undef RUN
