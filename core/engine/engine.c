/* Public entry points of the engine: argument checks, dispatch by kind,
 * creation and destruction, the process-wide default engine, and the
 * mxc__exec_* functions handed to running functions. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/callback.h"
#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/engine/config.h"
#include "core/engine/internal.h"
#include "core/profiler/profiler.h"

#define MAX_WORKERS 1024

/* ---- creation ---------------------------------------------------------- */

/* Initializes the engine's locks; on failure destroys those made and
 * returns 0. */
static int init_locks(mxc__engine *e) {
  pthread_mutexattr_t rec;
  if (pthread_mutexattr_init(&rec) != 0) return 0;
  int ok = 0;
  if (pthread_mutexattr_settype(&rec, PTHREAD_MUTEX_RECURSIVE) != 0) {
    goto out;
  }
  if (pthread_mutexattr_init(&e->var_mu_attr) != 0) goto out;
#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
  /* Variable locks are held for a few instructions: spin a little before
   * sleeping when contended. */
  pthread_mutexattr_settype(&e->var_mu_attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
  if (pthread_mutex_init(&e->naive_mu, &rec) != 0) goto no_naive;
  if (pthread_mutex_init(&e->err_mu, NULL) != 0) goto no_err;
  if (pthread_mutex_init(&e->resize_mu, NULL) != 0) goto no_resize;
  if (pthread_mutex_init(&e->cache_mu, NULL) != 0) goto no_cache;
  if (pthread_mutex_init(&e->mu, NULL) != 0) goto no_mu;
  if (pthread_cond_init(&e->cv, NULL) != 0) goto no_cv;
  if (pthread_mutex_init(&e->gen_mu, NULL) != 0) goto no_gen;
  if (pthread_mutex_init(&e->wide_mu, NULL) != 0) goto no_wide;
  ok = 1;
  goto out;
no_wide:
  pthread_mutex_destroy(&e->gen_mu);
no_gen:
  pthread_cond_destroy(&e->cv);
no_cv:
  pthread_mutex_destroy(&e->mu);
no_mu:
  pthread_mutex_destroy(&e->cache_mu);
no_cache:
  pthread_mutex_destroy(&e->resize_mu);
no_resize:
  pthread_mutex_destroy(&e->err_mu);
no_err:
  pthread_mutex_destroy(&e->naive_mu);
no_naive:
  pthread_mutexattr_destroy(&e->var_mu_attr);
out:
  pthread_mutexattr_destroy(&rec);
  return ok;
}

static void fini_locks(mxc__engine *e) {
  pthread_mutex_destroy(&e->wide_mu);
  pthread_mutex_destroy(&e->gen_mu);
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
  pthread_mutex_destroy(&e->cache_mu);
  pthread_mutex_destroy(&e->resize_mu);
  pthread_mutex_destroy(&e->err_mu);
  pthread_mutex_destroy(&e->naive_mu);
  pthread_mutexattr_destroy(&e->var_mu_attr);
}

int mxc__engine_create(int kind, int num_workers, mxc__engine **out) {
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_create: out is NULL");
  MXC_RETURN_ERROR_IF(
      kind != MXC__ENGINE_NAIVE && kind != MXC__ENGINE_THREADED,
      MXC_ERR_INVALID_ARGUMENT,
      "engine_create: kind %d is neither naive (%d) nor threaded (%d)", kind,
      MXC__ENGINE_NAIVE, MXC__ENGINE_THREADED);
  MXC_RETURN_ERROR_IF(kind == MXC__ENGINE_THREADED &&
                          (num_workers < 1 || num_workers > MAX_WORKERS),
                      MXC_ERR_INVALID_ARGUMENT,
                      "engine_create: num_workers %d is outside 1..%d",
                      num_workers, MAX_WORKERS);
  mxc__engine *e = mxc__aligned_alloc(64, sizeof *e);
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_OOM, "engine_create: out of memory");
  memset(e, 0, sizeof *e);
  e->kind = kind;
  atomic_init(&e->num_workers, num_workers < 1 ? 1 : num_workers);
  atomic_init(&e->epoch, 0);
  atomic_init(&e->n_waiters, 0);
  atomic_init(&e->gen, 0);
  atomic_init(&e->returned, NULL);
  atomic_init(&e->n_returned, 0);
  for (int i = 0; i < 2; i++) {
    atomic_init(&e->pushed[i], 0);
    atomic_init(&e->finished[i], 0);
  }
  if (!init_locks(e)) {
    mxc__free(e);
    return mxc__error_set(MXC_ERR_OOM,
                          "engine_create: out of memory creating locks");
  }
  if (kind == MXC__ENGINE_THREADED) {
    int rc = mxc__thr_init(e, num_workers);
    if (rc != MXC_OK) {
      mxc__op_cache_clear(e);
      fini_locks(e);
      mxc__free(e);
      return rc;
    }
  }
  *out = e;
  return MXC_OK;
}

