#include "tests/gpu/la_host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/la_hd.h"

typedef struct host {
  const mxc__la_plan *p;
  double *slot[MXC__LA_MAX_SLOTS];
  int *piv, *info;
} host;

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

static int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

/* cuBLAS's argument checks (CUBLAS_STATUS_INVALID_VALUE) and bounds. */
static const char *check_gemm(const host *h, const mxc__la_step *s) {
  int64_t ra = s->trans_a ? s->k : s->m, ca = s->trans_a ? s->m : s->k;
  int64_t rb = s->trans_b ? s->n : s->k, cb = s->trans_b ? s->k : s->n;
  int64_t last = h->p->batch - 1;
  if (s->m < 0 || s->n < 0 || s->k < 1) return "gemm sizes";
  if (s->lda < max1(ra)) return "gemm: lda below the rows of A";
  if (s->ldb < max1(rb)) return "gemm: ldb below the rows of B";
  if (s->ldc < max1(s->m)) return "gemm: ldc below m";
  if (s->stride_a * last + extent(ra, ca, s->lda) >
      mxc__la_slot_size(h->p, s->a)) {
    return "gemm: A reaches past its slot";
  }
  if (s->stride_b * last + extent(rb, cb, s->ldb) >
      mxc__la_slot_size(h->p, s->b)) {
    return "gemm: B reaches past its slot";
  }
  if (s->stride_c * last + extent(s->m, s->n, s->ldc) >
      mxc__la_slot_size(h->p, s->c)) {
    return "gemm: C reaches past its slot";
  }
  return NULL;
}

static double at(const double *x, int trans, int64_t r, int64_t c,
                 int64_t ld) {
  return trans ? x[c + r * ld] : x[r + c * ld];
}

static const char *gemm(host *h, const mxc__la_step *s) {
  const char *bad = check_gemm(h, s);
  if (bad) return bad;
  for (int64_t t = 0; t < h->p->batch; ++t) {
    const double *A = h->slot[s->a] + t * s->stride_a;
    const double *B = h->slot[s->b] + t * s->stride_b;
    double *C = h->slot[s->c] + t * s->stride_c;
    for (int64_t j = 0; j < s->n; ++j) {
      for (int64_t i = 0; i < s->m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < s->k; ++l) {
          acc += at(A, s->trans_a, i, l, s->lda) *
                 at(B, s->trans_b, l, j, s->ldb);
        }
        double *o = &C[i + j * s->ldc];
        *o = s->beta == 0 ? s->alpha * acc : s->alpha * acc + s->beta * *o;
      }
    }
  }
  return NULL;
}

/* LAPACK's getrf on the column-major n x n matrix a. */
static void getrf1(double *a, int64_t n, int *piv, int *info) {
  *info = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; ++i) {
      if (fabs(a[i + j * n]) > fabs(a[p + j * n])) p = i;
    }
    piv[j] = (int)p + 1;
    if (a[p + j * n] == 0) {
      if (*info == 0) *info = (int)j + 1;
      continue;
    }
    for (int64_t c = 0; p != j && c < n; ++c) {
      double t = a[j + c * n];
      a[j + c * n] = a[p + c * n], a[p + c * n] = t;
    }
    for (int64_t i = j + 1; i < n; ++i) a[i + j * n] /= a[j + j * n];
    for (int64_t c = j + 1; c < n; ++c) {
      for (int64_t i = j + 1; i < n; ++i) {
        a[i + c * n] -= a[i + j * n] * a[j + c * n];
      }
    }
  }
}

/* The inverse from getrf1's LU: A X = I column by column. */
static void getri1(const double *lu, int64_t n, const int *piv, double *x) {
  for (int64_t k = 0; k < n; ++k) {
    double *col = x + k * n;
    for (int64_t i = 0; i < n; ++i) col[i] = i == k;
    for (int64_t i = 0; i < n; ++i) {
      double t = col[i];
      col[i] = col[piv[i] - 1], col[piv[i] - 1] = t;
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t l = 0; l < i; ++l) col[i] -= lu[i + l * n] * col[l];
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t l = i + 1; l < n; ++l) col[i] -= lu[i + l * n] * col[l];
      col[i] /= lu[i + i * n];
    }
  }
}

