// The sum/mean reduction of the CUDA plug-in (sum.h): one block per
// output element (grid-stride over outputs), each thread summing a
// strided share of the group in double, then a fixed tree in shared
// memory: atomic-free, so a result does not depend on scheduling. The
// CPU also sums in double (ops/reduce/reduce.c) in another order, so the
// float results agree except where the two double sums round to
// different floats (within an ulp for sums without heavy cancellation).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/sum.h"

namespace {

constexpr int kThreads = 256;

__global__ void sum_kernel(mxc__sum_plan p, const float *x, float *out,
                           int add) {
  __shared__ double part[kThreads];
  for (long long o = blockIdx.x; o < p.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&p, o);
    double acc = 0;
    for (long long r = threadIdx.x; r < p.n_red; r += kThreads) {
      acc += x[base + mxc__sum_step(&p, r)];
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      float v = mxc__sum_final(&p, part[0]);
      out[o] = add ? out[o] + v : v;
    }
    __syncthreads();  // part[] is reused by the next output
  }
}

int fail(char *why, size_t len, const char *what, cudaError_t e) {
  snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  return MXC_ERR_INTERNAL;
}

}  // namespace

extern "C" int mxc__cuda_sum_launch(int dev, const mxc__sum_plan *p,
                                    const float *x, float *out, int add,
                                    char *why, size_t why_len) {
  cudaError_t e = cudaSetDevice(dev);
  if (e != cudaSuccess) return fail(why, why_len, "cudaSetDevice", e);
  long long blocks = p->n_out < 65535 * 16 ? p->n_out : 65535 * 16;
  sum_kernel<<<(unsigned)blocks, kThreads>>>(*p, x, out, add);
  if ((e = cudaGetLastError()) != cudaSuccess) {
    return fail(why, why_len, "kernel launch", e);
  }
  // The first interface's kernels return when done (core/base/gpu_plugin.h).
  if ((e = cudaStreamSynchronize(0)) != cudaSuccess) {
    return fail(why, why_len, "kernel", e);
  }
  return MXC_OK;
}
