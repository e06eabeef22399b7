/* Registration of the sparse family: one function per file. It runs
 * after every other family (last in ops/families.bzl), because attaching
 * sparse kernels looks operators up by name. */
#include "core/base/error.h"
#include "ops/families.h"
#include "ops/sparse/sparse.h"

int mxc__ops_register_sparse(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_cast(r));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_elemwise(r));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_dot(r));
  MXC_FORWARD_IF_ERROR(mxc__sparse_register_reduce(r));
  return mxc__sparse_register_optim(r);
}
