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
 * destroyed only after the call (see core/base/handle.h). */
static inline void api_guard_close_(int *unused) {
  (void)unused;
  mxc__handle_guard_leave();
}
#define API_GUARD()                                                  \
  __attribute__((cleanup(api_guard_close_), unused)) int api_guard_ = \
      (mxc__handle_guard_enter(), 0)

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

/* Gives a new internal array a public handle; frees it on failure. */
static inline int api_wrap_array(mxc__ndarray *a, mxc_ndarray *out) {
  uintptr_t h;
  int rc = mxc__handle_new(MXC__HANDLE_NDARRAY, a, &h);
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

/* Gives a new symbol a public handle; frees it on failure. */
static inline int api_wrap_symbol(mxc__symbol *s, mxc_symbol *out) {
  uintptr_t h;
  int rc = mxc__handle_new(MXC__HANDLE_SYMBOL, s, &h);
  if (rc != MXC_OK) {
    mxc__symbol_free(s);
    return rc;
  }
  *out = (mxc_symbol)h;
  return MXC_OK;
}

#endif /* MXC_C_API_SRC_API_INTERNAL_H_ */
