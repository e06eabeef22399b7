/* The threaded engine.
 *
 * push: builds an op record with one dep per distinct variable, then
 * queues every dep while holding the variables' locks, taken in ascending
 * address order (so two concurrent pushes over the same variables queue in
 * the same relative order everywhere, and cannot deadlock); pushes of many
 * variables queue on one variable at a time, kept apart from the others
 * (see "Pushing many variables" in internal.h). The op's wait
 * counter starts at n_deps + 1; the extra 1 is dropped after queuing, so
 * the op cannot start before all its deps are in place.
 *
 * finish: poisons write vars on failure, calls free_fn, releases each dep
 * (granting successors), recycles the record, then counts the op finished.
 * A successor made ready by a worker's own op is run by that worker
 * directly (no queue trip) when the ready queue is empty.
 *
 * Waiting for all work: pushed[g] and finished[g] count the ops and
 * deletions of generation g (see struct mxc__engine); wait_all drains the
 * generations one after the other. Waiters sleep on e->cv and finishers
 * wake them when the counts meet. A thread that completes an async op
 * from outside the engine's workers bumps `finished` under e->mu, which it
 * releases as its last touch of the engine; waiters look at the counts
 * only under e->mu, so a destroy that follows cannot overtake it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/engine/internal.h"
#include "core/profiler/profiler.h"

/* A thread blocked in wait_var, queued like an op's dep. */
typedef struct waiter {
  mxc__dep dep;
  int granted; /* under e->mu */
} waiter;

static void wake_drain_waiters(mxc__engine *e) {
  pthread_mutex_lock(&e->mu);
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
}

/* Dependencies of GPU ops, process-wide (mxc__engine_gpu_edges): waits
 * enqueued on a stream for an early grant, and grants of a GPU op after
 * a host-side release. */
static atomic_llong g_stream_waits, g_host_grants;

void mxc__engine_gpu_edges(long long *stream_waits, long long *host_grants) {
  *stream_waits = atomic_load(&g_stream_waits);
  *host_grants = atomic_load(&g_host_grants);
}

/* The op whose function or free_fn this thread is running, if any. */
static _Thread_local mxc__op *tls_current;

/* Counts one op or deletion pushed; returns its generation. Work pushed
 * from inside a running op joins that op's generation, so that waiting
 * for some work also waits for the work it spawns. */
static int count_pushed(mxc__engine *e) {
  mxc__op *cur = tls_current;
  int g = (cur != NULL && cur->ex.engine == e)
              ? cur->gen
              : (int)(atomic_load_explicit(&e->gen, memory_order_relaxed) & 1u);
  atomic_fetch_add(&e->pushed[g], 1);
  return g;
}

/* Counts done[g] ops or deletions of each generation g finished.
 * `foreign`: the caller is neither one of this engine's workers nor inside
 * an engine call, so it must not touch the engine once the counts could
 * show it idle (see the top of the file). */
static void mark_finished(mxc__engine *e, const long long done[2],
                          int foreign) {
  if (foreign) pthread_mutex_lock(&e->mu);
  int wake = 0;
  for (int g = 0; g < 2; g++) {
    if (done[g] == 0) continue;
    long long f = atomic_fetch_add(&e->finished[g], done[g]) + done[g];
    /* Counted pushed before it can finish: the pending count is never
     * negative (pushed only grows, so reading it later is safe). */
    MXC__ASSERT_MSG(f <= atomic_load(&e->pushed[g]),
                    "more work finished than was pushed");
    /* seq_cst pairs with wait_drained: either it sees our increment or
     * we see its n_waiters. */
    wake = wake ||
           (atomic_load(&e->n_waiters) > 0 && f == atomic_load(&e->pushed[g]));
  }
  if (foreign) {
    if (wake) pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
  } else if (wake) {
    wake_drain_waiters(e);
  }
}

static int drained(mxc__engine *e, int g) {
  /* finished first: finished <= pushed always, so equality here means
   * there was a moment with nothing of generation g pending. */
  long long f = atomic_load(&e->finished[g]);
  return f == atomic_load(&e->pushed[g]);
}

/* Checks only under e->mu, never with a lock-free peek: a foreign
 * finisher counts under e->mu, and a waiter (perhaps about to destroy the
 * engine) must not see its count before it has let go of the engine. */
