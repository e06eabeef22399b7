/* Sparse arrays: creation from host buffers, reading back nnz, values and
 * aux arrays, format checks and storage casts (core/ndarray/sparse*.c and
 * core/op/cast_storage.c do the work). */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/dtype.h"
#include "core/op/cast_storage.h"

/* Shared argument checks of the constructors. */
static int check_create(const char *fn, const int64_t *shape, int ndim,
                        int dtype, int dev_type, int dev_id, mxc__shape *s) {
  char what[96];
  snprintf(what, sizeof what, "%s: dtype", fn);
  MXC_FORWARD_IF_ERROR(mxc__dtype_check(dtype, what));
  snprintf(what, sizeof what, "%s: device", fn);
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev_type, dev_id, what));
  MXC_RETURN_ERROR_IF(!shape, MXC_ERR_INVALID_ARGUMENT, "%s: shape is NULL",
                      fn);
  snprintf(what, sizeof what, "%s: shape", fn);
  return mxc__shape_make(shape, ndim, mxc__dtype_size(dtype), what, s);
}

int mxc_ndarray_create_csr(const int64_t *shape, int dtype, int index_dtype,
                           const void *data, const void *indptr,
                           const void *indices, int64_t nnz, int dev_type,
                           int dev_id, mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_ndarray_create_csr";
  API_CHECK_OUT(out, fn, "out");
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(check_create(fn, shape, 2, dtype, dev_type, dev_id, &s));
  mxc__device dev = {dev_type, dev_id};
  mxc__ndarray *a = NULL;
  int rc = mxc__ndarray_create_csr_host(&s, dtype, index_dtype, dev, data,
                                        indptr, indices, nnz, &a);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  return api_wrap_array(a, out);
}

int mxc_ndarray_create_row_sparse(const int64_t *shape, int ndim, int dtype,
                                  int index_dtype, const void *data,
                                  const void *row_idx, int64_t nnz,
                                  int dev_type, int dev_id, mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_ndarray_create_row_sparse";
  API_CHECK_OUT(out, fn, "out");
  MXC_RETURN_ERROR_IF(ndim < 1 || ndim > MXC_MAX_NDIM, MXC_ERR_INVALID_ARGUMENT,
                      "%s: ndim is %d; expected 1..%d", fn, ndim, MXC_MAX_NDIM);
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(
      check_create(fn, shape, ndim, dtype, dev_type, dev_id, &s));
  mxc__device dev = {dev_type, dev_id};
  mxc__ndarray *a = NULL;
  int rc = mxc__ndarray_create_rsp_host(&s, dtype, index_dtype, dev, data,
                                        row_idx, nnz, &a);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  return api_wrap_array(a, out);
}

/* *out = the sparse array behind handle arr. */
static int sparse_arg(mxc_ndarray arr, const char *fn, mxc__ndarray **out) {
  char what[96];
  snprintf(what, sizeof what, "%s: arr", fn);
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(api_array(arr, what, &a));
  MXC_RETURN_ERROR_IF(a->stype == MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: arr is dense; expected a csr or row_sparse array",
                      fn);
  *out = a;
  return MXC_OK;
}

int mxc_ndarray_nnz(mxc_ndarray arr, int64_t *out) {
  API_GUARD();
  const char *fn = "mxc_ndarray_nnz";
  API_CHECK_OUT(out, fn, "out");
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(sparse_arg(arr, fn, &a));
  return mxc__sparse_nnz_sync(a, out);
}

/* which: -1 for the values (mxc_ndarray_sparse_data), else an aux index
 * (mxc_ndarray_aux, which never passes -1). */
static int part(mxc_ndarray arr, int which, const char *fn, mxc_ndarray *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(sparse_arg(arr, fn, &a));
  int n_aux = mxc__sparse_n_aux(a->stype);
  MXC_RETURN_ERROR_IF(which < -1 || which >= n_aux, MXC_ERR_INVALID_ARGUMENT,
                      "%s: which is %d; a %s array has aux arrays 0..%d", fn,
                      which, mxc__stype_name(a->stype), n_aux - 1);
  mxc__ndarray *d = NULL;
  MXC_FORWARD_IF_ERROR(mxc__sparse_part_sync(a, which, &d));
  return api_wrap_array(d, out);
}

int mxc_ndarray_sparse_data(mxc_ndarray arr, mxc_ndarray *out) {
  API_GUARD();
  return part(arr, -1, "mxc_ndarray_sparse_data", out);
}

int mxc_ndarray_aux(mxc_ndarray arr, int which, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_aux", "out");
  /* -1 is part()'s code for the values. */
  MXC_RETURN_ERROR_IF(which < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_ndarray_aux: which is %d; expected "
                      "MXC_CSR_INDPTR, MXC_CSR_INDICES or "
                      "MXC_ROW_SPARSE_INDICES",
                      which);
  return part(arr, which, "mxc_ndarray_aux", out);
}

int mxc_ndarray_check_format(mxc_ndarray arr, int full) {
  API_GUARD();
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_check_format: arr", &a));
  if (a->stype == MXC_STYPE_DEFAULT) return MXC_OK;
  int rc = mxc__sparse_check_sync(a, full != 0);
  if (rc != MXC_OK) mxc__error_prefix("mxc_ndarray_check_format");
  return rc;
}

int mxc_ndarray_cast_storage(mxc_ndarray arr, int stype, mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_ndarray_cast_storage";
  API_CHECK_OUT(out, fn, "out");
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_cast_storage: arr", &a));
  MXC_RETURN_ERROR_IF(stype < MXC_STYPE_DEFAULT || stype > MXC_STYPE_CSR,
                      MXC_ERR_STYPE,
                      "%s: stype is %d; expected MXC_STYPE_DEFAULT, "
                      "MXC_STYPE_ROW_SPARSE or MXC_STYPE_CSR",
                      fn, stype);
  mxc__ndarray *res = NULL;
  int rc = mxc__op_cast_storage(a, stype, NULL, &res);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  return api_wrap_array(res, out);
}
