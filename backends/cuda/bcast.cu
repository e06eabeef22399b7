// Broadcast binary kernels of the CUDA plug-in (bcast.h): one grid-stride
// kernel, each thread mapping its output index to the operands' offsets
// with the host-made plan (bcast_plan.h, host-tested against the CPU).
// -fmad=false (BUILD): one float operation per element, rounded as on the
// CPU, so the results are bitwise the CPU's.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/bcast.h"
#include "backends/cuda/bcast_plan.h"
#include "backends/cuda/cuda_rt.h"

namespace {

// Operands and output may alias (in place): no __restrict__.
template <int OP>
__global__ void bcast_kernel(mxc__bcast_plan p, const float *a,
                             const float *b, float *out, long long n,
                             int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p, i, &ia, &ib);
    float v = mxc__bcast_apply(OP, a[ia], b[ib]);
    out[i] = add ? out[i] + v : v;
  }
}

typedef void (*launch_fn)(const mxc__bcast_plan &, const float *,
                          const float *, float *, long long, int);

template <int OP>
void launch(const mxc__bcast_plan &p, const float *a, const float *b,
            float *out, long long n, int add) {
  bcast_kernel<OP><<<MXC__CUDA_GRID(n)>>>(p, a, b, out, n, add);
}

const launch_fn k_launch[] = {launch<MXC__BC_ADD>, launch<MXC__BC_SUB>,
                              launch<MXC__BC_MUL>, launch<MXC__BC_DIV>};

int run(int op, const mxc__gpu_call *c, char *why, size_t why_len) {
  const mxc__gpu_array &o = c->out[0];
  mxc__bcast_plan p;
  int rc = mxc__bcast_plan_make(&c->in[0], &c->in[1], &o, &p, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || o.size == 0) {
    return rc;
  }
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  k_launch[op](p, (const float *)c->in[0].ptr, (const float *)c->in[1].ptr,
               (float *)o.ptr, o.size, c->req[0] == MXC__GPU_REQ_ADD);
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
