/* The parameter struct of LRN and _backward_LRN (lrn.c), with no include
 * beyond stdint.h: the CUDA plug-in's kernels read it too
 * (backends/cuda/gn_plan.h). */
#ifndef MXC_OPS_NN_LRN_PARAMS_H_
#define MXC_OPS_NN_LRN_PARAMS_H_

#include <stdint.h>

typedef struct mxc__lrn_param {
  double alpha, beta, knorm;
  int64_t nsize;
} mxc__lrn_param;

#endif /* MXC_OPS_NN_LRN_PARAMS_H_ */
