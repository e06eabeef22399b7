/* Binding: from a symbol and arrays to a planned, ready-to-run executor.
 *
 * Steps (each a function below): index the forward graph to learn the
 * arguments; check the arrays; build the forward+backward DAG; infer every
 * entry's shape and dtype; order the nodes; plan memory and give every
 * entry an array. mxc__executor_free releases a partly built executor, so
 * every step may fail and leave cleanup to it. */
#include "core/exec/executor.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/fuse/fuse.h"
#include "core/graph/gradient.h"
#include "core/graph/infer.h"

void mxc__executor_free(mxc__executor *ex) {
  if (!ex) return;
  if (ex->vals) {
    for (int e = 0; e < ex->g->n_entries; ++e) mxc__ndarray_free(ex->vals[e]);
  }
  if (ex->grads) {
    for (int i = 0; i < ex->n_args; ++i) mxc__ndarray_free(ex->grads[i]);
  }
  if (ex->bufs) {
    for (int b = 0; b < ex->plan->n_bufs; ++b) mxc__ndarray_free(ex->bufs[b]);
  }
  mxc__free(ex->bufs);
  mxc__plan_free(ex->plan);
  mxc__free(ex->vals);
  mxc__free(ex->reqs);
  mxc__free(ex->shapes);
  mxc__free(ex->dtypes);
  mxc__free(ex->order);
  mxc__free(ex->grads);
  mxc__free(ex->arg_names);
  mxc__free(ex->aux_names);
  mxc__free(ex->arg_entry);
  mxc__free(ex->aux_entry);
  mxc__free(ex->grad_req);
  mxc__free(ex->grad_entry);
  mxc__free(ex->grad_direct);
  mxc__free(ex->hgrad_entry);
  mxc__graph_free(ex->g);
  mxc__symbol_free(ex->sym);
  mxc__free(ex);
}

static int oom(const char *fn) {
  return mxc__error_set(MXC_ERR_OOM, "%s: out of memory binding", fn);
}

/* Zeroed array of n elements of size sz (at least one, so that empty
 * graphs need no special case). */
static void *zalloc(size_t n, size_t sz) { return mxc__calloc(n ? n : 1, sz); }

/* ---- arguments and arrays ---- */

/* Names and per-argument tables, from the forward graph. */
static int alloc_arg_tables(mxc__executor *ex, const mxc__graph *gf,
                            const char *fn) {
  size_t na = (size_t)gf->n_args, nx = (size_t)gf->n_aux;
  ex->n_args = gf->n_args;
  ex->n_aux = gf->n_aux;
  ex->arg_names = zalloc(na, sizeof(char *));
  ex->aux_names = zalloc(nx, sizeof(char *));
  ex->arg_entry = zalloc(na, sizeof(int));
  ex->aux_entry = zalloc(nx, sizeof(int));
  ex->grad_req = zalloc(na, sizeof(int));
  ex->grad_entry = zalloc(na, sizeof(int));
  ex->grad_direct = zalloc(na, 1);
  ex->grads = zalloc(na, sizeof(mxc__ndarray *));
  ex->hgrad_entry = zalloc((size_t)ex->n_outputs, sizeof(int));
  if (!ex->arg_names || !ex->aux_names || !ex->arg_entry || !ex->aux_entry ||
      !ex->grad_req || !ex->grad_entry || !ex->grad_direct || !ex->grads ||
      !ex->hgrad_entry) {
    return oom(fn);
  }
  for (int i = 0; i < gf->n_args; ++i) {
    ex->arg_names[i] = gf->nodes[gf->args[i]]->name;
    ex->grad_entry[i] = -1;
  }
  for (int i = 0; i < gf->n_aux; ++i) {
    ex->aux_names[i] = gf->nodes[gf->aux[i]]->name;
  }
  for (int j = 0; j < ex->n_outputs; ++j) ex->hgrad_entry[j] = -1;
  return MXC_OK;
}