static void wait_drained(mxc__engine *e, int g) {
  pthread_mutex_lock(&e->mu);
  if (!drained(e, g)) {
    atomic_fetch_add(&e->n_waiters, 1);
    while (!drained(e, g)) pthread_cond_wait(&e->cv, &e->mu);
    atomic_fetch_sub(&e->n_waiters, 1);
  }
  pthread_mutex_unlock(&e->mu);
}

void mxc__thr_drain(mxc__engine *e) {
  pthread_mutex_lock(&e->gen_mu);
  unsigned cur = atomic_load(&e->gen) & 1u;
  /* The other generation only holds work pushed before the last flip
   * and what that work spawns: drain it first, so that it can be reused.
   * Then send new work there and drain the current one. Other threads
   * pushing meanwhile cannot starve either wait. */
  wait_drained(e, (int)(cur ^ 1u));
  atomic_fetch_add(&e->gen, 1);
  wait_drained(e, (int)cur);
  pthread_mutex_unlock(&e->gen_mu);
}

int mxc__thr_in_fn(void) { return tls_current != NULL; }

static void run_deletion(mxc__var *v) {
  void (*cb)(void *) = v->on_deleted;
  void *arg = v->del_arg;
  mxc__var_free(v);
  if (cb != NULL) {
    mxc__engine_cb_enter();
    cb(arg);
    mxc__engine_cb_leave();
  }
}

/* Submits a list of ready ops, one pool lock per run of same-pool ops. */
static void submit_ready(mxc__op *ready) {
  while (ready != NULL) {
    mxc__pool *p = ready->pool;
    mxc__op *last = ready;
    int n = 1;
    while (last->next != NULL && last->next->pool == p) {
      last = last->next;
      n++;
    }
    mxc__op *rest = last->next;
    last->next = NULL;
    mxc__pool_submit(p, ready, n);
    ready = rest;
  }
}

/* Acts on deps just granted: counts down their ops (collecting the ready
 * ones), runs deletions, wakes waiters. With inline_pool (the calling
 * worker's pool, or NULL), returns one ready op of that pool for the
 * caller to run itself; everything else is queued.
 * deleted[g] += deletions of generation g run (the caller counts them
 * finished). */
static mxc__op *process_grants(mxc__engine *e, mxc__dep *granted,
                               const mxc__pool *inline_pool,
                               long long deleted[2]) {
  mxc__op *ready = NULL;
  while (granted != NULL) {
    mxc__dep *d = granted;
    granted = d->next; /* read first: d may be freed or go out of scope */
    if (d->kind == MXC__DEP_OP) {
      mxc__op *op = d->owner;
      if (d->wait_ev == NULL && op->pool->dev.type == MXC_DEVICE_GPU) {
        atomic_fetch_add_explicit(&g_host_grants, 1, memory_order_relaxed);
      }
      int missing =
          atomic_fetch_sub_explicit(&op->wait, 1, memory_order_acq_rel);
      /* One grant per dep, and the pusher's extra 1 is dropped once. */
      MXC__ASSERT_MSG(missing >= 1, "op granted more deps than it has");
      if (missing == 1) {
        op->next = ready;
        ready = op;
      }
    } else if (d->kind == MXC__DEP_DELETE) {
      mxc__var *v = d->owner;
      deleted[v->del_gen]++; /* before v is freed */
      run_deletion(v);
    } else {
      waiter *wt = d->owner;
      pthread_mutex_lock(&e->mu);
      wt->granted = 1;
      pthread_cond_broadcast(&e->cv);
      pthread_mutex_unlock(&e->mu);
    }
  }
  /* Run a successor here only if it belongs to this worker's pool (a GPU
   * op needs its pool's stream; CPU work must not block a GPU worker) and
   * nothing waits in the queue: queued work may have a higher priority,
   * and a long chain run inline must not starve it. */
  mxc__op *mine = NULL;
  if (inline_pool != NULL && ready != NULL && ready->pool == inline_pool &&
      atomic_load_explicit(&ready->pool->n_queued, memory_order_relaxed) == 0) {
    mine = ready;
    ready = ready->next;
    mine->next = NULL;
  }
  submit_ready(ready);
  return mine;
}

/* The deps of op granted early are held now (promoted): a failure of
 * the operation they waited for counts like a poison seen before running
 * (op's stream ran behind it, but its outputs are poisoned with that
 * failure, which takes precedence over op's own). */
