/* Private to core/op: the registry's tables, kept by registry.c (names,
 * descriptors, attached storage functions and kernels) and read by
 * backend.c (kernel selection). Everything is fixed-size: the registry
 * allocates nothing. */
#ifndef MXC_CORE_OP_REGISTRY_INTERNAL_H_
#define MXC_CORE_OP_REGISTRY_INTERNAL_H_

#include "core/op/backend.h"
#include "core/op/fusion.h"
#include "core/op/op.h"

#define MXC__REG_MAX_OPS 1024
#define MXC__REG_SLOTS 4096 /* power of two, > 2 * (names + aliases) */
#define MXC__REG_MAX_KERNELS 4096 /* attached kernels, all backends */
#define MXC__REG_MAX_FEATURES 16

struct mxc__registry {
  const mxc__op *ops[MXC__REG_MAX_OPS];
  int n_ops;
  const mxc__op *public_ops[MXC__REG_MAX_OPS]; /* sorted by name */
  int n_public;
  /* Open addressing: name -> op. */
  const char *keys[MXC__REG_SLOTS];
  const mxc__op *vals[MXC__REG_SLOTS];
  int n_keys;
  /* Open addressing: descriptor address -> present (validates handles),
   * with the first of that operator's kernels (index + 1 into kernels;
   * 0: none). Attached storage functions live on its reference kernel. */
  const mxc__op *ptrs[MXC__REG_SLOTS];
  int kernel_head[MXC__REG_SLOTS];
  /* Attached kernels; kernel_next links one operator's kernels in
   * priority order (highest first), 0 ends the list. */
  mxc__kernel kernels[MXC__REG_MAX_KERNELS];
  int kernel_next[MXC__REG_MAX_KERNELS];
  int n_kernels;
  const char *features[MXC__REG_MAX_FEATURES];
  int n_features;
  mxc__fusible_fn fusible; /* set by the fused family, or NULL */
  mxc__unfused_fn unfused; /* set by the fused family, or NULL */
};

/* The fused family's unfused runner (mxc__op_has_unfused(op) first). */
int mxc__registry_run_unfused(const mxc__op *op, const void *param,
                              struct mxc__ndarray *const *in, int n_in,
                              struct mxc__ndarray **out, int n_out,
                              const mxc__req *req);

/* The registry, built on first call (MXC_OK) or the reason it failed. */
int mxc__registry_ensure(void);
mxc__registry *mxc__registry_get(void);
/* 1 until the registry starts building: plug-ins may still register. */
int mxc__registry_open(void);
/* Slot of a registered descriptor in r->ptrs, or -1. */
int mxc__registry_slot(const mxc__registry *r, const mxc__op *op);
/* The operator named name in r, during or after the build; NULL when
 * unknown. */
const mxc__op *mxc__registry_find(const mxc__registry *r, const char *name);
/* Adds a registration function that runs once, after every family, when
 * the registry is built (a backend's attach). Before the build only:
 * MXC_ERR_INTERNAL afterwards or when the table is full. */
int mxc__registry_add_plugin(const char *name,
                             int (*register_fn)(mxc__registry *r));

#endif /* MXC_CORE_OP_REGISTRY_INTERNAL_H_ */
