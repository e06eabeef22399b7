/* _sparse_retain (alias sparse_retain): the rows of `data` listed in
 * `indices`, as a row_sparse array of data's shape.
 *
 * Semantics. indices is a 1-d dense array of any numeric dtype whose
 * values are row ids: each must be an integer in [0, rows) (else
 * MXC_ERR_INVALID_ARGUMENT naming the position and value). They are a
 * set: order and repetition do not matter. The output stores, in
 * increasing row order, every listed row that data stores: for a
 * row_sparse data its stored rows (a listed row data does not store is
 * zero and is not stored), for a dense data every listed row (a dense
 * array stores all its rows). Every other row of the output is zero.
 * MXNet instead stores every listed row and assumes sorted unique ids;
 * values agree, only the set of stored zero rows differs.
 *
 * Storage types: data row_sparse or dense with indices dense gives a
 * row_sparse output (sparse kernel); a dense output given for dense data
 * runs the dense kernel (zeros outside the listed rows); everything else
 * is MXC_ERR_STYPE (the dispatcher falls back to dense).
 *
 * Gradient: d data = _sparse_retain(ograd, indices), i.e. the output
 * gradient restricted to the same rows (row_sparse, whether the output
 * gradient is dense or row_sparse); indices get none. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/op/common.h"
#include "ops/sparse/reduce_parts.h"

/* ---- inference ---- */

static int retain_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  (void)param, (void)n_in, (void)n_out;
  char b1[160], b2[160];
  if (in[0].ndim < 0) in[0] = out[0];
  if (out[0].ndim < 0) out[0] = in[0];
  MXC_RETURN_ERROR_IF(in[0].ndim >= 0 && !mxc__shape_equal(&in[0], &out[0]),
                      MXC_ERR_SHAPE,
                      "operator '%s': output 0 has shape %s; expected the "
                      "shape of data, %s",
                      op->name, mxc__shape_str(&out[0], b1, sizeof b1),
                      mxc__shape_str(&in[0], b2, sizeof b2));
  MXC_RETURN_ERROR_IF(in[0].ndim == 0, MXC_ERR_SHAPE,
                      "operator '%s': data is a scalar; expected an array "
                      "with rows (at least 1 dimension)",
                      op->name);
  MXC_RETURN_ERROR_IF(in[1].ndim >= 0 && in[1].ndim != 1, MXC_ERR_SHAPE,
                      "operator '%s': indices has shape %s; expected a 1-d "
                      "array of row ids",
                      op->name, mxc__shape_str(&in[1], b1, sizeof b1));
  return MXC_OK;
}

static int retain_type(const mxc__op *op, const void *param, int *in, int n_in,
                       int *out, int n_out) {
  /* indices may have any dtype (row ids held as floats, as in MXNet). */
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out, 1u);
}

