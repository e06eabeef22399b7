/* The per-element functions of run-time fused kernels (fuse_gen.h): one
 * source for the device and the host.
 *
 * Why one source: every generated kernel starts with this file's text
 * (embedded by a genrule, fuse_prelude_text.c) and calls these functions
 * for its micro-ops, while the host tests include the same file as C and
 * run the same functions over the generator's plan against the CPU fused
 * operator. What the tests check on the host is then the code the GPU
 * runs, compiled by another compiler (NVRTC with --fmad=false, IEEE
 * division, no flush to zero; GCC in ISO C mode, which does not contract
 * either).
 *
 * Each function computes what the CPU's float32 chain computes for its
 * micro-op (ops/fused/fast.c), operation for operation: NaN propagation of
 * maximum/minimum/relu decided on the bits, exp by the same Cody-Waite
 * reduction and degree-7 polynomial (so GPU and CPU agree bit for bit, not
 * just within expf's ulps), sigmoid as 1 / (1 + exp(-x)) with that exp.
 *
 * NVRTC compiles this without any header: nothing here may include one
 * on the device side. */
#ifndef MXC_BACKENDS_CUDA_FUSE_PRELUDE_H_
#define MXC_BACKENDS_CUDA_FUSE_PRELUDE_H_

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define MXF_FN static __device__ __forceinline__
MXF_FN float mxf_f(unsigned u) { return __uint_as_float(u); }
MXF_FN unsigned mxf_u(float f) { return __float_as_uint(f); }
#else
#include <string.h>
#define MXF_FN static inline
MXF_FN float mxf_f(unsigned u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
MXF_FN unsigned mxf_u(float f) {
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u;
}
#endif

/* 1 when x is a NaN, from its bits (no float compare to be optimised). */
MXF_FN int mxf_isnan(float x) { return (mxf_u(x) & 0x7fffffffu) > 0x7f800000u; }

MXF_FN float mxf_add(float x, float y) { return x + y; }
MXF_FN float mxf_sub(float x, float y) { return x - y; }
MXF_FN float mxf_mul(float x, float y) { return x * y; }
MXF_FN float mxf_div(float x, float y) { return x / y; }
/* maximum(a, b) = a > b || a is NaN ? a : b (MXNet's): NaN on either side
 * gives NaN, and of two zeros the second operand. */
MXF_FN float mxf_max(float x, float y) {
  return (x > y || mxf_isnan(x)) ? x : y;
}
MXF_FN float mxf_min(float x, float y) {
  return (x < y || mxf_isnan(x)) ? x : y;
}
MXF_FN float mxf_copy(float x) { return x; }
MXF_FN float mxf_neg(float x) { return -x; }
MXF_FN float mxf_abs(float x) { return mxf_f(mxf_u(x) & 0x7fffffffu); }
MXF_FN float mxf_square(float x) { return x * x; }
/* x when its bits as a signed int are > 0 (x > 0, or a NaN) or it is a
 * NaN of either sign; +0 otherwise (-0 included). */
MXF_FN float mxf_relu(float x) {
  int keep = (int)mxf_u(x) > 0 || mxf_isnan(x);
  return keep ? x : 0.0f;
}

/* relu's gradient from its output y, as Activation's backward computes it
 * (core/op/vmath.c's vrelu_grad): g * y for a NaN y (NaN), g * 1 when y's
 * bits as a signed int are > 0, g * 0 otherwise (an infinite g: NaN). */
MXF_FN float mxf_relu_grad(float g, float y) {
  float d = (int)mxf_u(y) > 0 ? 1.0f : 0.0f;
  return g * (mxf_isnan(y) ? y : d);
}

/* e^x as fast.c's vexp: |x| clamped to 104 on its bits (a NaN kept),
 * n = round(x / ln 2) by the 1.5 * 2^23 shifter, r = x - n ln 2 in two
 * parts, the Taylor polynomial of degree 7, then 2^n as two factors. */
MXF_FN float mxf_exp(float x) {
  unsigned ux = mxf_u(x), ax = ux & 0x7fffffffu;
  unsigned nan_bits = ax > 0x7f800000u ? ax : 0u;
  if (ax >= 0x42d00000u) ax = 0x42d00000u; /* 104.0f */
  float xc = mxf_f(ax | nan_bits | (ux & 0x80000000u));
  const float shifter = 12582912.0f;
  float t = xc * 1.44269504088896341f + shifter;
  float nf = t - shifter;
  unsigned n = mxf_u(t) - 0x4b400000u;
  float r = xc - nf * 0.693359375f;
  r = r - nf * -2.12194440054690583e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  unsigned n1 = (unsigned)((int)n >> 1);
  unsigned n2 = n - n1;
  float s1 = mxf_f((n1 + 127u) << 23);
  float s2 = mxf_f((n2 + 127u) << 23);
  return p * s1 * s2;
}

MXF_FN float mxf_sigmoid(float x) { return 1.0f / (1.0f + mxf_exp(-x)); }

#endif /* MXC_BACKENDS_CUDA_FUSE_PRELUDE_H_ */
