// The broadcast binary operators' gradients of the CUDA plug-in
// (bgrad.h): per gradient one kernel over its groups of ograd elements
// (bgrad_plan.h), a thread per small group, a block per large one (256
// strided double partials, then a fixed shared-memory tree as sum.cu):
// atomic-free, so a result does not depend on scheduling. -fmad=false
// (BUILD): the float partials round as the CPU's.
//
// float16 / bfloat16 (one dtype per call): ograd and the operands widen to
// float, the same float partials and double sums, and the float result of
// mxc__bgrad_final rounds once to the dtype (half_hd.h), as the CPU's
// store_acc through mxc__blob_set.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/bgrad.h"
#include "backends/cuda/bgrad_plan.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/scalar_hd.h"

namespace {

// The partial derivatives as a class with ga/gb(og, a, b) in float:
// train_plan.h's four (add, sub, mul, div, as before), or one operator of
// ops/binary/binary_ops.h's list (scalar_hd.h's B_<name>: og * df/da and
// og * df/db in float, the CPU's float backward rows, host-tested
// against _backward_broadcast_<name> by test_cuda_bgrad_plan).
template <int OP>
struct Basic {
  static __device__ __forceinline__ float ga(float og, float a, float b) {
    return mxc__bin_grad_a(OP, og, a, b);
  }
  static __device__ __forceinline__ float gb(float og, float a, float b) {
    return mxc__bin_grad_b(OP, og, a, b);
  }
};

template <class B>
struct Listed {
  static __device__ __forceinline__ float ga(float og, float a, float b) {
    return og * B::da(a, b);
  }
  static __device__ __forceinline__ float gb(float og, float a, float b) {
    return og * B::db(a, b);
  }
};

constexpr int kThreads = 256;

// Inputs and gradients never alias (the backward operators declare no
// in-place pair), but nothing here relies on it. Arrays of the call's
// dtype DT.
struct Args {
  const void *og, *a, *b;
  void *g;
  int x, add;
};

// Element j's partial: the operands' elements of ograd element j (the
// host-tested map of bgrad_plan.h), widened to float, through G.
template <class G, int DT>
__device__ __forceinline__ float partial(const mxc__bgrad_plan &p,
                                         const Args &q, int64_t j) {
  typedef MxcElem<DT> E;
  typedef typename E::T T;
  int64_t ia, ib;
  mxc__bcast_offsets(&p.map, j, &ia, &ib);
  float g = E::load(((const T *)q.og)[j]);
  float a = E::load(((const T *)q.a)[ia]), b = E::load(((const T *)q.b)[ib]);
  return q.x ? G::gb(g, a, b) : G::ga(g, a, b);
}

// Gradient element o from its group's double sum, in its write mode.
template <int DT>
__device__ __forceinline__ void store(const Args &q, long long o,
                                      double acc) {
  typedef MxcElem<DT> E;
  typename E::T *g = (typename E::T *)q.g;
  g[o] = E::store(mxc__bgrad_final(acc, q.add, q.add ? E::load(g[o]) : 0.f));
}

template <class G, int DT>
__global__ void group_thread_kernel(mxc__bgrad_plan p, Args q) {
  const mxc__sum_plan &r = p.red[q.x];
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       o < r.n_out; o += stride) {
    int64_t base = mxc__sum_base(&r, o);
    double acc = 0;
    for (int64_t k = 0; k < r.n_red; ++k) {
      acc += partial<G, DT>(p, q, base + mxc__sum_step(&r, k));
    }
    store<DT>(q, o, acc);
  }
}

template <class G, int DT>
__global__ void group_block_kernel(mxc__bgrad_plan p, Args q) {
  __shared__ double part[kThreads];
  const mxc__sum_plan &r = p.red[q.x];
  for (long long o = blockIdx.x; o < r.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&r, o);
    double acc = 0;
    for (long long k = threadIdx.x; k < r.n_red; k += kThreads) {
      acc += partial<G, DT>(p, q, base + mxc__sum_step(&r, k));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) store<DT>(q, o, part[0]);
    __syncthreads();  // part[] is reused by the next group
  }
}

template <class G, int DT>
void launch(const mxc__bgrad_plan &p, const Args &q) {
  int64_t n = p.red[q.x].n_out;
  if (p.per_thread[q.x]) {
    group_thread_kernel<G, DT><<<MXC__CUDA_GRID(n)>>>(p, q);
  } else {
    group_block_kernel<G, DT>
        <<<mxc__cuda_grid_cap(n), kThreads, 0, mxc__cuda_stream()>>>(p, q);
  }
}

typedef void (*launch_fn)(const mxc__bgrad_plan &, const Args &);

template <class G>
int run(const mxc__gpu_call *c, char *why, size_t why_len) {
  // Indexed by half_types.h's slot of the call's dtype.
  static const launch_fn k_launch[] = {launch<G, MXC_DTYPE_FLOAT32>,
                                       launch<G, MXC_DTYPE_FLOAT16>,
                                       launch<G, MXC_DTYPE_BFLOAT16>};
  mxc__bgrad_plan p;
  int rc = mxc__bgrad_plan_make(c, &p, why, why_len);
  bool any = false;
  for (int x = 0; x < 2; ++x) {
    any = any || (c->req[x] != MXC__GPU_REQ_NULL && c->out[x].size > 0);
  }
  if (rc != MXC_OK || !any) return rc;
  int slot = mxc__half_slot(c->in[0].dtype);
  if (slot < 0) {
    snprintf(why, why_len,
             "dtype %d: the broadcast gradients take float32, float16 and "
             "bfloat16",
             c->in[0].dtype);
    return MXC_ERR_DTYPE;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  for (int x = 0; x < 2; ++x) {
    if (c->req[x] == MXC__GPU_REQ_NULL || c->out[x].size == 0) continue;
    Args q = {c->in[0].ptr, c->in[1].ptr, c->in[2].ptr, c->out[x].ptr,
              x, c->req[x] == MXC__GPU_REQ_ADD};
    k_launch[slot](p, q);
  }
  return mxc__cuda_finish("broadcast gradient kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_backward_broadcast_add(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<Basic<MXC__BG_ADD> >(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_sub(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<Basic<MXC__BG_SUB> >(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_mul(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<Basic<MXC__BG_MUL> >(c, why, n);
}
extern "C" int mxc__cuda_backward_broadcast_div(const mxc__gpu_call *c,
                                                char *why, size_t n) {
  return run<Basic<MXC__BG_DIV> >(c, why, n);
}

#define MXC__BG_MORE(name, stem)                                        \
  extern "C" int mxc__cuda_backward_broadcast_##name(                   \
      const mxc__gpu_call *c, char *why, size_t n) {                    \
    return run<Listed<mxc_bin::B_##name> >(c, why, n);                  \
  }
MXC__CUDA_SAME_GRAD(MXC__BG_MORE)