static int retain_stype(const mxc__op *op, const void *param, const int *in,
                        int n_in, int *out, int n_out, int *dispatch) {
  (void)param, (void)n_in, (void)n_out;
  int data = in[0], idx = in[1], o = out[0];
  if (data == MXC_STYPE_DEFAULT && idx == MXC_STYPE_DEFAULT &&
      o == MXC_STYPE_DEFAULT) {
    *dispatch = MXC__DISPATCH_DENSE;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(
      idx != MXC_STYPE_DEFAULT || data == MXC_STYPE_CSR ||
          (o >= 0 && o != MXC_STYPE_ROW_SPARSE),
      MXC_ERR_STYPE,
      "operator '%s': no sparse kernel for data of storage type %d, indices "
      "of storage type %d and an output of storage type %d; the sparse "
      "kernel takes row_sparse or dense data and dense indices and gives a "
      "row_sparse output",
      op->name, data, idx, o);
  out[0] = MXC_STYPE_ROW_SPARSE;
  *dispatch = MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

/* ---- kernels ---- */

/* indices[i] as a row id of an array with `rows` rows, or an error naming
 * the position and value. */
static int row_id(const mxc__op *op, const mxc__blob *ix, int64_t i,
                  int64_t rows, int64_t *out) {
  int64_t r;
  if (ix->dtype == MXC_DTYPE_INT64) {
    r = ((const int64_t *)ix->ptr)[i];
  } else if (ix->dtype == MXC_DTYPE_INT32) {
    r = ((const int32_t *)ix->ptr)[i];
  } else {
    double v = mxc__blob_get(ix, i);
    MXC_RETURN_ERROR_IF(
        !(v >= 0 && v < (double)rows) || v != floor(v),
        MXC_ERR_INVALID_ARGUMENT,
        "operator '%s': indices[%lld] = %g is not a row id of data; "
        "expected an integer in [0, %lld)",
        op->name, (long long)i, v, (long long)rows);
    r = (int64_t)v;
  }
  MXC_RETURN_ERROR_IF(r < 0 || r >= rows, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': indices[%lld] = %lld is not a row id "
                      "of data; expected an integer in [0, %lld)",
                      op->name, (long long)i, (long long)r, (long long)rows);
  *out = r;
  return MXC_OK;
}

static void idx_blob(const mxc__ndarray *a, mxc__blob *b) {
  b->ptr = mxc__ndarray_ptr(a);
  b->shape = a->shape;
  b->dtype = a->dtype;
  b->dev = a->chunk->dev;
  b->fmt = MXC__FMT_PLAIN;
}

/* Position of row r among the n sorted stored row ids, or -1. */
static int64_t find_row(const mxc__dense_view *ids, int64_t n, int64_t r) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int64_t v = mxc__sparse_idx_get(ids, mid);
    if (v == r) return mid;
    if (v < r) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

/* keep[k] = 1 for each stored row k (k a row id for dense data, a
 * position among the stored rows for row_sparse data) that indices
 * lists. */
static int mark_rows(const mxc__op *op, const mxc__ndarray *data,
                     const mxc__blob *ix, unsigned char *keep) {
  int64_t rows = data->shape.dims[0], n = ix->shape.dims[0];
  int sparse = data->stype == MXC_STYPE_ROW_SPARSE;
  mxc__dense_view ids;
  int64_t nnz = 0;
  if (sparse) {
    ids = mxc__sparse_aux(data, 0);
    nnz = mxc__sparse_nnz(data);
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t r;
    MXC_FORWARD_IF_ERROR(row_id(op, ix, i, rows, &r));
    int64_t k = sparse ? find_row(&ids, nnz, r) : r;
    if (k >= 0) keep[k] = 1;
  }
  return MXC_OK;
}

static int retain_into(const mxc__op *op, const mxc__ndarray *data,
                       const mxc__blob *ix, const mxc__ndarray *y,
                       unsigned char *keep) {
  int sparse = data->stype == MXC_STYPE_ROW_SPARSE;
  int64_t n_src = sparse ? mxc__sparse_nnz(data) : data->shape.dims[0];
  MXC_FORWARD_IF_ERROR(mark_rows(op, data, ix, keep));
  int64_t n_out = 0;
  for (int64_t k = 0; k < n_src; ++k) n_out += keep[k];
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(y, n_out));
  size_t row =
      (size_t)mxc__sparse_row_elems(data) * mxc__dtype_size(data->dtype);
  const char *src = sparse ? mxc__sparse_data(data).ptr
                           : (const char *)mxc__ndarray_ptr(data);
  mxc__dense_view ids;
  if (sparse) ids = mxc__sparse_aux(data, 0);
  char *dst = mxc__sparse_data(y).ptr;
  mxc__dense_view oid = mxc__sparse_aux(y, 0);
  int64_t j = 0;
  for (int64_t k = 0; k < n_src; ++k) {
    if (!keep[k]) continue;
    if (row) memcpy(dst + (size_t)j * row, src + (size_t)k * row, row);
    mxc__sparse_idx_set(&oid, j++, sparse ? mxc__sparse_idx_get(&ids, k) : k);
  }
  mxc__sparse_set_valid(y);
  return MXC_OK;
}

static int retain_sparse(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__ndarray *in, int n_in,
                         const mxc__ndarray *out, int n_out,
                         const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *data = &in[0];
  if (data->stype == MXC_STYPE_ROW_SPARSE) {
    char what[64];
    snprintf(what, sizeof what, "operator '%s' input 0 (data)", op->name);
    MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(data, what));
  }
  int64_t n_src = data->stype == MXC_STYPE_ROW_SPARSE ? mxc__sparse_nnz(data)
                                                      : data->shape.dims[0];
  unsigned char *keep = mxc__calloc(n_src > 0 ? (size_t)n_src : 1, 1);
  MXC_RETURN_ERROR_IF(!keep, MXC_ERR_OOM,
                      "operator '%s': out of memory marking %lld rows",
                      op->name, (long long)n_src);
  mxc__blob ix;
  idx_blob(&in[1], &ix);
  int rc = retain_into(op, data, &ix, &out[0], keep);
  mxc__free(keep);
  return rc;
}

