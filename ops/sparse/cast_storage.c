/* cast_storage(data, stype): the same values in another storage type.
 *
 * Dense to dense is a copy (the dense kernel, so the operator also runs in
 * dense-only graphs). Every other direction is a sparse kernel:
 * dense -> csr / row_sparse stores the nonzero elements / the rows with a
 * nonzero element (a value is zero when it compares equal to 0, so -0.0
 * is dropped and NaN kept); csr / row_sparse -> dense scatters into zeros;
 * csr <-> row_sparse convert directly (a row_sparse row is stored when its
 * csr row has stored entries; a csr entry is stored for every nonzero value
 * of a stored row). Sparse inputs are format-checked before use. Values
 * keep their dtype. A dense output may be accumulated into (req add: the
 * input's values are added, sparse ones scattered); sparse outputs are
 * written only.
 *
 * Gradient: the output gradient cast back to the storage type of the
 * input. That type is known only once storage inference has run over the
 * graph (a symbol's argument may be bound to either kind of array), so
 * the gradient node cannot carry it as a parameter. Instead the gradient
 * is _backward_cast_storage(ograd, data): its storage inference gives its
 * output the type of its second input, data, whose values it never reads
 * (a given output array keeps its own type, e.g. a dense gradient array
 * bound for a csr argument). The kernels are cast_storage's own, applied
 * to ograd. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/node.h"
#include "ops/sparse/sparse.h"

typedef struct cast_param {
  int stype; /* index into mxc__stype_names == MXC_STYPE_* */
} cast_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM_ENUM(cast_param, stype, NULL, mxc__stype_names,
                    "Storage type of the output: default (dense), "
                    "row_sparse or csr."),
};

static int cast_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  const cast_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__infer_shape_same(op, param, in, n_in, out, n_out));
  const mxc__shape *s = in[0].ndim >= 0 ? &in[0] : &out[0];
  if (s->ndim < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(p->stype == MXC_STYPE_CSR && s->ndim != 2, MXC_ERR_SHAPE,
                      "operator '%s': a csr array is 2-d; data has %d "
                      "dimensions",
                      op->name, s->ndim);
  MXC_RETURN_ERROR_IF(p->stype == MXC_STYPE_ROW_SPARSE && s->ndim < 1,
                      MXC_ERR_SHAPE,
                      "operator '%s': a row_sparse array needs at least 1 "
                      "dimension; data is a scalar",
                      op->name);
  return MXC_OK;
}

/* Adds n contiguous elements of src to dst (req add). */
static void add_values(char *dst, const char *src, int64_t n, int dtype) {
  if (dtype == MXC_DTYPE_FLOAT32) {
    float *restrict d = (float *)(void *)dst;
    const float *restrict x = (const float *)(const void *)src;
    for (int64_t i = 0; i < n; ++i) d[i] += x[i];
    return;
  }
  if (dtype == MXC_DTYPE_FLOAT64) {
    double *restrict d = (double *)(void *)dst;
    const double *restrict x = (const double *)(const void *)src;
    for (int64_t i = 0; i < n; ++i) d[i] += x[i];
    return;
  }
  mxc__blob bd = {dst, {1, {n}}, dtype, {MXC_DEVICE_CPU, 0}, MXC__FMT_PLAIN};
  mxc__blob bs = {(void *)src, {1, {n}}, dtype, {MXC_DEVICE_CPU, 0},
                  MXC__FMT_PLAIN};
  for (int64_t i = 0; i < n; ++i) {
    mxc__blob_set(&bd, i, mxc__blob_get(&bd, i) + mxc__blob_get(&bs, i));
  }
}

