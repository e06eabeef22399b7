/* Binding: from a symbol and arrays to a planned, ready-to-run executor.
 *
 * Steps (each a function here or in dag.c / stype.c): index the forward
 * graph to learn the arguments; check the arrays; build and index the
 * forward+backward DAG; infer storage types on it, and fuse it when all
 * are dense; infer every entry's shape and dtype; plan memory and give
 * every entry an array. mxc__executor_free releases a partly built
 * executor, so every step may fail and leave cleanup to it. */
#include "core/exec/executor.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
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
  mxc__free(ex->stypes);
  mxc__free(ex->dispatch);
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
  for (int i = 0; ex->bound && i < ex->n_args + ex->n_aux; ++i) {
    mxc__ndarray_free(ex->bound[i]);
  }
  mxc__free(ex->bound);
  mxc__infer_passes_free(&ex->passes);
  mxc__executor_free(ex->twin);
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
  MXC_RETURN_ERROR_IF(
      a->chunk->dev.type != dev.type || a->chunk->dev.id != dev.id,
      MXC_ERR_INVALID_ARGUMENT,
      "%s: %s '%s' is on device (%d, %d); the executor is "
      "bound to (%d, %d)",
      fn, kind, name, a->chunk->dev.type, a->chunk->dev.id, dev.type, dev.id);
  return MXC_OK;
}

/* Counts, NULLs, devices and requests; fills grad_req. alloc_grads: a
 * missing gradient array is made later (mxc__executor_bind_alloc). */
