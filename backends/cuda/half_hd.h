/* float16 / bfloat16 <-> float32 for the plug-in's kernels, compiled for
 * the host (plain C, tests) and the device (nvcc) from this one text.
 *
 * Why not cuda_fp16.h's __float2half_rn / __float2bfloat16_rn: they round
 * to nearest even like the CPU, but a NaN comes out as the canonical
 * 0x7fff, while core/base/half.h (every CPU kernel) keeps the sign
 * (float16: sign | 0x7e00) or the payload with the quiet bit
 * (bfloat16: (bits >> 16) | 0x40). A half result must be the CPU's bit for
 * bit, NaNs included, so the conversions are written here with integer
 * and float operations only, and tests/gpu:test_cuda_bcast_plan compares
 * them with core/base/half.h: every 16-bit pattern widened, and the
 * rounding of every half's neighbourhood (midpoints, one float ulp either
 * side) and of random floats narrowed.
 *
 * The formulation suits a GPU (no loop): a float16 subnormal widens as its
 * mantissa times 2^-24 (exact in float), and a float that narrows to a
 * float16 subnormal is rounded by one float addition of 0.5, whose ulp
 * (2^-24) is the subnormal step: the hardware rounds to nearest even.
 * That needs subnormal floats kept, which nvcc does by default (no
 * -ftz=true / --use_fast_math in nvcc.bzl).
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_HALF_HD_H_
#define MXC_BACKENDS_CUDA_HALF_HD_H_

#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __CUDACC__
#define MXC__HALF_HD __host__ __device__ __forceinline__
#define MXC__HALF_MEMBER __host__ __device__ __forceinline__
#else
#include <string.h>
#define MXC__HALF_HD static inline
#define MXC__HALF_MEMBER inline
#endif

MXC__HALF_HD uint32_t mxc__hd_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
#endif
}

MXC__HALF_HD float mxc__hd_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, 4);
  return f;
#endif
}

MXC__HALF_HD float mxc__hd_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) { /* zero or subnormal: man * 2^-24, exact */
    float v = (float)man * 5.9604644775390625e-8f;
    return mxc__hd_float(mxc__hd_bits(v) | sign);
  }
  if (exp == 31) return mxc__hd_float(sign | 0x7f800000u | man << 13);
  return mxc__hd_float(sign | (exp + 112u) << 23 | man << 13);
}

MXC__HALF_HD uint16_t mxc__hd_f32_to_f16(float f) {
  uint32_t u = mxc__hd_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* to inf */
  if (a < 0x38800000u) { /* below 2^-14: a subnormal (or 0, or 2^-14) */
    float r = mxc__hd_float(a) + 0.5f;
    return (uint16_t)(sign | (mxc__hd_bits(r) - 0x3f000000u));
  }
  /* round the 13 dropped bits to nearest even; a carry moves into the
   * exponent, which is what rounding up to the next binade means */
  uint32_t v = a + 0xfffu + ((a >> 13) & 1u);
  return (uint16_t)(sign | ((v >> 13) - (112u << 10)));
}

MXC__HALF_HD float mxc__hd_bf16_to_f32(uint16_t h) {
  return mxc__hd_float((uint32_t)h << 16);
}

MXC__HALF_HD uint16_t mxc__hd_f32_to_bf16(float f) {
  uint32_t u = mxc__hd_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* float32 nearest to d with round-to-odd (ops/shape/cast.c's rule for
 * float64 -> half: RN to float32 could round a value just above a half
 * tie onto the tie, and the second rounding then goes the wrong way;
 * round-to-odd keeps it off). RN first, one ulp toward zero if that
 * rounded away from zero, then the last bit set when bits were lost. */
MXC__HALF_HD float mxc__hd_f64_to_f32_odd(double d) {
  float f = (float)d;
  if (d != d || (double)f == d) return f; /* NaN, infinity or exact */
  uint32_t u = mxc__hd_bits(f);
  double af = f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
  if (af > ad) u -= 1; /* sign-magnitude: a decrement goes toward zero */
  return mxc__hd_float(u | 1u);
}

#ifdef __cplusplus
/* Element access by dtype for the .cu templates: MxcElem<DT>::T is the
 * storage type, load widens to float, store rounds from float. The
 * kernels are written once over MxcElem and instantiated for the three
 * dtypes (float32 loads and stores are the identity). */
template <int DT>
struct MxcElem {
  typedef float T;
  static MXC__HALF_MEMBER float load(T x) { return x; }
  static MXC__HALF_MEMBER T store(float x) { return x; }
};
template <>
struct MxcElem<MXC_DTYPE_FLOAT16> {
  typedef uint16_t T;
  static MXC__HALF_MEMBER float load(T x) { return mxc__hd_f16_to_f32(x); }
  static MXC__HALF_MEMBER T store(float x) { return mxc__hd_f32_to_f16(x); }
};
template <>
struct MxcElem<MXC_DTYPE_BFLOAT16> {
  typedef uint16_t T;
  static MXC__HALF_MEMBER float load(T x) { return mxc__hd_bf16_to_f32(x); }
  static MXC__HALF_MEMBER T store(float x) { return mxc__hd_f32_to_bf16(x); }
};

/* Cast between the floating dtypes (float32, float64, float16,
 * bfloat16) as ops/shape/cast.c: the value read exactly as a double,
 * converted once (float32 to nearest; half types to nearest even from
 * the round-to-odd float32); add mode adds the converted value to the
 * output in the output's type (float for the half types, as the CPU's
 * strided add). cast.cu's kernel runs cast_elem; the host test too. */
template <int DT>
struct MxcCastT {
  typedef typename MxcElem<DT>::T T;
  static MXC__HALF_MEMBER double wide(T x) { return MxcElem<DT>::load(x); }
  static MXC__HALF_MEMBER T from(double d) {
    return MxcElem<DT>::store(mxc__hd_f64_to_f32_odd(d));
  }
  static MXC__HALF_MEMBER T add(T a, T b) {
    return MxcElem<DT>::store(MxcElem<DT>::load(a) + MxcElem<DT>::load(b));
  }
};
template <>
struct MxcCastT<MXC_DTYPE_FLOAT32> {
  typedef float T;
  static MXC__HALF_MEMBER double wide(T x) { return x; }
  static MXC__HALF_MEMBER T from(double d) { return (float)d; }
  static MXC__HALF_MEMBER T add(T a, T b) { return a + b; }
};
template <>
struct MxcCastT<MXC_DTYPE_FLOAT64> {
  typedef double T;
  static MXC__HALF_MEMBER double wide(T x) { return x; }
  static MXC__HALF_MEMBER T from(double d) { return d; }
  static MXC__HALF_MEMBER T add(T a, T b) { return a + b; }
};

/* One element of Cast from SRC to DST: out's new value. */
template <int SRC, int DST>
MXC__HALF_MEMBER typename MxcCastT<DST>::T mxc__hd_cast_elem(
    typename MxcCastT<SRC>::T x, typename MxcCastT<DST>::T out, int add) {
  typename MxcCastT<DST>::T v = MxcCastT<DST>::from(MxcCastT<SRC>::wide(x));
  return add ? MxcCastT<DST>::add(out, v) : v;
}
#endif

#endif /* MXC_BACKENDS_CUDA_HALF_HD_H_ */
