/* Parameter structs of dot, batch_dot and FullyConnected, alone in a
 * header with no other include than <stdint.h>: the GPU plug-in's cuBLAS
 * kernels read them too (backends/cuda/blas_plan.h), from C and C++, and
 * must not pull in the operator framework. */
#ifndef MXC_OPS_LINALG_LINALG_PARAMS_H_
#define MXC_OPS_LINALG_LINALG_PARAMS_H_

#include <stdint.h>

/* dot and batch_dot (dot.c). */
typedef struct mxc__dot_param {
  int transpose_a, transpose_b;
} mxc__dot_param;

/* FullyConnected (fc.c). */
typedef struct mxc__fc_param {
  int64_t num_hidden;
  int no_bias;
  int flatten;
} mxc__fc_param;

#endif /* MXC_OPS_LINALG_LINALG_PARAMS_H_ */
