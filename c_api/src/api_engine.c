/* Pushing user functions to the engine (the "push op" for user code).
 *
 * A user function receives an mxc_opctx: a pointer to its user_op record
 * below, valid while it runs. The record holds data pointers computed at
 * push time (storage is allocated then and never moves while the array
 * lives; deletion of an array is ordered after this function), so the user
 * may free the array handles right after pushing. */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/op/op.h"

#define USER_OP_MAGIC 0x6d78636f70637478ull /* "mxcopctx" */

typedef struct user_op {
  uint64_t magic;
  mxc_engine_fn fn;
  mxc_engine_async_fn async_fn;
  void *user_data;
  mxc_free_fn on_free;
  mxc__exec *ex;
  int n;       /* reads + writes */
  void **data; /* n data pointers */
  size_t *nbytes;
  char *msg;   /* set by mxc_opctx_set_error */
  char name[]; /* copied */
} user_op;

static int run_sync(void *arg, mxc__exec *ex) {
  user_op *op = arg;
  op->ex = ex;
  int rc = op->fn(op->user_data, (mxc_opctx)op);
  if (rc != MXC_OK) {
    mxc__exec_set_error(ex, op->msg ? op->msg : "the user function failed");
  }
  return rc;
}

static void run_async(void *arg, mxc__exec *ex) {
  user_op *op = arg;
  op->ex = ex;
  op->async_fn(op->user_data, (mxc_opctx)op);
}

static void free_op(void *arg) {
  user_op *op = arg;
  if (op->on_free) op->on_free(op->user_data);
  op->magic = 0;
  mxc__free(op->msg);
  mxc__free(op->data);
  mxc__free(op);
}

/* Resolves handles into vars and data pointers. */
static int collect(user_op *op, const mxc_ndarray *arrs, int n, int base,
                   mxc__var **vars, const char *what) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: n_%s is %d; expected >= 0", what, n);
  MXC_RETURN_ERROR_IF(n > 0 && !arrs, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: %s is NULL but n_%s is %d", what,
                      what, n);
  for (int i = 0; i < n; ++i) {
    mxc__ndarray *a;
    int rc = api_array(arrs[i], "mxc_engine_push: array", &a);
    if (rc == MXC_OK && a->stype != MXC_STYPE_DEFAULT) {
      /* A sparse array's blocks change under the engine: no stable data
       * pointer to hand out. */
      rc = mxc__error_set(MXC_ERR_STYPE,
                          "the array is sparse; pushed functions take dense "
                          "arrays");
    }
    if (rc == MXC_OK) rc = mxc__ndarray_ensure_alloc(a);
    if (rc != MXC_OK) {
      char pre[64];
      snprintf(pre, sizeof pre, "%s[%d]", what, i);
      mxc__error_prefix(pre);
      return rc;
    }
    vars[base + i] = mxc__ndarray_var(a);
    op->data[base + i] = mxc__ndarray_ptr(a);
    op->nbytes[base + i] = mxc__ndarray_nbytes(a);
  }
  return MXC_OK;
}

