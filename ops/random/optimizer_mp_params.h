/* The parameter struct of the multi-precision and aggregated SGD updates
 * (optimizer_mp.c), in a header of its own because the CUDA plug-in's
 * kernels read it (backends/cuda/mp_plan.h): both libraries come from
 * one source version, which the plug-in loader checks. */
#ifndef MXC_OPS_RANDOM_OPTIMIZER_MP_PARAMS_H_
#define MXC_OPS_RANDOM_OPTIMIZER_MP_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

/* The most weights one multi_* call updates. */
#define MXC__MP_MAX_WEIGHTS 16

typedef struct mxc__mp_param {
  double lr, wd, momentum, rescale_grad, clip_gradient;
  int lazy_update;
  int64_t num_weights;
  char lrs[MXC__PARAM_STR_MAX], wds[MXC__PARAM_STR_MAX];
  /* Filled by param_check: lrs and wds, or lr and wd for the single forms. */
  double lr_v[MXC__MP_MAX_WEIGHTS], wd_v[MXC__MP_MAX_WEIGHTS];
} mxc__mp_param;

#endif /* MXC_OPS_RANDOM_OPTIMIZER_MP_PARAMS_H_ */
