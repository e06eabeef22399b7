/* The linalg_* kernels' plans (la_plan.c): what one call of a linalg_*
 * operator or its _backward_ asks of cuBLAS, cuSOLVER and the plug-in's
 * own element kernels (la.cu), as plain data computed without any CUDA
 * call.
 *
 * Why float64 throughout: the CPU operators (ops/linalg/la_ops.c) copy
 * every batch item to double, compute with plain loops in double and round
 * each output once into its dtype. The GPU does the same: every input is
 * widened into a double "slot", the steps below run in double
 * (cublasDgemmStridedBatched, cublasDgetrfBatched / cublasDgetriBatched,
 * cusolverDnDpotrfBatched), and each output slot is rounded once into its
 * array with its write mode. So float32 results agree with the CPU's to
 * the last bit or so, whatever the conditioning, and float64 comes for
 * free. These operators are for small matrices (covariances, Cholesky
 * factors); an H100/H200's float64 rate is ample for them.
 *
 * Why a plan: mxc's matrices are row-major, cuBLAS and cuSOLVER
 * column-major, and the operators' transpose / lower / rightside
 * parameters multiply the ways a call can be mapped wrongly. A row-major
 * r x c matrix is the column-major c x r matrix of the same memory (its
 * transpose), so:
 * - a row-major product C = op(X) op(Y) is cuBLAS's C^T = op(Y)^T op(X)^T:
 *   Y before X, m and n swapped, each leading dimension the row length;
 * - the lower triangle of a row-major matrix is the upper triangle of the
 *   column-major one: potrf of `lower` is cuSOLVER's CUBLAS_FILL_MODE_UPPER
 *   (and the factor U = L^T it writes there reads back row-major as L);
 * - an LU of the column-major view factors A^T: its inverse read row-major
 *   is A^-1, its determinant A's.
 * tests/gpu:test_cuda_la_plan runs every plan with host routines that
 * follow cuBLAS's and cuSOLVER's column-major argument rules (la_host.h)
 * and compares with the CPU operators through the public API.
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_LA_PLAN_H_
#define MXC_BACKENDS_CUDA_LA_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/linalg/linalg_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators, one kernel row each (la.h's MXC__CUDA_LA_OPS). */
enum {
  MXC__LA_GEMM_OP,
  MXC__LA_GEMM_BWD,
  MXC__LA_GEMM2,
  MXC__LA_GEMM2_BWD,
  MXC__LA_SYRK,
  MXC__LA_SYRK_BWD,
  MXC__LA_TRMM,
  MXC__LA_TRMM_BWD,
  MXC__LA_TRSM,
  MXC__LA_TRSM_BWD,
  MXC__LA_POTRF_OP,
  MXC__LA_POTRF_BWD,
  MXC__LA_POTRI,
  MXC__LA_POTRI_BWD,
  MXC__LA_SUMLOGDIAG,
  MXC__LA_SUMLOGDIAG_BWD,
  MXC__LA_EXTRACTDIAG,
  MXC__LA_EXTRACTDIAG_BWD,
  MXC__LA_MAKEDIAG,
  MXC__LA_MAKEDIAG_BWD,
  MXC__LA_INVERSE,
  MXC__LA_INVERSE_BWD,
  MXC__LA_DET,
  MXC__LA_DET_BWD,
  MXC__LA_SLOGDET,
  MXC__LA_SLOGDET_BWD,
  MXC__LA_N_OPS
};

/* Operator name, MXC__LA_*, a short name for the kernel rows' functions
 * (la.h; the fake plug-in's rows, tests/gpu/fake_plugin.c). */
