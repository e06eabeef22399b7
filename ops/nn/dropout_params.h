/* The parameter struct of Dropout and _backward_Dropout (dropout.c) and
 * the index rule of its shared masks, in a header of their own because
 * the CUDA plug-in's kernel reads the struct and runs the rule too
 * (backends/cuda/nn3_plan.h, compiled by nvcc for the device): one text,
 * so both devices draw the same value for an element. Header-only (the
 * plug-in cannot call libmxc's hidden functions); an includer may define
 * MXC__DROP_HD (e.g. __host__ __device__ static inline) first.
 * Thread-safety: pure. */
#ifndef MXC_OPS_NN_DROPOUT_PARAMS_H_
#define MXC_OPS_NN_DROPOUT_PARAMS_H_

#include <stdint.h>

#include "core/op/param.h"

#ifndef MXC__DROP_HD
#define MXC__DROP_HD static inline
#endif

/* Its modes, in the order of the enum parameter's names. */
enum { MXC__DROP_TRAINING, MXC__DROP_ALWAYS };

typedef struct mxc__drop_param {
  double p;
  int mode; /* MXC__DROP_* */
  mxc__tuple axes;
  int cudnn_off;
} mxc__drop_param;

/* Index of the random value element i of a compact (ndim, dims) array
 * uses when bit d of bits shares one value along axis d: i with the
 * coordinates along those axes set to 0 (so at most i). */
MXC__DROP_HD int64_t mxc__drop_value_index(int64_t i, int ndim,
                                           const int64_t *dims, unsigned bits) {
  int64_t j = 0, stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    int64_t c = i % dims[d];
    i /= dims[d];
    if (!(bits >> d & 1)) j += c * stride;
    stride *= dims[d];
  }
  return j;
}

#endif /* MXC_OPS_NN_DROPOUT_PARAMS_H_ */
