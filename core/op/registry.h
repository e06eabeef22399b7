/* How operator families plug into the registry (core/op/op.h declares the
 * lookups). A family is a library under ops/ with one registration
 * function that adds its descriptors (mxc__registry_add) and attaches
 * kernels to operators other families registered before it. The list of
 * families is ops/families.bzl; ops/families.c installs it. */
#ifndef MXC_CORE_OP_REGISTRY_H_
#define MXC_CORE_OP_REGISTRY_H_

#include "core/op/op.h"

typedef struct mxc__op_family {
  const char *name;                 /* the family's directory under ops/ */
  int (*register_fn)(mxc__registry *r);
} mxc__op_family;

/* Sets the families the registry is built from, in order, on its first
 * use. families must stay valid for the whole process (a static table).
 * Called once, from a constructor of the library's family table, before
 * any lookup; a second call or a call after the registry was built is
 * ignored (and asserted in debug builds). Without a call the registry is
 * empty: programs linking only core/ see no operators. */
void mxc__registry_set_families(const mxc__op_family *families, int n);

#endif /* MXC_CORE_OP_REGISTRY_H_ */
