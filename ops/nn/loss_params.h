/* The parameter structs of the regression outputs (regression.c),
 * smooth_l1 and softmin (pointwise.c) and SoftmaxActivation
 * (softmax_activation.c), in a header of their own because the CUDA
 * plug-in's kernels read them (backends/cuda/loss2_plan.h): both
 * libraries come from one source version, which the plug-in loader
 * checks. */
#ifndef MXC_OPS_NN_LOSS_PARAMS_H_
#define MXC_OPS_NN_LOSS_PARAMS_H_

#include <stdint.h>

typedef struct mxc__reg_param {
  double grad_scale;
} mxc__reg_param;

typedef struct mxc__sl1_param {
  double scalar;
  int is_int;
} mxc__sl1_param;

typedef struct mxc__softmin_param {
  int64_t axis;
  double temperature; /* NaN: None */
  int dtype;
  int use_length;
} mxc__softmin_param;

/* SoftmaxActivation's mode: 'instance', 'channel' */
enum { MXC__SA_INSTANCE, MXC__SA_CHANNEL };

typedef struct mxc__sa_param {
  int mode;
} mxc__sa_param;

#endif /* MXC_OPS_NN_LOSS_PARAMS_H_ */