static int cast_stype(const mxc__op *op, const void *param, const int *in,
                      int n_in, int *out, int n_out, int *dispatch) {
  (void)op, (void)n_in, (void)n_out;
  const cast_param *p = param;
  out[0] = p->stype;
  *dispatch = in[0] == MXC_STYPE_DEFAULT && p->stype == MXC_STYPE_DEFAULT
                  ? MXC__DISPATCH_DENSE
                  : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

static int cast_dense(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t count = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_ADD) {
    add_values(out[0].ptr, in[0].ptr, count, in[0].dtype);
    return MXC_OK;
  }
  size_t n = (size_t)count * mxc__dtype_size(in[0].dtype);
  if (n && out[0].ptr != in[0].ptr) memmove(out[0].ptr, in[0].ptr, n);
  return MXC_OK;
}

/* ---- conversions ---- */

/* Scatters src into dense dst: over zeros, or added (add != 0). */
static int to_dense(const mxc__ndarray *src, const mxc__ndarray *dst, int add,
                    const char *what) {
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(src, what));
  size_t esz = mxc__dtype_size(src->dtype);
  char *d = mxc__ndarray_ptr(dst);
  if (!add) memset(d, 0, mxc__ndarray_nbytes(dst));
  mxc__dense_view v = mxc__sparse_data(src);
  const char *s = v.ptr;
  if (src->stype == MXC_STYPE_CSR) {
    mxc__dense_view ip = mxc__sparse_aux(src, 0), ix = mxc__sparse_aux(src, 1);
    int64_t cols = src->shape.dims[1];
    for (int64_t r = 0; r < src->shape.dims[0]; ++r) {
      int64_t hi = mxc__sparse_idx_get(&ip, r + 1);
      for (int64_t j = mxc__sparse_idx_get(&ip, r); j < hi; ++j) {
        int64_t c = mxc__sparse_idx_get(&ix, j);
        if (add) {
          add_values(d + (size_t)(r * cols + c) * esz, s + (size_t)j * esz, 1,
                     src->dtype);
        } else {
          memcpy(d + (size_t)(r * cols + c) * esz, s + (size_t)j * esz, esz);
        }
      }
    }
    return MXC_OK;
  }
  mxc__dense_view ix = mxc__sparse_aux(src, 0);
  size_t row = (size_t)mxc__sparse_row_elems(src) * esz;
  for (int64_t j = 0; j < v.shape.dims[0]; ++j) {
    int64_t r = mxc__sparse_idx_get(&ix, j);
    if (add) {
      add_values(d + (size_t)r * row, s + (size_t)j * row,
                 mxc__sparse_row_elems(src), src->dtype);
    } else {
      memcpy(d + (size_t)r * row, s + (size_t)j * row, row);
    }
  }
  return MXC_OK;
}

/* Dense rows x cols (row_len elements per row) -> csr. */
static int csr_from_rows(const char *d, int dtype, int64_t rows, int64_t cols,
                         const mxc__ndarray *dst) {
  size_t esz = mxc__dtype_size(dtype);
  int64_t nnz = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    nnz += !mxc__sparse_is_zero(d + (size_t)i * esz, dtype);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, nnz));
  mxc__dense_view v = mxc__sparse_data(dst);
  mxc__dense_view ip = mxc__sparse_aux(dst, 0), ix = mxc__sparse_aux(dst, 1);
  char *o = v.ptr;
  int64_t k = 0;
  mxc__sparse_idx_set(&ip, 0, 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const char *e = d + (size_t)(r * cols + c) * esz;
      if (mxc__sparse_is_zero(e, dtype)) continue;
      memcpy(o + (size_t)k * esz, e, esz);
      mxc__sparse_idx_set(&ix, k++, c);
    }
    mxc__sparse_idx_set(&ip, r + 1, k);
  }
  mxc__sparse_set_valid(dst);
  return MXC_OK;
}

static int row_is_zero(const char *p, int64_t n, int dtype) {
  size_t esz = mxc__dtype_size(dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (!mxc__sparse_is_zero(p + (size_t)i * esz, dtype)) return 0;
  }
  return 1;
}