static void check_early(mxc__op *op) {
  mxc__failure *err = NULL;
  uint64_t epoch = 0;
  for (int i = 0; i < op->n_deps; i++) {
    mxc__dep *d = &op->deps[i];
    if (d->wait_ev == NULL) continue;
    d->wait_ev = NULL;
    if (!op->ex.skipped) {
      mxc__var_check_poison(op->ex.engine, d->var, d->ticket, &err, &epoch);
    }
  }
  if (err == NULL) return;
  mxc__failure_unref(op->ex.err);
  op->ex.err = err;
  op->ex.err_epoch = epoch;
  op->ex.skipped = 1;
  op->ex.code = err->code;
}

/* Drops the fin_hold part of each promoted dep's op; prepends the ops
 * that may now be finished to *later (linked by next: they ran and sit
 * in no queue). */
static void drop_promoted(mxc__dep *promoted, mxc__op **later) {
  while (promoted != NULL) {
    mxc__dep *d = promoted;
    promoted = d->early_next;
    mxc__op *op = d->owner;
    if (atomic_fetch_sub_explicit(&op->fin_hold, 1, memory_order_acq_rel) ==
        1) {
      op->next = *later;
      *later = op;
    }
  }
}

/* Ends op (ran, failed or skipped; every part of fin_hold dropped). w:
 * the engine's worker running this thread, or NULL. Ops whose early deps
 * this promoted and that may now end are prepended to *later. Returns a
 * successor to run inline (allow_inline only). */
static mxc__op *finish_one(mxc__op *op, mxc__worker *w, int allow_inline,
                           mxc__op **later) {
  mxc__engine *e = op->ex.engine;
  check_early(op);
  if (op->ex.code != MXC_OK || op->ex.skipped) {
    uint64_t epoch =
        op->ex.skipped ? op->ex.err_epoch : mxc__failure_commit(e, &op->ex);
    for (int i = 0; i < op->n_deps; i++) {
      if (op->deps[i].write) {
        mxc__var_poison(op->deps[i].var, op->ex.err, epoch);
      }
    }
  } else {
    for (int i = 0; i < op->n_deps; i++) {
      if (op->deps[i].write) mxc__var_drop_stale(op->deps[i].var);
    }
  }
  mxc__failure_unref(op->ex.err); /* success after set_error: dropped */
  op->ex.err = NULL;
  if (op->free_fn != NULL) {
    mxc__op *outer = tls_current;
    tls_current = op;
    op->free_fn(op->arg);
    tls_current = outer;
  }

  mxc__dep *granted = NULL, *promoted = NULL;
  for (int i = 0; i < op->n_deps; i++) {
    mxc__var_release(op->deps[i].var, &op->deps[i], &granted, &promoted);
  }
  long long done[2] = {0, 0};
  done[op->gen] = 1;
  drop_promoted(promoted, later);
  mxc__op_put(e, op);
  mxc__op *next = process_grants(
      e, granted, allow_inline && w != NULL ? w->pool : NULL, done);
  mark_finished(e, done, w == NULL);
  return next;
}

/* Ends the ops of a list built by finish_one, and those they let end in
 * turn: a loop, not a recursion, so a long chain of early grants does not
 * grow the stack. */
static void finish_later(mxc__op *later, mxc__worker *w) {
  while (later != NULL) {
    mxc__op *op = later;
    later = op->next;
    op->next = NULL;
    (void)finish_one(op, w, 0, &later);
  }
}

static mxc__op *finish(mxc__op *op, mxc__worker *w, int allow_inline) {
  mxc__op *later = NULL;
  mxc__op *next = finish_one(op, w, allow_inline, &later);
  finish_later(later, w);
  return next;
}

/* op's own part is over (its function, its GPU work): finishes it unless
 * a dep granted early still waits for its promotion, whose releaser will
 * finish it then. */
static mxc__op *finish_part(mxc__op *op, mxc__worker *w, int allow_inline) {
  if (atomic_fetch_sub_explicit(&op->fin_hold, 1, memory_order_acq_rel) != 1) {
    return NULL;
  }
  return finish(op, w, allow_inline);
}

/* GPU workers: MXC_GPU_WORKERS compute workers per GPU (1..16, default
 * 2: one enqueues while the other's work runs), plus one copy worker. */
#define GPU_WORKERS_DEFAULT 2
#define GPU_WORKERS_MAX 16

