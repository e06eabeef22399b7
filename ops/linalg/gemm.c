/* The family's one GEMM entry point and shared inference helpers.
 *
 * With MXC_USE_OPENBLAS every product goes to cblas_sgemm/cblas_dgemm.
 * BLAS takes 32-bit dimensions, so products with a dimension beyond
 * INT_MAX (or builds without OpenBLAS) use the portable loop below, which
 * is correct but slow: it exists so the family works everywhere, not to
 * compete.
 *
 * Threading policy. OpenBLAS runs single-threaded (set once, on the first
 * product) and large products are split by rows or columns of C across
 * the kernel pool (core/op/parallel.h) instead. Reasons, measured on the
 * 2-core machine with bench/train (LeNet and the MLP, batch 128):
 * OpenBLAS's own helper threads busy-wait in sched_yield between calls
 * and competed with the engine's two workers for the two cores (20-27%
 * of CPU time spent yielding), and two concurrent products on two
 * workers each asked for every core. The pool is shared by all kernels
 * and a caller that finds it busy runs alone, so concurrent products
 * never oversubscribe the machine and no thread spins between calls.
 * A product smaller than PAR_MIN_FLOPS runs in the calling thread: below
 * that the hand-off costs more than the second core gives. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "ops/linalg/linalg.h"
#include "core/op/parallel.h"
#include "core/op/half_compute.h"

#ifdef MXC_USE_OPENBLAS
#include <cblas.h>
#include <pthread.h>
#endif

/* C = op(A) op(B) (+ C), one typed loop per dtype. The i-p-j order keeps
 * the innermost loop contiguous in C (and in B when B is not
 * transposed). */
