/* Per-device worker pools.
 *
 * A pool owns a ready queue and worker threads. Workers that find the
 * queue empty spin briefly on the n_queued hint, then sleep on pool->cv;
 * submitters signal only when some worker sleeps, so a busy pool costs one
 * uncontended-ish lock per queued op and no system calls.
 *
 * The CPU has one pool. Each GPU gets two on its first push (threaded.c):
 * compute workers and one copy worker, each worker owning a stream of the
 * plug-in (core/base/gpu.h) on which the functions it runs enqueue their
 * GPU work, and a completer thread (flight.c) that finishes each op once
 * an event recorded after its work is reached. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/base/assert.h"
#include "core/engine/internal.h"
#include "core/profiler/profiler.h"

/* Spin iterations (pause instructions, tens of microseconds in all)
 * before an idle worker sleeps; -DMXC__SPIN_ITERS=N to experiment. */
#ifndef MXC__SPIN_ITERS
#define MXC__SPIN_ITERS 2000
#endif

static _Thread_local mxc__worker *tls_worker;

mxc__worker *mxc__pool_current_worker(void) { return tls_worker; }

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The next op for w, blocking while there is none. NULL: w must leave
 * (its index is at or above the target and the queue is empty). */
static mxc__op *take(mxc__worker *w) {
  mxc__pool *p = w->pool;
  for (int i = 0; i < MXC__SPIN_ITERS; i++) {
    if (atomic_load_explicit(&p->n_queued, memory_order_relaxed) > 0) break;
    cpu_relax();
  }
  pthread_mutex_lock(&p->mu);
  for (;;) {
    mxc__op *op = mxc__readyq_pop(&p->q);
    if (op != NULL) {
      /* Exact under p->mu, which every writer of n_queued holds. */
      int was =
          atomic_fetch_sub_explicit(&p->n_queued, 1, memory_order_relaxed);
      MXC__ASSERT(was > 0);
      (void)was;
      pthread_mutex_unlock(&p->mu);
      return op;
    }
    if (w->idx >= atomic_load_explicit(&p->target, memory_order_relaxed)) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    p->n_sleeping++;
    pthread_cond_wait(&p->cv, &p->mu);
    p->n_sleeping--;
  }
}

/* The worker's track in a profile (kept in the thread; no allocation
 * unless it records). */
static void name_thread(const mxc__worker *w) {
  char name[MXC__PROF_NAME_MAX];
  const mxc__pool *p = w->pool;
  if (p->dev.type == MXC_DEVICE_CPU) {
    snprintf(name, sizeof name, "engine cpu worker %d", w->idx);
  } else {
    snprintf(name, sizeof name, "engine gpu(%d) %s worker %d", p->dev.id,
             p->lane == MXC__LANE_COPY ? "copy" : "compute", w->idx);
  }
  mxc__prof_thread_name(name);
}

static void *worker_main(void *arg) {
  mxc__worker *w = arg;
  tls_worker = w;
  if (w->stream) mxc__gpu_set_thread_stream(w->pool->dev.id, w->stream);
  name_thread(w);
  mxc__op *op;
  while ((op = take(w)) != NULL) {
    /* mxc__thr_run hands back a successor made ready by op, if any, to
     * run here directly without a trip through the queue. */
    do {
      op = mxc__thr_run(op, w);
    } while (op != NULL);
  }
  mxc__gpu_set_thread_stream(-1, NULL);
  tls_worker = NULL;
  return NULL;
}

void mxc__pool_submit(mxc__pool *p, mxc__op *first, int n) {
  pthread_mutex_lock(&p->mu);
  int pushed = 0;
  while (first != NULL) {
    mxc__op *next = first->next; /* readyq_push reuses next */
    MXC__ASSERT(first->pool == p);
    mxc__readyq_push(&p->q, first);
    first = next;
    pushed++;
  }
  /* n_queued must count exactly the ops in the queue. */
  MXC__ASSERT(pushed == n);
  (void)pushed;
  atomic_fetch_add_explicit(&p->n_queued, n, memory_order_relaxed);
  if (p->n_sleeping > 0) {
    if (n == 1) {
      pthread_cond_signal(&p->cv);
    } else {
      pthread_cond_broadcast(&p->cv);
    }
  }
  pthread_mutex_unlock(&p->mu);
}