static int push_impl(mxc_engine_fn fn, mxc_engine_async_fn afn,
                     void *user_data, mxc_free_fn on_free,
                     const mxc_ndarray *reads, int n_reads,
                     const mxc_ndarray *writes, int n_writes, int priority,
                     const char *name) {
  MXC_RETURN_ERROR_IF(!fn && !afn, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: fn is NULL");
  MXC_RETURN_ERROR_IF(n_reads < 0 || n_writes < 0 ||
                          n_reads > MXC__OP_MAX_ARITY ||
                          n_writes > MXC__OP_MAX_ARITY,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: n_reads %d / n_writes %d out of "
                      "range; expected 0..%d",
                      n_reads, n_writes, MXC__OP_MAX_ARITY);
  if (!name) name = "user_fn";
  size_t name_len = strlen(name);
  int n = n_reads + n_writes;
  user_op *op = mxc__calloc(1, sizeof *op + name_len + 1);
  void *block = mxc__malloc((size_t)(n ? n : 1) *
                            (sizeof(void *) + sizeof(size_t) +
                             sizeof(mxc__var *)));
  if (!op || !block) {
    mxc__free(op);
    mxc__free(block);
    return mxc__error_set(MXC_ERR_OOM, "mxc_engine_push: out of memory");
  }
  op->magic = USER_OP_MAGIC;
  op->fn = fn;
  op->async_fn = afn;
  op->user_data = user_data;
  op->on_free = on_free;
  op->n = n;
  op->data = block;
  op->nbytes = (size_t *)(op->data + (n ? n : 1));
  mxc__var **vars = (mxc__var **)(op->nbytes + (n ? n : 1));
  memcpy(op->name, name, name_len + 1);
  int rc = collect(op, reads, n_reads, 0, vars, "reads");
  if (rc == MXC_OK) rc = collect(op, writes, n_writes, n_reads, vars, "writes");
  if (rc == MXC_OK) {
    mxc__engine *e;
    rc = mxc__engine_default(&e);
    mxc__push_args p;
    memset(&p, 0, sizeof p);
    p.sync_fn = fn ? run_sync : NULL;
    p.async_fn = fn ? NULL : run_async;
    p.arg = op;
    p.free_fn = free_op;
    p.reads = vars;
    p.n_reads = n_reads;
    p.writes = vars + n_reads;
    p.n_writes = n_writes;
    p.priority = priority;
    p.name = op->name;
    p.dev.type = MXC_DEVICE_CPU;
    if (rc == MXC_OK) rc = mxc__engine_push(e, &p);
  }
  if (rc != MXC_OK) {
    op->on_free = NULL; /* on failure to push, on_free is not called */
    free_op(op);
  }
  return rc;
}

int mxc_engine_push(mxc_engine_fn fn, void *user_data, mxc_free_fn on_free,
                    const mxc_ndarray *reads, int n_reads,
                    const mxc_ndarray *writes, int n_writes, int priority,
                    const char *name) {
  MXC_RETURN_ERROR_IF(!fn, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push: fn is NULL");
  return push_impl(fn, NULL, user_data, on_free, reads, n_reads, writes,
                   n_writes, priority, name);
}

int mxc_engine_push_async(mxc_engine_async_fn fn, void *user_data,
                          mxc_free_fn on_free, const mxc_ndarray *reads,
                          int n_reads, const mxc_ndarray *writes,
                          int n_writes, int priority, const char *name) {
  MXC_RETURN_ERROR_IF(!fn, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_engine_push_async: fn is NULL");
  return push_impl(NULL, fn, user_data, on_free, reads, n_reads, writes,
                   n_writes, priority, name);
}

static int api_opctx(mxc_opctx ctx, const char *fn, user_op **out) {
  user_op *op = (user_op *)ctx;
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  MXC_RETURN_ERROR_IF(op->magic != USER_OP_MAGIC || !op->ex,
                      MXC_ERR_INVALID_HANDLE,
                      "%s: ctx is not the context of a running function",
                      fn);
  *out = op;
  return MXC_OK;
}

int mxc_opctx_data(mxc_opctx ctx, int index, void **out_data,
                   size_t *out_nbytes) {
  API_CHECK_OUT(out_data, "mxc_opctx_data", "out_data");
  user_op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_opctx(ctx, "mxc_opctx_data", &op));
  MXC_RETURN_ERROR_IF(index < 0 || index >= op->n, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_opctx_data: index %d is out of range; the "
                      "function has %d arrays",
                      index, op->n);
  *out_data = op->data[index];
  if (out_nbytes) *out_nbytes = op->nbytes[index];
  return MXC_OK;
}

int mxc_opctx_set_error(mxc_opctx ctx, const char *message) {
  user_op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_opctx(ctx, "mxc_opctx_set_error", &op));
  MXC_RETURN_ERROR_IF(!message, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_opctx_set_error: message is NULL");
  char *copy = mxc__strdup(message);
  MXC_RETURN_ERROR_IF(!copy, MXC_ERR_OOM, "mxc_opctx_set_error: out of memory");
  mxc__free(op->msg);
  op->msg = copy;
  return MXC_OK;
}

int mxc_opctx_complete(mxc_opctx ctx, int code, const char *message) {
  user_op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_opctx(ctx, "mxc_opctx_complete", &op));
  MXC_RETURN_ERROR_IF(op->fn != NULL, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_opctx_complete: the function was pushed as "
                      "synchronous; return its status instead");
  mxc__exec *ex = op->ex;
  op->ex = NULL; /* a second complete is reported, not forwarded */
  mxc__exec_complete(ex, code,
                     code != MXC_OK && !message ? "the user function failed"
                                                : message);
  return MXC_OK;
}
