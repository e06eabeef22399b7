// Random kernels of the CUDA plug-in (rng.h): one grid-stride kernel over
// the Philox blocks of the call's slice, each thread computing whole
// blocks with the per-value functions the CPU's fills use
// (core/resource/philox_impl.h, through rng_plan.h). Compiled with
// -fmad=false (nvcc.bzl): uniform values then round as on the CPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/rng.h"
#include "backends/cuda/rng_plan.h"

namespace {

__global__ void rng_kernel(mxc__rng_plan p, void *out) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long n_threads = (long long)gridDim.x * blockDim.x;
  mxc__rng_plan_thread(&p, t, n_threads, out);
}

int run(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  if (c->n_out != 1) {
    snprintf(why, why_len, "random kernel: %d outputs, expected 1",
             c->n_out);
    return MXC_ERR_INTERNAL;
  }
  mxc__rng_plan p;
  int rc = mxc__rng_plan_make(kind, c->param, &c->out[0], c->req[0], &c->rng,
                              &p, why, why_len);
  if (rc != MXC_OK || p.n_blocks == 0) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  rng_kernel<<<MXC__CUDA_GRID(p.n_blocks)>>>(p, c->out[0].ptr);
  return mxc__cuda_finish("random kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_random_uniform(const mxc__gpu_call *c, char *why,
                                        size_t n) {
  return run(MXC__RNG_UNIFORM, c, why, n);
}
extern "C" int mxc__cuda_random_normal(const mxc__gpu_call *c, char *why,
                                       size_t n) {
  return run(MXC__RNG_NORMAL, c, why, n);
}
extern "C" int mxc__cuda_random_exponential(const mxc__gpu_call *c,
                                            char *why, size_t n) {
  return run(MXC__RNG_EXPONENTIAL, c, why, n);
}
extern "C" int mxc__cuda_random_randint(const mxc__gpu_call *c, char *why,
                                        size_t n) {
  return run(MXC__RNG_RANDINT, c, why, n);
}
