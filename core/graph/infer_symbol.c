/* Inference over symbols: given argument values by name or position, run
 * a graph pass and group the results as arguments / outputs / auxiliary
 * states (infer.h). */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/infer.h"

void mxc__infer_result_free(mxc__infer_result *r) {
  if (!r) return;
  for (int g = 0; g < MXC__INFER_GROUPS; ++g) {
    mxc__free(r->shapes[g]);
    mxc__free(r->vals[g]);
  }
  mxc__free(r);
}

int mxc__graph_set_args(const mxc__graph *g, const char *fn, int n,
                        const char *const *names, const void *src,
                        size_t elem_size, void *dst) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && !src, MXC_ERR_INVALID_ARGUMENT,
                      "%s: the values are NULL but n is %d", fn, n);
  const char *from = src;
  char *to = dst;
  if (!names) {
    MXC_RETURN_ERROR_IF(n > g->n_args, MXC_ERR_INVALID_ARGUMENT,
                        "%s: %d values given positionally but the symbol "
                        "has %d arguments",
                        fn, n, g->n_args);
    for (int i = 0; i < n; ++i) {
      int e = g->entry_ptr[g->args[i]];
      memcpy(to + (size_t)e * elem_size, from + (size_t)i * elem_size,
             elem_size);
    }
    return MXC_OK;
  }
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!names[i], MXC_ERR_INVALID_ARGUMENT,
                        "%s: names[%d] is NULL", fn, i);
    int found = 0;
    for (int v = 0; v < g->n_nodes; ++v) {
      if (g->nodes[v]->op || strcmp(g->nodes[v]->name, names[i]) != 0) {
        continue;
      }
      memcpy(to + (size_t)g->entry_ptr[v] * elem_size,
             from + (size_t)i * elem_size, elem_size);
      found = 1;
    }
    MXC_RETURN_ERROR_IF(!found, MXC_ERR_NOT_FOUND,
                        "%s: '%s' is not an argument or auxiliary state of "
                        "the symbol",
                        fn, names[i]);
  }
  return MXC_OK;
}

int mxc__shapes_from_dims(const char *fn, int n, const int *ndims,
                          const int64_t *dims, mxc__shape **out) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: shape count is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && !ndims, MXC_ERR_INVALID_ARGUMENT,
                      "%s: ndims is NULL but %d shapes are given", fn, n);
  mxc__shape *s = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof *s);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "%s: out of memory", fn);
  int64_t pos = 0;
  for (int i = 0; i < n; ++i) {
    int bad = ndims[i] < 0 || ndims[i] > MXC_MAX_NDIM ||
              (ndims[i] > 0 && !dims);
    for (int k = 0; !bad && k < ndims[i]; ++k) bad = dims[pos + k] < 0;
    if (bad) {
      mxc__free(s);
      return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                            "%s: shape %d is invalid (ndims %d); expected "
                            "0..%d axes, dims non-NULL and extents >= 0",
                            fn, i, ndims[i], MXC_MAX_NDIM);
    }
    /* Element counts: byte sizes are checked when arrays are made. */
    char what[96];
    snprintf(what, sizeof what, "%s: shape %d", fn, i);
    int rc = mxc__shape_make(dims + pos, ndims[i], 1, what, &s[i]);
    if (rc != MXC_OK) {
      mxc__free(s);
      return rc;
    }
    pos += ndims[i];
  }
  *out = s;
  return MXC_OK;
}

/* Entry ids of group `grp` of g, as a result lists them. */
static int group_count(const mxc__graph *g, int grp) {
  return grp == MXC_INFER_ARGS ? g->n_args
                               : grp == MXC_INFER_AUX ? g->n_aux : g->n_heads;
}
static int group_entry(const mxc__graph *g, int grp, int i) {
  if (grp == MXC_INFER_ARGS) return g->entry_ptr[g->args[i]];
  if (grp == MXC_INFER_AUX) return g->entry_ptr[g->aux[i]];
  return g->heads[i];
}

/* With partial == 0, the first unknown value (arguments, then auxiliary
 * states, then outputs) is an error naming it. */
static int check_complete(const mxc__graph *g, const mxc__infer_result *r,
                          const char *pass, const char *what, int code) {
  static const int order[] = {MXC_INFER_ARGS, MXC_INFER_AUX,
                              MXC_INFER_OUTPUTS};
  static const char *const label[] = {"argument", "output",
                                      "auxiliary state"};
  for (int o = 0; o < 3; ++o) {
    int grp = order[o];
    for (int i = 0; i < r->n[grp]; ++i) {
      int known = r->shapes[grp] ? r->shapes[grp][i].ndim >= 0
                                 : r->vals[grp][i] >= 0;
      if (known) continue;
      int e = group_entry(g, grp, i);
      const mxc__node *n = g->nodes[mxc__graph_entry_node(g, e)];
      return mxc__error_set(code,
                            "%s: the %s of %s '%s' could not be inferred; "
                            "give it, or the %ss it depends on (or ask for "
                            "partial inference)",
                            pass, what, label[grp], n->name, what);
    }
  }
  return MXC_OK;
}

