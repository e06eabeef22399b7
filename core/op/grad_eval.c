#include "core/op/grad_eval.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/invoke.h"

/* Values known for nodes: forward inputs/outputs/ograds are bound up
 * front; backward nodes are computed on demand (memoized). Sized by the
 * graph: a variadic operator's gradient has as many nodes and values as
 * the operator has inputs (no cap but MXC__OP_MAX_ARITY, core/op/op.h). */
typedef struct memo_ent {
  const mxc__node *node;
  mxc__ndarray **vals; /* n_vals, a heap copy */
  int n_vals;
  int owned; /* computed here: arrays freed at the end */
} memo_ent;

typedef struct memo {
  memo_ent *ent;
  int n, cap;
} memo;

static int memo_find(const memo *m, const mxc__node *n) {
  for (int i = 0; i < m->n; ++i) {
    if (m->ent[i].node == n) return i;
  }
  return -1;
}

static int memo_bind(memo *m, const mxc__node *n, mxc__ndarray *const *v,
                     int nv, int owned) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    memo_ent *e = mxc__realloc(m->ent, sizeof *e * (size_t)cap);
    MXC_RETURN_ERROR_IF(!e, MXC_ERR_OOM,
                        "out of memory evaluating a gradient");
    m->ent = e;
    m->cap = cap;
  }
  mxc__ndarray **vals = mxc__malloc(sizeof *vals * (size_t)(nv > 0 ? nv : 1));
  MXC_RETURN_ERROR_IF(!vals, MXC_ERR_OOM,
                      "out of memory evaluating a gradient");
  for (int i = 0; i < nv; ++i) vals[i] = v[i];
  memo_ent *e = &m->ent[m->n++];
  e->node = n;
  e->vals = vals;
  e->n_vals = nv;
  e->owned = owned;
  return MXC_OK;
}

static int eval_entry(memo *m, mxc__entry e, mxc__ndarray **out);

/* Evaluates n's inputs into ins, then runs n into outs. */
static int run_node(memo *m, const mxc__node *n, mxc__ndarray **ins,
                    mxc__ndarray **outs, int n_out) {
  for (int i = 0; i < n->n_inputs; ++i) {
    MXC_FORWARD_IF_ERROR(eval_entry(m, n->inputs[i], &ins[i]));
  }
  MXC_FORWARD_IF_ERROR(
      mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs, n_out, NULL));
  int rc = memo_bind(m, n, outs, n_out, 1);
  if (rc != MXC_OK) {
    for (int i = 0; i < n_out; ++i) mxc__ndarray_free(outs[i]);
  }
  return rc;
}

static int eval_node(memo *m, const mxc__node *n) {
  MXC_RETURN_ERROR_IF(!n->op, MXC_ERR_INTERNAL,
                      "gradient refers to unbound variable '%s'", n->name);
  int n_out = mxc__op_num_outputs(n->op, n->param);
  size_t n_arr = (size_t)n->n_inputs + (size_t)(n_out > 0 ? n_out : 0);
  mxc__ndarray **arr = mxc__calloc(n_arr ? n_arr : 1, sizeof *arr);
  MXC_RETURN_ERROR_IF(!arr, MXC_ERR_OOM,
                      "out of memory evaluating a gradient");
  int rc = run_node(m, n, arr, arr + n->n_inputs, n_out);
  mxc__free(arr);
  return rc;
}

static int eval_entry(memo *m, mxc__entry e, mxc__ndarray **out) {
  int i = memo_find(m, e.node);
  if (i < 0) {
    MXC_FORWARD_IF_ERROR(eval_node(m, e.node));
    i = m->n - 1;
  }
  MXC_RETURN_ERROR_IF(e.index >= m->ent[i].n_vals, MXC_ERR_INTERNAL,
                      "gradient entry index %d out of range", e.index);
  *out = m->ent[i].vals[e.index];
  return MXC_OK;
}

static void memo_free(memo *m) {
  for (int i = 0; i < m->n; ++i) {
    memo_ent *e = &m->ent[i];
    for (int j = 0; e->owned && j < e->n_vals; ++j) {
      mxc__ndarray_free(e->vals[j]);
    }
    mxc__free(e->vals);
  }
  mxc__free(m->ent);
}

/* Variables for the forward inputs and output gradients, and the forward
 * node itself. vars and igrad: n_in each; ovars and ograd: one per
 * visible output. */
typedef struct fwd_graph {
  mxc__node **vars, **ovars;
  mxc__node *fwd;
  mxc__entry *ograd, *igrad;
  int n_in, n_vis;
} fwd_graph;

static void fwd_graph_free(fwd_graph *g) {
  for (int i = 0; i < g->n_in; ++i) {
    mxc__node_release(g->vars[i]);
    if (g->igrad) mxc__node_release(g->igrad[i].node);
  }
  for (int i = 0; i < g->n_vis; ++i) mxc__node_release(g->ovars[i]);
  mxc__node_release(g->fwd);
  mxc__free(g->vars);
  mxc__free(g->ovars);
  mxc__free(g->ograd);
  mxc__free(g->igrad);
}

