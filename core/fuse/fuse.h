/* Element-wise fusion: a graph rewrite that replaces chains of fusible
 * element-wise nodes (unary, binary of equal shapes, scalar operators)
 * whose intermediate entries are consumed only inside the chain by one
 * fused node evaluating the whole chain tile by tile.
 *
 * Runs on node DAGs before indexing (core/graph/graph.h), after the
 * gradient pass, so gradients are built from unfused nodes and stay
 * correct; an intermediate value that backward nodes read has a consumer
 * outside the chain and is therefore never fused away. */
#ifndef MXC_CORE_FUSE_FUSE_H_
#define MXC_CORE_FUSE_FUSE_H_

#include "core/op/node.h"

/* User attribute (core/op/node.h) of each fused node: the names of the nodes
 * it replaces, comma-separated, in evaluation order (for debug output). */
#define MXC__FUSE_ATTR_NODES "__fused_nodes__"

/* out_heads[i] = an entry (new reference) computing the same values as
 * heads[i] in the rewritten DAG. Variables are shared with the input DAG,
 * never copied; nodes outside fused regions may be shared too.
 * *out_n_fused (may be NULL) = number of fused nodes created. On failure
 * out_heads is untouched and nothing leaks. */
int mxc__fuse_graph(const mxc__entry *heads, int n_heads,
                    mxc__entry *out_heads, int *out_n_fused);

/* mxc__fuse_graph for a graph whose fused nodes run on device type
 * dev_type (MXC_DEVICE_*): off the CPU a node joins a region only when
 * that device's fused kernel takes it, and a region only when the
 * kernel takes its whole program (core/op/fusion.h,
 * mxc__fused_program_on): the rest stays unfused, so that no fused node
 * holds an instruction the device cannot compile. mxc__fuse_graph is
 * this for the CPU, whose fused kernel takes every program. */
int mxc__fuse_graph_for(const mxc__entry *heads, int n_heads, int dev_type,
                        mxc__entry *out_heads, int *out_n_fused);

/* BatchNorm + relu fusion (bn_relu.c): each BatchNorm whose output 0 is
 * read by one relu (Activation act_type=relu, or relu) and otherwise only
 * as the "output" input of _backward_BatchNorm (which keeps it alive but
 * reads no value of it) or the "data" input of a relu's gradient (which
 * reads only where it is above 0 or NaN) becomes one _FusedBatchNormReLU
 * node computing the relu's output; those readers read that instead. For CPU
 * executors, after the gradient pass and before element-wise fusion.
 * Same contract as mxc__fuse_graph; *out_n_fused = pairs fused. */
int mxc__fuse_bn_relu(const mxc__entry *heads, int n_heads,
                      mxc__entry *out_heads, int *out_n_fused);

#endif /* MXC_CORE_FUSE_FUSE_H_ */
