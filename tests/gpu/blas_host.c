#include "tests/gpu/blas_host.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/half_hd.h"

/* An operand: float32, or float16 / bfloat16 (the plan's dtype) read
 * widened and written rounded once from the float result, as
 * cublasGemmEx with CUBLAS_COMPUTE_32F does. */
typedef struct buf {
  void *p;
  int64_t size;
  int dtype;
} buf;

static double get(buf b, int64_t i) {
  const uint16_t *h = b.p;
  switch (b.dtype) {
    case MXC_DTYPE_FLOAT16: return mxc__hd_f16_to_f32(h[i]);
    case MXC_DTYPE_BFLOAT16: return mxc__hd_bf16_to_f32(h[i]);
    default: return ((const float *)b.p)[i];
  }
}

static void set(buf b, int64_t i, float v) {
  uint16_t *h = b.p;
  switch (b.dtype) {
    case MXC_DTYPE_FLOAT16: h[i] = mxc__hd_f32_to_f16(v); break;
    case MXC_DTYPE_BFLOAT16: h[i] = mxc__hd_f32_to_bf16(v); break;
    default: ((float *)b.p)[i] = v; break;
  }
}

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

static double at(buf x, int64_t off, int trans, int64_t r, int64_t c,
                 int64_t ld) {
  return get(x, off + (trans ? c + r * ld : r + c * ld));
}

/* C = op(A) op(B) + beta C for every matrix of the batch, in double. */
static void gemm(const mxc__blas_step *s, buf A, buf B, buf C) {
  for (int64_t t = 0; t < s->batch; ++t) {
    int64_t oa = t * s->stride_a, ob = t * s->stride_b, oc = t * s->stride_c;
    for (int64_t j = 0; j < s->n; ++j) {
      for (int64_t i = 0; i < s->m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < s->k; ++l) {
          acc += at(A, oa, s->trans_a, i, l, s->lda) *
                 at(B, ob, s->trans_b, l, j, s->ldb);
        }
        int64_t o = oc + i + j * s->ldc;
        set(C, o, s->beta == 0.f ? (float)acc
                                 : (float)(acc + s->beta * get(C, o)));
      }
    }
  }
}

/* y = op(A) x + beta y, A m x n column-major (float32 only: the plan has
 * no GEMV for half types, cuBLAS none either). */
static const char *gemv(const mxc__blas_step *s, buf a, buf x, buf y) {
  int64_t nx = s->trans_a ? s->m : s->n, ny = s->trans_a ? s->n : s->m;
  if (a.dtype != MXC_DTYPE_FLOAT32) return "gemv: cuBLAS has no half GEMV";
  if (s->lda < max1(s->m)) return "gemv: lda below m";
  if (extent(s->m, s->n, s->lda) > a.size || nx > x.size || ny > y.size) {
    return "gemv: an operand reaches past its array";
  }
  for (int64_t r = 0; r < ny; ++r) {
    double acc = 0;
    for (int64_t l = 0; l < nx; ++l) {
      acc += at(a, 0, s->trans_a, r, l, s->lda) * get(x, l);
    }
    set(y, r, s->beta == 0.f ? (float)acc : (float)(acc + s->beta * get(y, r)));
  }
  return NULL;
}

static buf array_buf(const mxc__gpu_array *a, int dev, mxct_host_fn host) {
  buf b = {host ? (void *)host(a, dev) : a->ptr, a->size, a->dtype};
  return b;
}

static const char *run_step(const mxc__blas_step *s, const mxc__gpu_call *c,
                            mxct_host_fn host, buf ones) {
  buf a = s->a == MXC__BLAS_ONES ? ones : array_buf(&c->in[s->a], c->dev, host);
  buf b = s->b == MXC__BLAS_ONES ? ones : array_buf(&c->in[s->b], c->dev, host);
  buf o = array_buf(&c->out[s->c], c->dev, host);
  if (s->kind == MXC__BLAS_ZERO) {
    for (int64_t i = 0; o.p && i < o.size; ++i) set(o, i, 0.f);
    return o.p || !o.size ? NULL : "array not on the device";
  }
  if ((!a.p && a.size) || (!b.p && b.size) || (!o.p && o.size)) {
    return "array not on the device";
  }
  if (s->kind == MXC__BLAS_GEMV) return gemv(s, a, b, o);
  const char *bad = check_gemm(s, a, b, o);
  if (!bad) gemm(s, a, b, o);
  return bad;
}

const char *mxct_blas_host_run(const mxc__blas_plan *p, const mxc__gpu_call *c,
                               mxct_host_fn host) {
  /* the ones in the plan's dtype, as blas.c's */
  buf ones = {malloc((size_t)(p->ones ? p->ones : 1) * sizeof(float)), p->ones,
              p->dtype};
  if (!ones.p) return "out of memory";
  for (int64_t i = 0; i < p->ones; ++i) set(ones, i, 1.f);
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
