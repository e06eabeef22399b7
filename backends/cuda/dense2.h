/* More dense kernels, as one list of table rows for plugin.c: the
 * mixed-precision and multi-tensor updates and all_finite (mp.h), fills
 * and simple producers (fill.h), loss heads and softmax layers (loss2.h),
 * UpSampling (up.h), the resizes (resize.h), GroupNorm, InstanceNorm and
 * LRN (gn.h). */
#ifndef MXC_BACKENDS_CUDA_DENSE2_H_
#define MXC_BACKENDS_CUDA_DENSE2_H_

#include "backends/cuda/fill.h"
#include "backends/cuda/gn.h"
#include "backends/cuda/loss2.h"
#include "backends/cuda/mp.h"
#include "backends/cuda/resize.h"
#include "backends/cuda/up.h"

#define MXC__CUDA_DENSE2_ROWS                                          \
  MXC__CUDA_MP_ROWS MXC__CUDA_FILL_ROWS MXC__CUDA_LOSS2_ROWS           \
      MXC__CUDA_UP_ROWS MXC__CUDA_RESIZE_ROWS MXC__CUDA_GN_ROWS

#endif /* MXC_BACKENDS_CUDA_DENSE2_H_ */
