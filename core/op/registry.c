/* The operator registry: a fixed-size table and a name index built once.
 * It allocates nothing, so it can never fail for lack of memory, and
 * lookups need no lock once built (pthread_once publishes the table). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/arity.h"
#include "core/op/fusion.h"
#include "core/op/registry.h"

#define MAX_OPS 1024
#define INDEX_SLOTS 4096 /* power of two, > 2 * (names + aliases) */

struct mxc__registry {
  const mxc__op *ops[MAX_OPS];
  int n_ops;
  const mxc__op *public_ops[MAX_OPS]; /* sorted by name */
  int n_public;
  /* Open addressing: name -> op. */
  const char *keys[INDEX_SLOTS];
  const mxc__op *vals[INDEX_SLOTS];
  int n_keys;
  /* Open addressing: descriptor address -> present (validates handles),
   * with the storage functions attached to that operator, if any. */
  const mxc__op *ptrs[INDEX_SLOTS];
  mxc__infer_stype_fn att_infer[INDEX_SLOTS];
  mxc__compute_sparse_fn att_compute[INDEX_SLOTS];
  mxc__fusible_fn fusible; /* set by the fused family, or NULL */
};

static mxc__registry g_reg;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_rc;
static char g_init_msg[256];

static const mxc__op_family *g_families;
static int g_n_families;

void mxc__registry_set_families(const mxc__op_family *families, int n) {
  if (g_families) return;
  g_families = families;
  g_n_families = n;
}

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static int index_add(mxc__registry *r, const char *name, const mxc__op *op) {
  if (r->n_keys * 2 >= INDEX_SLOTS) {
    return mxc__error_set(MXC_ERR_INTERNAL, "operator index is full");
  }
  uint32_t i = hash(name) & (INDEX_SLOTS - 1);
  while (r->keys[i]) {
    if (!strcmp(r->keys[i], name)) {
      return mxc__error_set(MXC_ERR_INTERNAL,
                            "operator name '%s' registered twice", name);
    }
    i = (i + 1) & (INDEX_SLOTS - 1);
  }
  r->keys[i] = name;
  r->vals[i] = op;
  r->n_keys++;
  return MXC_OK;
}

int mxc__registry_add(mxc__registry *r, const mxc__op *op) {
  MXC_RETURN_ERROR_IF(r->n_ops == MAX_OPS, MXC_ERR_INTERNAL,
                      "operator registry is full");
  MXC_RETURN_ERROR_IF(!op->name || !op->compute, MXC_ERR_INTERNAL,
                      "operator '%s' has no name or compute function",
                      op->name ? op->name : "?");
  MXC_FORWARD_IF_ERROR(index_add(r, op->name, op));
  for (int i = 0; op->aliases && op->aliases[i]; ++i) {
    MXC_FORWARD_IF_ERROR(index_add(r, op->aliases[i], op));
  }
  uint32_t h = (uint32_t)(((uintptr_t)op >> 4) * 2654435761u);
  uint32_t i = h & (INDEX_SLOTS - 1);
  while (r->ptrs[i]) i = (i + 1) & (INDEX_SLOTS - 1);
  r->ptrs[i] = op;
  r->ops[r->n_ops++] = op;
  if (!op->hidden) r->public_ops[r->n_public++] = op;
  return MXC_OK;
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const mxc__op *const *)a)->name,
                (*(const mxc__op *const *)b)->name);
}

static void build(void) {
  for (int i = 0; i < g_n_families; ++i) {
    int rc = g_families[i].register_fn(&g_reg);
    if (rc != MXC_OK) {
      g_init_rc = rc;
      snprintf(g_init_msg, sizeof g_init_msg, "family '%s': %s",
               g_families[i].name, mxc__error_msg());
      return;
    }
  }
  qsort(g_reg.public_ops, (size_t)g_reg.n_public, sizeof(const mxc__op *),
        by_name);
}

static int ensure(void) {
  pthread_once(&g_once, build);
  MXC_RETURN_ERROR_IF(g_init_rc != MXC_OK, g_init_rc,
                      "operator registry failed to build: %s", g_init_msg);
  return MXC_OK;
}

const mxc__op *mxc__op_find(const char *name) {
  if (!name || ensure() != MXC_OK) return NULL;
  uint32_t i = hash(name) & (INDEX_SLOTS - 1);
  while (g_reg.keys[i]) {
    if (!strcmp(g_reg.keys[i], name)) return g_reg.vals[i];
    i = (i + 1) & (INDEX_SLOTS - 1);
  }
  return NULL;
}

int mxc__op_lookup(const char *name, const mxc__op **out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "operator name is NULL");
  MXC_FORWARD_IF_ERROR(ensure());
  const mxc__op *op = mxc__op_find(name);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_NOT_FOUND,
                      "unknown operator '%s' (mxc_op_count/mxc_op_get list "
                      "the operators)",
                      name);
  *out = op;
  return MXC_OK;
}

