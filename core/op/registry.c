/* The operator registry: a fixed-size table and a name index built once
 * (core/op/registry_internal.h). It allocates nothing, so it can never
 * fail for lack of memory, and lookups need no lock once built
 * (pthread_once publishes the table). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/arity.h"
#include "core/op/common.h"
#include "core/op/format.h"
#include "core/op/fusion.h"
#include "core/op/registry.h"
#include "core/op/registry_internal.h"

static mxc__registry g_reg;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_rc;
static char g_init_msg[256];

static const mxc__op_family *g_families;
static int g_n_families;
static atomic_int g_built; /* set when build() starts: no more plug-ins */

void mxc__registry_set_families(const mxc__op_family *families, int n) {
  if (g_families || atomic_load(&g_built)) return;
  g_families = families;
  g_n_families = n;
}

int mxc__registry_open(void) { return !atomic_load(&g_built); }

/* Plug-ins that run after the families: the backends' attach functions. */
#define MAX_PLUGINS 8
static mxc__op_family g_plugins[MAX_PLUGINS];
static int g_n_plugins;

int mxc__registry_add_plugin(const char *name,
                             int (*register_fn)(mxc__registry *r)) {
  MXC_RETURN_ERROR_IF(!mxc__registry_open(), MXC_ERR_INTERNAL,
                      "'%s' registered after the operator registry was "
                      "built",
                      name);
  MXC_RETURN_ERROR_IF(g_n_plugins == MAX_PLUGINS, MXC_ERR_INTERNAL,
                      "too many registry plug-ins ('%s')", name);
  g_plugins[g_n_plugins].name = name;
  g_plugins[g_n_plugins++].register_fn = register_fn;
  return MXC_OK;
}

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static int index_add(mxc__registry *r, const char *name, const mxc__op *op) {
  if (r->n_keys * 2 >= MXC__REG_SLOTS) {
    return mxc__error_set(MXC_ERR_INTERNAL, "operator index is full");
  }
  uint32_t i = hash(name) & (MXC__REG_SLOTS - 1);
  while (r->keys[i]) {
    if (!strcmp(r->keys[i], name)) {
      return mxc__error_set(MXC_ERR_INTERNAL,
                            "operator name '%s' registered twice", name);
    }
    i = (i + 1) & (MXC__REG_SLOTS - 1);
  }
  r->keys[i] = name;
  r->vals[i] = op;
  r->n_keys++;
  return MXC_OK;
}

/* ---- kernel lists (core/op/backend.h) ---- */

int mxc__op_n_backend_kernels;

/* The backend of every descriptor's own compute. Defined here, with the
 * lists, because mxc__registry_add enters each descriptor's kernel. */
const mxc__backend mxc__backend_cpu_ref = {
    .name = "cpu",
    .dev_type = MXC_DEVICE_CPU,
    .priority = 0,
};

/* Inserts kernel k into slot s's list, after every kernel of a backend
 * with a priority >= its own (so among equals, first attached first). */
static int list_insert(mxc__registry *r, int s, const mxc__kernel *k,
                       const char *name) {
  int prio = k->backend->priority;
  int *link = &r->kernel_head[s];
  while (*link) {
    const mxc__kernel *cur = &r->kernels[*link - 1];
    MXC_RETURN_ERROR_IF(cur->backend == k->backend, MXC_ERR_INTERNAL,
                        "operator '%s' already has a kernel of backend "
                        "'%s'",
                        name, k->backend->name);
    if (cur->backend->priority < prio) break;
    link = &r->kernel_next[*link - 1];
  }
  MXC_RETURN_ERROR_IF(r->n_kernels == MXC__REG_MAX_KERNELS, MXC_ERR_INTERNAL,
                      "kernel table is full (operator '%s')", name);
  int idx = r->n_kernels++;
  r->kernels[idx] = *k;
  r->kernel_next[idx] = *link;
  *link = idx + 1;
  return MXC_OK;
}

