/* Backward over recorded histories.
 *
 * 1. Under the lock, the forward graph (every history node the heads
 *    reach, indexed with mxc__graph_build) is matched with its history
 *    nodes, and their saved values, training modes and the marked
 *    variables' gradient buffers are snapshotted (each snapshot holds its
 *    own chunk reference), so a concurrent backward that frees the same
 *    history cannot pull values from under this one.
 * 2. The gradient pass builds gradient entries for the marked variables;
 *    the graph of those entries is evaluated in topological order: nodes
 *    of the forward graph are bound to the snapshot, head-gradient
 *    variables to the head gradients, every other node is invoked
 *    (asynchronously, like any operator), and intermediate results are
 *    dropped once their last consumer has been pushed.
 * 3. Results are copied or added into the gradient buffers; variables no
 *    gradient reaches get zeros (MXC_REQ_WRITE) or stay (MXC_REQ_ADD).
 *    Sparse buffers written with MXC_REQ_WRITE are the given output of the
 *    operator computing their gradient instead (plan_direct); into sparse
 *    buffers, copies and additions without a sparse kernel go through the
 *    storage fallback of mxc__op_invoke.
 * 4. With retain_graph == 0 the recorded calls of the forward graph
 *    release their saved values.
 * On failure before step 3 no gradient buffer has been written, except
 * sparse ones written directly in step 2. */
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/autograd/internal.h"
#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/graph/gradient.h"
#include "core/graph/graph.h"
#include "core/op/invoke.h"
#include "core/profiler/profiler.h"
#include "core/resource/training.h"

#define FN "mxc_autograd_backward"

typedef struct bw {
  int n_heads;
  mxc__ag_node **head_owner; /* one reference each */
  mxc__entry *heads;         /* borrowed from head_owner */
  mxc__graph *fg;            /* forward graph */
  mxc__ag_node **ag_of;      /* per fg node; one reference each */
  mxc__ndarray *snap;        /* per fg entry: saved value */
  int *train;                /* per fg node */
  int default_train;
  int n_wrt;
  mxc__entry *wrt;    /* marked variables (borrowed nodes) */
  int *wrt_node;      /* their fg node ids */
  mxc__ndarray *grad; /* their gradient buffers (snapshot) */
  int *req;
  mxc__entry *res;       /* gradient entries, one reference each */
  mxc__node **hg_node;   /* head-gradient variables, owned */
  mxc__ndarray **hg_val; /* head gradients, owned views */
  mxc__graph *bg;        /* gradient graph */
  mxc__ndarray **val;    /* per bg entry */
  char *owned;           /* per bg entry: val computed here */
  int *remaining;        /* per bg entry: consumers not yet pushed */
  int *sink;             /* per bg entry: wrt index written directly, -1 */
  char *direct;          /* per wrt: gradient written by its producer */
} bw;

static void *zalloc(size_t n, size_t size, int *rc) {
  if (*rc != MXC_OK) return NULL;
  void *p = mxc__calloc(n ? n : 1, size);
  if (!p) *rc = mxc__error_set(MXC_ERR_OOM, FN ": out of memory");
  return p;
}

static void bw_free(bw *b) {
  for (int i = 0; b->head_owner && i < b->n_heads; ++i) {
    mxc__ag_node_unref(b->head_owner[i]);
  }
  if (b->fg) {
    for (int i = 0; b->ag_of && i < b->fg->n_nodes; ++i) {
      mxc__ag_node_unref(b->ag_of[i]);
    }
    for (int e = 0; b->snap && e < b->fg->n_entries; ++e) {
      mxc__ag_unsave(&b->snap[e]);
    }
  }
  for (int i = 0; b->grad && i < b->n_wrt; ++i) mxc__ag_unsave(&b->grad[i]);
  for (int i = 0; b->res && i < b->n_wrt; ++i)
    mxc__node_release(b->res[i].node);
  for (int i = 0; i < b->n_heads; ++i) {
    if (b->hg_node) mxc__node_release(b->hg_node[i]);
    if (b->hg_val) mxc__ndarray_free(b->hg_val[i]);
  }
  if (b->bg) {
    for (int e = 0; b->val && b->owned && e < b->bg->n_entries; ++e) {
      if (b->owned[e]) mxc__ndarray_free(b->val[e]);
    }
  }
  mxc__free(b->head_owner);
  mxc__free(b->heads);
  mxc__free(b->ag_of);
  mxc__free(b->snap);
  mxc__free(b->train);
  mxc__free(b->wrt);
  mxc__free(b->wrt_node);
  mxc__free(b->grad);
  mxc__free(b->req);
  mxc__free(b->res);
  mxc__free(b->hg_node);
  mxc__free(b->hg_val);
  mxc__free(b->val);
  mxc__free(b->owned);
  mxc__free(b->remaining);
  mxc__free(b->sink);
  mxc__free(b->direct);
  mxc__graph_free(b->fg);
  mxc__graph_free(b->bg);
}

