/* The plug-in's cuBLAS kernels (blas.c): dot, batch_dot, FullyConnected
 * and their backward operators in float32, float16 and bfloat16 (half
 * types through cublasGemmEx with float32 accumulation, rounded once as
 * the CPU's: blas_plan.h), one table row each.
 *
 * cuBLAS is opened on first use (dynlib.h): without it these kernels
 * answer MXC_ERR_UNSUPPORTED naming the library, and every other kernel
 * of the plug-in works. Math mode CUBLAS_DEFAULT_MATH: no TF32, so the
 * products round like float32 GEMMs on the CPU (within summation order). */
#ifndef MXC_BACKENDS_CUDA_BLAS_H_
#define MXC_BACKENDS_CUDA_BLAS_H_

#include <stddef.h>

#include "backends/cuda/blas_plan.h"
#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs call c of operator op (MXC__BLAS_*) on gpu(c->dev) and waits for
 * it. Thread-safety: any thread; each thread has its own cuBLAS handle
 * and workspace per device. */
int mxc__cuda_blas_run(int op, const mxc__gpu_call *c, char *why,
                       size_t why_len);

int mxc__cuda_blas_dot(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_blas_dot_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_blas_batch_dot(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_blas_batch_dot_bwd(const mxc__gpu_call *c, char *why,
                                 size_t why_len);
int mxc__cuda_blas_fc(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_blas_fc_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* cuBLAS's float64 batched calls, for the linalg kernels (la.c): the
 * calling thread's handle for gpu(dev) (a cublasHandle_t, made current
 * with dev, bound to the call's stream) and the addresses of
 * cublasDgemmStridedBatched, cublasDgetrfBatched and cublasDgetriBatched
 * in fns[MXC__CUBLAS_F64_*]. MXC_OK, or MXC_ERR_UNSUPPORTED with the
 * dynlib message when cuBLAS cannot be loaded (or another error with the
 * runtime's reason). Thread-safety: any thread; the handle is the calling
 * thread's only. */
enum {
  MXC__CUBLAS_F64_GEMM_SB,
  MXC__CUBLAS_F64_GETRF,
  MXC__CUBLAS_F64_GETRI,
  MXC__CUBLAS_N_F64
};
int mxc__cuda_blas_f64(int dev, void **handle, void **fns, char *why,
                       size_t why_len);

/* The kernel table's rows (plugin.c): one dtype of float32, float16 and
 * bfloat16 for every array (mxc__half_supports_same). */
#define MXC__CUDA_BLAS_ROWS                                            \
  {"dot", mxc__half_supports_same, mxc__cuda_blas_dot},                     \
      {"_backward_dot", mxc__half_supports_same, mxc__cuda_blas_dot_bwd},   \
      {"batch_dot", mxc__half_supports_same, mxc__cuda_blas_batch_dot},     \
      {"_backward_batch_dot", mxc__half_supports_same,                      \
       mxc__cuda_blas_batch_dot_bwd},                                  \
      {"FullyConnected", mxc__half_supports_same, mxc__cuda_blas_fc},       \
      {"_backward_FullyConnected", mxc__half_supports_same,                 \
       mxc__cuda_blas_fc_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BLAS_H_ */