static int check_array(const mxc__ndarray *a, mxc__device dev, const char *fn,
                       const char *kind, const char *name) {
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_INVALID_ARGUMENT, "%s: %s '%s' is NULL", fn,
                      kind, name);
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: %s '%s' is sparse; executors bind dense arrays", fn,
                      kind, name);
  MXC_RETURN_ERROR_IF(
      a->chunk->dev.type != dev.type || a->chunk->dev.id != dev.id,
      MXC_ERR_INVALID_ARGUMENT,
      "%s: %s '%s' is on device (%d, %d); the executor is "
      "bound to (%d, %d)",
      fn, kind, name, a->chunk->dev.type, a->chunk->dev.id, dev.type, dev.id);
  return MXC_OK;
}

/* Counts, NULLs, devices and requests; fills grad_req. */
static int check_inputs(mxc__executor *ex, mxc__ndarray *const *args,
                        int n_args, mxc__ndarray *const *grads, const int *reqs,
                        mxc__ndarray *const *aux, int n_aux, const char *fn) {
  MXC_RETURN_ERROR_IF(n_args != ex->n_args, MXC_ERR_INVALID_ARGUMENT,
                      "%s: got %d argument arrays; the symbol has %d "
                      "arguments",
                      fn, n_args, ex->n_args);
  MXC_RETURN_ERROR_IF(n_aux != ex->n_aux, MXC_ERR_INVALID_ARGUMENT,
                      "%s: got %d auxiliary-state arrays; the symbol has %d",
                      fn, n_aux, ex->n_aux);
  MXC_RETURN_ERROR_IF(n_args > 0 && !args, MXC_ERR_INVALID_ARGUMENT,
                      "%s: args is NULL but the symbol has %d arguments", fn,
                      n_args);
  MXC_RETURN_ERROR_IF(n_aux > 0 && !aux, MXC_ERR_INVALID_ARGUMENT,
                      "%s: aux is NULL but the symbol has %d auxiliary "
                      "states",
                      fn, n_aux);
  for (int i = 0; i < n_args; ++i) {
    const char *name = ex->arg_names[i];
    MXC_FORWARD_IF_ERROR(check_array(args[i], ex->dev, fn, "argument", name));
    int r = reqs ? reqs[i] : (grads && grads[i] ? MXC_REQ_WRITE : MXC_REQ_NULL);
    MXC_RETURN_ERROR_IF(
        r != MXC_REQ_NULL && r != MXC_REQ_WRITE && r != MXC_REQ_ADD,
        MXC_ERR_INVALID_ARGUMENT,
        "%s: grad_req %d of argument '%s' is not "
        "MXC_REQ_NULL, MXC_REQ_WRITE or MXC_REQ_ADD",
        fn, r, name);
    MXC_RETURN_ERROR_IF(r != MXC_REQ_NULL && (!grads || !grads[i]),
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: argument '%s' has grad_req %d but no gradient "
                        "array",
                        fn, name, r);
    if (r != MXC_REQ_NULL) {
      MXC_FORWARD_IF_ERROR(
          check_array(grads[i], ex->dev, fn, "gradient of argument", name));
    }
    ex->grad_req[i] = r;
  }
  for (int i = 0; i < n_aux; ++i) {
    MXC_FORWARD_IF_ERROR(
        check_array(aux[i], ex->dev, fn, "auxiliary state", ex->aux_names[i]));
  }
  return MXC_OK;
}

/* ---- the forward + backward DAG ---- */

/* Head-gradient variables and gradient entries of the arguments with a
 * request. heads (out): n_outputs symbol outputs then the non-NULL
 * gradients, each a new reference; *n_heads their count. */
