// The loss heads and softmax layers of loss2.h: one thread per element
// (regression outputs, smooth_l1) or per softmax group (softmin,
// SoftmaxActivation, each group's sums in the CPU's order), and for
// softmax_cross_entropy one thread per row, its loss summed over rows in
// row order by one block. All of it runs loss2_plan.h's functions, which
// the host test runs against the CPU. -fmad=false (BUILD).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/loss2.h"
#include "backends/cuda/loss2_plan.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

// Inputs a, b (NULL when absent), output y; per element.
template <int KIND>
__global__ void elem_kernel(const float *a, const float *b, float *y,
                            double num, int add, long long n) {
  GRID_LOOP(n) {
    if (KIND == MXC__L2_REG_LIN || KIND == MXC__L2_REG_MAE ||
        KIND == MXC__L2_REG_LOG) {
      mxc__l2_reg_fwd(KIND == MXC__L2_REG_LOG, a, y, add, i);
    } else if (KIND == MXC__L2_SL1) {
      mxc__l2_sl1(num, nullptr, a, y, add, i);
    } else if (KIND == MXC__L2_SL1_B) {
      mxc__l2_sl1(num, a, b, y, add, i);
    } else {
      mxc__l2_reg_bwd(KIND == MXC__L2_REG_MAE_B, num, a, b, y, add, i);
    }
  }
}

// Softmax groups; a: the data (forward) or ograd, b: the output
// (backward).
template <int KIND>
__global__ void group_kernel(mxc__l2_groups l, double t, const float *a,
                             const float *b, float *y, int add,
                             long long n_groups) {
  GRID_LOOP(n_groups) {
    if (KIND == MXC__L2_SOFTMIN) {
      mxc__l2_softmin_fwd(l, t, a, y, add, i);
    } else if (KIND == MXC__L2_SOFTMIN_B) {
      mxc__l2_softmin_bwd(l, t, a, b, y, add, i);
    } else if (KIND == MXC__L2_SA) {
      mxc__l2_sa_fwd(l, a, y, add, i);
    } else {
      mxc__l2_sa_bwd(l, a, b, y, add, i);
    }
  }
}

constexpr int kRowThreads = 256;

