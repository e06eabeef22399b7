/* A host run of a fused kernel's plan (backends/cuda/fuse_gen.h) with the
 * prelude functions the generated kernel calls (fuse_prelude.h compiled
 * as C): what the GPU computes per element, for comparison with the CPU
 * fused operator without a GPU. */
#ifndef MXC_TESTS_GPU_FUSE_HOST_H_
#define MXC_TESTS_GPU_FUSE_HOST_H_

#include <stdint.h>

#include "backends/cuda/fuse_gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[e] = the plan's result for element e of in[0..n_inputs), or
 * out[e] + that result when add (the kernel's write modes). */
void mxc__fuse_host_run(const mxc__fuse_plan *p, const float *const *in,
                        float *out, int64_t n, int add);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_FUSE_HOST_H_ */
