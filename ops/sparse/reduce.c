/* sum and mean of a csr matrix over axis 0, axis 1 or both, attached to
 * the reduce family's `sum` and `mean` (their dense kernels, shapes and
 * dtypes stay theirs), and the registration of the reduction part of the
 * sparse family (slice.c, retain.c, square_sum.c).
 *
 * The output is always dense, of exactly the dense operator's shape (its
 * shape inference runs first), so with keepdims the values are the same
 * and only the shape differs. Missing entries are zeros and add nothing,
 * so each kernel touches the stored values only: axis 1 sums each row's
 * run of values (parallel over rows), axis 0 scatters values into their
 * columns, and the full reduction sums the value array. Float dtypes
 * accumulate in double and integers in wrapping 64-bit arithmetic, like
 * the dense kernels; mean divides by the count of reduced elements, zeros
 * included (so a mean over an empty axis is NaN, as in the dense op).
 * exclude=true and row_sparse inputs are MXC_ERR_STYPE: the dispatcher
 * falls back to the dense kernel on a dense copy. */
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "ops/sparse/reduce_parts.h"

const void *mxc__sparse_param(const mxc__op *op, const void *param,
                              const char *name, mxc__param_type type) {
  for (int i = 0; i < op->n_params; ++i) {
    const mxc__param_def *d = &op->params[i];
    if (d->type == type && strcmp(d->name, name) == 0) {
      return (const char *)param + d->offset;
    }
  }
  return NULL;
}

enum { AX0 = 1, AX1 = 2, ALL = 3 }; /* masks of reduced axes */

/* Reduced axes of a 2-d input from sum/mean's parameters, or 0 for what
 * the csr kernel does not do (exclude, parameters it cannot read). */
static int csr_mask(const mxc__op *op, const void *param) {
  const mxc__tuple *axis = mxc__sparse_param(op, param, "axis", MXC__P_TUPLE);
  const int *exclude = mxc__sparse_param(op, param, "exclude", MXC__P_BOOL);
  if (!axis || !exclude || *exclude) return 0;
  if (axis->ndim <= 0) return ALL; /* None or (): every axis */
  int m = 0;
  for (int k = 0; k < axis->ndim; ++k) {
    int64_t a = axis->d[k] < 0 ? axis->d[k] + 2 : axis->d[k];
    if (a < 0 || a > 1 || (m >> a & 1)) return 0;
    m |= 1 << a;
  }
  return m;
}

static int sum_stype(const mxc__op *op, const void *param, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  if (in[0] == MXC_STYPE_DEFAULT && out[0] <= MXC_STYPE_DEFAULT) {
    out[0] = MXC_STYPE_DEFAULT;
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(
      in[0] != MXC_STYPE_CSR || out[0] > MXC_STYPE_DEFAULT ||
          csr_mask(op, param) == 0,
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for a %s input and a %s output with "
      "these parameters; the sparse kernel takes a csr input, reduces axis "
      "0, axis 1 or both (exclude=false) and gives a dense output",
      op->name, mxc__stype_name(in[0]),
      out[0] < 0 ? "unspecified" : mxc__stype_name(out[0]));
  out[0] = MXC_STYPE_DEFAULT;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- typed pieces: one accumulator per output, double for float dtypes
 * and wrapping uint64 for integers ---- */

typedef union acc {
  double f;
  uint64_t i;
} acc;

#define LD(x) (x)
#define LD16(x) mxc__f16_to_f32(x)
#define LDB16(x) mxc__bf16_to_f32(x)

/* Four partial sums hide the latency of the dependent adds. */
#define RANGE_SUM_F(T, LOAD)               \
  do {                                     \
    const T *restrict p = v;               \
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0; \
    int64_t j = lo;                        \
    for (; j + 4 <= hi; j += 4) {          \
      a0 += LOAD(p[j]);                    \
      a1 += LOAD(p[j + 1]);                \
      a2 += LOAD(p[j + 2]);                \
      a3 += LOAD(p[j + 3]);                \
    }                                      \
    for (; j < hi; ++j) a0 += LOAD(p[j]);  \
    r.f = (a0 + a1) + (a2 + a3);           \
  } while (0)
#define RANGE_SUM_I(T)                                       \
  do {                                                       \
    const T *restrict p = v;                                 \
    for (int64_t j = lo; j < hi; ++j) r.i += (uint64_t)p[j]; \
  } while (0)

/* Sum of values v[lo, hi) of dtype. */
static acc range_sum(int dtype, const void *v, int64_t lo, int64_t hi) {
  acc r = {0};
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      RANGE_SUM_F(float, LD);
      break;
    case MXC_DTYPE_FLOAT64:
      RANGE_SUM_F(double, LD);
      break;
    case MXC_DTYPE_FLOAT16:
      RANGE_SUM_F(uint16_t, LD16);
      break;
    case MXC_DTYPE_BFLOAT16:
      RANGE_SUM_F(uint16_t, LDB16);
      break;
    case MXC_DTYPE_INT32:
      RANGE_SUM_I(int32_t);
      break;
    case MXC_DTYPE_INT64:
      RANGE_SUM_I(int64_t);
      break;
    default:
      break; /* excluded by the dense operator's type inference */
  }
  return r;
}

static int is_int(int dtype) {
  return dtype == MXC_DTYPE_INT32 || dtype == MXC_DTYPE_INT64;
}

/* y[i] = a / div (float dtypes; div is 1 for sums) or a (integers),
 * written or added per req the way the dense kernels do. */
static void store(int dtype, void *y, int64_t i, acc a, double div,
                  mxc__req req) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      MXC__ASSIGN(req, ((float *)y)[i], (float)(a.f / div));
      break;
    case MXC_DTYPE_FLOAT64:
      MXC__ASSIGN(req, ((double *)y)[i], a.f / div);
      break;
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16: {
      uint16_t *h = y;
      int f16 = dtype == MXC_DTYPE_FLOAT16;
      float f = (float)(a.f / div);
      if (req == MXC__REQ_ADD) {
        f += f16 ? mxc__f16_to_f32(h[i]) : mxc__bf16_to_f32(h[i]);
      }
      h[i] = f16 ? mxc__f32_to_f16(f) : mxc__f32_to_bf16(f);
      break;
    }
    case MXC_DTYPE_INT32: {
      int32_t *p = y;
      uint64_t v = a.i + (req == MXC__REQ_ADD ? (uint64_t)(int64_t)p[i] : 0);
      p[i] = (int32_t)(int64_t)v;
      break;
    }
    case MXC_DTYPE_INT64: {
      int64_t *p = y;
      uint64_t v = a.i + (req == MXC__REQ_ADD ? (uint64_t)p[i] : 0);
      p[i] = (int64_t)v;
      break;
    }
    default:
      break;
  }
}

