/* Pushing user functions to the engine (core/ndarray/user_fn.h): argument
 * checks, handles to arrays, and the function's context. */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/ndarray/user_fn.h"
#include "core/op/op.h"

/* Resolves n handles into arrays[0..n); errors name "<what>[i]". */
static int resolve(const mxc_ndarray *h, int n, const char *what,
                   mxc__ndarray **arrays) {
  MXC_RETURN_ERROR_IF(n > 0 && !h, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: %s is NULL but n_%s is %d", what,
                      what, n);
  for (int i = 0; i < n; ++i) {
    int rc = api_array(h[i], "mxc_engine_push: array", &arrays[i]);
    if (rc != MXC_OK) {
      char pre[64];
      snprintf(pre, sizeof pre, "%s[%d]", what, i);
      mxc__error_prefix(pre);
      return rc;
    }
  }
  return MXC_OK;
}

/* p's function fields are set; fills in the arrays and pushes. */
static int push_arrays(mxc__user_fn_args *p, const mxc_ndarray *reads,
                       int n_reads, const mxc_ndarray *writes, int n_writes) {
  MXC_RETURN_ERROR_IF(n_reads < 0 || n_writes < 0 ||
                          n_reads > MXC__OP_MAX_ARITY ||
                          n_writes > MXC__OP_MAX_ARITY,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: n_reads %d / n_writes %d out of "
                      "range; expected 0..%d",
                      n_reads, n_writes, MXC__OP_MAX_ARITY);
  int n = n_reads + n_writes;
  mxc__ndarray **a = mxc__malloc((size_t)(n ? n : 1) * sizeof *a);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_OOM, "mxc_engine_push: out of memory");
  int rc = resolve(reads, n_reads, "reads", a);
  if (rc == MXC_OK) rc = resolve(writes, n_writes, "writes", a + n_reads);
  if (rc == MXC_OK) {
    p->reads = a;
    p->n_reads = n_reads;
    p->writes = a + n_reads;
    p->n_writes = n_writes;
    rc = mxc__user_fn_push(p, "mxc_engine_push");
  }
  mxc__free(a);
  return rc;
}

int mxc_engine_push(mxc_engine_fn fn, void *user_data, mxc_free_fn on_free,
                    const mxc_ndarray *reads, int n_reads,
                    const mxc_ndarray *writes, int n_writes, int priority,
                    const char *name) {
  API_GUARD();
  MXC_RETURN_ERROR_IF(!fn, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: fn is NULL");
  mxc__user_fn_args p = {.fn = fn, .user_data = user_data,
                         .on_free = on_free, .priority = priority,
                         .name = name};
  return push_arrays(&p, reads, n_reads, writes, n_writes);
}

int mxc_engine_push_async(mxc_engine_async_fn fn, void *user_data,
                          mxc_free_fn on_free, const mxc_ndarray *reads,
                          int n_reads, const mxc_ndarray *writes,
                          int n_writes, int priority, const char *name) {
  API_GUARD();
  MXC_RETURN_ERROR_IF(!fn, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push_async: fn is NULL");
  mxc__user_fn_args p = {.async_fn = fn, .user_data = user_data,
                         .on_free = on_free, .priority = priority,
                         .name = name};
  return push_arrays(&p, reads, n_reads, writes, n_writes);
}

static int api_opctx(mxc_opctx ctx, const char *fn, mxc__user_fn **out) {
  MXC_RETURN_ERROR_IF(!ctx, MXC_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  int rc = mxc__user_fn_of(ctx, out);
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}

int mxc_opctx_data(mxc_opctx ctx, int index, void **out_data,
                   size_t *out_nbytes) {
  API_GUARD();
  API_CHECK_OUT(out_data, "mxc_opctx_data", "out_data");
  mxc__user_fn *op = NULL;
  MXC_FORWARD_IF_ERROR(api_opctx(ctx, "mxc_opctx_data", &op));
  int rc = mxc__user_fn_data(op, index, out_data, out_nbytes);
  if (rc != MXC_OK) mxc__error_prefix("mxc_opctx_data");
  return rc;
}

int mxc_opctx_set_error(mxc_opctx ctx, const char *message) {
  API_GUARD();
  mxc__user_fn *op = NULL;
  MXC_FORWARD_IF_ERROR(api_opctx(ctx, "mxc_opctx_set_error", &op));
  MXC_RETURN_ERROR_IF(!message, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_opctx_set_error: message is NULL");
  int rc = mxc__user_fn_set_error(op, message);
  if (rc != MXC_OK) mxc__error_prefix("mxc_opctx_set_error");
  return rc;
}

int mxc_opctx_complete(mxc_opctx ctx, int code, const char *message) {
  API_GUARD();
  MXC_RETURN_ERROR_IF(!ctx, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_opctx_complete: ctx is NULL");
  int rc = mxc__user_fn_complete(ctx, code, message);
  if (rc != MXC_OK) mxc__error_prefix("mxc_opctx_complete");
  return rc;
}
