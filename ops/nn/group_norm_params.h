/* The parameter structs of GroupNorm and InstanceNorm (group_norm.c), in
 * a header with no include beyond stdint.h because the CUDA plug-in's
 * kernels read them too (backends/cuda/gn_plan.h). */
#ifndef MXC_OPS_NN_GROUP_NORM_PARAMS_H_
#define MXC_OPS_NN_GROUP_NORM_PARAMS_H_

#include <stdint.h>

typedef struct mxc__gn_param {
  int64_t num_groups;
  double eps;
  int output_mean_var;
} mxc__gn_param;

typedef struct mxc__in_param {
  double eps;
} mxc__in_param;

#endif /* MXC_OPS_NN_GROUP_NORM_PARAMS_H_ */