static int gpu_workers(int lane) {
  if (lane == MXC__LANE_COPY) return 1;
  const char *v = getenv("MXC_GPU_WORKERS");
  int n = v && *v ? atoi(v) : GPU_WORKERS_DEFAULT;
  return n < 1 ? 1 : n > GPU_WORKERS_MAX ? GPU_WORKERS_MAX : n;
}

/* Whether a new GPU pool's ops may be granted early behind an event
 * (var.c, "Stream waits"): the plug-in has the event functions and
 * MXC_GPU_STREAM_WAIT is not 0 (the host round trip per dependency, as
 * before, to compare the two on a GPU). */
static int stream_wait_wanted(void) {
  const char *v = getenv("MXC_GPU_STREAM_WAIT");
  if (v != NULL && strcmp(v, "0") == 0) return 0;
  return mxc__gpu_has_events();
}

/* The pool of gpu(dev.id)'s lane, created on first use: its workers and
 * their streams. Once set, the pointer never changes until the engine is
 * destroyed, so it is read without gpu_mu. */
static int gpu_pool(mxc__engine *e, mxc__device dev, int lane,
                    mxc__pool **out) {
  _Atomic(mxc__pool *) *slot = &e->gpu[dev.id][lane];
  *out = atomic_load_explicit(slot, memory_order_acquire);
  if (*out != NULL) return MXC_OK;
  pthread_mutex_lock(&e->gpu_mu);
  int rc = MXC_OK;
  *out = atomic_load_explicit(slot, memory_order_relaxed);
  if (*out == NULL) {
    rc = mxc__pool_create(e, dev, lane, gpu_workers(lane), out);
    if (rc == MXC_OK) (*out)->stream_wait = stream_wait_wanted();
    if (rc == MXC_OK) atomic_store_explicit(slot, *out, memory_order_release);
  }
  pthread_mutex_unlock(&e->gpu_mu);
  return rc;
}

/* The pool that runs a's function: the CPU's, or the compute or copy
 * lane of its GPU. */
