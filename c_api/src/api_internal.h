/* Helpers shared by the C API translation units: handle conversion and
 * argument checks. The C API validates, converts and forwards; no logic
 * lives only here. */
#ifndef MXC_C_API_SRC_API_INTERNAL_H_
#define MXC_C_API_SRC_API_INTERNAL_H_

#include <stdint.h>

#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/graph/symbol.h"
#include "core/ndarray/ndarray.h"
#include "mxc/mxc.h"

/* Out-parameter must not be NULL. */
#define API_CHECK_OUT(p, fn, name)                                   \
  MXC_RETURN_ERROR_IF((p) == NULL, MXC_ERR_INVALID_ARGUMENT,         \
                      "%s: out-parameter '%s' is NULL", (fn), (name))

/* Opens the handle guard for the rest of the enclosing function (closed
 * on every return): every public function taking a handle starts with it,
 * so that a handle freed by another thread meanwhile has its object
 * destroyed only after the call (see core/base/handle.h). Every function
 * returning a new handle starts with it too: the handle records the
 * function's name as where it was made (mxc_handle_dump). */
static inline void api_guard_close_(const char **outer_site) {
  mxc__handle_guard_leave_to(*outer_site);
}
#define API_GUARD()                                            \
  __attribute__((cleanup(api_guard_close_), unused)) const char \
      *api_guard_ = mxc__handle_guard_enter_at(__func__)

/* A device the caller named, checked (fn names the API call). */
static inline int api_device(int dev_type, int dev_id, const char *fn,
                             mxc__device *out) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev_type, dev_id, fn));
  out->type = dev_type;
  out->id = dev_id;
  return MXC_OK;
}

/* *out = the internal array of public handle h; `what` names the
 * argument, e.g. "mxc_ndarray_copy: src". */
static inline int api_array(mxc_ndarray h, const char *what,
                            mxc__ndarray **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_NDARRAY, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys an array once no call uses it. */
static inline void api_dtor_array(void *p) { mxc__ndarray_free(p); }

/* Gives a new internal array a public handle the caller owns (in the
 * thread's scope); frees the array on failure. */
static inline int api_wrap_array(mxc__ndarray *a, mxc_ndarray *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_NDARRAY, a, api_dtor_array,
                                 (int64_t)mxc__ndarray_nbytes(a), &h);
  if (rc != MXC_OK) {
    mxc__ndarray_free(a);
    return rc;
  }
  *out = (mxc_ndarray)h;
  return MXC_OK;
}

/* *out = the internal symbol of public handle h. */
static inline int api_symbol(mxc_symbol h, const char *what,
                             mxc__symbol **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_SYMBOL, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys a symbol once no call uses it. */
static inline void api_dtor_symbol(void *p) { mxc__symbol_free(p); }

/* Gives a new symbol a public handle the caller owns; frees it on
 * failure. */
static inline int api_wrap_symbol(mxc__symbol *s, mxc_symbol *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_SYMBOL, s, api_dtor_symbol, 0,
                                 &h);
  if (rc != MXC_OK) {
    mxc__symbol_free(s);
    return rc;
  }
  *out = (mxc_symbol)h;
  return MXC_OK;
}

#endif /* MXC_C_API_SRC_API_INTERNAL_H_ */
