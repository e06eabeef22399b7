/* The batch driver and matrix helpers of the linalg_* operators (la.h). */
#include <math.h>
#include <string.h>

#include "ops/linalg/la.h"

static int64_t la_batch(const mxc__shape *s, int item_ndim) {
  int64_t b = 1;
  for (int i = 0; i < s->ndim - item_ndim; ++i) b *= s->dims[i];
  return b;
}

static mxc__la_mat la_mat_of(const mxc__shape *s, double *p) {
  mxc__la_mat m = {p, 1, 1};
  if (s->ndim >= 1) m.c = s->dims[s->ndim - 1];
  if (s->ndim >= 2) m.r = s->dims[s->ndim - 2];
  return m;
}

static void la_load(const mxc__blob *b, int64_t off, int64_t n, double *dst) {
  if (b->dtype == MXC_DTYPE_FLOAT32) {
    const float *s = (const float *)b->ptr + off;
    for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
  } else {
    memcpy(dst, (const double *)b->ptr + off, (size_t)n * sizeof *dst);
  }
}

static void la_store(const mxc__blob *b, int64_t off, int64_t n,
                     const double *src, mxc__req req) {
  if (req == MXC__REQ_NULL) return;
  if (b->dtype == MXC_DTYPE_FLOAT32) {
    float *d = (float *)b->ptr + off;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req, d[i], (float)src[i]);
  } else {
    double *d = (double *)b->ptr + off;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req, d[i], src[i]);
  }
}

/* Items per array and the scratch they need, in doubles. */
static int64_t la_layout(const mxc__blob *in, int n_in, const mxc__blob *out,
                         int n_out, int64_t batch, int64_t *per,
                         int64_t *work) {
  int64_t total = 0, maxper = 1, maxdim = 1;
  for (int i = 0; i < n_in + n_out; ++i) {
    const mxc__shape *s = i < n_in ? &in[i].shape : &out[i - n_in].shape;
    per[i] = batch ? mxc__shape_size(s) / batch : 0;
    total += per[i];
    if (per[i] > maxper) maxper = per[i];
    for (int d = 0; d < s->ndim; ++d)
      if (s->dims[d] > maxdim) maxdim = s->dims[d];
  }
  *work = 4 * maxper + 2 * maxdim;
  return total;
}

int mxc__la_run(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                const mxc__blob *in, int n_in, const mxc__blob *out, int n_out,
                const mxc__req *req, int batch_of, int item_ndim,
                mxc__la_kernel k) {
  enum { MAXA = 8 }; /* the most arrays of any la operator */
  int64_t per[MAXA], work_n;
  int64_t batch = la_batch(&in[batch_of].shape, item_ndim);
  int64_t total = la_layout(in, n_in, out, n_out, batch, per, &work_n);
  if (batch == 0) return MXC_OK;
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__opctx_temp(ctx, (size_t)(total + work_n) * sizeof(double), &t));
  mxc__la_mat m[MAXA];
  double *p = t;
  for (int i = 0; i < n_in + n_out; ++i) {
    m[i] = la_mat_of(i < n_in ? &in[i].shape : &out[i - n_in].shape, p);
    p += per[i];
  }
  for (int64_t b = 0; b < batch; ++b) {
    for (int i = 0; i < n_in; ++i) la_load(&in[i], b * per[i], per[i], m[i].p);
    for (int i = 0; i < n_out; ++i)
      memset(m[n_in + i].p, 0, (size_t)per[n_in + i] * sizeof(double));
    MXC_FORWARD_IF_ERROR(k(param, m, n_in, m + n_in, n_out, p));
    for (int i = 0; i < n_out; ++i)
      la_store(&out[i], b * per[n_in + i], per[n_in + i], m[n_in + i].p,
               req[i]);
  }
  return MXC_OK;
}

void mxc__la_gemm(const mxc__la_mat *a, int ta, const mxc__la_mat *b, int tb,
                  double alpha, double beta, int64_t m, int64_t n, int64_t k,
                  double *out) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += mxc__la_at(a, ta, i, q) * mxc__la_at(b, tb, q, j);
      out[i * n + j] = alpha * s + (beta != 0 ? beta * out[i * n + j] : 0);
    }
  }
}

/* Swaps rows i and j of the n-column matrices a and b. */
static void la_swap_rows(double *a, double *b, int64_t n, int64_t i,
                         int64_t j) {
  for (int64_t c = 0; c < n; ++c) {
    double t = a[i * n + c];
    a[i * n + c] = a[j * n + c], a[j * n + c] = t;
    t = b[i * n + c];
    b[i * n + c] = b[j * n + c], b[j * n + c] = t;
  }
}

/* Row of the largest |a[r][col]| for r >= col. */
static int64_t la_pivot(const double *a, int64_t n, int64_t col) {
  int64_t best = col;
  for (int64_t r = col + 1; r < n; ++r)
    if (fabs(a[r * n + col]) > fabs(a[best * n + col])) best = r;
  return best;
}

double mxc__la_inverse(const double *a, int64_t n, double *inv, double *work) {
  memcpy(work, a, (size_t)(n * n) * sizeof *work);
  for (int64_t i = 0; i < n * n; ++i) inv[i] = (i / n == i % n);
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t r = la_pivot(work, n, c);
    if (r != c) la_swap_rows(work, inv, n, r, c), det = -det;
    double d = work[c * n + c];
    det *= d;
    for (int64_t j = 0; j < n; ++j) work[c * n + j] /= d, inv[c * n + j] /= d;
    for (int64_t i = 0; i < n; ++i) {
      double f = work[i * n + c];
      if (i == c || f == 0) continue;
      for (int64_t j = 0; j < n; ++j) {
        work[i * n + j] -= f * work[c * n + j];
        inv[i * n + j] -= f * inv[c * n + j];
      }
    }
  }
  return det;
}

void mxc__la_triangle(const double *a, int64_t n, int lower, double *out) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      out[i * n + j] = (lower ? j <= i : j >= i) ? a[i * n + j] : 0;
}

void mxc__la_transpose(const double *x, int64_t r, int64_t c, double *out) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[j * r + i] = x[i * c + j];
}
