/* Backends and kernel selection (core/op/backend.h). Kernels live in the
 * registry's fixed pool (registry_internal.h), one list per operator in
 * priority order, the descriptor's own compute (entered by
 * mxc__registry_add under the reference CPU backend) last among the CPU
 * ones. */
#include <string.h>

#include "core/base/error.h"
#include "core/op/backend.h"
#include "core/op/registry_internal.h"

/* Backends besides the reference one: oneDNN, CUDA, and tests'. */
#define MAX_BACKENDS 8

static const mxc__backend *g_backends[MAX_BACKENDS];
static int g_n_backends;

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
  if (b->attach) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add_plugin(b->name, b->attach));
  }
  g_backends[g_n_backends++] = b;
  return MXC_OK;
}

static _Thread_local int t_reference_only;

int mxc__op_set_reference_only(int on) {
  int was = t_reference_only;
  t_reference_only = on != 0;
  return was;
}

int mxc__op_reference_only(void) { return t_reference_only; }

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