#define MXC__CUDA_LA_OPS(X)                                        \
  X("linalg_gemm", MXC__LA_GEMM_OP, la_gemm)                       \
  X("_backward_linalg_gemm", MXC__LA_GEMM_BWD, la_gemm_bwd)        \
  X("linalg_gemm2", MXC__LA_GEMM2, la_gemm2)                       \
  X("_backward_linalg_gemm2", MXC__LA_GEMM2_BWD, la_gemm2_bwd)     \
  X("linalg_syrk", MXC__LA_SYRK, la_syrk)                          \
  X("_backward_linalg_syrk", MXC__LA_SYRK_BWD, la_syrk_bwd)        \
  X("linalg_trmm", MXC__LA_TRMM, la_trmm)                          \
  X("_backward_linalg_trmm", MXC__LA_TRMM_BWD, la_trmm_bwd)        \
  X("linalg_trsm", MXC__LA_TRSM, la_trsm)                          \
  X("_backward_linalg_trsm", MXC__LA_TRSM_BWD, la_trsm_bwd)        \
  X("linalg_potrf", MXC__LA_POTRF_OP, la_potrf)                    \
  X("_backward_linalg_potrf", MXC__LA_POTRF_BWD, la_potrf_bwd)     \
  X("linalg_potri", MXC__LA_POTRI, la_potri)                       \
  X("_backward_linalg_potri", MXC__LA_POTRI_BWD, la_potri_bwd)     \
  X("linalg_sumlogdiag", MXC__LA_SUMLOGDIAG, la_sumlogdiag)        \
  X("_backward_linalg_sumlogdiag", MXC__LA_SUMLOGDIAG_BWD,         \
    la_sumlogdiag_bwd)                                             \
  X("linalg_extractdiag", MXC__LA_EXTRACTDIAG, la_extractdiag)     \
  X("_backward_linalg_extractdiag", MXC__LA_EXTRACTDIAG_BWD,       \
    la_extractdiag_bwd)                                            \
  X("linalg_makediag", MXC__LA_MAKEDIAG, la_makediag)              \
  X("_backward_linalg_makediag", MXC__LA_MAKEDIAG_BWD,             \
    la_makediag_bwd)                                               \
  X("linalg_inverse", MXC__LA_INVERSE, la_inverse)                 \
  X("_backward_linalg_inverse", MXC__LA_INVERSE_BWD, la_inverse_bwd) \
  X("linalg_det", MXC__LA_DET, la_det)                             \
  X("_backward_linalg_det", MXC__LA_DET_BWD, la_det_bwd)           \
  X("linalg_slogdet", MXC__LA_SLOGDET, la_slogdet)                 \
  X("_backward_linalg_slogdet", MXC__LA_SLOGDET_BWD, la_slogdet_bwd)

/* 1 when every array is float32, or every one float64 (the rows'
 * supports; -1 entries are not decided yet). */
int mxc__la_supports(const int *dtypes, int n_in, int n_out);

/* Step kinds. Slots are float64 scratch buffers of `batch` items each,
 * every item an r x c row-major matrix (1 x 1 for a scalar per item). */
enum {
  MXC__LA_S_GEMM,  /* cublasDgemmStridedBatched, in cuBLAS's own terms */
  MXC__LA_S_GETRF, /* cublasDgetrfBatched on slot a in place (n x n) */
  MXC__LA_S_GETRI, /* cublasDgetriBatched: a's LU -> c (n x n) */
  MXC__LA_S_POTRF, /* cusolverDnDpotrfBatched on slot a in place */
  MXC__LA_S_ELEM,  /* each element of c's items: la_hd.h's mxc__la_elem */
  MXC__LA_S_ITEM   /* each item of c: la_hd.h's mxc__la_item */
};