/* ---- step 1: the forward graph and its snapshot ---- */

static const char *k_freed = FN
    ": the recorded history through operator '%s' was freed by an "
    "earlier backward with retain_graph == 0; record the computation "
    "again, or pass retain_graph != 0 to backward more than once";

/* Under the lock: the heads' history nodes. */
static int take_heads(bw *b, mxc__ndarray *const *heads) {
  for (int i = 0; i < b->n_heads; ++i) {
    mxc__ag_link *l = mxc__ag_link_of(heads[i]);
    MXC_RETURN_ERROR_IF(!l, MXC_ERR_INVALID_ARGUMENT,
                        FN
                        ": heads[%d] has no recorded history: it was not "
                        "computed under recording from a marked variable",
                        i);
    MXC_RETURN_ERROR_IF(l->owner->freed, MXC_ERR_INVALID_ARGUMENT, k_freed,
                        l->owner->node->op->name);
    mxc__ag_node_ref(l->owner);
    b->head_owner[i] = l->owner;
    b->heads[i].node = l->owner->node;
    b->heads[i].index = l->index;
  }
  return MXC_OK;
}

static int bind_ag(bw *b, int id, mxc__ag_node *a) {
  if (b->ag_of[id]) {
    MXC_RETURN_ERROR_IF(b->ag_of[id] != a, MXC_ERR_INTERNAL,
                        FN ": two histories for one node");
    return MXC_OK;
  }
  mxc__ag_node_ref(a);
  b->ag_of[id] = a;
  return MXC_OK;
}

/* Under the lock: matches every forward node with its history node,
 * consumers before producers (reverse topological order: every node is
 * reached from a head), and snapshots what backward reads. */
static int match_and_snapshot(bw *b) {
  const mxc__graph *g = b->fg;
  for (int i = 0; i < b->n_heads; ++i) {
    int id = mxc__graph_node_id(g, b->heads[i].node);
    MXC_FORWARD_IF_ERROR(bind_ag(b, id, b->head_owner[i]));
  }
  for (int id = g->n_nodes - 1; id >= 0; --id) {
    mxc__ag_node *a = b->ag_of[id];
    const mxc__node *n = g->nodes[id];
    MXC_RETURN_ERROR_IF(!a || a->node != n, MXC_ERR_INTERNAL,
                        FN ": recorded graph does not match its history");
    MXC_RETURN_ERROR_IF(a->freed, MXC_ERR_INVALID_ARGUMENT, k_freed,
                        n->op->name);
    for (int k = 0; k < n->n_inputs; ++k) {
      int in = mxc__graph_node_id(g, n->inputs[k].node);
      MXC_FORWARD_IF_ERROR(bind_ag(b, in, a->inputs[k]));
    }
    /* A history node keeps every output of its operator, hidden ones
     * included, as the graph numbers them: snap has exactly those slots. */
    MXC__ASSERT(a->n_out == g->entry_ptr[id + 1] - g->entry_ptr[id]);
    for (int j = 0; j < a->n_out; ++j) {
      mxc__ag_save(&b->snap[g->entry_ptr[id] + j], &a->vals[j]);
    }
    b->train[id] = a->is_train;
    if (a->marked && a->req != MXC__REQ_NULL) {
      int w = b->n_wrt++;
      MXC__ASSERT(w < g->n_nodes); /* at most one per node: wrt's size */
      b->wrt[w].node = a->node;
      b->wrt[w].index = 0;
      b->wrt_node[w] = id;
      mxc__ag_save(&b->grad[w], &a->grad);
      b->req[w] = a->req;
    }
  }
  return MXC_OK;
}

