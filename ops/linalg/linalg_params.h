/* Parameter structs of dot, batch_dot, FullyConnected and the linalg_*
 * operators, alone in a header with no other include than <stdint.h>: the
 * GPU plug-in's cuBLAS/cuSOLVER kernels read them too
 * (backends/cuda/blas_plan.h, la_plan.h), from C and C++, and must not pull
 * in the operator framework. */
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

/* The linalg_* operators (la_ops.c): one struct for all of them, each
 * operator parsing the fields it names (the others stay zero). */
typedef struct mxc__la_param {
  int transpose_a, transpose_b, transpose, rightside, lower;
  double alpha, beta;
  int64_t axis, offset;
} mxc__la_param;

/* Flat index in an n x n row-major matrix of element i of diagonal `off`
 * (0 the main one, > 0 above, < 0 below): extractdiag and makediag on the
 * CPU (la_ops.c) and on the GPU (backends/cuda/la_hd.h). */
#ifndef MXC__LA_HD
#ifdef __CUDACC__
#define MXC__LA_HD __host__ __device__ static inline
#else
#define MXC__LA_HD static inline
#endif
#endif
MXC__LA_HD int64_t mxc__la_diag_at(int64_t n, int64_t off, int64_t i) {
  return off >= 0 ? i * n + i + off : (i - off) * n + i;
}

#endif /* MXC_OPS_LINALG_LINALG_PARAMS_H_ */
