/* Sparse arrays in executors: storage-type rules of a binding, storage
 * inference of the bound graph, arrays for sparse entries, and gradient
 * delivery into sparse gradient arrays (see "sparse entries" in
 * executor.h).
 *
 * Dense graphs pay nothing at run time: every node already runs through
 * mxc__op_invoke, which picks the sparse kernel or falls back for the
 * nodes that touch sparse arrays; binding only adds one storage pass. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/graph/infer.h"
#include "core/op/cast_storage.h"

void mxc__exec_mark_direct(mxc__executor *ex, const uint8_t *fwd) {
  const mxc__graph *g = ex->g;
  for (int i = 0; i < ex->n_args; ++i) {
    int e = ex->grad_entry[i];
    ex->grad_direct[i] = 0;
    if (ex->grad_req[i] == MXC_REQ_NULL || e < 0) continue;
    int nid = mxc__graph_entry_node(g, e);
    /* Nothing else reads the entry (its one consumer is the head) and
     * its producer runs only in backward, so forward never sees the
     * gradient array change. */
    if (!g->nodes[nid]->op || fwd[nid] || g->n_consumers[e] != 1) continue;
    int taken = 0;
    for (int k = 0; k < i && !taken; ++k) {
      taken = ex->grad_direct[k] && ex->grad_entry[k] == e;
    }
    ex->grad_direct[i] = !taken;
  }
}

int mxc__exec_check_stypes(const mxc__executor *ex, const mxc__graph *gf,
                           mxc__ndarray *const *args,
                           mxc__ndarray *const *grads,
                           mxc__ndarray *const *aux, const char *fn) {
  for (int i = 0; i < ex->n_aux; ++i) {
    MXC_RETURN_ERROR_IF(aux[i]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                        "%s: auxiliary state '%s' is a %s array; auxiliary "
                        "states must be dense",
                        fn, ex->aux_names[i], mxc__stype_name(aux[i]->stype));
  }
  for (int i = 0; i < ex->n_args; ++i) {
    const char *name = ex->arg_names[i];
    int want = -1;
    int r = mxc__stype_attr(gf->nodes[gf->args[i]], "__storage_type__", &want);
    MXC_RETURN_ERROR_IF(r < 0, MXC_ERR_STYPE,
                        "%s: argument '%s' has a __storage_type__ that is not "
                        "default, row_sparse or csr",
                        fn, name);
    MXC_RETURN_ERROR_IF(r > 0 && want != args[i]->stype, MXC_ERR_STYPE,
                        "%s: argument '%s' is bound to a %s array but its "
                        "__storage_type__ is %s",
                        fn, name, mxc__stype_name(args[i]->stype),
                        mxc__stype_name(want));
    const mxc__ndarray *gr = grads ? grads[i] : NULL;
    MXC_RETURN_ERROR_IF(
        gr && ex->grad_req[i] == MXC_REQ_ADD && gr->stype != MXC_STYPE_DEFAULT,
        MXC_ERR_STYPE,
        "%s: argument '%s': grad_req add into a %s gradient array is not "
        "supported; use MXC_REQ_WRITE or a dense gradient array",
        fn, name, mxc__stype_name(gr->stype));
  }
  return MXC_OK;
}

int mxc__exec_infer_stypes(mxc__executor *ex, mxc__ndarray *const *args,
                           mxc__ndarray *const *aux, const char *fn) {
  const mxc__graph *g = ex->g;
  mxc__free(ex->stypes);
  mxc__free(ex->dispatch);
  ex->stypes = mxc__malloc(sizeof(int) * (size_t)(g->n_entries + 1));
  ex->dispatch = mxc__malloc((size_t)g->n_nodes + 1);
  MXC_RETURN_ERROR_IF(!ex->stypes || !ex->dispatch, MXC_ERR_OOM,
                      "%s: out of memory binding", fn);
  int *st = ex->stypes;
  for (int e = 0; e < g->n_entries; ++e) st[e] = -1;
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->arg_entry[i] >= 0) st[ex->arg_entry[i]] = args[i]->stype;
  }
  for (int i = 0; i < ex->n_aux; ++i) {
    if (ex->aux_entry[i] >= 0) st[ex->aux_entry[i]] = aux[i]->stype;
  }
  /* Folded weights (inference passes) are dense arrays of the executor. */
  for (int i = 0; i < ex->passes.n_folds; ++i) {
    for (int bias = 0; bias < 2; ++bias) {
      int e = mxc__exec_fold_entry(ex, i, bias);
      if (e >= 0) st[e] = MXC_STYPE_DEFAULT;
    }
  }
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_direct[i] && ex->grads[i]) {
      st[ex->grad_entry[i]] = ex->grads[i]->stype;
    }
  }
  int rc = mxc__graph_infer_stype_dispatch(g, st, ex->dispatch);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  ex->any_sparse = 0;
  for (int e = 0; e < g->n_entries; ++e) {
    ex->any_sparse |= st[e] != MXC_STYPE_DEFAULT;
  }
  for (int i = 0; i < g->n_nodes; ++i) {
    ex->any_sparse |= ex->dispatch[i] == MXC__GRAPH_FALLBACK;
  }
  return MXC_OK;
}

