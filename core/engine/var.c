/* Variables and their dependency queues.
 *
 * A variable tracks who holds it (some readers, or one writer) and a FIFO
 * of uses not yet granted. Uses are granted strictly in push order, except
 * that consecutive readers are granted together: they read the same
 * version. A writer waits for every earlier use; a reader for every
 * earlier writer. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/engine/internal.h"

/* Stamps handed out so far: versions are unique in the process, so a
 * variable made at a freed one's address never repeats its versions. */
static _Atomic uint64_t g_stamps;

void mxc__var_bump(mxc__var *v) {
  atomic_store(&v->version, atomic_fetch_add(&g_stamps, 1) + 1);
}

uint64_t mxc__engine_var_version(const mxc__var *v) {
  if (atomic_load(&v->external)) return 0;
  return atomic_load(&v->version);
}

void mxc__engine_var_set_external(mxc__var *v) {
  atomic_store(&v->external, 1);
}

int mxc__var_new(mxc__engine *e, mxc__var **out) {
  mxc__var *v = mxc__malloc(sizeof *v);
  MXC_RETURN_ERROR_IF(v == NULL, MXC_ERR_OOM,
                      "engine: out of memory creating a variable");
  memset(v, 0, sizeof *v);
  if (pthread_mutex_init(&v->mu, &e->var_mu_attr) != 0) {
    mxc__free(v);
    return mxc__error_set(MXC_ERR_OOM,
                          "engine: out of memory creating a variable's lock");
  }
  atomic_init(&v->err, NULL);
  atomic_init(&v->version, 0);
  atomic_init(&v->external, 0);
  mxc__var_bump(v);
  v->del.var = v;
  v->del.owner = v;
  v->del.write = 1;
  v->del.kind = MXC__DEP_DELETE;
  *out = v;
  return MXC_OK;
}

void mxc__engine_var_set_scratch(mxc__var *v) { v->scratch = 1; }

void mxc__var_free(mxc__var *v) {
  /* Freed only once its deletion is granted: every earlier use has been
   * released, and nothing may be queued behind the deletion. (The
   * threaded engine's deletion holds v as its writer; the naive one's
   * does not queue.) */
  MXC__ASSERT_MSG(v->head == NULL && v->tail == NULL,
                  "variable freed with uses still queued");
  MXC__ASSERT_MSG(v->readers == 0, "variable freed while being read");
  mxc__failure_unref(atomic_load_explicit(&v->err, memory_order_relaxed));
  pthread_mutex_destroy(&v->mu);
  mxc__free(v);
}

/* Grants from the head of the queue whatever can start now, restoring the
 * invariant documented at struct mxc__var. */
static void grant_front(mxc__var *v, mxc__dep **granted) {
  while (v->head != NULL) {
    mxc__dep *d = v->head;
    MXC__ASSERT(d->var == v);
    if (d->write) {
      if (v->writer || v->readers > 0) return;
      v->writer = 1;
    } else {
      if (v->writer) return;
      v->readers++;
    }
    v->head = d->next;
    if (v->head == NULL) v->tail = NULL;
    d->next = *granted;
    *granted = d;
    if (d->write) return;
  }
}

/* Whether d may be granted early behind v's device-released writer: a
 * synchronous operation of a GPU pool of that device that allows stream
 * waits (its stream then waits for rel_ev). Anything else needs the
 * host-side release. */
static int early_ok(const mxc__var *v, const mxc__dep *d) {
  if (d->kind != MXC__DEP_OP) return 0;
  const mxc__op *op = d->owner;
  return op->sync_fn != NULL && op->pool->stream_wait &&
         op->pool->dev.type == MXC_DEVICE_GPU && op->pool->dev.id == v->rel_dev;
}

/* With v->mu held, v's writer device-released (rel_ev): moves the heads
 * that may start on the device behind it into the early group (one
 * writer, or readers) and prepends them to *granted. Returns how many. */