static int rsp_from_dense(const mxc__ndarray *src, const mxc__ndarray *dst) {
  const char *d = mxc__ndarray_ptr(src);
  int64_t rows = src->shape.dims[0], per = mxc__sparse_row_elems(dst);
  size_t row = (size_t)per * mxc__dtype_size(src->dtype);
  int64_t n = 0;
  for (int64_t r = 0; r < rows; ++r) {
    n += !row_is_zero(d + (size_t)r * row, per, src->dtype);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, n));
  mxc__dense_view v = mxc__sparse_data(dst), ix = mxc__sparse_aux(dst, 0);
  char *o = v.ptr;
  int64_t k = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const char *e = d + (size_t)r * row;
    if (row_is_zero(e, per, src->dtype)) continue;
    memcpy(o + (size_t)k * row, e, row);
    mxc__sparse_idx_set(&ix, k++, r);
  }
  mxc__sparse_set_valid(dst);
  return MXC_OK;
}

/* csr -> row_sparse: rows with stored entries become stored rows. */
static int rsp_from_csr(const mxc__ndarray *src, const mxc__ndarray *dst) {
  mxc__dense_view ip = mxc__sparse_aux(src, 0), ix = mxc__sparse_aux(src, 1);
  mxc__dense_view sv = mxc__sparse_data(src);
  int64_t rows = src->shape.dims[0], cols = src->shape.dims[1];
  size_t esz = mxc__dtype_size(src->dtype);
  int64_t n = 0;
  for (int64_t r = 0; r < rows; ++r) {
    n += mxc__sparse_idx_get(&ip, r + 1) > mxc__sparse_idx_get(&ip, r);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, n));
  mxc__dense_view v = mxc__sparse_data(dst), ox = mxc__sparse_aux(dst, 0);
  char *o = v.ptr;
  memset(o, 0, (size_t)(n * cols) * esz);
  int64_t k = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t lo = mxc__sparse_idx_get(&ip, r),
            hi = mxc__sparse_idx_get(&ip, r + 1);
    if (hi == lo) continue;
    for (int64_t j = lo; j < hi; ++j) {
      int64_t c = mxc__sparse_idx_get(&ix, j);
      memcpy(o + (size_t)(k * cols + c) * esz, (char *)sv.ptr + (size_t)j * esz,
             esz);
    }
    mxc__sparse_idx_set(&ox, k++, r);
  }
  mxc__sparse_set_valid(dst);
  return MXC_OK;
}

/* row_sparse (2-d) -> csr: the nonzero values of the stored rows. */
static int csr_from_rsp(const mxc__ndarray *src, const mxc__ndarray *dst) {
  mxc__dense_view sv = mxc__sparse_data(src), sx = mxc__sparse_aux(src, 0);
  int64_t rows = src->shape.dims[0], cols = src->shape.dims[1];
  size_t esz = mxc__dtype_size(src->dtype);
  const char *d = sv.ptr;
  int64_t nnz = 0;
  for (int64_t i = 0; i < sv.shape.dims[0] * cols; ++i) {
    nnz += !mxc__sparse_is_zero(d + (size_t)i * esz, src->dtype);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_alloc(dst, nnz));
  mxc__dense_view v = mxc__sparse_data(dst);
  mxc__dense_view ip = mxc__sparse_aux(dst, 0), ix = mxc__sparse_aux(dst, 1);
  char *o = v.ptr;
  int64_t k = 0, j = 0;
  mxc__sparse_idx_set(&ip, 0, 0);
  for (int64_t r = 0; r < rows; ++r) {
    if (j < sv.shape.dims[0] && mxc__sparse_idx_get(&sx, j) == r) {
      for (int64_t c = 0; c < cols; ++c) {
        const char *e = d + (size_t)(j * cols + c) * esz;
        if (mxc__sparse_is_zero(e, src->dtype)) continue;
        memcpy(o + (size_t)k * esz, e, esz);
        mxc__sparse_idx_set(&ix, k++, c);
      }
      ++j;
    }
    mxc__sparse_idx_set(&ip, r + 1, k);
  }
  mxc__sparse_set_valid(dst);
  return MXC_OK;
}

