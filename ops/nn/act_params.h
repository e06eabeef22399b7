/* The parameter struct of Activation and _backward_Activation
 * (activation.c), alone in a header with no include: the GPU plug-in's
 * kernels read it too (backends/cuda/train_plan.h). */
#ifndef MXC_OPS_NN_ACT_PARAMS_H_
#define MXC_OPS_NN_ACT_PARAMS_H_

/* act_type's values, in the order of its enum strings. */
enum {
  MXC__ACT_RELU,
  MXC__ACT_SIGMOID,
  MXC__ACT_TANH,
  MXC__ACT_SOFTRELU,
  MXC__ACT_SOFTSIGN
};

typedef struct mxc__act_param {
  int act_type;
} mxc__act_param;

#endif /* MXC_OPS_NN_ACT_PARAMS_H_ */
