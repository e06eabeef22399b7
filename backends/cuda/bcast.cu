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

namespace {

// Operands and output may alias (in place): no __restrict__. Half types
// compute in float and round once (half_hd.h), as ops/binary/rows.c.
template <int OP, int DT>
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
    float v = mxc__bcast_apply(OP, E::load(a[ia]), E::load(b[ib]));
    out[i] = E::store(add ? E::load(out[i]) + v : v);
  }
}

typedef void (*launch_fn)(const mxc__bcast_plan &, const void *,
                          const void *, void *, long long, int);

template <int OP, int DT>
void launch(const mxc__bcast_plan &p, const void *a, const void *b,
            void *out, long long n, int add) {
  typedef typename MxcElem<DT>::T T;
  bcast_kernel<OP, DT><<<MXC__CUDA_GRID(n)>>>(p, (const T *)a, (const T *)b,
                                              (T *)out, n, add);
}

// Indexed [operator][half_types.h slot].
#define MXC__BC_ROW(op)                                          \
  {launch<op, MXC_DTYPE_FLOAT32>, launch<op, MXC_DTYPE_FLOAT16>, \
   launch<op, MXC_DTYPE_BFLOAT16>}
const launch_fn k_launch[][3] = {MXC__BC_ROW(MXC__BC_ADD),
                                 MXC__BC_ROW(MXC__BC_SUB),
                                 MXC__BC_ROW(MXC__BC_MUL),
                                 MXC__BC_ROW(MXC__BC_DIV)};
#undef MXC__BC_ROW

int run(int op, const mxc__gpu_call *c, char *why, size_t why_len) {
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
  k_launch[op][slot](p, c->in[0].ptr, c->in[1].ptr, o.ptr, o.size,
                     c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("broadcast kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_broadcast_add(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run(MXC__BC_ADD, c, why, n);
}
extern "C" int mxc__cuda_broadcast_sub(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run(MXC__BC_SUB, c, why, n);
}
extern "C" int mxc__cuda_broadcast_mul(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run(MXC__BC_MUL, c, why, n);
}
extern "C" int mxc__cuda_broadcast_div(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run(MXC__BC_DIV, c, why, n);
}
