/* Row-sparse paths of Embedding (ops/nn/embedding.c).
 *
 * _backward_Embedding (ograd, data) -> dweight with a row_sparse dweight:
 * the stored rows are the distinct (clipped) indices of data, increasing,
 * each the sum of the output-gradient rows that looked it up, added in the
 * order of data as the dense kernel adds them (so every stored row is
 * bit-identical to the dense gradient's row). The output's storage type
 * decides: a row_sparse output runs this kernel, a dense or unknown one
 * the dense kernel. sparse_grad does not change the inference, so a call
 * that gives no output still gets the dense gradient it always got; graphs
 * and autograd ask for row_sparse by giving a row_sparse gradient array.
 *
 * Embedding (data, weight) with a row_sparse weight: rows that the weight
 * does not store read as zeros. The output is dense.
 *
 * Indices are truncated and clipped into [0, input_dim - 1] (NaN to 0)
 * exactly as the dense kernels do. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "ops/sparse/optim.h"

enum { PART_ELEMS = 1 << 15 }; /* output elements per part of a split */

/* The same clipping as ops/nn/embedding.c (kept identical: a row must be
 * looked up where the dense kernel looks it up). */
static int64_t clip_index(double v, int64_t n) {
  if (!(v > 0)) return 0; /* negative, zero or NaN */
  if (v >= (double)(n - 1)) return n - 1;
  return (int64_t)v;
}

/* input_dim and output_dim, read through Embedding's parameter table. */
static int dims_of(const mxc__op *op, const void *param, int64_t *rows,
                   int64_t *d) {
  const int64_t *r =
      mxc__sparse_param_field(op, param, "input_dim", MXC__P_INT);
  const int64_t *c =
      mxc__sparse_param_field(op, param, "output_dim", MXC__P_INT);
  MXC_RETURN_ERROR_IF(!r || !c || *r < 1 || *c < 1, MXC_ERR_INTERNAL,
                      "operator '%s': parameters input_dim and output_dim "
                      "not found or not positive",
                      op->name);
  *rows = *r;
  *d = *c;
  return MXC_OK;
}

static mxc__blob blob_of(const mxc__ndarray *a) {
  mxc__blob b = {mxc__ndarray_ptr(a), a->shape, a->dtype, a->chunk->dev,
                 MXC__FMT_PLAIN};
  return b;
}

static int float_only(const mxc__op *op, int dtype) {
  if (dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_FLOAT64) return MXC_OK;
  return mxc__unsupported_dtype(op->name, dtype,
                                "row_sparse Embedding kernels take float32 "
                                "or float64 values");
}

/* ---- _backward_Embedding -> row_sparse ---- */

static int bwd_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  int want = out[0] < 0 ? MXC_STYPE_DEFAULT : out[0];
  MXC_RETURN_ERROR_IF(in[0] != MXC_STYPE_DEFAULT ||
                          in[1] != MXC_STYPE_DEFAULT || want == MXC_STYPE_CSR,
                      MXC_ERR_STYPE,
                      "operator '%s': no kernel for ograd %s, data %s, "
                      "output %s; it takes dense ograd and data and gives "
                      "a default or row_sparse weight gradient",
                      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
                      mxc__stype_name(out[0]));
  out[0] = want;
  *dispatch =
      want == MXC_STYPE_DEFAULT ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* Sorts n (row, position) pairs, rows in [0, rows), by row with a least
 * significant digit radix sort: stable, so positions, which start out
 * increasing, stay increasing within a row (the dense kernel's order of
 * addition). O(n) per digit, against O(n log n) comparisons of qsort on
 * the typical batch. Uses tmp (2n) and returns the buffer holding the
 * result (a or tmp). */
enum { RADIX_BITS = 11, RADIX = 1 << RADIX_BITS };

static int64_t *radix_sort_pairs(int64_t *a, int64_t *tmp, int64_t n,
                                 int64_t rows) {
  int64_t count[RADIX];
  for (int shift = 0; shift < 63 && (rows - 1) >> shift > 0;
       shift += RADIX_BITS) {
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; ++i) ++count[(a[2 * i] >> shift) & (RADIX - 1)];
    int64_t sum = 0;
    for (int b = 0; b < RADIX; ++b) {
      int64_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = count[(a[2 * i] >> shift) & (RADIX - 1)]++;
      tmp[2 * k] = a[2 * i];
      tmp[2 * k + 1] = a[2 * i + 1];
    }
    int64_t *t = a;
    a = tmp;
    tmp = t;
  }
  return a;
}

typedef struct bwd_job {
  const int64_t *pairs; /* (row, position) sorted */
  const int64_t *seg;   /* stored row u: pairs [seg[u], seg[u+1]) */
  const void *g;        /* ograd (n, d) */
  void *val;            /* output values (nnz, d) */
  int64_t d;
  int dtype;
} bwd_job;

#define BWD_SUM(T)                                               \
  do {                                                           \
    const T *g_ = j->g;                                          \
    for (int64_t u = lo; u < hi; ++u) {                          \
      T *restrict dst = (T *)j->val + u * j->d;                  \
      memset(dst, 0, (size_t)j->d * sizeof(T));                  \
      for (int64_t k = j->seg[u]; k < j->seg[u + 1]; ++k) {      \
        const T *restrict src = g_ + j->pairs[2 * k + 1] * j->d; \
        for (int64_t c = 0; c < j->d; ++c) dst[c] += src[c];     \
      }                                                          \
    }                                                            \
  } while (0)

static int bwd_part(void *arg, int64_t lo, int64_t hi) {
  const bwd_job *j = arg;
  if (j->dtype == MXC_DTYPE_FLOAT32) {
    BWD_SUM(float);
  } else {
    BWD_SUM(double);
  }
  return MXC_OK;
}

