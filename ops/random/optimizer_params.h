/* The parameter struct of the optimizer updates (optimizer.c), alone in a
 * header with no include: the GPU plug-in's kernels read it too
 * (backends/cuda/train_plan.h), from C and C++, and must not pull in the
 * operator framework. */
#ifndef MXC_OPS_RANDOM_OPTIMIZER_PARAMS_H_
#define MXC_OPS_RANDOM_OPTIMIZER_PARAMS_H_

typedef struct mxc__opt_param {
  double lr, wd, rescale_grad, clip_gradient;
  double momentum, beta1, beta2, epsilon;
  double gamma1, gamma2, clip_weights;
  double lamda1, beta, wd_lh;
  int lazy_update;
} mxc__opt_param;

#endif /* MXC_OPS_RANDOM_OPTIMIZER_PARAMS_H_ */