static int cast_sparse(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__ndarray *in, int n_in,
                       const mxc__ndarray *out, int n_out,
                       const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__ndarray *src = &in[0], *dst = &out[0];
  int from = src->stype, to = dst->stype, add = req[0] == MXC__REQ_ADD;
  MXC_RETURN_ERROR_IF(add && to != MXC_STYPE_DEFAULT, MXC_ERR_UNSUPPORTED,
                      "operator '%s': accumulating (req add) into a sparse "
                      "output is not supported; the output must be dense",
                      op->name);
  char what[64];
  snprintf(what, sizeof what, "operator '%s' input 0", op->name);
  if (to == MXC_STYPE_DEFAULT && from == MXC_STYPE_DEFAULT) {
    /* _backward_cast_storage with a sparse data input but dense ograd. */
    const mxc__blob b_in = {mxc__ndarray_ptr(src), src->shape, src->dtype,
                            src->chunk->dev, MXC__FMT_PLAIN};
    const mxc__blob b_out = {mxc__ndarray_ptr(dst), dst->shape, dst->dtype,
                             dst->chunk->dev, MXC__FMT_PLAIN};
    return cast_dense(op, ctx, param, &b_in, 1, &b_out, 1, req);
  }
  if (to == MXC_STYPE_DEFAULT) return to_dense(src, dst, add, what);
  if (from == MXC_STYPE_DEFAULT) {
    return to == MXC_STYPE_CSR
               ? csr_from_rows(mxc__ndarray_ptr(src), src->dtype,
                               src->shape.dims[0], src->shape.dims[1], dst)
               : rsp_from_dense(src, dst);
  }
  MXC_FORWARD_IF_ERROR(mxc__sparse_require_valid(src, what));
  if (from == to) return mxc__sparse_copy_now(src, dst);
  return to == MXC_STYPE_CSR ? csr_from_rsp(src, dst) : rsp_from_csr(src, dst);
}

/* _backward_cast_storage(ograd, data): see the top of the file. */
static int back_stype(const mxc__op *op, const void *param, const int *in,
                      int n_in, int *out, int n_out, int *dispatch) {
  (void)op, (void)param, (void)n_in, (void)n_out;
  if (out[0] < 0) out[0] = in[1];
  *dispatch = in[0] == MXC_STYPE_DEFAULT && in[1] == MXC_STYPE_DEFAULT &&
                      out[0] == MXC_STYPE_DEFAULT
                  ? MXC__DISPATCH_DENSE
                  : MXC__DISPATCH_SPARSE;
  return MXC_OK;
}

static const char *const k_in[] = {"data", NULL};
static const char *const k_back_in[] = {"ograd", "data", NULL};

static const mxc__op k_back = {
    .name = "_backward_cast_storage",
    .doc = "Gradient of cast_storage: ograd in the storage type of data.",
    MXC__PARAMS_OF(cast_param, k_params),
    .n_inputs = 2,
    .input_names = k_back_in,
    .n_outputs = 1,
    .infer_shape = mxc__infer_shape_same,
    .infer_stype = back_stype,
    .compute = cast_dense,
    .compute_sparse = cast_sparse,
    .hidden = 1,
};

static const mxc__op k_op = {
    .name = "cast_storage",
    .doc =
        "The same values in another storage type (stype: default, "
        "row_sparse or csr). Zero elements (== 0) are not stored.",
    MXC__PARAMS_OF(cast_param, k_params),
    .n_inputs = 1,
    .input_names = k_in,
    .n_outputs = 1,
    .infer_shape = cast_shape,
    .infer_stype = cast_stype,
    .compute = cast_dense,
    .compute_sparse = cast_sparse,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 1,
};

int mxc__sparse_register_cast(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_op));
  return mxc__registry_add(r, &k_back);
}
