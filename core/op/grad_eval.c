#include "core/op/grad_eval.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/invoke.h"

#define MAX_NODES 256
#define MAX_OUTS 64

/* Values known for nodes: forward inputs/outputs/ograds are bound up
 * front; backward nodes are computed on demand (memoized). */
typedef struct memo {
  const mxc__node *node[MAX_NODES];
  mxc__ndarray *vals[MAX_NODES][MAX_OUTS];
  int owned[MAX_NODES]; /* computed here: arrays freed at the end */
  int n_vals[MAX_NODES];
  int n;
} memo;

static int memo_find(const memo *m, const mxc__node *n) {
  for (int i = 0; i < m->n; ++i) {
    if (m->node[i] == n) return i;
  }
  return -1;
}

static int memo_bind(memo *m, const mxc__node *n, mxc__ndarray *const *v,
                     int nv, int owned) {
  MXC_RETURN_ERROR_IF(m->n == MAX_NODES || nv > MAX_OUTS, MXC_ERR_UNSUPPORTED,
                      "gradient graph too large to evaluate");
  m->node[m->n] = n;
  for (int i = 0; i < nv; ++i) m->vals[m->n][i] = v[i];
  m->n_vals[m->n] = nv;
  m->owned[m->n] = owned;
  m->n++;
  return MXC_OK;
}

static int eval_entry(memo *m, mxc__entry e, mxc__ndarray **out);

static int eval_node(memo *m, const mxc__node *n) {
  MXC_RETURN_ERROR_IF(!n->op, MXC_ERR_INTERNAL,
                      "gradient refers to unbound variable '%s'", n->name);
  mxc__ndarray *ins[MAX_OUTS * 4];
  MXC_RETURN_ERROR_IF(n->n_inputs > MAX_OUTS * 4, MXC_ERR_UNSUPPORTED,
                      "gradient node with too many inputs");
  for (int i = 0; i < n->n_inputs; ++i) {
    MXC_FORWARD_IF_ERROR(eval_entry(m, n->inputs[i], &ins[i]));
  }
  int n_out = mxc__op_num_outputs(n->op, n->param);
  mxc__ndarray *outs[MAX_OUTS] = {0};
  MXC_RETURN_ERROR_IF(n_out > MAX_OUTS, MXC_ERR_UNSUPPORTED,
                      "gradient node with too many outputs");
  MXC_FORWARD_IF_ERROR(
      mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs, n_out, NULL));
  int rc = memo_bind(m, n, outs, n_out, 1);
  if (rc != MXC_OK) {
    for (int i = 0; i < n_out; ++i) mxc__ndarray_free(outs[i]);
  }
  return rc;
}

static int eval_entry(memo *m, mxc__entry e, mxc__ndarray **out) {
  int i = memo_find(m, e.node);
  if (i < 0) {
    MXC_FORWARD_IF_ERROR(eval_node(m, e.node));
    i = m->n - 1;
  }
  MXC_RETURN_ERROR_IF(e.index >= m->n_vals[i], MXC_ERR_INTERNAL,
                      "gradient entry index %d out of range", e.index);
  *out = m->vals[i][e.index];
  return MXC_OK;
}

static void memo_free(memo *m) {
  for (int i = 0; i < m->n; ++i) {
    if (!m->owned[i]) continue;
    for (int j = 0; j < m->n_vals[i]; ++j) mxc__ndarray_free(m->vals[i][j]);
  }
}

/* Variables for the forward inputs and output gradients, and the forward
 * node itself. */
typedef struct fwd_graph {
  mxc__node *vars[MAX_OUTS * 4];
  mxc__node *ovars[MAX_OUTS];
  mxc__node *fwd;
  mxc__entry ograd[MAX_OUTS];
  mxc__entry igrad[MAX_OUTS * 4];
  int n_in, n_vis;
} fwd_graph;

static void fwd_graph_free(fwd_graph *g) {
  for (int i = 0; i < g->n_in; ++i) {
    mxc__node_release(g->vars[i]);
    mxc__node_release(g->igrad[i].node);
  }
  for (int i = 0; i < g->n_vis; ++i) mxc__node_release(g->ovars[i]);
  mxc__node_release(g->fwd);
}

static int build(fwd_graph *g, const char *op_name, const char *const *keys,
                 const char *const *vals, int n_attrs, int n_in) {
  mxc__entry ins[MAX_OUTS * 4];
  MXC_RETURN_ERROR_IF(n_in > MAX_OUTS * 4, MXC_ERR_UNSUPPORTED,
                      "too many inputs");
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__node_variable("in", &g->vars[i]));
    g->n_in = i + 1;
    ins[i].node = g->vars[i];
    ins[i].index = 0;
  }
  MXC_FORWARD_IF_ERROR(
      mxc__node_op(op_name, keys, vals, n_attrs, ins, n_in, "fwd", &g->fwd));
  const mxc__op *op = g->fwd->op;
  MXC_RETURN_ERROR_IF(!op->gradient, MXC_ERR_UNSUPPORTED,
                      "operator '%s' is not differentiable", op->name);
  int n_out = mxc__op_num_outputs(op, g->fwd->param);
  int n_vis = op->n_visible_outputs ? op->n_visible_outputs : n_out;
  for (int i = 0; i < n_vis; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__node_variable("ograd", &g->ovars[i]));
    g->n_vis = i + 1;
    g->ograd[i].node = g->ovars[i];
    g->ograd[i].index = 0;
  }
  return op->gradient(g->fwd, g->ograd, g->igrad);
}

int mxc__grad_eval(const char *op_name, const char *const *keys,
                   const char *const *vals, int n_attrs,
                   mxc__ndarray *const *in, int n_in,
                   mxc__ndarray *const *out, int n_out,
                   mxc__ndarray *const *ograd, mxc__ndarray **igrad) {
  fwd_graph *g = mxc__calloc(1, sizeof *g);
  memo *m = mxc__calloc(1, sizeof *m);
  int rc = (g && m) ? MXC_OK
                    : mxc__error_set(MXC_ERR_OOM, "out of memory in gradient");
  if (rc == MXC_OK) rc = build(g, op_name, keys, vals, n_attrs, n_in);
  for (int i = 0; rc == MXC_OK && i < n_in; ++i) {
    rc = memo_bind(m, g->vars[i], &in[i], 1, 0);
  }
  if (rc == MXC_OK) rc = memo_bind(m, g->fwd, out, n_out, 0);
  for (int i = 0; rc == MXC_OK && i < g->n_vis; ++i) {
    rc = memo_bind(m, g->ovars[i], &ograd[i], 1, 0);
  }
  mxc__ndarray *res[MAX_OUTS * 4] = {0};
  for (int i = 0; rc == MXC_OK && i < n_in; ++i) {
    if (!g->igrad[i].node) continue;
    mxc__ndarray *v = NULL;
    rc = eval_entry(m, g->igrad[i], &v);
    if (rc == MXC_OK) rc = mxc__ndarray_clone_view(v, &res[i]);
  }
  if (rc == MXC_OK) {
    for (int i = 0; i < n_in; ++i) igrad[i] = res[i];
  } else {
    for (int i = 0; i < n_in; ++i) mxc__ndarray_free(res[i]);
  }
  if (m) memo_free(m);
  if (g) fwd_graph_free(g);
  mxc__free(m);
  mxc__free(g);
  return rc;
}
