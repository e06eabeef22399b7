/* The family's one GEMM entry point and shared inference helpers.
 *
 * Which GEMM runs is chosen once per process (gemm_choice.h): OpenBLAS
 * (cblas_sgemm/cblas_dgemm) when the kernel set it picked for this CPU
 * uses the widest ISA the CPU runs at speed, oneDNN's dnnl_sgemm for
 * float32 when OpenBLAS fell back to weaker kernels (a CPU newer than its
 * table), MXC_GEMM=auto|openblas|onednn|portable to override. The choice
 * is logged at the first product and shown as the feature GEMM_ONEDNN,
 * GEMM_OPENBLAS or GEMM_PORTABLE (mxc_feature_enabled). BLAS takes 32-bit
 * dimensions, so products with a dimension beyond INT_MAX (or builds
 * without either library) use the portable loop below, which is correct
 * but slow: it exists so the family works everywhere, not to compete.
 *
 * Threading policy (docs/threads.md). Both libraries run single-threaded
 * and large products are split by rows or columns of C across the kernel
 * pool (core/op/parallel.h) instead. OpenBLAS is set to one thread once,
 * on the first product; oneDNN's OpenMP threads are set to 1 in the
 * calling thread around each call (the OpenMP setting is per thread, and
 * the caller's own is restored). Reasons, measured on the 2-core machine
 * with bench/train (LeNet and the MLP, batch 128): OpenBLAS's own helper
 * threads busy-wait in sched_yield between calls and competed with the
 * engine's two workers for the two cores (20-27% of CPU time spent
 * yielding), and two concurrent products on two workers each asked for
 * every core; OpenMP's idle threads spin the same way. The pool is shared
 * by all kernels and a caller that finds it busy runs alone, so
 * concurrent products never oversubscribe the machine and no thread spins
 * between calls. A product smaller than PAR_MIN_FLOPS runs in the calling
 * thread: below that the hand-off costs more than the second core gives. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/cpu.h"
#include "core/base/dtype.h"
#include "core/base/log.h"
#include "ops/linalg/gemm_choice.h"
#include "ops/linalg/linalg.h"
#include "core/op/parallel.h"
#include "core/op/half_compute.h"

#include <pthread.h>
#ifdef MXC_USE_OPENBLAS
#include <cblas.h>
#endif
#ifdef MXC_USE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
/* GNU OpenMP's (oneDNN is built on it and links it), declared here so the
 * family needs no OpenMP compiler flags. */
int omp_get_max_threads(void);
void omp_set_num_threads(int n);
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

static int fits_blas(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                     int64_t ldc) {
  return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX &&
         ldb <= INT_MAX && ldc <= INT_MAX;
}

#ifdef MXC_USE_OPENBLAS
#define HAVE_OPENBLAS 1
#else
#define HAVE_OPENBLAS 0
#endif
#ifdef MXC_USE_ONEDNN
#define HAVE_ONEDNN 1
#else
#define HAVE_ONEDNN 0
#endif

/* ---- the process's choice ---- */

static mxc__gemm_choice g_choice;
static pthread_once_t g_choice_once = PTHREAD_ONCE_INIT;
static int g_bad_env;

static void choose_once(void) {
  const char *core = NULL;
#ifdef MXC_USE_OPENBLAS
  openblas_set_num_threads(1);
  core = openblas_get_corename();
#endif
  g_choice = mxc__gemm_choose(mxc__cpu_host(), core, getenv("MXC_GEMM"),
                              HAVE_ONEDNN, &g_bad_env);
}

const mxc__gemm_choice *mxc__gemm_current(void) {
  pthread_once(&g_choice_once, choose_once);
  return &g_choice;
}

/* The log line of the first product: which GEMM, and why. */
static pthread_once_t g_log_once = PTHREAD_ONCE_INIT;
static void log_choice(void) {
  const mxc__gemm_choice *c = mxc__gemm_current();
  const char *core = "none";
#ifdef MXC_USE_OPENBLAS
  core = openblas_get_corename();
#endif
  char cpu[256];
  if (g_bad_env) {
    mxc__log(MXC_LOG_WARNING,
             "MXC_GEMM='%s' is not one of auto, openblas, onednn, portable; "
             "deciding automatically",
             getenv("MXC_GEMM"));
  }
  mxc__log(MXC_LOG_INFO,
           "GEMM: float32 via %s, float64 via %s (%s; OpenBLAS core %s; CPU "
           "%s)",
           mxc__gemm_kind_name(c->f32), mxc__gemm_kind_name(c->f64), c->why,
           core, mxc__cpu_describe(mxc__cpu_host(), cpu, sizeof cpu));
}

/* ---- one product ---- */

