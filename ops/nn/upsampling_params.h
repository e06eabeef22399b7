/* The parameter struct of UpSampling and _backward_UpSampling
 * (upsampling.c), in a header with no include beyond stdint.h because the
 * CUDA plug-in's kernels read it too (backends/cuda/up_plan.h). */
#ifndef MXC_OPS_NN_UPSAMPLING_PARAMS_H_
#define MXC_OPS_NN_UPSAMPLING_PARAMS_H_

#include <stdint.h>

/* sample_type: 'nearest', 'bilinear'; multi_input_mode: 'concat', 'sum' */
enum { MXC__UP_NEAREST, MXC__UP_BILINEAR };
enum { MXC__UP_CONCAT, MXC__UP_SUM };

typedef struct mxc__up_param {
  int64_t scale, num_filter, num_args, workspace;
  int sample_type, multi_input_mode;
} mxc__up_param;

#endif /* MXC_OPS_NN_UPSAMPLING_PARAMS_H_ */
