/* The engine work of a store: sums and copies over the arrays' variables.
 * Data pointers are taken at push time (an array's storage never moves
 * while it lives, core/ndarray/ndarray.h) and the arrays are kept alive
 * by view references until the work's free function runs. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/kvstore/internal.h"

#define NAME_MAX_LEN 96

/* dst = srcs[0] + ... + srcs[n-1], element by element in list order. */
typedef struct sum_work {
  mxc__ndarray **views; /* n sources then dst, each a reference of ours */
  int n;
  int64_t count;
  int dtype;
  char name[NAME_MAX_LEN];
} sum_work;

int mxc__kv_check_dtype(int dtype, const char *what) {
  int ok = dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_FLOAT64 ||
           dtype == MXC_DTYPE_INT32 || dtype == MXC_DTYPE_INT64;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_UNSUPPORTED,
                      "%s: dtype %s; a kvstore sums float32, float64, int32 "
                      "and int64 arrays",
                      what, mxc__dtype_name(dtype));
  return MXC_OK;
}

/* The loops are written once per type; the first source is copied so
 * that the sum's order (and rounding) is the list's, whatever dst held.
 * Integers wrap around (two's complement, as the operators' integer
 * arithmetic does) instead of overflowing. */
#define SUM_LOOP(T, ADD)                                             \
  do {                                                               \
    T *d = dst;                                                      \
    const T *s0 = srcs[0];                                           \
    for (int64_t i = 0; i < count; ++i) d[i] = s0[i];                \
    for (int k = 1; k < n; ++k) {                                    \
      const T *s = srcs[k];                                          \
      for (int64_t i = 0; i < count; ++i) d[i] = ADD(d[i], s[i]);    \
    }                                                                \
  } while (0)

#define ADD_FLOAT(a, b) ((a) + (b))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))

void mxc__kv_sum_raw(void *dst, const void *const *srcs, int n,
                     int64_t count, int dtype) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: SUM_LOOP(float, ADD_FLOAT); break;
    case MXC_DTYPE_FLOAT64: SUM_LOOP(double, ADD_FLOAT); break;
    case MXC_DTYPE_INT32: SUM_LOOP(int32_t, ADD_I32); break;
    default: SUM_LOOP(int64_t, mxc__wrap_add); break; /* checked at init */
  }
}

static int sum_fn(void *arg, mxc__exec *ex) {
  sum_work *w = arg;
  const void *srcs[64];
  const void **s = w->n <= 64 ? srcs : mxc__calloc((size_t)w->n, sizeof *s);
  if (!s) {
    mxc__exec_set_error(ex, "out of memory for the list of values");
    return MXC_ERR_OOM;
  }
  for (int i = 0; i < w->n; ++i) s[i] = mxc__ndarray_ptr(w->views[i]);
  mxc__kv_sum_raw(mxc__ndarray_ptr(w->views[w->n]), s, w->n, w->count,
                  w->dtype);
  if (s != srcs) mxc__free(s);
  return MXC_OK;
}

static void sum_free(void *arg) {
  sum_work *w = arg;
  for (int i = 0; i <= w->n; ++i) mxc__ndarray_free(w->views[i]);
  mxc__free(w->views);
  mxc__free(w);
}

/* w->views[i] = new references to vals[0..n) and dst, storage allocated. */
static int take_views(sum_work *w, mxc__ndarray *const *vals,
                      const mxc__ndarray *dst) {
  for (int i = 0; i <= w->n; ++i) {
    const mxc__ndarray *a = i < w->n ? vals[i] : dst;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &w->views[i]));
  }
  return MXC_OK;
}

static int new_sum_work(mxc__ndarray *const *vals, int n,
                        const mxc__ndarray *dst, const char *what,
                        sum_work **out) {
  sum_work *w = mxc__calloc(1, sizeof *w);
  mxc__ndarray **views = mxc__calloc((size_t)n + 1, sizeof *views);
  if (!w || !views) {
    mxc__free(w);
    mxc__free(views);
    return mxc__error_set(MXC_ERR_OOM, "%s: out of memory", what);
  }
  *w = (sum_work){.views = views, .n = n, .count = mxc__ndarray_size(dst),
                  .dtype = dst->dtype};
  snprintf(w->name, sizeof w->name, "kvstore push %s", what);
  int rc = take_views(w, vals, dst);
  if (rc != MXC_OK) {
    sum_free(w);
    return rc;
  }
  *out = w;
  return MXC_OK;
}

/* The engine call of w: reads the sources, writes dst. */
static int push_sum_work(sum_work *w, int priority) {
  mxc__var **vars = mxc__calloc((size_t)w->n + 1, sizeof *vars);
  MXC_RETURN_ERROR_IF(!vars, MXC_ERR_OOM, "%s: out of memory", w->name);
  for (int i = 0; i <= w->n; ++i) vars[i] = mxc__ndarray_var(w->views[i]);
  const mxc__ndarray *dst = w->views[w->n];
  mxc__push_args p = {.sync_fn = sum_fn, .arg = w, .free_fn = sum_free,
                      .reads = vars, .n_reads = w->n, .writes = vars + w->n,
                      .n_writes = 1, .priority = priority, .name = w->name,
                      .dev = dst->chunk->dev};
  int rc = mxc__engine_push(mxc__ndarray_engine(dst), &p);
  mxc__free(vars);
  return rc;
}

int mxc__kv_push_sum(mxc__ndarray *const *vals, int n,
                     const mxc__ndarray *dst, int priority, const char *what) {
  sum_work *w = NULL;
  MXC_FORWARD_IF_ERROR(new_sum_work(vals, n, dst, what, &w));
  int rc = push_sum_work(w, priority);
  if (rc != MXC_OK) sum_free(w);
  return rc;
}

/* A pull's copy: the same work with one source. */
int mxc__kv_push_copy(const mxc__ndarray *src, const mxc__ndarray *dst,
                      int priority, const char *what) {
  sum_work *w = NULL;
  mxc__ndarray *const vals[1] = {(mxc__ndarray *)src};
  MXC_FORWARD_IF_ERROR(new_sum_work(vals, 1, dst, what, &w));
  snprintf(w->name, sizeof w->name, "kvstore pull %s", what);
  int rc = push_sum_work(w, priority);
  if (rc != MXC_OK) sum_free(w);
  return rc;
}

/* ---- zero fill (optimizer states) ---- */

static int zero_fn(void *arg, mxc__exec *ex) {
  (void)ex;
  const mxc__ndarray *a = arg;
  memset(mxc__ndarray_ptr(a), 0, mxc__ndarray_nbytes(a));
  return MXC_OK;
}

static void zero_free(void *arg) { mxc__ndarray_free(arg); }

int mxc__kv_push_zero(const mxc__ndarray *dst) {
  mxc__ndarray *v;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(dst));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(dst, &v));
  int rc = mxc__ndarray_push(zero_fn, v, zero_free, NULL, v, 0,
                             "kvstore optimizer state");
  if (rc != MXC_OK) mxc__ndarray_free(v);
  return rc;
}
