/* The cuSPARSE kernel's plan (sdot_plan.c): what one call of `dot` with a
 * CSR lhs, csr x dense or transpose(csr) x dense, asks of cuSPARSE's
 * generic SpMM, as plain data computed without any CUDA call.
 *
 * Why a plan: the mapping of mxc's call (row-major dense arrays, the
 * CSR's logical shape, transpose_a, the write mode) onto cusparseCreateCsr
 * / cusparseCreateDnMat / cusparseSpMM arguments (opA, the three
 * matrices' rows, columns and leading dimensions, alpha and beta, the
 * index and value types) is where a GPU-only bug would hide.
 * tests/gpu:test_cuda_sdot_plan runs the plan through a host SpMM that
 * reads only the plan, with cuSPARSE's documented semantics
 * (C = alpha op(A) B + beta C, row-major dense matrices with their ld),
 * and compares with the CPU operator through the C API.
 *
 * The mapping: the CSR is A (rows x cols) as stored, never transposed
 * in memory; transpose_a is opA = TRANSPOSE. The dense rhs (k, d1, ...)
 * is B, a row-major (k, n) matrix with n = d1 * ... and ld = n
 * (CUSPARSE_ORDER_ROW); the output is C (m, n), ld = n, m = cols with
 * transpose_a, else rows. Write mode WRITE/INPLACE is beta = 0, ADD
 * beta = 1, alpha = 1 always.
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_SDOT_PLAN_H_
#define MXC_BACKENDS_CUDA_SDOT_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/linalg/linalg_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the call needs. */
enum {
  MXC__SDOT_NOTHING, /* output empty, or write mode NULL: no device work */
  MXC__SDOT_ZERO,    /* an empty product (nnz 0 or k 0) written: C = 0 */
  MXC__SDOT_SPMM     /* one cusparseSpMM */
};

typedef struct mxc__sdot_plan {
  int kind;
  int trans_a; /* opA: 1 CUSPARSE_OPERATION_TRANSPOSE, 0 NON_TRANSPOSE */
  /* A, as cusparseCreateCsr gets it (the stored matrix). */
  int64_t a_rows, a_cols, nnz;
  int index64; /* CUSPARSE_INDEX_64I for indptr and indices, else 32I */
  int f64;     /* CUDA_R_64F values and compute type, else CUDA_R_32F */
  /* B (k x n) and C (m x n), CUSPARSE_ORDER_ROW with their ld. */
  int64_t b_rows, b_cols, ldb;
  int64_t c_rows, c_cols, ldc;
  double alpha, beta;
  size_t c_bytes; /* bytes of C (ZERO: what to clear) */
} mxc__sdot_plan;

/* 1 for the storage types the kernel takes: inputs (csr, dense), output
 * dense or undecided. The row's `stypes` (core/base/gpu_plugin.h). */
int mxc__sdot_stypes(const int *stypes, int n_in, int n_out);
/* 1 for float32 or float64 values, the same in all three arrays. */
int mxc__sdot_dtypes(const int *dtypes, int n_in, int n_out);

/* Plans call c of `dot` (c->param an mxc__dot_param; c->in[0] a CSR
 * array, c->in[1] dense, c->out[0] dense). MXC_OK, or MXC_ERR_SHAPE /
 * MXC_ERR_DTYPE / MXC_ERR_STYPE with a message in why when the call is
 * not what the CPU operator accepts (libmxc checks first; this is the
 * plug-in's own guard before it hands pointers to cuSPARSE). */
int mxc__sdot_plan_make(const mxc__gpu_call *c, mxc__sdot_plan *p, char *why,
                        size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SDOT_PLAN_H_ */