static int gradient_heads(mxc__executor *ex, const mxc__graph *gf,
                          mxc__node **hg, mxc__entry *heads, int *n_heads,
                          const char *fn) {
  int n_out = ex->n_outputs;
  mxc__entry *hge = zalloc((size_t)n_out, sizeof *hge);
  mxc__entry *wrt = zalloc((size_t)ex->n_args, sizeof *wrt);
  mxc__entry *res = zalloc((size_t)ex->n_args, sizeof *res);
  if (!hge || !wrt || !res) {
    mxc__free(hge);
    mxc__free(wrt);
    mxc__free(res);
    return oom(fn);
  }
  int rc = MXC_OK;
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    char name[64];
    snprintf(name, sizeof name, "_head_grad%d", j);
    rc = mxc__node_variable(name, &hg[j]);
    if (rc == MXC_OK) hge[j] = (mxc__entry){hg[j], 0};
  }
  int n_wrt = 0;
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    wrt[n_wrt++] = (mxc__entry){gf->nodes[gf->args[i]], 0};
  }
  if (rc == MXC_OK) {
    rc = mxc__gradient_build(ex->sym->outputs, hge, n_out, wrt, n_wrt, res);
  }
  /* Gradient heads follow the outputs; grad_entry[i] holds the head
   * position of argument i's gradient until the graph is indexed. */
  int k = n_out, w = 0;
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    if (res[w].node) {
      ex->grad_entry[i] = k;
      heads[k++] = res[w]; /* the reference moves */
    }
    ++w;
  }
  if (rc == MXC_OK) {
    for (int j = 0; j < n_out; ++j) {
      heads[j] =
          mxc__entry_ref(ex->sym->outputs[j].node, ex->sym->outputs[j].index);
    }
    *n_heads = k;
  }
  mxc__free(hge);
  mxc__free(wrt);
  mxc__free(res);
  return rc;
}

/* Builds ex->g and the gradient / head-gradient entry ids. */
static int build_dag(mxc__executor *ex, const mxc__graph *gf, const char *fn) {
  int n_out = ex->n_outputs, need_grad = 0;
  for (int i = 0; i < ex->n_args; ++i) need_grad |= ex->grad_req[i] != 0;
  size_t cap = (size_t)(n_out + ex->n_args);
  mxc__node **hg = zalloc((size_t)n_out, sizeof *hg);
  mxc__entry *heads = zalloc(cap, sizeof *heads);
  mxc__entry *fused = zalloc(cap, sizeof *fused);
  int n_heads = 0, n_fusedh = 0;
  int rc = (hg && heads && fused) ? MXC_OK : oom(fn);
  if (rc == MXC_OK && need_grad) {
    rc = gradient_heads(ex, gf, hg, heads, &n_heads, fn);
  } else if (rc == MXC_OK) {
    for (int j = 0; j < n_out; ++j) {
      heads[j] =
          mxc__entry_ref(ex->sym->outputs[j].node, ex->sym->outputs[j].index);
    }
    n_heads = n_out;
  }
  if (rc == MXC_OK && !(ex->flags & MXC_BIND_NO_FUSION)) {
    rc = mxc__fuse_graph(heads, n_heads, fused, &ex->n_fused);
    if (rc == MXC_OK) n_fusedh = n_heads;
  }
  if (rc == MXC_OK) {
    const mxc__entry *use = n_fusedh ? fused : heads;
    rc = mxc__graph_build(use, n_heads, &ex->g);
  }
  if (rc == MXC_OK) {
    for (int i = 0; i < ex->n_args; ++i) {
      if (ex->grad_entry[i] >= 0) {
        ex->grad_entry[i] = ex->g->heads[ex->grad_entry[i]];
      }
    }
    for (int j = 0; j < n_out && need_grad; ++j) {
      ex->hgrad_entry[j] = mxc__graph_entry_id(ex->g, (mxc__entry){hg[j], 0});
    }
  }
  for (int i = 0; heads && fused && i < n_heads; ++i) {
    mxc__node_release(heads[i].node);
    mxc__node_release(fused[i].node);
  }
  for (int j = 0; hg && j < n_out; ++j) mxc__node_release(hg[j]);
  mxc__free(hg);
  mxc__free(heads);
  mxc__free(fused);
  return rc;
}

/* ---- shapes and dtypes ---- */

static void set_unknown(mxc__shape *s, int *t, int n) {
  for (int e = 0; e < n; ++e) {
    s[e].ndim = -1;
    t[e] = -1;
  }
}

/* Error for an entry left unknown after inference. */
static int unknown_entry(const mxc__graph *g, int e, const char *what,
                         const char *fn) {
  int nid = mxc__graph_entry_node(g, e);
  const mxc__node *n = g->nodes[nid];
  if (!n->op) {
    return mxc__error_set(what[0] == 's' ? MXC_ERR_SHAPE : MXC_ERR_DTYPE,
                          "%s: could not infer the %s of variable '%s'", fn,
                          what, n->name);
  }
  return mxc__error_set(what[0] == 's' ? MXC_ERR_SHAPE : MXC_ERR_DTYPE,
                        "%s: could not infer the %s of output %d of node "
                        "'%s' (operator '%s')",
                        fn, what, e - g->entry_ptr[nid], n->name, n->op->name);
}

