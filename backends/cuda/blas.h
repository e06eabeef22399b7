/* The plug-in's cuBLAS kernels (blas.c): float32 dot, batch_dot,
 * FullyConnected and their backward operators, one table row each.
 *
 * cuBLAS is opened on first use (dynlib.h): without it these kernels
 * answer MXC_ERR_UNSUPPORTED naming the library, and every other kernel
 * of the plug-in works. Math mode CUBLAS_DEFAULT_MATH: no TF32, so the
 * products round like float32 GEMMs on the CPU (within summation order). */
#ifndef MXC_BACKENDS_CUDA_BLAS_H_
#define MXC_BACKENDS_CUDA_BLAS_H_

#include <stddef.h>

#include "backends/cuda/blas_plan.h"
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

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_BLAS_ROWS                                        \
  {"dot", NULL, mxc__cuda_blas_dot},                               \
      {"_backward_dot", NULL, mxc__cuda_blas_dot_bwd},             \
      {"batch_dot", NULL, mxc__cuda_blas_batch_dot},               \
      {"_backward_batch_dot", NULL, mxc__cuda_blas_batch_dot_bwd}, \
      {"FullyConnected", NULL, mxc__cuda_blas_fc},                 \
      {"_backward_FullyConnected", NULL, mxc__cuda_blas_fc_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_BLAS_H_ */
