// The fills and simple producers of fill.h: one grid-stride launch per
// call running fill_plan.h's per-element functions (which the host test
// runs against the CPU); add_n one launch per MXC__FILL_MAX_ARGS inputs;
// _backward_MakeLoss with normalization 'valid' one block that counts
// the valid elements, then fills. -fmad=false (BUILD).
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/fill.h"
#include "backends/cuda/fill_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

__global__ void value_kernel(void *out, int dt, int add, double v,
                             long long n) {
  GRID_LOOP(n) mxc__fill_value(out, dt, add, v, i);
}

__global__ void arange_kernel(mxc__arange_plan q, void *out, int dt, int add,
                              long long n) {
  GRID_LOOP(n) mxc__fill_arange(&q, out, dt, add, i);
}

__global__ void eye_kernel(long long cols, long long k, void *out, int dt,
                           int add, long long n) {
  GRID_LOOP(n) mxc__fill_eye(cols, k, out, dt, add, i);
}

// The output may share args[0]'s memory: each element is read, then
// written, by one thread.
__global__ void addn_kernel(mxc__addn_plan q, void *out, long long n) {
  GRID_LOOP(n) mxc__fill_addn(&q, out, i);
}

__global__ void ml_kernel(float *out, float v, int add, long long n) {
  GRID_LOOP(n) mxc__ml_grad(out, v, add, i);
}

constexpr int kCountThreads = 1024;

// One block: counts the elements of x above thresh, then fills out with
// (float)(scale / max(count, 1)), as the CPU's 'valid' normalization.
__global__ void ml_valid_kernel(const float *x, double thresh, double scale,
                                float *out, int add, long long n) {
  __shared__ long long part[kCountThreads];
  long long cnt = 0;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    cnt += mxc__ml_valid(x, thresh, i);
  }
  part[threadIdx.x] = cnt;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  float v = (float)(scale / (part[0] > 0 ? (double)part[0] : 1));
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    mxc__ml_grad(out, v, add, i);
  }
}

