/* DLPack export and import. */
#include "api_internal.h"
#include "core/ndarray/dlpack.h"

int mxc_ndarray_to_dlpack(mxc_ndarray arr, struct DLManagedTensor **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_to_dlpack", "out");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_to_dlpack: arr", &a));
  return mxc__ndarray_to_dlpack(a, out);
}

int mxc_ndarray_from_dlpack(struct DLManagedTensor *tensor, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_from_dlpack", "out");
  MXC_RETURN_ERROR_IF(!tensor, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_ndarray_from_dlpack: tensor is NULL");
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_from_dlpack(tensor, &a));
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_NDARRAY, a, api_dtor_array, (int64_t)mxc__ndarray_nbytes(a), &h);
  if (rc != MXC_OK) {
    /* The caller keeps the tensor on failure. */
    mxc__ndarray_dlpack_abandon(a);
    return rc;
  }
  *out = (mxc_ndarray)h;
  return MXC_OK;
}