static int add_reference(mxc__registry *r, const mxc__op *op) {
  mxc__kernel k = {.backend = &mxc__backend_cpu_ref,
                   .compute = op->compute,
                   .infer_stype = op->infer_stype,
                   .compute_sparse = op->compute_sparse,
                   .fmt_ok = op->elementwise ? mxc__fmt_elementwise_ok : NULL};
  return list_insert(r, mxc__registry_slot(r, op), &k, op->name);
}

/* op's reference CPU kernel (every registered operator has one). */
static mxc__kernel *reference_kernel(mxc__registry *r, const mxc__op *op) {
  int s = mxc__registry_slot(r, op);
  for (int i = s < 0 ? 0 : r->kernel_head[s]; i; i = r->kernel_next[i - 1]) {
    if (r->kernels[i - 1].backend == &mxc__backend_cpu_ref) {
      return &r->kernels[i - 1];
    }
  }
  return NULL;
}

int mxc__registry_attach_kernel(mxc__registry *r, const char *name,
                                const mxc__kernel *k) {
  const mxc__op *op = mxc__registry_find(r, name);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INTERNAL,
                      "kernel attached to unknown operator '%s'", name);
  MXC_RETURN_ERROR_IF(!k->backend || !k->compute, MXC_ERR_INTERNAL,
                      "kernel for '%s' has no backend or compute function",
                      name);
  MXC_FORWARD_IF_ERROR(
      list_insert(r, mxc__registry_slot(r, op), k, op->name));
  if (k->backend != &mxc__backend_cpu_ref) mxc__op_n_backend_kernels++;
  return MXC_OK;
}

int mxc__registry_add(mxc__registry *r, const mxc__op *op) {
  MXC_RETURN_ERROR_IF(r->n_ops == MXC__REG_MAX_OPS, MXC_ERR_INTERNAL,
                      "operator registry is full");
  MXC_RETURN_ERROR_IF(!op->name || !op->compute, MXC_ERR_INTERNAL,
                      "operator '%s' has no name or compute function",
                      op->name ? op->name : "?");
  MXC_FORWARD_IF_ERROR(index_add(r, op->name, op));
  for (int i = 0; op->aliases && op->aliases[i]; ++i) {
    MXC_FORWARD_IF_ERROR(index_add(r, op->aliases[i], op));
  }
  uint32_t h = (uint32_t)(((uintptr_t)op >> 4) * 2654435761u);
  uint32_t i = h & (MXC__REG_SLOTS - 1);
  while (r->ptrs[i]) i = (i + 1) & (MXC__REG_SLOTS - 1);
  r->ptrs[i] = op;
  MXC_FORWARD_IF_ERROR(add_reference(r, op));
  r->ops[r->n_ops++] = op;
  if (!op->hidden) r->public_ops[r->n_public++] = op;
  return MXC_OK;
}

int mxc__registry_add_alias(mxc__registry *r, const char *alias,
                            const char *target) {
  const mxc__op *op = mxc__registry_find(r, target);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INTERNAL,
                      "alias '%s' of unknown operator '%s'", alias, target);
  return index_add(r, alias, op);
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const mxc__op *const *)a)->name,
                (*(const mxc__op *const *)b)->name);
}

/* Runs one family's or plug-in's registration; on failure keeps the
 * message for every later lookup. */
static int run_plugin(const mxc__op_family *f) {
  if (!f->register_fn) return MXC_OK;
  int rc = f->register_fn(&g_reg);
  if (rc != MXC_OK) {
    g_init_rc = rc;
    snprintf(g_init_msg, sizeof g_init_msg, "'%s': %s", f->name,
             mxc__error_msg());
  }
  return rc;
}

static void build(void) {
  atomic_store(&g_built, 1);
  for (int i = 0; i < g_n_families; ++i) {
    if (run_plugin(&g_families[i]) != MXC_OK) return;
  }
  for (int i = 0; i < g_n_plugins; ++i) {
    if (run_plugin(&g_plugins[i]) != MXC_OK) return;
  }
  qsort(g_reg.public_ops, (size_t)g_reg.n_public, sizeof(const mxc__op *),
        by_name);
}

