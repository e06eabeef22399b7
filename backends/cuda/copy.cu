// transpose, swapaxes and flip on the GPU (copy.h): one gather kernel over
// copy_plan.h's plan (host-tested against the CPU operators), one thread
// per output element on a grid-stride loop.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/copy.h"
#include "backends/cuda/copy_plan.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

namespace {

// out[i] = src[plan's offset of i]: the stored bits (write), or old +
// src in float rounded once (add). The plan travels by value.
template <int DT>
__global__ void gather(const typename MxcElem<DT>::T *src,
                       typename MxcElem<DT>::T *out, mxc__copy_plan p,
                       long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    typename E::T v = src[mxc__copy_src(&p, i)];
    out[i] = add ? E::store(E::load(out[i]) + E::load(v)) : v;
  }
}

template <int DT>
void launch(const mxc__gpu_call *c, const mxc__copy_plan &p) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  gather<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                     (T *)c->out[0].ptr, p, n,
                                     c->req[0] == MXC__GPU_REQ_ADD);
}

int run(int kind, const char *op, const mxc__gpu_call *c, char *why,
        size_t why_len) {
  int n_in = kind == MXC__CP_BROADCAST ? c->n_in : 1;  // broadcast_like: 2
  if (c->n_in != n_in || n_in < 1 || c->n_out != 1 ||
      c->in[0].dtype != c->out[0].dtype || mxc__half_slot(c->in[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: one input and one output of one dtype (float32, float16 "
             "or bfloat16) expected",
             op);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_make(kind, c->param, &c->in[0], &c->out[0], &p,
                               what, sizeof what);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "%s: %s", op, what);
    return rc;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16: launch<MXC_DTYPE_FLOAT16>(c, p); break;
    case MXC__HALF_SLOT_BF16: launch<MXC_DTYPE_BFLOAT16>(c, p); break;
    default: launch<MXC_DTYPE_FLOAT32>(c, p); break;
  }
  return mxc__cuda_finish(op, why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_transpose(const mxc__gpu_call *c, char *why,
                                   size_t why_len) {
  return run(MXC__CP_TRANSPOSE, "transpose", c, why, why_len);
}

extern "C" int mxc__cuda_swapaxes(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  return run(MXC__CP_SWAPAXES, "swapaxes", c, why, why_len);
}

extern "C" int mxc__cuda_flip(const mxc__gpu_call *c, char *why,
                              size_t why_len) {
  return run(MXC__CP_FLIP, "flip", c, why, why_len);
}

extern "C" int mxc__cuda_broadcast_copy(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  return run(MXC__CP_BROADCAST, "broadcast", c, why, why_len);
}

extern "C" int mxc__cuda_block_grad(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  return mxc__cuda_elementwise(MXC__CUDA_COPY, c, why, why_len);
}
