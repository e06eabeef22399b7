/* Shape, dtype and storage-type passes over indexed graphs (see infer.h).
 *
 * Shapes and dtypes share one fixed-point driver parameterized by a small
 * table of value operations (`vkind`), so the sweep order, the merging of
 * what an operator deduced, and the error reporting are written once. */
#include "core/graph/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/op/common.h"

/* Operations on one kind of value (a shape or a dtype code). */
typedef struct vkind {
  const char *pass; /* "infer_shape": prefixes messages */
  const char *what; /* "shape" */
  size_t size;      /* bytes of one value */
  int err;          /* code for a conflict the operator did not report */
  int (*known)(const void *v);
  void (*set_unknown)(void *v);
  int (*equal)(const void *a, const void *b);
  const char *(*str)(const void *v, char *buf, size_t len);
  /* Runs the operator's inference on copies; MXC_OK or its error. */
  int (*run)(const mxc__node *n, void *in, int n_in, void *out, int n_out);
  /* Sets *v from a variable's user attribute when it has a usable one;
   * MXC_OK, or an error for a value that can never be used. */
  int (*from_attr)(const mxc__node *var, void *v);
  /* 1 for a value an operator without inputs deduces that MXNet treats
   * as partly unknown (a shape with a 0 extent: _zeros(shape=(0, H)));
   * NULL when every value is definite. */
  int (*tentative)(const void *v);
} vkind;

/* ---- shapes ---- */

static int shape_known(const void *v) {
  return ((const mxc__shape *)v)->ndim >= 0;
}
static void shape_set_unknown(void *v) { ((mxc__shape *)v)->ndim = -1; }
static int shape_equal(const void *a, const void *b) {
  return mxc__shape_equal(a, b);
}
static const char *shape_str(const void *v, char *buf, size_t len) {
  return mxc__shape_str(v, buf, len);
}
static int shape_run(const mxc__node *n, void *in, int n_in, void *out,
                     int n_out) {
  return mxc__op_infer_shape(n->op, n->param, in, n_in, out, n_out);
}

int mxc__parse_shape_attr(const char *s, mxc__shape *out) {
  mxc__tuple t;
  if (!s || !mxc__tuple_parse(s, &t)) return 0;
  if (t.ndim < 0 || t.ndim > MXC_MAX_NDIM) return 0;
  mxc__shape r;
  memset(&r, 0, sizeof r);
  r.ndim = t.ndim;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.d[i] <= 0) return 0; /* 0 (or None) = unknown extent */
    r.dims[i] = t.d[i];
  }
  *out = r;
  return 1;
}

/* A malformed attribute or one with unknown (0) extents leaves the shape
 * unknown; a well-formed one that breaks the shape invariant (a model
 * file's (2^40,2^40)) is an error naming the variable. */
static int shape_from_attr(const mxc__node *var, void *v) {
  mxc__shape s;
  if (!mxc__parse_shape_attr(mxc__node_get_uattr(var, "__shape__"), &s)) {
    return MXC_OK;
  }
  char what[160];
  snprintf(what, sizeof what, "infer_shape: variable '%s': attribute "
           "__shape__", var->name);
  MXC_FORWARD_IF_ERROR(mxc__shape_check(&s, 1, what));
  *(mxc__shape *)v = s;
  return MXC_OK;
}

static int shape_tentative(const void *v) {
  const mxc__shape *s = v;
  for (int i = 0; i < s->ndim; ++i) {
    if (s->dims[i] == 0) return 1;
  }
  return 0;
}

static const vkind k_shape = {
    "infer_shape", "shape", sizeof(mxc__shape), MXC_ERR_SHAPE,
    shape_known,   shape_set_unknown, shape_equal, shape_str,
    shape_run,     shape_from_attr,   shape_tentative,
};

/* ---- dtypes ---- */

static int type_known(const void *v) { return *(const int *)v >= 0; }
static void type_set_unknown(void *v) { *(int *)v = -1; }
static int type_equal(const void *a, const void *b) {
  return *(const int *)a == *(const int *)b;
}
static const char *type_str(const void *v, char *buf, size_t len) {
  const char *name = mxc__dtype_name(*(const int *)v);
  if (name) {
    snprintf(buf, len, "%s", name);
  } else {
    snprintf(buf, len, "dtype %d", *(const int *)v);
  }
  return buf;
}
static int type_run(const mxc__node *n, void *in, int n_in, void *out,
                    int n_out) {
  if (n->op->infer_type) {
    return n->op->infer_type(n->op, n->param, in, n_in, out, n_out);
  }
  return mxc__infer_type_same(n->op, n->param, in, n_in, out, n_out);
}

