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

// dst[plan's offset of i] = src[i] (write) or += (add): the slices'
// gradients; the box's elements are distinct, so no two threads write
// one element.
template <int DT>
__global__ void scatter(const typename MxcElem<DT>::T *src,
                        typename MxcElem<DT>::T *dst, mxc__copy_plan p,
                        long long n, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t o = mxc__copy_src(&p, i);
    dst[o] = add ? E::store(E::load(dst[o]) + E::load(src[i])) : src[i];
  }
}

template <int DT>
void launch_scatter(const mxc__gpu_call *c, const mxc__copy_plan &p) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->in[0].size;
  scatter<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                      (T *)c->out[0].ptr, p, n,
                                      c->req[0] == MXC__GPU_REQ_ADD);
}

template <int DT>
void launch(const mxc__gpu_call *c, const mxc__copy_plan &p) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  gather<DT><<<MXC__CUDA_GRID(n)>>>((const T *)c->in[0].ptr,
                                     (T *)c->out[0].ptr, p, n,
                                     c->req[0] == MXC__GPU_REQ_ADD);
}

void launch_slot(const mxc__gpu_call *c, const mxc__copy_plan &p, bool bwd) {
  switch (mxc__half_slot(c->out[0].dtype)) {
    case MXC__HALF_SLOT_F16:
      bwd ? launch_scatter<MXC_DTYPE_FLOAT16>(c, p)
          : launch<MXC_DTYPE_FLOAT16>(c, p);
      break;
    case MXC__HALF_SLOT_BF16:
      bwd ? launch_scatter<MXC_DTYPE_BFLOAT16>(c, p)
          : launch<MXC_DTYPE_BFLOAT16>(c, p);
      break;
    default:
      bwd ? launch_scatter<MXC_DTYPE_FLOAT32>(c, p)
          : launch<MXC_DTYPE_FLOAT32>(c, p);
      break;
  }
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
  launch_slot(c, p, false);
  return mxc__cuda_finish(op, why, why_len);
}

// slice, slice_axis, slice_like (data[, shape_like] -> box) and their
// gradients ((ograd, data) -> data-shaped: cleared unless add, then the
// box scattered in).
int run_slice(int kind, const char *op, bool bwd, const mxc__gpu_call *c,
              char *why, size_t why_len) {
  int n_in = bwd || kind == MXC__CP_SLICE_LIKE ? 2 : 1;
  if (c->n_in != n_in || c->n_out != 1 ||
      c->in[0].dtype != c->out[0].dtype || mxc__half_slot(c->in[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: %d inputs and one output of one dtype (float32, float16 "
             "or bfloat16) expected",
             op, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array &data = bwd ? c->out[0] : c->in[0];
  const mxc__gpu_array &box = bwd ? c->in[0] : c->out[0];
  mxc__copy_plan p;
  char what[200] = "";
  int rc = mxc__copy_plan_slice(kind, c->param, &data, &box, &p, what,
                                sizeof what);
  if (rc != MXC_OK) {
    snprintf(why, why_len, "%s: %s", op, what);
    return rc;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  if (bwd && c->req[0] != MXC__GPU_REQ_ADD) {
    size_t bytes = (size_t)c->out[0].size *
                   (c->out[0].dtype == MXC_DTYPE_FLOAT32 ? 4 : 2);
    cudaError_t e = cudaMemsetAsync(c->out[0].ptr, 0, bytes,
                                    mxc__cuda_stream());
    if (e != cudaSuccess) return mxc__cuda_rt_fail(why, why_len, op, e);
  }
  if (box.size > 0) launch_slot(c, p, bwd);
  return mxc__cuda_finish(op, why, why_len);
}

}  // namespace

#define MXC__SLICE_RUN(fn, kind, op, bwd)                                  \
  extern "C" int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return run_slice(kind, op, bwd, c, why, why_len);                    \
  }
MXC__SLICE_RUN(mxc__cuda_slice, MXC__CP_SLICE, "slice", false)
MXC__SLICE_RUN(mxc__cuda_slice_bwd, MXC__CP_SLICE, "_backward_slice", true)
MXC__SLICE_RUN(mxc__cuda_slice_axis, MXC__CP_SLICE_AXIS, "slice_axis", false)
MXC__SLICE_RUN(mxc__cuda_slice_axis_bwd, MXC__CP_SLICE_AXIS,
               "_backward_slice_axis", true)
MXC__SLICE_RUN(mxc__cuda_slice_like, MXC__CP_SLICE_LIKE, "slice_like", false)
MXC__SLICE_RUN(mxc__cuda_slice_like_bwd, MXC__CP_SLICE_LIKE,
               "_backward_slice_like", true)

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
