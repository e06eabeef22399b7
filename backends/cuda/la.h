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

#define MXC__LA_RUN_DECL(name, op, fn) \
  int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t len);
MXC__CUDA_LA_OPS(MXC__LA_RUN_DECL)
#undef MXC__LA_RUN_DECL

/* The kernel table's rows (plugin.c). */
#define MXC__LA_ROW(name, op, fn) \
  {name, mxc__la_supports, mxc__cuda_##fn},
#define MXC__CUDA_LA_ROWS MXC__CUDA_LA_OPS(MXC__LA_ROW)

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_LA_H_ */
