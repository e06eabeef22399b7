// Training-step kernels of the CUDA plug-in (train.h): the optimizer
// updates and Activation, each one grid-stride kernel over the
// per-element functions of train_plan.h, which the host tests run against
// the CPU operators. Compiled with -fmad=false (BUILD): no contraction
// into FMA, so each operation rounds as on the CPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/train.h"
#include "backends/cuda/train_plan.h"
#include "backends/cuda/cuda_rt.h"

namespace {

// Weight and output may alias (in place): no __restrict__.
__global__ void opt_kernel(mxc__opt_plan p, const float *w, const float *g,
                           float *s0, float *s1, float *out, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    mxc__opt_elem(&p, w, g, s0, s1, out, i);
  }
}

__global__ void act_fwd_kernel(int t, int add, const float *x, float *y,
                               long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = mxc__act_fwd(t, x[i]);
    y[i] = add ? y[i] + v : v;
  }
}

__global__ void act_bwd_kernel(int t, int add, const float *g,
                               const float *x, const float *y, float *dx,
                               long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = mxc__act_bwd(t, g[i], x[i], y[i]);
    dx[i] = add ? dx[i] + v : v;
  }
}

// ga or gb NULL: that output's write mode is NULL.
template <int OP>
__global__ void bin_grad_kernel(const float *og, const float *a,
                                const float *b, float *ga, float *gb,
                                long long n, int add_a, int add_b) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float g = og[i], x = a[i], y = b[i];
    if (ga) {
      float v = mxc__bin_grad_a(OP, g, x, y);
      ga[i] = add_a ? ga[i] + v : v;
    }
    if (gb) {
      float v = mxc__bin_grad_b(OP, g, x, y);
      gb[i] = add_b ? gb[i] + v : v;
    }
  }
}

// Every array of the call holds the output's element count (the
// operators' shape inference made them one shape).
int check_sizes(const mxc__gpu_call *c, char *why, size_t why_len) {
  for (int i = 0; i < c->n_in; ++i) {
    if (c->in[i].size != c->out[0].size) {
      snprintf(why, why_len,
               "input %d has %lld elements, the output %lld: expected one "
               "shape",
               i, (long long)c->in[i].size, (long long)c->out[0].size);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

int run_opt(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_sizes(c, why, why_len);
  // REQ_NULL skips the whole update, states included, as on the CPU.
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  mxc__opt_plan p;
  mxc__opt_plan_make(kind, (const mxc__opt_param *)c->param, c->req[0], &p);
  float *s0 = c->n_in > 2 ? (float *)c->in[2].ptr : nullptr;
  float *s1 = c->n_in > 3 ? (float *)c->in[3].ptr : nullptr;
  long long n = c->out[0].size;
  opt_kernel<<<MXC__CUDA_GRID(n)>>>(
      p, (const float *)c->in[0].ptr, (const float *)c->in[1].ptr, s0, s1,
      (float *)c->out[0].ptr, n);
  return mxc__cuda_finish("optimizer kernel", why, why_len);
}

// Every input and both outputs hold n elements.
int check_bin_grad(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_sizes(c, why, why_len);
  if (rc == MXC_OK && c->out[1].size != c->out[0].size) {
    snprintf(why, why_len, "the outputs have %lld and %lld elements: "
             "expected one shape", (long long)c->out[0].size,
             (long long)c->out[1].size);
    rc = MXC_ERR_SHAPE;
  }
  return rc;
}

template <int OP>
int run_bin_grad(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_bin_grad(c, why, why_len);
  bool none = c->req[0] == MXC__GPU_REQ_NULL && c->req[1] == MXC__GPU_REQ_NULL;
  if (rc != MXC_OK || none || c->out[0].size == 0) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  float *ga = c->req[0] == MXC__GPU_REQ_NULL ? nullptr : (float *)c->out[0].ptr;
  float *gb = c->req[1] == MXC__GPU_REQ_NULL ? nullptr : (float *)c->out[1].ptr;
  long long n = c->out[0].size;
  bin_grad_kernel<OP><<<MXC__CUDA_GRID(n)>>>(
      (const float *)c->in[0].ptr, (const float *)c->in[1].ptr,
      (const float *)c->in[2].ptr, ga, gb, n,
      c->req[0] == MXC__GPU_REQ_ADD, c->req[1] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("element-wise gradient kernel", why, why_len);
}

int act_type(const mxc__gpu_call *c) {
  return ((const mxc__act_param *)c->param)->act_type;
}

}  // namespace

extern "C" int mxc__cuda_sgd_update(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  return run_opt(MXC__OPT_SGD, c, why, why_len);
}

extern "C" int mxc__cuda_sgd_mom_update(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  return run_opt(MXC__OPT_SGD_MOM, c, why, why_len);
}

extern "C" int mxc__cuda_adam_update(const mxc__gpu_call *c, char *why,
                                     size_t why_len) {
  return run_opt(MXC__OPT_ADAM, c, why, why_len);
}

extern "C" int mxc__cuda_activation(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  int rc = check_sizes(c, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  long long n = c->out[0].size;
  act_fwd_kernel<<<MXC__CUDA_GRID(n)>>>(
      act_type(c), c->req[0] == MXC__GPU_REQ_ADD, (const float *)c->in[0].ptr,
      (float *)c->out[0].ptr, n);
  return mxc__cuda_finish("Activation kernel", why, why_len);
}

// Inputs (ograd, data, output), as the CPU's _backward_Activation.
extern "C" int mxc__cuda_activation_bwd(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  int rc = check_sizes(c, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  long long n = c->out[0].size;
  act_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(
      act_type(c), c->req[0] == MXC__GPU_REQ_ADD, (const float *)c->in[0].ptr,
      (const float *)c->in[1].ptr, (const float *)c->in[2].ptr,
      (float *)c->out[0].ptr, n);
  return mxc__cuda_finish("Activation gradient kernel", why, why_len);
}

extern "C" int mxc__cuda_backward_add(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_bin_grad<MXC__BG_ADD>(c, why, n);
}
extern "C" int mxc__cuda_backward_sub(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_bin_grad<MXC__BG_SUB>(c, why, n);
}
extern "C" int mxc__cuda_backward_mul(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_bin_grad<MXC__BG_MUL>(c, why, n);
}
extern "C" int mxc__cuda_backward_div(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_bin_grad<MXC__BG_DIV>(c, why, n);
}
