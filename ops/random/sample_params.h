/* Parameter structs of the samplers without inputs (sample.c), in a leaf
 * header: the CUDA plug-in's random kernels read them too
 * (backends/cuda/rng_plan.c) and must not pull in the operator framework;
 * only core/op/param.h, for the shape tuple. */
#ifndef MXC_OPS_RANDOM_SAMPLE_PARAMS_H_
#define MXC_OPS_RANDOM_SAMPLE_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

/* The first member of every sampler's parameter struct. */
typedef struct mxc__sample_head {
  mxc__tuple shape; /* ndim -1: take the output array's shape */
  int dtype;        /* -1: the output array's dtype, else the default */
} mxc__sample_head;

/* _random_uniform: [low, high). */
typedef struct mxc__uniform_param {
  mxc__sample_head head;
  double low, high;
} mxc__uniform_param;

/* _random_normal: N(loc, scale^2). */
typedef struct mxc__normal_param {
  mxc__sample_head head;
  double loc, scale;
} mxc__normal_param;

/* _random_exponential: rate lam. */
typedef struct mxc__exponential_param {
  mxc__sample_head head;
  double lam;
} mxc__exponential_param;

/* _random_randint: integers in [low, high). */
typedef struct mxc__randint_param {
  mxc__sample_head head;
  int64_t low, high;
} mxc__randint_param;

#endif /* MXC_OPS_RANDOM_SAMPLE_PARAMS_H_ */
