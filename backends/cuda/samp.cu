// GridGenerator, BilinearSampler, SpatialTransformer and their gradients
// (samp.h): one thread per grid or output element, per grid point (the
// samplers' gradients: dgrid in the CPU's order, ddata by atomic adds) or
// per (sample, affine parameter), each running samp_plan.h's function,
// which the host test runs against the CPU. -fmad=false (nvcc.bzl).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/samp.h"
#include "backends/cuda/samp_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

__global__ void gg_kernel(int warp, const float *in, long long h, long long w,
                          float *out, int add, long long n) {
  GRID_LOOP(n) mxc__sampk_gg(warp, in, h, w, out, add, i);
}

__global__ void gg_warp_bwd_kernel(const float *g, long long h, long long w,
                                   float *dx, int add, long long n) {
  GRID_LOOP(n) mxc__sampk_gg_warp_bwd(g, h, w, dx, add, i);
}

__global__ void dtheta_kernel(const float *g, long long h, long long w,
                              float *dtheta, int add, long long n) {
  GRID_LOOP(n) mxc__sampk_dtheta(g, h, w, dtheta, add, i);
}

__global__ void samp_kernel(mxc__sampk_plan q, const float *x,
                            const float *grid, const float *theta, float *y,
                            long long n) {
  GRID_LOOP(n) mxc__sampk_fwd(&q, x, grid, theta, y, i);
}

__global__ void samp_bwd_kernel(mxc__sampk_plan q, const float *og,
                                const float *x, const float *grid,
                                const float *theta, float *dx, float *dg,
                                int dg_on, int dg_add, long long n) {
  GRID_LOOP(n)
  mxc__sampk_bwd(&q, og, x, grid, theta, dx, dg, dg_on, dg_add, i);
}

const float *in_f(const mxc__gpu_call *c, int i) {
  return (const float *)c->in[i].ptr;
}
float *out_f(const mxc__gpu_call *c, int i) {
  return i < c->n_out ? (float *)c->out[i].ptr : nullptr;
}
bool on(const mxc__gpu_call *c, int k) {
  return k < c->n_out && c->req[k] != MXC__GPU_REQ_NULL;
}
int add(const mxc__gpu_call *c, int k) {
  return k < c->n_out && c->req[k] == MXC__GPU_REQ_ADD;
}

// n_in inputs, 1 to max_out outputs, the array at index `four` 4-D.
int check(const mxc__gpu_call *c, const char *op, int n_in, int max_out,
          int four, char *why, size_t why_len) {
  if (c->n_in != n_in || c->n_out < 1 || c->n_out > max_out ||
      c->in[four].ndim != 4) {
    snprintf(why, why_len,
             "%s: %d inputs, %d outputs, input %d of %d axes; expected %d, 1 "
             "to %d, and 4 axes",
             op, c->n_in, c->n_out, four, c->n_in > four ? c->in[four].ndim : 0,
             n_in, max_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  return mxc__cuda_use_device(c->dev, why, why_len);
}

// ddata cleared in write mode before the atomic adds (the CPU's clear).
int clear_dx(const mxc__gpu_call *c, char *why, size_t why_len) {
  if (!on(c, 0) || add(c, 0) || c->out[0].size == 0) return MXC_OK;
  cudaError_t e =
      cudaMemsetAsync(c->out[0].ptr, 0, (size_t)c->out[0].size * sizeof(float),
                      mxc__cuda_stream());
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, why_len, "ddata clear", e);
}

}  // namespace

