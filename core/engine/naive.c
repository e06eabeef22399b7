/* The naive engine: every function runs to completion inside push, in the
 * pushing thread, under one recursive lock (naive_mu).
 *
 * The lock serializes pushes from different threads, so push order is run
 * order, and lets a running function push again (it then runs at once,
 * nested). An asynchronous function is waited for, in the pushing thread,
 * before push returns; if its completion needs another thread that itself
 * pushes to this engine, that push waits for the lock: a deadlock, which
 * the threaded engine does not have. This kind is for debugging.
 *
 * A variable deleted while a function runs (from inside it, or its
 * free_fn) may be in use by that function or an enclosing one: its
 * deletion waits until the outermost push is done, on a list threaded
 * through the variables' reserved deletion records.
 *
 * Failures behave as in the threaded engine (same helpers). */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/engine/internal.h"
#include "core/profiler/profiler.h"

typedef struct naive_exec {
  mxc__exec ex; /* first member */
  int done;     /* async completion; under e->mu */
} naive_exec;

void mxc__naive_fini(mxc__engine *e) {
  /* Only calls in progress in other threads can be pending. */
  pthread_mutex_lock(&e->naive_mu);
  pthread_mutex_unlock(&e->naive_mu);
}

/* Checks reads and writes for poison; the first found wins. */
static void check_inputs(mxc__engine *e, const mxc__push_args *a,
                         mxc__exec *ex) {
  mxc__failure *err = NULL;
  uint64_t epoch = 0;
  for (int i = 0; i < a->n_reads; i++) {
    mxc__var_check_poison(e, a->reads[i], 0, &err, &epoch);
  }
  for (int i = 0; i < a->n_writes; i++) {
    mxc__var_check_poison(e, a->writes[i], 0, &err, &epoch);
  }
  if (err != NULL) {
    ex->err = err;
    ex->err_epoch = epoch;
    ex->skipped = 1;
    ex->code = err->code;
  }
}

static void run(mxc__engine *e, const mxc__push_args *a, naive_exec *nx) {
  if (a->sync_fn != NULL) {
    nx->ex.code = a->sync_fn(a->arg, &nx->ex);
    return;
  }
  a->async_fn(a->arg, &nx->ex);
  pthread_mutex_lock(&e->mu);
  while (!nx->done) pthread_cond_wait(&e->cv, &e->mu);
  pthread_mutex_unlock(&e->mu);
}

/* The function's run (to completion) as a span of the pushing thread. */
static void run_profiled(mxc__engine *e, const mxc__push_args *a,
                         naive_exec *nx) {
  int64_t t0 = mxc__prof_now();
  run(e, a, nx);
  mxc__prof_span(MXC__PROF_ENGINE, nx->ex.name, t0, NULL, NULL);
}

static void delete_now(mxc__var *v) {
  void (*cb)(void *) = v->on_deleted;
  void *arg = v->del_arg;
  mxc__var_free(v);
  if (cb != NULL) {
    mxc__engine_cb_enter();
    cb(arg);
    mxc__engine_cb_leave();
  }
}

/* With naive_mu held and depth 0. A callback may push or delete again;
 * that is fine: each deletion is taken off the list before it runs. */
static void run_deferred(mxc__engine *e) {
  while (e->naive_deferred != NULL) {
    mxc__dep *d = e->naive_deferred;
    e->naive_deferred = d->next;
    delete_now(d->owner);
  }
}

int mxc__naive_push(mxc__engine *e, const mxc__push_args *a) {
  pthread_mutex_lock(&e->naive_mu);
  e->naive_depth++;
  atomic_fetch_add(&e->pushed[0], 1); /* only for the pending count */
  naive_exec nx;
  memset(&nx, 0, sizeof nx);
  nx.ex.engine = e;
  nx.ex.name = a->name ? a->name : "(unnamed)";
  check_inputs(e, a, &nx.ex);
  mxc__engine_cb_enter(); /* the function and its free_fn */
  if (!nx.ex.skipped) {
    if (mxc__prof_on(MXC__PROF_ENGINE)) {
      run_profiled(e, a, &nx);
    } else {
      run(e, a, &nx);
    }
  }
  if (nx.ex.code != MXC_OK || nx.ex.skipped) {
    uint64_t epoch =
        nx.ex.skipped ? nx.ex.err_epoch : mxc__failure_commit(e, &nx.ex);
    for (int i = 0; i < a->n_writes; i++) {
      mxc__var_poison(a->writes[i], nx.ex.err, epoch);
    }
  } else {
    for (int i = 0; i < a->n_writes; i++) mxc__var_drop_stale(a->writes[i]);
  }
  mxc__failure_unref(nx.ex.err);
  if (a->free_fn != NULL) a->free_fn(a->arg);
  mxc__engine_cb_leave();
  atomic_fetch_add(&e->finished[0], 1);
  if (--e->naive_depth == 0) run_deferred(e);
  pthread_mutex_unlock(&e->naive_mu);
  return MXC_OK;
}

void mxc__naive_complete(mxc__exec *ex) {
  naive_exec *nx = (naive_exec *)ex;
  mxc__engine *e = ex->engine;
  /* After the unlock the pusher may return and nx go out of scope: touch
   * nothing of it afterwards. e->mu outlives every push. */
  pthread_mutex_lock(&e->mu);
  nx->done = 1;
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
}

int mxc__naive_wait_var(mxc__engine *e, mxc__var *v) {
  pthread_mutex_lock(&e->naive_mu);
  mxc__failure *f = mxc__var_take_poison(e, v, NULL);
  pthread_mutex_unlock(&e->naive_mu);
  if (f == NULL) return MXC_OK;
  int rc = mxc__failure_report(f);
  mxc__failure_unref(f);
  return rc;
}

int mxc__naive_wait_all(mxc__engine *e) {
  pthread_mutex_lock(&e->naive_mu);
  mxc__failure *f = mxc__engine_next_epoch(e);
  pthread_mutex_unlock(&e->naive_mu);
  if (f == NULL) return MXC_OK;
  int rc = mxc__failure_report(f);
  mxc__failure_unref(f);
  return rc;
}

void mxc__naive_delete_var(mxc__engine *e, mxc__var *v) {
  pthread_mutex_lock(&e->naive_mu);
  if (e->naive_depth > 0) {
    v->del.next = e->naive_deferred;
    e->naive_deferred = &v->del;
  } else {
    delete_now(v);
  }
  pthread_mutex_unlock(&e->naive_mu);
}
