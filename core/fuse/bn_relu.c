/* BatchNorm + relu fusion (see fuse.h).
 *
 * In a training step each BatchNorm of a ResNet feeding a relu wrote its
 * output, and the relu read it and wrote another array of the same size:
 * a whole pass over memory per pair that oneDNN's batch normalization
 * does inside its own (the relu post-step of dnnl_fuse_norm_relu).
 *
 * The pass runs on the DAG after the gradient pass, so the gradient
 * nodes stay BatchNorm's and the relu's, and their readers of
 * BatchNorm's output y are given the relu's output z = relu(y) instead:
 *  - _backward_BatchNorm lists y among its inputs (input 6) only to keep
 *    it alive: no kernel reads its values (ops/nn/batch_norm.c,
 *    backends/onednn/bn.c; the GPU's run on GPU executors, where this
 *    pass does not);
 *  - relu's gradient (_backward_Activation act_type=relu, _backward_relu)
 *    reads its input (input 1) only for the mask "x above 0" and NaN,
 *    and z is above 0 exactly where y is, and NaN where y is.
 * So a BatchNorm qualifies when its output 0 is no head and is read by
 * exactly one relu (Activation act_type=relu, or relu) and otherwise
 * only by those two kinds of node in those slots.
 *
 * The same two facts let every relu's gradient read the relu's output
 * instead of its input (where the relu comes before the gradient node in
 * the order, so that its new node exists): a residual sum feeding a relu
 * is then read by that relu alone, and element-wise fusion, which runs
 * next, computes sum and relu in one pass without storing the sum (a
 * ResNet's eight block ends). MXC_FUSE_RELU_GRAD=0 in the environment
 * leaves the gradients' inputs alone (for comparisons).
 *
 * Rebuild as in fuse.c: nodes in topological order, variables and
 * untouched nodes shared, nodes reading a replaced entry re-created. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/strbuf.h"
#include "core/fuse/fuse.h"
#include "core/graph/graph.h"

#define FUSED_OP "_FusedBatchNormReLU"
#define BN_BWD_OUTPUT_SLOT 6 /* _backward_BatchNorm's "output" input */
#define RELU_BWD_DATA_SLOT 1 /* relu gradients' "data" input */

typedef struct bnr_state {
  const mxc__graph *g;
  const mxc__op *bn, *bn_bwd, *act, *relu, *act_bwd, *relu_bwd;
  int *relu_of; /* per node: BatchNorm -> its relu (-1 none, -2 refused) */
  int *bn_of;   /* per node: a fused relu -> its BatchNorm, else -1 */
  int *relu_on; /* per entry: a relu node reading it as input 0, else -1 */
  mxc__node **newnode; /* per node id (owned) */
} bnr_state;

static int oom(void) {
  return mxc__error_set(MXC_ERR_OOM, "BatchNorm-relu fusion: out of memory");
}

static const char *attr(const mxc__node *n, const char *key) {
  for (int i = 0; i < n->n_attrs; ++i) {
    if (strcmp(n->keys[i], key) == 0) return n->vals[i];
  }
  return NULL;
}

/* n is a relu (bwd = 0) or a relu's gradient (bwd = 1). */
static int is_relu(const bnr_state *s, const mxc__node *n, int bwd) {
  if (n->op && n->op == (bwd ? s->relu_bwd : s->relu)) return 1;
  const char *t =
      n->op && n->op == (bwd ? s->act_bwd : s->act) ? attr(n, "act_type")
                                                     : NULL;
  return t && strcmp(t, "relu") == 0;
}

/* Node v reads entry e as its input `slot`: records what that means for
 * e's producer when it is a BatchNorm and e its output 0. */
