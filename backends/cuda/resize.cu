// _contrib_BilinearResize2D, _contrib_AdaptiveAvgPooling2D and their
// gradients (resize.h): one thread per output pixel (forward) or per
// input pixel (gradients, gathering in the CPU's order), each running
// resize_plan.h's element function, which the host test runs against the
// CPU. -fmad=false (BUILD).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/resize.h"
#include "backends/cuda/resize_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

enum { RS_FWD, RS_BWD, AP_FWD, AP_BWD };

template <int KIND>
__global__ void plane_kernel(mxc__rs_plan q, const float *a, float *b,
                             long long n) {
  GRID_LOOP(n) {
    if (KIND == RS_FWD) mxc__rs_fwd(&q, a, b, i);
    if (KIND == RS_BWD) mxc__rs_bwd(&q, a, b, i);
    if (KIND == AP_FWD) mxc__ap_fwd(&q, a, b, i);
    if (KIND == AP_BWD) mxc__ap_bwd(&q, a, b, i);
  }
}

__global__ void zero_kernel(float *p, long long n) { GRID_LOOP(n) p[i] = 0; }

int check(const mxc__gpu_call *c, int n_in_min, char *why, size_t why_len) {
  if (c->n_in < n_in_min || c->n_out < 1) {
    snprintf(why, why_len, "%d inputs, %d outputs; expected at least %d and 1",
             c->n_in, c->n_out, n_in_min);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    const mxc__gpu_array *a = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
    if (a->ndim != 4) {
      snprintf(why, why_len,
               "array %d has %d dimensions; expected 4 (N, C, H, W)", i,
               a->ndim);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

// Forward: data in[0] into out[0]; gradient: ograd in[0] into out[0]
// (data's shape, in[1]), and 'like''s gradient out[1] zeroed.
template <int KIND>
int run(const mxc__gpu_call *c, char *why, size_t why_len) {
  bool bwd = KIND == RS_BWD || KIND == AP_BWD;
  int rc = check(c, bwd ? 2 : 1, why, why_len);
  if (rc != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  int align = 0;
  if (KIND == RS_FWD || KIND == RS_BWD) {
    align = ((const mxc__rs_param *)c->param)->align_corners;
  }
  if (bwd && c->n_out > 1 && c->req[1] != MXC__GPU_REQ_NULL &&
      c->req[1] != MXC__GPU_REQ_ADD && c->out[1].size > 0) {
    zero_kernel<<<MXC__CUDA_GRID(c->out[1].size)>>>((float *)c->out[1].ptr,
                                                    c->out[1].size);
  }
  long long n = c->out[0].size;
  if (c->req[0] != MXC__GPU_REQ_NULL && n > 0) {
    const mxc__gpu_array *x = bwd ? &c->out[0] : &c->in[0];
    const mxc__gpu_array *y = bwd ? &c->in[0] : &c->out[0];
    mxc__rs_plan q =
        mxc__rs_plan_make(x, y, align, c->req[0] == MXC__GPU_REQ_ADD);
    plane_kernel<KIND><<<MXC__CUDA_GRID(n)>>>(q, (const float *)c->in[0].ptr,
                                              (float *)c->out[0].ptr, n);
  }
  return mxc__cuda_finish("resize kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_resize(const mxc__gpu_call *c, char *why, size_t n) {
  return run<RS_FWD>(c, why, n);
}
extern "C" int mxc__cuda_resize_bwd(const mxc__gpu_call *c, char *why,
                                    size_t n) {
  return run<RS_BWD>(c, why, n);
}
extern "C" int mxc__cuda_adaptive_pool(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run<AP_FWD>(c, why, n);
}
extern "C" int mxc__cuda_adaptive_pool_bwd(const mxc__gpu_call *c, char *why,
                                           size_t n) {
  return run<AP_BWD>(c, why, n);
}
