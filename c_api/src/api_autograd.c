/* Imperative autograd: recording flag, marking variables, backward,
 * gradient buffers and detaching (core/autograd does the work). */
#include <stdio.h>

#include "api_internal.h"
#include "core/autograd/autograd.h"
#include "core/base/alloc.h"

int mxc_autograd_set_recording(int recording, int *out_prev) {
  int prev = mxc__autograd_set_recording(recording);
  if (out_prev) *out_prev = prev;
  return MXC_OK;
}

int mxc_autograd_is_recording(int *out) {
  API_CHECK_OUT(out, "mxc_autograd_is_recording", "out");
  *out = mxc__autograd_is_recording();
  return MXC_OK;
}

/* Converts n handles (NULL allowed where allow_null) into list[0..n). */
static int arrays_of(const mxc_ndarray *h, int n, int allow_null,
                     const char *fn, const char *what, mxc__ndarray **list) {
  for (int i = 0; i < n; ++i) {
    list[i] = NULL;
    if (!h[i] && allow_null) continue;
    MXC_RETURN_ERROR_IF(!h[i], MXC_ERR_INVALID_ARGUMENT, "%s: %s[%d] is NULL",
                        fn, what, i);
    char name[128];
    snprintf(name, sizeof name, "%s: %s[%d]", fn, what, i);
    MXC_FORWARD_IF_ERROR(api_array(h[i], name, &list[i]));
  }
  return MXC_OK;
}

int mxc_autograd_mark_variables(int n, const mxc_ndarray *vars, const int *reqs,
                                const mxc_ndarray *grads) {
  API_GUARD();
  const char *fn = "mxc_autograd_mark_variables";
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && (!vars || !grads), MXC_ERR_INVALID_ARGUMENT,
                      "%s: vars or grads is NULL but n is %d", fn, n);
  if (n == 0) return MXC_OK;
  mxc__ndarray **v = mxc__calloc((size_t)n, sizeof *v);
  mxc__ndarray **g = mxc__calloc((size_t)n, sizeof *g);
  mxc__req *r = mxc__calloc((size_t)n, sizeof *r);
  int rc = (v && g && r) ? MXC_OK
                         : mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  if (rc == MXC_OK) rc = arrays_of(vars, n, 0, fn, "vars", v);
  if (rc == MXC_OK) rc = arrays_of(grads, n, 0, fn, "grads", g);
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    int q = reqs ? reqs[i] : MXC_REQ_WRITE;
    if (q != MXC_REQ_NULL && q != MXC_REQ_WRITE && q != MXC_REQ_ADD) {
      rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "%s: reqs[%d] is %d; expected MXC_REQ_NULL, "
                          "MXC_REQ_WRITE or MXC_REQ_ADD",
                          fn, i, q);
    }
    r[i] = (mxc__req)q;
  }
  if (rc == MXC_OK) {
    rc = mxc__autograd_mark(n, v, r, g);
    if (rc != MXC_OK) mxc__error_prefix(fn);
  }
  mxc__free(v);
  mxc__free(g);
  mxc__free(r);
  return rc;
}

int mxc_autograd_backward(int n, const mxc_ndarray *heads,
                          const mxc_ndarray *head_grads, int retain_graph) {
  API_GUARD();
  const char *fn = "mxc_autograd_backward";
  MXC_RETURN_ERROR_IF(n < 1, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected at least one head", fn, n);
  MXC_RETURN_ERROR_IF(!heads, MXC_ERR_INVALID_ARGUMENT, "%s: heads is NULL",
                      fn);
  mxc__ndarray **h = mxc__calloc((size_t)n, sizeof *h);
  mxc__ndarray **hg = mxc__calloc((size_t)n, sizeof *hg);
  int rc =
      (h && hg) ? MXC_OK : mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  if (rc == MXC_OK) rc = arrays_of(heads, n, 0, fn, "heads", h);
  if (rc == MXC_OK && head_grads) {
    rc = arrays_of(head_grads, n, 1, fn, "head_grads", hg);
  }
  if (rc == MXC_OK) {
    rc = mxc__autograd_backward(n, h, head_grads ? hg : NULL, retain_graph);
  }
  mxc__free(h);
  mxc__free(hg);
  return rc;
}

int mxc_autograd_get_grad(mxc_ndarray arr, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_autograd_get_grad", "out");
  mxc__ndarray *a = NULL, *g = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_autograd_get_grad: arr", &a));
  int rc = mxc__autograd_get_grad(a, &g);
  if (rc != MXC_OK) {
    mxc__error_prefix("mxc_autograd_get_grad");
    return rc;
  }
  return api_wrap_array(g, out);
}

int mxc_ndarray_detach(mxc_ndarray arr, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_detach", "out");
  mxc__ndarray *a = NULL, *d = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_ndarray_detach: arr", &a));
  MXC_FORWARD_IF_ERROR(mxc__autograd_detach(a, &d));
  return api_wrap_array(d, out);
}