int mxc__exec_alloc_grads(mxc__executor *ex, const mxc__graph *gf,
                          mxc__ndarray *const *args, int *made,
                          const char *fn) {
  *made = 0;
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL || ex->grads[i]) continue;
    int st = MXC_STYPE_DEFAULT;
    int r = mxc__stype_attr(gf->nodes[gf->args[i]], "__grad_stype__", &st);
    MXC_RETURN_ERROR_IF(r < 0, MXC_ERR_STYPE,
                        "%s: argument '%s' has a __grad_stype__ that is not "
                        "default, row_sparse or csr",
                        fn, ex->arg_names[i]);
    if (r == 0 && ex->grad_entry[i] >= 0) st = ex->stypes[ex->grad_entry[i]];
    const mxc__ndarray *a = args[i];
    int rc = st == MXC_STYPE_DEFAULT
                 ? mxc__ndarray_create(&a->shape, a->dtype, ex->dev, 1,
                                       &ex->grads[i])
                 : mxc__ndarray_create_sparse(st, &a->shape, a->dtype,
                                              MXC_DTYPE_INT64, ex->dev,
                                              &ex->grads[i]);
    if (rc == MXC_OK && st == MXC_STYPE_DEFAULT) {
      rc = mxc__exec_zero(ex->grads[i], "zeros");
    }
    if (rc != MXC_OK) {
      char pre[320];
      snprintf(pre, sizeof pre, "%s: gradient array of argument '%s'", fn,
               ex->arg_names[i]);
      mxc__error_prefix(pre);
      return rc;
    }
    ++*made;
  }
  return MXC_OK;
}

int mxc__exec_new_entry(const mxc__executor *ex, int e, mxc__ndarray **out) {
  if (ex->stypes[e] == MXC_STYPE_DEFAULT) {
    return mxc__ndarray_create(&ex->shapes[e], ex->dtypes[e], ex->dev, 1, out);
  }
  /* Empty (all zeros) until its kernel writes it. */
  return mxc__ndarray_create_sparse(ex->stypes[e], &ex->shapes[e],
                                    ex->dtypes[e], MXC_DTYPE_INT64, ex->dev,
                                    out);
}

int mxc__exec_deliver_sparse(mxc__ndarray *src, mxc__ndarray *dst,
                             mxc__req req) {
  if (src->stype == dst->stype && req == MXC__REQ_WRITE) {
    return mxc__ndarray_copy(src, dst);
  }
  /* A cast into the gradient array's storage type; req add only into
   * dense arrays (mxc__exec_check_stypes refuses the others). */
  return mxc__op_cast_storage(src, dst->stype, &req, &dst);
}

/* ---- zeros ---- */

static int sparse_zero_fn(void *arg, mxc__exec *ex) {
  const mxc__ndarray *a = arg;
  int rc = mxc__sparse_alloc(a, 0);
  if (rc != MXC_OK) {
    mxc__exec_set_error(ex, mxc__error_msg());
    return rc;
  }
  if (a->stype == MXC_STYPE_CSR) {
    mxc__dense_view ip = mxc__sparse_aux(a, 0);
    for (int64_t r = 0; r <= a->shape.dims[0]; ++r) {
      mxc__sparse_idx_set(&ip, r, 0);
    }
  }
  mxc__sparse_set_valid(a);
  return MXC_OK;
}

int mxc__exec_zero(const mxc__ndarray *a, const char *name) {
  if (a->stype == MXC_STYPE_DEFAULT) return mxc__exec_fill(a, 0, name);
  /* The pushed work keeps a copy of the view struct; the engine keeps the
   * chunk alive until it has run. */
  mxc__ndarray *copy = mxc__malloc(sizeof *copy);
  MXC_RETURN_ERROR_IF(!copy, MXC_ERR_OOM, "%s: out of memory", name);
  *copy = *a;
  copy->ag = NULL;
  int rc = mxc__ndarray_push(sparse_zero_fn, copy, mxc__free, NULL, a, 0, name);
  if (rc != MXC_OK) mxc__free(copy);
  return rc;
}