/* Shapes and dtypes of the forward graph's outputs, from the bound
 * arrays; out_shape/out_type receive one value per output. */
static int infer_forward(const mxc__graph *gf, mxc__ndarray *const *args,
                         mxc__ndarray *const *aux, mxc__shape *out_shape,
                         int *out_type, const char *fn) {
  mxc__shape *s = zalloc((size_t)gf->n_entries, sizeof *s);
  int *t = zalloc((size_t)gf->n_entries, sizeof *t);
  int rc = (s && t) ? MXC_OK : oom(fn);
  if (rc == MXC_OK) {
    set_unknown(s, t, gf->n_entries);
    for (int i = 0; i < gf->n_args; ++i) {
      s[gf->entry_ptr[gf->args[i]]] = args[i]->shape;
      t[gf->entry_ptr[gf->args[i]]] = args[i]->dtype;
    }
    for (int i = 0; i < gf->n_aux; ++i) {
      s[gf->entry_ptr[gf->aux[i]]] = aux[i]->shape;
      t[gf->entry_ptr[gf->aux[i]]] = aux[i]->dtype;
    }
    rc = mxc__graph_infer_shape(gf, s);
    if (rc == MXC_OK) rc = mxc__graph_infer_type(gf, t);
    if (rc != MXC_OK) mxc__error_prefix(fn);
  }
  for (int j = 0; rc == MXC_OK && j < gf->n_heads; ++j) {
    int e = gf->heads[j];
    if (s[e].ndim < 0) rc = unknown_entry(gf, e, "shape", fn);
    if (rc == MXC_OK && t[e] < 0) rc = unknown_entry(gf, e, "dtype", fn);
    out_shape[j] = s[e];
    out_type[j] = t[e];
  }
  mxc__free(s);
  mxc__free(t);
  return rc;
}

/* Every entry of the full graph: variables from the arrays and the
 * forward outputs, the rest inferred; all must end up known. */
static int infer_all(mxc__executor *ex, const mxc__graph *gf,
                     mxc__ndarray *const *args, mxc__ndarray *const *aux,
                     const char *fn) {
  const mxc__graph *g = ex->g;
  int n_out = ex->n_outputs;
  mxc__shape *hs = zalloc((size_t)n_out, sizeof *hs);
  int *ht = zalloc((size_t)n_out, sizeof *ht);
  ex->shapes = zalloc((size_t)g->n_entries, sizeof *ex->shapes);
  ex->dtypes = zalloc((size_t)g->n_entries, sizeof *ex->dtypes);
  int rc = (hs && ht && ex->shapes && ex->dtypes) ? MXC_OK : oom(fn);
  if (rc == MXC_OK) rc = infer_forward(gf, args, aux, hs, ht, fn);
  if (rc == MXC_OK) {
    set_unknown(ex->shapes, ex->dtypes, g->n_entries);
    for (int i = 0; i < ex->n_args; ++i) {
      ex->shapes[ex->arg_entry[i]] = args[i]->shape;
      ex->dtypes[ex->arg_entry[i]] = args[i]->dtype;
    }
    for (int i = 0; i < ex->n_aux; ++i) {
      ex->shapes[ex->aux_entry[i]] = aux[i]->shape;
      ex->dtypes[ex->aux_entry[i]] = aux[i]->dtype;
    }
    for (int j = 0; j < n_out; ++j) {
      if (ex->hgrad_entry[j] < 0) continue;
      ex->shapes[ex->hgrad_entry[j]] = hs[j];
      ex->dtypes[ex->hgrad_entry[j]] = ht[j];
    }
    rc = mxc__graph_infer_shape(g, ex->shapes);
    if (rc == MXC_OK) rc = mxc__graph_infer_type(g, ex->dtypes);
    if (rc != MXC_OK) mxc__error_prefix(fn);
  }
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    if (ex->shapes[e].ndim < 0) rc = unknown_entry(g, e, "shape", fn);
    if (rc == MXC_OK && ex->dtypes[e] < 0)
      rc = unknown_entry(g, e, "dtype", fn);
  }
  mxc__free(hs);
  mxc__free(ht);
  return rc;
}

