/* The plug-in's linalg_* kernels (la.c over la_plan.h, la.cu's element
 * kernels): gemm, gemm2, syrk, trmm, trsm, potrf, potri, sumlogdiag,
 * extractdiag, makediag, inverse, det, slogdet and every _backward_, in
 * float32 and float64, computed in float64 like the CPU's (la_plan.h).
 *
 * cuBLAS (blas.c's per-thread handles) and cuSOLVER (libcusolver.so.12,
 * MXC_CUSOLVER_LIBRARY names another file) are opened on first use
 * (dynlib.h), never linked: without them the kernels that need them answer
 * MXC_ERR_UNSUPPORTED naming the library and what to install. */
#ifndef MXC_BACKENDS_CUDA_LA_H_
#define MXC_BACKENDS_CUDA_LA_H_

#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/la_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs call c of operator op (MXC__LA_*) on gpu(c->dev), on the call's
 * stream (a potrf waits for its factorisation: a matrix that is not
 * positive definite is the call's error, as on the CPU). Thread-safety:
 * any thread; library handles are per thread and device. */
int mxc__cuda_la_run(int op, const mxc__gpu_call *c, char *why, size_t len);

/* 1 when every array is float32, or every one float64. */
int mxc__cuda_la_supports(const int *dtypes, int n_in, int n_out);

/* ---- la.cu's launches, on mxc__cuda_stream() (checked by the caller's
 * mxc__cuda_finish) ---- */

/* n values of src (dtype float32 or float64) widened into dst. */
void mxc__la_cu_load(const void *src, int dtype, double *dst, int64_t n);
/* n values of src rounded into dst with write mode req (ADD adds in the
 * dtype, as the CPU's MXC__ASSIGN). */
void mxc__la_cu_store(const double *src, void *dst, int dtype, int req,
                      int64_t n);
/* An ELEM / ITEM step over `batch` items; slots[i] is slot i's memory. */
void mxc__la_cu_elem(const mxc__la_step *s, double *const *slots,
                     const int *info, int64_t batch);
void mxc__la_cu_item(const mxc__la_step *s, double *const *slots,
                     const int *piv, int64_t batch);
/* out[i] = base + i * stride for the batched calls' pointer arrays. */
void mxc__la_cu_ptrs(double **out, double *base, int64_t stride,
                     int64_t batch);

/* Operator name, MXC__LA_* of the kernel rows. */
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

#define MXC__LA_RUN_DECL(name, op, fn) \
  int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t len);
MXC__CUDA_LA_OPS(MXC__LA_RUN_DECL)
#undef MXC__LA_RUN_DECL

/* The kernel table's rows (plugin.c). */
#define MXC__LA_ROW(name, op, fn) \
  {name, mxc__cuda_la_supports, mxc__cuda_##fn},
#define MXC__CUDA_LA_ROWS MXC__CUDA_LA_OPS(MXC__LA_ROW)

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_LA_H_ */
