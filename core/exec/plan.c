#include "core/exec/plan.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/base/shape.h"

/* Working state of one planning walk. Buffers are created at most once per
 * planned entry, so every array below is sized by the entry count up front
 * and never grows. */
typedef struct planner {
  const mxc__graph *g;
  const size_t *nbytes;
  const uint8_t *external;
  mxc__plan *p;
  int *remaining;   /* per entry: uses by nodes of the order not yet walked */
  uint8_t *donated; /* per entry: its buffer went to an in-place output */
  int *pool;        /* free buffer ids */
  int n_pool;
  /* Per buffer: the entry living in it, -1 while it is free. Kept only
   * to assert the invariant of plan.h (one live entry per buffer). */
  int *holder;
} planner;

void mxc__plan_free(mxc__plan *p) {
  if (!p) return;
  mxc__free(p->buf);
  mxc__free(p->inplace);
  mxc__free(p->buf_bytes);
  mxc__free(p);
}

static int plan_alloc(int n_entries, mxc__plan **out) {
  size_t n = (size_t)(n_entries > 0 ? n_entries : 1);
  mxc__plan *p = mxc__calloc(1, sizeof *p);
  if (p) {
    p->buf = mxc__malloc(sizeof *p->buf * n);
    p->inplace = mxc__calloc(n, 1);
    p->buf_bytes = mxc__calloc(n, sizeof *p->buf_bytes);
  }
  if (!p || !p->buf || !p->inplace || !p->buf_bytes) {
    mxc__plan_free(p);
    return mxc__error_set(MXC_ERR_OOM, "out of memory planning memory");
  }
  p->n_entries = n_entries;
  for (int e = 0; e < n_entries; ++e) p->buf[e] = -1;
  *out = p;
  return MXC_OK;
}

/* At most one buffer per planned entry: the arrays were sized for it. */
static int new_buffer(mxc__plan *p, size_t bytes) {
  MXC__ASSERT(p->n_bufs < (p->n_entries > 0 ? p->n_entries : 1));
  p->buf_bytes[p->n_bufs] = bytes;
  return p->n_bufs++;
}

/* Entry e starts living in buffer b, which must be free. */
static void occupy(planner *pl, int b, int e) {
  MXC__ASSERT_MSG(pl->holder[b] == -1, "buffer given to two live entries");
  pl->holder[b] = e;
}

/* Entry e's lifetime ended: its buffer b goes back to the pool. */
static void release_buffer(planner *pl, int b, int e) {
  MXC__ASSERT_MSG(pl->holder[b] == e, "buffer freed by an entry not in it");
  MXC__ASSERT(pl->n_pool < pl->p->n_bufs);
  pl->holder[b] = -1;
  pl->pool[pl->n_pool++] = b;
}

/* The best-fitting free buffer for `need` bytes: the smallest that is
 * large enough; failing that the largest one, grown (growing adds less
 * than a new buffer would); failing that a new buffer. */
static int take_buffer(planner *pl, size_t need) {
  mxc__plan *p = pl->p;
  int best = -1, largest = -1;
  for (int i = 0; i < pl->n_pool; ++i) {
    size_t sz = p->buf_bytes[pl->pool[i]];
    if (sz >= need && (best < 0 || sz < p->buf_bytes[pl->pool[best]])) {
      best = i;
    }
    if (largest < 0 || sz > p->buf_bytes[pl->pool[largest]]) largest = i;
  }
  int pick = best >= 0 ? best : largest;
  if (pick < 0) return new_buffer(p, need);
  int b = pl->pool[pick];
  pl->pool[pick] = pl->pool[--pl->n_pool];
  if (p->buf_bytes[b] < need) p->buf_bytes[b] = need;
  return b;
}

static int is_planned(const planner *pl, int e) {
  return !pl->external[e] && pl->p->buf[e] >= 0;
}

/* Output e (output j of node nid) takes over an input's buffer when an
 * in-place pair allows it: the input is planned (not external), this node
 * is its last consumer, no other output took it already, and the buffer
 * is large enough. Returns 1 when it did. */
/* The input of candidate pair k (0 .. n_inplace, the last one being the
 * parameter-dependent pair) that output j may reuse, or -1. */
static int inplace_candidate(const mxc__node *n, int k, int j) {
  const mxc__op *op = n->op;
  int in_idx = -1;
  if (k < op->n_inplace) {
    in_idx = op->inplace[k][1] == j ? op->inplace[k][0] : -1;
  } else if (op->inplace_input) {
    in_idx = op->inplace_input(n->param, j);
  }
  return in_idx >= 0 && in_idx < n->n_inputs ? in_idx : -1;
}

static int try_inplace(planner *pl, int nid, int j, int e) {
  const mxc__graph *g = pl->g;
  const mxc__node *n = g->nodes[nid];
  const int *ins = g->in_entries + g->in_ptr[nid];
  for (int k = 0; k <= n->op->n_inplace; ++k) {
    int in_idx = inplace_candidate(n, k, j);
    if (in_idx < 0) continue;
    int ein = ins[in_idx];
    if (!is_planned(pl, ein) || pl->donated[ein]) continue;
    int uses_here = 0;
    for (int i = 0; i < n->n_inputs; ++i) uses_here += ins[i] == ein;
    if (pl->remaining[ein] != uses_here) continue;
    int b = pl->p->buf[ein];
    if (pl->p->buf_bytes[b] < pl->nbytes[e]) continue;
    /* ein dies at this node, so the buffer passes straight to e. */
    MXC__ASSERT(pl->holder[b] == ein);
    pl->holder[b] = e;
    pl->p->buf[e] = b;
    pl->p->inplace[e] = 1;
    pl->donated[ein] = 1;
    return 1;
  }
  return 0;
}

