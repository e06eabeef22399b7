/* Sparse kernels of one-input element-wise operators of other families:
 * the zero-preserving unary functions (relu, abs, sqrt, ...), _mul_scalar
 * and _div_scalar keep csr / row_sparse; zeros_like gives an empty array
 * of its input's storage type; where with a csr condition and dense x, y
 * gives a dense result. Also the family's element-wise registration.
 *
 * The unary and scalar kernels apply the operator's own dense kernel to
 * the stored values (mxc__sparse_map_values), so the math, its dtype
 * handling and its threading are exactly the dense operator's. Stored
 * values the function maps to zero (relu of a negative value) stay stored:
 * the structure of the output is the input's, which also keeps the
 * gradient's structure aligned with it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "ops/sparse/elemwise.h"

int mxc__sparse_keep_stype(const mxc__op *op, const int *in, int *out,
                           int *dispatch, int sparse_ok) {
  int want = in[0];
  int ok = out[0] < 0 || out[0] == want;
  if (want != MXC_STYPE_DEFAULT) ok = ok && sparse_ok;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_STYPE,
                      "operator '%s': no sparse kernel for input storage "
                      "%s with output storage %s (expected the input's "
                      "storage type)",
                      op->name, mxc__stype_name(in[0]),
                      out[0] < 0 ? "(any)" : mxc__stype_name(out[0]));
  out[0] = want;
  *dispatch =
      want == MXC_STYPE_DEFAULT ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

int mxc__sparse_check_alias(const mxc__op *op, const mxc__ndarray *in, int n_in,
                            const mxc__ndarray *out) {
  for (int i = 0; i < n_in; ++i) {
    MXC_RETURN_ERROR_IF(in[i].chunk == out->chunk, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': the sparse output is also input %d; "
                        "sparse outputs cannot be computed in place (pass a "
                        "different output array)",
                        op->name, i);
  }
  return MXC_OK;
}

void mxc__sparse_idx_copy(const mxc__dense_view *dst,
                          const mxc__dense_view *src, int64_t n) {
  if (n <= 0) return;
  if (dst->dtype == src->dtype) {
    memcpy(dst->ptr, src->ptr, (size_t)n * mxc__dtype_size(src->dtype));
    return;
  }
  if (src->dtype == MXC_DTYPE_INT32) { /* widening: int32 -> int64 */
    const int32_t *s = src->ptr;
    int64_t *d = dst->ptr;
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    return;
  }
  /* Narrowing: the values fit, being indices below dst's extents (which
   * fit int32 since dst was created with int32 indices) or offsets up to
   * its nnz (which mxc__sparse_alloc checked against the index dtype). */
  const int64_t *s = src->ptr;
  int32_t *d = dst->ptr;
  for (int64_t i = 0; i < n; ++i) d[i] = (int32_t)s[i];
}

int mxc__sparse_map_values(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__ndarray *in,
                           const mxc__ndarray *out, mxc__req req) {
  if (req == MXC__REQ_NULL) return MXC_OK;
  char what[96];
  snprintf(what, sizeof what, "operator '%s' input 0", op->name);
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(in, what));
  MXC_FORWARD_IF_ERROR(mxc__sparse_check_alias(op, in, 1, out));
  int64_t nnz = mxc__sparse_nnz(in);
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(out, nnz));
  for (int k = 0; k < mxc__sparse_n_aux(in->stype); ++k) {
    mxc__dense_view s = mxc__sparse_aux(in, k), d = mxc__sparse_aux(out, k);
    mxc__sparse_idx_copy(&d, &s, s.shape.dims[0]);
  }
  mxc__dense_view sv = mxc__sparse_data(in), dv = mxc__sparse_data(out);
  mxc__blob bi = {sv.ptr, sv.shape, in->dtype, in->chunk->dev, MXC__FMT_PLAIN};
  mxc__blob bo = {dv.ptr, dv.shape, out->dtype, out->chunk->dev,
                  MXC__FMT_PLAIN};
  mxc__req w = MXC__REQ_WRITE;
  int rc = nnz ? op->compute(op, ctx, param, &bi, 1, &bo, 1, &w) : MXC_OK;
  /* On failure the output keeps its new, unfilled blocks unmarked: every
   * later reader's format check refuses them. */
  if (rc == MXC_OK) mxc__sparse_set_valid(out);
  return rc;
}

