/* Binding with allocation: simple_bind (every array new, zeros) and
 * reshape (new arrays only where shapes change). Both infer what is not
 * given over the forward graph, make the arrays, and call
 * mxc__executor_bind, which takes its own references. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/graph/infer.h"

/* Arrays handed to mxc__executor_bind; owned here (borrowed entries, such
 * as reshape's shared arrays, are cloned so that freeing is uniform). */
typedef struct bind_arrays {
  int n_args, n_aux;
  mxc__ndarray **args, **grads, **aux;
  int *reqs;
} bind_arrays;

static void arrays_free(bind_arrays *b) {
  for (int i = 0; i < b->n_args; ++i) {
    if (b->args) mxc__ndarray_free(b->args[i]);
    if (b->grads) mxc__ndarray_free(b->grads[i]);
  }
  for (int i = 0; b->aux && i < b->n_aux; ++i) mxc__ndarray_free(b->aux[i]);
  mxc__free(b->args);
  mxc__free(b->grads);
  mxc__free(b->aux);
  mxc__free(b->reqs);
}

static int arrays_alloc(bind_arrays *b, int n_args, int n_aux, const char *fn) {
  memset(b, 0, sizeof *b);
  b->n_args = n_args;
  b->n_aux = n_aux;
  size_t na = (size_t)(n_args ? n_args : 1), nx = (size_t)(n_aux ? n_aux : 1);
  b->args = mxc__calloc(na, sizeof *b->args);
  b->grads = mxc__calloc(na, sizeof *b->grads);
  b->aux = mxc__calloc(nx, sizeof *b->aux);
  b->reqs = mxc__calloc(na, sizeof *b->reqs);
  MXC_RETURN_ERROR_IF(!b->args || !b->grads || !b->aux || !b->reqs, MXC_ERR_OOM,
                      "%s: out of memory", fn);
  return MXC_OK;
}

/* A new array of zeros of storage type stype (sparse ones start empty). */
static int zeros(const mxc__shape *s, int dtype, int stype, mxc__device dev,
                 mxc__ndarray **out) {
  if (stype != MXC_STYPE_DEFAULT) {
    return mxc__ndarray_create_sparse(stype, s, dtype, MXC_DTYPE_INT64, dev,
                                      out);
  }
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(s, dtype, dev, 1, &a));
  int rc = mxc__exec_fill(a, 0, "zeros");
  if (rc != MXC_OK) {
    mxc__ndarray_free(a);
    return rc;
  }
  *out = a;
  return MXC_OK;
}

/* Error for the first argument or auxiliary state of gf whose shape or
 * dtype is unknown; MXC_OK when all are known. */
static int check_vars_known(const mxc__graph *gf, const mxc__shape *s,
                            const int *t, const char *fn) {
  for (int k = 0; k < gf->n_args + gf->n_aux; ++k) {
    int is_arg = k < gf->n_args;
    int nid = is_arg ? gf->args[k] : gf->aux[k - gf->n_args];
    int e = gf->entry_ptr[nid];
    const char *kind = is_arg ? "argument" : "auxiliary state";
    MXC_RETURN_ERROR_IF(s && s[e].ndim < 0, MXC_ERR_SHAPE,
                        "%s: could not infer the shape of %s '%s'; give it "
                        "(or more input shapes) by name",
                        fn, kind, gf->nodes[nid]->name);
    MXC_RETURN_ERROR_IF(t && t[e] < 0, MXC_ERR_DTYPE,
                        "%s: could not infer the dtype of %s '%s'", fn, kind,
                        gf->nodes[nid]->name);
  }
  return MXC_OK;
}

/* Shapes and dtypes of every variable of gf for simple_bind. */
static int simple_infer(const mxc__graph *gf, int n, const char *const *names,
                        const mxc__shape *shapes, const int *dtypes,
                        mxc__shape *s, int *t, const char *fn) {
  for (int e = 0; e < gf->n_entries; ++e) {
    s[e].ndim = -1;
    t[e] = -1;
  }
  MXC_FORWARD_IF_ERROR(
      mxc__graph_set_args(gf, fn, n, names, shapes, sizeof *shapes, s));
  if (dtypes) {
    MXC_FORWARD_IF_ERROR(
        mxc__graph_set_args(gf, fn, n, names, dtypes, sizeof *dtypes, t));
  }
  int rc = mxc__graph_infer_shape(gf, s);
  if (rc == MXC_OK) rc = mxc__graph_infer_type(gf, t);
  if (rc == MXC_OK) {
    /* float32 for whatever neither the caller, a "__dtype__" attribute
     * nor inference decided; then let it propagate. */
    int changed = 0;
    for (int k = 0; k < gf->n_args + gf->n_aux; ++k) {
      int nid = k < gf->n_args ? gf->args[k] : gf->aux[k - gf->n_args];
      int e = gf->entry_ptr[nid];
      if (t[e] < 0) {
        t[e] = MXC_DTYPE_FLOAT32;
        changed = 1;
      }
    }
    if (changed) rc = mxc__graph_infer_type(gf, t);
  }
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  return check_vars_known(gf, s, t, fn);
}