/* Gradient arrays must match their arguments. */
static int check_grads(const mxc__executor *ex, mxc__ndarray *const *grads,
                       const char *fn) {
  char b1[160], b2[160];
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    const mxc__shape *want = &ex->shapes[ex->arg_entry[i]];
    int dt = ex->dtypes[ex->arg_entry[i]];
    MXC_RETURN_ERROR_IF(
        !mxc__shape_equal(&grads[i]->shape, want), MXC_ERR_SHAPE,
        "%s: the gradient array of argument '%s' has shape "
        "%s; expected %s (the argument's)",
        fn, ex->arg_names[i], mxc__shape_str(&grads[i]->shape, b1, sizeof b1),
        mxc__shape_str(want, b2, sizeof b2));
    MXC_RETURN_ERROR_IF(grads[i]->dtype != dt, MXC_ERR_DTYPE,
                        "%s: the gradient array of argument '%s' is %s; "
                        "expected %s (the argument's)",
                        fn, ex->arg_names[i], mxc__dtype_name(grads[i]->dtype),
                        mxc__dtype_name(dt));
  }
  return MXC_OK;
}

/* ---- order, arrays and memory ---- */

/* Entry ids of the arguments and auxiliary states in the full graph
 * (fusion keeps variables, so each is there). */
static int map_vars(mxc__executor *ex, const mxc__graph *gf, const char *fn) {
  for (int i = 0; i < ex->n_args + ex->n_aux; ++i) {
    int is_arg = i < ex->n_args;
    int nid = is_arg ? gf->args[i] : gf->aux[i - ex->n_args];
    int e = mxc__graph_entry_id(ex->g, (mxc__entry){gf->nodes[nid], 0});
    MXC_RETURN_ERROR_IF(e < 0, MXC_ERR_INTERNAL,
                        "%s: variable '%s' is missing from the bound graph", fn,
                        gf->nodes[nid]->name);
    if (is_arg) {
      ex->arg_entry[i] = e;
    } else {
      ex->aux_entry[i - ex->n_args] = e;
    }
  }
  return MXC_OK;
}

/* mxc__op_invoke takes at most 64 inputs and outputs: say so at bind time,
 * naming the node, rather than at the first forward. */
static int check_io_limits(const mxc__graph *g, const char *fn) {
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    const mxc__node *n = g->nodes[nid];
    int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
    MXC_RETURN_ERROR_IF(n->op && (n->n_inputs > 64 || n_out > 64),
                        MXC_ERR_UNSUPPORTED,
                        "%s: node '%s' (operator '%s') has %d inputs and %d "
                        "outputs; at most 64 of each are supported",
                        fn, n->name, n->op->name, n->n_inputs, n_out);
  }
  return MXC_OK;
}

/* Forward nodes (what the outputs depend on) in topological order, then
 * the backward nodes. *fwd_mask (caller frees) marks forward node ids. */
static int make_order(mxc__executor *ex, uint8_t **fwd_mask, const char *fn) {
  const mxc__graph *g = ex->g;
  uint8_t *fwd = zalloc((size_t)g->n_nodes, 1);
  ex->order = zalloc((size_t)g->n_nodes, sizeof(int));
  if (!fwd || !ex->order) {
    mxc__free(fwd);
    return oom(fn);
  }
  for (int j = 0; j < ex->n_outputs; ++j) {
    fwd[mxc__graph_entry_node(g, g->heads[j])] = 1;
  }
  for (int nid = g->n_nodes - 1; nid >= 0; --nid) {
    if (!fwd[nid]) continue;
    for (int k = g->in_ptr[nid]; k < g->in_ptr[nid + 1]; ++k) {
      fwd[mxc__graph_entry_node(g, g->in_entries[k])] = 1;
    }
  }
  int k = 0;
  for (int pass = 1; pass >= 0; --pass) {
    for (int nid = 0; nid < g->n_nodes; ++nid) {
      if (g->nodes[nid]->op && fwd[nid] == pass) ex->order[k++] = nid;
    }
    if (pass) ex->n_fwd = k;
  }
  ex->n_bwd = k - ex->n_fwd;
  *fwd_mask = fwd;
  return MXC_OK;
}