/* Dense data, dense output: the listed rows, zeros elsewhere (with req
 * add: the listed rows added once each, the ids being a set). */
static int retain_dense(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t rows = in[0].shape.dims[0], n = in[1].shape.dims[0];
  int64_t per = rows ? mxc__shape_size(&in[0].shape) / rows : 0;
  size_t row = (size_t)per * mxc__dtype_size(in[0].dtype);
  unsigned char *keep = mxc__calloc(rows > 0 ? (size_t)rows : 1, 1);
  MXC_RETURN_ERROR_IF(!keep, MXC_ERR_OOM,
                      "operator '%s': out of memory marking %lld rows",
                      op->name, (long long)rows);
  /* Every id is checked before anything is written: a bad one leaves the
   * output unchanged. */
  for (int64_t i = 0; i < n; ++i) {
    int64_t r;
    int rc = row_id(op, &in[1], i, rows, &r);
    if (rc != MXC_OK) {
      mxc__free(keep);
      return rc;
    }
    keep[r] = 1;
  }
  char *y = out[0].ptr;
  const char *x = in[0].ptr;
  for (int64_t r = 0; r < rows; ++r) {
    if (req[0] != MXC__REQ_ADD) {
      if (!row) continue;
      if (keep[r]) {
        memcpy(y + (size_t)r * row, x + (size_t)r * row, row);
      } else {
        memset(y + (size_t)r * row, 0, row);
      }
    } else if (keep[r]) {
      for (int64_t at = r * per; at < (r + 1) * per; ++at) {
        mxc__blob_set(&out[0], at,
                      mxc__blob_get(&out[0], at) + mxc__blob_get(&in[0], at));
      }
    }
  }
  mxc__free(keep);
  return MXC_OK;
}

static int retain_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                           mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], fwd->inputs[1]};
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__node_op("_sparse_retain", NULL, NULL, 0, ins, 2, fwd->name, &b));
  mxc__entry none = {NULL, 0};
  igrad[0] = mxc__entry_ref(b, 0);
  igrad[1] = none;
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

static const char *const k_aliases[] = {"sparse_retain", NULL};
static const char *const k_in[] = {"data", "indices", NULL};

static const mxc__op k_op = {
    .name = "_sparse_retain",
    .aliases = k_aliases,
    .doc =
        "The rows of data listed in indices (a set of integer row ids in "
        "[0, rows), any order, repeats allowed) as a row_sparse array; "
        "other rows are zero. Stores the listed rows that data stores.",
    .n_inputs = 2,
    .input_names = k_in,
    .n_outputs = 1,
    .infer_shape = retain_shape,
    .infer_type = retain_type,
    .compute = retain_dense,
    .infer_stype = retain_stype,
    .compute_sparse = retain_sparse,
    .gradient = retain_gradient,
    .backward_uses_inputs = 2,
};

int mxc__sparse_register_retain(mxc__registry *r) {
  return mxc__registry_add(r, &k_op);
}