// softmax_cross_entropy's loss: one block; each round its threads
// compute the terms of kRowThreads rows, thread 0 adds them in row order.
__global__ void ce_kernel(const float *x, const float *label, long long rows,
                          long long c, float *out, int add) {
  __shared__ double term[kRowThreads];
  __shared__ int valid[kRowThreads];
  double loss = 0;
  for (long long r0 = 0; r0 < rows; r0 += kRowThreads) {
    long long r = r0 + threadIdx.x;
    valid[threadIdx.x] = 0;
    if (r < rows) {
      term[threadIdx.x] = mxc__l2_ce_term(x, label, c, r, &valid[threadIdx.x]);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int k = 0; k < kRowThreads; ++k) {
        if (valid[k]) loss += term[k];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) mxc__l2_put(out, 0, (float)loss, add);
}

__global__ void ce_bwd_kernel(const float *g, const float *x,
                              const float *label, long long rows, long long c,
                              float *dx, int add) {
  GRID_LOOP(rows) mxc__l2_ce_bwd_row(x, label, c, g[0], dx, add, i);
}

int check(const mxc__gpu_call *c, int n_in, char *why, size_t why_len) {
  if (c->n_in != n_in || c->n_out != 1) {
    snprintf(why, why_len, "%d inputs, %d outputs; expected %d and 1", c->n_in,
             c->n_out, n_in);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  return MXC_OK;
}

// Every input of the output's element count (label: the same count).
int check_same(const mxc__gpu_call *c, int n_in, char *why, size_t why_len) {
  int rc = check(c, n_in, why, why_len);
  for (int i = 0; rc == MXC_OK && i < n_in; ++i) {
    if (c->in[i].size != c->out[0].size) {
      snprintf(why, why_len,
               "input %d has %lld elements, the output %lld: expected the "
               "same count",
               i, (long long)c->in[i].size, (long long)c->out[0].size);
      rc = MXC_ERR_SHAPE;
    }
  }
  return rc;
}

int inputs_of(int kind) {
  return kind == MXC__L2_SL1 || kind == MXC__L2_SOFTMIN || kind == MXC__L2_SA
             ? 1
         : kind == MXC__L2_CE_B ? 3
                                : 2;
}

// 1 when there is work: checks passed, a mode other than NULL, elements.
int begin(const mxc__gpu_call *c, int *rc, char *why, size_t why_len) {
  if (*rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return 0;
  }
  *rc = mxc__cuda_use_device(c->dev, why, why_len);
  return *rc == MXC_OK;
}

const float *in_f(const mxc__gpu_call *c, int i) {
  return i < c->n_in ? (const float *)c->in[i].ptr : nullptr;
}

template <int KIND>
int run_elem(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_same(c, inputs_of(KIND), why, why_len);
  if (!begin(c, &rc, why, why_len)) return rc;
  double num = 0;
  if (KIND == MXC__L2_SL1 || KIND == MXC__L2_SL1_B) {
    num = ((const mxc__sl1_param *)c->param)->scalar;
  } else if (KIND >= MXC__L2_REG_LIN_B) {
    num = mxc__l2_reg_scale((const mxc__reg_param *)c->param, &c->in[1]);
  }
  long long n = c->out[0].size;
  elem_kernel<KIND><<<MXC__CUDA_GRID(n)>>>(in_f(c, 0), in_f(c, 1),
                                           (float *)c->out[0].ptr, num,
                                           c->req[0] == MXC__GPU_REQ_ADD, n);
  return mxc__cuda_finish("loss kernel", why, why_len);
}

template <int KIND>
int run_group(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check_same(c, inputs_of(KIND), why, why_len);
  if (!begin(c, &rc, why, why_len)) return rc;
  const mxc__gpu_array *shape_of = &c->in[c->n_in - 1];
  mxc__l2_groups l;
  double t = 1;
  if (KIND == MXC__L2_SOFTMIN || KIND == MXC__L2_SOFTMIN_B) {
    const mxc__softmin_param *p = (const mxc__softmin_param *)c->param;
    l = mxc__l2_split(shape_of, p->axis);
    if (!std::isnan(p->temperature)) t = p->temperature;
  } else {
    l = mxc__l2_sa_groups((const mxc__sa_param *)c->param, shape_of);
  }
  long long groups = l.outer * l.inner;
  if (groups == 0) return MXC_OK;
  group_kernel<KIND><<<MXC__CUDA_GRID(groups)>>>(
      l, t, in_f(c, 0), in_f(c, 1), (float *)c->out[0].ptr,
      c->req[0] == MXC__GPU_REQ_ADD, groups);
  return mxc__cuda_finish("softmax kernel", why, why_len);
}

// data (rows, c) and label (rows): the loss (1) or the gradient.
template <int KIND>
int run_ce(const mxc__gpu_call *c, char *why, size_t why_len) {
  int rc = check(c, inputs_of(KIND), why, why_len);
  const mxc__gpu_array *x = &c->in[KIND == MXC__L2_CE_B];
  int64_t n_label = c->in[c->n_in - 1].size;
  if (rc == MXC_OK && (x->ndim != 2 || n_label != x->dims[0])) {
    snprintf(why, why_len,
             "data of %d dimensions, a label of %lld "
             "elements; expected (rows, classes) and one label per row",
             x->ndim, (long long)n_label);
    rc = MXC_ERR_SHAPE;
  }
  if (!begin(c, &rc, why, why_len)) return rc;
  const float *label = in_f(c, c->n_in - 1);
  long long rows = x->dims[0], cls = x->dims[1];
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  if (KIND == MXC__L2_CE) {
    ce_kernel<<<1, kRowThreads, 0, mxc__cuda_stream()>>>(
        (const float *)x->ptr, label, rows, cls, (float *)c->out[0].ptr, add);
  } else if (rows > 0) {
    ce_bwd_kernel<<<MXC__CUDA_GRID(rows)>>>(in_f(c, 0), (const float *)x->ptr,
                                            label, rows, cls,
                                            (float *)c->out[0].ptr, add);
  }
  return mxc__cuda_finish("softmax_cross_entropy kernel", why, why_len);
}

}  // namespace

#define ELEM(kind)                                                         \
  extern "C" int mxc__cuda_loss2_##kind(const mxc__gpu_call *c, char *why, \
                                        size_t n) {                        \
    return run_elem<MXC__L2_##kind>(c, why, n);                            \
  }
#define GROUP(kind)                                                        \
  extern "C" int mxc__cuda_loss2_##kind(const mxc__gpu_call *c, char *why, \
                                        size_t n) {                        \
    return run_group<MXC__L2_##kind>(c, why, n);                           \
  }
ELEM(REG_LIN)
ELEM(REG_LOG)
ELEM(REG_MAE)
ELEM(REG_LIN_B)
ELEM(REG_LOG_B)
ELEM(REG_MAE_B)
ELEM(SL1)
ELEM(SL1_B)
GROUP(SOFTMIN)
GROUP(SOFTMIN_B)
GROUP(SA)
GROUP(SA_B)

extern "C" int mxc__cuda_loss2_CE(const mxc__gpu_call *c, char *why, size_t n) {
  return run_ce<MXC__L2_CE>(c, why, n);
}
extern "C" int mxc__cuda_loss2_CE_B(const mxc__gpu_call *c, char *why,
                                    size_t n) {
  return run_ce<MXC__L2_CE_B>(c, why, n);
}
