/* The parameter struct of argmax and argmin (argmax.c), in a header of its
 * own because the CUDA plug-in's kernels read it too
 * (backends/cuda/nn3_plan.h). */
#ifndef MXC_OPS_REDUCE_ARG_PARAMS_H_
#define MXC_OPS_REDUCE_ARG_PARAMS_H_

#include "core/op/param.h"

typedef struct mxc__arg_param {
  mxc__opt_int axis;
  int keepdims;
} mxc__arg_param;

#endif /* MXC_OPS_REDUCE_ARG_PARAMS_H_ */