// One output; inputs of its element count from input `from` on.
int check(const mxc__gpu_call *c, int from, char *why, size_t why_len) {
  if (c->n_out != 1) {
    snprintf(why, why_len, "%d outputs; expected 1", c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int i = from; i < c->n_in; ++i) {
    if (c->in[i].size != c->out[0].size) {
      snprintf(why, why_len,
               "input %d has %lld elements, the output %lld: expected the "
               "same shape",
               i, (long long)c->in[i].size, (long long)c->out[0].size);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

// Common start: checks, then 1 when there is work (rc MXC_OK).
int begin(const mxc__gpu_call *c, int from, int *rc, char *why,
          size_t why_len) {
  *rc = check(c, from, why, why_len);
  if (*rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return 0;
  }
  *rc = mxc__cuda_use_device(c->dev, why, why_len);
  return *rc == MXC_OK;
}

int add_mode(const mxc__gpu_call *c) { return c->req[0] == MXC__GPU_REQ_ADD; }

int run_value(const mxc__gpu_call *c, double v, char *why, size_t why_len) {
  int rc;
  if (!begin(c, 0, &rc, why, why_len)) return rc;
  long long n = c->out[0].size;
  value_kernel<<<MXC__CUDA_GRID(n)>>>(c->out[0].ptr, c->out[0].dtype,
                                      add_mode(c), v, n);
  return mxc__cuda_finish("fill kernel", why, why_len);
}

// add_n, BlockGrad, MakeLoss, make_loss: the sum of the inputs (a copy
// of one).
int run_sum(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc;
  if (c->n_in < 1) {
    snprintf(why, why_len, "no input; expected at least one");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (!begin(c, 0, &rc, why, why_len)) return rc;
  long long n = c->out[0].size;
  for (int j = 0; j < mxc__addn_launches(c->n_in); ++j) {
    addn_kernel<<<MXC__CUDA_GRID(n)>>>(mxc__addn_plan_make(c, j), c->out[0].ptr,
                                       n);
  }
  return mxc__cuda_finish("add_n kernel", why, why_len);
}

}  // namespace

extern "C" int mxc__cuda_fill_zeros(const mxc__gpu_call *c, char *why,
                                    size_t n) {
  return run_value(c, 0, why, n);
}
extern "C" int mxc__cuda_fill_ones(const mxc__gpu_call *c, char *why,
                                   size_t n) {
  return run_value(c, 1, why, n);
}
extern "C" int mxc__cuda_fill_full(const mxc__gpu_call *c, char *why,
                                   size_t n) {
  return run_value(c, ((const mxc__fill_param *)c->param)->value, why, n);
}
// The input's values are never read (its shape and dtype are the
// output's).
extern "C" int mxc__cuda_fill_zeros_like(const mxc__gpu_call *c, char *why,
                                         size_t n) {
  return run_value(c, 0, why, n);
}
extern "C" int mxc__cuda_fill_ones_like(const mxc__gpu_call *c, char *why,
                                        size_t n) {
  return run_value(c, 1, why, n);
}

extern "C" int mxc__cuda_fill_arange(const mxc__gpu_call *c, char *why,
                                     size_t why_len) {
  int rc;
  if (!begin(c, 0, &rc, why, why_len)) return rc;
  const mxc__arange_param *p = (const mxc__arange_param *)c->param;
  int dt = c->out[0].dtype;
  long long n = c->out[0].size;
  arange_kernel<<<MXC__CUDA_GRID(n)>>>(mxc__arange_plan_make(p, dt),
                                       c->out[0].ptr, dt, add_mode(c), n);
  return mxc__cuda_finish("arange kernel", why, why_len);
}

extern "C" int mxc__cuda_fill_eye(const mxc__gpu_call *c, char *why,
                                  size_t why_len) {
  int rc;
  if (c->n_out == 1 && c->out[0].ndim != 2) {
    snprintf(why, why_len, "an output of %d dimensions; expected 2",
             c->out[0].ndim);
    return MXC_ERR_SHAPE;
  }
  if (!begin(c, 0, &rc, why, why_len)) return rc;
  long long n = c->out[0].size;
  eye_kernel<<<MXC__CUDA_GRID(n)>>>(
      c->out[0].dims[1], ((const mxc__eye_param *)c->param)->k, c->out[0].ptr,
      c->out[0].dtype, add_mode(c), n);
  return mxc__cuda_finish("eye kernel", why, why_len);
}

extern "C" int mxc__cuda_fill_add_n(const mxc__gpu_call *c, char *why,
                                    size_t n) {
  return run_sum(c, why, n);
}
extern "C" int mxc__cuda_fill_block_grad(const mxc__gpu_call *c, char *why,
                                         size_t n) {
  return run_sum(c, why, n);
}
extern "C" int mxc__cuda_fill_make_loss_fwd(const mxc__gpu_call *c, char *why,
                                            size_t n) {
  return run_sum(c, why, n);
}
extern "C" int mxc__cuda_fill_make_loss(const mxc__gpu_call *c, char *why,
                                        size_t n) {
  return run_sum(c, why, n);
}

// Inputs (ograd, data): the output has data's shape; ograd is not read.
extern "C" int mxc__cuda_fill_make_loss_bwd(const mxc__gpu_call *c, char *why,
                                            size_t why_len) {
  int rc;
  if (c->n_in != 2) {
    snprintf(why, why_len, "%d inputs; expected 2 (ograd, data)", c->n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (!begin(c, 1, &rc, why, why_len)) return rc;
  const mxc__ml_param *p = (const mxc__ml_param *)c->param;
  long long n = c->out[0].size;
  float *out = (float *)c->out[0].ptr;
  if (p->normalization == MXC__ML_NORM_VALID) {
    ml_valid_kernel<<<1, kCountThreads, 0, mxc__cuda_stream()>>>(
        (const float *)c->in[1].ptr, p->valid_thresh, p->grad_scale, out,
        add_mode(c), n);
  } else {
    float v = (float)(p->grad_scale / mxc__ml_norm(p, &c->in[1], 0));
    ml_kernel<<<MXC__CUDA_GRID(n)>>>(out, v, add_mode(c), n);
  }
  return mxc__cuda_finish("MakeLoss gradient kernel", why, why_len);
}

extern "C" int mxc__cuda_fill_supports_out(const int *dt, int n_in, int n_out) {
  return n_out == 1 && (dt[n_in] == -1 || mxc__fill_dtype_ok(dt[n_in]));
}

extern "C" int mxc__cuda_fill_supports_same(const int *dt, int n_in,
                                            int n_out) {
  int seen = -1;
  for (int i = 0; i < n_in + n_out; ++i) {
    if (dt[i] == -1) continue;
    if (!mxc__fill_dtype_ok(dt[i]) || (seen != -1 && dt[i] != seen)) return 0;
    seen = dt[i];
  }
  return 1;
}
