// The linalg kernels' own launches (la.h): widening loads, rounding
// stores with the write mode, and la_hd.h's element and item formulas
// over float64 slots. -fmad=false (BUILD): the formulas round as the
// host's.
#include <cuda_runtime.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/la.h"
#include "backends/cuda/la_hd.h"

namespace {

#define GRID_LOOP(n)                                                   \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
       i < (n); i += (long long)gridDim.x * blockDim.x)

template <typename T>
__global__ void load_kernel(const T *src, double *dst, long long n) {
  GRID_LOOP(n) dst[i] = (double)src[i];
}

// ADD as the CPU's MXC__ASSIGN: the value rounded to T, then added in T.
template <typename T>
__global__ void store_kernel(const double *src, T *dst, int add, long long n) {
  GRID_LOOP(n) {
    T v = (T)src[i];
    dst[i] = add ? dst[i] + v : v;
  }
}

__global__ void elem_kernel(mxc__la_step s, const double *x, const double *sb,
                            const double *sd, const int *info, double *out,
                            long long n) {
  long long per = s.r * s.cc, item_a = s.ra * s.ca;
  GRID_LOOP(n) {
    long long item = i / per, e = i % per;
    out[i] = mxc__la_elem(&s, x + item * item_a, sb, sd, info, item,
                          e / s.cc, e % s.cc);
  }
}

__global__ void item_kernel(mxc__la_step s, const double *x, const int *piv,
                            double *c, double *d, long long batch) {
  GRID_LOOP(batch) {
    mxc__la_item(&s, x + i * s.ra * s.ca, piv ? piv + i * s.ra : nullptr,
                 c + i, d ? d + i : nullptr);
  }
}

__global__ void ptrs_kernel(double **out, double *base, long long stride,
                            long long n) {
  GRID_LOOP(n) out[i] = base + i * stride;
}

const double *slot_or_null(double *const *slots, int s) {
  return s == MXC__LA_NONE ? nullptr : slots[s];
}

}  // namespace

extern "C" void mxc__la_cu_load(const void *src, int dtype, double *dst,
                                int64_t n) {
  if (n <= 0) return;
  if (dtype == MXC_DTYPE_FLOAT32) {
    load_kernel<<<MXC__CUDA_GRID(n)>>>((const float *)src, dst, n);
  } else {
    load_kernel<<<MXC__CUDA_GRID(n)>>>((const double *)src, dst, n);
  }
}

extern "C" void mxc__la_cu_store(const double *src, void *dst, int dtype,
                                 int req, int64_t n) {
  if (n <= 0 || req == MXC__GPU_REQ_NULL) return;
  int add = req == MXC__GPU_REQ_ADD;
  if (dtype == MXC_DTYPE_FLOAT32) {
    store_kernel<<<MXC__CUDA_GRID(n)>>>(src, (float *)dst, add, n);
  } else {
    store_kernel<<<MXC__CUDA_GRID(n)>>>(src, (double *)dst, add, n);
  }
}

extern "C" void mxc__la_cu_elem(const mxc__la_step *s, double *const *slots,
                                const int *info, int64_t batch) {
  long long n = batch * s->r * s->cc;
  if (n <= 0) return;
  elem_kernel<<<MXC__CUDA_GRID(n)>>>(*s, slots[s->a], slot_or_null(slots, s->b),
                                     slot_or_null(slots, s->d), info,
                                     slots[s->c], n);
}

extern "C" void mxc__la_cu_item(const mxc__la_step *s, double *const *slots,
                                const int *piv, int64_t batch) {
  if (batch <= 0) return;
  item_kernel<<<MXC__CUDA_GRID(batch)>>>(*s, slots[s->a], piv, slots[s->c],
                                         s->d == MXC__LA_NONE ? nullptr
                                                              : slots[s->d],
                                         batch);
}

extern "C" void mxc__la_cu_ptrs(double **out, double *base, int64_t stride,
                                int64_t batch) {
  if (batch <= 0) return;
  ptrs_kernel<<<MXC__CUDA_GRID(batch)>>>(out, base, stride, batch);
}
