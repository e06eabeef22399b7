/* The parameter struct of MakeLoss and _backward_MakeLoss (make_loss.c),
 * with no include: the CUDA plug-in's kernel reads it too
 * (backends/cuda/fill_plan.h). */
#ifndef MXC_OPS_NN_MAKE_LOSS_PARAMS_H_
#define MXC_OPS_NN_MAKE_LOSS_PARAMS_H_

/* normalization: 'null', 'batch', 'valid' */
enum { MXC__ML_NORM_NULL, MXC__ML_NORM_BATCH, MXC__ML_NORM_VALID };

typedef struct mxc__ml_param {
  double grad_scale, valid_thresh;
  int normalization;
} mxc__ml_param;

#endif /* MXC_OPS_NN_MAKE_LOSS_PARAMS_H_ */
