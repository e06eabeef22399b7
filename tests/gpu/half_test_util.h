// float16 / bfloat16 arrays in the GPU tests: host values are kept as
// float vectors and converted with core/base/half.h (the CPU kernels' own
// conversions, independent of the plug-in's backends/cuda/half_hd.h) when
// they go into or come out of an array of a half dtype.
#ifndef MXC_TESTS_GPU_HALF_TEST_UTIL_H_
#define MXC_TESTS_GPU_HALF_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "core/base/half.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"

namespace mxct {

inline bool IsHalf(int dt) {
  return dt == MXC_DTYPE_FLOAT16 || dt == MXC_DTYPE_BFLOAT16;
}

inline size_t ElemSize(int dt) { return IsHalf(dt) ? 2 : 4; }

inline const char *DtypeName(int dt) {
  return dt == MXC_DTYPE_FLOAT16    ? "float16"
         : dt == MXC_DTYPE_BFLOAT16 ? "bfloat16"
                                    : "float32";
}

// The half counterpart of kPoisonBits: a signalling NaN with a payload
// (no arithmetic makes one), written where the float vector holds the
// float poison, and read back as the float poison.
inline uint16_t HalfPoison(int dt) {
  return dt == MXC_DTYPE_FLOAT16 ? 0x7deau : 0x7fadu;
}

inline float HalfToFloat(int dt, uint16_t h) {
  if (h == HalfPoison(dt)) return Poison();
  return dt == MXC_DTYPE_FLOAT16 ? mxc__f16_to_f32(h) : mxc__bf16_to_f32(h);
}

inline uint16_t FloatToHalf(int dt, float f) {
  if (IsPoison(f)) return HalfPoison(dt);
  return dt == MXC_DTYPE_FLOAT16 ? mxc__f32_to_f16(f) : mxc__f32_to_bf16(f);
}

// v as the bytes of an array of dtype dt (float32 or a half type).
inline std::vector<uint8_t> ToBytes(int dt, const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * ElemSize(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsHalf(dt)) {
      uint16_t h = FloatToHalf(dt, v[i]);
      std::memcpy(&b[i * 2], &h, 2);
    } else {
      std::memcpy(&b[i * 4], &v[i], 4);
    }
  }
  return b;
}

// The bytes of an array of dtype dt as floats (widening is exact: equal
// floats mean equal half bits, NaN payloads included).
inline std::vector<float> FromBytes(int dt, const std::vector<uint8_t> &b) {
  std::vector<float> v(b.size() / ElemSize(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsHalf(dt)) {
      uint16_t h;
      std::memcpy(&h, &b[i * 2], 2);
      v[i] = HalfToFloat(dt, h);
    } else {
      std::memcpy(&v[i], &b[i * 4], 4);
    }
  }
  return v;
}

// v rounded to dtype dt and widened back: the values an array of dt holds.
inline std::vector<float> RoundTo(int dt, const std::vector<float> &v) {
  return FromBytes(dt, ToBytes(dt, v));
}

// One unit in the last place of dt at |x|, no finer than at 1 (below 1 an
// absolute bound: float32 sums of terms near 1 that cancel keep an error
// of the terms' size, not the result's). float16 keeps 10 fraction bits,
// bfloat16 7.
inline float UlpAtLeast1(int dt, float x) {
  int bits = dt == MXC_DTYPE_FLOAT16 ? 10 : 7;
  int e = 0;
  std::frexp(std::fmax(1.f, std::fabs(x)), &e);  // x = f * 2^e, f in [.5, 1)
  return std::ldexp(1.f, e - 1 - bits);
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_HALF_TEST_UTIL_H_