static int bwd_sparse(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *in, int n_in,
                      const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC_FORWARD_IF_ERROR(float_only(op, in[0].dtype));
  int64_t rows, d;
  MXC_FORWARD_IF_ERROR(dims_of(op, param, &rows, &d));
  mxc__blob data = blob_of(&in[1]);
  int64_t n = mxc__shape_size(&data.shape);
  /* Two pair buffers (2n each) for the sort, then segment starts. */
  int64_t *buf = mxc__malloc(sizeof(int64_t) * (size_t)(5 * n + 1));
  MXC_RETURN_ERROR_IF(!buf, MXC_ERR_OOM,
                      "operator '%s': out of memory sorting %lld indices",
                      op->name, (long long)n);
  int64_t *seg = buf + 4 * n;
  for (int64_t i = 0; i < n; ++i) {
    buf[2 * i] = clip_index(mxc__blob_get(&data, i), rows);
    buf[2 * i + 1] = i;
  }
  const int64_t *pairs = radix_sort_pairs(buf, buf + 2 * n, n, rows);
  int64_t nnz = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || pairs[2 * i] != pairs[2 * i - 2]) seg[nnz++] = i;
  }
  seg[nnz] = n;
  int rc = mxc__sparse_alloc(&out[0], nnz);
  if (rc != MXC_OK) {
    mxc__free(buf);
    return rc;
  }
  mxc__dense_view idx = mxc__sparse_aux(&out[0], 0);
  for (int64_t u = 0; u < nnz; ++u) {
    mxc__sparse_idx_set(&idx, u, pairs[2 * seg[u]]);
  }
  bwd_job j = {pairs,
               seg,
               mxc__ndarray_ptr(&in[0]),
               mxc__sparse_data(&out[0]).ptr,
               d,
               in[0].dtype};
  int64_t grain = PART_ELEMS / d > 0 ? PART_ELEMS / d : 1;
  /* Parts never fail. */
  (void)mxc__parallel_for(nnz, grain, mxc__parallel_threads(), bwd_part, &j);
  mxc__free(buf);
  mxc__sparse_set_valid(&out[0]);
  return MXC_OK;
}

/* ---- Embedding with a row_sparse weight ---- */

static int fwd_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  MXC_RETURN_ERROR_IF(in[0] != MXC_STYPE_DEFAULT || in[1] == MXC_STYPE_CSR ||
                          (out[0] >= 0 && out[0] != MXC_STYPE_DEFAULT),
                      MXC_ERR_STYPE,
                      "operator '%s': no kernel for data %s, weight %s, "
                      "output %s; it takes dense data, a default or "
                      "row_sparse weight and gives a dense output",
                      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
                      mxc__stype_name(out[0]));
  out[0] = MXC_STYPE_DEFAULT;
  *dispatch =
      in[1] == MXC_STYPE_DEFAULT ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

typedef struct fwd_job {
  mxc__blob data;
  mxc__dense_view widx; /* stored row indices of weight */
  const char *wval;     /* stored rows */
  int64_t nnz, rows, d;
  char *y;
  int dtype;
  mxc__req req;
} fwd_job;

/* Position of row r among the weight's stored rows, or -1. */
static int64_t find_row(const fwd_job *j, int64_t r) {
  int64_t lo = 0, hi = j->nnz;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2, v = mxc__sparse_idx_get(&j->widx, mid);
    if (v == r) return mid;
    if (v < r) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

#define FWD_ADD(T)                                     \
  do {                                                 \
    const T *restrict s_ = (const T *)src;             \
    T *restrict o_ = (T *)dst;                         \
    for (int64_t c = 0; c < j->d; ++c) o_[c] += s_[c]; \
  } while (0)

static int fwd_part(void *arg, int64_t lo, int64_t hi) {
  const fwd_job *j = arg;
  size_t row = (size_t)j->d * mxc__dtype_size(j->dtype);
  for (int64_t i = lo; i < hi; ++i) {
    int64_t p = find_row(j, clip_index(mxc__blob_get(&j->data, i), j->rows));
    const char *src = p >= 0 ? j->wval + (size_t)p * row : NULL;
    char *dst = j->y + (size_t)i * row;
    if (j->req != MXC__REQ_ADD) {
      if (src) {
        memcpy(dst, src, row);
      } else {
        memset(dst, 0, row);
      }
    } else if (src && j->dtype == MXC_DTYPE_FLOAT32) {
      FWD_ADD(float);
    } else if (src) {
      FWD_ADD(double);
    }
  }
  return MXC_OK;
}

static int fwd_sparse(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__ndarray *in, int n_in,
                      const mxc__ndarray *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC_FORWARD_IF_ERROR(float_only(op, in[1].dtype));
  char what[96];
  snprintf(what, sizeof what, "operator '%s' input 1 ('weight')", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(&in[1], what));
  int64_t rows, d;
  MXC_FORWARD_IF_ERROR(dims_of(op, param, &rows, &d));
  fwd_job j = {blob_of(&in[0]),
               mxc__sparse_aux(&in[1], 0),
               mxc__sparse_data(&in[1]).ptr,
               mxc__sparse_nnz(&in[1]),
               rows,
               d,
               mxc__ndarray_ptr(&out[0]),
               in[1].dtype,
               req[0]};
  int64_t n = mxc__shape_size(&j.data.shape);
  int64_t grain = PART_ELEMS / j.d > 0 ? PART_ELEMS / j.d : 1;
  return mxc__parallel_for(n, grain, mxc__parallel_threads(), fwd_part, &j);
}

int mxc__sparse_register_embedding(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "Embedding", fwd_stype, fwd_sparse));
  return mxc__registry_attach_stype(r, "_backward_Embedding", bwd_stype,
                                    bwd_sparse);
}
