/* Op records and their dependency lists.
 *
 * Records are recycled so the hot path rarely allocates:
 *  - finishing threads (workers, async completers) push each record onto
 *    `returned`, a lock-free stack (CAS push; the only removal takes the
 *    whole stack at once, so there is no ABA problem);
 *    the stack holds at most about MXC__OP_CACHE_MAX records (counted in
 *    n_returned); beyond that the finisher frees the record itself;
 *  - pushers pop from `cache` under cache_mu, refilling it by taking the
 *    whole returned stack when it runs dry. A pusher and a worker thus
 *    share no lock per op, only the returned stack's head and count.
 * mxc__op_cache_clear frees every cached record; wait_all and destroy call
 * it, so allocator live counts come back to their baseline once the
 * engine is idle. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/engine/internal.h"

static void free_list(mxc__op *op) {
  while (op != NULL) {
    mxc__op *next = op->next;
    mxc__free(op);
    op = next;
  }
}

/* Takes the whole returned stack; keeps n_returned exact. */
static mxc__op *take_returned(mxc__engine *e) {
  if (atomic_load_explicit(&e->returned, memory_order_relaxed) == NULL) {
    return NULL;
  }
  mxc__op *got =
      atomic_exchange_explicit(&e->returned, NULL, memory_order_acquire);
  int n = 0;
  for (mxc__op *op = got; op != NULL; op = op->next) n++;
  int was = atomic_fetch_sub_explicit(&e->n_returned, n, memory_order_relaxed);
  /* Putters count a record before publishing it, so the count covers
   * at least what was taken. */
  MXC__ASSERT(was >= n);
  (void)was;
  return got;
}

mxc__op *mxc__op_get(mxc__engine *e, int n_deps) {
  pthread_mutex_lock(&e->cache_mu);
  if (e->cache == NULL) e->cache = take_returned(e);
  mxc__op *op = e->cache;
  if (op != NULL) e->cache = op->next;
  pthread_mutex_unlock(&e->cache_mu);
  if (op == NULL) {
    op = mxc__malloc(sizeof *op);
    if (op == NULL) return NULL;
  }
  op->deps = op->inline_deps;
  if (n_deps > MXC__OP_INLINE_DEPS) {
    op->deps = mxc__malloc(sizeof(mxc__dep) * (size_t)n_deps);
    if (op->deps == NULL) {
      op->deps = op->inline_deps;
      mxc__op_put(e, op);
      return NULL;
    }
  }
  return op;
}

void mxc__op_put(mxc__engine *e, mxc__op *op) {
  if (op->deps != op->inline_deps) mxc__free(op->deps);
  op->deps = op->inline_deps;
  /* The bound is approximate under races (a few over), never drifting:
   * takers subtract exactly what they took. */
  if (atomic_load_explicit(&e->n_returned, memory_order_relaxed) >=
      MXC__OP_CACHE_MAX) {
    mxc__free(op);
    return;
  }
  atomic_fetch_add_explicit(&e->n_returned, 1, memory_order_relaxed);
  mxc__op *head = atomic_load_explicit(&e->returned, memory_order_relaxed);
  do {
    op->next = head;
  } while (!atomic_compare_exchange_weak_explicit(
      &e->returned, &head, op, memory_order_release, memory_order_relaxed));
}

void mxc__op_cache_clear(mxc__engine *e) {
  pthread_mutex_lock(&e->cache_mu);
  mxc__op *op = e->cache;
  e->cache = NULL;
  pthread_mutex_unlock(&e->cache_mu);
  free_list(op);
  free_list(take_returned(e));
}

/* ---- dependency lists -------------------------------------------------- */

/* Order: by variable address, then reads before writes. */
static int dep_less(const mxc__dep *a, const mxc__dep *b) {
  uintptr_t x = (uintptr_t)a->var, y = (uintptr_t)b->var;
  return x < y || (x == y && a->write < b->write);
}

static void sift_down(mxc__dep *d, int root, int n) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && dep_less(&d[child], &d[child + 1])) child++;
    if (!dep_less(&d[root], &d[child])) return;
    mxc__dep t = d[root];
    d[root] = d[child];
    d[child] = t;
    root = child;
  }
}

/* Insertion sort for the usual handful of vars, heapsort beyond (no
 * recursion, no allocation, O(n log n) for ops with many inputs). */
static void sort_deps(mxc__dep *d, int n) {
  if (n <= 16) {
    for (int i = 1; i < n; i++) {
      mxc__dep t = d[i];
      int j = i;
      while (j > 0 && dep_less(&t, &d[j - 1])) {
        d[j] = d[j - 1];
        j--;
      }
      d[j] = t;
    }
    return;
  }
  for (int i = n / 2 - 1; i >= 0; i--) sift_down(d, i, n);
  for (int end = n - 1; end > 0; end--) {
    mxc__dep t = d[0];
    d[0] = d[end];
    d[end] = t;
    sift_down(d, 0, end);
  }
}

int mxc__deps_build(const mxc__push_args *a, mxc__dep *deps, void *owner) {
  int n = 0;
  for (int i = 0; i < a->n_reads; i++) {
    deps[n].var = a->reads[i];
    deps[n++].write = 0;
  }
  for (int i = 0; i < a->n_writes; i++) {
    deps[n].var = a->writes[i];
    deps[n++].write = 1;
  }
  sort_deps(deps, n);
  /* Equal vars are adjacent, a write after the reads: keep the last one of
   * each run, so a var read and written becomes a single write. */
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (i + 1 < n && deps[i + 1].var == deps[i].var) continue;
    deps[m].var = deps[i].var;
    deps[m].write = deps[i].write;
    deps[m].owner = owner;
    deps[m].kind = MXC__DEP_OP;
    deps[m].next = NULL;
    deps[m].wait_ev = NULL;
    deps[m].early_next = NULL;
    /* push locks the vars in this order: strictly ascending addresses
     * keep concurrent pushes deadlock-free and lock each var once. */
    MXC__ASSERT(m == 0 || (uintptr_t)deps[m - 1].var < (uintptr_t)deps[m].var);
    m++;
  }
  return m;
}
