/* The per-element code of the GPU's unary math kernels (unary.cu), for
 * the device (nvcc) and the host (C++ tests) from one text: one struct
 * per operator of ops/elemwise/unary_ops.h (all three parts) with the
 * float and double forms of f and f', and the element functions the
 * kernels run. tests/gpu:test_cuda_bcast_plan runs these on the host
 * against the CPU operators through the C API, so the C++ reading of the
 * list (overloads, conversions) is checked against the C one without a
 * GPU; only the device's libm differs there.
 *
 * C++ only (templates over half_hd.h's MxcElem). Thread-safety: pure
 * functions. */
#ifndef MXC_BACKENDS_CUDA_UNARY_HD_H_
#define MXC_BACKENDS_CUDA_UNARY_HD_H_

#include <math.h>

#include "backends/cuda/half_hd.h"
#include "ops/elemwise/unary_ops.h"

#ifdef __CUDACC__
#define MXC__UNARY_HD __host__ __device__ __forceinline__
/* Each operator's struct has four functions; a kernel uses one or two. */
#pragma nv_diag_suppress 177
#else
#define MXC__UNARY_HD inline
#endif

/* erfinv's and digamma's one text with the CPU's core/op/vmath.c. */
#define MXC__SP_HD MXC__UNARY_HD
#include "core/op/special_hd.h"

namespace mxc_unary {

/* The names MXC__UNARY_OPS_SPECIAL's expressions call, as
 * ops/elemwise/unary.c defines them: core/op/vmath.h's functions (here
 * special_hd.h's text), and lgamma without the global signgam (the
 * device's lgamma writes none). */
MXC__UNARY_HD double mxc__erfinv(double x) { return mxc__sp_erfinv(x); }
MXC__UNARY_HD double mxc__digamma(double x) { return mxc__sp_digamma(x); }
MXC__UNARY_HD double lgamma_local(double x) {
#ifdef __CUDA_ARCH__
  return lgamma(x);
#else
  int sign;
  return lgamma_r(x, &sign);
#endif
}

/* ops/elemwise/unary.c's rint_mxnet: the nearer of floor and ceil, floor
 * on a tie (MXNet's rule, not C's round-to-even). */
MXC__UNARY_HD double rint_mxnet(double x) {
  double lo = floor(x), hi = ceil(x);
  return x - lo <= hi - x ? lo : hi;
}

/* In C++ a float argument picks the float overload of exp, log, ... as
 * <tgmath.h> does in the CPU's C, and float op double is double in both:
 * the types match the CPU's step by step. */
#define MXC__UNARY_FNS(name, fwd, grad, int_ok, doc)       \
  struct U_##name {                                        \
    static MXC__UNARY_HD float f(float x) {                \
      return (float)(fwd);                                 \
    }                                                      \
    static MXC__UNARY_HD double d(double x) {              \
      return (double)(fwd);                                \
    }                                                      \
    static MXC__UNARY_HD float gf(float x, float y) {      \
      (void)x;                                             \
      (void)y;                                             \
      return (float)(grad);                                \
    }                                                      \
    static MXC__UNARY_HD double gd(double x, double y) {   \
      (void)x;                                             \
      (void)y;                                             \
      return (double)(grad);                               \
    }                                                      \
  };
MXC__UNARY_OPS_MAIN(MXC__UNARY_FNS)
MXC__UNARY_OPS_SPECIAL(MXC__UNARY_FNS)
MXC__UNARY_OPS_LAST(MXC__UNARY_FNS)
#undef MXC__UNARY_FNS

/* Forward element: float32 as the CPU's float loop (v = f(x) in float,
 * out = v or out + v); half types as its double path (f(x) in double,
 * plus the old value in double, rounded to float and then to the dtype). */
template <class U, int DT>
MXC__UNARY_HD typename MxcElem<DT>::T fwd_elem(typename MxcElem<DT>::T x,
                                                typename MxcElem<DT>::T out,
                                                int add) {
  typedef MxcElem<DT> E;
  if (DT == MXC_DTYPE_FLOAT32) {
    float v = U::f(E::load(x));
    return E::store(add ? E::load(out) + v : v);
  }
  double v = U::d((double)E::load(x));
  if (add) v += (double)E::load(out);
  return E::store((float)v);
}

/* Backward element, ddata = ograd * f'(x, y): float32 as ograd *
 * (float)f' in float; half types as the CPU's double path. */
template <class U, int DT>
MXC__UNARY_HD typename MxcElem<DT>::T bwd_elem(typename MxcElem<DT>::T og,
                                                typename MxcElem<DT>::T x,
                                                typename MxcElem<DT>::T y,
                                                typename MxcElem<DT>::T out,
                                                int add) {
  typedef MxcElem<DT> E;
  if (DT == MXC_DTYPE_FLOAT32) {
    float v = E::load(og) * U::gf(E::load(x), E::load(y));
    return E::store(add ? E::load(out) + v : v);
  }
  double v = (double)E::load(og) *
             U::gd((double)E::load(x), (double)E::load(y));
  if (add) v += (double)E::load(out);
  return E::store((float)v);
}

}  // namespace mxc_unary

#endif /* MXC_BACKENDS_CUDA_UNARY_HD_H_ */
