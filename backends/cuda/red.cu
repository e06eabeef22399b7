// The other axis reductions and the reductions' gradients of the CUDA
// plug-in (red.h), over the host-made plans of red_plan.h: forward, a
// thread per small group or a block per large one (256 strided double
// partials, then a fixed shared-memory tree: atomic-free, so a result
// does not depend on scheduling); backward, one grid-stride element map.
//
// The forward reductions also take float16 / bfloat16 (one dtype per
// call): widened to float and then double, the float result of
// mxc__gred_final (plus the old value in add mode, in float) rounded once
// (half_hd.h), as ops/reduce's st_f16 / st_bf16; and so do the
// gradients: ograd, data and output widened, the double gradient (plus
// the old value in double in add mode) rounded once, as
// mxc__red_store_row's path for the half types.
#include <cuda_runtime.h>

#include <cstdio>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/half_hd.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/red.h"
#include "backends/cuda/red_plan.h"

namespace {

constexpr int kThreads = 256;

template <int DT>
__global__ void fwd_thread_kernel(mxc__gred_fwd_plan p,
                                  const typename MxcElem<DT>::T *x,
                                  typename MxcElem<DT>::T *out, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       o < p.s.n_out; o += stride) {
    int64_t base = mxc__sum_base(&p.s, o);
    double acc = mxc__gred_init(p.kind);
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      acc = mxc__gred_step(p.kind, acc,
                           E::load(x[base + mxc__sum_step(&p.s, k)]));
    }
    float v = mxc__gred_final(p.kind, acc, p.s.n_red);
    out[o] = E::store(add ? E::load(out[o]) + v : v);
  }
}

template <int DT>
__global__ void fwd_block_kernel(mxc__gred_fwd_plan p,
                                 const typename MxcElem<DT>::T *x,
                                 typename MxcElem<DT>::T *out, int add) {
  typedef MxcElem<DT> E;
  __shared__ double part[kThreads];
  for (long long o = blockIdx.x; o < p.s.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&p.s, o);
    double acc = mxc__gred_init(p.kind);
    for (long long k = threadIdx.x; k < p.s.n_red; k += kThreads) {
      acc = mxc__gred_step(p.kind, acc,
                           E::load(x[base + mxc__sum_step(&p.s, k)]));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        part[threadIdx.x] =
            mxc__gred_comb(p.kind, part[threadIdx.x], part[threadIdx.x + half]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      float v = mxc__gred_final(p.kind, part[0], p.s.n_red);
      out[o] = E::store(add ? E::load(out[o]) + v : v);
    }
    __syncthreads();  // part[] is reused by the next group
  }
}

// A gradient element from its double value, in the call's write mode:
// float32 rounds it and adds in float (ops/reduce's float32 store), the
// half types add the old value in double and round once (its
// mxc__blob_set path).
template <int DT>
__device__ __forceinline__ typename MxcElem<DT>::T grad_store(
    typename MxcElem<DT>::T old, double g, int add) {
  typedef MxcElem<DT> E;
  if constexpr (DT == MXC_DTYPE_FLOAT32) {
    float v = (float)g;
    return add ? old + v : v;
  } else {
    return E::store((float)(add ? g + (double)E::load(old) : g));
  }
}

// y: the forward output, or nullptr when the kind does not read it.
template <int DT>
__global__ void bwd_kernel(mxc__gred_bwd_plan p,
                           const typename MxcElem<DT>::T *og,
                           const typename MxcElem<DT>::T *x,
                           const typename MxcElem<DT>::T *y,
                           typename MxcElem<DT>::T *dx, long long n,
                           int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t io, unused;
    mxc__bcast_offsets(&p.map, i, &io, &unused);
    double g = mxc__gred_grad(&p, E::load(og[io]), E::load(x[i]),
                              y ? E::load(y[io]) : 0.f);
    dx[i] = grad_store<DT>(dx[i], g, add);
  }
}

// One element's gradient of prod/nanprod, written in the call's mode.
template <int DT>
__device__ __forceinline__ void prod_store(int kind,
                                           const typename MxcElem<DT>::T *x,
                                           typename MxcElem<DT>::T *dx,
                                           int64_t off, double g,
                                           const mxc__gred_pstat &st,
                                           int add) {
  double v = mxc__gred_prod_grad(kind, g, MxcElem<DT>::load(x[off]), &st);
  dx[off] = grad_store<DT>(dx[off], v, add);
}

