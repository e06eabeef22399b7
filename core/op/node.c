#include "core/op/node.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/arity.h"

/* Frees n's own memory; pushes inputs whose last reference it held onto
 * the list at *pending. */
static void node_free_one(mxc__node *n, mxc__node **pending) {
  for (int i = 0; i < n->n_inputs; ++i) {
    mxc__node *in = n->inputs[i].node;
    if (in &&
        atomic_fetch_sub_explicit(&in->refs, 1, memory_order_acq_rel) == 1) {
      in->free_next = *pending;
      *pending = in;
    }
  }
  for (int i = 0; i < n->n_attrs; ++i) {
    mxc__free(n->keys[i]);
    mxc__free(n->vals[i]);
  }
  mxc__free(n->keys);
  mxc__free(n->vals);
  for (int i = 0; i < n->n_uattrs; ++i) {
    mxc__free(n->ukeys[i]);
    mxc__free(n->uvals[i]);
  }
  mxc__free(n->ukeys);
  mxc__free(n->uvals);
  mxc__free(n->inputs);
  mxc__free(n->param);
  mxc__free(n->name);
  mxc__free(n);
}

/* Iterative, so that a graph tens of thousands of nodes deep (an unrolled
 * network) cannot overflow the stack when its last reference goes. */
static void node_free(mxc__node *n) {
  n->free_next = NULL;
  while (n) {
    mxc__node *pending = n->free_next;
    node_free_one(n, &pending);
    n = pending;
  }
}

void mxc__node_retain(mxc__node *n) {
  atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

void mxc__node_release(mxc__node *n) {
  if (n && atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1) {
    node_free(n);
  }
}

mxc__entry mxc__entry_ref(mxc__node *n, int i) {
  mxc__node_retain(n);
  mxc__entry e = {n, i};
  return e;
}

static int node_alloc(const char *name, mxc__node **out) {
  mxc__node *n = mxc__calloc(1, sizeof *n);
  char *nm = mxc__strdup(name ? name : "");
  if (!n || !nm) {
    mxc__free(n);
    mxc__free(nm);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a node");
  }
  atomic_init(&n->refs, 1);
  n->name = nm;
  *out = n;
  return MXC_OK;
}

int mxc__node_variable(const char *name, mxc__node **out) {
  return node_alloc(name, out);
}

const char *mxc__node_get_uattr(const mxc__node *n, const char *key) {
  for (int i = 0; i < n->n_uattrs; ++i) {
    if (strcmp(n->ukeys[i], key) == 0) return n->uvals[i];
  }
  return NULL;
}

int mxc__node_set_uattr(mxc__node *n, const char *key, const char *val) {
  char *v = mxc__strdup(val);
  MXC_RETURN_ERROR_IF(!v, MXC_ERR_OOM, "out of memory setting attribute");
  for (int i = 0; i < n->n_uattrs; ++i) {
    if (strcmp(n->ukeys[i], key) == 0) {
      mxc__free(n->uvals[i]);
      n->uvals[i] = v;
      return MXC_OK;
    }
  }
  char *k = mxc__strdup(key);
  char **nk = k ? mxc__realloc(n->ukeys, sizeof(char *) * (size_t)(n->n_uattrs + 1)) : NULL;
  if (nk) n->ukeys = nk;
  char **nv = nk ? mxc__realloc(n->uvals, sizeof(char *) * (size_t)(n->n_uattrs + 1)) : NULL;
  if (nv) n->uvals = nv;
  if (!nv) {
    mxc__free(k);
    mxc__free(v);
    return mxc__error_set(MXC_ERR_OOM, "out of memory setting attribute");
  }
  n->ukeys[n->n_uattrs] = k;
  n->uvals[n->n_uattrs] = v;
  n->n_uattrs++;
  return MXC_OK;
}

static int copy_attrs(mxc__node *n, const char *const *keys,
                      const char *const *vals, int n_attrs) {
  if (n_attrs == 0) return MXC_OK;
  n->keys = mxc__calloc((size_t)n_attrs, sizeof(char *));
  n->vals = mxc__calloc((size_t)n_attrs, sizeof(char *));
  MXC_RETURN_ERROR_IF(!n->keys || !n->vals, MXC_ERR_OOM,
                      "out of memory creating a node");
  for (int i = 0; i < n_attrs; ++i) {
    n->keys[i] = mxc__strdup(keys[i]);
    n->vals[i] = mxc__strdup(vals[i]);
    n->n_attrs = i + 1;
    MXC_RETURN_ERROR_IF(!n->keys[i] || !n->vals[i], MXC_ERR_OOM,
                        "out of memory creating a node");
  }
  return MXC_OK;
}

/* Checks the input count and takes a reference on each input. */
static int set_inputs(mxc__node *n, const mxc__entry *inputs, int n_inputs) {
  int want = mxc__op_num_inputs(n->op, n->param);
  MXC_RETURN_ERROR_IF(n_inputs != want, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': got %d inputs; expected %d",
                      n->op->name, n_inputs, want);
  if (n_inputs == 0) return MXC_OK;
  n->inputs = mxc__calloc((size_t)n_inputs, sizeof(mxc__entry));
  MXC_RETURN_ERROR_IF(!n->inputs, MXC_ERR_OOM,
                      "out of memory creating a node");
  for (int i = 0; i < n_inputs; ++i) {
    n->inputs[i] = mxc__entry_ref(inputs[i].node, inputs[i].index);
  }
  n->n_inputs = n_inputs;
  return MXC_OK;
}

/* Finishes node n (op and param set): attributes, then inputs. */
static int node_finish(mxc__node *n, const char *const *keys,
                       const char *const *vals, int n_attrs,
                       const mxc__entry *inputs, int n_inputs,
                       mxc__node **out) {
  int rc = copy_attrs(n, keys, vals, n_attrs);
  if (rc == MXC_OK) rc = set_inputs(n, inputs, n_inputs);
  if (rc != MXC_OK) {
    node_free(n);
    return rc;
  }
  *out = n;
  return MXC_OK;
}

int mxc__node_op(const char *op_name, const char *const *keys,
                 const char *const *vals, int n_attrs,
                 const mxc__entry *inputs, int n_inputs, const char *name,
                 mxc__node **out) {
  const mxc__op *op;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op_name, &op));
  mxc__node *n;
  MXC_FORWARD_IF_ERROR(node_alloc(name, &n));
  n->op = op;
  int rc = mxc__op_parse_params(op, keys, vals, n_attrs, &n->param);
  if (rc != MXC_OK) {
    node_free(n);
    return rc;
  }
  return node_finish(n, keys, vals, n_attrs, inputs, n_inputs, out);
}