void mxc__engine_destroy(mxc__engine *e) {
  if (e == NULL) return;
  if (e->kind == MXC__ENGINE_THREADED) {
    mxc__thr_fini(e);
  } else {
    mxc__naive_fini(e);
  }
  mxc__failure_unref(e->first_err);
  fini_locks(e);
  mxc__free(e);
}

/* ---- the default engine ------------------------------------------------ */

static pthread_mutex_t g_default_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(mxc__engine *) g_default;

void mxc__engine_env_config(int *kind, int *workers) {
  const char *s = getenv("MXC_ENGINE");
  /* Unknown values fall back to the default silently: no printing. */
  *kind = (s != NULL && strcmp(s, "naive") == 0) ? MXC__ENGINE_NAIVE
                                                 : MXC__ENGINE_THREADED;
  long n = 0;
  s = getenv("MXC_NUM_THREADS");
  if (s != NULL && *s != '\0') {
    char *end = NULL;
    n = strtol(s, &end, 10);
    if (*end != '\0') n = 0;
  }
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > MAX_WORKERS) n = MAX_WORKERS;
  *workers = (int)n;
}

int mxc__engine_default(mxc__engine **out) {
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_default: out is NULL");
  mxc__engine *e = atomic_load_explicit(&g_default, memory_order_acquire);
  if (e == NULL) {
    /* A mutex rather than pthread_once: a failed creation (OOM) is
     * reported and the next call tries again. */
    pthread_mutex_lock(&g_default_mu);
    e = atomic_load_explicit(&g_default, memory_order_relaxed);
    if (e == NULL) {
      int kind, workers;
      mxc__engine_env_config(&kind, &workers);
      int rc = mxc__engine_create(kind, workers, &e);
      if (rc != MXC_OK) {
        pthread_mutex_unlock(&g_default_mu);
        return rc;
      }
      atomic_store_explicit(&g_default, e, memory_order_release);
    }
    pthread_mutex_unlock(&g_default_mu);
  }
  *out = e;
  return MXC_OK;
}

/* ---- settings and counters --------------------------------------------- */

int mxc__engine_kind(const mxc__engine *e) { return e ? e->kind : -1; }

int mxc__engine_num_workers(const mxc__engine *e) {
  return e ? atomic_load(&((mxc__engine *)e)->num_workers) : 0;
}

int mxc__engine_set_num_workers(mxc__engine *e, int n) {
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_set_num_workers: engine is NULL");
  MXC_RETURN_ERROR_IF(n < 1 || n > MAX_WORKERS, MXC_ERR_INVALID_ARGUMENT,
                      "engine_set_num_workers: %d is outside 1..%d", n,
                      MAX_WORKERS);
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait("set_num_workers"));
  if (e->kind == MXC__ENGINE_NAIVE) { /* no workers: only remembered */
    atomic_store(&e->num_workers, n);
    return MXC_OK;
  }
  return mxc__thr_set_num_workers(e, n);
}

