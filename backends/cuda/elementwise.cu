// Element-wise kernels of the CUDA plug-in: one grid-stride kernel per
// operator and dtype (float32, float16, bfloat16), instantiated from one
// template. Compiled with -fmad=false (BUILD) so that `out + f(x)` in add
// mode is two roundings, as on the CPU: the conformance test compares
// bitwise.
//
// Half types compute in float and round once to the dtype with
// half_hd.h, which rounds and treats NaN as core/base/half.h does. The
// binary operators and _copy's add mode compute in float on the CPU too
// (ops/binary/rows.c); the unary ones go through double there
// (ops/elemwise/unary.c), which for these five gives the same results:
// relu, negative and abs are exact, the square of a half value is exact
// in float (at most 22 significant bits; a bfloat16 square beyond float's
// range overflows or underflows in both ways alike, rounded once), and
// adding a float to it rounds once either way (double's extra rounding
// cannot make a float tie from two operands of at most 24 bits).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

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

// x, y and out may alias (in-place calls): no __restrict__. _copy in
// write mode copies the stored bits (the CPU's memcpy: NaN payloads kept).
template <int K, int DT>
__global__ void elementwise(const typename MxcElem<DT>::T *x,
                            const typename MxcElem<DT>::T *y,
                            typename MxcElem<DT>::T *out, long long n,
                            int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (K == MXC__CUDA_COPY && !add) {
      out[i] = x[i];
      continue;
    }
    float v = apply<K>(E::load(x[i]), y ? E::load(y[i]) : 0.f);
    out[i] = E::store(add ? E::load(out[i]) + v : v);
  }
}

typedef void (*launch_fn)(const void *, const void *, void *, long long,
                          int);

template <int K, int DT>
void launch(const void *x, const void *y, void *out, long long n, int add) {
  typedef typename MxcElem<DT>::T T;
  elementwise<K, DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)x, (const T *)y, (T *)out, n, add);
}

// Indexed [kind][half_types.h slot].
const launch_fn k_launch[][3] = {
#define MXC__CUDA_LAUNCH(kind, name, n_in)               \
  {launch<MXC__CUDA_##kind, MXC_DTYPE_FLOAT32>,          \
   launch<MXC__CUDA_##kind, MXC_DTYPE_FLOAT16>,          \
   launch<MXC__CUDA_##kind, MXC_DTYPE_BFLOAT16>},
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
  int slot = mxc__half_slot(o.dtype);
  if (slot < 0) {
    snprintf(why, why_len,
             "dtype %d: the element-wise kernels take float32, float16 and "
             "bfloat16",
             o.dtype);
    return MXC_ERR_DTYPE;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  const void *y = c->n_in > 1 ? c->in[1].ptr : nullptr;
  k_launch[kind][slot](c->in[0].ptr, y, o.ptr, o.size,
                       c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("element-wise kernel", why, why_len);
}
