// Element-wise kernels of the CUDA plug-in: one grid-stride kernel per
// operator and dtype (float32, float16, bfloat16), instantiated from one
// template. Compiled with -fmad=false (BUILD) so that `out + f(x)` in add
// mode is two roundings, as on the CPU: the conformance test compares
// bitwise.
//
// Half types compute as the CPU's kernels do (docs/dtypes.md): the unary
// operators in double (ops/elemwise/unary.c goes through mxc__blob_get),
// the binary ones and _copy's add mode in float (ops/binary/rows.c), then
// one rounding to the dtype by half_hd.h, which rounds and treats NaN as
// core/base/half.h does.
#include <cuda_runtime.h>

#include <cstdio>
#include <type_traits>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

namespace {

constexpr int k_n_in[] = {
#define MXC__CUDA_N_IN(kind, name, n_in) n_in,
    MXC__CUDA_ELEMENTWISE(MXC__CUDA_N_IN)
#undef MXC__CUDA_N_IN
};

// The type an operator computes in for storage dtype DT.
template <int K, int DT>
struct Compute {
  typedef typename std::conditional<DT != MXC_DTYPE_FLOAT32 && k_n_in[K] == 1 &&
                                        K != MXC__CUDA_COPY,
                                    double, float>::type type;
};

__device__ __forceinline__ float abs_of(float x) { return fabsf(x); }
__device__ __forceinline__ double abs_of(double x) { return fabs(x); }

template <int K, typename C>
__device__ __forceinline__ C apply(C x, C y) {
  switch (K) {
    case MXC__CUDA_RELU: return x > C(0) || x != x ? x : C(0);
    case MXC__CUDA_NEGATIVE: return -x;
    case MXC__CUDA_ABS: return abs_of(x);
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
  typedef typename Compute<K, DT>::type C;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (K == MXC__CUDA_COPY && !add) {
      out[i] = x[i];
      continue;
    }
    C v = apply<K, C>((C)E::load(x[i]), y ? (C)E::load(y[i]) : C(0));
    out[i] = E::store((float)(add ? (C)E::load(out[i]) + v : v));
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