#define SCATTER(T, LOAD, FIELD, CAST, I)                                   \
  do {                                                                     \
    const T *restrict p = v;                                               \
    const I *restrict c = ix->ptr;                                         \
    for (int64_t j = 0; j < nnz; ++j) out[c[j]].FIELD += CAST(LOAD(p[j])); \
  } while (0)
#define NOCAST(x) (x)
#define UCAST(x) ((uint64_t)(x))
#define SCATTER_ALL(I)                        \
  switch (dtype) {                            \
    case MXC_DTYPE_FLOAT32:                   \
      SCATTER(float, LD, f, NOCAST, I);       \
      break;                                  \
    case MXC_DTYPE_FLOAT64:                   \
      SCATTER(double, LD, f, NOCAST, I);      \
      break;                                  \
    case MXC_DTYPE_FLOAT16:                   \
      SCATTER(uint16_t, LD16, f, NOCAST, I);  \
      break;                                  \
    case MXC_DTYPE_BFLOAT16:                  \
      SCATTER(uint16_t, LDB16, f, NOCAST, I); \
      break;                                  \
    case MXC_DTYPE_INT32:                     \
      SCATTER(int32_t, LD, i, UCAST, I);      \
      break;                                  \
    case MXC_DTYPE_INT64:                     \
      SCATTER(int64_t, LD, i, UCAST, I);      \
      break;                                  \
    default:                                  \
      break;                                  \
  }

/* out[indices[j]] += values[j] for every stored value (axis 0). */
static void col_scatter(int dtype, const void *v, const mxc__dense_view *ix,
                        int64_t nnz, acc *out) {
  if (ix->dtype == MXC_DTYPE_INT32) {
    SCATTER_ALL(int32_t)
  } else {
    SCATTER_ALL(int64_t)
  }
}

/* ---- the kernel ---- */

typedef struct sum_job {
  int dtype;
  const void *vals;
  mxc__dense_view ip;
  void *y;
  double div;
  mxc__req req;
  int64_t nnz;
  acc *part; /* full reduction: one partial sum per block of values */
} sum_job;

/* Rows processed per parallel chunk aim at this many stored values; the
 * full reduction sums fixed blocks of it, so its result does not depend
 * on the thread count. */
#define BLOCK_VALUES 65536

static int rows_part(void *arg, int64_t begin, int64_t end) {
  const sum_job *j = arg;
  for (int64_t r = begin; r < end; ++r) {
    int64_t lo = mxc__sparse_idx_get(&j->ip, r);
    int64_t hi = mxc__sparse_idx_get(&j->ip, r + 1);
    store(j->dtype, j->y, r, range_sum(j->dtype, j->vals, lo, hi), j->div,
          j->req);
  }
  return MXC_OK;
}

