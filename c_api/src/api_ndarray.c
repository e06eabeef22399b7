/* NDArray creation, views, properties, copies and waits. */
#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/base/dtype.h"

int mxc_ndarray_create(const int64_t *shape, int ndim, int dtype,
                       int dev_type, int dev_id, int delay_alloc,
                       mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_ndarray_create";
  API_CHECK_OUT(out, fn, "out");
  MXC_FORWARD_IF_ERROR(mxc__dtype_check(dtype, "mxc_ndarray_create: dtype"));
  MXC_FORWARD_IF_ERROR(
      mxc__device_check(dev_type, dev_id, "mxc_ndarray_create: device"));
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(shape, ndim, mxc__dtype_size(dtype),
                                       "mxc_ndarray_create: shape", &s));
  mxc__device dev = {dev_type, dev_id};
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&s, dtype, dev, delay_alloc, &a));
  return api_wrap_array(a, out);
}

void mxc_ndarray_free(mxc_ndarray arr) {
  API_GUARD();
  if (!arr) return;
  (void)mxc__handle_free((uintptr_t)arr, MXC__HANDLE_NDARRAY,
                         "mxc_ndarray_free: arr", api_dtor_array);
}

int mxc_ndarray_shape(mxc_ndarray arr, int *out_ndim,
                      const int64_t **out_shape) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_shape: arr", &a));
  if (out_ndim) *out_ndim = a->shape.ndim;
  if (out_shape) *out_shape = a->shape.dims;
  return MXC_OK;
}

int mxc_ndarray_size(mxc_ndarray arr, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_size", "out");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_size: arr", &a));
  *out = mxc__ndarray_size(a);
  return MXC_OK;
}

int mxc_ndarray_dtype(mxc_ndarray arr, int *out_dtype) {
  API_GUARD();
  API_CHECK_OUT(out_dtype, "mxc_ndarray_dtype", "out_dtype");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_dtype: arr", &a));
  *out_dtype = a->dtype;
  return MXC_OK;
}

int mxc_ndarray_stype(mxc_ndarray arr, int *out_stype) {
  API_GUARD();
  API_CHECK_OUT(out_stype, "mxc_ndarray_stype", "out_stype");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_stype: arr", &a));
  *out_stype = a->stype;
  return MXC_OK;
}

int mxc_ndarray_device(mxc_ndarray arr, int *out_dev_type, int *out_dev_id) {
  API_GUARD();
  API_CHECK_OUT(out_dev_type, "mxc_ndarray_device", "out_dev_type");
  API_CHECK_OUT(out_dev_id, "mxc_ndarray_device", "out_dev_id");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_device: arr", &a));
  *out_dev_type = a->chunk->dev.type;
  *out_dev_id = a->chunk->dev.id;
  return MXC_OK;
}

int mxc_ndarray_copy_from_host(mxc_ndarray arr, const void *data,
                               size_t nbytes) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_copy_from_host: arr", &a));
  return mxc__ndarray_copy_from_host(a, data, nbytes);
}

int mxc_ndarray_copy_to_host(mxc_ndarray arr, void *data, size_t nbytes) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_copy_to_host: arr", &a));
  return mxc__ndarray_copy_to_host(a, data, nbytes);
}

int mxc_ndarray_copy(mxc_ndarray src, mxc_ndarray dst) {
  API_GUARD();
  mxc__ndarray *s = NULL, *d = NULL;
  MXC_FORWARD_IF_ERROR(api_array(src, "mxc_ndarray_copy: src", &s));
  MXC_FORWARD_IF_ERROR(api_array(dst, "mxc_ndarray_copy: dst", &d));
  return mxc__ndarray_copy(s, d);
}

int mxc_ndarray_slice(mxc_ndarray arr, int64_t begin, int64_t end,
                      mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_slice", "out");
  mxc__ndarray *a = NULL, *v = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_slice: arr", &a));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_slice(a, begin, end, &v));
  return api_wrap_array(v, out);
}

int mxc_ndarray_at(mxc_ndarray arr, int64_t index, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_at", "out");
  mxc__ndarray *a = NULL, *v = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_at: arr", &a));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_at(a, index, &v));
  return api_wrap_array(v, out);
}

int mxc_ndarray_reshape(mxc_ndarray arr, const int64_t *shape, int ndim,
                        mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_reshape", "out");
  mxc__ndarray *a = NULL, *v = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_reshape: arr", &a));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_reshape(a, shape, ndim, &v));
  return api_wrap_array(v, out);
}

int mxc_ndarray_wait_to_read(mxc_ndarray arr) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_wait_to_read: arr", &a));
  return mxc__ndarray_wait(a, 0);
}

int mxc_ndarray_wait_to_write(mxc_ndarray arr) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_wait_to_write: arr", &a));
  return mxc__ndarray_wait(a, 1);
}
