/* The per-element code of the GPU's binary kernels (scalar.cu: the scalar
 * forms `_<stem>_scalar` / `_r<stem>_scalar`, the same-shape forms
 * without a kernel elsewhere, and their gradients), for the device (nvcc)
 * and the host (C++ tests) from one text: ops/binary/binary_ops.h's list
 * expanded with float helpers that repeat ops/binary/kernels.c's float
 * ones (the CPU computes float32, float16 and bfloat16 in float: loads,
 * the float kernel, one rounding at the store). tests/gpu:
 * test_cuda_bcast_plan runs these on the host against the CPU operators
 * bitwise, so a helper that drifted from kernels.c fails there.
 *
 * C++ only (templates over half_hd.h's MxcElem). Thread-safety: pure
 * functions. */
#ifndef MXC_BACKENDS_CUDA_SCALAR_HD_H_
#define MXC_BACKENDS_CUDA_SCALAR_HD_H_

#include <math.h>

#include "backends/cuda/half_hd.h"
#include "ops/binary/binary_ops.h"

#ifdef __CUDACC__
#define MXC__BIN_HD __host__ __device__ __forceinline__
/* Each operator's struct has three functions; a kernel uses one or two. */
#pragma nv_diag_suppress 177
#else
#define MXC__BIN_HD inline
#endif

