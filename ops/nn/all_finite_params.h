/* The parameter struct of all_finite and multi_all_finite (all_finite.c),
 * in a header with no include beyond stdint.h because the CUDA plug-in's
 * kernel reads it too (backends/cuda/mp.cu). */
#ifndef MXC_OPS_NN_ALL_FINITE_PARAMS_H_
#define MXC_OPS_NN_ALL_FINITE_PARAMS_H_

#include <stdint.h>

typedef struct mxc__af_param {
  int64_t num_arrays;
  int init_output;
} mxc__af_param;

#endif /* MXC_OPS_NN_ALL_FINITE_PARAMS_H_ */
