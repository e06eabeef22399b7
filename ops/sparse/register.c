/* Registration of the sparse family. Each file's function is weak so that
 * the library links while a file is being written; a missing one
 * registers nothing. Order matters only in that every other family has
 * registered before (ops/registry.c lists this family last), because
 * attaching sparse kernels looks operators up by name. */
#include "ops/sparse/sparse.h"

#define WEAK __attribute__((weak))
WEAK int mxc__sparse_register_elemwise(mxc__registry *r);
WEAK int mxc__sparse_register_dot(mxc__registry *r);
WEAK int mxc__sparse_register_reduce(mxc__registry *r);
WEAK int mxc__sparse_register_optim(mxc__registry *r);

int mxc__ops_register_sparse(mxc__registry *r) {
  int (*const fns[])(mxc__registry *) = {
      mxc__sparse_register_cast, mxc__sparse_register_elemwise,
      mxc__sparse_register_dot, mxc__sparse_register_reduce,
      mxc__sparse_register_optim,
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; ++i) {
    if (!fns[i]) continue;
    int rc = fns[i](r);
    if (rc != MXC_OK) return rc;
  }
  return MXC_OK;
}