int mxc__op_count(void) {
  return ensure() == MXC_OK ? g_reg.n_public : 0;
}

const mxc__op *mxc__op_at(int index) {
  if (ensure() != MXC_OK || index < 0 || index >= g_reg.n_public) return NULL;
  return g_reg.public_ops[index];
}

/* Slot of op in r->ptrs, or -1. */
static int ptr_slot(const mxc__registry *r, const mxc__op *op) {
  uint32_t h = (uint32_t)(((uintptr_t)op >> 4) * 2654435761u);
  for (uint32_t i = h & (INDEX_SLOTS - 1); r->ptrs[i];
       i = (i + 1) & (INDEX_SLOTS - 1)) {
    if (r->ptrs[i] == op) return (int)i;
  }
  return -1;
}

int mxc__op_is_registered(const mxc__op *op) {
  if (!op || ensure() != MXC_OK) return 0;
  return ptr_slot(&g_reg, op) >= 0;
}

int mxc__registry_attach_stype(mxc__registry *r, const char *name,
                               mxc__infer_stype_fn infer_stype,
                               mxc__compute_sparse_fn compute_sparse) {
  const mxc__op *op = NULL;
  for (uint32_t i = hash(name) & (INDEX_SLOTS - 1); r->keys[i];
       i = (i + 1) & (INDEX_SLOTS - 1)) {
    if (!strcmp(r->keys[i], name)) op = r->vals[i];
  }
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INTERNAL,
                      "sparse kernels attached to unknown operator '%s'",
                      name);
  int s = ptr_slot(r, op);
  MXC_RETURN_ERROR_IF(s < 0 || op->infer_stype || r->att_infer[s] ||
                          !infer_stype || !compute_sparse,
                      MXC_ERR_INTERNAL,
                      "operator '%s' already has storage functions (or "
                      "none were given)",
                      name);
  r->att_infer[s] = infer_stype;
  r->att_compute[s] = compute_sparse;
  return MXC_OK;
}

/* Called only with registered descriptors (after ensure() succeeded). */
mxc__infer_stype_fn mxc__op_infer_stype(const mxc__op *op) {
  if (op->infer_stype) return op->infer_stype;
  int s = ptr_slot(&g_reg, op);
  return s >= 0 ? g_reg.att_infer[s] : NULL;
}

mxc__compute_sparse_fn mxc__op_compute_sparse(const mxc__op *op) {
  if (op->compute_sparse) return op->compute_sparse;
  int s = ptr_slot(&g_reg, op);
  return s >= 0 ? g_reg.att_compute[s] : NULL;
}

int mxc__op_num_inputs(const mxc__op *op, const void *param) {
  return op->num_inputs ? op->num_inputs(param) : op->n_inputs;
}

int mxc__op_num_outputs(const mxc__op *op, const void *param) {
  return op->num_outputs ? op->num_outputs(param) : op->n_outputs;
}

/* Variadic operators list names for their first inputs only (Concat:
 * arg0..arg31; add_n: args); later ones get MXNet's "arg<i>". */
const char *mxc__op_input_name(const mxc__op *op, const void *param, int i) {
  if (op->input_name) return op->input_name(param, i);
  if (!op->input_names) return "data";
  for (int k = 0; k < i; ++k) {
    if (!op->input_names[k]) return mxc__op_arg_name(i);
  }
  return op->input_names[i] ? op->input_names[i] : mxc__op_arg_name(i);
}

int mxc__op_parse_params(const mxc__op *op, const char *const *keys,
                         const char *const *vals, int n, void **out) {
  void *p = mxc__calloc(1, op->param_size ? op->param_size : 1);
  MXC_RETURN_ERROR_IF(!p, MXC_ERR_OOM,
                      "operator '%s': out of memory parsing parameters",
                      op->name);
  int rc = mxc__param_parse(op->name, op->params, op->n_params, keys, vals,
                            n, p);
  if (rc == MXC_OK && op->param_check) rc = op->param_check(op->name, p);
  if (rc != MXC_OK) {
    mxc__free(p);
    return rc;
  }
  *out = p;
  return MXC_OK;
}

int mxc__registry_set_fusible(mxc__registry *r, mxc__fusible_fn fusible) {
  MXC_RETURN_ERROR_IF(r->fusible || !fusible, MXC_ERR_INTERNAL,
                      "fusible predicate set twice (or NULL)");
  r->fusible = fusible;
  return MXC_OK;
}

int mxc__op_fusible(const mxc__op *op) {
  if (!op || ensure() != MXC_OK || !g_reg.fusible) return 0;
  return g_reg.fusible(op);
}