static int snapshot(bw *b, mxc__ndarray *const *heads) {
  int rc = MXC_OK;
  b->head_owner = zalloc((size_t)b->n_heads, sizeof *b->head_owner, &rc);
  b->heads = zalloc((size_t)b->n_heads, sizeof *b->heads, &rc);
  if (rc != MXC_OK) return rc;
  mxc__ag_lock();
  rc = take_heads(b, heads);
  mxc__ag_unlock();
  /* Nodes are immutable: indexing needs no lock. */
  if (rc == MXC_OK) rc = mxc__graph_build(b->heads, b->n_heads, &b->fg);
  if (rc != MXC_OK) return rc;
  int nn = b->fg->n_nodes;
  b->ag_of = zalloc((size_t)nn, sizeof *b->ag_of, &rc);
  b->snap = zalloc((size_t)b->fg->n_entries, sizeof *b->snap, &rc);
  b->train = zalloc((size_t)nn, sizeof *b->train, &rc);
  b->wrt = zalloc((size_t)nn, sizeof *b->wrt, &rc);
  b->wrt_node = zalloc((size_t)nn, sizeof *b->wrt_node, &rc);
  b->grad = zalloc((size_t)nn, sizeof *b->grad, &rc);
  b->req = zalloc((size_t)nn, sizeof *b->req, &rc);
  if (rc != MXC_OK) return rc;
  mxc__ag_lock();
  rc = match_and_snapshot(b);
  mxc__ag_unlock();
  int h = mxc__graph_node_id(b->fg, b->heads[0].node);
  b->default_train = rc == MXC_OK ? b->train[h] : 0;
  return rc;
}

/* ---- step 2: gradient nodes and their evaluation ---- */

static int find_op(const char *name, const mxc__op **out) {
  *out = mxc__op_find(name);
  MXC_RETURN_ERROR_IF(!*out, MXC_ERR_NOT_FOUND,
                      FN ": operator '%s' is not in this build", name);
  return MXC_OK;
}

static int make_head_grads(bw *b, mxc__ndarray *const *heads,
                           mxc__ndarray *const *given) {
  int rc = MXC_OK;
  b->hg_node = zalloc((size_t)b->n_heads, sizeof *b->hg_node, &rc);
  b->hg_val = zalloc((size_t)b->n_heads, sizeof *b->hg_val, &rc);
  const mxc__op *ones = NULL;
  if (rc == MXC_OK) rc = find_op("ones_like", &ones);
  for (int i = 0; i < b->n_heads && rc == MXC_OK; ++i) {
    rc = mxc__node_variable("head_grad", &b->hg_node[i]);
    if (rc != MXC_OK) break;
    if (given && given[i]) {
      rc = mxc__ndarray_clone_view(given[i], &b->hg_val[i]);
    } else {
      rc = mxc__op_invoke(ones, NULL, &heads[i], 1, &b->hg_val[i], 1, NULL);
    }
  }
  return rc;
}

/* Sparse gradient buffers written with MXC__REQ_WRITE receive their
 * gradient straight from the operator computing it (given as that
 * operator's output), so that a sparse kernel (dot(csr.T, dense),
 * _backward_Embedding) fills them as row_sparse without a dense
 * intermediate. Only for entries computed here and read by nothing else;
 * the rest go through write_grads. */
static void plan_direct(bw *b) {
  const mxc__graph *g = b->bg;
  for (int e = 0; e < g->n_entries; ++e) b->sink[e] = -1;
  for (int i = 0; i < b->n_wrt; ++i) {
    const mxc__node *n = b->res[i].node;
    if (!n || !n->op || b->grad[i].stype == MXC_STYPE_DEFAULT ||
        b->req[i] != MXC__REQ_WRITE ||
        mxc__graph_node_id(b->fg, n) >= 0) {
      continue;
    }
    int e = mxc__graph_entry_id(g, b->res[i]);
    if (b->sink[e] >= 0 || g->n_consumers[e] != 1) continue;
    b->sink[e] = i;
    b->direct[i] = 1;
  }
}

static int build_gradient(bw *b) {
  int rc = MXC_OK;
  mxc__entry *hg = zalloc((size_t)b->n_heads, sizeof *hg, &rc);
  b->res = zalloc((size_t)b->n_wrt, sizeof *b->res, &rc);
  mxc__entry *live = zalloc((size_t)b->n_wrt, sizeof *live, &rc);
  for (int i = 0; i < b->n_heads && rc == MXC_OK; ++i) {
    hg[i].node = b->hg_node[i];
    hg[i].index = 0;
  }
  if (rc == MXC_OK) {
    rc =
        mxc__gradient_build(b->heads, hg, b->n_heads, b->wrt, b->n_wrt, b->res);
  }
  int n_live = 0;
  for (int i = 0; i < b->n_wrt && rc == MXC_OK; ++i) {
    if (b->res[i].node) live[n_live++] = b->res[i];
  }
  if (rc == MXC_OK && n_live > 0) rc = mxc__graph_build(live, n_live, &b->bg);
  mxc__free(hg);
  mxc__free(live);
  if (rc != MXC_OK || !b->bg) return rc;
  int ne = b->bg->n_entries;
  b->val = zalloc((size_t)ne, sizeof *b->val, &rc);
  b->owned = zalloc((size_t)ne, sizeof *b->owned, &rc);
  b->remaining = zalloc((size_t)ne, sizeof *b->remaining, &rc);
  if (rc == MXC_OK) memcpy(b->remaining, b->bg->n_consumers, sizeof(int) * ne);
  b->sink = zalloc((size_t)ne, sizeof *b->sink, &rc);
  b->direct = zalloc((size_t)b->n_wrt, sizeof *b->direct, &rc);
  if (rc == MXC_OK) plan_direct(b);
  return rc;
}

