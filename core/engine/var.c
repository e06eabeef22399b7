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

int mxc__var_append(mxc__var *v, mxc__dep *d) {
  MXC__ASSERT(d->var == v);
  /* One writer or any number of readers, never both. */
  MXC__ASSERT(v->readers >= 0 && (v->writer == 0 || v->readers == 0));
  MXC__ASSERT((v->head == NULL) == (v->tail == NULL));
  d->ticket = ++v->tickets;
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
  } else {
    v->tail->next = d;
  }
  v->tail = d;
  d->next = NULL;
  return 0;
}

void mxc__var_release(mxc__var *v, const mxc__dep *d, mxc__dep **granted) {
  pthread_mutex_lock(&v->mu);
  /* d was granted: it holds v in the way it asked for. */
  if (d->write) {
    MXC__ASSERT_MSG(v->writer == 1, "releasing a write that is not held");
    v->writer = 0;
  } else {
    MXC__ASSERT_MSG(v->readers > 0, "releasing a read that is not held");
    v->readers--;
  }
  grant_front(v, granted);
  MXC__ASSERT(v->readers >= 0 && (v->writer == 0 || v->readers == 0));
  pthread_mutex_unlock(&v->mu);
}
