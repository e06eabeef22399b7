/* Pushing user functions over arrays to the engine (see user_fn.h).
 *
 * A user function receives an mxc_opctx: a handle (kind
 * MXC__HANDLE_OPCTX) on its mxc__user_fn record below, made when the
 * function starts and released when it returns (synchronous) or when it
 * completes (asynchronous). A context kept past that, completed twice or
 * of another kind is then reported by the handle table instead of
 * reaching freed memory; completing releases the handle first, so of two
 * racing completions exactly one wins. The record holds data pointers
 * computed at push time (storage is allocated then and never moves while
 * the array lives; deletion of an array is ordered after this function),
 * so the caller may drop its arrays right after pushing. */
#include "core/ndarray/user_fn.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/engine/engine.h"

struct mxc__user_fn {
  mxc_engine_fn fn;
  mxc_engine_async_fn async_fn;
  void *user_data;
  mxc_free_fn on_free;
  mxc__exec *ex;
  int n;       /* reads + writes */
  void **data; /* n data pointers */
  size_t *nbytes;
  char *msg;   /* set by mxc__user_fn_set_error */
  mxc__retire_node retire; /* see free_op */
  char name[]; /* copied */
};

/* A new context handle for op, run by ex. */
static int open_ctx(mxc__user_fn *op, mxc__exec *ex, uintptr_t *out) {
  op->ex = ex;
  int rc = mxc__handle_new(MXC__HANDLE_OPCTX, op, out);
  if (rc != MXC_OK) {
    mxc__error_prefix("no context for the user function");
    mxc__exec_set_error(ex, mxc__error_msg());
  }
  return rc;
}

static int run_sync(void *arg, mxc__exec *ex) {
  mxc__user_fn *op = arg;
  uintptr_t h;
  MXC_FORWARD_IF_ERROR(open_ctx(op, ex, &h));
  int rc = op->fn(op->user_data, (mxc_opctx)h);
  void *same;
  /* Only this thread releases a synchronous context: cannot fail. */
  (void)mxc__handle_release(h, MXC__HANDLE_OPCTX, "ctx", &same);
  if (rc != MXC_OK) {
    mxc__exec_set_error(ex, op->msg ? op->msg : "the user function failed");
  }
  return rc;
}

static void run_async(void *arg, mxc__exec *ex) {
  mxc__user_fn *op = arg;
  uintptr_t h;
  int rc = open_ctx(op, ex, &h);
  if (rc != MXC_OK) {
    mxc__exec_complete(ex, rc, NULL);
    return;
  }
  op->async_fn(op->user_data, (mxc_opctx)h);
}

static void free_record(void *arg) {
  mxc__user_fn *op = arg;
  mxc__free(op->msg);
  mxc__free(op->data);
  mxc__free(op);
}

static void free_op(void *arg) {
  mxc__user_fn *op = arg;
  if (op->on_free) op->on_free(op->user_data);
  /* Its context is dead, but a call that looked it up just before may
   * still read the record. */
  mxc__handle_retire(&op->retire, op, free_record);
}