/* ---- zero-preserving unary functions ---- */

static const char *const k_unary[] = {
    "relu",    "abs",     "sign",    "sqrt",   "square", "floor",
    "ceil",    "round",   "rint",    "fix",    "trunc",  "sin",
    "tan",     "sinh",    "tanh",    "arcsin", "arctan", "arcsinh",
    "arctanh", "degrees", "radians", "expm1",  "log1p",  "negative",
};

static int unary_stype(const mxc__op *op, const void *param, const int *in,
                       int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  return mxc__sparse_keep_stype(op, in, out, dispatch, 1);
}

static int unary_sparse(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__ndarray *in, int n_in,
                        const mxc__ndarray *out, int n_out,
                        const mxc__req *req) {
  (void)n_in, (void)n_out;
  return mxc__sparse_map_values(op, ctx, param, in, out, req[0]);
}

/* ---- _mul_scalar, _div_scalar ---- */

/* The layout of the scalar operators' parameters (ops/binary/binary.h,
 * mxc__bin_scalar_param, which other families do not include): one
 * double. */
typedef struct scalar_param {
  double scalar;
} scalar_param;

/* 0 * s and 0 / s are 0 only for finite s and, for division, s != 0
 * (0 / 0 is NaN); other scalars would change the unstored zeros, so they
 * go to the dense fallback. */
static int scalar_stype(const mxc__op *op, const void *param, const int *in,
                        int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  double s = ((const scalar_param *)param)->scalar;
  int ok = isfinite(s);
  if (!strcmp(op->name, "_div_scalar")) ok = ok && s != 0;
  return mxc__sparse_keep_stype(op, in, out, dispatch, ok);
}

/* ---- zeros_like ---- */

static int zeros_stype(const mxc__op *op, const void *param, const int *in,
                       int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  return mxc__sparse_keep_stype(op, in, out, dispatch, 1);
}

/* Only the input's shape matters, so its format is not checked. */
static int zeros_sparse(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__ndarray *in, int n_in,
                        const mxc__ndarray *out, int n_out,
                        const mxc__req *req) {
  (void)ctx, (void)param, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  MXC_FORWARD_IF_ERROR(mxc__sparse_check_alias(op, in, n_in, out));
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(out, 0));
  if (out->stype == MXC_STYPE_CSR) { /* indptr: rows + 1 zeros */
    mxc__dense_view ip = mxc__sparse_aux(out, 0);
    memset(ip.ptr, 0, (size_t)ip.shape.dims[0] * mxc__dtype_size(ip.dtype));
  }
  mxc__sparse_set_valid(out);
  return MXC_OK;
}

/* ---- where(csr condition, dense x, dense y) -> dense ---- */

