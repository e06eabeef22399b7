/* The parameter structs of _zeros/_ones/_full, _arange and _eye
 * (init.c), in a header of their own because the CUDA plug-in's kernels
 * read them (backends/cuda/fill_plan.h): both libraries come from one
 * source version, which the plug-in loader checks. */
#ifndef MXC_OPS_INDEXING_INIT_PARAMS_H_
#define MXC_OPS_INDEXING_INIT_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

typedef struct mxc__fill_param {
  mxc__tuple shape;
  int dtype;
  double value;
} mxc__fill_param;

typedef struct mxc__arange_param {
  double start;
  double stop; /* NaN: None */
  double step;
  int64_t repeat;
  int infer_range;
  int dtype;
} mxc__arange_param;

typedef struct mxc__eye_param {
  int64_t n, m, k;
  int dtype;
} mxc__eye_param;

#endif /* MXC_OPS_INDEXING_INIT_PARAMS_H_ */