int64_t mxc__engine_pending(const mxc__engine *e) {
  if (e == NULL) return 0;
  mxc__engine *m = (mxc__engine *)e;
  long long n = 0;
  for (int i = 0; i < 2; i++) {
    long long f = atomic_load(&m->finished[i]);
    n += atomic_load(&m->pushed[i]) - f;
  }
  return n > 0 ? (int64_t)n : 0;
}

/* ---- variables --------------------------------------------------------- */

int mxc__engine_new_var(mxc__engine *e, mxc__var **out) {
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_new_var: engine is NULL");
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_new_var: out is NULL");
  return mxc__var_new(e, out);
}

void mxc__engine_delete_var(mxc__engine *e, mxc__var *v,
                            void (*on_deleted)(void *), void *arg) {
  if (e == NULL || v == NULL) return; /* never fails */
  v->on_deleted = on_deleted;
  v->del_arg = arg;
  if (e->kind == MXC__ENGINE_THREADED) {
    mxc__thr_delete_var(e, v);
  } else {
    mxc__naive_delete_var(e, v);
  }
}

/* ---- push and wait ----------------------------------------------------- */

static int check_vars(mxc__var *const *vars, int n, const char *what) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: n_%s is negative (%d)", what, n);
  MXC_RETURN_ERROR_IF(n > 0 && vars == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: %s is NULL but n_%s is %d", what, what, n);
  for (int i = 0; i < n; i++) {
    MXC_RETURN_ERROR_IF(vars[i] == NULL, MXC_ERR_INVALID_ARGUMENT,
                        "engine_push: %s[%d] is NULL", what, i);
  }
  return MXC_OK;
}

