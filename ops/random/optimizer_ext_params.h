/* The parameter struct of the FTML and LAMB updates (optimizer_ext.c),
 * alone in a header with no include: the GPU plug-in's kernels read it
 * too (backends/cuda/optim_plan.h), from C and C++, and must not pull in
 * the operator framework. */
#ifndef MXC_OPS_RANDOM_OPTIMIZER_EXT_PARAMS_H_
#define MXC_OPS_RANDOM_OPTIMIZER_EXT_PARAMS_H_

#include <stdint.h>

typedef struct mxc__opt_ext_param {
  double lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient;
  double clip_grad; /* ftml_update's name for clip_gradient */
  double lower_bound, upper_bound;
  int64_t t;
  int bias_correction;
} mxc__opt_ext_param;

#endif /* MXC_OPS_RANDOM_OPTIMIZER_EXT_PARAMS_H_ */
