/* Run-time fused kernels (the Alea TK design): the executor's element-wise
 * fusion program (_fused_elemwise, ops/fused) as one CUDA kernel,
 * generated (fuse_gen.h), compiled by NVRTC (fuse_nvrtc.h) and cached by
 * program text and device (fuse_cache.h).
 *
 * Compilation loads the image with the CUDA runtime's library API
 * (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel) rather
 * than the driver API: the plug-in already links the runtime statically,
 * whose primary contexts every other kernel uses, so a dlopen of
 * libcuda.so.1 and context bookkeeping of our own would add a second way
 * to reach the same context; a library is context-independent (the
 * runtime loads it into a device's context on first launch there).
 *
 * Cache: 256 programs per process, least recently used evicted when idle.
 * There is no plug-in unload hook (gpu_plugin.h), so entries live until
 * eviction or process exit, when the driver frees modules with their
 * contexts. */
#ifndef MXC_BACKENDS_CUDA_FUSE_H_
#define MXC_BACKENDS_CUDA_FUSE_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the fused program of call c (float32, one output, every input of
 * its shape) on gpu(c->dev) and waits for it. MXC_ERR_UNSUPPORTED when
 * the program has an instruction the generator cannot express, or NVRTC
 * cannot be loaded (the reason names the library and what to install);
 * MXC_ERR_INTERNAL with NVRTC's log or the runtime's message otherwise.
 * Thread-safety: any thread; programs are compiled once per device (a
 * second caller waits for the first's compilation). */
int mxc__cuda_fused(const mxc__gpu_call *c, char *why, size_t why_len);

/* The row's accepts (core/base/gpu_plugin.h, accepts.h): 0, with the
 * reason, for a program the generator cannot express (judged by the
 * parameters alone, for the fusion pass's queries) and, for a call with shapes on a device,
 * for one that NVRTC cannot compile or the runtime cannot load there
 * (NVRTC missing included): compiled here, on the pushing thread, into
 * the cache the run reads; libmxc then runs the program unfused.
 * Thread-safety: any thread. */
int mxc__cuda_fused_accepts(const mxc__gpu_call *c, char *why,
                            size_t why_len);

/* The kernel table's row (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_FUSE_ROWS {"_fused_elemwise", NULL, mxc__cuda_fused},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_FUSE_H_ */