static int pool_for(mxc__engine *e, const mxc__push_args *a, mxc__pool **out) {
  if (a->dev.type != MXC_DEVICE_GPU) {
    *out = e->cpu;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(a->dev.id >= MXC__MAX_GPUS, MXC_ERR_INVALID_ARGUMENT,
                      "engine_push: gpu(%d) for operator '%s' is beyond the "
                      "%d GPUs the engine serves",
                      a->dev.id, a->name ? a->name : "(unnamed)",
                      MXC__MAX_GPUS);
  int rc =
      gpu_pool(e, a->dev, a->copy ? MXC__LANE_COPY : MXC__LANE_COMPUTE, out);
  if (rc != MXC_OK) {
    char what[160];
    snprintf(what, sizeof what,
             "engine: cannot start the workers of gpu(%d) for operator '%s'",
             a->dev.id, a->name ? a->name : "(unnamed)");
    mxc__error_prefix(what);
  }
  return rc;
}

/* Calls op's function. An async op stays valid until this worker drops
 * its part of async_parts (in run_op), whenever it completes. */
static void call_fn(mxc__op *op) {
  if (op->sync_fn != NULL) {
    op->ex.code = op->sync_fn(op->arg, &op->ex);
    return;
  }
  atomic_store_explicit(&op->async_parts, 2, memory_order_relaxed);
  op->async_fn(op->arg, &op->ex);
}

/* rc: how op's GPU work ended (its reason as the thread's error). A
 * failure of that work (a faulting kernel, a failed copy) is the op's,
 * reported with its name like any failure, unless the function itself
 * failed first (its own message stays). */
static void gpu_result(mxc__op *op, int rc) {
  if (rc == MXC_OK) return;
  if (op->ex.code == MXC_OK) {
    op->ex.code = rc;
    mxc__exec_set_error(&op->ex, mxc__error_msg());
  }
  mxc__error_clear();
}

/* After a synchronous function on a GPU worker that could not hand it to
 * its completer (no events): waits for the worker's stream (that stream
 * only, never the whole device), so that the op counts as done only once
 * its GPU work is; a function that failed still has its earlier work
 * waited for (it may read memory freed once the op finishes). */
static void gpu_settle(mxc__op *op, const mxc__worker *w) {
  if (w == NULL || w->stream == NULL) return;
  gpu_result(op, mxc__gpu_stream_sync(w->stream));
}

void mxc__thr_gpu_done(mxc__op *op, int rc) {
  gpu_result(op, rc);
  /* Not one of the engine's workers: finishes like an async completion
   * (dependents are queued, never run here). */
  (void)finish_part(op, NULL, 0);
}

void mxc__thr_gpu_enqueued(mxc__op *op, void *ev) {
  /* A function that failed keeps its dependents for the host: they are
   * skipped there, never run behind it. */
  if (op->ex.code != MXC_OK || !op->pool->stream_wait) return;
  mxc__dep *granted = NULL;
  for (int i = 0; i < op->n_deps; i++) {
    if (!op->deps[i].write) continue;
    mxc__var_dev_release(op->deps[i].var, &op->deps[i], ev, op->pool->dev.id,
                         &granted);
  }
  long long none[2] = {0, 0}; /* early grants are never deletions */
  (void)process_grants(op->ex.engine, granted, NULL, none);
}

/* Before op's function on worker w: its stream waits for the events of
 * the deps granted early. Where the wait cannot be enqueued, the host
 * waits for the event instead (its failure is seen at finish, through
 * the poison of the operation it belongs to). */
static void wait_early(const mxc__op *op, const mxc__worker *w) {
  for (int i = 0; i < op->n_deps; i++) {
    void *ev = op->deps[i].wait_ev;
    if (ev == NULL) continue;
    if (w == NULL || w->stream == NULL ||
        mxc__gpu_stream_wait_event(w->stream, ev) != MXC_OK) {
      (void)mxc__gpu_event_sync(ev);
      mxc__error_clear();
      continue;
    }
    atomic_fetch_add_explicit(&g_stream_waits, 1, memory_order_relaxed);
  }
}

/* The function's run as a span of this worker's track (for an async
 * function: until it returns, not until it completes). */
static void call_fn_profiled(mxc__op *op) {
  int64_t t0 = mxc__prof_now();
  call_fn(op);
  mxc__prof_span(MXC__PROF_ENGINE, op->ex.name, t0, NULL, NULL);
}

/* Runs op (ready: every dep granted). allow_inline: the caller may run a
 * successor made ready by op (workers do; a pushing thread does not). */
static mxc__op *run_op(mxc__op *op, mxc__worker *w, int allow_inline) {
  mxc__engine *e = op->ex.engine;
  MXC__ASSERT_MSG(atomic_load_explicit(&op->wait, memory_order_relaxed) == 0,
                  "op runs before every dep is granted");
  mxc__failure *err = NULL;
  uint64_t epoch = 0;
  for (int i = 0; i < op->n_deps; i++) {
    /* A dep granted early is checked at finish, once promoted: its
     * writer may still fail, or drop a stale poison. */
    if (op->deps[i].wait_ev != NULL) continue;
    mxc__var_check_poison(e, op->deps[i].var, op->deps[i].ticket, &err, &epoch);
  }
  if (err != NULL) {
    op->ex.err = err;
    op->ex.err_epoch = epoch;
    op->ex.skipped = 1;
    op->ex.code = err->code;
    return finish_part(op, w, allow_inline);
  }
  wait_early(op, w);
  mxc__op *outer = tls_current;
  tls_current = op;
  if (mxc__prof_on(MXC__PROF_ENGINE)) {
    call_fn_profiled(op);
  } else {
    call_fn(op);
  }
  tls_current = outer;
  if (op->sync_fn != NULL) {
    /* On a GPU worker the op's work may still be running on the stream:
     * its completer finishes it once the event after it is reached, and
     * this worker goes on with its next op meanwhile. */
    if (w != NULL && w->flight != NULL && mxc__flight_add(w, op)) return NULL;
    gpu_settle(op, w);
    return finish_part(op, w, allow_inline);
  }
  if (atomic_fetch_sub_explicit(&op->async_parts, 1, memory_order_acq_rel) ==
      1) {
    /* completed already (maybe inside async_fn) */
    return finish_part(op, w, allow_inline);
  }
  return NULL; /* mxc__thr_complete will finish it */
}

mxc__op *mxc__thr_run(mxc__op *op, mxc__worker *w) {
  return run_op(op, w, 1);
}

void mxc__thr_complete(mxc__exec *ex) {
  mxc__op *op = (mxc__op *)ex;
  int parts = atomic_fetch_sub_explicit(&op->async_parts, 1,
                                        memory_order_acq_rel);
  /* Each op is completed once: mxc_opctx_complete reports a second call
   * as an error instead of forwarding it, so only an mxc bug gets here
   * twice. */
  MXC__ASSERT_MSG(parts >= 1, "async op completed twice");
  if (parts != 1) {
    return; /* async_fn is still running: its worker finishes the op */
  }
  mxc__worker *w = mxc__pool_current_worker();
  if (w != NULL && w->pool->engine != ex->engine) w = NULL;
  finish_part(op, w, 0);
}

/* A wide push: queues on its variables one at a time, marked until it
 * has queued on all of them, under wide_mu. */
static int queue_wide(mxc__engine *e, mxc__dep *deps, int n) {
  int granted = 0;
  pthread_mutex_lock(&e->wide_mu);
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&deps[i].var->mu);
    granted += mxc__var_append(deps[i].var, &deps[i]);
    deps[i].var->wide_mark = 1;
    pthread_mutex_unlock(&deps[i].var->mu);
  }
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&deps[i].var->mu);
    deps[i].var->wide_mark = 0;
    pthread_mutex_unlock(&deps[i].var->mu);
  }
  pthread_mutex_unlock(&e->wide_mu);
  return granted;
}

