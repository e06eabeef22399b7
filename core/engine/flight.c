/* GPU operations in flight: completion through events.
 *
 * A GPU worker's function only enqueues work on the worker's stream. The
 * worker then records an event of the plug-in on that stream, hands the
 * operation and its event to its completer and takes its next operation
 * at once: the stream (the device) holds the queue, not the worker.
 *
 * Each GPU worker has one completer thread that blocks in event_sync on
 * the oldest event of its worker, then finishes that operation (poisons
 * its outputs on failure, runs free_fn, releases its variables, schedules
 * its dependents). Why a thread per stream and not a per-device poller
 * or cudaLaunchHostFunc: events of one stream complete in the order they
 * were recorded, so blocking on the oldest one never waits behind a
 * later one and needs no polling interval; a host-function callback must
 * not call CUDA, but finishing an operation may free device memory
 * (free_fn, deletions of variables), so it would need a thread anyway.
 *
 * The ring holds at most MXC__FLIGHT_MAX operations: a worker that finds
 * it full waits for its completer (the stream is far ahead of the
 * device then, and this bounds the events in use). Events are made
 * lazily, one per ring slot, and reused. Where no event can be made or
 * recorded the worker waits for its stream instead (threaded.c).
 *
 * Errors: event_sync reports the failure of the work before the event;
 * the operation fails by its own name (mxc__thr_gpu_done). Only the
 * worker adds (at head + n), only the completer removes (at head), both
 * under mu, a leaf lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/engine/internal.h"
#include "core/profiler/profiler.h"

struct mxc__flight {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* room in the ring, work in it, or stop */
  mxc__op *ops[MXC__FLIGHT_MAX];
  void *events[MXC__FLIGHT_MAX]; /* NULL until a slot's first use */
  int head, n;
  int stop;
  pthread_t tid;
  int dev, idx, lane;
};

static void name_completer(const mxc__flight *f) {
  char name[MXC__PROF_NAME_MAX];
  snprintf(name, sizeof name, "engine gpu(%d) %s completer %d", f->dev,
           f->lane == MXC__LANE_COPY ? "copy" : "compute", f->idx);
  mxc__prof_thread_name(name);
}

/* Finishes the oldest operation once its event is reached, until the
 * ring is empty and stop is set. */
static void *completer_main(void *arg) {
  mxc__flight *f = arg;
  name_completer(f);
  pthread_mutex_lock(&f->mu);
  for (;;) {
    while (f->n == 0 && !f->stop) pthread_cond_wait(&f->cv, &f->mu);
    if (f->n == 0) break;
    mxc__op *op = f->ops[f->head];
    void *ev = f->events[f->head];
    pthread_mutex_unlock(&f->mu);
    mxc__thr_gpu_done(op, mxc__gpu_event_sync(ev));
    /* The slot (and its event) is reused only from here on: the event is
     * not recorded again while it is waited for. */
    pthread_mutex_lock(&f->mu);
    f->head = (f->head + 1) % MXC__FLIGHT_MAX;
    f->n--;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
  return NULL;
}

/* MXC_GPU_EVENTS=0, read when a GPU's pools are made: the workers wait
 * for their streams (the way before events), to compare the two on a
 * GPU. */
static int events_wanted(void) {
  const char *v = getenv("MXC_GPU_EVENTS");
  return !(v != NULL && strcmp(v, "0") == 0);
}

int mxc__flight_start(mxc__worker *w) {
  w->flight = NULL;
  /* Otherwise the worker waits for its stream after each operation. */
  if (!mxc__gpu_has_events() || !events_wanted()) return MXC_OK;
  mxc__flight *f = mxc__malloc(sizeof *f);
  MXC_RETURN_ERROR_IF(f == NULL, MXC_ERR_OOM,
                      "engine: out of memory starting worker %d", w->idx);
  memset(f, 0, sizeof *f);
  f->dev = w->pool->dev.id;
  f->idx = w->idx;
  f->lane = w->pool->lane;
  int rc = pthread_mutex_init(&f->mu, NULL);
  if (rc == 0 && (rc = pthread_cond_init(&f->cv, NULL)) != 0) {
    pthread_mutex_destroy(&f->mu);
  }
  if (rc == 0 && (rc = pthread_create(&f->tid, NULL, completer_main, f)) != 0) {
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
  }
  if (rc != 0) {
    mxc__free(f);
    return mxc__error_set(rc == EAGAIN || rc == ENOMEM ? MXC_ERR_OOM
                                                       : MXC_ERR_INTERNAL,
                          "engine: cannot start the completer of GPU worker "
                          "%d (%s)",
                          w->idx, strerror(rc));
  }
  w->flight = f;
  return MXC_OK;
}

void mxc__flight_stop(mxc__worker *w) {
  mxc__flight *f = w->flight;
  if (f == NULL) return;
  pthread_mutex_lock(&f->mu);
  f->stop = 1;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  pthread_join(f->tid, NULL); /* after it finished whatever was left */
  for (int i = 0; i < MXC__FLIGHT_MAX; i++) {
    mxc__gpu_event_destroy(f->events[i]);
  }
  pthread_cond_destroy(&f->cv);
  pthread_mutex_destroy(&f->mu);
  mxc__free(f);
  w->flight = NULL;
}

/* The free slot for the next operation, once there is one. */
static int reserve(mxc__flight *f) {
  pthread_mutex_lock(&f->mu);
  while (f->n == MXC__FLIGHT_MAX) pthread_cond_wait(&f->cv, &f->mu);
  int slot = (f->head + f->n) % MXC__FLIGHT_MAX;
  pthread_mutex_unlock(&f->mu);
  return slot;
}

/* Records the slot's event (made on first use) on the worker's stream. */
static int mark(mxc__flight *f, int slot, void *stream) {
  if (f->events[slot] == NULL) {
    MXC_FORWARD_IF_ERROR(mxc__gpu_event_create(f->dev, &f->events[slot]));
  }
  return mxc__gpu_event_record(f->events[slot], stream);
}

int mxc__flight_add(mxc__worker *w, mxc__op *op) {
  mxc__flight *f = w->flight;
  if (f == NULL) return 0;
  /* Outside mu: the slot is not the completer's until n counts it. */
  int slot = reserve(f);
  if (mark(f, slot, w->stream) != MXC_OK) {
    mxc__error_clear(); /* the stream sync that follows reports errors */
    return 0;
  }
  /* Before the completer may finish op: dependents on the same device
   * start behind the event instead of after the host saw it. */
  mxc__thr_gpu_enqueued(op, f->events[slot]);
  pthread_mutex_lock(&f->mu);
  f->ops[slot] = op;
  f->n++;
  pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
  return 1;
}
