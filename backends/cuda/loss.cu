// SoftmaxOutput and its gradient on the GPU (loss.h): the per-element
// functions of so_plan.h, one thread per softmax group forward (a group
// is one row of classes: 64 x 1000 for ResNet-50's head, small next to
// the network) and one per element backward. -fmad=false (BUILD): the
// gradient's (y - t) * scale rounds as the CPU's.
#include <cuda_runtime.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/loss.h"
#include "backends/cuda/so_plan.h"

namespace {

__global__ void so_forward(mxc__so_plan p, const float *x, float *y,
                           long long groups) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       g < groups; g += stride) {
    mxc__so_forward(&p, x, y, g);
  }
}

// y and dx may alias (no __restrict__): each element reads its own y.
__global__ void so_backward(mxc__so_plan p, const float *y,
                            const float *label, float *dx, long long n) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    mxc__so_backward(&p, y, label, dx, i);
  }
}

int run(const mxc__gpu_call *c, int backward, char *why, size_t why_len) {
  mxc__so_plan p;
  int rc = mxc__so_plan_make(c, backward, &p, why, why_len);
  if (rc != MXC_OK) return rc;
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  const float *in0 = (const float *)c->in[0].ptr;
  float *out = (float *)c->out[0].ptr;
  if (backward) {
    long long n = c->out[0].size;
    so_backward<<<MXC__CUDA_GRID(n)>>>(p, in0, (const float *)c->in[1].ptr,
                                       out, n);
  } else {
    long long groups = p.outer * p.inner;
    so_forward<<<MXC__CUDA_GRID(groups)>>>(p, in0, out, groups);
  }
  return mxc__cuda_finish(backward ? "_backward_SoftmaxOutput kernel"
                                   : "SoftmaxOutput kernel",
                          why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_softmax_output(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  return run(c, 0, why, why_len);
}

extern "C" int mxc__cuda_softmax_output_bwd(const mxc__gpu_call *c,
                                            char *why, size_t why_len) {
  return run(c, 1, why, why_len);
}