static int check_push(const mxc__engine *e, const mxc__push_args *a) {
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: engine is NULL");
  MXC_RETURN_ERROR_IF(a == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: args is NULL");
  MXC_RETURN_ERROR_IF(
      (a->sync_fn == NULL) == (a->async_fn == NULL), MXC_ERR_INVALID_ARGUMENT,
      "engine_push: exactly one of sync_fn and async_fn must be set (%s)",
      a->sync_fn ? "both are" : "neither is");
  MXC_FORWARD_IF_ERROR(check_vars(a->reads, a->n_reads, "reads"));
  MXC_FORWARD_IF_ERROR(check_vars(a->writes, a->n_writes, "writes"));
  MXC_RETURN_ERROR_IF(a->n_reads > INT_MAX - a->n_writes,
                      MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: too many variables (%d reads, %d writes)",
                      a->n_reads, a->n_writes);
  MXC_RETURN_ERROR_IF(
      (a->dev.type != MXC_DEVICE_CPU && a->dev.type != MXC_DEVICE_GPU) ||
          a->dev.id < 0,
      MXC_ERR_INVALID_ARGUMENT,
      "engine_push: bad device (type %d, id %d) for operator '%s'; "
      "expected MXC_DEVICE_CPU (%d) or MXC_DEVICE_GPU (%d) with id >= 0",
      a->dev.type, a->dev.id, a->name ? a->name : "(unnamed)", MXC_DEVICE_CPU,
      MXC_DEVICE_GPU);
  return MXC_OK;
}

int mxc__engine_push(mxc__engine *e, const mxc__push_args *a) {
  MXC_FORWARD_IF_ERROR(check_push(e, a));
  for (int i = 0; i < a->n_writes; ++i) mxc__var_bump(a->writes[i]);
  if (e->kind == MXC__ENGINE_THREADED) return mxc__thr_push(e, a);
  return mxc__naive_push(e, a);
}

static _Thread_local int tls_engine_cb;

void mxc__engine_cb_enter(void) { tls_engine_cb++; }
void mxc__engine_cb_leave(void) { tls_engine_cb--; }

int mxc__engine_check_may_wait(const char *fn) {
  MXC_FORWARD_IF_ERROR(mxc__cb_refuse(
      MXC__CB_LOG, NULL, fn,
      "waiting for engine work there could wait for the callback itself"));
  MXC_RETURN_ERROR_IF(
      tls_engine_cb > 0 || mxc__thr_in_fn() ||
          mxc__pool_current_worker() != NULL,
      MXC_ERR_REENTRANT,
      "%s: called from inside a function run by the engine (a pushed "
      "function, its on_free or a deletion callback): waiting for engine "
      "work there could wait for itself; wait in the thread that pushed",
      fn);
  return MXC_OK;
}

static int wait_var_now(mxc__engine *e, mxc__var *v, int for_write) {
  if (e->kind == MXC__ENGINE_THREADED) {
    return mxc__thr_wait_var(e, v, for_write);
  }
  return mxc__naive_wait_var(e, v);
}

static int wait_all_now(mxc__engine *e) {
  if (e->kind == MXC__ENGINE_THREADED) return mxc__thr_wait_all(e);
  return mxc__naive_wait_all(e);
}

/* The waits as spans of the waiting thread's track: where a program
 * blocks on the engine, and for how long. */
static int wait_var_profiled(mxc__engine *e, mxc__var *v, int for_write) {
  int64_t t0 = mxc__prof_now();
  int rc = wait_var_now(e, v, for_write);
  mxc__prof_span(MXC__PROF_WAIT, for_write ? "wait_for_write" : "wait_for_read",
                 t0, NULL, NULL);
  return rc;
}

static int wait_all_profiled(mxc__engine *e) {
  int64_t t0 = mxc__prof_now();
  int rc = wait_all_now(e);
  mxc__prof_span(MXC__PROF_WAIT, "wait_all", t0, NULL, NULL);
  return rc;
}

int mxc__engine_wait_var(mxc__engine *e, mxc__var *v, int for_write) {
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_wait_var: engine is NULL");
  MXC_RETURN_ERROR_IF(v == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_wait_var: variable is NULL");
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait("waiting for an array"));
  int all = for_write != 0;
  int rc = mxc__prof_on(MXC__PROF_WAIT) ? wait_var_profiled(e, v, all)
                                        : wait_var_now(e, v, all);
  /* The caller writes next, outside the engine: a new version. */
  if (for_write == 1) mxc__var_bump(v);
  return rc;
}

int mxc__engine_wait_all(mxc__engine *e) {
  MXC_RETURN_ERROR_IF(e == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "engine_wait_all: engine is NULL");
  MXC_FORWARD_IF_ERROR(mxc__engine_check_may_wait("wait_all"));
  int rc = mxc__prof_on(MXC__PROF_WAIT) ? wait_all_profiled(e)
                                        : wait_all_now(e);
  /* Objects whose handles were freed while another thread's call was
   * running (pushed functions' records, too) go now, so that an idle
   * library's memory is back at its baseline. */
  mxc__handle_reclaim();
  return rc;
}

/* ---- inside running functions ------------------------------------------ */

void mxc__exec_set_error(mxc__exec *ex, const char *msg) {
  if (ex == NULL) return;
  /* The code is filled in when the function returns it. */
  mxc__failure *f =
      mxc__failure_new(ex->name, MXC_ERR_OPERATOR, msg ? msg : "(no message)");
  if (atomic_load(&f->refs) < 0) {
    f = NULL; /* OOM: the default message, made later, keeps the name */
  }
  mxc__failure_unref(ex->err);
  ex->err = f;
}

void mxc__exec_complete(mxc__exec *ex, int code, const char *msg) {
  if (ex == NULL) return;
  ex->code = code;
  if (code != MXC_OK && msg != NULL) mxc__exec_set_error(ex, msg);
  if (ex->engine->kind == MXC__ENGINE_THREADED) {
    mxc__thr_complete(ex);
  } else {
    mxc__naive_complete(ex);
  }
}

const char *mxc__exec_name(const mxc__exec *ex) { return ex ? ex->name : ""; }
