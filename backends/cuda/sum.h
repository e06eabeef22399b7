/* The plug-in's sum and mean kernels (sum.c reads the parameters and
 * plans, sum.cu reduces): float32, float16 and bfloat16 (summed in
 * double, rounded as the CPU's) over any set of axes (axis, keepdims,
 * exclude as the CPU's), one table row each. */
#ifndef MXC_BACKENDS_CUDA_SUM_H_
#define MXC_BACKENDS_CUDA_SUM_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "backends/cuda/sum_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c on gpu(c->dev) and waits for it. Thread-safety: any
 * thread (no state). */
int mxc__cuda_sum(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_mean(const mxc__gpu_call *c, char *why, size_t why_len);

/* Reduces x (device memory of `dtype`, as out: float32, float16 or
 * bfloat16, else MXC_ERR_DTYPE) into out by plan p on gpu(dev): out[o] =
 * final(sum of its group), added to out[o] when add (sum.cu). */
int mxc__cuda_sum_launch(int dev, const mxc__sum_plan *p, int dtype,
                         const void *x, void *out, int add, char *why,
                         size_t why_len);

/* The kernel table's rows (plugin.c): one dtype of float32, float16 and
 * bfloat16 for input and output (half_types.h). */
#define MXC__CUDA_SUM_ROWS                            \
  {"sum", mxc__half_supports_same, mxc__cuda_sum},    \
      {"mean", mxc__half_supports_same, mxc__cuda_mean},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SUM_H_ */
