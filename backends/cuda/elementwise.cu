// Element-wise float32 kernels of the CUDA plug-in: one grid-stride
// kernel per operator, instantiated from a template. Compiled with
// -fmad=false (BUILD) so that `out + f(x)` in add mode is two roundings,
// as on the CPU: the conformance test compares bitwise.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/cuda_rt.h"

namespace {

template <int K>
__device__ __forceinline__ float apply(float x, float y) {
  switch (K) {
    case MXC__CUDA_RELU: return x > 0.f || x != x ? x : 0.f;
    case MXC__CUDA_NEGATIVE: return -x;
    case MXC__CUDA_ABS: return fabsf(x);
    case MXC__CUDA_SQUARE: return x * x;
    case MXC__CUDA_ADD: return x + y;
    case MXC__CUDA_SUB: return x - y;
    case MXC__CUDA_MUL: return x * y;
    case MXC__CUDA_DIV: return x / y;
    default: return x; /* MXC__CUDA_COPY */
  }
}

// x, y and out may alias (in-place calls): no __restrict__.
template <int K>
__global__ void elementwise(const float *x, const float *y, float *out,
                            long long n, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = apply<K>(x[i], y ? y[i] : 0.f);
    out[i] = add ? out[i] + v : v;
  }
}

typedef void (*launch_fn)(const float *, const float *, float *, long long,
                          int);

template <int K>
void launch(const float *x, const float *y, float *out, long long n,
            int add) {
  elementwise<K><<<MXC__CUDA_GRID(n)>>>(x, y, out, n, add);
}

const launch_fn k_launch[] = {
#define MXC__CUDA_LAUNCH(kind, name, n_in) launch<MXC__CUDA_##kind>,
    MXC__CUDA_ELEMENTWISE(MXC__CUDA_LAUNCH)
#undef MXC__CUDA_LAUNCH
};

bool same_shape(const mxc__gpu_array &a, const mxc__gpu_array &b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

}  // namespace

extern "C" int mxc__cuda_elementwise(int kind, const mxc__gpu_call *c,
                                     char *why, size_t why_len) {
  const mxc__gpu_array &o = c->out[0];
  for (int i = 0; i < c->n_in; ++i) {
    if (!same_shape(c->in[i], o)) {
      snprintf(why, why_len,
               "input %d's shape differs from the output's: broadcasting "
               "is not on the GPU yet",
               i);
      return MXC_ERR_UNSUPPORTED;
    }
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || o.size == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  const float *y = c->n_in > 1 ? (const float *)c->in[1].ptr : nullptr;
  k_launch[kind]((const float *)c->in[0].ptr, y, (float *)o.ptr, o.size,
                 c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("element-wise kernel", why, why_len);
}