/* Records the vars and data pointers of arrays[0..n) at slots base.. */
static int collect(mxc__user_fn *op, mxc__ndarray *const *arrays, int n,
                   int base, mxc__var **vars, const char *what) {
  for (int i = 0; i < n; ++i) {
    mxc__ndarray *a = arrays[i];
    int rc = MXC_OK;
    if (a->stype != MXC_STYPE_DEFAULT) {
      /* A sparse array's blocks change under the engine: no stable data
       * pointer to hand out. */
      rc = mxc__error_set(MXC_ERR_STYPE,
                          "the array is sparse; pushed functions take dense "
                          "arrays");
    } else if (a->chunk->dev.type == MXC_DEVICE_GPU) {
      /* The function runs on the host: device memory is not its to read. */
      rc = mxc__error_set(MXC_ERR_UNSUPPORTED,
                          "the array is on gpu(%d); pushed functions run on "
                          "the host and take CPU arrays (copy it first)",
                          a->chunk->dev.id);
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

/* A new record with room for n arrays; the vars array lives in the same
 * block as the data pointers and sizes. */
static int new_op(const mxc__user_fn_args *p, const char *fn, int n,
                  mxc__user_fn **out, mxc__var ***out_vars) {
  const char *name = p->name ? p->name : "user_fn";
  size_t name_len = strlen(name);
  mxc__user_fn *op = mxc__calloc(1, sizeof *op + name_len + 1);
  void *block = mxc__malloc((size_t)(n ? n : 1) *
                            (sizeof(void *) + sizeof(size_t) +
                             sizeof(mxc__var *)));
  if (!op || !block) {
    mxc__free(op);
    mxc__free(block);
    return mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  }
  op->fn = p->fn;
  op->async_fn = p->async_fn;
  op->user_data = p->user_data;
  op->on_free = p->on_free;
  op->n = n;
  op->data = block;
  op->nbytes = (size_t *)(op->data + (n ? n : 1));
  *out_vars = (mxc__var **)(op->nbytes + (n ? n : 1));
  memcpy(op->name, name, name_len + 1);
  *out = op;
  return MXC_OK;
}

static int push_op(mxc__user_fn *op, mxc__var **vars, int n_reads,
                   int n_writes, int priority) {
  mxc__engine *e;
  MXC_FORWARD_IF_ERROR(mxc__engine_default(&e));
  mxc__push_args p;
  memset(&p, 0, sizeof p);
  p.sync_fn = op->fn ? run_sync : NULL;
  p.async_fn = op->fn ? NULL : run_async;
  p.arg = op;
  p.free_fn = free_op;
  p.reads = vars;
  p.n_reads = n_reads;
  p.writes = vars + n_reads;
  p.n_writes = n_writes;
  p.priority = priority;
  p.name = op->name;
  p.dev.type = MXC_DEVICE_CPU;
  return mxc__engine_push(e, &p);
}

int mxc__user_fn_push(const mxc__user_fn_args *p, const char *fn) {
  mxc__user_fn *op = NULL;
  mxc__var **vars = NULL;
  MXC_FORWARD_IF_ERROR(new_op(p, fn, p->n_reads + p->n_writes, &op, &vars));
  int rc = collect(op, p->reads, p->n_reads, 0, vars, "reads");
  if (rc == MXC_OK) {
    rc = collect(op, p->writes, p->n_writes, p->n_reads, vars, "writes");
  }
  if (rc == MXC_OK) {
    rc = push_op(op, vars, p->n_reads, p->n_writes, p->priority);
  }
  if (rc != MXC_OK) free_record(op); /* on_free is not called */
  return rc;
}

int mxc__user_fn_of(mxc_opctx ctx, mxc__user_fn **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(mxc__handle_get((uintptr_t)ctx, MXC__HANDLE_OPCTX,
                                       "ctx (valid only while its function "
                                       "runs, until it completes if async)",
                                       &p));
  *out = p;
  return MXC_OK;
}

int mxc__user_fn_data(const mxc__user_fn *op, int index, void **out_data,
                      size_t *out_nbytes) {
  MXC_RETURN_ERROR_IF(index < 0 || index >= op->n, MXC_ERR_INVALID_ARGUMENT,
                      "index %d is out of range; the function has %d arrays",
                      index, op->n);
  *out_data = op->data[index];
  if (out_nbytes) *out_nbytes = op->nbytes[index];
  return MXC_OK;
}

int mxc__user_fn_set_error(mxc__user_fn *op, const char *message) {
  char *copy = mxc__strdup(message);
  MXC_RETURN_ERROR_IF(!copy, MXC_ERR_OOM, "out of memory");
  mxc__free(op->msg);
  op->msg = copy;
  return MXC_OK;
}

int mxc__user_fn_complete(mxc_opctx ctx, int code, const char *message) {
  mxc__user_fn *op;
  MXC_FORWARD_IF_ERROR(mxc__user_fn_of(ctx, &op));
  MXC_RETURN_ERROR_IF(op->fn != NULL, MXC_ERR_INVALID_ARGUMENT,
                      "the function was pushed as synchronous; return its "
                      "status instead");
  /* Claims the completion: of racing calls, one releases the handle and
   * the others fail as for a dead context. op lives until the engine sees
   * the completion below. */
  void *same;
  MXC_FORWARD_IF_ERROR(mxc__handle_release(
      (uintptr_t)ctx, MXC__HANDLE_OPCTX,
      "ctx (already completed: complete an async function exactly once)",
      &same));
  mxc__exec_complete(op->ex, code,
                     code != MXC_OK && !message ? "the user function failed"
                                                : message);
  return MXC_OK;
}