namespace mxc_bin {

/* kernels.c's float helpers. Python-style modulo: the divisor's sign, 0
 * for b = 0. maximum/minimum: NaN on either side gives NaN. */
MXC__BIN_HD float mod_f32(float a, float b) {
  if (b == 0) return 0;
  float r = fmodf(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
MXC__BIN_HD float max_f32(float a, float b) { return a > b || a != a ? a : b; }
MXC__BIN_HD float min_f32(float a, float b) { return a < b || a != a ? a : b; }

#define MXC__ADD(a, b) ((a) + (b))
#define MXC__SUB(a, b) ((a) - (b))
#define MXC__MUL(a, b) ((a) * (b))
#define MXC__DIV(a, b) ((a) / (b))
#define MXC__MOD(a, b) mod_f32(a, b)
#define MXC__POW(a, b) powf(a, b)
#define MXC__MAX(a, b) max_f32(a, b)
#define MXC__MIN(a, b) min_f32(a, b)

/* One struct per operator: f(a, b), df/da, df/db in float, as kernels.c's
 * float loops: (float)(f) and og * (float)(d). */
#define MXC__BIN_FNS(name, stem, F_, DA_, DB_, flags, doc, ...) \
  struct B_##name {                                             \
    static MXC__BIN_HD float fwd(float a, float b) {            \
      return (float)(F_);                                       \
    }                                                           \
    static MXC__BIN_HD float da(float a, float b) {             \
      (void)a;                                                  \
      (void)b;                                                  \
      return (float)(DA_);                                      \
    }                                                           \
    static MXC__BIN_HD float db(float a, float b) {             \
      (void)a;                                                  \
      (void)b;                                                  \
      return (float)(DB_);                                      \
    }                                                           \
  };
MXC__BINARY_OPS(MXC__BIN_FNS)
#undef MXC__BIN_FNS
#undef MXC__ADD
#undef MXC__SUB
#undef MXC__MUL
#undef MXC__DIV
#undef MXC__MOD
#undef MXC__POW
#undef MXC__MAX
#undef MXC__MIN

/* Stores v (float) into an element of DT, or adds it to the old value in
 * float first (the CPU's `out += v` in float, then one rounding). */
template <int DT>
MXC__BIN_HD typename MxcElem<DT>::T put(typename MxcElem<DT>::T out, float v,
                                        int add) {
  typedef MxcElem<DT> E;
  return E::store(add ? E::load(out) + v : v);
}

/* Forward element of f(a, b). */
template <class B, int DT>
MXC__BIN_HD typename MxcElem<DT>::T fwd_elem(float a, float b,
                                              typename MxcElem<DT>::T out,
                                              int add) {
  return put<DT>(out, B::fwd(a, b), add);
}

/* Gradient elements: og * df/da and og * df/db, in float. */
template <class B, int DT>
MXC__BIN_HD typename MxcElem<DT>::T grad_a(float og, float a, float b,
                                            typename MxcElem<DT>::T out,
                                            int add) {
  return put<DT>(out, og * B::da(a, b), add);
}
template <class B, int DT>
MXC__BIN_HD typename MxcElem<DT>::T grad_b(float og, float a, float b,
                                            typename MxcElem<DT>::T out,
                                            int add) {
  return put<DT>(out, og * B::db(a, b), add);
}

/* The scalar parameter as the CPU uses it (mxc__bin_scalar_set): rounded
 * to float, then to the dtype, and read back as float. */
template <int DT>
MXC__BIN_HD float scalar_of(double s) {
  typedef MxcElem<DT> E;
  return E::load(E::store((float)s));
}

/* ---- clip (ops/binary/misc.c) ---- */

/* Mirror of misc.c's private clip_param (the host test fills it with the
 * operator's own parser, so a drifted layout fails there). */
struct ClipParam {
  double a_min, a_max;
};

/* clip: the bounds rounded to float, x below a_min raised, above a_max
 * lowered (NaN stays), then stored or added in float. */
template <int DT>
MXC__BIN_HD typename MxcElem<DT>::T clip_elem(typename MxcElem<DT>::T x,
                                               typename MxcElem<DT>::T out,
                                               float lo, float hi, int add) {
  float v = MxcElem<DT>::load(x);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return put<DT>(out, v, add);
}

/* _backward_clip: ograd where a_min <= x <= a_max (the double bounds,
 * bounds included), else 0, plus the old value in double, rounded to
 * float and then to the dtype (the CPU's mxc__blob_get/set path). */
template <int DT>
MXC__BIN_HD typename MxcElem<DT>::T clip_grad_elem(
    typename MxcElem<DT>::T og, typename MxcElem<DT>::T x,
    typename MxcElem<DT>::T out, double a_min, double a_max, int add) {
  typedef MxcElem<DT> E;
  double xv = E::load(x);
  double g = (a_min <= xv && xv <= a_max) ? (double)E::load(og) : 0;
  if (add) g += (double)E::load(out);
  return E::store((float)g);
}

/* ---- LeakyReLU (ops/nn/activation.c): leaky, elu, selu, gelu ---- */

/* Mirror of activation.c's private leaky_param and its act_type order
 * (the host test fills it with the operator's own parser). */
struct LeakyParam {
  int act_type;
  double slope, lower_bound, upper_bound;
};
enum { LK_ELU, LK_GELU, LK_LEAKY, LK_PRELU, LK_SELU, LK_RRELU };

/* activation.c's constants. */
#define MXC__SELU_ALPHA 1.6732632423543772848170429916717
#define MXC__SELU_LAMBDA 1.0507009873554804934193349852946
#define MXC__SQRT1_2 0.70710678118654752440
#define MXC__INV_SQRT_2PI 0.39894228040143267794

/* The forward in double, as activation.c's MAP_X (then rounded to
 * float once and stored or added in float). */
MXC__BIN_HD double leaky_fwd(int kind, double a, double x) {
  switch (kind) {
    case LK_ELU: return x > 0 ? x : a * expm1(x);
    case LK_SELU:
      return MXC__SELU_LAMBDA * (x > 0 ? x : MXC__SELU_ALPHA * expm1(x));
    case LK_GELU: return 0.5 * x * (1 + erf(x * MXC__SQRT1_2));
    default: return x > 0 ? x : a * x;
  }
}

/* The derivative in double, as MAP_GRAD's expression. */
MXC__BIN_HD double leaky_grad(int kind, double a, double x) {
  switch (kind) {
    case LK_ELU: return x > 0 ? 1 : a * exp(x);
    case LK_SELU:
      return MXC__SELU_LAMBDA * (x > 0 ? 1 : MXC__SELU_ALPHA * exp(x));
    case LK_GELU:
      return 0.5 * (1 + erf(x * MXC__SQRT1_2)) +
             x * MXC__INV_SQRT_2PI * exp(-0.5 * x * x);
    default: return x > 0 ? 1 : a;
  }
}

/* float32 elements: (float)(expr) then out = v or out + v; the gradient
 * (float)((double)og * f'). */
MXC__BIN_HD float leaky_elem(int kind, double a, float x, float out,
                             int add) {
  float v = (float)leaky_fwd(kind, a, (double)x);
  return add ? out + v : v;
}
MXC__BIN_HD float leaky_grad_elem(int kind, double a, float og, float x,
                                  float out, int add) {
  float v = (float)((double)og * leaky_grad(kind, a, (double)x));
  return add ? out + v : v;
}

/* ---- hard_sigmoid (ops/nn/pointwise.c) and quadratic
 * (ops/sparse/quadratic.c), float32 ---- */

/* Mirrors of the operators' private parameter structs (the host test
 * fills them with each operator's own parser, so a drifted layout fails
 * there). */
struct HsParam {
  double alpha, beta;
};
struct QuadParam {
  double a, b, c;
};

/* hard_sigmoid: clip(alpha x + beta, 0, 1) in double, rounded to float
 * once, stored or added in float (pointwise.c's pw_value through
 * MXC__ASSIGN); the gradient og * alpha inside (0, 1), else og * 0, in
 * double then rounded. */
MXC__BIN_HD float hs_elem(double alpha, double beta, float x, float out,
                          int add) {
  double v = alpha * (double)x + beta;
  float r = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
  return add ? out + r : r;
}
MXC__BIN_HD float hs_grad_elem(double alpha, double beta, float og, float x,
                               float out, int add) {
  double v = alpha * (double)x + beta;
  float r = (float)((double)og * (v > 0 && v < 1 ? alpha : 0));
  return add ? out + r : r;
}

/* quadratic: (a x + b) x + c in float with the coefficients rounded to
 * float, as quadratic.c's float loop; the gradient og * (2a x + b) with
 * 2a rounded once. */
MXC__BIN_HD float quad_elem(const QuadParam &p, float x, float out,
                            int add) {
  float a = (float)p.a, b = (float)p.b, c = (float)p.c;
  float v = (a * x + b) * x + c;
  return add ? out + v : v;
}
MXC__BIN_HD float quad_grad_elem(const QuadParam &p, float og, float x,
                                 float out, int add) {
  float a2 = (float)(2 * p.a), b = (float)p.b;
  float v = og * (a2 * x + b);
  return add ? out + v : v;
}

}  // namespace mxc_bin

#endif /* MXC_BACKENDS_CUDA_SCALAR_HD_H_ */
