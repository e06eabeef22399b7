/* History nodes: allocation, reference counting, saved values, the lock
 * and the hook that drops an array's link when the array is freed. */
#include <pthread.h>
#include <string.h>

#include "core/autograd/internal.h"
#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void mxc__ag_lock(void) { pthread_mutex_lock(&g_lock); }
void mxc__ag_unlock(void) { pthread_mutex_unlock(&g_lock); }

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

int mxc__ag_node_new(int n_out, int n_in, mxc__ag_node **out) {
  size_t sz = align8(sizeof(mxc__ag_node)) +
              align8(sizeof(mxc__ndarray) * (size_t)n_out) +
              align8(sizeof(mxc__ag_link) * (size_t)n_out) +
              sizeof(mxc__ag_node *) * (size_t)n_in;
  char *m = mxc__calloc(1, sz);
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM, "autograd: out of memory recording");
  mxc__ag_node *n = (mxc__ag_node *)m;
  m += align8(sizeof(mxc__ag_node));
  n->vals = (mxc__ndarray *)m;
  m += align8(sizeof(mxc__ndarray) * (size_t)n_out);
  n->links = (mxc__ag_link *)m;
  m += align8(sizeof(mxc__ag_link) * (size_t)n_out);
  n->inputs = (mxc__ag_node **)m;
  atomic_init(&n->refs, 1);
  n->n_out = n_out;
  n->n_in = n_in;
  for (int i = 0; i < n_out; ++i) {
    n->links[i].owner = n;
    n->links[i].index = i;
  }
  *out = n;
  return MXC_OK;
}

void mxc__ag_node_ref(mxc__ag_node *n) {
  int was = atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
  MXC__ASSERT_MSG(was > 0, "history node referenced after its release");
  (void)was;
}

static int drop(mxc__ag_node *n) {
  int was = atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel);
  MXC__ASSERT_MSG(was > 0, "history node released too often");
  return was == 1;
}

void mxc__ag_save(mxc__ndarray *dst, const mxc__ndarray *src) {
  /* Saving over a saved value would leak its chunk reference. */
  MXC__ASSERT(dst->chunk == NULL);
  *dst = *src;
  dst->ag = NULL;
  mxc__chunk_retain(dst->chunk);
}

void mxc__ag_unsave(mxc__ndarray *v) {
  if (v->chunk) mxc__chunk_release(v->chunk);
  memset(v, 0, sizeof *v);
}

/* A history of a long loop is a long chain; destroying it recursively
 * could overflow the stack, so dead nodes go on a work list. A node is
 * destroyed before its inputs, so each mxc__node_release below frees at
 * most that one node (its inputs are still held by their own history
 * nodes). */
void mxc__ag_node_unref(mxc__ag_node *n) {
  if (!n || !drop(n)) return;
  n->next = NULL;
  mxc__ag_node *pending = n;
  while (pending) {
    mxc__ag_node *d = pending;
    pending = d->next;
    for (int k = 0; k < d->n_in; ++k) {
      mxc__ag_node *in = d->inputs[k];
      if (in && drop(in)) {
        in->next = pending;
        pending = in;
      }
    }
    for (int j = 0; j < d->n_out; ++j) mxc__ag_unsave(&d->vals[j]);
    mxc__ag_unsave(&d->grad);
    mxc__node_release(d->node);
    mxc__free(d);
  }
}

void mxc__ag_node_free_history(mxc__ag_node *n) {
  if (n->freed || !n->node || !n->node->op) return;
  n->freed = 1;
  for (int j = 0; j < n->n_out; ++j) mxc__ag_unsave(&n->vals[j]);
  for (int k = 0; k < n->n_in; ++k) {
    mxc__ag_node_unref(n->inputs[k]);
    n->inputs[k] = NULL;
  }
}
