/* The plug-in's other axis reductions and the reductions' gradients
 * (red.cu over red_plan.h): max, min, prod, nansum, nanprod, norm and
 * _backward_sum, _mean, _max, _min, _nansum, _norm, _prod, _nanprod in
 * float32 (sum and mean are sum.h's), one table row each. */
#ifndef MXC_BACKENDS_CUDA_RED_H_
#define MXC_BACKENDS_CUDA_RED_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c on gpu(c->dev), on the call's stream, ending with
 * mxc__cuda_finish (cuda_rt.h: complete on return for a direct call): the
 * forward ones (input data, output the reduction) and the backward ones
 * (inputs ograd, data[, output]; output d data). Thread-safety: any
 * thread (no state). */
int mxc__cuda_red_max(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_min(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_prod(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_nansum(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_nanprod(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_sum(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_mean(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_max(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_min(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_nansum(const mxc__gpu_call *c, char *why,
                                  size_t n);
int mxc__cuda_red_backward_norm(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_prod(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_red_backward_nanprod(const mxc__gpu_call *c, char *why,
                                   size_t n);

/* The kernel table's rows (plugin.c): one dtype of float32, float16 and
 * bfloat16 for every array (half_types.h). */
#define MXC__CUDA_RED_ROWS                                             \
  {"max", mxc__half_supports_same, mxc__cuda_red_max},                 \
      {"min", mxc__half_supports_same, mxc__cuda_red_min},             \
      {"prod", mxc__half_supports_same, mxc__cuda_red_prod},           \
      {"nansum", mxc__half_supports_same, mxc__cuda_red_nansum},       \
      {"nanprod", mxc__half_supports_same, mxc__cuda_red_nanprod},     \
      {"norm", mxc__half_supports_same, mxc__cuda_red_norm},           \
      {"_backward_sum", mxc__half_supports_same,                       \
       mxc__cuda_red_backward_sum},                                    \
      {"_backward_mean", mxc__half_supports_same,                      \
       mxc__cuda_red_backward_mean},                                   \
      {"_backward_max", mxc__half_supports_same,                       \
       mxc__cuda_red_backward_max},                                    \
      {"_backward_min", mxc__half_supports_same,                       \
       mxc__cuda_red_backward_min},                                    \
      {"_backward_nansum", mxc__half_supports_same,                    \
       mxc__cuda_red_backward_nansum},                                 \
      {"_backward_norm", mxc__half_supports_same,                      \
       mxc__cuda_red_backward_norm},                                   \
      {"_backward_prod", mxc__half_supports_same,                      \
       mxc__cuda_red_backward_prod},                                   \
      {"_backward_nanprod", mxc__half_supports_same,                   \
       mxc__cuda_red_backward_nanprod},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_RED_H_ */