/* Element formulas (MXC__LA_S_ELEM), x = slot a's item, out (i, j) of c. */
enum {
  MXC__LA_E_COPY,       /* x(i, j) */
  MXC__LA_E_TRANSPOSE,  /* x(j, i) */
  MXC__LA_E_TRIANGLE,   /* x(i, j) in the `lower` (or upper) triangle, else 0 */
  MXC__LA_E_SYMM,       /* x(i, j) + x(j, i) */
  MXC__LA_E_LTU,        /* x(max, min): the lower triangle copied up */
  MXC__LA_E_SCALE,      /* alpha x(i, j) */
  MXC__LA_E_SCALED_T,   /* alpha b[item] (d[item]) x(j, i) */
  MXC__LA_E_EXTRACT,    /* out (0, i) = x's diagonal `offset` element i */
  MXC__LA_E_MAKE,       /* x(0, k) on diagonal `offset`, 0 elsewhere */
  MXC__LA_E_LOGDIAG_GRAD, /* b[item] / x(i, i) on the diagonal, else 0 */
  MXC__LA_E_NAN_IF_SINGULAR, /* x(i, j), NaN where the LU's info > 0 */
  MXC__LA_E_ZERO             /* 0 (x not read) */
};

/* Item formulas (MXC__LA_S_ITEM). */
enum {
  MXC__LA_I_SUMLOGDIAG, /* c = sum of log x(i, i) */
  MXC__LA_I_DET_LU,     /* c = det from slot a's LU and the pivots */
  MXC__LA_I_SLOGDET     /* from det x: c = sign, d = log |x| */
};

/* No slot (an optional operand). */
#define MXC__LA_NONE (-1)

/* One step. GEMM: C = alpha op(A) op(B) + beta C with cuBLAS's column-major
 * m, n, k, leading dimensions and strides between items (trans 1:
 * CUBLAS_OP_T). GETRF/GETRI/POTRF: n; POTRF's fill 1 is
 * CUBLAS_FILL_MODE_LOWER, 0 UPPER, in column-major terms. ELEM: a, b, d
 * read, c written (r x cc per item); ITEM: a read, c (and d) written. */
typedef struct mxc__la_step {
  int kind, op;
  int a, b, c, d;
  int trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  int64_t stride_a, stride_b, stride_c;
  double alpha, beta;
  int fill, lower;
  int64_t offset;
  int64_t ra, ca; /* slot a's item extents (ELEM/ITEM) */
  int64_t r, cc;  /* slot c's item extents (ELEM) */
} mxc__la_step;

#define MXC__LA_MAX_SLOTS 16
#define MXC__LA_MAX_STEPS 16

typedef struct mxc__la_plan {
  int64_t batch;
  int n_slots, n_in, n_out; /* slots: inputs, outputs, temporaries */
  int64_t slot_r[MXC__LA_MAX_SLOTS], slot_c[MXC__LA_MAX_SLOTS];
  int n_steps;
  mxc__la_step step[MXC__LA_MAX_STEPS];
  int64_t lu_n;      /* > 0: the plan factors n x n matrices (pivots) */
  int needs_blas;    /* cuBLAS (GEMM, GETRF, GETRI) */
  int needs_solver;  /* cuSOLVER (POTRF) */
  int dtype;         /* float32 or float64: every array of the call */
} mxc__la_plan;

/* Plans call c of operator `op` (MXC__LA_*) from its shapes, dtypes,
 * parameters (mxc__la_param) and write modes, never its pointers. MXC_OK
 * (n_steps 0: nothing to compute), or MXC_ERR_DTYPE (arrays of other
 * dtypes) / MXC_ERR_SHAPE (shapes the CPU operator refuses) /
 * MXC_ERR_UNSUPPORTED (an extent beyond cuBLAS's 32-bit int) with the
 * reason in why. */
int mxc__la_plan_call(int op, const mxc__gpu_call *c, mxc__la_plan *p,
                      char *why, size_t why_len);

/* Elements of slot s (batch items). */
int64_t mxc__la_slot_size(const mxc__la_plan *p, int s);

/* After a POTRF step: MXC_OK when every info[item] is 0, else
 * MXC_ERR_INVALID_ARGUMENT with the CPU's message (the matrix is not
 * positive definite, naming the first failing item and pivot). */
int mxc__la_potrf_check(const int *info, int64_t batch, char *why,
                        size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_LA_PLAN_H_ */