int mxc__registry_ensure(void) {
  pthread_once(&g_once, build);
  MXC_RETURN_ERROR_IF(g_init_rc != MXC_OK, g_init_rc,
                      "operator registry failed to build: %s", g_init_msg);
  return MXC_OK;
}

const mxc__op *mxc__registry_find(const mxc__registry *r, const char *name) {
  uint32_t i = hash(name) & (MXC__REG_SLOTS - 1);
  while (r->keys[i]) {
    if (!strcmp(r->keys[i], name)) return r->vals[i];
    i = (i + 1) & (MXC__REG_SLOTS - 1);
  }
  return NULL;
}

const mxc__op *mxc__op_find(const char *name) {
  if (!name || mxc__registry_ensure() != MXC_OK) return NULL;
  return mxc__registry_find(&g_reg, name);
}

int mxc__op_lookup(const char *name, const mxc__op **out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "operator name is NULL");
  MXC_FORWARD_IF_ERROR(mxc__registry_ensure());
  const mxc__op *op = mxc__op_find(name);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_NOT_FOUND,
                      "unknown operator '%s' (mxc_op_count/mxc_op_get list "
                      "the operators)",
                      name);
  *out = op;
  return MXC_OK;
}

int mxc__op_count(void) {
  return mxc__registry_ensure() == MXC_OK ? g_reg.n_public : 0;
}

const mxc__op *mxc__op_at(int index) {
  if (mxc__registry_ensure() != MXC_OK || index < 0 || index >= g_reg.n_public) return NULL;
  return g_reg.public_ops[index];
}

int mxc__registry_slot(const mxc__registry *r, const mxc__op *op) {
  uint32_t h = (uint32_t)(((uintptr_t)op >> 4) * 2654435761u);
  for (uint32_t i = h & (MXC__REG_SLOTS - 1); r->ptrs[i];
       i = (i + 1) & (MXC__REG_SLOTS - 1)) {
    if (r->ptrs[i] == op) return (int)i;
  }
  return -1;
}

mxc__registry *mxc__registry_get(void) { return &g_reg; }

int mxc__op_is_registered(const mxc__op *op) {
  if (!op || mxc__registry_ensure() != MXC_OK) return 0;
  return mxc__registry_slot(mxc__registry_get(), op) >= 0;
}

int mxc__registry_attach_stype(mxc__registry *r, const char *name,
                               mxc__infer_stype_fn infer_stype,
                               mxc__compute_sparse_fn compute_sparse) {
  const mxc__op *op = mxc__registry_find(r, name);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INTERNAL,
                      "sparse kernels attached to unknown operator '%s'",
                      name);
  mxc__kernel *k = reference_kernel(r, op);
  MXC_RETURN_ERROR_IF(!k || k->infer_stype || !infer_stype ||
                          !compute_sparse,
                      MXC_ERR_INTERNAL,
                      "operator '%s' already has storage functions (or "
                      "none were given)",
                      name);
  k->infer_stype = infer_stype;
  k->compute_sparse = compute_sparse;
  return MXC_OK;
}

/* Called only with registered descriptors (after mxc__registry_ensure()
 * succeeded): the storage functions of the reference CPU kernel. */
mxc__infer_stype_fn mxc__op_infer_stype(const mxc__op *op) {
  if (op->infer_stype) return op->infer_stype;
  const mxc__kernel *k = reference_kernel(&g_reg, op);
  return k ? k->infer_stype : NULL;
}

mxc__compute_sparse_fn mxc__op_compute_sparse(const mxc__op *op) {
  if (op->compute_sparse) return op->compute_sparse;
  const mxc__kernel *k = reference_kernel(&g_reg, op);
  return k ? k->compute_sparse : NULL;
}

int mxc__op_num_inputs(const mxc__op *op, const void *param) {
  return op->num_inputs ? op->num_inputs(param) : op->n_inputs;
}

int mxc__op_num_outputs(const mxc__op *op, const void *param) {
  return op->num_outputs ? op->num_outputs(param) : op->n_outputs;
}

