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
#include "backends/cuda/cuda_rt.h"

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

}  // namespace

extern "C" int mxc__cuda_sum_launch(int dev, const mxc__sum_plan *p,
                                    const float *x, float *out, int add,
                                    char *why, size_t why_len) {
  int rc = mxc__cuda_use_device(dev, why, why_len);
  if (rc != MXC_OK) return rc;
  sum_kernel<<<mxc__cuda_grid_cap(p->n_out), kThreads, 0,
               mxc__cuda_stream()>>>(*p, x, out, add);
  return mxc__cuda_finish("sum kernel", why, why_len);
}
