// The optimizer updates of optim.h: one fused grid-stride kernel per
// call computing optim_plan.h's per-element rule (weight, states and new
// weight in one pass), which the host test runs against the CPU.
// -fmad=false (BUILD): each operation rounds as on the CPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/optim.h"
#include "backends/cuda/optim_plan.h"

namespace {

struct States {
  float *s[3];
};

// Weight and output may alias (in place): no __restrict__.
template <int KIND>
__global__ void update_kernel(mxc__opt_param p, const float *w, const float *g,
                              States s, float *out, long long n, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    mxc__opt2_elem(KIND, &p, w, g, s.s, out, add, i);
  }
}

// Inputs (weight, grad, the kind's states), each of the output's size.
int check(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  int want = 2 + mxc__opt2_states(kind);
  if (c->n_in != want) {
    snprintf(why, why_len, "%d inputs; expected %d (weight, grad, states)",
             c->n_in, want);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < c->n_in; ++i) {
    if (c->in[i].size != c->out[0].size) {
      snprintf(why, why_len,
               "input %d has %lld elements, the output %lld: expected the "
               "weight's shape",
               i, (long long)c->in[i].size, (long long)c->out[0].size);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

template <int KIND>
int run(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check(KIND, c, why, why_len);
  // REQ_NULL skips the whole update, states included, as on the CPU.
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  States s = {{nullptr, nullptr, nullptr}};
  for (int k = 2; k < c->n_in; ++k) s.s[k - 2] = (float *)c->in[k].ptr;
  long long n = c->out[0].size;
  update_kernel<KIND><<<MXC__CUDA_GRID(n)>>>(
      *(const mxc__opt_param *)c->param, (const float *)c->in[0].ptr,
      (const float *)c->in[1].ptr, s, (float *)c->out[0].ptr, n,
      c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("optimizer kernel", why, why_len);
}

}  // namespace

#define MXC__OPT2_DEFINE(fn, kind)                                             \
  extern "C" int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t n) { \
    return run<kind>(c, why, n);                                               \
  }
MXC__OPT2_DEFINE(nag_mom_update, MXC__OPT2_NAG_MOM)
MXC__OPT2_DEFINE(rmsprop_update, MXC__OPT2_RMSPROP)
MXC__OPT2_DEFINE(rmspropalex_update, MXC__OPT2_RMSPROPALEX)
MXC__OPT2_DEFINE(adagrad_update, MXC__OPT2_ADAGRAD)
MXC__OPT2_DEFINE(ftrl_update, MXC__OPT2_FTRL)
MXC__OPT2_DEFINE(signsgd_update, MXC__OPT2_SIGNSGD)
MXC__OPT2_DEFINE(signum_update, MXC__OPT2_SIGNUM)
