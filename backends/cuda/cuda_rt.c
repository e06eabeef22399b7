/* The plug-in's shared runtime calls (cuda_rt.h). */
#include "backends/cuda/cuda_rt.h"

#include <stdio.h>

#include "mxc/mxc.h"

/* A grid wider than this only adds scheduling work: the grid-stride loops
 * give each thread several elements instead. */
#define CUDA_RT_MAX_BLOCKS (65535LL * 16)

int mxc__cuda_rt_fail(char *why, size_t len, const char *what, cudaError_t e) {
  snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  (void)cudaGetLastError();
  return MXC_ERR_INTERNAL;
}

/* The calling thread's stream: set by streams.c's launch around a kernel
 * call, so that every kernel file reaches it without an argument. */
static _Thread_local cudaStream_t tls_stream;

cudaStream_t mxc__cuda_stream(void) { return tls_stream; }

void mxc__cuda_set_stream(cudaStream_t s) { tls_stream = s; }

int mxc__cuda_use_device(int dev, char *why, size_t len) {
  cudaError_t e = cudaSetDevice(dev);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaSetDevice", e);
}

unsigned mxc__cuda_grid_cap(long long blocks) {
  return (unsigned)(blocks < CUDA_RT_MAX_BLOCKS ? blocks : CUDA_RT_MAX_BLOCKS);
}

unsigned mxc__cuda_grid_blocks(long long n) {
  return mxc__cuda_grid_cap((n + MXC__CUDA_THREADS - 1) / MXC__CUDA_THREADS);
}

int mxc__cuda_finish(const char *what, char *why, size_t len) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    char launch[128];
    snprintf(launch, sizeof launch, "launching %s", what);
    return mxc__cuda_rt_fail(why, len, launch, e);
  }
  if (tls_stream != 0) return MXC_OK; /* the engine waits for an event */
  return mxc__cuda_wait(MXC_OK, what, why, len);
}

int mxc__cuda_wait(int rc, const char *what, char *why, size_t len) {
  cudaError_t e = cudaStreamSynchronize(mxc__cuda_stream());
  if (rc != MXC_OK || e == cudaSuccess) return rc;
  return mxc__cuda_rt_fail(why, len, what, e);
}