/* Copies per-entry values into a new result. */
static int collect(const mxc__graph *g, mxc__infer_kind kind,
                   const void *vals, mxc__infer_result **out) {
  mxc__infer_result *r = mxc__calloc(1, sizeof *r);
  MXC_RETURN_ERROR_IF(!r, MXC_ERR_OOM, "out of memory in inference");
  r->kind = kind;
  size_t sz = kind == MXC__INFER_SHAPE ? sizeof(mxc__shape) : sizeof(int);
  for (int grp = 0; grp < MXC__INFER_GROUPS; ++grp) {
    int n = group_count(g, grp);
    char *p = mxc__calloc((size_t)(n > 0 ? n : 1), sz);
    if (!p) {
      mxc__infer_result_free(r);
      return mxc__error_set(MXC_ERR_OOM, "out of memory in inference");
    }
    r->n[grp] = n;
    if (kind == MXC__INFER_SHAPE) {
      r->shapes[grp] = (mxc__shape *)p;
    } else {
      r->vals[grp] = (int *)p;
    }
    for (int i = 0; i < n; ++i) {
      memcpy(p + (size_t)i * sz,
             (const char *)vals + (size_t)group_entry(g, grp, i) * sz, sz);
    }
  }
  *out = r;
  return MXC_OK;
}

static const char *const k_fn[] = {"mxc_symbol_infer_shape",
                                   "mxc_symbol_infer_type",
                                   "mxc_symbol_infer_storage_type"};

/* The common body: graph, given values, pass, completeness, result. */
static int infer_symbol(const mxc__symbol *s, mxc__infer_kind kind, int n,
                        const char *const *names, const void *given,
                        int partial, mxc__infer_result **out) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(s->outputs, s->n_outputs, &g));
  size_t sz = kind == MXC__INFER_SHAPE ? sizeof(mxc__shape) : sizeof(int);
  char *vals = mxc__malloc(sz * (size_t)g->n_entries);
  int rc = vals ? MXC_OK
                : mxc__error_set(MXC_ERR_OOM, "%s: out of memory", k_fn[kind]);
  for (int e = 0; rc == MXC_OK && e < g->n_entries; ++e) {
    if (kind == MXC__INFER_SHAPE) {
      ((mxc__shape *)vals)[e].ndim = -1;
    } else {
      ((int *)vals)[e] = -1;
    }
  }
  if (rc == MXC_OK) {
    rc = mxc__graph_set_args(g, k_fn[kind], n, names, given, sz, vals);
  }
  if (rc == MXC_OK) {
    if (kind == MXC__INFER_SHAPE) rc = mxc__graph_infer_shape(g, (void *)vals);
    if (kind == MXC__INFER_TYPE) rc = mxc__graph_infer_type(g, (int *)vals);
    if (kind == MXC__INFER_STYPE) rc = mxc__graph_infer_stype(g, (int *)vals);
  }
  mxc__infer_result *r = NULL;
  if (rc == MXC_OK) rc = collect(g, kind, vals, &r);
  if (rc == MXC_OK && !partial) {
    rc = kind == MXC__INFER_SHAPE
             ? check_complete(g, r, "infer_shape", "shape", MXC_ERR_SHAPE)
             : check_complete(g, r, "infer_type", "dtype", MXC_ERR_DTYPE);
  }
  mxc__free(vals);
  mxc__graph_free(g);
  if (rc != MXC_OK) {
    mxc__infer_result_free(r);
    return rc;
  }
  *out = r;
  return MXC_OK;
}

int mxc__symbol_infer_shape(const mxc__symbol *s, int n,
                            const char *const *names,
                            const mxc__shape *shapes, int partial,
                            mxc__infer_result **out) {
  return infer_symbol(s, MXC__INFER_SHAPE, n, names, shapes, partial, out);
}

int mxc__symbol_infer_type(const mxc__symbol *s, int n,
                           const char *const *names, const int *dtypes,
                           int partial, mxc__infer_result **out) {
  return infer_symbol(s, MXC__INFER_TYPE, n, names, dtypes, partial, out);
}

int mxc__symbol_infer_stype(const mxc__symbol *s, int n,
                            const char *const *names, const int *stypes,
                            mxc__infer_result **out) {
  /* Storage inference leaves nothing unknown. */
  return infer_symbol(s, MXC__INFER_STYPE, n, names, stypes, 1, out);
}
