// The sum/mean reduction of the CUDA plug-in (sum.h): one block per
// output element (grid-stride over outputs), each thread summing a
// strided share of the group in double, then a fixed tree in shared
// memory: atomic-free, so a result does not depend on scheduling. The
// CPU also sums in double (ops/reduce/reduce.c) in another order, so the
// float results agree except where the two double sums round to
// different floats (within an ulp for sums without heavy cancellation).
// float16 and bfloat16 inputs widen to float and then to double, and the
// float result of mxc__sum_final (plus the output's old value in add
// mode, in float) rounds once to the dtype, as ops/reduce/reduce.c's
// st_f16 / st_bf16.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/sum.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

namespace {

constexpr int kThreads = 256;

template <int DT>
__global__ void sum_kernel(mxc__sum_plan p, const typename MxcElem<DT>::T *x,
                           typename MxcElem<DT>::T *out, int add) {
  typedef MxcElem<DT> E;
  __shared__ double part[kThreads];
  for (long long o = blockIdx.x; o < p.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&p, o);
    double acc = 0;
    for (long long r = threadIdx.x; r < p.n_red; r += kThreads) {
      acc += E::load(x[base + mxc__sum_step(&p, r)]);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      float v = mxc__sum_final(&p, part[0]);
      out[o] = E::store(add ? E::load(out[o]) + v : v);
    }
    __syncthreads();  // part[] is reused by the next output
  }
}

template <int DT>
void launch(const mxc__sum_plan &p, const void *x, void *out, int add) {
  typedef typename MxcElem<DT>::T T;
  sum_kernel<DT><<<mxc__cuda_grid_cap(p.n_out), kThreads, 0,
                   mxc__cuda_stream()>>>(p, (const T *)x, (T *)out, add);
}

typedef void (*launch_fn)(const mxc__sum_plan &, const void *, void *, int);

// Indexed by half_types.h's slot.
const launch_fn k_launch[] = {launch<MXC_DTYPE_FLOAT32>,
                              launch<MXC_DTYPE_FLOAT16>,
                              launch<MXC_DTYPE_BFLOAT16>};

}  // namespace

extern "C" int mxc__cuda_sum_launch(int dev, const mxc__sum_plan *p,
                                    int dtype, const void *x, void *out,
                                    int add, char *why, size_t why_len) {
  int slot = mxc__half_slot(dtype);
  if (slot < 0) {
    snprintf(why, why_len,
             "dtype %d: the sum kernels take float32, float16 and bfloat16",
             dtype);
    return MXC_ERR_DTYPE;
  }
  int rc = mxc__cuda_use_device(dev, why, why_len);
  if (rc != MXC_OK) return rc;
  k_launch[slot](*p, x, out, add);
  return mxc__cuda_finish("sum kernel", why, why_len);
}