/* cuSOLVER's potrf of one column-major item: fill lower reads and writes
 * a(i, j) for i >= j (A = L L^T), upper a(i, j) for i <= j (A = U^T U),
 * through one lower view: element (i, j), i >= j, of the view. */
static int potrf1(double *a, int64_t n, int lower) {
#define V(i, j) a[lower ? (i) + (j) * n : (j) + (i) * n]
  for (int64_t j = 0; j < n; ++j) {
    double s = V(j, j);
    for (int64_t k = 0; k < j; ++k) s -= V(j, k) * V(j, k);
    if (!(s > 0)) return (int)j + 1;
    V(j, j) = sqrt(s);
    for (int64_t i = j + 1; i < n; ++i) {
      double t = V(i, j);
      for (int64_t k = 0; k < j; ++k) t -= V(i, k) * V(j, k);
      V(i, j) = t / V(j, j);
    }
  }
  return 0;
#undef V
}

static const char *lu_step(host *h, const mxc__la_step *s) {
  int64_t n = s->n, nn = n * n;
  if (h->p->slot_r[s->a] != n || h->p->slot_c[s->a] != n) {
    return "getrf/getri: the slot is not n x n";
  }
  for (int64_t t = 0; t < h->p->batch; ++t) {
    double *a = h->slot[s->a] + t * nn;
    int *piv = h->piv + t * n;
    if (s->kind == MXC__LA_S_GETRF) {
      getrf1(a, n, piv, &h->info[t]);
    } else if (h->info[t] > 0) {
      for (int64_t i = 0; i < nn; ++i) h->slot[s->c][t * nn + i] = 12345.0;
    } else {
      getri1(a, n, piv, h->slot[s->c] + t * nn);
    }
  }
  return NULL;
}

static int potrf(host *h, const mxc__la_step *s, char *why, size_t len) {
  int64_t n = s->n;
  for (int64_t t = 0; t < h->p->batch; ++t) {
    h->info[t] = potrf1(h->slot[s->a] + t * n * n, n, s->fill);
  }
  return mxc__la_potrf_check(h->info, h->p->batch, why, len);
}

static void elem(host *h, const mxc__la_step *s) {
  int64_t per = s->r * s->cc, item_a = s->ra * s->ca;
  const double *sb = s->b == MXC__LA_NONE ? NULL : h->slot[s->b];
  const double *sd = s->d == MXC__LA_NONE ? NULL : h->slot[s->d];
  for (int64_t i = 0; i < h->p->batch * per; ++i) {
    int64_t t = i / per, e = i % per;
    h->slot[s->c][i] = mxc__la_elem(s, h->slot[s->a] + t * item_a, sb, sd,
                                    h->info, t, e / s->cc, e % s->cc);
  }
}

static void item(host *h, const mxc__la_step *s) {
  for (int64_t t = 0; t < h->p->batch; ++t) {
    double *d = s->d == MXC__LA_NONE ? NULL : h->slot[s->d] + t;
    mxc__la_item(s, h->slot[s->a] + t * s->ra * s->ca, h->piv + t * s->ra,
                 h->slot[s->c] + t, d);
  }
}

static int step(host *h, const mxc__la_step *s, char *why, size_t len) {
  const char *bad = NULL;
  switch (s->kind) {
    case MXC__LA_S_GEMM: bad = gemm(h, s); break;
    case MXC__LA_S_GETRF:
    case MXC__LA_S_GETRI: bad = s->n ? lu_step(h, s) : NULL; break;
    case MXC__LA_S_POTRF: return s->n ? potrf(h, s, why, len) : MXC_OK;
    case MXC__LA_S_ELEM: elem(h, s); break;
    default: item(h, s); break;
  }
  if (!bad) return MXC_OK;
  snprintf(why, len, "host cuBLAS refuses a step: %s", bad);
  return MXC_ERR_INTERNAL;
}

