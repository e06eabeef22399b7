// The multi-precision and aggregated SGD updates and the finiteness
// checks of mp.h: one grid-stride launch per weight running mp_plan.h's
// per-element rule (which the host test runs against the CPU), and for
// all_finite one launch per input clearing the flag where an element is
// not finite. -fmad=false (BUILD): each operation rounds as on the CPU.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/mp.h"
#include "backends/cuda/mp_plan.h"
#include "ops/nn/all_finite_params.h"

namespace {

// The output may be the weight's memory (in place): the element function
// reads before it writes, one element per thread.
__global__ void step_kernel(mxc__mp_step s) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
       i += stride) {
    mxc__mp_elem(&s, i);
  }
}

// Every input of a group has the output's element count.
int check(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  int st = mxc__mp_stride(kind);
  if (c->n_out < 1 || c->n_out > MXC__MP_MAX_WEIGHTS ||
      c->n_in != c->n_out * st) {
    snprintf(why, why_len,
             "%d inputs, %d outputs; expected %d inputs per output, 1 to %d "
             "outputs",
             c->n_in, c->n_out, st, MXC__MP_MAX_WEIGHTS);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < c->n_in; ++i) {
    if (c->in[i].size != c->out[i / st].size) {
      snprintf(why, why_len,
               "input %d has %lld elements, output %d %lld: expected its "
               "weight's shape",
               i, (long long)c->in[i].size, i / st,
               (long long)c->out[i / st].size);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

template <int KIND>
int run(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check(KIND, c, why, why_len);
  if (rc != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  const mxc__mp_param *p = (const mxc__mp_param *)c->param;
  for (int w = 0; w < c->n_out; ++w) {
    // REQ_NULL skips the weight's whole update, states included.
    if (c->req[w] == MXC__GPU_REQ_NULL || c->out[w].size == 0) continue;
    mxc__mp_step s = mxc__mp_plan(KIND, p, c, w);
    step_kernel<<<MXC__CUDA_GRID(s.n)>>>(s);
  }
  return mxc__cuda_finish("SGD update kernel", why, why_len);
}

// ---- mp_lamb_update_phase1 / phase2 ----

template <int PHASE>
__global__ void lamb_kernel(mxc__mp_lamb_step s) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
       i += stride) {
    if (PHASE == 1) {
      mxc__mp_lamb1(&s, i);
    } else {
      mxc__mp_lamb2(&s, i);
    }
  }
}

// Five inputs of the output's size but phase 2's norms r1, r2 (one
// element each).
int check_lamb(int phase, const mxc__gpu_call *c, char *why, size_t why_len) {
  if (c->n_in != 5 || c->n_out != 1) {
    snprintf(why, why_len, "%d inputs, %d outputs; expected 5 and 1", c->n_in,
             c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = 0; i < 5; ++i) {
    int64_t n = phase == 2 && (i == 2 || i == 3) ? 1 : c->out[0].size;
    if (c->in[i].size != n) {
      snprintf(why, why_len, "input %d has %lld elements; expected %lld", i,
               (long long)c->in[i].size, (long long)n);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

template <int PHASE>
int run_lamb(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_lamb(PHASE, c, why, why_len);
  // REQ_NULL skips the whole update, states included, as on the CPU.
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  mxc__mp_lamb_step s =
      mxc__mp_lamb_plan(PHASE, (const mxc__opt_ext_param *)c->param, c);
  lamb_kernel<PHASE><<<MXC__CUDA_GRID(s.n)>>>(s);
  return mxc__cuda_finish("LAMB kernel", why, why_len);
}

// ---- all_finite ----

__global__ void set_kernel(float *flag) { *flag = 1.f; }

// Every thread that meets a non-finite element writes the same 0.
__global__ void finite_kernel(const void *p, int dt, long long n, float *flag) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (!mxc__mp_finite(p, dt, i)) *flag = 0.f;
  }
}

}  // namespace

extern "C" int mxc__cuda_all_finite(const mxc__gpu_call *c, char *why,
                                    size_t why_len) {
  if (c->n_out != 1 || c->out[0].size != 1 || c->n_in < 1) {
    snprintf(why, why_len,
             "%d inputs, %d outputs; expected at least one input and one "
             "output of one element",
             c->n_in, c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  // The CPU ignores ADD: the flag is set, never accumulated.
  if (c->req[0] == MXC__GPU_REQ_NULL) return MXC_OK;
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc != MXC_OK) return rc;
  float *flag = (float *)c->out[0].ptr;
  if (((const mxc__af_param *)c->param)->init_output) {
    set_kernel<<<1, 1, 0, mxc__cuda_stream()>>>(flag);
  }
  for (int i = 0; i < c->n_in; ++i) {
    long long n = c->in[i].size;
    if (n == 0) continue;
    finite_kernel<<<MXC__CUDA_GRID(n)>>>(c->in[i].ptr, c->in[i].dtype, n, flag);
  }
  return mxc__cuda_finish("all_finite kernel", why, why_len);
}

extern "C" int mxc__cuda_mp_lamb1(const mxc__gpu_call *c, char *why, size_t n) {
  return run_lamb<1>(c, why, n);
}
extern "C" int mxc__cuda_mp_lamb2(const mxc__gpu_call *c, char *why, size_t n) {
  return run_lamb<2>(c, why, n);
}
extern "C" int mxc__cuda_mp_lamb1_supports(const int *dt, int n_in, int n_out) {
  return mxc__mp_lamb_supports(1, dt, n_in, n_out);
}
extern "C" int mxc__cuda_mp_lamb2_supports(const int *dt, int n_in, int n_out) {
  return mxc__mp_lamb_supports(2, dt, n_in, n_out);
}

extern "C" int mxc__cuda_all_finite_supports(const int *dt, int n_in,
                                             int n_out) {
  return n_out == 1 && (dt[n_in] == -1 || dt[n_in] == MXC_DTYPE_FLOAT32);
}

#define MXC__MP_DEFINE(fn, kind, name)                                         \
  extern "C" int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t n) { \
    return run<kind>(c, why, n);                                               \
  }                                                                            \
  extern "C" int mxc__cuda_##fn##_supports(const int *dt, int n_in,            \
                                           int n_out) {                        \
    return mxc__mp_supports(kind, dt, n_in, n_out);                            \
  }
MXC__CUDA_MP_OPS(MXC__MP_DEFINE)
