// The unary math operators and their gradients on the GPU (unary.h): the
// per-element expressions come from ops/elemwise/unary_ops.h, the list
// the CPU's kernels (ops/elemwise/unary.c) expand too, through
// unary_hd.h's element functions (host-tested), so both devices compute
// one text. -fmad=false (nvcc.bzl): no FMA contraction, as the CPU's code.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/unary.h"
#include "backends/cuda/unary_hd.h"

namespace {

using namespace mxc_unary;

// x and out may alias (in place): no __restrict__.
template <class U, int DT>
__global__ void unary_fwd(const typename MxcElem<DT>::T *x,
                          typename MxcElem<DT>::T *out, long long n,
                          int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = fwd_elem<U, DT>(x[i], out[i], add);
  }
}

template <class U, int DT>
__global__ void unary_bwd(const typename MxcElem<DT>::T *og,
                          const typename MxcElem<DT>::T *x,
                          const typename MxcElem<DT>::T *y,
                          typename MxcElem<DT>::T *out, long long n,
                          int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = bwd_elem<U, DT>(og[i], x[i], y[i], out[i], add);
  }
}

// Every input as long as the output (the operators' shapes are equal).
int check_call(const mxc__gpu_call *c, int n_in, const char *op, char *why,
               size_t why_len) {
  if (c->n_in != n_in || c->n_out != 1) {
    snprintf(why, why_len, "%s: %d inputs and %d outputs; expected %d and 1",
             op, c->n_in, c->n_out, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < n_in; ++i) {
    if (c->in[i].size != c->out[0].size || c->in[i].dtype != c->out[0].dtype) {
      snprintf(why, why_len,
               "%s: input %d has %lld elements of dtype %d; expected the "
               "output's %lld of dtype %d",
               op, i, (long long)c->in[i].size, c->in[i].dtype,
               (long long)c->out[0].size, c->out[0].dtype);
      return MXC_ERR_SHAPE;
    }
  }
  if (mxc__half_slot(c->out[0].dtype) < 0) {
    snprintf(why, why_len,
             "%s: dtype %d; the GPU kernel takes float32, float16 and "
             "bfloat16",
             op, c->out[0].dtype);
    return MXC_ERR_DTYPE;
  }
  return MXC_OK;
}

template <class U, int DT>
void launch_fwd(const mxc__gpu_call *c) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  unary_fwd<U, DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (T *)c->out[0].ptr, n,
      c->req[0] == MXC__GPU_REQ_ADD);
}

template <class U, int DT>
void launch_bwd(const mxc__gpu_call *c) {
  typedef typename MxcElem<DT>::T T;
  long long n = (long long)c->out[0].size;
  unary_bwd<U, DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)c->in[0].ptr, (const T *)c->in[1].ptr,
      (const T *)c->in[2].ptr, (T *)c->out[0].ptr, n,
      c->req[0] == MXC__GPU_REQ_ADD);
}

typedef void (*launch_fn)(const mxc__gpu_call *);

// Checks c, launches the slot's kernel on the call's stream, finishes.
int run(const mxc__gpu_call *c, int n_in, const char *op,
        const launch_fn (&by_slot)[3], char *why, size_t why_len) {
  int rc = check_call(c, n_in, op, why, why_len);
  if (rc != MXC_OK) return rc;
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  by_slot[mxc__half_slot(c->out[0].dtype)](c);
  return mxc__cuda_finish(op, why, why_len);
}

}  // namespace

#define MXC__UNARY_RUN_FWD(name)                                         \
  extern "C" int mxc__cuda_unary_##name(const mxc__gpu_call *c, char *why, \
                                        size_t why_len) {                \
    static const launch_fn k[3] = {                                      \
        launch_fwd<U_##name, MXC_DTYPE_FLOAT32>,                         \
        launch_fwd<U_##name, MXC_DTYPE_FLOAT16>,                         \
        launch_fwd<U_##name, MXC_DTYPE_BFLOAT16>};                       \
    return run(c, 1, #name, k, why, why_len);                            \
  }
#define MXC__UNARY_RUN_BWD(name)                                         \
  extern "C" int mxc__cuda_unary_bwd_##name(const mxc__gpu_call *c,      \
                                            char *why, size_t why_len) { \
    static const launch_fn k[3] = {                                      \
        launch_bwd<U_##name, MXC_DTYPE_FLOAT32>,                         \
        launch_bwd<U_##name, MXC_DTYPE_FLOAT16>,                         \
        launch_bwd<U_##name, MXC_DTYPE_BFLOAT16>};                       \
    return run(c, 3, "_backward_" #name, k, why, why_len);               \
  }
MXC__CUDA_UNARY_FWD(MXC__UNARY_RUN_FWD)
MXC__CUDA_UNARY_BWD(MXC__UNARY_RUN_BWD)