/* Byte totals are statistics over entries that each fit in int64 but may
 * not together (a graph of several huge, never allocated values): they
 * saturate at INT64_MAX. */
static void add_bytes(int64_t *acc, size_t bytes) {
  int64_t b = bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
  if (!mxc__add_i64(*acc, b, acc)) *acc = INT64_MAX;
}

/* Plans the outputs of node nid, then frees what died at it. */
static void plan_node(planner *pl, int nid, int share) {
  const mxc__graph *g = pl->g;
  mxc__plan *p = pl->p;
  for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
    if (pl->external[e] || p->buf[e] >= 0) continue;
    add_bytes(&p->unshared_bytes, pl->nbytes[e]);
    if (!share) {
      p->buf[e] = new_buffer(p, pl->nbytes[e]);
      continue;
    }
    if (try_inplace(pl, nid, e - g->entry_ptr[nid], e)) continue;
    p->buf[e] = take_buffer(pl, pl->nbytes[e]);
    occupy(pl, p->buf[e], e);
  }
  if (!share) return;
  /* Only after every output has its buffer: an output must never receive
   * the buffer of an input this node is still reading, nor of a sibling. */
  for (int k = g->in_ptr[nid]; k < g->in_ptr[nid + 1]; ++k) {
    int ein = g->in_entries[k];
    if (!is_planned(pl, ein)) continue;
    MXC__ASSERT(pl->remaining[ein] > 0); /* counted for this very use */
    if (--pl->remaining[ein] == 0 && !pl->donated[ein]) {
      release_buffer(pl, p->buf[ein], ein);
    }
  }
  for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
    if (is_planned(pl, e) && pl->remaining[e] == 0) {
      release_buffer(pl, p->buf[e], e); /* never read: dead at once */
    }
  }
}

/* What the executor relies on: every planned entry has a buffer large
 * enough for it, and (when sharing) every use counted was walked, so no
 * buffer was freed early or left live. */
static void check_plan(const planner *pl, int share) {
  const mxc__plan *p = pl->p;
  for (int e = 0; e < p->n_entries; ++e) {
    if (p->buf[e] < 0) continue;
    MXC__ASSERT(!pl->external[e] && p->buf[e] < p->n_bufs);
    MXC__ASSERT_MSG(p->buf_bytes[p->buf[e]] >= pl->nbytes[e],
                    "planned buffer smaller than its entry");
    MXC__ASSERT(!share || pl->remaining[e] == 0);
  }
  /* Growing a free buffer adds less than a new one would. */
  MXC__ASSERT(p->planned_bytes <= p->unshared_bytes);
}

int mxc__plan_build(const mxc__graph *g, const int *order, int n_order,
                    const size_t *nbytes, const uint8_t *external, int share,
                    mxc__plan **out) {
  mxc__plan *p = NULL;
  MXC_FORWARD_IF_ERROR(plan_alloc(g->n_entries, &p));
  size_t n = (size_t)(g->n_entries > 0 ? g->n_entries : 1);
  planner pl;
  memset(&pl, 0, sizeof pl);
  pl.g = g;
  pl.nbytes = nbytes;
  pl.external = external;
  pl.p = p;
  pl.remaining = mxc__calloc(n, sizeof *pl.remaining);
  pl.donated = mxc__calloc(n, 1);
  pl.pool = mxc__malloc(sizeof *pl.pool * n);
  pl.holder = mxc__malloc(sizeof *pl.holder * n);
  int rc = MXC_OK;
  if (!pl.remaining || !pl.donated || !pl.pool || !pl.holder) {
    rc = mxc__error_set(MXC_ERR_OOM, "out of memory planning memory");
  }
  for (size_t b = 0; rc == MXC_OK && b < n; ++b) pl.holder[b] = -1;
  for (int i = 0; rc == MXC_OK && i < n_order; ++i) {
    int nid = order[i];
    if (!g->nodes[nid]->op) continue;
    for (int k = g->in_ptr[nid]; k < g->in_ptr[nid + 1]; ++k) {
      pl.remaining[g->in_entries[k]]++;
    }
  }
  for (int i = 0; rc == MXC_OK && i < n_order; ++i) {
    if (g->nodes[order[i]]->op) plan_node(&pl, order[i], share);
  }
  if (rc == MXC_OK) {
    for (int b = 0; b < p->n_bufs; ++b) {
      add_bytes(&p->planned_bytes, p->buf_bytes[b]);
    }
    check_plan(&pl, share);
  }
  mxc__free(pl.holder);
  mxc__free(pl.remaining);
  mxc__free(pl.donated);
  mxc__free(pl.pool);
  if (rc != MXC_OK) {
    mxc__plan_free(p);
    return rc;
  }
  *out = p;
  return MXC_OK;
}