/* Training mode for a gradient node: that of the first recorded call whose
 * values it reads. Kernels whose gradient depends on the mode (BatchNorm)
 * read their forward outputs, so they get the mode of their forward. */
static int mode_of(const bw *b, int id) {
  const mxc__graph *g = b->bg;
  for (int k = g->in_ptr[id]; k < g->in_ptr[id + 1]; ++k) {
    int p = mxc__graph_entry_node(g, g->in_entries[k]);
    int f = mxc__graph_node_id(b->fg, g->nodes[p]);
    if (f >= 0 && b->fg->nodes[f]->op) return b->train[f];
  }
  return b->default_train;
}

/* Binds a node that is not computed: forward values or head gradients. */
static int bind_node(bw *b, int id) {
  const mxc__graph *g = b->bg;
  const mxc__node *n = g->nodes[id];
  int e0 = g->entry_ptr[id];
  int f = mxc__graph_node_id(b->fg, n);
  if (f >= 0) {
    for (int j = 0; j < g->entry_ptr[id + 1] - e0; ++j) {
      b->val[e0 + j] = &b->snap[b->fg->entry_ptr[f] + j];
    }
    return MXC_OK;
  }
  for (int i = 0; i < b->n_heads; ++i) {
    if (b->hg_node[i] == n) {
      b->val[e0] = b->hg_val[i];
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INTERNAL,
                        FN ": gradient refers to unbound variable '%s'",
                        n->name);
}

/* ins and outs hold the most inputs and outputs of any node. */
static int run_node(bw *b, int id, mxc__ndarray **ins, mxc__ndarray **outs) {
  const mxc__graph *g = b->bg;
  const mxc__node *n = g->nodes[id];
  int n_in = n->n_inputs;
  for (int k = 0; k < n_in; ++k)
    ins[k] = b->val[g->in_entries[g->in_ptr[id] + k]];
  int e0 = g->entry_ptr[id];
  int n_out = g->entry_ptr[id + 1] - e0;
  for (int j = 0; j < n_out; ++j) {
    outs[j] = b->sink[e0 + j] >= 0 ? &b->grad[b->sink[e0 + j]] : NULL;
  }
  int prev = mxc__set_training(mode_of(b, id));
  int rc = mxc__op_invoke(n->op, n->param, ins, n_in, outs, n_out, NULL);
  mxc__set_training(prev);
  MXC_FORWARD_IF_ERROR(rc);
  for (int j = 0; j < n_out; ++j) {
    if (b->sink[e0 + j] >= 0) continue; /* the buffer, not ours */
    b->val[e0 + j] = outs[j];
    b->owned[e0 + j] = 1;
  }
  /* Pushed: inputs whose last consumer this was can go (pending work
   * keeps their storage alive). */
  for (int k = g->in_ptr[id]; k < g->in_ptr[id + 1]; ++k) {
    int e = g->in_entries[k];
    if (--b->remaining[e] == 0 && b->owned[e]) {
      mxc__ndarray_free(b->val[e]);
      b->val[e] = NULL;
      b->owned[e] = 0;
    }
  }
  return MXC_OK;
}

static int evaluate(bw *b) {
  const mxc__graph *g = b->bg;
  int max_in = 1, max_out = 1;
  for (int id = 0; id < g->n_nodes; ++id) {
    int n_out = g->entry_ptr[id + 1] - g->entry_ptr[id];
    if (g->nodes[id]->n_inputs > max_in) max_in = g->nodes[id]->n_inputs;
    if (n_out > max_out) max_out = n_out;
  }
  int rc = MXC_OK;
  mxc__ndarray **ins = zalloc((size_t)max_in, sizeof *ins, &rc);
  mxc__ndarray **outs = zalloc((size_t)max_out, sizeof *outs, &rc);
  for (int id = 0; id < g->n_nodes && rc == MXC_OK; ++id) {
    int is_fwd = mxc__graph_node_id(b->fg, g->nodes[id]) >= 0;
    rc = (is_fwd || !g->nodes[id]->op) ? bind_node(b, id)
                                       : run_node(b, id, ins, outs);
  }
  mxc__free(ins);
  mxc__free(outs);
  return rc;
}

/* ---- step 3: into the gradient buffers ---- */

static int write_grads(bw *b) {
  const mxc__op *copy = NULL, *zeros = NULL;
  MXC_FORWARD_IF_ERROR(find_op("_copy", &copy));
  MXC_FORWARD_IF_ERROR(find_op("zeros_like", &zeros));
  for (int i = 0; i < b->n_wrt; ++i) {
    mxc__ndarray *dst = &b->grad[i];
    mxc__req req = (mxc__req)b->req[i];
    if (b->direct && b->direct[i]) continue; /* written in run_node */
    if (b->res[i].node) {
      mxc__ndarray *src = b->val[mxc__graph_entry_id(b->bg, b->res[i])];
      MXC_FORWARD_IF_ERROR(mxc__op_invoke(copy, NULL, &src, 1, &dst, 1, &req));
    } else if (req == MXC__REQ_WRITE) {
      /* Zeros shaped like the variable (its own value: the buffer must not
       * be both read and written by one call). */
      mxc__ndarray *like = &b->snap[b->fg->entry_ptr[b->wrt_node[i]]];
      MXC_FORWARD_IF_ERROR(
          mxc__op_invoke(zeros, NULL, &like, 1, &dst, 1, &req));
    }
  }
  return MXC_OK;
}

/* ---- step 4 and the entry point ---- */

static void free_history(bw *b) {
  mxc__ag_lock();
  for (int id = 0; id < b->fg->n_nodes; ++id) {
    mxc__ag_node_free_history(b->ag_of[id]);
  }
  mxc__ag_unlock();
}

static int check_head_grads(int n, mxc__ndarray *const *heads,
                            mxc__ndarray *const *given) {
  char b1[160], b2[160];
  for (int i = 0; given && i < n; ++i) {
    const mxc__ndarray *g = given[i], *h = heads[i];
    if (!g) continue;
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&g->shape, &h->shape), MXC_ERR_SHAPE,
                        FN
                        ": head_grads[%d] has shape %s; heads[%d] has "
                        "shape %s (they must match)",
                        i, mxc__shape_str(&g->shape, b1, sizeof b1), i,
                        mxc__shape_str(&h->shape, b2, sizeof b2));
    MXC_RETURN_ERROR_IF(g->dtype != h->dtype, MXC_ERR_DTYPE,
                        FN ": head_grads[%d] and heads[%d] differ in dtype", i,
                        i);
  }
  return MXC_OK;
}

