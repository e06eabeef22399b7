#include "tests/gpu/blas_host.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct buf {
  float *p;
  int64_t size;
} buf;

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

static int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

/* cuBLAS's argument checks (CUBLAS_STATUS_INVALID_VALUE) and bounds. */
static const char *check_gemm(const mxc__blas_step *s, buf a, buf b, buf c) {
  int64_t ra = s->trans_a ? s->k : s->m, ca = s->trans_a ? s->m : s->k;
  int64_t rb = s->trans_b ? s->n : s->k, cb = s->trans_b ? s->k : s->n;
  int64_t last = s->batch - 1;
  if (s->m < 0 || s->n < 0 || s->k < 0 || s->batch < 1) return "gemm sizes";
  if (s->lda < max1(ra)) return "gemm: lda below the rows of A";
  if (s->ldb < max1(rb)) return "gemm: ldb below the rows of B";
  if (s->ldc < max1(s->m)) return "gemm: ldc below m";
  if (s->stride_a * last + extent(ra, ca, s->lda) > a.size) {
    return "gemm: A reaches past its array";
  }
  if (s->stride_b * last + extent(rb, cb, s->ldb) > b.size) {
    return "gemm: B reaches past its array";
  }
  if (s->stride_c * last + extent(s->m, s->n, s->ldc) > c.size) {
    return "gemm: C reaches past its array";
  }
  return NULL;
}

static double at(const float *x, int trans, int64_t r, int64_t c, int64_t ld) {
  return trans ? x[c + r * ld] : x[r + c * ld];
}

/* C = op(A) op(B) + beta C for every matrix of the batch, in double. */
static void gemm(const mxc__blas_step *s, const float *A, const float *B,
                 float *C) {
  for (int64_t t = 0; t < s->batch; ++t) {
    const float *a = A + t * s->stride_a, *b = B + t * s->stride_b;
    float *c = C + t * s->stride_c;
    for (int64_t j = 0; j < s->n; ++j) {
      for (int64_t i = 0; i < s->m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < s->k; ++l) {
          acc +=
              at(a, s->trans_a, i, l, s->lda) * at(b, s->trans_b, l, j, s->ldb);
        }
        float *o = &c[i + j * s->ldc];
        *o = s->beta == 0.f ? (float)acc : (float)(acc + s->beta * *o);
      }
    }
  }
}

/* y = op(A) x + beta y, A m x n column-major. */
static const char *gemv(const mxc__blas_step *s, buf a, buf x, buf y) {
  int64_t nx = s->trans_a ? s->m : s->n, ny = s->trans_a ? s->n : s->m;
  if (s->lda < max1(s->m)) return "gemv: lda below m";
  if (extent(s->m, s->n, s->lda) > a.size || nx > x.size || ny > y.size) {
    return "gemv: an operand reaches past its array";
  }
  for (int64_t r = 0; r < ny; ++r) {
    double acc = 0;
    for (int64_t l = 0; l < nx; ++l) {
      acc += at(a.p, s->trans_a, r, l, s->lda) * x.p[l];
    }
    y.p[r] = s->beta == 0.f ? (float)acc : (float)(acc + s->beta * y.p[r]);
  }
  return NULL;
}

static buf array_buf(const mxc__gpu_array *a, int dev, mxct_host_fn host) {
  buf b = {host ? host(a, dev) : (float *)a->ptr, a->size};
  return b;
}

static const char *run_step(const mxc__blas_step *s, const mxc__gpu_call *c,
                            mxct_host_fn host, buf ones) {
  buf a = s->a == MXC__BLAS_ONES ? ones : array_buf(&c->in[s->a], c->dev, host);
  buf b = s->b == MXC__BLAS_ONES ? ones : array_buf(&c->in[s->b], c->dev, host);
  buf o = array_buf(&c->out[s->c], c->dev, host);
  if (s->kind == MXC__BLAS_ZERO) {
    for (int64_t i = 0; o.p && i < o.size; ++i) o.p[i] = 0.f;
    return o.p || !o.size ? NULL : "array not on the device";
  }
  if ((!a.p && a.size) || (!b.p && b.size) || (!o.p && o.size)) {
    return "array not on the device";
  }
  if (s->kind == MXC__BLAS_GEMV) return gemv(s, a, b, o);
  const char *bad = check_gemm(s, a, b, o);
  if (!bad) gemm(s, a.p, b.p, o.p);
  return bad;
}

const char *mxct_blas_host_run(const mxc__blas_plan *p, const mxc__gpu_call *c,
                               mxct_host_fn host) {
  buf ones = {malloc((size_t)(p->ones ? p->ones : 1) * sizeof(float)), p->ones};
  if (!ones.p) return "out of memory";
  for (int64_t i = 0; i < p->ones; ++i) ones.p[i] = 1.f;
  const char *bad = NULL;
  for (int i = 0; !bad && i < p->n; ++i) {
    bad = run_step(&p->step[i], c, host, ones);
  }
  free(ones.p);
  return bad;
}

int mxct_blas_fake_run(int op, const mxc__gpu_call *c, mxct_host_fn host,
                       char *why, size_t why_len) {
  mxc__blas_plan p;
  int rc = mxc__blas_plan_call(op, c, &p, why, why_len);
  if (rc != MXC_OK) return rc;
  const char *bad = mxct_blas_host_run(&p, c, host);
  if (!bad) return MXC_OK;
  snprintf(why, why_len, "fake cuBLAS: %s", bad);
  return MXC_ERR_INTERNAL;
}
