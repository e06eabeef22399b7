/* Backends and kernel selection (core/op/backend.h). Kernels live in the
 * registry's fixed pool (registry_internal.h), one list per operator in
 * priority order; every descriptor's own compute is the first entry,
 * added by mxc__registry_add under the reference CPU backend. */
#include <stdatomic.h>
#include <string.h>

#include "core/base/error.h"
#include "core/op/backend.h"
#include "core/op/registry_internal.h"

const mxc__backend mxc__backend_cpu_ref = {
    .name = "cpu",
    .dev_type = MXC_DEVICE_CPU,
    .priority = 0,
};

/* Backends besides the reference one: oneDNN, CUDA, and tests'. */
#define MAX_BACKENDS 8

static const mxc__backend *g_backends[MAX_BACKENDS];
static int g_n_backends;
/* Kernels of backends other than the reference (the fast-path check). */
static atomic_int g_n_extra;

int mxc__backend_register(const mxc__backend *b) {
  MXC_RETURN_ERROR_IF(!mxc__registry_open(), MXC_ERR_INTERNAL,
                      "backend '%s' registered after the operator "
                      "registry was built",
                      b->name);
  MXC_RETURN_ERROR_IF(g_n_backends == MAX_BACKENDS, MXC_ERR_INTERNAL,
                      "too many backends ('%s')", b->name);
  for (int i = 0; i < g_n_backends; ++i) {
    MXC_RETURN_ERROR_IF(!strcmp(g_backends[i]->name, b->name),
                        MXC_ERR_INTERNAL, "backend '%s' registered twice",
                        b->name);
  }
  g_backends[g_n_backends++] = b;
  return MXC_OK;
}

int mxc__backend_attach_all(mxc__registry *r) {
  for (int i = 0; i < g_n_backends; ++i) {
    if (!g_backends[i]->attach) continue;
    int rc = g_backends[i]->attach(r);
    MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "backend '%s': %s",
                        g_backends[i]->name, mxc__error_msg());
  }
  return MXC_OK;
}

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

/* Called by mxc__registry_add for each descriptor. */
int mxc__registry_add_reference(mxc__registry *r, const mxc__op *op) {
  mxc__kernel k = {&mxc__backend_cpu_ref, NULL, op->compute};
  return list_insert(r, mxc__registry_slot(r, op), &k, op->name);
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
  if (k->backend != &mxc__backend_cpu_ref) atomic_fetch_add(&g_n_extra, 1);
  return MXC_OK;
}

int mxc__op_have_backend_kernels(void) {
  return atomic_load_explicit(&g_n_extra, memory_order_relaxed) > 0;
}

static int all_dense(const int *st, int n) {
  for (int i = 0; st && i < n; ++i) {
    if (st[i] > 0) return 0; /* MXC_STYPE_DEFAULT is 0; -1 undecided */
  }
  return 1;
}

/* The reference CPU kernels take every call: sparse ones through their
 * storage kernels or the storage fallback. Others take what supports
 * accepts, or, without it, every all-dense call. */
static int kernel_takes(const mxc__kernel *k, const mxc__op *op,
                        const void *param, const mxc__call_types *t) {
  if (k->backend == &mxc__backend_cpu_ref) return 1;
  if (k->supports) return k->supports(op, param, t);
  return all_dense(t->in_stypes, t->n_in) &&
         all_dense(t->out_stypes, t->n_out);
}

const mxc__kernel *mxc__op_kernel(const mxc__op *op, int dev_type,
                                  const void *param,
                                  const mxc__call_types *t) {
  if (mxc__registry_ensure() != MXC_OK) return NULL;
  const mxc__registry *r = mxc__registry_get();
  int s = mxc__registry_slot(r, op);
  if (s < 0) return NULL;
  for (int i = r->kernel_head[s]; i; i = r->kernel_next[i - 1]) {
    const mxc__kernel *k = &r->kernels[i - 1];
    if (k->backend->dev_type == dev_type && kernel_takes(k, op, param, t)) {
      return k;
    }
  }
  return NULL;
}

const mxc__kernel *mxc__op_kernel_at(const mxc__op *op, int i) {
  if (mxc__registry_ensure() != MXC_OK) return NULL;
  const mxc__registry *r = mxc__registry_get();
  int s = mxc__registry_slot(r, op);
  int k = s < 0 ? 0 : r->kernel_head[s];
  for (; k && i > 0; --i) k = r->kernel_next[k - 1];
  return k ? &r->kernels[k - 1] : NULL;
}

int mxc__op_supported(const mxc__op *op, int dev_type, const void *param,
                      const mxc__call_types *t) {
  return mxc__op_kernel(op, dev_type, param, t) != NULL;
}
