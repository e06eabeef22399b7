// Cast between the floating dtypes on the GPU (cast.h): one grid-stride
// kernel per (source, target) pair, instantiated from one template over
// half_hd.h's mxc__hd_cast_elem, the conversion the host test
// (tests/gpu:test_cuda_bcast_plan) compares with the CPU's Cast. Results
// are the CPU's bit for bit (NaNs: any NaN, the device's own NaN rules).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cast.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"

namespace {

// x and out never alias (the output's dtype may differ; Cast declares no
// in-place pair), but an in-place call of one dtype would still be
// element-wise safe: each element is read before it is written.
template <int SRC, int DST>
__global__ void cast_kernel(const typename MxcCastT<SRC>::T *x,
                            typename MxcCastT<DST>::T *out, long long n,
                            int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = mxc__hd_cast_elem<SRC, DST>(x[i], add ? out[i] : 0, add);
  }
}

typedef void (*launch_fn)(const void *, void *, long long, int);

template <int SRC, int DST>
void launch(const void *x, void *out, long long n, int add) {
  cast_kernel<SRC, DST><<<MXC__CUDA_GRID(n)>>>(
      (const typename MxcCastT<SRC>::T *)x, (typename MxcCastT<DST>::T *)out,
      n, add);
}

// Indexed [source slot][target slot] (half_types.h's mxc__cast_slot).
#define MXC__CAST_ROW(src)                                               \
  {launch<src, MXC_DTYPE_FLOAT32>, launch<src, MXC_DTYPE_FLOAT16>,       \
   launch<src, MXC_DTYPE_BFLOAT16>, launch<src, MXC_DTYPE_FLOAT64>}
const launch_fn k_launch[4][4] = {
    MXC__CAST_ROW(MXC_DTYPE_FLOAT32), MXC__CAST_ROW(MXC_DTYPE_FLOAT16),
    MXC__CAST_ROW(MXC_DTYPE_BFLOAT16), MXC__CAST_ROW(MXC_DTYPE_FLOAT64)};
#undef MXC__CAST_ROW

}  // namespace

extern "C" int mxc__cuda_cast(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  const mxc__gpu_array &x = c->in[0], &o = c->out[0];
  int s = mxc__cast_slot(x.dtype), d = mxc__cast_slot(o.dtype);
  if (s < 0 || d < 0) {
    snprintf(why, why_len,
             "Cast from dtype %d to %d: the GPU kernel converts between "
             "float32, float64, float16 and bfloat16",
             x.dtype, o.dtype);
    return MXC_ERR_DTYPE;
  }
  if (x.size != o.size) {
    snprintf(why, why_len, "Cast: %lld input elements, %lld output elements",
             (long long)x.size, (long long)o.size);
    return MXC_ERR_SHAPE;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || o.size == 0) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  k_launch[s][d](x.ptr, o.ptr, o.size, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("Cast kernel", why, why_len);
}