static void load(const mxc__gpu_array *a, double *d) {
  for (int64_t i = 0; i < a->size; ++i) {
    d[i] = a->dtype == MXC_DTYPE_FLOAT32 ? ((const float *)a->ptr)[i]
                                         : ((const double *)a->ptr)[i];
  }
}

/* la.cu's store: rounded to the dtype, then written or added in it. */
static void store(const double *s, const mxc__gpu_array *a, int req) {
  for (int64_t i = 0; req != MXC__GPU_REQ_NULL && i < a->size; ++i) {
    int add = req == MXC__GPU_REQ_ADD;
    if (a->dtype == MXC_DTYPE_FLOAT32) {
      float *d = (float *)a->ptr + i;
      *d = add ? *d + (float)s[i] : (float)s[i];
    } else {
      double *d = (double *)a->ptr + i;
      *d = add ? *d + s[i] : s[i];
    }
  }
}

static int run(host *h, const mxc__gpu_call *c, char *why, size_t len) {
  const mxc__la_plan *p = h->p;
  for (int i = 0; i < p->n_in; ++i) load(&c->in[i], h->slot[i]);
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < p->n_steps; ++i) {
    rc = step(h, &p->step[i], why, len);
  }
  for (int i = 0; rc == MXC_OK && i < p->n_out; ++i) {
    store(h->slot[p->n_in + i], &c->out[i], c->req[i]);
  }
  return rc;
}

int mxct_la_host_run(const mxc__la_plan *p, const mxc__gpu_call *c,
                     char *why, size_t why_len) {
  host h;
  memset(&h, 0, sizeof h);
  h.p = p;
  int ok = 1;
  for (int i = 0; i < p->n_slots; ++i) {
    /* NaN-filled: a step reading what nothing wrote shows */
    size_t n = (size_t)mxc__la_slot_size(p, i) + 1;
    h.slot[i] = malloc(n * sizeof(double));
    ok = ok && h.slot[i];
    for (size_t k = 0; h.slot[i] && k < n; ++k) h.slot[i][k] = (double)NAN;
  }
  h.piv = calloc((size_t)(p->lu_n * p->batch + 1), sizeof(int));
  h.info = calloc((size_t)(p->batch + 1), sizeof(int));
  int rc = ok && h.piv && h.info ? run(&h, c, why, why_len) : MXC_ERR_OOM;
  for (int i = 0; i < p->n_slots; ++i) free(h.slot[i]);
  free(h.piv);
  free(h.info);
  return rc;
}

int mxct_la_fake_run(int op, const mxc__gpu_call *c, mxct_la_host_fn to_host,
                     char *why, size_t why_len) {
  enum { MAXA = 8 };
  mxc__gpu_array arr[MAXA];
  if (c->n_in + c->n_out > MAXA) return MXC_ERR_INVALID_ARGUMENT;
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    arr[i] = i < c->n_in ? c->in[i] : c->out[i - c->n_in];
    if (arr[i].size == 0) continue;
    arr[i].ptr = to_host(&arr[i], c->dev);
    if (!arr[i].ptr) {
      snprintf(why, why_len, "fake linalg: array %d not on the device", i);
      return MXC_ERR_INTERNAL;
    }
  }
  mxc__gpu_call h = *c;
  h.in = arr;
  h.out = arr + c->n_in;
  mxc__la_plan p;
  int rc = mxc__la_plan_call(op, &h, &p, why, why_len);
  return rc == MXC_OK ? mxct_la_host_run(&p, &h, why, why_len) : rc;
}
