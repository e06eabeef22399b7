/* The plug-in's cuSPARSE kernel (sdot.c): `dot` with a CSR lhs on the
 * GPU, csr x dense -> dense and transpose(csr) x dense -> dense
 * (transpose_a), float32 and float64 values, int32 and int64 indices,
 * write modes WRITE and ADD, through cuSPARSE's generic SpMM. A sparse
 * row (core/base/gpu_plugin.h's mxc__gpu_sparse_kernel): libmxc gives it
 * the calls with a CSR lhs; dense calls of dot stay cuBLAS's (blas.h).
 *
 * cuSPARSE is opened on first use (dynlib.h, libcusparse.so.12;
 * MXC_CUSPARSE_LIBRARY, read once, names another file): without it this
 * kernel answers MXC_ERR_UNSUPPORTED naming the library and what to
 * install, and every other kernel of the plug-in works. */
#ifndef MXC_BACKENDS_CUDA_SDOT_H_
#define MXC_BACKENDS_CUDA_SDOT_H_

#include <stddef.h>

#include "backends/cuda/sdot_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs call c of dot (a CSR lhs) on gpu(c->dev), on the call's stream.
 * Thread-safety: any thread; each thread has its own cuSPARSE handle and
 * workspace per device. */
int mxc__cuda_sdot(const mxc__gpu_call *c, char *why, size_t why_len);

/* The plug-in's sparse rows (plugin.c's sparse_kernels). */
#define MXC__CUDA_SPARSE_ROWS \
  {{"dot", mxc__sdot_dtypes, mxc__cuda_sdot}, mxc__sdot_stypes},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SDOT_H_ */