/* A dtype attribute: MXNet writes the number ("0"); a name ("float32")
 * is accepted too. */
static int type_parse_attr(const mxc__node *var, void *v) {
  const char *s = mxc__node_get_uattr(var, "__dtype__");
  if (!s) return 0;
  char *end = NULL;
  long code = strtol(s, &end, 10);
  if (end != s && *end == '\0') {
    if (code < 0 || code > 255 || !mxc__dtype_name((int)code)) return 0;
    *(int *)v = (int)code;
    return 1;
  }
  for (int c = 0; c < 32; ++c) {
    const char *name = mxc__dtype_name(c);
    if (name && strcmp(name, s) == 0) {
      *(int *)v = c;
      return 1;
    }
  }
  return 0;
}

/* An unusable dtype attribute leaves the dtype unknown. */
static int type_from_attr(const mxc__node *var, void *v) {
  (void)type_parse_attr(var, v);
  return MXC_OK;
}

static const vkind k_type = {
    "infer_type", "dtype",  sizeof(int),   MXC_ERR_DTYPE,
    type_known,   type_set_unknown, type_equal, type_str,
    type_run,     type_from_attr,   NULL,
};

/* ---- the fixed-point driver ---- */

/* Name of output j of an operator node (static or in buf). */
static const char *output_name(const mxc__node *n, int j, char *buf,
                               size_t len) {
  const char *const *names = n->op->output_names;
  for (int i = 0; names && names[i]; ++i) {
    if (i == j) return names[i];
  }
  snprintf(buf, len, "output%d", j);
  return buf;
}

typedef struct driver {
  const vkind *k;
  const mxc__graph *g;
  char *vals; /* n_entries values */
  char *in;   /* scratch: the largest input count */
  char *out;  /* scratch: the largest output count */
  int changed;
  int final;    /* tentative values are merged (the last sweeps) */
  int deferred; /* a tentative value waited */
} driver;

#define VAL(base, i) ((base) + (size_t)(i) * d->k->size)

/* Copies node i's current values into the scratch arrays. */
static void load(driver *d, int i) {
  const mxc__graph *g = d->g;
  int n_in = g->in_ptr[i + 1] - g->in_ptr[i];
  for (int k = 0; k < n_in; ++k) {
    memcpy(VAL(d->in, k), VAL(d->vals, g->in_entries[g->in_ptr[i] + k]),
           d->k->size);
  }
  int n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  for (int j = 0; j < n_out; ++j) {
    memcpy(VAL(d->out, j), VAL(d->vals, g->entry_ptr[i] + j), d->k->size);
  }
}

/* The conflict message: `have` is what the graph holds for the input or
 * output, `got` what the operator deduces for it from the rest. */
static int conflict(driver *d, int i, int is_input, int slot, int code,
                    const void *have, const void *got) {
  const mxc__node *n = d->g->nodes[i];
  char nb[32], b1[160], b2[160];
  const char *slot_name = is_input
                              ? mxc__op_input_name(n->op, n->param, slot)
                              : output_name(n, slot, nb, sizeof nb);
  return mxc__error_set(code,
                        "%s: node '%s' (%s) %s '%s': %s %s conflicts with "
                        "inferred %s",
                        d->k->pass, n->name, n->op->name,
                        is_input ? "input" : "output", slot_name, d->k->what,
                        d->k->str(have, b1, sizeof b1),
                        d->k->str(got, b2, sizeof b2));
}

/* Whether forgetting node i's known value for one input or output makes
 * the operator deduce a different one; if so, reports that conflict. */
