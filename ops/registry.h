/* Operator families. Each family file registers its operators with one
 * function listed here; ops/registry.c calls them all once, on first use.
 * Adding a family: declare its function here and add it to k_families. */
#ifndef MXC_OPS_REGISTRY_H_
#define MXC_OPS_REGISTRY_H_

#include "ops/op.h"

int mxc__ops_register_elemwise_unary(mxc__registry *r);
int mxc__ops_register_elemwise_binary(mxc__registry *r);
int mxc__ops_register_reduce(mxc__registry *r);
int mxc__ops_register_shape(mxc__registry *r);
int mxc__ops_register_indexing(mxc__registry *r);
int mxc__ops_register_init(mxc__registry *r);
int mxc__ops_register_linalg(mxc__registry *r);
int mxc__ops_register_nn(mxc__registry *r);
int mxc__ops_register_conv(mxc__registry *r);
int mxc__ops_register_loss(mxc__registry *r);
int mxc__ops_register_random(mxc__registry *r);
int mxc__ops_register_optimizer(mxc__registry *r);

#endif /* MXC_OPS_REGISTRY_H_ */
