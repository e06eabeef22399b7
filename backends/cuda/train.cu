// Training-step kernels of the CUDA plug-in (train.h): the optimizer
// updates and Activation, each one grid-stride kernel over the
// per-element functions of train_plan.h, which the host tests run against
// the CPU operators. Compiled with -fmad=false (BUILD): no contraction
// into FMA, so each operation rounds as on the CPU.
//
// Activation, its gradient and the binary gradients also take float16 and
// bfloat16 (one dtype per call): loaded widened to float, the same float
// functions, one rounding (half_hd.h), as the CPU's half path (widened to
// float32, the float32 kernel, rounded back once; ops/binary/rows.c).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/train.h"
#include "backends/cuda/train_plan.h"
#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"

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

template <int DT>
__global__ void act_fwd_kernel(int t, int add,
                               const typename MxcElem<DT>::T *x,
                               typename MxcElem<DT>::T *y, long long n) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = mxc__act_fwd(t, E::load(x[i]));
    y[i] = E::store(add ? E::load(y[i]) + v : v);
  }
}

template <int DT>
__global__ void act_bwd_kernel(int t, int add,
                               const typename MxcElem<DT>::T *g,
                               const typename MxcElem<DT>::T *x,
                               const typename MxcElem<DT>::T *y,
                               typename MxcElem<DT>::T *dx, long long n) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float v = mxc__act_bwd(t, E::load(g[i]), E::load(x[i]), E::load(y[i]));
    dx[i] = E::store(add ? E::load(dx[i]) + v : v);
  }
}

// ga or gb NULL: that output's write mode is NULL.
template <int OP, int DT>
__global__ void bin_grad_kernel(const typename MxcElem<DT>::T *og,
                                const typename MxcElem<DT>::T *a,
                                const typename MxcElem<DT>::T *b,
                                typename MxcElem<DT>::T *ga,
                                typename MxcElem<DT>::T *gb, long long n,
                                int add_a, int add_b) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    float g = E::load(og[i]), x = E::load(a[i]), y = E::load(b[i]);
    if (ga) {
      float v = mxc__bin_grad_a(OP, g, x, y);
      ga[i] = E::store(add_a ? E::load(ga[i]) + v : v);
    }
    if (gb) {
      float v = mxc__bin_grad_b(OP, g, x, y);
      gb[i] = E::store(add_b ? E::load(gb[i]) + v : v);
    }
  }
}

// The launches per dtype (half_types.h's slots): arrays as void *.
template <int DT>
void act_fwd(int t, int add, const void *x, void *y, long long n) {
  typedef typename MxcElem<DT>::T T;
  act_fwd_kernel<DT><<<MXC__CUDA_GRID(n)>>>(t, add, (const T *)x, (T *)y, n);
}

template <int DT>
void act_bwd(int t, int add, const void *g, const void *x, const void *y,
             void *dx, long long n) {
  typedef typename MxcElem<DT>::T T;
  act_bwd_kernel<DT><<<MXC__CUDA_GRID(n)>>>(
      t, add, (const T *)g, (const T *)x, (const T *)y, (T *)dx, n);
}

template <int OP, int DT>
void bin_grad(const void *og, const void *a, const void *b, void *ga,
              void *gb, long long n, int add_a, int add_b) {
  typedef typename MxcElem<DT>::T T;
  bin_grad_kernel<OP, DT><<<MXC__CUDA_GRID(n)>>>(
      (const T *)og, (const T *)a, (const T *)b, (T *)ga, (T *)gb, n, add_a,
      add_b);
}

typedef void (*act_fwd_fn)(int, int, const void *, void *, long long);
typedef void (*act_bwd_fn)(int, int, const void *, const void *,
                           const void *, void *, long long);
typedef void (*bin_grad_fn)(const void *, const void *, const void *, void *,
                            void *, long long, int, int);

const act_fwd_fn k_act_fwd[] = {act_fwd<MXC_DTYPE_FLOAT32>,
                                act_fwd<MXC_DTYPE_FLOAT16>,
                                act_fwd<MXC_DTYPE_BFLOAT16>};
const act_bwd_fn k_act_bwd[] = {act_bwd<MXC_DTYPE_FLOAT32>,
                                act_bwd<MXC_DTYPE_FLOAT16>,
                                act_bwd<MXC_DTYPE_BFLOAT16>};

// The call's dtype slot (every array has the output's dtype: the rows'
// supports), or MXC_ERR_DTYPE for a direct call with another.
int slot_of(const mxc__gpu_call *c, int *slot, char *why, size_t why_len) {
  *slot = mxc__half_slot(c->out[0].dtype);
  if (*slot >= 0) return MXC_OK;
  snprintf(why, why_len,
           "dtype %d: these kernels take float32, float16 and bfloat16",
           c->out[0].dtype);
  return MXC_ERR_DTYPE;
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
  static const bin_grad_fn k_fns[] = {bin_grad<OP, MXC_DTYPE_FLOAT32>,
                                      bin_grad<OP, MXC_DTYPE_FLOAT16>,
                                      bin_grad<OP, MXC_DTYPE_BFLOAT16>};
  int rc = check_bin_grad(c, why, why_len), slot = 0;
  bool none = c->req[0] == MXC__GPU_REQ_NULL && c->req[1] == MXC__GPU_REQ_NULL;
  if (rc != MXC_OK || none || c->out[0].size == 0) return rc;
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  void *ga = c->req[0] == MXC__GPU_REQ_NULL ? nullptr : c->out[0].ptr;
  void *gb = c->req[1] == MXC__GPU_REQ_NULL ? nullptr : c->out[1].ptr;
  k_fns[slot](c->in[0].ptr, c->in[1].ptr, c->in[2].ptr, ga, gb,
              c->out[0].size, c->req[0] == MXC__GPU_REQ_ADD,
              c->req[1] == MXC__GPU_REQ_ADD);
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
  int rc = check_sizes(c, why, why_len), slot = 0;
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  k_act_fwd[slot](act_type(c), c->req[0] == MXC__GPU_REQ_ADD, c->in[0].ptr,
                  c->out[0].ptr, c->out[0].size);
  return mxc__cuda_finish("Activation kernel", why, why_len);
}

// Inputs (ograd, data, output), as the CPU's _backward_Activation.
extern "C" int mxc__cuda_activation_bwd(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  int rc = check_sizes(c, why, why_len), slot = 0;
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  k_act_bwd[slot](act_type(c), c->req[0] == MXC__GPU_REQ_ADD, c->in[0].ptr,
                  c->in[1].ptr, c->in[2].ptr, c->out[0].ptr, c->out[0].size);
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