static int backward_now(int n, mxc__ndarray *const *heads,
                        mxc__ndarray *const *head_grads, int retain_graph) {
  MXC_RETURN_ERROR_IF(n < 1, MXC_ERR_INVALID_ARGUMENT,
                      FN ": n is %d; expected at least one head", n);
  MXC_FORWARD_IF_ERROR(check_head_grads(n, heads, head_grads));
  bw b;
  memset(&b, 0, sizeof b);
  b.n_heads = n;
  int rc = snapshot(&b, heads);
  if (rc == MXC_OK && b.n_wrt > 0) {
    rc = make_head_grads(&b, heads, head_grads);
    if (rc == MXC_OK) rc = build_gradient(&b);
    if (rc == MXC_OK && b.bg) rc = evaluate(&b);
    if (rc == MXC_OK) rc = write_grads(&b);
  }
  if (rc == MXC_OK && !retain_graph) free_history(&b);
  bw_free(&b);
  return rc;
}

/* The calling thread's part of a backward pass (building the gradient
 * graph and pushing its operators, whose runs are recorded on their own)
 * as a span. */
static int backward_profiled(int n, mxc__ndarray *const *heads,
                             mxc__ndarray *const *head_grads,
                             int retain_graph) {
  int64_t t0 = mxc__prof_now();
  int rc = backward_now(n, heads, head_grads, retain_graph);
  mxc__prof_span(MXC__PROF_OPERATOR, "autograd_backward", t0, NULL, NULL);
  return rc;
}

int mxc__autograd_backward(int n, mxc__ndarray *const *heads,
                           mxc__ndarray *const *head_grads, int retain_graph) {
  if (mxc__prof_on(MXC__PROF_OPERATOR)) {
    return backward_profiled(n, heads, head_grads, retain_graph);
  }
  return backward_now(n, heads, head_grads, retain_graph);
}