template <int DT>
__global__ void prod_bwd_thread_kernel(mxc__gred_prod_plan p,
                                       const typename MxcElem<DT>::T *og,
                                       const typename MxcElem<DT>::T *x,
                                       typename MxcElem<DT>::T *dx, int add) {
  typedef MxcElem<DT> E;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       o < p.s.n_out; o += stride) {
    int64_t base = mxc__sum_base(&p.s, o);
    mxc__gred_pstat st = mxc__gred_pstat_init();
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      mxc__gred_pstat_step(p.kind, &st,
                           E::load(x[base + mxc__sum_step(&p.s, k)]));
    }
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      prod_store<DT>(p.kind, x, dx, base + mxc__sum_step(&p.s, k),
                     E::load(og[o]), st, add);
    }
  }
}

// A block per group: its statistics by strided shares and the tree, then
// its elements' gradients by the same shares.
template <int DT>
__global__ void prod_bwd_block_kernel(mxc__gred_prod_plan p,
                                      const typename MxcElem<DT>::T *og,
                                      const typename MxcElem<DT>::T *x,
                                      typename MxcElem<DT>::T *dx, int add) {
  typedef MxcElem<DT> E;
  __shared__ mxc__gred_pstat part[kThreads];
  for (long long o = blockIdx.x; o < p.s.n_out; o += gridDim.x) {
    int64_t base = mxc__sum_base(&p.s, o);
    mxc__gred_pstat st = mxc__gred_pstat_init();
    for (long long k = threadIdx.x; k < p.s.n_red; k += kThreads) {
      mxc__gred_pstat_step(p.kind, &st,
                           E::load(x[base + mxc__sum_step(&p.s, k)]));
    }
    part[threadIdx.x] = st;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        mxc__gred_pstat_comb(&part[threadIdx.x], &part[threadIdx.x + half]);
      }
      __syncthreads();
    }
    st = part[0];
    for (long long k = threadIdx.x; k < p.s.n_red; k += kThreads) {
      prod_store<DT>(p.kind, x, dx, base + mxc__sum_step(&p.s, k),
                     E::load(og[o]), st, add);
    }
    __syncthreads();  // part[] is reused by the next group
  }
}

template <int DT>
void launch_prod_bwd(const mxc__gred_prod_plan &p, const void *ogv,
                     const void *xv, void *dxv, int add) {
  typedef typename MxcElem<DT>::T T;
  const T *og = (const T *)ogv, *x = (const T *)xv;
  T *dx = (T *)dxv;
  if (p.per_thread) {
    prod_bwd_thread_kernel<DT>
        <<<MXC__CUDA_GRID(p.s.n_out)>>>(p, og, x, dx, add);
  } else {
    prod_bwd_block_kernel<DT><<<mxc__cuda_grid_cap(p.s.n_out), kThreads, 0,
                                mxc__cuda_stream()>>>(p, og, x, dx, add);
  }
}

template <int DT>
void launch_bwd(const mxc__gred_bwd_plan &p, const void *og, const void *x,
                const void *y, void *dx, long long n, int add) {
  typedef typename MxcElem<DT>::T T;
  bwd_kernel<DT><<<MXC__CUDA_GRID(n)>>>(p, (const T *)og, (const T *)x,
                                        (const T *)y, (T *)dx, n, add);
}

typedef void (*prod_bwd_fn)(const mxc__gred_prod_plan &, const void *,
                            const void *, void *, int);
typedef void (*bwd_fn)(const mxc__gred_bwd_plan &, const void *,
                       const void *, const void *, void *, long long, int);

// Indexed by half_types.h's slot.
const prod_bwd_fn k_prod_bwd[] = {launch_prod_bwd<MXC_DTYPE_FLOAT32>,
                                  launch_prod_bwd<MXC_DTYPE_FLOAT16>,
                                  launch_prod_bwd<MXC_DTYPE_BFLOAT16>};
const bwd_fn k_bwd[] = {launch_bwd<MXC_DTYPE_FLOAT32>,
                        launch_bwd<MXC_DTYPE_FLOAT16>,
                        launch_bwd<MXC_DTYPE_BFLOAT16>};

// The slot of input 0's dtype, or MXC_ERR_DTYPE.
int slot_of(const mxc__gpu_call *c, int *slot, char *why, size_t why_len) {
  *slot = mxc__half_slot(c->in[0].dtype);
  if (*slot >= 0) return MXC_OK;
  snprintf(why, why_len,
           "dtype %d: the reductions take float32, float16 and bfloat16",
           c->in[0].dtype);
  return MXC_ERR_DTYPE;
}