/* A view of planned buffer buf typed as one entry. Buffers are untyped
 * bytes at least as large as every entry placed in them; cloning first
 * keeps whatever else a view carries. */
static int view_as(const mxc__ndarray *buf, const mxc__shape *s, int dtype,
                   mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(buf, out));
  (*out)->shape = *s;
  (*out)->dtype = dtype;
  (*out)->offset = 0;
  return MXC_OK;
}

static int new_array(const mxc__executor *ex, int e, mxc__ndarray **out) {
  return mxc__ndarray_create(&ex->shapes[e], ex->dtypes[e], ex->dev, 1, out);
}

/* External entries: bound arrays, gradient arrays written in place, and
 * arrays of the executor's own for outputs and head gradients. */
static int bind_external(mxc__executor *ex, mxc__ndarray *const *args,
                         mxc__ndarray *const *grads, mxc__ndarray *const *aux,
                         const uint8_t *fwd) {
  const mxc__graph *g = ex->g;
  mxc__ndarray **v = ex->vals;
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    rc = mxc__ndarray_clone_view(args[i], &v[ex->arg_entry[i]]);
  }
  for (int i = 0; rc == MXC_OK && i < ex->n_aux; ++i) {
    rc = mxc__ndarray_clone_view(aux[i], &v[ex->aux_entry[i]]);
  }
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    rc = mxc__ndarray_clone_view(grads[i], &ex->grads[i]);
    int e = ex->grad_entry[i];
    if (rc != MXC_OK || e < 0) continue;
    int nid = mxc__graph_entry_node(g, e);
    /* Written straight into the gradient array by its producer when
     * nothing else reads it and the producer runs only in backward. */
    if (g->nodes[nid]->op && !fwd[nid] && g->n_consumers[e] == 1 && !v[e]) {
      rc = mxc__ndarray_clone_view(grads[i], &v[e]);
      ex->reqs[e] = (mxc__req)ex->grad_req[i];
      ex->grad_direct[i] = 1;
    }
  }
  for (int j = 0; rc == MXC_OK && j < ex->n_outputs; ++j) {
    int e = ex->hgrad_entry[j];
    if (e >= 0 && !v[e]) rc = new_array(ex, e, &v[e]);
  }
  for (int k = 0; rc == MXC_OK && k < g->n_heads; ++k) {
    int e = g->heads[k];
    if (!v[e]) rc = new_array(ex, e, &v[e]);
  }
  return rc;
}

/* Plans intermediate entries and gives each a view of its buffer. */
static int bind_planned(mxc__executor *ex, const char *fn) {
  const mxc__graph *g = ex->g;
  size_t n = (size_t)g->n_entries;
  size_t *nbytes = zalloc(n, sizeof *nbytes);
  uint8_t *ext = zalloc(n, 1);
  int rc = (nbytes && ext) ? MXC_OK : oom(fn);
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    nbytes[e] = (size_t)mxc__shape_size(&ex->shapes[e]) *
                mxc__dtype_size(ex->dtypes[e]);
    ext[e] = ex->vals[e] != NULL; /* bound or owned by bind_external */
  }
  if (rc == MXC_OK) {
    rc = mxc__plan_build(g, ex->order, ex->n_fwd + ex->n_bwd, nbytes, ext,
                         !(ex->flags & MXC_BIND_NO_MEMORY_PLAN), &ex->plan);
  }
  if (rc == MXC_OK) {
    ex->bufs = zalloc((size_t)ex->plan->n_bufs, sizeof *ex->bufs);
    if (!ex->bufs) rc = oom(fn);
  }
  for (int b = 0; rc == MXC_OK && b < ex->plan->n_bufs; ++b) {
    mxc__shape s = {1, {(int64_t)ex->plan->buf_bytes[b]}};
    rc = mxc__ndarray_create(&s, MXC_DTYPE_UINT8, ex->dev, 1, &ex->bufs[b]);
  }
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    int b = ex->plan->buf[e];
    if (b < 0) continue;
    rc = view_as(ex->bufs[b], &ex->shapes[e], ex->dtypes[e], &ex->vals[e]);
    if (ex->plan->inplace[e]) ex->reqs[e] = MXC__REQ_INPLACE;
  }
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    if (!ex->vals[e]) {
      rc = mxc__error_set(MXC_ERR_INTERNAL, "%s: entry %d has no array", fn, e);
    }
  }
  mxc__free(nbytes);
  mxc__free(ext);
  return rc;
}