static void note_reader(bnr_state *s, int v, int slot, int e) {
  const mxc__graph *g = s->g;
  int p = mxc__graph_entry_node(g, e);
  if (g->nodes[p]->op != s->bn || e != g->entry_ptr[p]) return;
  const mxc__node *n = g->nodes[v];
  if (n->op == s->bn_bwd && slot == BN_BWD_OUTPUT_SLOT) return;
  if (slot == RELU_BWD_DATA_SLOT && is_relu(s, n, 1)) return;
  int first = s->relu_of[p] == -1;
  s->relu_of[p] = first && slot == 0 && is_relu(s, n, 0) ? v : -2;
}

/* Fills relu_of and bn_of. */
static void find_pairs(bnr_state *s) {
  const mxc__graph *g = s->g;
  for (int i = 0; i < g->n_nodes; ++i) s->relu_of[i] = s->bn_of[i] = -1;
  for (int v = 0; v < g->n_nodes; ++v) {
    for (int k = g->in_ptr[v]; k < g->in_ptr[v + 1]; ++k) {
      note_reader(s, v, k - g->in_ptr[v], g->in_entries[k]);
    }
  }
  for (int h = 0; h < g->n_heads; ++h) {
    int p = mxc__graph_entry_node(g, g->heads[h]);
    if (g->nodes[p]->op == s->bn && g->heads[h] == g->entry_ptr[p]) {
      s->relu_of[p] = -2;
    }
  }
  for (int p = 0; p < g->n_nodes; ++p) {
    if (s->relu_of[p] >= 0) s->bn_of[s->relu_of[p]] = p;
  }
}

/* Fills relu_on (left -1 throughout under MXC_FUSE_RELU_GRAD=0). */
static void find_relu_inputs(bnr_state *s) {
  const mxc__graph *g = s->g;
  for (int e = 0; e < g->n_entries; ++e) s->relu_on[e] = -1;
  const char *env = getenv("MXC_FUSE_RELU_GRAD");
  if (env && strcmp(env, "0") == 0) return;
  for (int v = 0; v < g->n_nodes; ++v) {
    int e = g->in_ptr[v] < g->in_ptr[v + 1] ? g->in_entries[g->in_ptr[v]] : -1;
    if (e >= 0 && s->relu_on[e] < 0 && is_relu(s, g->nodes[v], 0)) {
      s->relu_on[e] = v;
    }
  }
}

/* The entry of the new DAG for entry id e of the old one (borrowed): a
 * fused relu's output is its BatchNorm's fused node's output 0. */
static mxc__entry mapped(const bnr_state *s, int e) {
  int p = mxc__graph_entry_node(s->g, e);
  if (s->bn_of[p] >= 0) return (mxc__entry){s->newnode[s->bn_of[p]], 0};
  return (mxc__entry){s->newnode[p], e - s->g->entry_ptr[p]};
}

/* Node i with the new inputs: itself when they are unchanged, else a
 * copy under op_name (the fused operator for a paired BatchNorm) with
 * the same parameter strings and attributes, named `name`. */
static int remake(bnr_state *s, int i, const char *op_name, const char *name,
                  mxc__node **out) {
  const mxc__graph *g = s->g;
  mxc__node *n = g->nodes[i];
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)(n->n_inputs + 1));
  if (!ins) return oom();
  int same = strcmp(op_name, n->op->name) == 0;
  int grad = is_relu(s, n, 1);
  for (int k = 0; k < n->n_inputs; ++k) {
    int e = g->in_entries[g->in_ptr[i] + k], r = s->relu_on[e];
    /* A relu gradient's data: the relu's output where that node is made. */
    if (grad && k == RELU_BWD_DATA_SLOT && r >= 0 && r < i) {
      e = g->entry_ptr[r];
    }
    ins[k] = mapped(s, e);
    same &= ins[k].node == n->inputs[k].node &&
            ins[k].index == n->inputs[k].index;
  }
  int rc = MXC_OK;
  mxc__node *c = NULL;
  if (same) {
    mxc__node_retain(n);
    c = n;
  } else {
    rc = mxc__node_op(op_name, (const char *const *)n->keys,
                      (const char *const *)n->vals, n->n_attrs, ins,
                      n->n_inputs, name, &c);
    for (int a = 0; rc == MXC_OK && a < n->n_uattrs; ++a) {
      rc = mxc__node_set_uattr(c, n->ukeys[a], n->uvals[a]);
    }
  }
  mxc__free(ins);
  if (rc != MXC_OK) {
    mxc__node_release(c);
    return rc;
  }
  *out = c;
  return MXC_OK;
}