/* reqs for simple_bind: default_req, except the named ones. */
static int simple_reqs(const mxc__graph *gf, int default_req, int n_reqs,
                       const char *const *req_names, const int *reqs, int *out,
                       const char *fn) {
  MXC_RETURN_ERROR_IF(n_reqs < 0 || (n_reqs > 0 && (!req_names || !reqs)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_reqs is %d; expected >= 0 with req_names and "
                      "reqs non-NULL when positive",
                      fn, n_reqs);
  for (int i = 0; i < gf->n_args; ++i) out[i] = default_req;
  for (int r = 0; r < n_reqs; ++r) {
    MXC_RETURN_ERROR_IF(!req_names[r], MXC_ERR_INVALID_ARGUMENT,
                        "%s: req_names[%d] is NULL", fn, r);
    int found = 0;
    for (int i = 0; i < gf->n_args; ++i) {
      if (strcmp(gf->nodes[gf->args[i]]->name, req_names[r]) == 0) {
        out[i] = reqs[r];
        found = 1;
      }
    }
    MXC_RETURN_ERROR_IF(!found, MXC_ERR_NOT_FOUND,
                        "%s: req_names[%d] '%s' is not an argument of the "
                        "symbol",
                        fn, r, req_names[r]);
  }
  for (int i = 0; i < gf->n_args; ++i) {
    MXC_RETURN_ERROR_IF(out[i] != MXC_REQ_NULL && out[i] != MXC_REQ_WRITE &&
                            out[i] != MXC_REQ_ADD,
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: grad_req %d for argument '%s' is not "
                        "MXC_REQ_NULL, MXC_REQ_WRITE or MXC_REQ_ADD",
                        fn, out[i], gf->nodes[gf->args[i]]->name);
  }
  return MXC_OK;
}

/* Zero arrays for every argument and auxiliary state of gf, from the
 * inferred values; arguments of the storage type "__storage_type__"
 * gives. Gradient arrays are left to the executor, which knows their
 * storage types once it has inferred them on the gradient graph. */
static int simple_arrays(const mxc__graph *gf, const mxc__shape *s,
                         const int *t, mxc__device dev, bind_arrays *b,
                         const char *fn) {
  int rc = MXC_OK;
  for (int i = 0; rc == MXC_OK && i < gf->n_args; ++i) {
    const mxc__node *var = gf->nodes[gf->args[i]];
    int e = gf->entry_ptr[gf->args[i]], st = MXC_STYPE_DEFAULT;
    MXC_RETURN_ERROR_IF(
        mxc__stype_attr(var, "__storage_type__", &st) < 0, MXC_ERR_STYPE,
        "%s: argument '%s' has a __storage_type__ that is not default, "
        "row_sparse or csr",
        fn, var->name);
    rc = zeros(&s[e], t[e], st, dev, &b->args[i]);
    if (rc != MXC_OK) {
      char pre[320];
      snprintf(pre, sizeof pre, "%s: argument '%s'", fn, var->name);
      mxc__error_prefix(pre);
    }
  }
  for (int i = 0; rc == MXC_OK && i < gf->n_aux; ++i) {
    int e = gf->entry_ptr[gf->aux[i]];
    rc = zeros(&s[e], t[e], MXC_STYPE_DEFAULT, dev, &b->aux[i]);
  }
  return rc;
}

int mxc__executor_simple_bind(const mxc__symbol *sym, mxc__device dev,
                              int n_shapes, const char *const *names,
                              const mxc__shape *shapes, const int *dtypes,
                              int default_req, int n_reqs,
                              const char *const *req_names, const int *reqs,
                              int flags, mxc__executor **out) {
  const char *fn = "mxc_executor_simple_bind";
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, fn));
  mxc__graph *gf = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(sym->outputs, sym->n_outputs, &gf));
  mxc__shape *s = mxc__calloc((size_t)gf->n_entries, sizeof *s);
  int *t = mxc__calloc((size_t)gf->n_entries, sizeof *t);
  bind_arrays b;
  int rc = arrays_alloc(&b, gf->n_args, gf->n_aux, fn);
  if (rc == MXC_OK && (!s || !t)) {
    rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  }
  if (rc == MXC_OK) {
    rc = simple_infer(gf, n_shapes, names, shapes, dtypes, s, t, fn);
  }
  if (rc == MXC_OK) {
    rc = simple_reqs(gf, default_req, n_reqs, req_names, reqs, b.reqs, fn);
  }
  if (rc == MXC_OK) rc = simple_arrays(gf, s, t, dev, &b, fn);
  if (rc == MXC_OK) {
    rc = mxc__executor_bind_alloc(sym, dev, b.args, b.n_args, b.grads, b.reqs,
                                  b.aux, b.n_aux, flags, 1, fn, out);
  }
  arrays_free(&b);
  mxc__free(s);
  mxc__free(t);
  mxc__graph_free(gf);
  return rc;
}