static int try_blame(driver *d, int i, int is_input, int idx, int rc) {
  const mxc__graph *g = d->g;
  int n_in = g->in_ptr[i + 1] - g->in_ptr[i];
  int n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  int e = is_input ? g->in_entries[g->in_ptr[i] + idx] : g->entry_ptr[i] + idx;
  if (!d->k->known(VAL(d->vals, e))) return MXC_OK;
  load(d, i);
  char *v = is_input ? VAL(d->in, idx) : VAL(d->out, idx);
  d->k->set_unknown(v);
  if (d->k->run(g->nodes[i], d->in, n_in, d->out, n_out) != MXC_OK) {
    return MXC_OK;
  }
  if (!d->k->known(v) || d->k->equal(v, VAL(d->vals, e))) return MXC_OK;
  return conflict(d, i, is_input, idx, rc, VAL(d->vals, e), v);
}

/* The operator rejected node i's values (its error is current). Finds
 * which known input or output disagrees with what the others imply, trying
 * inputs from the last (weights are blamed before the data they are
 * deduced from) and then outputs; otherwise wraps the operator's message
 * with the node's name. */
static int blame(driver *d, int i, int rc) {
  if (rc == MXC_ERR_OOM) return rc;
  char msg[MXC__ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mxc__error_msg());
  const mxc__graph *g = d->g;
  int n_in = g->in_ptr[i + 1] - g->in_ptr[i];
  int n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  for (int k = n_in - 1; k >= 0; --k) {
    MXC_FORWARD_IF_ERROR(try_blame(d, i, 1, k, rc));
  }
  for (int j = 0; j < n_out; ++j) {
    MXC_FORWARD_IF_ERROR(try_blame(d, i, 0, j, rc));
  }
  const mxc__node *n = g->nodes[i];
  return mxc__error_set(rc, "%s: node '%s' (%s): %s", d->k->pass, n->name,
                        n->op->name, msg);
}

/* Merges scratch values (what the operator deduced) into the graph's. */
static int merge(driver *d, int i, int is_input, int slot, int e,
                 const void *got) {
  void *have = VAL(d->vals, e);
  if (!d->k->known(got)) return MXC_OK;
  if (!d->k->known(have)) {
    memcpy(have, got, d->k->size);
    d->changed = 1;
    return MXC_OK;
  }
  if (d->k->equal(have, got)) return MXC_OK;
  return conflict(d, i, is_input, slot, d->k->err, have, got);
}

static int visit(driver *d, int i) {
  const mxc__graph *g = d->g;
  const mxc__node *n = g->nodes[i];
  if (!n->op) return MXC_OK;
  int n_in = g->in_ptr[i + 1] - g->in_ptr[i];
  int n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  load(d, i);
  int rc = d->k->run(n, d->in, n_in, d->out, n_out);
  if (rc != MXC_OK) return blame(d, i, rc);
  for (int k = 0; k < n_in; ++k) {
    MXC_FORWARD_IF_ERROR(merge(d, i, 1, k, g->in_entries[g->in_ptr[i] + k],
                               VAL(d->in, k)));
  }
  for (int j = 0; j < n_out; ++j) {
    /* What an input-less operator deduces tentatively waits until the
     * rest of the graph has said what it can. */
    if (n_in == 0 && !d->final && d->k->tentative &&
        d->k->tentative(VAL(d->out, j))) {
      d->deferred = 1;
      continue;
    }
    MXC_FORWARD_IF_ERROR(
        merge(d, i, 0, j, g->entry_ptr[i] + j, VAL(d->out, j)));
  }
  return MXC_OK;
}

static int sweep_until_stable(driver *d) {
  const mxc__graph *g = d->g;
  for (int i = 0; i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    char *v = VAL(d->vals, g->entry_ptr[i]);
    if (!n->op && !d->k->known(v)) {
      MXC_FORWARD_IF_ERROR(d->k->from_attr(n, v));
    }
  }
  for (d->final = 0; d->final < 2 && (!d->final || d->deferred);
       d->final++) {
    do {
      d->changed = 0;
      for (int i = 0; i < g->n_nodes; ++i) MXC_FORWARD_IF_ERROR(visit(d, i));
      for (int i = g->n_nodes - 1; i >= 0; --i) {
        MXC_FORWARD_IF_ERROR(visit(d, i));
      }
    } while (d->changed);
  }
  return MXC_OK;
}