int mxc__node_op_parsed(const mxc__op *op, const void *param,
                        const char *const *keys, const char *const *vals,
                        int n_attrs, const mxc__entry *inputs, int n_inputs,
                        const char *name, mxc__node **out) {
  mxc__node *n;
  MXC_FORWARD_IF_ERROR(node_alloc(name, &n));
  n->op = op;
  n->param = mxc__malloc(op->param_size ? op->param_size : 1);
  if (!n->param) {
    node_free(n);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a node");
  }
  if (op->param_size) memcpy(n->param, param, op->param_size);
  return node_finish(n, keys, vals, n_attrs, inputs, n_inputs, out);
}

int mxc__node_op_like(const char *op_name, const mxc__node *like,
                      const mxc__entry *inputs, int n_inputs,
                      mxc__node **out) {
  return mxc__node_op(op_name, (const char *const *)like->keys,
                      (const char *const *)like->vals, like->n_attrs, inputs,
                      n_inputs, like->name, out);
}

/* ---- common gradient builders ---- */

static int backward_node(const mxc__node *fwd, const mxc__entry *ograd,
                         int use_in, int use_out, mxc__entry *igrad) {
  const mxc__op *op = fwd->op;
  int n_out = mxc__op_num_outputs(op, fwd->param);
  int n_vis = mxc__op_num_grad_outputs(op, fwd->param);
  int n_in = fwd->n_inputs;
  int n_grad_in = n_in - op->n_aux;
  /* 32 entries on the stack; gradients of wide variadic operators
   * (Concat of 1000 parts) take a heap block. */
  mxc__entry small[32];
  size_t n_ins = (size_t)n_vis + (size_t)(use_in ? n_in : 0) +
                 (size_t)(use_out ? n_out : 0);
  mxc__entry *ins = mxc__scratch(small, sizeof small, n_ins, sizeof *ins);
  MXC_RETURN_ERROR_IF(!ins, MXC_ERR_OOM,
                      "operator '%s': out of memory building the gradient "
                      "of a node with %d inputs and %d outputs",
                      op->name, n_in, n_out);
  int k = 0;
  for (int i = 0; i < n_vis; ++i) ins[k++] = ograd[i];
  for (int i = 0; use_in && i < n_in; ++i) ins[k++] = fwd->inputs[i];
  for (int i = 0; use_out && i < n_out; ++i) {
    mxc__entry e = {(mxc__node *)fwd, i};
    ins[k++] = e;
  }
  char name[128];
  snprintf(name, sizeof name, "_backward_%s", op->name);
  mxc__node *b;
  int rc = mxc__node_op_like(name, fwd, ins, k, &b);
  mxc__scratch_free(ins, small);
  MXC_FORWARD_IF_ERROR(rc);
  for (int i = 0; i < n_in; ++i) {
    mxc__entry none = {NULL, 0};
    igrad[i] = i < n_grad_in ? mxc__entry_ref(b, i) : none;
  }
  mxc__node_release(b); /* the entries hold it now */
  return MXC_OK;
}

int mxc__grad_use_none(const mxc__node *fwd, const mxc__entry *ograd,
                       mxc__entry *igrad) {
  return backward_node(fwd, ograd, 0, 0, igrad);
}

int mxc__grad_use_in(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad) {
  return backward_node(fwd, ograd, 1, 0, igrad);
}

int mxc__grad_use_out(const mxc__node *fwd, const mxc__entry *ograd,
                      mxc__entry *igrad) {
  return backward_node(fwd, ograd, 0, 1, igrad);
}

int mxc__grad_use_in_out(const mxc__node *fwd, const mxc__entry *ograd,
                         mxc__entry *igrad) {
  return backward_node(fwd, ograd, 1, 1, igrad);
}

int mxc__grad_node_pick(const mxc__node *fwd, const char *name,
                        const mxc__entry *ins, int n_ins, const int *grad_of,
                        mxc__entry *igrad) {
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op_like(name, fwd, ins, n_ins, &b));
  for (int i = 0; i < fwd->n_inputs; ++i) {
    mxc__entry none = {NULL, 0};
    igrad[i] = grad_of[i] >= 0 ? mxc__entry_ref(b, grad_of[i]) : none;
  }
  mxc__node_release(b); /* the entries hold it now */
  return MXC_OK;
}

int mxc__grad_none(const mxc__node *fwd, const mxc__entry *ograd,
                   mxc__entry *igrad) {
  (void)ograd;
  for (int i = 0; i < fwd->n_inputs; ++i) {
    igrad[i].node = NULL;
    igrad[i].index = 0;
  }
  return MXC_OK;
}
