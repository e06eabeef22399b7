#include "tests/fuse/fuse_shim.h"

#include <string.h>

#include "c_api/src/api_internal.h"
#include "core/base/alloc.h"
#include "core/fuse/fuse.h"
#include "core/graph/gradient.h"
#include "core/graph/graph.h"
#include "core/op/invoke.h"
#include "core/op/node.h"

#define MAXE 256

static mxc__node *N(const mxct_node *n) { return (mxc__node *)n; }
static mxct_node *T(mxc__node *n) { return (mxct_node *)n; }

static int to_int(const mxct_entry *e, int n, mxc__entry *out) {
  if (n > MAXE) return 0;
  for (int i = 0; i < n; ++i) {
    out[i].node = N(e[i].node);
    out[i].index = e[i].index;
  }
  return 1;
}

static void to_ext(const mxc__entry *e, int n, mxct_entry *out) {
  for (int i = 0; i < n; ++i) {
    out[i].node = T(e[i].node);
    out[i].index = e[i].index;
  }
}

mxct_node *mxct_var(const char *name) {
  mxc__node *n = NULL;
  return mxc__node_variable(name, &n) == MXC_OK ? T(n) : NULL;
}

mxct_node *mxct_op(const char *op, const char *const *keys,
                   const char *const *vals, int n_params,
                   const mxct_entry *inputs, int n_inputs, const char *name) {
  mxc__entry in[MAXE];
  if (!to_int(inputs, n_inputs, in)) return NULL;
  mxc__node *n = NULL;
  int rc = mxc__node_op(op, keys, vals, n_params, in, n_inputs, name, &n);
  return rc == MXC_OK ? T(n) : NULL;
}

void mxct_release(mxct_node *n) { mxc__node_release(N(n)); }

void mxct_release_entries(const mxct_entry *e, int n) {
  for (int i = 0; i < n; ++i) mxc__node_release(N(e[i].node));
}

int mxct_fuse(const mxct_entry *heads, int n, mxct_entry *out, int *n_fused) {
  mxc__entry h[MAXE] = {{0}}, o[MAXE];
  if (!to_int(heads, n, h)) return MXC_ERR_INVALID_ARGUMENT;
  memset(o, 0, sizeof o);
  int rc = mxc__fuse_graph(h, n, o, n_fused);
  if (rc == MXC_OK) to_ext(o, n, out);
  return rc;
}

int mxct_fuse_for(const mxct_entry *heads, int n, int dev_type,
                  mxct_entry *out, int *n_fused) {
  mxc__entry h[MAXE] = {{0}}, o[MAXE];
  if (!to_int(heads, n, h)) return MXC_ERR_INVALID_ARGUMENT;
  memset(o, 0, sizeof o);
  int rc = mxc__fuse_graph_for(h, n, dev_type, o, n_fused);
  if (rc == MXC_OK) to_ext(o, n, out);
  return rc;
}

