/* Which nodes of a bound executor the GPU would not run (tests/gpu's
 * ResNet-50 check, test_cuda_plugin.cc): asks the real plug-in's kernel
 * table and its rows' accepts (parameters and shapes), without a GPU. */
#ifndef MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_
#define MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Binds sym on the CPU as a gpu(0) executor's graph is made
 * (core/exec's internal MXC__BIND_GRAPH_OF_GPU: every device-dependent
 * choice of binding, such as BatchNorm-relu fusion, taken by the
 * executor's own predicate as for the GPU; as_gpu 0 binds the plain CPU
 * graph instead, for the test that the difference is seen), arguments
 * shaped as mxc_executor_simple_bind's (float32, every argument's
 * gradient written but the n_reqs named), flags MXC_BIND_*. Then, for
 * every operator node (forward, then backward, in execution order):
 * whether a GPU kernel attached to its operator takes the call: its
 * dtypes, and its row's accepts the node's parameters and shapes in
 * training mode (the choice invoke makes on a GPU, mxc__op_kernel, but
 * without a device, so no fused program is compiled). Appends one line "NODE (OP): why" per node
 * that would not run into out (out_len bytes, NUL-terminated, truncated
 * when full) and returns their number; *n_nodes = nodes looked at.
 * Returns -1 with mxc's error when binding fails. Nothing of the
 * process's environment is changed. */
int mxct_gpu_graph_unsupported(mxc_symbol sym, int n_shapes,
                               const char *const *names, const int *ndims,
                               const int64_t *dims, int n_reqs,
                               const char *const *req_names, const int *reqs,
                               int flags, int as_gpu, char *out,
                               size_t out_len, int *n_nodes);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_GRAPH_GPU_CHECK_H_ */
