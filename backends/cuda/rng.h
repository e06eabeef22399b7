/* The plug-in's random kernels (rng.cu): _random_uniform, _random_normal,
 * _random_exponential (float32 and float64) and _random_randint (int32
 * and int64), drawn from the slice the call reserved at push time
 * (mxc__gpu_call.rng) with the CPU's per-value functions
 * (core/resource/philox_impl.h), by the plan of rng_plan.h.
 *
 * The other samplers stay on the CPU: _random_gamma and _random_poisson
 * accept or reject by comparing results of log/exp, where a last-ulp
 * difference between the device's and glibc's functions would change
 * which attempt is taken (a different value, not a rounding);
 * _sample_multinomial searches a CDF summed in order, _shuffle is a
 * sequential Fisher-Yates; Dropout and RReLU belong to other families. */
#ifndef MXC_BACKENDS_CUDA_RNG_H_
#define MXC_BACKENDS_CUDA_RNG_H_

#include <stddef.h>

#include "backends/cuda/rng_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (no input, one output) on gpu(c->dev) and waits for
 * it. Thread-safety: any thread (no state). */
int mxc__cuda_random_uniform(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_random_normal(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_random_exponential(const mxc__gpu_call *c, char *why,
                                 size_t n);
int mxc__cuda_random_randint(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_RNG_ROWS                                                  \
  {"_random_uniform", mxc__rng_float_dtypes, mxc__cuda_random_uniform}, \
      {"_random_normal", mxc__rng_float_dtypes,                        \
       mxc__cuda_random_normal},                                            \
      {"_random_exponential", mxc__rng_float_dtypes,                   \
       mxc__cuda_random_exponential},                                       \
      {"_random_randint", mxc__rng_int_dtypes,                         \
       mxc__cuda_random_randint},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_RNG_H_ */