int mxct_gradient(const mxct_entry *heads, const mxct_entry *head_grads,
                  int n_heads, const mxct_entry *wrt, int n_wrt,
                  mxct_entry *out) {
  mxc__entry h[MAXE] = {{0}}, hg[MAXE] = {{0}}, w[MAXE] = {{0}}, o[MAXE];
  if (!to_int(heads, n_heads, h) || !to_int(head_grads, n_heads, hg) ||
      !to_int(wrt, n_wrt, w)) {
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int rc = mxc__gradient_build(h, hg, n_heads, w, n_wrt, o);
  if (rc == MXC_OK) to_ext(o, n_wrt, out);
  return rc;
}

int mxct_nodes(const mxct_entry *heads, int n, mxct_node **out, int cap) {
  mxc__entry h[MAXE] = {{0}};
  mxc__graph *g = NULL;
  if (!to_int(heads, n, h) || mxc__graph_build(h, n, &g) != MXC_OK) return -1;
  int count = g->n_nodes;
  for (int i = 0; i < count && i < cap; ++i) out[i] = T(g->nodes[i]);
  mxc__graph_free(g); /* the nodes stay alive through the heads */
  return count;
}

const char *mxct_node_op(const mxct_node *n) {
  return N(n)->op ? N(n)->op->name : NULL;
}

const char *mxct_node_name(const mxct_node *n) { return N(n)->name; }

int mxct_node_n_inputs(const mxct_node *n) { return N(n)->n_inputs; }

mxct_entry mxct_node_input(const mxct_node *n, int k) {
  mxct_entry e = {T(N(n)->inputs[k].node), N(n)->inputs[k].index};
  return e;
}

const char *mxct_node_param(const mxct_node *n, const char *key) {
  for (int i = 0; i < N(n)->n_attrs; ++i) {
    if (!strcmp(N(n)->keys[i], key)) return N(n)->vals[i];
  }
  return NULL;
}

const char *mxct_node_uattr(const mxct_node *n, const char *key) {
  return mxc__node_get_uattr(N(n), key);
}

/* Values per entry id; one view each (owned). */
static int eval_node(const mxc__graph *g, int i, mxc__ndarray **val) {
  const mxc__node *n = g->nodes[i];
  mxc__ndarray *ins[MAXE];
  mxc__ndarray *outs[MAXE];
  int n_out = mxc__graph_node_outputs(n);
  if (n->n_inputs > MAXE || n_out > MAXE) return MXC_ERR_UNSUPPORTED;
  for (int k = 0; k < n->n_inputs; ++k) {
    ins[k] = val[g->in_entries[g->in_ptr[i] + k]];
  }
  memset(outs, 0, sizeof(outs[0]) * (size_t)n_out);
  MXC_FORWARD_IF_ERROR(
      mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs, n_out, NULL));
  for (int j = 0; j < n_out; ++j) val[g->entry_ptr[i] + j] = outs[j];
  return MXC_OK;
}

int mxct_eval(const mxct_entry *heads, int n_heads, mxct_node *const *vars,
              const mxc_ndarray *vals, int n_vars, mxc_ndarray *outs) {
  mxc__entry h[MAXE] = {{0}};
  mxc__graph *g = NULL;
  if (!to_int(heads, n_heads, h)) return MXC_ERR_INVALID_ARGUMENT;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(h, n_heads, &g));
  mxc__ndarray **val = mxc__calloc((size_t)g->n_entries + 1, sizeof *val);
  int rc = val ? MXC_OK : MXC_ERR_OOM;
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    if (n->op) {
      rc = eval_node(g, i, val);
      continue;
    }
    int v = 0;
    while (v < n_vars && N(vars[v]) != n) ++v;
    mxc__ndarray *a = NULL;
    rc = v < n_vars ? api_array(vals[v], "mxct_eval", &a)
                    : mxc__error_set(MXC_ERR_NOT_FOUND,
                                     "mxct_eval: variable '%s' is not bound",
                                     n->name);
    if (rc == MXC_OK) rc = mxc__ndarray_clone_view(a, &val[g->entry_ptr[i]]);
  }
  for (int k = 0; rc == MXC_OK && k < n_heads; ++k) {
    mxc__ndarray *c = NULL;
    rc = mxc__ndarray_clone_view(val[g->heads[k]], &c);
    if (rc == MXC_OK) rc = api_wrap_array(c, &outs[k]);
  }
  for (int e = 0; val && e < g->n_entries; ++e) mxc__ndarray_free(val[e]);
  mxc__free(val);
  mxc__graph_free(g);
  return rc;
}

int64_t mxct_alloc_live(void) { return mxc__alloc_live(); }
void mxct_fault_arm(int64_t n) { mxc__fault_alloc_arm(n, 0); }
int mxct_fault_fired(void) { return mxc__fault_alloc_fired(); }
const char *mxct_fuse_attr(void) { return MXC__FUSE_ATTR_NODES; }