typedef struct gemm_args {
  int kind, dtype, ta, tb;
  int64_t m, n, k;
  const char *a, *b;
  int64_t lda, ldb, ldc;
  int accumulate;
  char *c;
  int split_rows; /* split C by rows (1) or by columns (0) */
} gemm_args;

/* The GEMM that can actually take this product: oneDNN has no float64,
 * the libraries take 32-bit dimensions, a kind not linked falls back. */
static int resolve_kind(int kind, const gemm_args *g) {
  int fits = fits_blas(g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
  if (kind == MXC__GEMM_ONEDNN &&
      (!HAVE_ONEDNN || !fits || g->dtype != MXC_DTYPE_FLOAT32)) {
    kind = MXC__GEMM_OPENBLAS;
  }
  if (kind == MXC__GEMM_OPENBLAS && (!HAVE_OPENBLAS || !fits)) {
    kind = MXC__GEMM_PORTABLE;
  }
  return kind;
}

#ifdef MXC_USE_ONEDNN
/* One thread: the split over the kernel pool is the only parallelism. The
 * OpenMP setting belongs to the calling thread; put back what it was. */
static int onednn_sgemm(const gemm_args *g, int64_t m, int64_t n,
                        const float *a, const float *b, float *c) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  dnnl_status_t st = dnnl_sgemm(g->ta ? 'T' : 'N', g->tb ? 'T' : 'N', m, n,
                                g->k, 1.0f, a, g->lda, b, g->ldb,
                                g->accumulate ? 1.0f : 0.0f, c, g->ldc);
  omp_set_num_threads(saved);
  return st == dnnl_success;
}
#endif

#ifdef MXC_USE_OPENBLAS
static void openblas_gemm(const gemm_args *g, int64_t m, int64_t n,
                          const void *a, const void *b, void *c) {
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
}
#endif

static void portable_gemm(const gemm_args *g, int64_t m, int64_t n,
                          const void *a, const void *b, void *c) {
  if (g->dtype == MXC_DTYPE_FLOAT32) {
    naive_gemm_f32(g->ta, g->tb, m, n, g->k, a, g->lda, b, g->ldb,
                   g->accumulate, c, g->ldc);
  } else {
    naive_gemm_f64(g->ta, g->tb, m, n, g->k, a, g->lda, b, g->ldb,
                   g->accumulate, c, g->ldc);
  }
}

/* One (part of a) product, in the calling thread. oneDNN only fails on
 * arguments gemm_args never holds (or out of memory for its packing
 * buffers): the product then still gets done, by the next GEMM. */
static void gemm_serial(const gemm_args *g, int64_t m, int64_t n, const void *a,
                        const void *b, void *c) {
#ifdef MXC_USE_ONEDNN
  if (g->kind == MXC__GEMM_ONEDNN && onednn_sgemm(g, m, n, a, b, c)) return;
#endif
#ifdef MXC_USE_OPENBLAS
  if (g->kind != MXC__GEMM_PORTABLE) {
    openblas_gemm(g, m, n, a, b, c);
    return;
  }
#endif
  portable_gemm(g, m, n, a, b, c);
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

/* k == 0: BLAS rejects leading dimensions of 0; the product is simply 0. */
static void gemm_empty_k(int dtype, int64_t m, int64_t n, int accumulate,
                         void *c, int64_t ldc) {
  if (accumulate) return;
  size_t es = mxc__dtype_size(dtype);
  for (int64_t i = 0; i < m; ++i) {
    memset((char *)c + (size_t)(i * ldc) * es, 0, (size_t)n * es);
  }
}

void mxc__gemm_using(int kind, int dtype, int ta, int tb, int64_t m,
                     int64_t n, int64_t k, const void *a, int64_t lda,
                     const void *b, int64_t ldb, int accumulate, void *c,
                     int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    gemm_empty_k(dtype, m, n, accumulate, c, ldc);
    return;
  }
  (void)mxc__gemm_current(); /* OpenBLAS single-threaded from here on */
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
  g.kind = resolve_kind(kind, &g);
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

void mxc__gemm(int dtype, int ta, int tb, int64_t m, int64_t n, int64_t k,
               const void *a, int64_t lda, const void *b, int64_t ldb,
               int accumulate, void *c, int64_t ldc) {
  const mxc__gemm_choice *ch = mxc__gemm_current();
  pthread_once(&g_log_once, log_choice);
  int kind = dtype == MXC_DTYPE_FLOAT32 ? ch->f32 : ch->f64;
  mxc__gemm_using(kind, dtype, ta, tb, m, n, k, a, lda, b, ldb, accumulate, c,
                  ldc);
}

int mxc__linalg_uses_openblas(void) { return HAVE_OPENBLAS; }

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