int mxc__op_num_visible_outputs(const mxc__op *op, const void *param) {
  int total = mxc__op_num_outputs(op, param);
  int vis = op->num_visible_outputs ? op->num_visible_outputs(param)
                                    : op->n_visible_outputs;
  return vis > 0 && vis < total ? vis : total;
}

int mxc__op_num_grad_outputs(const mxc__op *op, const void *param) {
  int vis = mxc__op_num_visible_outputs(op, param);
  int n = op->n_grad_outputs;
  return n > 0 && n < vis ? n : vis;
}

static int check_inferred(const mxc__op *op, const void *param,
                          const mxc__shape *s, int is_input, int i) {
  if (s->ndim < 0) return MXC_OK;
  /* This runs for every array of every call: only a failure pays for
   * formatting the operator and array into the message (the check runs
   * again with it). */
  if (MXC__LIKELY(mxc__shape_ok(s))) return MXC_OK;
  char what[192];
  if (is_input) {
    snprintf(what, sizeof what, "operator '%s': inferred shape of input %d "
             "('%s')", op->name, i, mxc__op_input_name(op, param, i));
  } else {
    snprintf(what, sizeof what, "operator '%s': inferred shape of output %d",
             op->name, i);
  }
  return mxc__shape_check(s, 1, what);
}

int mxc__op_infer_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  if (!op->infer_shape) return MXC_OK;
  MXC_FORWARD_IF_ERROR(op->infer_shape(op, param, in, n_in, out, n_out));
  /* Element-wise inference only copies shapes it was given, and every
   * given shape was checked where it entered (array creation,
   * mxc__shapes_from_dims, __shape__ attributes): nothing new to check on
   * the path of the cheapest operators. */
  if (op->infer_shape == mxc__infer_shape_same) return MXC_OK;
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(check_inferred(op, param, &in[i], 1, i));
  }
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(check_inferred(op, param, &out[i], 0, i));
  }
  return MXC_OK;
}

/* Variadic operators list names for their first inputs only (Concat:
 * arg0..arg31; add_n: args); later ones get MXNet's "arg<i>". */
int mxc__op_declared_inputs(const mxc__op *op, int *variadic) {
  *variadic = op->num_inputs != NULL && op->input_name == NULL;
  if (*variadic) return 1;
  int n = 0;
  if (op->input_names) {
    while (op->input_names[n]) ++n;
  } else {
    n = op->n_inputs;
  }
  return n;
}

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
  int rc = op->parse_params
               ? op->parse_params(op, keys, vals, n, p)
               : mxc__param_parse(op->name, op->params, op->n_params, keys,
                                  vals, n, p);
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
  if (!op || mxc__registry_ensure() != MXC_OK || !g_reg.fusible) return 0;
  return g_reg.fusible(op);
}

int mxc__registry_set_unfused(mxc__registry *r, mxc__unfused_fn fn) {
  MXC_RETURN_ERROR_IF(r->unfused || !fn, MXC_ERR_INTERNAL,
                      "unfused runner set twice (or NULL)");
  r->unfused = fn;
  return MXC_OK;
}

int mxc__op_has_unfused(const mxc__op *op) {
  return op && g_reg.unfused && strcmp(op->name, MXC__FUSED_OP_NAME) == 0;
}

int mxc__registry_run_unfused(const mxc__op *op, const void *param,
                              struct mxc__ndarray *const *in, int n_in,
                              struct mxc__ndarray **out, int n_out,
                              const mxc__req *req) {
  return g_reg.unfused(op, param, in, n_in, out, n_out, req);
}

int mxc__registry_add_feature(mxc__registry *r, const char *name) {
  MXC_RETURN_ERROR_IF(r->n_features == MXC__REG_MAX_FEATURES,
                      MXC_ERR_INTERNAL, "too many build features ('%s')",
                      name);
  r->features[r->n_features++] = name;
  return MXC_OK;
}

int mxc__op_feature(const char *name) {
  if (mxc__registry_ensure() != MXC_OK) return 0;
  for (int i = 0; i < g_reg.n_features; ++i) {
    if (!strcmp(g_reg.features[i], name)) return 1;
  }
  return 0;
}
