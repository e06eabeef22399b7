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

// ---- FTML and LAMB ----

// Arrays of an FTML or LAMB call: a[k] is input k (out the output).
struct Arrays {
  float *a[5];
  float *out;
};

template <int KIND>
__global__ void ext_kernel(mxc__opt3_plan q, Arrays x, long long n, int add) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (KIND == MXC__OPT3_FTML) {
      mxc__opt3_ftml(&q, x.a[0], x.a[1], x.a[2], x.a[3], x.a[4], x.out, add, i);
    } else if (KIND == MXC__OPT3_LAMB1) {
      mxc__opt3_lamb1(&q, x.a[0], x.a[1], x.a[2], x.a[3], x.out, add, i);
    } else {
      mxc__opt3_lamb2(&q, x.a[0], x.a[1], x.a[2], x.a[3], x.out, add, i);
    }
  }
}

// Inputs: FTML 5, LAMB 4, each of the output's size but LAMB phase 2's
// norms r1, r2 (one element each).
int check_ext(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  int want = kind == MXC__OPT3_FTML ? 5 : 4;
  if (c->n_in != want) {
    snprintf(why, why_len, "%d inputs; expected %d", c->n_in, want);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < c->n_in; ++i) {
    int64_t n = kind == MXC__OPT3_LAMB2 && i >= 2 ? 1 : c->out[0].size;
    if (c->in[i].size != n) {
      snprintf(why, why_len, "input %d has %lld elements; expected %lld", i,
               (long long)c->in[i].size, (long long)n);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

template <int KIND>
int run_ext(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_ext(KIND, c, why, why_len);
  // REQ_NULL skips the whole update, states included, as on the CPU.
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  Arrays x = {{nullptr, nullptr, nullptr, nullptr, nullptr},
              (float *)c->out[0].ptr};
  for (int k = 0; k < c->n_in; ++k) x.a[k] = (float *)c->in[k].ptr;
  mxc__opt3_plan q =
      mxc__opt3_plan_make(KIND, (const mxc__opt_ext_param *)c->param);
  long long n = c->out[0].size;
  ext_kernel<KIND>
      <<<MXC__CUDA_GRID(n)>>>(q, x, n, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("optimizer kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_ftml_update(const mxc__gpu_call *c, char *why,
                                     size_t n) {
  return run_ext<MXC__OPT3_FTML>(c, why, n);
}
extern "C" int mxc__cuda_lamb_update_phase1(const mxc__gpu_call *c, char *why,
                                            size_t n) {
  return run_ext<MXC__OPT3_LAMB1>(c, why, n);
}
extern "C" int mxc__cuda_lamb_update_phase2(const mxc__gpu_call *c, char *why,
                                            size_t n) {
  return run_ext<MXC__OPT3_LAMB2>(c, why, n);
}

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
