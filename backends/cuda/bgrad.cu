// The broadcast binary operators' gradients of the CUDA plug-in
// (bgrad.h): per gradient one kernel over its groups of ograd elements
// (bgrad_plan.h), a thread per small group, a block per large one (256
// strided double partials, then a fixed shared-memory tree as sum.cu):
// atomic-free, so a result does not depend on scheduling. -fmad=false
// (BUILD): the float partials round as the CPU's.
#include <cuda_runtime.h>

#include "backends/cuda/bgrad.h"
#include "backends/cuda/bgrad_plan.h"
#include "backends/cuda/cuda_rt.h"

namespace {

constexpr int kThreads = 256;

// Inputs and gradients never alias (the backward operators declare no
// in-place pair), but nothing here relies on it.
struct Args {
  const float *og, *a, *b;
  float *g;
  int x, add;
};

template <int OP>
__global__ void group_thread_kernel(mxc__bgrad_plan p, Args q) {
  const mxc__sum_plan &r = p.red[q.x];
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       o < r.n_out; o += stride) {
    int64_t base = mxc__sum_base(&r, o);
    double acc = 0;
    for (int64_t k = 0; k < r.n_red; ++k) {
      acc += mxc__bgrad_partial(&p, OP, q.x, q.og, q.a, q.b,
                                base + mxc__sum_step(&r, k));
    }
    q.g[o] = mxc__bgrad_final(acc, q.add, q.add ? q.g[o] : 0.f);
  }
}

template <int OP>
__global__ void group_block_kernel(mxc__bgrad_plan p, Args q) {
  __shared__ double part[kThreads];
  const mxc__sum_plan &r = p.red[q.x];
  for (long long o = blockIdx.x; o < r.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&r, o);
    double acc = 0;
    for (long long k = threadIdx.x; k < r.n_red; k += kThreads) {
      acc += mxc__bgrad_partial(&p, OP, q.x, q.og, q.a, q.b,
                                base + mxc__sum_step(&r, k));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      q.g[o] = mxc__bgrad_final(part[0], q.add, q.add ? q.g[o] : 0.f);
    }
    __syncthreads();  // part[] is reused by the next group
  }
}

template <int OP>
void launch(const mxc__bgrad_plan &p, const Args &q) {
  int64_t n = p.red[q.x].n_out;
  if (p.per_thread[q.x]) {
    group_thread_kernel<OP><<<MXC__CUDA_GRID(n)>>>(p, q);
  } else {
    group_block_kernel<OP>
        <<<mxc__cuda_grid_cap(n), kThreads, 0, mxc__cuda_stream()>>>(p, q);
  }
}

template <int OP>
int run(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__bgrad_plan p;
  int rc = mxc__bgrad_plan_make(c, &p, why, why_len);
  bool any = false;
  for (int x = 0; x < 2; ++x) {
    any = any || (c->req[x] != MXC__GPU_REQ_NULL && c->out[x].size > 0);
  }
  if (rc != MXC_OK || !any) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  for (int x = 0; x < 2; ++x) {
    if (c->req[x] == MXC__GPU_REQ_NULL || c->out[x].size == 0) continue;
    Args q = {(const float *)c->in[0].ptr,
              (const float *)c->in[1].ptr,
              (const float *)c->in[2].ptr,
              (float *)c->out[x].ptr,
              x,
              c->req[x] == MXC__GPU_REQ_ADD};
    launch<OP>(p, q);
  }
  return mxc__cuda_finish("broadcast gradient kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_backward_broadcast_add(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<MXC__BG_ADD>(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_sub(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<MXC__BG_SUB>(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_mul(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<MXC__BG_MUL>(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_div(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<MXC__BG_DIV>(c, why, n);
}
