/* The fake plug-in's random kernels (tests/gpu/fake_plugin.c, mode
 * conform): the real kernels' plan (backends/cuda/rng_plan.h) run on the
 * host over the fake device memory's read-write alias, so that the
 * conformance cases of conformance_rng.cc go through libmxc's whole
 * dispatch (the slice reserved at push time reaching the plug-in's call,
 * the dtype checks, write modes) without a GPU. */
#ifndef MXC_TESTS_GPU_RNG_HOST_H_
#define MXC_TESTS_GPU_RNG_HOST_H_

#include <stddef.h>

#include "backends/cuda/rng_plan.h"
#include "core/base/gpu_plugin.h"

/* The host alias of a device array of gpu(dev), or NULL (the fake's). */
typedef float *(*mxct_rng_host_fn)(const mxc__gpu_array *a, int dev);

/* Runs sampler `kind` (MXC__RNG_*) for call c as a grid of a few threads
 * would; MXC_OK or the plan's error with its reason. */
int mxct_rng_fake_run(int kind, const mxc__gpu_call *c,
                      mxct_rng_host_fn host_of, char *why, size_t why_len);

/* X(run function, kind, operator, dtype check): the fake's rows. */
#define MXCT_RNG_FAKE_OPS(X)                                                 \
  X(fake_rng_uniform, MXC__RNG_UNIFORM, "_random_uniform",                   \
    mxc__rng_float_dtypes)                                                   \
  X(fake_rng_normal, MXC__RNG_NORMAL, "_random_normal", mxc__rng_float_dtypes) \
  X(fake_rng_exponential, MXC__RNG_EXPONENTIAL, "_random_exponential",       \
    mxc__rng_float_dtypes)                                                   \
  X(fake_rng_randint, MXC__RNG_RANDINT, "_random_randint", mxc__rng_int_dtypes)

#endif /* MXC_TESTS_GPU_RNG_HOST_H_ */