#define DEF_NAIVE_GEMM(T, sfx)                                                 \
  static void naive_gemm_##sfx(int ta, int tb, int64_t m, int64_t n,           \
                               int64_t k, const T *a, int64_t lda, const T *b, \
                               int64_t ldb, int accumulate, T *c,              \
                               int64_t ldc) {                                  \
    for (int64_t i = 0; i < m; ++i) {                                          \
      T *ci = c + i * ldc;                                                     \
      if (!accumulate) {                                                       \
        for (int64_t j = 0; j < n; ++j) ci[j] = 0;                             \
      }                                                                        \
      for (int64_t p = 0; p < k; ++p) {                                        \
        T aip = ta ? a[p * lda + i] : a[i * lda + p];                          \
        if (tb) {                                                              \
          for (int64_t j = 0; j < n; ++j) ci[j] += aip * b[j * ldb + p];       \
        } else {                                                               \
          const T *bp = b + p * ldb;                                           \
          for (int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];                \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }
DEF_NAIVE_GEMM(float, f32)
DEF_NAIVE_GEMM(double, f64)

#ifdef MXC_USE_OPENBLAS
static int fits_blas(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                     int64_t ldc) {
  return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX &&
         ldb <= INT_MAX && ldc <= INT_MAX;
}

static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
static void blas_single_thread(void) { openblas_set_num_threads(1); }
#endif

/* One product, in the calling thread. */
typedef struct gemm_args {
  int dtype, ta, tb;
  int64_t m, n, k;
  const char *a, *b;
  int64_t lda, ldb, ldc;
  int accumulate;
  char *c;
  int split_rows; /* split C by rows (1) or by columns (0) */
} gemm_args;

static void gemm_serial(const gemm_args *g, int64_t m, int64_t n, const void *a,
                        const void *b, void *c) {
#ifdef MXC_USE_OPENBLAS
  if (fits_blas(m, n, g->k, g->lda, g->ldb, g->ldc)) {
    enum CBLAS_TRANSPOSE opa = g->ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE opb = g->tb ? CblasTrans : CblasNoTrans;
    if (g->dtype == MXC_DTYPE_FLOAT32) {
      cblas_sgemm(CblasRowMajor, opa, opb, (int)m, (int)n, (int)g->k, 1.0f, a,
                  (int)g->lda, b, (int)g->ldb, g->accumulate ? 1.0f : 0.0f, c,
                  (int)g->ldc);
    } else {
      cblas_dgemm(CblasRowMajor, opa, opb, (int)m, (int)n, (int)g->k, 1.0, a,
                  (int)g->lda, b, (int)g->ldb, g->accumulate ? 1.0 : 0.0, c,
                  (int)g->ldc);
    }
    return;
  }
#endif
  if (g->dtype == MXC_DTYPE_FLOAT32) {
    naive_gemm_f32(g->ta, g->tb, m, n, g->k, a, g->lda, b, g->ldb,
                   g->accumulate, c, g->ldc);
  } else {
    naive_gemm_f64(g->ta, g->tb, m, n, g->k, a, g->lda, b, g->ldb,
                   g->accumulate, c, g->ldc);
  }
}

/* The part of C in rows (or columns) [lo, hi): rows of C take rows of
 * op(A) (columns of A when transposed); columns take columns of op(B). */
static int gemm_part(void *arg, int64_t lo, int64_t hi) {
  const gemm_args *g = arg;
  size_t es = mxc__dtype_size(g->dtype);
  if (g->split_rows) {
    const char *a = g->a + (size_t)(g->ta ? lo : lo * g->lda) * es;
    gemm_serial(g, hi - lo, g->n, a, g->b, g->c + (size_t)(lo * g->ldc) * es);
  } else {
    const char *b = g->b + (size_t)(g->tb ? lo * g->ldb : lo) * es;
    gemm_serial(g, g->m, hi - lo, g->a, b, g->c + (size_t)lo * es);
  }
  return MXC_OK;
}

#ifndef PAR_MIN_FLOPS
#define PAR_MIN_FLOPS ((int64_t)1 << 21)
#endif
/* Parts narrower than this waste the BLAS kernels' register blocking. */
#define PAR_MIN_SPAN 32

void mxc__gemm(int dtype, int ta, int tb, int64_t m, int64_t n, int64_t k,
               const void *a, int64_t lda, const void *b, int64_t ldb,
               int accumulate, void *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    /* BLAS rejects leading dimensions of 0; the product is simply 0. */
    if (accumulate) return;
    size_t es = mxc__dtype_size(dtype);
    for (int64_t i = 0; i < m; ++i) {
      memset((char *)c + (size_t)(i * ldc) * es, 0, (size_t)n * es);
    }
    return;
  }
#ifdef MXC_USE_OPENBLAS
  pthread_once(&g_blas_once, blas_single_thread);
#endif
  gemm_args g = {.dtype = dtype,
                 .ta = ta,
                 .tb = tb,
                 .m = m,
                 .n = n,
                 .k = k,
                 .a = a,
                 .b = b,
                 .lda = lda,
                 .ldb = ldb,
                 .ldc = ldc,
                 .accumulate = accumulate,
                 .c = c,
                 .split_rows = m >= n};
  int threads = mxc__parallel_threads();
  int64_t span = g.split_rows ? m : n;
  if (threads > 1 && (double)m * (double)n * (double)k >= PAR_MIN_FLOPS &&
      span >= 2 * PAR_MIN_SPAN) {
    int64_t grain = (span + threads - 1) / threads;
    grain = (grain + 15) / 16 * 16; /* whole register blocks per part */
    if (grain < PAR_MIN_SPAN) grain = PAR_MIN_SPAN;
    /* gemm_part cannot fail, so neither can the loop. */
    (void)mxc__parallel_for(span, grain, threads, gemm_part, &g);
    return;
  }
  gemm_serial(&g, m, n, a, b, c);
}

int mxc__linalg_uses_openblas(void) {
#ifdef MXC_USE_OPENBLAS
  return 1;
#else
  return 0;
#endif
}

/* ---- inference helpers ---- */

int mxc__linalg_infer_type(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out) {
  /* float16/bfloat16 compute in float32 (core/op/half_compute.h). */
  return mxc__infer_type_float_or_half(op, param, in, n_in, out, n_out);
}

int mxc__linalg_infer_type_float(const mxc__op *op, const void *param,
                                 int *in, int n_in, int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = n_in ? in[0] : (n_out ? out[0] : -1);
  if (t >= 0 && t != MXC_DTYPE_FLOAT32 && t != MXC_DTYPE_FLOAT64) {
    return mxc__unsupported_dtype(op->name, t,
                                  "this operator takes float32 or float64");
  }
  return MXC_OK;
}

int mxc__linalg_assign_shape(const mxc__op *op, const void *param,
                             mxc__shape *slot, const mxc__shape *want,
                             const char *what) {
  (void)param;
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s", op->name,
                      what, mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2));
  return MXC_OK;
}

int mxc__linalg_bwd_infer_shape(const mxc__op *op, const void *param,
                                mxc__shape *in, int n_in, mxc__shape *out,
                                int n_out) {
  char what[48];
  for (int i = 0; i < n_out && 1 + i < n_in; ++i) {
    if (in[1 + i].ndim < 0) continue;
    snprintf(what, sizeof what, "gradient %d", i);
    MXC_FORWARD_IF_ERROR(
        mxc__linalg_assign_shape(op, param, &out[i], &in[1 + i], what));
  }
  return MXC_OK;
}
