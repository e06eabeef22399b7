// UpSampling and its gradient (up.h): one thread per output element
// (forward), per input pixel (the gradients of data) or per weight
// element (bilinear's weight gradient), each running up_plan.h's element
// function, which the host test runs against the CPU. Nearest inputs are
// written by one launch each, in order, as the CPU writes them.
// -fmad=false (BUILD): products and sums round as on the CPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/up.h"
#include "backends/cuda/up_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

__global__ void near_fwd_kernel(mxc__up_part q, const float *x, float *y,
                                long long n) {
  GRID_LOOP(n) mxc__up_near_fwd(&q, x, y, i);
}

__global__ void near_bwd_kernel(mxc__up_part q, const float *g, float *dx,
                                long long n) {
  GRID_LOOP(n) mxc__up_near_bwd(&q, g, dx, i);
}

__global__ void bil_fwd_kernel(mxc__up_bil b, const float *x, const float *w,
                               float *y, long long n) {
  GRID_LOOP(n) mxc__up_bil_fwd(&b, x, w, y, i);
}

__global__ void bil_dx_kernel(mxc__up_bil b, const float *g, const float *w,
                              float *dx, long long n) {
  GRID_LOOP(n) mxc__up_bil_dx(&b, g, w, dx, i);
}

__global__ void bil_dw_kernel(mxc__up_bil b, const float *x, const float *g,
                              float *dw, long long n) {
  GRID_LOOP(n) mxc__up_bil_dw(&b, x, g, dw, i);
}

const float *in_f(const mxc__gpu_call *c, int i) {
  return (const float *)c->in[i].ptr;
}

// Every array 4-D but bilinear's weight, which is (C, 1, k, k) too.
int check(const mxc__gpu_call *c, char *why, size_t why_len) {
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    const mxc__gpu_array *a = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
    if (a->ndim != 4) {
      snprintf(why, why_len,
               "array %d has %d dimensions; expected 4 "
               "(N, C, H, W)",
               i, a->ndim);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

int near_forward(const mxc__gpu_call *c, const mxc__up_param *p) {
  int64_t c0 = 0;
  for (int i = 0; i < c->n_in; ++i) {
    int sum = p->multi_input_mode == MXC__UP_SUM;
    int add = (sum && i > 0) || c->req[0] == MXC__GPU_REQ_ADD;
    mxc__up_part q =
        mxc__up_part_make(&c->in[i], &c->out[0], sum ? 0 : c0, add);
    long long n = q.n * q.c * q.oh * q.ow;
    if (n > 0)
      near_fwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, i),
                                             (float *)c->out[0].ptr, n);
    c0 += q.c;
  }
  return MXC_OK;
}

}  // namespace

extern "C" int mxc__cuda_upsampling(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  int rc = check(c, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  const mxc__up_param *p = (const mxc__up_param *)c->param;
  if (p->sample_type == MXC__UP_BILINEAR) {
    mxc__up_bil b =
        mxc__up_bil_make(p, &c->in[0], c->req[0] == MXC__GPU_REQ_ADD);
    long long n = c->out[0].size;
    bil_fwd_kernel<<<MXC__CUDA_GRID(n)>>>(b, in_f(c, 0), in_f(c, 1),
                                          (float *)c->out[0].ptr, n);
  } else {
    near_forward(c, p);
  }
  return mxc__cuda_finish("UpSampling kernel", why, why_len);
}

// Inputs (ograd, the forward's inputs); outputs their gradients.
extern "C" int mxc__cuda_upsampling_bwd(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  int rc = check(c, why, why_len);
  if (rc != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  const mxc__up_param *p = (const mxc__up_param *)c->param;
  const float *g = in_f(c, 0);
  if (p->sample_type == MXC__UP_BILINEAR) {
    for (int k = 0; k < 2; ++k) {
      long long n = c->out[k].size;
      if (c->req[k] == MXC__GPU_REQ_NULL || n == 0) continue;
      mxc__up_bil b =
          mxc__up_bil_make(p, &c->in[1], c->req[k] == MXC__GPU_REQ_ADD);
      float *o = (float *)c->out[k].ptr;
      if (k == 0) bil_dx_kernel<<<MXC__CUDA_GRID(n)>>>(b, g, in_f(c, 2), o, n);
      if (k == 1) bil_dw_kernel<<<MXC__CUDA_GRID(n)>>>(b, in_f(c, 1), g, o, n);
    }
    return mxc__cuda_finish("UpSampling gradient kernel", why, why_len);
  }
  int64_t c0 = 0;
  for (int k = 0; k < c->n_out; ++k) {
    int sum = p->multi_input_mode == MXC__UP_SUM;
    mxc__up_part q = mxc__up_part_make(&c->out[k], &c->in[0], sum ? 0 : c0,
                                       c->req[k] == MXC__GPU_REQ_ADD);
    long long n = c->out[k].size;
    if (c->req[k] != MXC__GPU_REQ_NULL && n > 0) {
      near_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, g, (float *)c->out[k].ptr, n);
    }
    c0 += q.c;
  }
  return mxc__cuda_finish("UpSampling gradient kernel", why, why_len);
}