static int run_pass(const vkind *k, const mxc__graph *g, void *vals) {
  int max_in = 1, max_out = 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    int a = g->in_ptr[i + 1] - g->in_ptr[i];
    int b = g->entry_ptr[i + 1] - g->entry_ptr[i];
    if (a > max_in) max_in = a;
    if (b > max_out) max_out = b;
  }
  driver d = {k, g, vals, NULL, NULL, 0, 0, 0};
  d.in = mxc__malloc(k->size * (size_t)(max_in + max_out));
  MXC_RETURN_ERROR_IF(!d.in, MXC_ERR_OOM, "%s: out of memory", k->pass);
  d.out = d.in + k->size * (size_t)max_in;
  int rc = sweep_until_stable(&d);
  mxc__free(d.in);
  return rc;
}

int mxc__graph_infer_shape(const mxc__graph *g, mxc__shape *shapes) {
  return run_pass(&k_shape, g, shapes);
}

int mxc__graph_infer_type(const mxc__graph *g, int *dtypes) {
  return run_pass(&k_type, g, dtypes);
}

/* ---- storage types ---- */

/* A "__storage_type__" value: a name ("default", "row_sparse", "csr") or
 * its MXC_STYPE_* number. 1 and *out when valid, 0 otherwise. */
static int parse_stype(const char *s, int *out) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (end != s && *end == '\0') {
    if (v < MXC_STYPE_DEFAULT || v > MXC_STYPE_CSR) return 0;
    *out = (int)v;
    return 1;
  }
  *out = mxc__stype_parse(s);
  return *out >= 0;
}

/* Variables: the caller's value, else the attribute, else dense. A bad
 * attribute is an error naming the variable (a typo would otherwise bind
 * a dense array silently where a sparse one was meant). */
static int stype_of_var(const mxc__node *var, int *st) {
  if (*st >= MXC_STYPE_DEFAULT && *st <= MXC_STYPE_CSR) return MXC_OK;
  MXC_RETURN_ERROR_IF(*st >= 0, MXC_ERR_STYPE,
                      "infer_storage_type: variable '%s' is given storage "
                      "type %d; expected 0 (default), 1 (row_sparse) or "
                      "2 (csr)",
                      var->name, *st);
  const char *a = mxc__node_get_uattr(var, "__storage_type__");
  *st = MXC_STYPE_DEFAULT;
  MXC_RETURN_ERROR_IF(a && !parse_stype(a, st), MXC_ERR_STYPE,
                      "infer_storage_type: variable '%s' has "
                      "__storage_type__ '%s'; expected default, row_sparse "
                      "or csr",
                      var->name, a);
  return MXC_OK;
}

int mxc__stype_attr(const mxc__node *var, const char *key, int *out) {
  const char *a = mxc__node_get_uattr(var, key);
  if (!a) return 0;
  return parse_stype(a, out) ? 1 : -1;
}

/* Storage types of node i's outputs when it falls back: the fixed ones
 * (the fallback converts back into them), dense for the rest. */
static void fallback_outputs(const mxc__graph *g, int i, int *stypes) {
  for (int e = g->entry_ptr[i]; e < g->entry_ptr[i + 1]; ++e) {
    if (stypes[e] < 0) stypes[e] = MXC_STYPE_DEFAULT;
  }
}

/* Runs node i's infer_stype on its known inputs and fixed outputs.
 * Returns MXC_OK with *disp set, or the error (prefixed with the node). */
