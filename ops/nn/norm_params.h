/* The parameter structs of LayerNorm (layer_norm.c) and L2Normalization
 * (l2_norm.c), with no include beyond stdint.h: the CUDA plug-in's kernels
 * read them too (backends/cuda/nn3_plan.h). */
#ifndef MXC_OPS_NN_NORM_PARAMS_H_
#define MXC_OPS_NN_NORM_PARAMS_H_

#include <stdint.h>

typedef struct mxc__ln_param {
  int64_t axis;
  double eps;
  int output_mean_var;
} mxc__ln_param;

/* L2Normalization's modes, in the order of its enum parameter's names. */
enum { MXC__L2N_CHANNEL, MXC__L2N_INSTANCE, MXC__L2N_SPATIAL };

typedef struct mxc__l2n_param {
  double eps;
  int mode; /* MXC__L2N_* */
} mxc__l2n_param;

#endif /* MXC_OPS_NN_NORM_PARAMS_H_ */