// GridGenerator: theta (N, 6) or flow (N, 2, H, W) -> grid (N, 2, h, w).
extern "C" int mxc__cuda_grid_gen(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  if (c->n_in != 1 || c->n_out != 1 || c->out[0].ndim != 4) {
    snprintf(why, why_len,
             "GridGenerator: %d inputs, %d outputs; expected 1 and 1 of 4 "
             "axes",
             c->n_in, c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  const mxc__st_param *p = (const mxc__st_param *)c->param;
  int warp = p->transform_type == MXC__GG_WARP;
  const mxc__gpu_array &o = c->out[0];
  long long n = o.size;
  if (n > 0 && on(c, 0)) {
    gg_kernel<<<MXC__CUDA_GRID(n)>>>(warp, in_f(c, 0), o.dims[2], o.dims[3],
                                     out_f(c, 0), add(c, 0), n);
  }
  return mxc__cuda_finish("GridGenerator kernel", why, why_len);
}

// (ograd (N, 2, h, w), data) -> ddata (theta's or the flow's shape).
extern "C" int mxc__cuda_grid_gen_bwd(const mxc__gpu_call *c, char *why,
                                      size_t why_len) {
  int rc = check(c, "_backward_GridGenerator", 2, 1, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  const mxc__st_param *p = (const mxc__st_param *)c->param;
  const mxc__gpu_array &g = c->in[0];
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    if (p->transform_type == MXC__GG_WARP) {
      gg_warp_bwd_kernel<<<MXC__CUDA_GRID(n)>>>(
          in_f(c, 0), g.dims[2], g.dims[3], out_f(c, 0), add(c, 0), n);
    } else {
      dtheta_kernel<<<MXC__CUDA_GRID(n)>>>(in_f(c, 0), g.dims[2], g.dims[3],
                                           out_f(c, 0), add(c, 0), n);
    }
  }
  return mxc__cuda_finish("GridGenerator gradient kernel", why, why_len);
}

// BilinearSampler: (data, grid) -> output; SpatialTransformer: (data,
// loc) -> output, the grid computed per point.
namespace {

int run_samp(const mxc__gpu_call *c, int stn, char *why, size_t why_len) {
  const char *op = stn ? "SpatialTransformer" : "BilinearSampler";
  int rc = check(c, op, 2, 1, 0, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__sampk_plan q =
      mxc__sampk_plan_make(&c->in[0], &c->out[0], c->req, c->n_out);
  long long n = c->out[0].size;
  if (n > 0 && on(c, 0)) {
    samp_kernel<<<MXC__CUDA_GRID(n)>>>(
        q, in_f(c, 0), stn ? nullptr : in_f(c, 1), stn ? in_f(c, 1) : nullptr,
        out_f(c, 0), n);
  }
  return mxc__cuda_finish("sampler kernel", why, why_len);
}

// The affine gradient of SpatialTransformer: dgrid into a stream-ordered
// workspace, then dloc from it.
int stn_dloc(const mxc__gpu_call *c, const mxc__sampk_plan &q, char *why,
             size_t why_len) {
  long long pts = q.n * q.oh * q.ow;
  float *dg = nullptr;
  cudaStream_t s = mxc__cuda_stream();
  cudaError_t e =
      cudaMallocAsync((void **)&dg, (size_t)(2 * pts + 1) * sizeof(float), s);
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, why_len, "SpatialTransformer workspace", e);
  }
  if (pts > 0) {
    samp_bwd_kernel<<<MXC__CUDA_GRID(pts)>>>(q, in_f(c, 0), in_f(c, 1), nullptr,
                                             in_f(c, 2), out_f(c, 0), dg, 1, 0,
                                             pts);
  }
  long long n = q.n * 6;
  if (n > 0) {
    dtheta_kernel<<<MXC__CUDA_GRID(n)>>>(dg, q.oh, q.ow, out_f(c, 1), add(c, 1),
                                         n);
  }
  e = cudaFreeAsync(dg, s);
  if (e != cudaSuccess) {
    return mxc__cuda_rt_fail(why, why_len, "SpatialTransformer workspace", e);
  }
  return MXC_OK;
}

// (ograd, data, grid | loc) -> (ddata, dgrid | dloc).
int run_samp_bwd(const mxc__gpu_call *c, int stn, char *why, size_t why_len) {
  const char *op =
      stn ? "_backward_SpatialTransformer" : "_backward_BilinearSampler";
  int rc = check(c, op, 3, 2, 1, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__sampk_plan q =
      mxc__sampk_plan_make(&c->in[1], &c->in[0], c->req, c->n_out);
  if ((rc = clear_dx(c, why, why_len)) != MXC_OK) return rc;
  long long pts = q.n * q.oh * q.ow;
  if (stn && on(c, 1)) {
    rc = stn_dloc(c, q, why, why_len);
    if (rc != MXC_OK) return rc;
  } else if (pts > 0 && (on(c, 0) || on(c, 1))) {
    samp_bwd_kernel<<<MXC__CUDA_GRID(pts)>>>(
        q, in_f(c, 0), in_f(c, 1), stn ? nullptr : in_f(c, 2),
        stn ? in_f(c, 2) : nullptr, out_f(c, 0), out_f(c, 1), !stn && on(c, 1),
        add(c, 1), pts);
  }
  return mxc__cuda_finish("sampler gradient kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_bsampler(const mxc__gpu_call *c, char *why, size_t n) {
  return run_samp(c, 0, why, n);
}
extern "C" int mxc__cuda_bsampler_bwd(const mxc__gpu_call *c, char *why,
                                      size_t n) {
  return run_samp_bwd(c, 0, why, n);
}
extern "C" int mxc__cuda_stn(const mxc__gpu_call *c, char *why, size_t n) {
  return run_samp(c, 1, why, n);
}
extern "C" int mxc__cuda_stn_bwd(const mxc__gpu_call *c, char *why, size_t n) {
  return run_samp_bwd(c, 1, why, n);
}
