/* User functions pushed to the engine over arrays (the "push op" for user
 * code behind mxc_engine_push and mxc_engine_push_async).
 *
 * A pushed function reads and writes dense arrays through data pointers
 * taken at push time; it runs with a context (mxc_opctx), a handle on its
 * mxc__user_fn record, valid only while the function runs (an async one:
 * until it completes).
 *
 * Ownership: the record is the engine's from a successful push and is
 * freed after the function ran, calling on_free(user_data) then; a failed
 * push frees it without calling on_free. The arrays are not retained: the
 * caller may free them right after pushing. Thread-safety: push from any
 * thread; the accessors below are for the running function's thread (an
 * async function may complete from another thread, once). */
#ifndef MXC_CORE_NDARRAY_USER_FN_H_
#define MXC_CORE_NDARRAY_USER_FN_H_

#include <stddef.h>

#include "core/ndarray/ndarray.h"
#include "mxc/mxc.h"

typedef struct mxc__user_fn mxc__user_fn;

typedef struct mxc__user_fn_args {
  mxc_engine_fn fn; /* exactly one of fn and async_fn is set */
  mxc_engine_async_fn async_fn;
  void *user_data;
  mxc_free_fn on_free; /* may be NULL */
  mxc__ndarray *const *reads;
  int n_reads;
  mxc__ndarray *const *writes;
  int n_writes;
  int priority;
  const char *name; /* copied; NULL: "user_fn" */
} mxc__user_fn_args;

/* Pushes the function; the arrays are indexed reads first, then writes.
 * Fails for sparse arrays (naming "reads[i]" or "writes[i]"). fn names
 * the caller in the out-of-memory message. */
int mxc__user_fn_push(const mxc__user_fn_args *p, const char *fn);

/* *out = the record of a context; fails (MXC_ERR_INVALID_HANDLE, or
 * MXC_ERR_INVALID_ARGUMENT for NULL) unless ctx is the context of a
 * running function. */
int mxc__user_fn_of(mxc_opctx ctx, mxc__user_fn **out);

/* The data pointer and size in bytes (out_nbytes may be NULL) of array
 * index. */
int mxc__user_fn_data(const mxc__user_fn *op, int index, void **out_data,
                      size_t *out_nbytes);

/* The message a synchronous function's failure reports (copied). */
int mxc__user_fn_set_error(mxc__user_fn *op, const char *message);

/* Completes the async function of ctx with code (and message on
 * failure); the context is dead afterwards, and a second completion fails
 * as for any dead context. */
int mxc__user_fn_complete(mxc_opctx ctx, int code, const char *message);

#endif /* MXC_CORE_NDARRAY_USER_FN_H_ */