/* A narrow push: holds every variable's lock (ascending addresses) and
 * queues on all of them, unless a wide push is queuing on one of them:
 * then queues nothing and returns 0. */
static int try_queue_all(mxc__dep *deps, int n, int *granted) {
  int busy = 0;
  for (int i = 0; i < n; i++) {
    pthread_mutex_lock(&deps[i].var->mu);
    busy |= deps[i].var->wide_mark;
  }
  for (int i = 0; !busy && i < n; i++) {
    *granted += mxc__var_append(deps[i].var, &deps[i]);
  }
  for (int i = n - 1; i >= 0; i--) pthread_mutex_unlock(&deps[i].var->mu);
  return !busy;
}

/* Queues deps[0..n) (sorted by variable address) so that no other push
 * queues between two of them on the variables they share; returns how
 * many were granted at once. See "Pushing many variables" in
 * internal.h. */
static int queue_deps(mxc__engine *e, mxc__dep *deps, int n) {
  if (n > MXC__PUSH_LOCK_ALL_MAX) return queue_wide(e, deps, n);
  int granted = 0;
  if (MXC__LIKELY(try_queue_all(deps, n, &granted))) return granted;
  /* After the wide push, and before any other: under wide_mu no wide push
   * runs, and each clears its marks before letting go of it. */
  pthread_mutex_lock(&e->wide_mu);
  (void)try_queue_all(deps, n, &granted);
  pthread_mutex_unlock(&e->wide_mu);
  return granted;
}

int mxc__thr_push(mxc__engine *e, const mxc__push_args *a) {
  mxc__pool *pool = NULL;
  MXC_FORWARD_IF_ERROR(pool_for(e, a, &pool));
  mxc__op *op = mxc__op_get(e, a->n_reads + a->n_writes);
  MXC_RETURN_ERROR_IF(op == NULL, MXC_ERR_OOM,
                      "engine: out of memory pushing operator '%s'",
                      a->name ? a->name : "(unnamed)");
  memset(&op->ex, 0, sizeof op->ex);
  op->ex.engine = e;
  op->ex.name = a->name ? a->name : "(unnamed)";
  op->sync_fn = a->sync_fn;
  op->async_fn = a->async_fn;
  op->arg = a->arg;
  op->free_fn = a->free_fn;
  op->priority = a->priority;
  op->pool = pool;
  op->next = op->child = NULL;
  int n = mxc__deps_build(a, op->deps, op);
  op->n_deps = n;
  MXC__ASSERT(n >= 0 && n <= a->n_reads + a->n_writes);
  atomic_store_explicit(&op->wait, n + 1, memory_order_relaxed);
  atomic_store_explicit(&op->fin_hold, 1, memory_order_relaxed);
  op->gen = count_pushed(e);

  int granted = queue_deps(e, op->deps, n);
  if (atomic_fetch_sub_explicit(&op->wait, granted + 1, memory_order_acq_rel) ==
      granted + 1) {
    if (a->run_here && a->sync_fn != NULL && pool == e->cpu) {
      /* Ready now and the caller will wait for it: run it here. The op is
       * counted as pushed already, so wait_all sees it pending until
       * finish counts it done. (GPU work needs its worker's stream.) */
      (void)run_op(op, NULL, 0);
    } else {
      op->next = NULL;
      mxc__pool_submit(op->pool, op, 1);
    }
  }
  return MXC_OK;
}