/* ---- reshape ---- */

/* New shapes of every variable: the given ones, what inference deduces
 * from them, and the current shape for anything still unknown. */
static int reshape_infer(const mxc__executor *ex, const mxc__graph *gf, int n,
                         const char *const *names, const mxc__shape *shapes,
                         mxc__shape *s, const char *fn) {
  for (int e = 0; e < gf->n_entries; ++e) s[e].ndim = -1;
  MXC_FORWARD_IF_ERROR(
      mxc__graph_set_args(gf, fn, n, names, shapes, sizeof *shapes, s));
  int rc = mxc__graph_infer_shape(gf, s);
  if (rc == MXC_OK) {
    for (int i = 0; i < ex->n_args; ++i) {
      int e = gf->entry_ptr[gf->args[i]];
      if (s[e].ndim < 0) s[e] = ex->bound[i]->shape;
    }
    for (int i = 0; i < ex->n_aux; ++i) {
      int e = gf->entry_ptr[gf->aux[i]];
      if (s[e].ndim < 0) s[e] = ex->bound[ex->n_args + i]->shape;
    }
    rc = mxc__graph_infer_shape(gf, s);
  }
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}

/* Shares the array cur when shape s is its shape, else a new zero array
 * of its storage type. */
static int share_or_zeros(const mxc__ndarray *cur, const mxc__shape *s,
                          mxc__device dev, mxc__ndarray **out) {
  if (mxc__shape_equal(&cur->shape, s)) {
    return mxc__ndarray_clone_view(cur, out);
  }
  return zeros(s, cur->dtype, cur->stype, dev, out);
}

int mxc__executor_reshape(const mxc__executor *ex, int n,
                          const char *const *names, const mxc__shape *shapes,
                          mxc__executor **out) {
  const char *fn = "mxc_executor_reshape";
  mxc__graph *gf = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__graph_build(ex->sym->outputs, ex->sym->n_outputs, &gf));
  mxc__shape *s = mxc__calloc((size_t)gf->n_entries, sizeof *s);
  bind_arrays b;
  int rc = arrays_alloc(&b, ex->n_args, ex->n_aux, fn);
  if (rc == MXC_OK && !s) {
    rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  }
  if (rc == MXC_OK) rc = reshape_infer(ex, gf, n, names, shapes, s, fn);
  for (int i = 0; rc == MXC_OK && i < ex->n_args; ++i) {
    const mxc__shape *si = &s[gf->entry_ptr[gf->args[i]]];
    b.reqs[i] = ex->grad_req[i];
    rc = share_or_zeros(ex->bound[i], si, ex->dev, &b.args[i]);
    if (rc == MXC_OK && ex->grads[i]) {
      rc = share_or_zeros(ex->grads[i], si, ex->dev, &b.grads[i]);
    }
  }
  for (int i = 0; rc == MXC_OK && i < ex->n_aux; ++i) {
    const mxc__shape *si = &s[gf->entry_ptr[gf->aux[i]]];
    rc = share_or_zeros(ex->bound[ex->n_args + i], si, ex->dev, &b.aux[i]);
  }
  if (rc == MXC_OK) {
    rc = mxc__executor_bind(ex->sym, ex->dev, b.args, b.n_args, b.grads, b.reqs,
                            b.aux, b.n_aux, ex->flags, fn, out);
  }
  arrays_free(&b);
  mxc__free(s);
  mxc__graph_free(gf);
  return rc;
}