/* The fused node of BatchNorm i, named after both nodes. */
static int make_fused(bnr_state *s, int i, mxc__node **out) {
  const mxc__graph *g = s->g;
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  mxc__sbuf_printf(&b, "fused_%s_%s", g->nodes[i]->name,
                   g->nodes[s->relu_of[i]]->name);
  char *name = NULL;
  int rc = mxc__sbuf_finish(&b, "BatchNorm-relu fusion", &name);
  if (rc == MXC_OK) rc = remake(s, i, FUSED_OP, name, out);
  mxc__free(name);
  return rc;
}

static int rebuild(bnr_state *s, int *n_fused) {
  const mxc__graph *g = s->g;
  for (int i = 0; i < g->n_nodes; ++i) {
    mxc__node *n = g->nodes[i];
    if (s->bn_of[i] >= 0) continue; /* a fused relu: no node of its own */
    if (!n->op) {
      mxc__node_retain(n);
      s->newnode[i] = n;
    } else if (s->relu_of[i] >= 0) {
      MXC_FORWARD_IF_ERROR(make_fused(s, i, &s->newnode[i]));
      ++*n_fused;
    } else {
      MXC_FORWARD_IF_ERROR(remake(s, i, n->op->name, n->name, &s->newnode[i]));
    }
  }
  return MXC_OK;
}

static void state_free(bnr_state *s) {
  for (int i = 0; s->newnode && i < s->g->n_nodes; ++i) {
    mxc__node_release(s->newnode[i]);
  }
  mxc__free(s->newnode);
  mxc__free(s->relu_of);
  mxc__free(s->bn_of);
  mxc__free(s->relu_on);
}

int mxc__fuse_bn_relu(const mxc__entry *heads, int n_heads,
                      mxc__entry *out_heads, int *out_n_fused) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(heads, n_heads, &g));
  bnr_state s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.bn = mxc__op_find("BatchNorm");
  s.bn_bwd = mxc__op_find("_backward_BatchNorm");
  s.act = mxc__op_find("Activation");
  s.relu = mxc__op_find("relu");
  s.act_bwd = mxc__op_find("_backward_Activation");
  s.relu_bwd = mxc__op_find("_backward_relu");
  size_t n = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
  s.relu_of = mxc__malloc(sizeof(int) * n);
  s.bn_of = mxc__malloc(sizeof(int) * n);
  s.newnode = mxc__calloc(n, sizeof(mxc__node *));
  s.relu_on = mxc__malloc(sizeof(int) * (size_t)(g->n_entries + 1));
  int rc = s.relu_of && s.bn_of && s.newnode && s.relu_on ? MXC_OK : oom();
  int n_fused = 0;
  if (rc == MXC_OK && (!s.bn || !mxc__op_find(FUSED_OP))) {
    rc = mxc__error_set(MXC_ERR_INTERNAL,
                        "BatchNorm-relu fusion: BatchNorm or " FUSED_OP
                        " is not registered");
  }
  if (rc == MXC_OK) find_pairs(&s);
  if (rc == MXC_OK) find_relu_inputs(&s);
  if (rc == MXC_OK) rc = rebuild(&s, &n_fused);
  if (rc == MXC_OK) {
    for (int h = 0; h < n_heads; ++h) {
      mxc__entry e = mapped(&s, g->heads[h]);
      out_heads[h] = mxc__entry_ref(e.node, e.index);
    }
    if (out_n_fused) *out_n_fused = n_fused;
  }
  state_free(&s);
  mxc__graph_free(g);
  return rc;
}
