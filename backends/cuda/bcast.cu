// Broadcast binary kernels of the CUDA plug-in (bcast.h): one grid-stride
// kernel per operator and dtype (float32, float16, bfloat16), each thread
// mapping its output index to the operands' offsets with the host-made
// plan (bcast_plan.h, host-tested against the CPU).
// -fmad=false (BUILD): one float operation per element, rounded as on the
// CPU, so the results are bitwise the CPU's.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/bcast.h"
#include "backends/cuda/bcast_plan.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/scalar_hd.h"

namespace {

// The operation as a class with fwd(a, b) in float: bcast_plan.h's four
// (add, sub, mul, div, as before), or one of ops/binary/binary_ops.h's
// list (scalar_hd.h's B_<name>: the expression the CPU's broadcast
// operators run, host-tested bitwise against them), so broadcast_maximum
// and the others are the same kernel with another class.
template <int OP>
struct Basic {
  static __device__ __forceinline__ float fwd(float a, float b) {
    return mxc__bcast_apply(OP, a, b);
  }
};

// Operands and output may alias (in place): no __restrict__. Half types
// compute in float and round once (half_hd.h), as ops/binary/rows.c.
template <class F, int DT>
__global__ void bcast_kernel(mxc__bcast_plan p,
                             const typename MxcElem<DT>::T *a,
                             const typename MxcElem<DT>::T *b,
                             typename MxcElem<DT>::T *out, long long n,
                             int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p, i, &ia, &ib);
    float v = F::fwd(E::load(a[ia]), E::load(b[ib]));
    out[i] = E::store(add ? E::load(out[i]) + v : v);
  }
}

typedef void (*launch_fn)(const mxc__bcast_plan &, const void *,
                          const void *, void *, long long, int);

template <class F, int DT>
void launch(const mxc__bcast_plan &p, const void *a, const void *b,
            void *out, long long n, int add) {
  typedef typename MxcElem<DT>::T T;
  bcast_kernel<F, DT><<<MXC__CUDA_GRID(n)>>>(p, (const T *)a, (const T *)b,
                                              (T *)out, n, add);
}

// Indexed by half_types.h's slot.
#define MXC__BC_ROW(F)                                         \
  {launch<F, MXC_DTYPE_FLOAT32>, launch<F, MXC_DTYPE_FLOAT16>, \
   launch<F, MXC_DTYPE_BFLOAT16>}

int run(const launch_fn (&k_launch)[3], const mxc__gpu_call *c, char *why,
        size_t why_len) {
  const mxc__gpu_array &o = c->out[0];
  mxc__bcast_plan p;
  int rc = mxc__bcast_plan_make(&c->in[0], &c->in[1], &o, &p, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || o.size == 0) {
    return rc;
  }
  int slot = mxc__half_slot(o.dtype);
  if (slot < 0) {
    snprintf(why, why_len,
             "dtype %d: the broadcast kernels take float32, float16 and "
             "bfloat16",
             o.dtype);
    return MXC_ERR_DTYPE;
  }
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  k_launch[slot](p, c->in[0].ptr, c->in[1].ptr, o.ptr, o.size,
                     c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("broadcast kernel", why, why_len);
}

}  // namespace

#define MXC__BC_RUN(fn, F)                                            \
  extern "C" int fn(const mxc__gpu_call *c, char *why, size_t n) {    \
    static const launch_fn k[3] = MXC__BC_ROW(F);                     \
    return run(k, c, why, n);                                         \
  }
MXC__BC_RUN(mxc__cuda_broadcast_add, Basic<MXC__BC_ADD>)
MXC__BC_RUN(mxc__cuda_broadcast_sub, Basic<MXC__BC_SUB>)
MXC__BC_RUN(mxc__cuda_broadcast_mul, Basic<MXC__BC_MUL>)
MXC__BC_RUN(mxc__cuda_broadcast_div, Basic<MXC__BC_DIV>)
#define MXC__BC_MORE(name, stem) \
  MXC__BC_RUN(mxc__cuda_broadcast_##name, mxc_bin::B_##name)
MXC__CUDA_SAME_FWD(MXC__BC_MORE)