int mxc__thr_wait_var(mxc__engine *e, mxc__var *v, int for_write) {
  waiter wt;
  memset(&wt, 0, sizeof wt);
  wt.dep.var = v;
  wt.dep.owner = &wt;
  wt.dep.write = (unsigned char)(for_write != 0);
  wt.dep.kind = MXC__DEP_WAIT;
  pthread_mutex_lock(&v->mu);
  int now = mxc__var_append(v, &wt.dep);
  pthread_mutex_unlock(&v->mu);
  if (!now) {
    pthread_mutex_lock(&e->mu);
    while (!wt.granted) pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
  }
  /* We now hold v like a reader (or writer): no writer can run, so the
   * poison seen here is that of the last write pushed before the wait. */
  mxc__failure *f = mxc__var_take_poison(e, v, &wt.dep);
  mxc__dep *granted = NULL, *promoted = NULL;
  mxc__var_release(v, &wt.dep, &granted, &promoted);
  long long deleted[2] = {0, 0};
  process_grants(e, granted, NULL, deleted);
  mark_finished(e, deleted, 0);
  /* A waiter is never device-released, so it promotes nothing; kept
   * general all the same. */
  mxc__op *later = NULL;
  drop_promoted(promoted, &later);
  finish_later(later, NULL);
  if (f == NULL) return MXC_OK;
  int rc = mxc__failure_report(f);
  mxc__failure_unref(f);
  return rc;
}

int mxc__thr_wait_all(mxc__engine *e) {
  mxc__thr_drain(e);
  /* Idle now (unless other threads push meanwhile): give the cached
   * records back, so an idle engine holds no memory that depends on past
   * load. */
  mxc__op_cache_clear(e);
  mxc__failure *f = mxc__engine_next_epoch(e);
  if (f == NULL) return MXC_OK;
  int rc = mxc__failure_report(f);
  mxc__failure_unref(f);
  return rc;
}

void mxc__thr_delete_var(mxc__engine *e, mxc__var *v) {
  v->del_gen = count_pushed(e);
  pthread_mutex_lock(&v->mu);
  int now = mxc__var_append(v, &v->del);
  pthread_mutex_unlock(&v->mu);
  if (now) {
    long long done[2] = {0, 0};
    done[v->del_gen] = 1;
    run_deletion(v);
    mark_finished(e, done, 0);
  }
}

int mxc__thr_set_num_workers(mxc__engine *e, int n) {
  pthread_mutex_lock(&e->resize_mu);
  mxc__thr_drain(e);
  int rc = mxc__pool_resize(e->cpu, n);
  if (rc == MXC_OK) atomic_store(&e->num_workers, n);
  pthread_mutex_unlock(&e->resize_mu);
  return rc;
}

int mxc__thr_init(mxc__engine *e, int num_workers) {
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  for (int d = 0; d < MXC__MAX_GPUS; d++) {
    for (int l = 0; l < MXC__LANES; l++) atomic_init(&e->gpu[d][l], NULL);
  }
  MXC_RETURN_ERROR_IF(pthread_mutex_init(&e->gpu_mu, NULL) != 0, MXC_ERR_OOM,
                      "engine: out of memory creating a lock");
  int rc = mxc__pool_create(e, cpu, MXC__LANE_COMPUTE, num_workers, &e->cpu);
  if (rc != MXC_OK) pthread_mutex_destroy(&e->gpu_mu);
  return rc;
}

/* After the drain: every GPU pool's workers and completers joined, their
 * events and streams destroyed (each stream waits for its work first). */
static void destroy_gpu_pools(mxc__engine *e) {
  for (int d = 0; d < MXC__MAX_GPUS; d++) {
    for (int l = 0; l < MXC__LANES; l++) {
      mxc__pool_destroy(atomic_load(&e->gpu[d][l]));
      atomic_store(&e->gpu[d][l], NULL);
    }
  }
}

void mxc__thr_fini(mxc__engine *e) {
  mxc__thr_drain(e);
  pthread_mutex_lock(&e->resize_mu);
  mxc__pool_destroy(e->cpu);
  e->cpu = NULL;
  destroy_gpu_pools(e);
  pthread_mutex_unlock(&e->resize_mu);
  pthread_mutex_destroy(&e->gpu_mu);
  mxc__op_cache_clear(e);
}
