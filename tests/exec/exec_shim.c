#include "tests/exec/exec_shim.h"

#include "c_api/src/api_internal.h"
#include "core/base/alloc.h"
#include "core/graph/graph.h"
#include "core/op/grad_eval.h"
#include "core/op/invoke.h"
#include "core/resource/training.h"


/* The walk is an indexed graph of the symbol: its node order is a
 * topological order, which is all the reference needs from it. */
struct mxct_walk {
  mxc__graph *g;
};

int mxct_walk_new(mxc_symbol sym, mxct_walk **out) {
  mxc__symbol *s;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "walk", &s));
  mxct_walk *w = mxc__calloc(1, sizeof *w);
  if (!w) return MXC_ERR_OOM;
  int rc = mxc__graph_build(s->outputs, s->n_outputs, &w->g);
  if (rc != MXC_OK) {
    mxc__free(w);
    return rc;
  }
  *out = w;
  return MXC_OK;
}

void mxct_walk_free(mxct_walk *w) {
  if (!w) return;
  mxc__graph_free(w->g);
  mxc__free(w);
}

int mxct_walk_size(const mxct_walk *w) { return w->g->n_nodes; }

static const mxc__node *node(const mxct_walk *w, int i) {
  return w->g->nodes[i];
}

const char *mxct_walk_op(const mxct_walk *w, int i) {
  return node(w, i)->op ? node(w, i)->op->name : NULL;
}
const char *mxct_walk_name(const mxct_walk *w, int i) {
  return node(w, i)->name;
}
int mxct_walk_n_attrs(const mxct_walk *w, int i) { return node(w, i)->n_attrs; }
const char *const *mxct_walk_keys(const mxct_walk *w, int i) {
  return (const char *const *)node(w, i)->keys;
}
const char *const *mxct_walk_vals(const mxct_walk *w, int i) {
  return (const char *const *)node(w, i)->vals;
}
int mxct_walk_n_inputs(const mxct_walk *w, int i) {
  return node(w, i)->n_inputs;
}

void mxct_walk_input(const mxct_walk *w, int i, int k, int *out_node,
                     int *out_index) {
  mxc__entry e = node(w, i)->inputs[k];
  *out_node = mxc__graph_node_id(w->g, e.node);
  *out_index = e.index;
}

int mxct_walk_n_outputs(const mxct_walk *w, int i) {
  return mxc__graph_node_outputs(node(w, i));
}

int mxct_walk_n_visible(const mxct_walk *w, int i) {
  const mxc__node *n = node(w, i);
  if (!n->op) return mxct_walk_n_outputs(w, i);
  return mxc__op_num_visible_outputs(n->op, n->param);
}

int mxct_walk_differentiable(const mxct_walk *w, int i) {
  return node(w, i)->op && node(w, i)->op->gradient;
}

int mxct_walk_n_heads(const mxct_walk *w) { return w->g->n_heads; }

void mxct_walk_head(const mxct_walk *w, int j, int *out_node, int *out_index) {
  int e = w->g->heads[j];
  *out_node = mxc__graph_entry_node(w->g, e);
  *out_index = e - w->g->entry_ptr[*out_node];
}

static int unwrap(const mxc_ndarray *h, int n, mxc__ndarray **out) {
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(h[i], "shim", &out[i]));
  }
  return MXC_OK;
}

/* k zeroed arrays of n entries each, in one block (mxc__free it). */
static mxc__ndarray **arrays(int k, int n) {
  return mxc__calloc((size_t)k * (size_t)(n > 0 ? n : 1),
                     sizeof(mxc__ndarray *));
}

int mxct_walk_invoke(const mxct_walk *w, int i, const mxc_ndarray *in,
                     mxc_ndarray *out, int is_train) {
  const mxc__node *n = node(w, i);
  int n_out = mxc__op_num_outputs(n->op, n->param);
  int m = n->n_inputs > n_out ? n->n_inputs : n_out;
  mxc__ndarray **ins = arrays(2, m), **outs = ins ? ins + m : NULL;
  if (!ins) return MXC_ERR_OOM;
  int rc = unwrap(in, n->n_inputs, ins);
  int prev = mxc__set_training(is_train);
  if (rc == MXC_OK) {
    rc = mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs, n_out,
                        NULL);
  }
  mxc__set_training(prev);
  for (int k = 0; k < n_out; ++k) {
    out[k] = NULL;
    if (rc == MXC_OK) rc = api_wrap_array(outs[k], &out[k]);
  }
  mxc__free(ins);
  return rc;
}

int mxct_walk_grad(const mxct_walk *w, int i, const mxc_ndarray *in,
                   const mxc_ndarray *out, const mxc_ndarray *ograd,
                   mxc_ndarray *igrad, int is_train) {
  const mxc__node *n = node(w, i);
  int n_out = mxct_walk_n_outputs(w, i), n_vis = mxct_walk_n_visible(w, i);
  int m = n->n_inputs > n_out ? n->n_inputs : n_out;
  mxc__ndarray **ins = arrays(4, m);
  if (!ins) return MXC_ERR_OOM;
  mxc__ndarray **outs = ins + m, **og = ins + 2 * m, **ig = ins + 3 * m;
  int rc = unwrap(in, n->n_inputs, ins);
  if (rc == MXC_OK) rc = unwrap(out, n_out, outs);
  if (rc == MXC_OK) rc = unwrap(ograd, n_vis, og);
  int prev = mxc__set_training(is_train);
  if (rc == MXC_OK) {
    rc = mxc__grad_eval(n->op->name, (const char *const *)n->keys,
                        (const char *const *)n->vals, n->n_attrs, ins,
                        n->n_inputs, outs, n_out, og, ig);
  }
  mxc__set_training(prev);
  for (int k = 0; k < n->n_inputs; ++k) {
    igrad[k] = NULL;
    if (rc == MXC_OK && ig[k]) rc = api_wrap_array(ig[k], &igrad[k]);
  }
  mxc__free(ins);
  return rc;
}

long long mxct_alloc_live(void) { return (long long)mxc__alloc_live(); }
long long mxct_handle_live(void) { return (long long)mxc__handle_live(); }
void mxct_fault_arm(long long n) { mxc__fault_alloc_arm(n, 0); }
int mxct_fault_fired(void) { return mxc__fault_alloc_fired(); }

long long mxct_write_version(mxc_ndarray a) {
  mxc__ndarray *p = NULL;
  if (api_array(a, "mxct_write_version", &p) != MXC_OK) return -1;
  return (long long)mxc__ndarray_version(p);
}
