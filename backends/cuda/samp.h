/* The plug-in's GridGenerator, BilinearSampler, SpatialTransformer and
 * their gradients (samp.cu over samp_plan.h), float32. Their rows are part
 * of nn3.h's list. */
#ifndef MXC_BACKENDS_CUDA_SAMP_H_
#define MXC_BACKENDS_CUDA_SAMP_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (the CPU operator's inputs and outputs, float32) on
 * gpu(c->dev), on the call's stream, ending with mxc__cuda_finish; each
 * output in its own write mode. The samplers' ddata gradients add with
 * atomics (not bitwise deterministic); _backward_SpatialTransformer
 * takes a stream-ordered workspace for its grid gradient.
 * Thread-safety: any thread (no state). */
int mxc__cuda_grid_gen(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_grid_gen_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_bsampler(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_bsampler_bwd(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_stn(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_stn_bwd(const mxc__gpu_call *c, char *why, size_t n);

#define MXC__CUDA_SAMP_ROWS                                        \
  {"GridGenerator", NULL, mxc__cuda_grid_gen},                     \
      {"_backward_GridGenerator", NULL, mxc__cuda_grid_gen_bwd},   \
      {"BilinearSampler", NULL, mxc__cuda_bsampler},               \
      {"_backward_BilinearSampler", NULL, mxc__cuda_bsampler_bwd}, \
      {"SpatialTransformer", NULL, mxc__cuda_stn},                 \
      {"_backward_SpatialTransformer", NULL, mxc__cuda_stn_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SAMP_H_ */