static int blocks_part(void *arg, int64_t begin, int64_t end) {
  const sum_job *j = arg;
  for (int64_t b = begin; b < end; ++b) {
    int64_t lo = b * BLOCK_VALUES;
    int64_t hi = lo + BLOCK_VALUES < j->nnz ? lo + BLOCK_VALUES : j->nnz;
    j->part[b] = range_sum(j->dtype, j->vals, lo, hi);
  }
  return MXC_OK;
}

/* Scratch memory from the operator's temporary space (sum and mean
 * declare MXC__RES_TEMP for their dense kernels): reused between calls,
 * so the kernel normally allocates nothing. */
static int scratch(const mxc__op *op, const mxc__opctx *ctx, int64_t n,
                   acc **out) {
  void *p = NULL;
  size_t nbytes = (size_t)(n > 0 ? n : 1) * sizeof(acc);
  int rc = mxc__opctx_temp(ctx, nbytes, &p);
  if (rc != MXC_OK) {
    mxc__error_prefix(op->name);
    return rc;
  }
  memset(p, 0, nbytes);
  *out = p;
  return MXC_OK;
}

static int sum_all(const mxc__op *op, const mxc__opctx *ctx, sum_job *j) {
  int64_t nnz = j->nnz;
  int64_t nb = (nnz + BLOCK_VALUES - 1) / BLOCK_VALUES;
  acc total = {0};
  if (nb <= 1) {
    total = range_sum(j->dtype, j->vals, 0, nnz);
  } else {
    MXC_FORWARD_IF_ERROR(scratch(op, ctx, nb, &j->part));
    (void)mxc__parallel_for(nb, 1, mxc__parallel_threads(), blocks_part, j);
    for (int64_t b = 0; b < nb; ++b) {
      if (is_int(j->dtype)) {
        total.i += j->part[b].i;
      } else {
        total.f += j->part[b].f;
      }
    }
  }
  store(j->dtype, j->y, 0, total, j->div, j->req);
  return MXC_OK;
}

static int sum_cols(const mxc__op *op, const mxc__opctx *ctx,
                    const mxc__ndarray *x, sum_job *j) {
  int64_t cols = x->shape.dims[1];
  acc *a = NULL;
  MXC_FORWARD_IF_ERROR(scratch(op, ctx, cols, &a));
  mxc__dense_view ix = mxc__sparse_aux(x, 1);
  col_scatter(j->dtype, j->vals, &ix, mxc__sparse_nnz(x), a);
  for (int64_t c = 0; c < cols; ++c) {
    store(j->dtype, j->y, c, a[c], j->div, j->req);
  }
  return MXC_OK;
}

static int sum_csr(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                   const mxc__ndarray *in, int n_in, const mxc__ndarray *out,
                   int n_out, const mxc__req *req) {
  (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *x = &in[0];
  char what[64];
  snprintf(what, sizeof what, "operator '%s' input 0 (data)", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(x, what));
  int mask = csr_mask(op, param);
  MXC_RETURN_ERROR_IF(mask == 0, MXC_ERR_INTERNAL,
                      "operator '%s': csr kernel run with parameters it "
                      "does not handle",
                      op->name);
  int64_t rows = x->shape.dims[0], cols = x->shape.dims[1];
  int mean = strcmp(op->name, "mean") == 0;
  sum_job j;
  memset(&j, 0, sizeof j);
  j.dtype = x->dtype;
  j.vals = mxc__sparse_data(x).ptr;
  j.ip = mxc__sparse_aux(x, 0);
  j.y = mxc__ndarray_ptr(&out[0]);
  j.req = req[0];
  j.div = !mean         ? 1.0
          : mask == AX0 ? (double)rows
          : mask == AX1 ? (double)cols
                        : (double)rows * (double)cols;
  int64_t nnz = j.nnz = mxc__sparse_nnz(x);
  if (mask == ALL) return sum_all(op, ctx, &j);
  if (mask == AX0) return sum_cols(op, ctx, x, &j);
  int threads = nnz >= 2 * BLOCK_VALUES ? mxc__parallel_threads() : 1;
  int64_t grain = rows / ((int64_t)threads * 8);
  return mxc__parallel_for(rows, grain < 1 ? 1 : grain, threads, rows_part, &j);
}

int mxc__sparse_register_reduce(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "sum", sum_stype, sum_csr));
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "mean", sum_stype, sum_csr));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_slice(r));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_retain(r));
  return mxc__sparse_register_square_sum(r);
}