int run_prod_bwd(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__gred_prod_plan p;
  int rc = mxc__gred_prod_plan_make(kind, c, &p, why, why_len), slot = 0;
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) {
    return rc;
  }
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  k_prod_bwd[slot](p, c->in[0].ptr, c->in[1].ptr, c->out[0].ptr,
                   c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("product gradient kernel", why, why_len);
}

template <int DT>
void launch_fwd(const mxc__gred_fwd_plan &p, const void *xv, void *outv,
                int add) {
  typedef typename MxcElem<DT>::T T;
  const T *x = (const T *)xv;
  T *out = (T *)outv;
  if (p.per_thread) {
    fwd_thread_kernel<DT><<<MXC__CUDA_GRID(p.s.n_out)>>>(p, x, out, add);
  } else {
    fwd_block_kernel<DT><<<mxc__cuda_grid_cap(p.s.n_out), kThreads, 0,
                           mxc__cuda_stream()>>>(p, x, out, add);
  }
}

typedef void (*fwd_fn)(const mxc__gred_fwd_plan &, const void *, void *,
                       int);

// Indexed by half_types.h's slot.
const fwd_fn k_fwd[] = {launch_fwd<MXC_DTYPE_FLOAT32>,
                        launch_fwd<MXC_DTYPE_FLOAT16>,
                        launch_fwd<MXC_DTYPE_BFLOAT16>};

int run_fwd(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__gred_fwd_plan p;
  int rc = mxc__gred_fwd_plan_make(kind, c, &p, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || p.s.n_out == 0) {
    return rc;
  }
  int slot = 0;
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  k_fwd[slot](p, c->in[0].ptr, c->out[0].ptr, c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("reduction kernel", why, why_len);
}

int run_bwd(int kind, const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__gred_bwd_plan p;
  int rc = mxc__gred_bwd_plan_make(kind, c, &p, why, why_len), slot = 0;
  long long n = c->out[0].size;
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL || n == 0) return rc;
  if ((rc = slot_of(c, &slot, why, why_len)) != MXC_OK) return rc;
  if ((rc = mxc__cuda_use_device(c->dev, why, why_len)) != MXC_OK) return rc;
  const void *y = mxc__gred_grad_uses_y(p.kind) ? c->in[2].ptr : nullptr;
  k_bwd[slot](p, c->in[0].ptr, c->in[1].ptr, y, c->out[0].ptr, n,
              c->req[0] == MXC__GPU_REQ_ADD);
  return mxc__cuda_finish("reduction gradient kernel", why, why_len);
}

}  // namespace

#define MXC__RED_FWD(fn, kind)                                         \
  extern "C" int mxc__cuda_red_##fn(const mxc__gpu_call *c, char *why, \
                                    size_t n) {                        \
    return run_fwd(kind, c, why, n);                                   \
  }
#define MXC__RED_BWD(fn, kind)                                       \
  extern "C" int mxc__cuda_red_backward_##fn(const mxc__gpu_call *c, \
                                             char *why, size_t n) {  \
    return run_bwd(kind, c, why, n);                                 \
  }
MXC__RED_FWD(max, MXC__GR_MAX)
MXC__RED_FWD(min, MXC__GR_MIN)
MXC__RED_FWD(prod, MXC__GR_PROD)
MXC__RED_FWD(nansum, MXC__GR_NANSUM)
MXC__RED_FWD(nanprod, MXC__GR_NANPROD)
MXC__RED_FWD(norm, MXC__GR_NORM)
MXC__RED_BWD(sum, MXC__GR_SUM)
MXC__RED_BWD(mean, MXC__GR_MEAN)
MXC__RED_BWD(max, MXC__GR_MAX)
MXC__RED_BWD(min, MXC__GR_MIN)
MXC__RED_BWD(nansum, MXC__GR_NANSUM)
MXC__RED_BWD(norm, MXC__GR_NORM)

extern "C" int mxc__cuda_red_backward_prod(const mxc__gpu_call *c, char *why,
                                           size_t n) {
  return run_prod_bwd(MXC__GR_PROD, c, why, n);
}
extern "C" int mxc__cuda_red_backward_nanprod(const mxc__gpu_call *c, char *why,
                                              size_t n) {
  return run_prod_bwd(MXC__GR_NANPROD, c, why, n);
}