/* Asks workers [n, n_workers) to leave, joins and frees them. */
static void stop_workers(mxc__pool *p, int from, int to) {
  pthread_mutex_lock(&p->mu);
  atomic_store_explicit(&p->target, from, memory_order_relaxed);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = from; i < to; i++) {
    pthread_join(p->workers[i]->tid, NULL);
    mxc__flight_stop(p->workers[i]);
    mxc__gpu_stream_destroy(p->workers[i]->stream);
    mxc__free(p->workers[i]);
    p->workers[i] = NULL;
  }
}

static int start_worker(mxc__pool *p, int idx) {
  mxc__worker *w = mxc__malloc(sizeof *w);
  MXC_RETURN_ERROR_IF(w == NULL, MXC_ERR_OOM,
                      "engine: out of memory starting worker %d", idx);
  memset(w, 0, sizeof *w);
  w->pool = p;
  w->idx = idx;
  if (p->dev.type == MXC_DEVICE_GPU) {
    int src = mxc__gpu_stream_create(p->dev.id, &w->stream);
    if (src == MXC_OK) src = mxc__flight_start(w);
    if (src != MXC_OK) {
      mxc__gpu_stream_destroy(w->stream);
      mxc__free(w);
      return src;
    }
  }
  int rc = pthread_create(&w->tid, NULL, worker_main, w);
  if (rc != 0) {
    mxc__flight_stop(w);
    mxc__gpu_stream_destroy(w->stream);
    mxc__free(w);
    return mxc__error_set(rc == EAGAIN ? MXC_ERR_OOM : MXC_ERR_INTERNAL,
                          "engine: cannot start worker thread %d (%s)", idx,
                          strerror(rc));
  }
  p->workers[idx] = w;
  return MXC_OK;
}

int mxc__pool_resize(mxc__pool *p, int n) {
  int old = p->n_workers;
  if (n < old) {
    stop_workers(p, n, old);
    p->n_workers = n;
    return MXC_OK;
  }
  if (n == old) return MXC_OK;
  mxc__worker **ws = mxc__realloc(p->workers, sizeof *ws * (size_t)n);
  MXC_RETURN_ERROR_IF(ws == NULL, MXC_ERR_OOM,
                      "engine: out of memory resizing the worker pool");
  p->workers = ws;
  atomic_store_explicit(&p->target, n, memory_order_relaxed);
  for (int i = old; i < n; i++) {
    int rc = start_worker(p, i);
    if (rc != MXC_OK) {
      stop_workers(p, old, i); /* back to the old size */
      return rc;
    }
  }
  p->n_workers = n;
  return MXC_OK;
}

int mxc__pool_create(mxc__engine *e, mxc__device dev, int lane, int n,
                     mxc__pool **out) {
  mxc__pool *p = mxc__malloc(sizeof *p);
  MXC_RETURN_ERROR_IF(p == NULL, MXC_ERR_OOM,
                      "engine: out of memory creating a worker pool");
  memset(p, 0, sizeof *p);
  p->engine = e;
  p->dev = dev;
  p->lane = lane;
  atomic_init(&p->n_queued, 0);
  atomic_init(&p->target, 0);
  if (pthread_mutex_init(&p->mu, NULL) != 0) {
    mxc__free(p);
    return mxc__error_set(MXC_ERR_OOM,
                          "engine: out of memory creating a pool lock");
  }
  if (pthread_cond_init(&p->cv, NULL) != 0) {
    pthread_mutex_destroy(&p->mu);
    mxc__free(p);
    return mxc__error_set(MXC_ERR_OOM,
                          "engine: out of memory creating a pool lock");
  }
  int rc = mxc__pool_resize(p, n);
  if (rc != MXC_OK) {
    mxc__pool_destroy(p);
    return rc;
  }
  *out = p;
  return MXC_OK;
}

void mxc__pool_destroy(mxc__pool *p) {
  if (p == NULL) return;
  stop_workers(p, 0, p->n_workers);
  /* Callers drain the engine first: a queued op here would never run. */
  MXC__ASSERT(p->q.fifo_head == NULL && p->q.heap == NULL);
  MXC__ASSERT(atomic_load(&p->n_queued) == 0);
  mxc__free(p->workers);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  mxc__free(p);
}