static int check_inputs(mxc__executor *ex, mxc__ndarray *const *args,
                        int n_args, mxc__ndarray *const *grads, const int *reqs,
                        mxc__ndarray *const *aux, int n_aux, int alloc_grads,
                        const char *fn) {
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
    int given = grads && grads[i];
    MXC_RETURN_ERROR_IF(r != MXC_REQ_NULL && !given && !alloc_grads,
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: argument '%s' has grad_req %d but no gradient "
                        "array",
                        fn, name, r);
    if (r != MXC_REQ_NULL && given) {
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

/* Shapes and dtypes of every entry of the forward graph, from the bound
 * arrays, into new arrays *s and *t (one per entry, the caller frees
 * them also on failure; unknown entries may remain). */
static int infer_entries(const mxc__graph *gf, mxc__ndarray *const *args,
                         mxc__ndarray *const *aux, mxc__shape **sp, int **tp,
                         const char *fn) {
  mxc__shape *s = *sp = zalloc((size_t)gf->n_entries, sizeof *s);
  int *t = *tp = zalloc((size_t)gf->n_entries, sizeof *t);
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
  return rc;
}

/* Shapes and dtypes of the forward graph's outputs, from the bound
 * arrays; out_shape/out_type receive one value per output. */
static int infer_forward(const mxc__graph *gf, mxc__ndarray *const *args,
                         mxc__ndarray *const *aux, mxc__shape *out_shape,
                         int *out_type, const char *fn) {
  mxc__shape *s = NULL;
  int *t = NULL;
  int rc = infer_entries(gf, args, aux, &s, &t, fn);
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
      if (ex->arg_entry[i] < 0) continue; /* folded away */
      ex->shapes[ex->arg_entry[i]] = args[i]->shape;
      ex->dtypes[ex->arg_entry[i]] = args[i]->dtype;
    }
    for (int i = 0; i < ex->n_aux; ++i) {
      if (ex->aux_entry[i] < 0) continue;
      ex->shapes[ex->aux_entry[i]] = aux[i]->shape;
      ex->dtypes[ex->aux_entry[i]] = aux[i]->dtype;
    }
    for (int i = 0; i < ex->passes.n_folds; ++i) {
      for (int bias = 0; bias < 2; ++bias) {
        const mxc__bn_fold *f = &ex->passes.folds[i];
        const mxc__ndarray *a = bias ? f->out_b : f->out_w;
        int e = mxc__exec_fold_entry(ex, i, bias);
        if (e < 0) continue;
        ex->shapes[e] = a->shape;
        ex->dtypes[e] = a->dtype;
      }
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
static int check_grads(const mxc__executor *ex, const char *fn) {
  mxc__ndarray *const *grads = ex->grads;
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

/* Counts beyond MXC__OP_MAX_ARITY (a corrupt graph file): say so at bind
 * time, naming the node, rather than at the first forward. */
static int check_io_limits(const mxc__graph *g, const char *fn) {
  for (int nid = 0; nid < g->n_nodes; ++nid) {
    const mxc__node *n = g->nodes[nid];
    int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
    MXC_RETURN_ERROR_IF(n->op && (n->n_inputs > MXC__OP_MAX_ARITY ||
                                  n_out > MXC__OP_MAX_ARITY),
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: node '%s' (operator '%s') has %d inputs and %d "
                        "outputs; at most %d (MXC__OP_MAX_ARITY) of each are "
                        "allowed",
                        fn, n->name, n->op->name, n->n_inputs, n_out,
                        MXC__OP_MAX_ARITY);
  }
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
  /* The memory plan sized buf for every entry it places there. */
  MXC__ASSERT_MSG(mxc__ndarray_nbytes(*out) <= buf->chunk->nbytes,
                  "entry larger than its planned buffer");
  return MXC_OK;
}

static int new_array(const mxc__executor *ex, int e, mxc__ndarray **out) {
  return mxc__ndarray_create(&ex->shapes[e], ex->dtypes[e], ex->dev, 1, out);
}

/* External entries: bound arrays, gradient arrays written in place, and
 * arrays of the executor's own for outputs and head gradients. */
static int bind_external(mxc__executor *ex, mxc__ndarray *const *args,
                         mxc__ndarray *const *aux) {
  const mxc__graph *g = ex->g;
  mxc__ndarray **v = ex->vals;
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (ex->arg_entry[i] < 0) continue;
    rc = mxc__ndarray_clone_view(args[i], &v[ex->arg_entry[i]]);
  }
  for (int i = 0; rc == MXC_OK && i < ex->n_aux; ++i) {
    if (ex->aux_entry[i] < 0) continue;
    rc = mxc__ndarray_clone_view(aux[i], &v[ex->aux_entry[i]]);
  }
  for (int i = 0; rc == MXC_OK && i < ex->passes.n_folds; ++i) {
    for (int bias = 0; rc == MXC_OK && bias < 2; ++bias) {
      const mxc__bn_fold *f = &ex->passes.folds[i];
      int e = mxc__exec_fold_entry(ex, i, bias);
      const mxc__ndarray *a = bias ? f->out_b : f->out_w;
      if (e >= 0) rc = mxc__ndarray_clone_view(a, &v[e]);
    }
  }
  /* Written straight into the gradient array by its producer (see
   * mxc__exec_mark_direct). */
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    if (!ex->grad_direct[i]) continue;
    int e = ex->grad_entry[i];
    rc = mxc__ndarray_clone_view(ex->grads[i], &v[e]);
    ex->reqs[e] = (mxc__req)ex->grad_req[i];
  }
  for (int j = 0; rc == MXC_OK && j < ex->n_outputs; ++j) {
    int e = ex->hgrad_entry[j];
    if (e >= 0 && !v[e]) rc = new_array(ex, e, &v[e]);
  }
  for (int k = 0; rc == MXC_OK && k < g->n_heads; ++k) {
    int e = g->heads[k];
    if (!v[e]) rc = mxc__exec_new_entry(ex, e, &v[e]);
  }
  /* Sparse intermediate values: arrays of their own, never planned. */
  for (int e = 0; rc == MXC_OK && ex->any_sparse && e < g->n_entries; ++e) {
    if (!v[e] && ex->stypes[e] != MXC_STYPE_DEFAULT) {
      rc = mxc__exec_new_entry(ex, e, &v[e]);
    }
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
    /* Inference checked element counts; the byte size depends on the
     * dtype, known only now. */
    rc = mxc__shape_check(&ex->shapes[e], mxc__dtype_size(ex->dtypes[e]), fn);
    if (rc != MXC_OK) break;
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
                       mxc__ndarray *const *aux, const uint8_t *fwd,
                       const char *fn) {
  size_t n = (size_t)ex->g->n_entries;
  ex->vals = zalloc(n, sizeof *ex->vals);
  ex->reqs = zalloc(n, sizeof *ex->reqs);
  if (!ex->vals || !ex->reqs) return oom(fn);
  for (size_t e = 0; e < n; ++e) ex->reqs[e] = MXC__REQ_WRITE;
  MXC_FORWARD_IF_ERROR(bind_external(ex, args, aux));
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

/* ---- inference passes ---- */

static int inference_only(const mxc__executor *ex) {
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_req[i] != MXC_REQ_NULL) return 0;
  }
  return 1;
}

/* The passes run for CPU executors that compute no gradient, over dense
 * arrays (the fused kernels read dense blobs), unless the flag says no. */
static int passes_wanted(const mxc__executor *ex) {
  if (ex->flags & MXC_BIND_NO_INFER_PASSES) return 0;
  /* BN folding writes on the host, and the fused operators have CPU
   * kernels only. */
  if (mxc__exec_graph_dev_type(ex) != MXC_DEVICE_CPU) return 0;
  if (!inference_only(ex)) return 0;
  for (int i = 0; i < ex->n_args + ex->n_aux; ++i) {
    if (ex->bound[i]->stype != MXC_STYPE_DEFAULT) return 0;
  }
  return 1;
}

/* Rewrites d's heads (the symbol's outputs: no gradient heads here). A
 * forward graph whose shapes cannot be inferred is left alone: binding
 * reports that below, with the same message as without the passes. */
static int run_passes(mxc__executor *ex, const mxc__graph *gf,
                      mxc__ndarray *const *args, mxc__ndarray *const *aux,
                      mxc__exec_dag *d, const char *fn) {
  mxc__shape *s = NULL;
  int *t = NULL;
  mxc__entry *heads = zalloc((size_t)gf->n_heads, sizeof *heads);
  int rc = heads ? infer_entries(gf, args, aux, &s, &t, fn) : oom(fn);
  if (rc != MXC_OK && rc != MXC_ERR_OOM) {
    mxc__error_clear();
    mxc__free(heads);
    heads = NULL;
    rc = MXC_OK;
  }
  if (rc == MXC_OK && heads) {
    rc = mxc__infer_passes_run(gf, s, t, heads, &ex->passes);
  }
  if (rc == MXC_OK && heads) {
    for (int j = 0; j < d->n_heads; ++j) {
      mxc__node_release(d->heads[j].node);
      d->heads[j] = heads[j]; /* the reference moves */
    }
  }
  mxc__free(heads);
  mxc__free(s);
  mxc__free(t);
  return rc;
}

/* Indexes the DAG unfused, infers storage types on it, makes missing
 * gradient arrays (alloc_grads), and indexes again fused when every entry
 * is dense. *fwd: the forward node mask of the final graph. The inference
 * passes, when wanted, rewrite the DAG before all that. */
static int index_dag(mxc__executor *ex, const mxc__graph *gf,
                     mxc__ndarray *const *args, mxc__ndarray *const *aux,
                     int alloc_grads, uint8_t **fwd, const char *fn) {
  mxc__exec_dag d;
  int rc = mxc__exec_dag_make(ex, gf, &d, fn);
  if (rc == MXC_OK && passes_wanted(ex)) {
    rc = run_passes(ex, gf, args, aux, &d, fn);
  }
  if (rc == MXC_OK) rc = mxc__exec_index(ex, gf, &d, 0, fwd, fn);
  if (rc == MXC_OK) rc = mxc__exec_infer_stypes(ex, args, aux, fn);
  if (rc == MXC_OK && alloc_grads) {
    int made = 0;
    rc = mxc__exec_alloc_grads(ex, gf, args, &made, fn);
    /* Their storage types are now fixed where written directly. */
    if (rc == MXC_OK && made) rc = mxc__exec_infer_stypes(ex, args, aux, fn);
  }
  if (rc == MXC_OK && !ex->any_sparse && !(ex->flags & MXC_BIND_NO_FUSION)) {
    mxc__free(*fwd);
    *fwd = NULL;
    rc = mxc__exec_index(ex, gf, &d, 1, fwd, fn);
    if (rc == MXC_OK) rc = mxc__exec_infer_stypes(ex, args, aux, fn);
  }
  mxc__exec_dag_free(ex, &d);
  return rc;
}

/* The executor's own views of the bound arrays (ex->bound). */
static int keep_bound(mxc__executor *ex, mxc__ndarray *const *args,
                      mxc__ndarray *const *aux, const char *fn) {
  int n = ex->n_args + ex->n_aux;
  ex->bound = zalloc((size_t)n, sizeof *ex->bound);
  if (!ex->bound) return oom(fn);
  for (int i = 0; i < n; ++i) {
    mxc__ndarray *a = i < ex->n_args ? args[i] : aux[i - ex->n_args];
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &ex->bound[i]));
  }
  return MXC_OK;
}