static int grant_early(mxc__var *v, mxc__dep **granted) {
  int n = 0;
  while (v->rel_ev != NULL && v->head != NULL && early_ok(v, v->head)) {
    mxc__dep *d = v->head;
    if (v->early_n > 0 && (d->write || v->early_write)) break;
    v->head = d->next;
    if (v->head == NULL) v->tail = NULL;
    d->wait_ev = v->rel_ev;
    d->early_next = v->early;
    v->early = d;
    v->early_n++;
    v->early_write = d->write;
    /* Before the grant is counted: the op cannot finish before this dep
     * is promoted. */
    atomic_fetch_add_explicit(&((mxc__op *)d->owner)->fin_hold, 1,
                              memory_order_relaxed);
    d->next = *granted;
    *granted = d;
    n++;
  }
  return n;
}

int mxc__var_append(mxc__var *v, mxc__dep *d) {
  MXC__ASSERT(d->var == v);
  /* One writer or any number of readers, never both. */
  MXC__ASSERT(v->readers >= 0 && (v->writer == 0 || v->readers == 0));
  MXC__ASSERT((v->head == NULL) == (v->tail == NULL));
  d->ticket = ++v->tickets;
  d->next = NULL;
  /* With an empty queue, the invariant allows granting d at once exactly
   * when nothing conflicting holds v. Otherwise the head is blocked and d,
   * behind it, must wait too. */
  if (v->head == NULL) {
    if (d->write ? (!v->writer && v->readers == 0) : !v->writer) {
      if (d->write) {
        v->writer = 1;
      } else {
        v->readers++;
      }
      return 1;
    }
    v->head = d;
    v->tail = d;
    /* Blocked by a writer that may already be on its stream. */
    mxc__dep *early = NULL;
    return grant_early(v, &early);
  }
  v->tail->next = d;
  v->tail = d;
  return 0;
}

/* With v->mu held, v's writer just released: its early group becomes
 * the holders (prepended to *promoted), and an early writer that was
 * device-released already lets the next ones start early. */
static void promote(mxc__var *v, mxc__dep **granted, mxc__dep **promoted) {
  mxc__dep *list = v->early, *last = list;
  if (list == NULL) return;
  while (last->early_next != NULL) last = last->early_next;
  last->early_next = *promoted;
  *promoted = list;
  if (v->early_write) {
    v->writer = 1;
  } else {
    v->readers += v->early_n;
  }
  v->rel_ev = v->early_write ? v->early_ev : NULL;
  v->rel_dev = v->early_dev;
  v->early = NULL;
  v->early_n = 0;
  v->early_write = 0;
  v->early_ev = NULL;
  (void)grant_early(v, granted);
}

void mxc__var_release(mxc__var *v, const mxc__dep *d, mxc__dep **granted,
                      mxc__dep **promoted) {
  pthread_mutex_lock(&v->mu);
  /* d was granted: it holds v in the way it asked for. */
  if (d->write) {
    MXC__ASSERT_MSG(v->writer == 1, "releasing a write that is not held");
    v->writer = 0;
    v->rel_ev = NULL;
    promote(v, granted, promoted);
  } else {
    MXC__ASSERT_MSG(v->readers > 0, "releasing a read that is not held");
    v->readers--;
  }
  grant_front(v, granted);
  MXC__ASSERT(v->readers >= 0 && (v->writer == 0 || v->readers == 0));
  pthread_mutex_unlock(&v->mu);
}

void mxc__var_dev_release(mxc__var *v, mxc__dep *d, void *ev, int dev,
                          mxc__dep **granted) {
  MXC__ASSERT(d->write && d->var == v);
  pthread_mutex_lock(&v->mu);
  if (v->early_n > 0 && v->early_write && v->early == d) {
    /* Still waiting for its promotion: takes effect then. */
    v->early_ev = ev;
    v->early_dev = dev;
  } else {
    MXC__ASSERT_MSG(v->writer == 1 && v->early_n == 0,
                    "device-releasing a write that is not held");
    v->rel_ev = ev;
    v->rel_dev = dev;
    (void)grant_early(v, granted);
  }
  pthread_mutex_unlock(&v->mu);
}