static int run_stype(const mxc__graph *g, int i, mxc__infer_stype_fn fn,
                     const int *ist, int *ost, int any_sparse, int *disp) {
  const mxc__node *n = g->nodes[i];
  int n_in = n->n_inputs, n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  int rc = fn(n->op, n->param, ist, n_in, ost, n_out, disp);
  if (rc == MXC_ERR_STYPE && any_sparse) {
    /* No sparse kernel for this combination: dense temporaries. */
    mxc__error_clear();
    *disp = MXC__GRAPH_FALLBACK;
    return MXC_OK;
  }
  if (rc != MXC_OK) {
    char pre[320];
    snprintf(pre, sizeof pre, "infer_storage_type: node '%s' (%s)", n->name,
             n->op->name);
    mxc__error_prefix(pre);
    return rc;
  }
  char nb[32];
  for (int j = 0; j < n_out; ++j) {
    int have = ost[j], fixed = ist[n_in + j];
    MXC_RETURN_ERROR_IF(have < MXC_STYPE_DEFAULT || have > MXC_STYPE_CSR,
                        MXC_ERR_INTERNAL,
                        "infer_storage_type: node '%s' (%s) output '%s': "
                        "the operator left storage type %d",
                        n->name, n->op->name,
                        output_name(n, j, nb, sizeof nb), have);
    MXC_RETURN_ERROR_IF(fixed >= 0 && have != fixed, MXC_ERR_STYPE,
                        "infer_storage_type: node '%s' (%s) output '%s': "
                        "the operator gives storage type %s but the graph "
                        "needs %s (the array bound there)",
                        n->name, n->op->name, output_name(n, j, nb, sizeof nb),
                        mxc__stype_name(have), mxc__stype_name(fixed));
    any_sparse |= have != MXC_STYPE_DEFAULT;
  }
  MXC_RETURN_ERROR_IF(*disp == MXC__DISPATCH_DENSE && any_sparse,
                      MXC_ERR_INTERNAL,
                      "infer_storage_type: node '%s' (%s): the operator "
                      "chose its dense kernel for sparse arrays",
                      n->name, n->op->name);
  MXC_RETURN_ERROR_IF(*disp != MXC__DISPATCH_DENSE &&
                          *disp != MXC__DISPATCH_SPARSE,
                      MXC_ERR_INTERNAL,
                      "infer_storage_type: node '%s' (%s): dispatch %d is "
                      "neither dense nor sparse",
                      n->name, n->op->name, *disp);
  return MXC_OK;
}

/* Node i: storage types of its outputs and its kernel choice. */
static int stype_node(const mxc__graph *g, int i, int *stypes, int *scratch,
                      int8_t *dispatch) {
  const mxc__node *n = g->nodes[i];
  int n_in = n->n_inputs, n_out = g->entry_ptr[i + 1] - g->entry_ptr[i];
  int *ist = scratch, *ost = scratch + n_in + n_out;
  int any_sparse = 0;
  for (int k = 0; k < n_in; ++k) {
    ist[k] = stypes[g->in_entries[g->in_ptr[i] + k]];
    any_sparse |= ist[k] != MXC_STYPE_DEFAULT;
  }
  /* ist[n_in + j] keeps the fixed output types; ost is what the operator
   * may change. */
  for (int j = 0; j < n_out; ++j) {
    ost[j] = ist[n_in + j] = stypes[g->entry_ptr[i] + j];
    any_sparse |= ost[j] > MXC_STYPE_DEFAULT;
  }
  mxc__infer_stype_fn fn = mxc__op_infer_stype(n->op);
  int disp = MXC__DISPATCH_DENSE;
  if (fn) {
    MXC_FORWARD_IF_ERROR(run_stype(g, i, fn, ist, ost, any_sparse, &disp));
  } else if (any_sparse) {
    disp = MXC__GRAPH_FALLBACK;
  }
  if (disp == MXC__GRAPH_FALLBACK) {
    fallback_outputs(g, i, stypes);
  } else {
    for (int j = 0; j < n_out; ++j) {
      stypes[g->entry_ptr[i] + j] = fn ? ost[j] : MXC_STYPE_DEFAULT;
    }
  }
  if (dispatch) dispatch[i] = (int8_t)disp;
  return MXC_OK;
}

int mxc__graph_infer_stype_dispatch(const mxc__graph *g, int *stypes,
                                    int8_t *dispatch) {
  int max_io = 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    const mxc__node *n = g->nodes[i];
    int io = n->n_inputs + 2 * (g->entry_ptr[i + 1] - g->entry_ptr[i]);
    if (io > max_io) max_io = io;
    if (n->op) continue;
    if (dispatch) dispatch[i] = MXC__GRAPH_VARIABLE;
    MXC_FORWARD_IF_ERROR(stype_of_var(n, &stypes[g->entry_ptr[i]]));
  }
  int *scratch = mxc__malloc(sizeof(int) * (size_t)max_io);
  MXC_RETURN_ERROR_IF(!scratch, MXC_ERR_OOM,
                      "infer_storage_type: out of memory");
  int rc = MXC_OK;
  /* One topological sweep: storage types flow from inputs to outputs
   * only (unlike shapes, nothing is deduced backwards). */
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    if (g->nodes[i]->op) rc = stype_node(g, i, stypes, scratch, dispatch);
  }
  mxc__free(scratch);
  return rc;
}

int mxc__graph_infer_stype(const mxc__graph *g, int *stypes) {
  return mxc__graph_infer_stype_dispatch(g, stypes, NULL);
}
