// GroupNorm, InstanceNorm, LRN and their gradients (gn.h): one thread
// per group (the statistics, the output, ddata), per channel (dgamma,
// dbeta) or per element (LRN), each running gn_plan.h's function in the CPU's
// order, which the host test runs against the CPU. -fmad=false (BUILD).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/gn.h"
#include "backends/cuda/gn_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

__global__ void fwd_kernel(mxc__gn_plan q, const float *x, const float *gm,
                           const float *bt, float *y, float *mean, float *st) {
  GRID_LOOP(q.groups) mxc__gn_fwd(&q, x, gm, bt, y, mean, st, i);
}

__global__ void dx_kernel(mxc__gn_plan q, const float *og, const float *x,
                          const float *gm, const float *mean, const float *st,
                          float *dx) {
  GRID_LOOP(q.groups) mxc__gn_dx(&q, og, x, gm, mean, st, dx, i);
}

__global__ void dgb_kernel(mxc__gn_plan q, int k, const float *og,
                           const float *x, const float *mean, const float *st,
                           float *out, long long channels) {
  GRID_LOOP(channels) mxc__gn_dgb(&q, k, og, x, mean, st, out, i);
}

__global__ void lrn_kernel(mxc__lrn_plan q, const float *x, float *y, float *nm,
                           long long n) {
  GRID_LOOP(n) mxc__lrn_fwd(&q, x, y, nm, i);
}

__global__ void lrn_bwd_kernel(mxc__lrn_plan q, const float *g, const float *x,
                               const float *y, const float *s, float *dx,
                               long long n) {
  GRID_LOOP(n) mxc__lrn_bwd(&q, g, x, y, s, dx, i);
}

const float *in_f(const mxc__gpu_call *c, int i) {
  return (const float *)c->in[i].ptr;
}
float *out_f(const mxc__gpu_call *c, int i) {
  return i < c->n_out ? (float *)c->out[i].ptr : nullptr;
}

// data (N, C, ...) with at least 3 axes, its group count dividing C.
int check(const mxc__gpu_call *c, int bwd, int n_in, char *why,
          size_t why_len) {
  if (c->n_in != n_in || c->n_out < 1 || c->n_out > 3) {
    snprintf(why, why_len, "%d inputs, %d outputs; expected %d and 1 to 3",
             c->n_in, c->n_out, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (c->in[bwd].ndim < 3) {
    snprintf(why, why_len, "data has %d axes; expected at least 3",
             c->in[bwd].ndim);
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}

template <int INST>
int run_fwd(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check(c, 0, 3, why, why_len);
  if (rc != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  mxc__gn_plan q =
      mxc__gn_plan_make(INST, c->param, &c->in[0], c->req, c->n_out);
  if (q.groups > 0 && q.g > 0) {
    fwd_kernel<<<MXC__CUDA_GRID(q.groups)>>>(q, in_f(c, 0), in_f(c, 1),
                                             in_f(c, 2), out_f(c, 0),
                                             out_f(c, 1), out_f(c, 2));
  }
  return mxc__cuda_finish("GroupNorm kernel", why, why_len);
}

// (ograd, data, gamma, beta, output, mean, std|var) -> (ddata, dgamma,
// dbeta).
template <int INST>
int run_bwd(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check(c, 1, 7, why, why_len);
  if (rc != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  mxc__gn_plan q =
      mxc__gn_plan_make(INST, c->param, &c->in[1], c->req, c->n_out);
  long long channels = c->in[1].dims[1];
  if (q.on[0] && q.groups > 0 && q.g > 0) {
    dx_kernel<<<MXC__CUDA_GRID(q.groups)>>>(q, in_f(c, 0), in_f(c, 1),
                                            in_f(c, 2), in_f(c, 5), in_f(c, 6),
                                            out_f(c, 0));
  }
  for (int k = 1; k < 3; ++k) {
    if (!q.on[k] || channels == 0) continue;
    dgb_kernel<<<MXC__CUDA_GRID(channels)>>>(q, k, in_f(c, 0), in_f(c, 1),
                                             in_f(c, 5), in_f(c, 6),
                                             out_f(c, k), channels);
  }
  return mxc__cuda_finish("GroupNorm gradient kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_group_norm(const mxc__gpu_call *c, char *why,
                                    size_t n) {
  return run_fwd<0>(c, why, n);
}
extern "C" int mxc__cuda_group_norm_bwd(const mxc__gpu_call *c, char *why,
                                        size_t n) {
  return run_bwd<0>(c, why, n);
}
extern "C" int mxc__cuda_instance_norm(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run_fwd<1>(c, why, n);
}
extern "C" int mxc__cuda_instance_norm_bwd(const mxc__gpu_call *c, char *why,
                                           size_t n) {
  return run_bwd<1>(c, why, n);
}

// LRN: data (N, C, H, W) -> (output, tmp_norm); the gradient (ograd,
// data, output, tmp_norm) -> ddata.
extern "C" int mxc__cuda_lrn(const mxc__gpu_call *c, char *why,
                             size_t why_len) {
  if (c->n_in != 1 || c->n_out < 1 || c->n_out > 2 || c->in[0].ndim != 4) {
    snprintf(why, why_len,
             "%d inputs, %d outputs, data of %d axes; expected 1, 1 or 2, "
             "and (N, C, H, W)",
             c->n_in, c->n_out, c->n_in > 0 ? c->in[0].ndim : 0);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__lrn_plan q = mxc__lrn_plan_make((const mxc__lrn_param *)c->param,
                                       &c->in[0], c->req, c->n_out);
  long long n = c->in[0].size;
  if (n > 0 && (q.on[0] || q.on[1])) {
    lrn_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), out_f(c, 0), out_f(c, 1),
                                      n);
  }
  return mxc__cuda_finish("LRN kernel", why, why_len);
}

extern "C" int mxc__cuda_lrn_bwd(const mxc__gpu_call *c, char *why,
                                 size_t why_len) {
  if (c->n_in != 4 || c->n_out != 1 || c->in[1].ndim != 4) {
    snprintf(why, why_len,
             "%d inputs, %d outputs; expected 4 (ograd, data, output, "
             "tmp_norm) of (N, C, H, W) and 1",
             c->n_in, c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__lrn_plan q = mxc__lrn_plan_make((const mxc__lrn_param *)c->param,
                                       &c->in[1], c->req, 1);
  long long n = c->in[1].size;
  if (n > 0 && q.on[0]) {
    lrn_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(q, in_f(c, 0), in_f(c, 1), in_f(c, 2),
                                          in_f(c, 3), out_f(c, 0), n);
  }
  return mxc__cuda_finish("LRN gradient kernel", why, why_len);
}