static int bind_arrays(mxc__executor *ex, mxc__ndarray *const *args,
                       mxc__ndarray *const *grads, mxc__ndarray *const *aux,
                       const uint8_t *fwd, const char *fn) {
  size_t n = (size_t)ex->g->n_entries;
  ex->vals = zalloc(n, sizeof *ex->vals);
  ex->reqs = zalloc(n, sizeof *ex->reqs);
  if (!ex->vals || !ex->reqs) return oom(fn);
  for (size_t e = 0; e < n; ++e) ex->reqs[e] = MXC__REQ_WRITE;
  MXC_FORWARD_IF_ERROR(bind_external(ex, args, grads, aux, fwd));
  MXC_FORWARD_IF_ERROR(bind_planned(ex, fn));
  /* A backward output nothing reads (the data gradient of the first layer:
   * gradient builders compute every input's gradient) is not computed at
   * all; kernels skip MXC__REQ_NULL outputs. Forward outputs keep being
   * written: some operators save state through them. */
  const mxc__graph *g = ex->g;
  for (int e = 0; e < g->n_entries; ++e) {
    int nid = mxc__graph_entry_node(g, e);
    if (!fwd[nid] && g->nodes[nid]->op && g->n_consumers[e] == 0 &&
        ex->reqs[e] == MXC__REQ_WRITE) {
      ex->reqs[e] = MXC__REQ_NULL;
    }
  }
  return MXC_OK;
}

int mxc__executor_bind(const mxc__symbol *sym, mxc__device dev,
                       mxc__ndarray *const *args, int n_args,
                       mxc__ndarray *const *grads, const int *reqs,
                       mxc__ndarray *const *aux, int n_aux, int flags,
                       const char *fn, mxc__executor **out) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, fn));
  MXC_RETURN_ERROR_IF(flags & ~(MXC_BIND_NO_MEMORY_PLAN | MXC_BIND_NO_FUSION),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: flags 0x%x has unknown bits; expected a "
                      "combination of MXC_BIND_*",
                      fn, (unsigned)flags);
  mxc__executor *ex = mxc__calloc(1, sizeof *ex);
  MXC_RETURN_ERROR_IF(!ex, MXC_ERR_OOM, "%s: out of memory binding", fn);
  ex->dev = dev;
  ex->flags = flags;
  ex->n_outputs = sym->n_outputs;
  mxc__graph *gf = NULL;
  uint8_t *fwd = NULL;
  int rc = mxc__symbol_new(sym->outputs, sym->n_outputs, &ex->sym);
  if (rc == MXC_OK) rc = mxc__graph_build(sym->outputs, sym->n_outputs, &gf);
  if (rc == MXC_OK) rc = alloc_arg_tables(ex, gf, fn);
  if (rc == MXC_OK) {
    rc = check_inputs(ex, args, n_args, grads, reqs, aux, n_aux, fn);
  }
  if (rc == MXC_OK) rc = build_dag(ex, gf, fn);
  if (rc == MXC_OK) rc = map_vars(ex, gf, fn);
  if (rc == MXC_OK) rc = infer_all(ex, gf, args, aux, fn);
  if (rc == MXC_OK) rc = check_grads(ex, grads, fn);
  if (rc == MXC_OK) rc = check_io_limits(ex->g, fn);
  if (rc == MXC_OK) rc = make_order(ex, &fwd, fn);
  if (rc == MXC_OK) rc = bind_arrays(ex, args, grads, aux, fwd, fn);
  mxc__graph_free(gf);
  mxc__free(fwd);
  if (rc != MXC_OK) {
    mxc__executor_free(ex);
    return rc;
  }
  *out = ex;
  return MXC_OK;
}
