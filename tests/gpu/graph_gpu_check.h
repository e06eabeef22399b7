/* Which nodes of a bound executor the GPU would not run (tests/gpu's
 * ResNet-50 check, test_cuda_plugin.cc): asks the real plug-in's kernel
 * table, and the plug-in's own plan functions where its kernels refuse
 * parameters or shapes at run time, without a GPU. */
#ifndef MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_
#define MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_

#include <stddef.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For every operator node of ex (forward, then backward, in execution
 * order): whether a GPU kernel attached to its operator supports the
 * call's dtypes (the choice invoke makes on a GPU, mxc__op_kernel), and
 * for Convolution, Pooling, BatchNorm (forward and backward) and
 * _fused_elemwise whether the plug-in's plan accepts the node's
 * parameters and shapes (dnn_plan.h, fuse_gen.h: what the kernel checks
 * before any device call). Appends one line "NODE (OP): why" per node
 * that would not run into out (out_len bytes, NUL-terminated, truncated
 * when full) and returns their number; *n_nodes = nodes looked at.
 * Returns -1 with mxc's error for a bad handle. ex is only read; bind it
 * on the CPU with MXC_BIND_NO_ONEDNN (no channel-last values) and the
 * GPU's other flags: the graph is the one a GPU bind makes. */
int mxct_gpu_unsupported_nodes(mxc_executor ex, char *out, size_t out_len,
                               int *n_nodes);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_ */