static int where_stype(const mxc__op *op, const void *param, const int *in,
                       int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  int dense_xy = in[1] == MXC_STYPE_DEFAULT && in[2] == MXC_STYPE_DEFAULT;
  int out_ok = out[0] < 0 || out[0] == MXC_STYPE_DEFAULT;
  MXC_RETURN_ERROR_IF(
      !dense_xy || !out_ok ||
          (in[0] != MXC_STYPE_DEFAULT && in[0] != MXC_STYPE_CSR),
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for condition %s, x %s, y %s "
      "(expected a default or csr condition, default x and y, default "
      "output)",
      op->name, mxc__stype_name(in[0]), mxc__stype_name(in[1]),
      mxc__stype_name(in[2]));
  out[0] = MXC_STYPE_DEFAULT;
  *dispatch =
      in[0] == MXC_STYPE_DEFAULT ? MXC__DISPATCH_DENSE : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

typedef struct where_job {
  const mxc__ndarray *cond;
  const char *x, *y;
  char *o;
  int64_t cols;
  int dtype, add;
} where_job;

/* Whether the condition's stored value k is nonzero. */
static int cond_at(const mxc__dense_view *cv, int64_t k) {
  return !mxc__sparse_is_zero(
      (const char *)cv->ptr + (size_t)k * mxc__dtype_size(cv->dtype),
      cv->dtype);
}

/* Rows [b, e): each output element takes x where the condition stores a
 * nonzero value at it, else y. Writing copies y's row and then x's
 * elements at those columns (bytes: any dtype). Accumulating (float32 /
 * float64, checked by the caller) walks the row with a cursor into the
 * row's sorted stored columns, adding one term per element as the dense
 * kernel does. */
static int where_rows(void *arg, int64_t b, int64_t e) {
  const where_job *j = arg;
  mxc__dense_view ip = mxc__sparse_aux(j->cond, 0);
  mxc__dense_view ix = mxc__sparse_aux(j->cond, 1);
  mxc__dense_view cv = mxc__sparse_data(j->cond);
  size_t esz = mxc__dtype_size(j->dtype), row = (size_t)j->cols * esz;
  for (int64_t r = b; r < e; ++r) {
    int64_t lo = mxc__sparse_idx_get(&ip, r);
    int64_t hi = mxc__sparse_idx_get(&ip, r + 1);
    size_t base = (size_t)r * row;
    if (!j->add) {
      memmove(j->o + base, j->y + base, row); /* o may be y */
      for (int64_t k = lo; k < hi; ++k) {
        if (!cond_at(&cv, k)) continue;
        size_t at = base + (size_t)mxc__sparse_idx_get(&ix, k) * esz;
        memcpy(j->o + at, j->x + at, esz);
      }
      continue;
    }
    int64_t k = lo, next = k < hi ? mxc__sparse_idx_get(&ix, k) : j->cols;
    for (int64_t c = 0; c < j->cols; ++c) {
      const char *src = j->y;
      if (c == next) {
        if (cond_at(&cv, k)) src = j->x;
        ++k;
        next = k < hi ? mxc__sparse_idx_get(&ix, k) : j->cols;
      }
      size_t at = (size_t)(r * j->cols + c);
      if (j->dtype == MXC_DTYPE_FLOAT32) {
        ((float *)j->o)[at] += ((const float *)src)[at];
      } else {
        ((double *)j->o)[at] += ((const double *)src)[at];
      }
    }
  }
  return MXC_OK;
}

static int where_sparse(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__ndarray *in, int n_in,
                        const mxc__ndarray *out, int n_out,
                        const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int add = req[0] == MXC__REQ_ADD;
  MXC_RETURN_ERROR_IF(
      add && out->dtype != MXC_DTYPE_FLOAT32 && out->dtype != MXC_DTYPE_FLOAT64,
      MXC_ERR_UNSUPPORTED,
      "operator '%s': accumulating (req add) with a csr "
      "condition takes float32 or float64; got %s",
      op->name, mxc__dtype_name(out->dtype));
  MXC_FORWARD_IF_ERROR(
      mxc__sparse_require_valid(&in[0], "operator 'where' condition"));
  where_job j = {&in[0],
                 mxc__ndarray_ptr(&in[1]),
                 mxc__ndarray_ptr(&in[2]),
                 mxc__ndarray_ptr(out),
                 in[0].shape.dims[1],
                 out->dtype,
                 add};
  int64_t rows = in[0].shape.dims[0];
  int64_t grain = j.cols > 0 ? 16384 / j.cols + 1 : rows;
  int threads = rows * j.cols >= 65536 ? mxc__parallel_threads() : 1;
  return mxc__parallel_for(rows, grain, threads, where_rows, &j);
}

/* ---- registration ---- */

int mxc__sparse_register_elemwise(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0]; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__registry_attach_stype(r, k_unary[i], unary_stype, unary_sparse));
  }
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "_mul_scalar", scalar_stype, unary_sparse));
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "_div_scalar", scalar_stype, unary_sparse));
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "zeros_like", zeros_stype, zeros_sparse));
  MXC_FORWARD_IF_ERROR(
      mxc__registry_attach_stype(r, "where", where_stype, where_sparse));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_elemwise_binary(r));
  return mxc__sparse_register_quadratic(r);
}