static int bind_impl(const mxc__symbol *sym, mxc__device dev,
                     mxc__ndarray *const *args, int n_args,
                     mxc__ndarray *const *grads, const int *reqs,
                     mxc__ndarray *const *aux, int n_aux, int flags,
                     int alloc_grads, const char *fn, mxc__executor **out) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, fn));
  MXC_RETURN_ERROR_IF(flags & ~(MXC_BIND_NO_MEMORY_PLAN | MXC_BIND_NO_FUSION |
                                MXC_BIND_NO_ONEDNN |
                                MXC_BIND_NO_INFER_PASSES | MXC_BIND_BF16 |
                                MXC__BIND_GRAPH_OF_GPU),
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
    rc = check_inputs(ex, args, n_args, grads, reqs, aux, n_aux, alloc_grads,
                      fn);
  }
  if (rc == MXC_OK) rc = mxc__exec_check_stypes(ex, gf, args, grads, aux, fn);
  if (rc == MXC_OK) rc = keep_bound(ex, args, aux, fn);
  for (int i = 0; rc == MXC_OK && grads && i < ex->n_args; ++i) {
    if (ex->grad_req[i] != MXC_REQ_NULL && grads[i]) {
      rc = mxc__ndarray_clone_view(grads[i], &ex->grads[i]);
    }
  }
  if (rc == MXC_OK) rc = index_dag(ex, gf, args, aux, alloc_grads, &fwd, fn);
  if (rc == MXC_OK) rc = mxc__exec_folds_bind(ex, gf, fn);
  if (rc == MXC_OK) rc = infer_all(ex, gf, args, aux, fn);
  if (rc == MXC_OK) rc = check_grads(ex, fn);
  if (rc == MXC_OK) rc = check_io_limits(ex->g, fn);
  if (rc == MXC_OK) rc = bind_arrays(ex, args, aux, fwd, fn);
  /* bfloat16 values only where the inference passes run. */
  if (rc == MXC_OK) rc = mxc__exec_formats_choose(ex, passes_wanted(ex));
  mxc__graph_free(gf);
  mxc__free(fwd);
  if (rc != MXC_OK) {
    mxc__executor_free(ex);
    return rc;
  }
  *out = ex;
  return MXC_OK;
}

int mxc__executor_bind(const mxc__symbol *sym, mxc__device dev,
                       mxc__ndarray *const *args, int n_args,
                       mxc__ndarray *const *grads, const int *reqs,
                       mxc__ndarray *const *aux, int n_aux, int flags,
                       const char *fn, mxc__executor **out) {
  return bind_impl(sym, dev, args, n_args, grads, reqs, aux, n_aux, flags, 0,
                   fn, out);
}

int mxc__executor_bind_alloc(const mxc__symbol *sym, mxc__device dev,
                             mxc__ndarray *const *args, int n_args,
                             mxc__ndarray *const *grads, const int *reqs,
                             mxc__ndarray *const *aux, int n_aux, int flags,
                             int alloc_grads, const char *fn,
                             mxc__executor **out) {
  return bind_impl(sym, dev, args, n_args, grads, reqs, aux, n_aux, flags,
                   alloc_grads, fn, out);
}