/* Arrays of g for n_in inputs (zeroed). */
static int alloc_inputs(fwd_graph *g, int n_in, mxc__entry **ins) {
  size_t n = (size_t)(n_in > 0 ? n_in : 1);
  g->vars = mxc__calloc(n, sizeof *g->vars);
  g->igrad = mxc__calloc(n, sizeof *g->igrad);
  *ins = mxc__calloc(n, sizeof **ins);
  MXC_RETURN_ERROR_IF(!g->vars || !g->igrad || !*ins, MXC_ERR_OOM,
                      "out of memory building a gradient of %d inputs",
                      n_in);
  return MXC_OK;
}

static int add_ograds(fwd_graph *g) {
  const mxc__op *op = g->fwd->op;
  int n_vis = mxc__op_num_grad_outputs(op, g->fwd->param);
  size_t n = (size_t)(n_vis > 0 ? n_vis : 1);
  g->ovars = mxc__calloc(n, sizeof *g->ovars);
  g->ograd = mxc__calloc(n, sizeof *g->ograd);
  MXC_RETURN_ERROR_IF(!g->ovars || !g->ograd, MXC_ERR_OOM,
                      "out of memory building a gradient of %d outputs",
                      n_vis);
  for (int i = 0; i < n_vis; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__node_variable("ograd", &g->ovars[i]));
    g->n_vis = i + 1;
    g->ograd[i].node = g->ovars[i];
    g->ograd[i].index = 0;
  }
  return MXC_OK;
}

static int build_with(fwd_graph *g, const char *op_name,
                      const char *const *keys, const char *const *vals,
                      int n_attrs, int n_in, mxc__entry *ins) {
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
  MXC_FORWARD_IF_ERROR(add_ograds(g));
  return op->gradient(g->fwd, g->ograd, g->igrad);
}

static int build(fwd_graph *g, const char *op_name, const char *const *keys,
                 const char *const *vals, int n_attrs, int n_in) {
  MXC_RETURN_ERROR_IF(n_in < 0 || n_in > MXC__OP_MAX_ARITY,
                      MXC_ERR_INVALID_ARGUMENT,
                      "gradient of '%s': %d inputs; expected 0..%d",
                      op_name, n_in, MXC__OP_MAX_ARITY);
  mxc__entry *ins = NULL;
  int rc = alloc_inputs(g, n_in, &ins);
  if (rc == MXC_OK) {
    rc = build_with(g, op_name, keys, vals, n_attrs, n_in, ins);
  }
  mxc__free(ins);
  return rc;
}

/* Evaluates every input gradient into res (n_in entries, NULL where an
 * input has none). */
static int eval_igrads(memo *m, const fwd_graph *g, int n_in,
                       mxc__ndarray **res) {
  for (int i = 0; i < n_in; ++i) {
    if (!g->igrad[i].node) continue;
    mxc__ndarray *v = NULL;
    MXC_FORWARD_IF_ERROR(eval_entry(m, g->igrad[i], &v));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(v, &res[i]));
  }
  return MXC_OK;
}

int mxc__grad_eval(const char *op_name, const char *const *keys,
                   const char *const *vals, int n_attrs,
                   mxc__ndarray *const *in, int n_in,
                   mxc__ndarray *const *out, int n_out,
                   mxc__ndarray *const *ograd, mxc__ndarray **igrad) {
  fwd_graph g;
  memo m;
  memset(&g, 0, sizeof g);
  memset(&m, 0, sizeof m);
  int rc = build(&g, op_name, keys, vals, n_attrs, n_in);
  for (int i = 0; rc == MXC_OK && i < n_in; ++i) {
    rc = memo_bind(&m, g.vars[i], &in[i], 1, 0);
  }
  if (rc == MXC_OK) rc = memo_bind(&m, g.fwd, out, n_out, 0);
  for (int i = 0; rc == MXC_OK && i < g.n_vis; ++i) {
    rc = memo_bind(&m, g.ovars[i], &ograd[i], 1, 0);
  }
  mxc__ndarray **res = NULL;
  if (rc == MXC_OK) {
    res = mxc__calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *res);
    if (!res) rc = mxc__error_set(MXC_ERR_OOM, "out of memory in gradient");
  }
  if (rc == MXC_OK) rc = eval_igrads(&m, &g, n_in, res);
  for (int i = 0; res && i < n_in; ++i) {
    if (rc == MXC_OK) {
      igrad[i] = res[i];
    } else {
      mxc__ndarray_free(res[i]);
    }
  }
  mxc__free(res);
  memo_free(&m);
  fwd_graph_free(&g);
  return rc;
}
