/* The second set of training-step kernels, as one list of table rows for
 * plugin.c: the broadcast binary gradients (bgrad.h), the other
 * reductions and the reductions' gradients (red.h), the other optimizer
 * updates (optim.h). */
#ifndef MXC_BACKENDS_CUDA_TRAIN2_H_
#define MXC_BACKENDS_CUDA_TRAIN2_H_

#include "backends/cuda/bgrad.h"
#include "backends/cuda/optim.h"
#include "backends/cuda/red.h"

#define MXC__CUDA_TRAIN2_ROWS \
  MXC__CUDA_BGRAD_ROWS MXC__CUDA_RED_ROWS MXC__CUDA_OPTIM_ROWS

#endif /* MXC_BACKENDS_CUDA_TRAIN2_H_ */
