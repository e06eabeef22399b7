/* The cuBLAS kernels' plans (blas_plan.c): what one call of dot,
 * batch_dot, FullyConnected or their backward operators asks of cuBLAS,
 * as plain data computed without any CUDA call.
 *
 * Why a plan: mxc's arrays are row-major and cuBLAS is column-major, and
 * every product of these operators is a transposed, strided variant of
 * one GEMM. Getting a transpose, a leading dimension or a stride wrong is
 * the likely bug, and this machine-independent half is where it would
 * live; tests/gpu:test_cuda_blas_plan runs the plan with a host GEMM that
 * follows cuBLAS's argument rules and compares with the CPU operators, so
 * it is checked on machines without a GPU. blas.c only executes steps.
 *
 * Half precision (float16, bfloat16): the CPU widens to float32, runs
 * the float32 product and rounds each output once (docs/dtypes.md).
 * cublasGemmEx with CUBLAS_COMPUTE_32F rounds its float result
 * (alpha * AB + beta * C) once into a half C, so every half output must
 * come from ONE product step: the plan for a half call never lets two
 * steps round into one output where the CPU rounds once (FullyConnected's
 * bias goes in first, exactly, and the product adds to it), and it has
 * no GEMV (no half GEMV in cuBLAS: the bias gradient is a GEMM with one
 * column).
 *
 * The trick: a row-major matrix X (r, c) with leading dimension ld is the
 * column-major matrix X^T (c, r) with the same ld, so the row-major
 * product C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T:
 * cuBLAS gets B before A, with m and n swapped.
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_BLAS_PLAN_H_
#define MXC_BACKENDS_CUDA_BLAS_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/linalg/linalg_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameters are the operator families' own structs (ops/linalg
 * parses them): mxc__dot_param for dot and batch_dot, mxc__fc_param for
 * FullyConnected. Both libraries come from one source version (the loader
 * checks it). */

/* The operators, one kernel each. */
enum {
  MXC__BLAS_DOT,
  MXC__BLAS_DOT_BWD,
  MXC__BLAS_BATCH_DOT,
  MXC__BLAS_BATCH_DOT_BWD,
  MXC__BLAS_FC,
  MXC__BLAS_FC_BWD
};

/* Step kinds. */
enum {
  MXC__BLAS_GEMM, /* C = A B (+ C): cublasSgemm_v2 / ...StridedBatched */
  MXC__BLAS_GEMV, /* y = A x (+ y): cublasSgemv_v2, incx = incy = 1 */
  MXC__BLAS_ZERO  /* output c = 0 (a product over an empty axis) */
};

/* An operand that is no array of the call: a vector of `ones` ones. */
#define MXC__BLAS_ONES (-1)

/* One cuBLAS call, in cuBLAS's own (column-major) terms. */
typedef struct mxc__blas_step {
  int kind;
  int trans_a, trans_b; /* 1: CUBLAS_OP_T, 0: CUBLAS_OP_N (GEMV: trans_a) */
  int64_t m, n, k;      /* GEMV: A is m x n; k unused */
  int a, b;             /* input index, or MXC__BLAS_ONES; GEMV: b is x */
  int c;                /* output index (GEMV: y) */
  int64_t lda, ldb, ldc;
  /* elements between the matrices of a batch (GEMM only) */
  int64_t stride_a, stride_b, stride_c, batch;
  float beta; /* 0: write (C is not read), 1: add */
} mxc__blas_step;

#define MXC__BLAS_MAX_STEPS 4

typedef struct mxc__blas_plan {
  int n;
  mxc__blas_step step[MXC__BLAS_MAX_STEPS];
  int64_t ones; /* elements of the ones vector the steps read */
  /* The dtype of every array of the call (and of the ones): float32
   * (cublasSgemm/Sgemv), or float16 / bfloat16 (cublasGemmEx with
   * float32 accumulation, blas.c). */
  int dtype;
} mxc__blas_plan;

/* Plans call c of operator `op` (MXC__BLAS_*): its shapes, dtypes,
 * parameters and write modes, never its pointers. MXC_OK, or
 * MXC_ERR_UNSUPPORTED (a size beyond cuBLAS's 32-bit int) / MXC_ERR_DTYPE
 * (arrays of different dtypes, or one not float32, float16 or bfloat16) /
 * MXC_ERR_SHAPE (shapes the CPU operator
 * would refuse) / MXC_ERR_INTERNAL (a step would reach past an array of
 * the call: checked here so that it never reaches the GPU) with the
 * reason in why. Outputs with write mode NULL and
 * empty outputs get no step. */
int mxc__blas_plan_call(int op, const mxc__gpu_call *c, mxc__blas_plan *p,
                        char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BLAS_PLAN_H_ */
