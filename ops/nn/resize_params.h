/* The parameter structs of _contrib_BilinearResize2D and
 * _contrib_AdaptiveAvgPooling2D (resize.c), in a header of their own
 * because the CUDA plug-in's kernels read them (backends/cuda/
 * resize_plan.h). */
#ifndef MXC_OPS_NN_RESIZE_PARAMS_H_
#define MXC_OPS_NN_RESIZE_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

typedef struct mxc__rs_param {
  int64_t height, width;
  double scale_height, scale_width; /* NaN: None */
  int mode, align_corners;
} mxc__rs_param;

typedef struct mxc__ap_param {
  mxc__tuple output_size;
} mxc__ap_param;

#endif /* MXC_OPS_NN_RESIZE_PARAMS_H_ */
