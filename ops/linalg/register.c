/* Registration of the family: the matrix products (dot, batch_dot,
 * FullyConnected) under mxc__ops_register_linalg, the spatial operators
 * (Convolution, Deconvolution, Pooling) under mxc__ops_register_conv. */
#include "ops/linalg/linalg.h"
#include "ops/registry.h"

int mxc__ops_register_linalg(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_dot(r));
  return mxc__linalg_register_fc(r);
}

int mxc__ops_register_conv(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_convolution(r));
  MXC_FORWARD_IF_ERROR(mxc__linalg_register_deconvolution(r));
  return mxc__linalg_register_pooling(r);
}
