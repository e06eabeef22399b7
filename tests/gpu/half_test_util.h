// float16 / bfloat16 arrays in the GPU tests: host values are kept as
// float vectors and converted with core/base/half.h (the CPU kernels' own
// conversions, independent of the plug-in's backends/cuda/half_hd.h) when
// they go into or come out of an array of a half dtype.
#ifndef MXC_TESTS_GPU_HALF_TEST_UTIL_H_
#define MXC_TESTS_GPU_HALF_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
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

inline size_t ElemSize(int dt) {
  return IsHalf(dt) ? 2 : dt == MXC_DTYPE_FLOAT64 ? 8 : 4;
}

inline const char *DtypeName(int dt) {
  return dt == MXC_DTYPE_FLOAT16    ? "float16"
         : dt == MXC_DTYPE_BFLOAT16 ? "bfloat16"
         : dt == MXC_DTYPE_FLOAT64  ? "float64"
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

// ---- Cast between the floating dtypes (raw bytes, float64 included) ----

// The dtypes the GPU's Cast converts between.
inline std::vector<int> FloatDtypes() {
  return {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
          MXC_DTYPE_BFLOAT16};
}

// Values that exercise Cast's roundings: magnitudes 2^-27 to 2^20
// (float16's subnormals to beyond its range) with low bits float32 lacks,
// doubles just off a float16 / bfloat16 tie (where rounding to float32
// first would round twice), beyond float32's range, NaN, infinities,
// zeros.
inline std::vector<double> CastValues(size_t n, std::mt19937 *g) {
  std::uniform_real_distribution<double> e(-27., 20.), t(-1., 1.);
  std::vector<double> v(n);
  for (auto &x : v) {
    x = ((*g)() % 2 ? 1. : -1.) * std::exp2(e(*g)) * (1 + t(*g) * 1e-9);
  }
  const double special[] = {NAN, -INFINITY, INFINITY, 0., -0.,
                            1. + 0x1p-11 + 0x1p-40, 1. + 0x1p-8 + 0x1p-37,
                            -(1. + 0x1p-11 + 0x1p-40), 65520., 1e300,
                            0x1p-25, 0x1p-25 + 0x1p-60, 3.4e38};
  for (size_t i = 0; i < n && i < sizeof special / sizeof special[0]; ++i) {
    v[i] = special[i];
  }
  return v;
}

// v as an array of dtype dt (float64 kept, else through float32 with the
// CPU's own conversions: only a way to make inputs).
inline std::vector<uint8_t> CastBytes(int dt, const std::vector<double> &v) {
  std::vector<uint8_t> b(v.size() * ElemSize(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == MXC_DTYPE_FLOAT64) {
      std::memcpy(&b[i * 8], &v[i], 8);
    } else if (IsHalf(dt)) {
      uint16_t h = dt == MXC_DTYPE_FLOAT16 ? mxc__f32_to_f16((float)v[i])
                                           : mxc__f32_to_bf16((float)v[i]);
      std::memcpy(&b[i * 2], &h, 2);
    } else {
      float f = (float)v[i];
      std::memcpy(&b[i * 4], &f, 4);
    }
  }
  return b;
}

// Element i of an array of dtype dt as a double (exact).
inline double ElemAt(int dt, const std::vector<uint8_t> &b, size_t i) {
  if (dt == MXC_DTYPE_FLOAT64) {
    double d;
    std::memcpy(&d, &b[i * 8], 8);
    return d;
  }
  if (IsHalf(dt)) {
    uint16_t h;
    std::memcpy(&h, &b[i * 2], 2);
    return dt == MXC_DTYPE_FLOAT16 ? mxc__f16_to_f32(h) : mxc__bf16_to_f32(h);
  }
  float f;
  std::memcpy(&f, &b[i * 4], 4);
  return f;
}

// n elements of dtype dt holding the tests' poison (a NaN with a payload
// no arithmetic makes: kPoisonBits, HalfPoison, and float64's own).
inline std::vector<uint8_t> PoisonBytes(int dt, size_t n) {
  std::vector<uint8_t> b(n * ElemSize(dt));
  const uint64_t p64 = 0x7ff8dead0000deadull;
  const uint32_t p32 = kPoisonBits;
  uint16_t p16 = IsHalf(dt) ? HalfPoison(dt) : 0;
  for (size_t i = 0; i < n; ++i) {
    size_t es = ElemSize(dt);
    std::memcpy(&b[i * es], es == 8 ? (const void *)&p64
                            : es == 4 ? (const void *)&p32
                                      : (const void *)&p16,
                es);
  }
  return b;
}

// Runs Cast (or _backward_Cast: ograd x, data of dtype dst) from src to
// dst on device dev over x, the output starting as init, write mode req.
// The output's bytes, or *rc.
inline std::vector<uint8_t> RunCastOn(const std::string &op, int src, int dst,
                                      const std::vector<uint8_t> &x,
                                      const std::vector<uint8_t> &init,
                                      int req, int dev, int *rc) {
  int64_t n = (int64_t)(x.size() / ElemSize(src));
  auto make = [dev, n](int dt, const std::vector<uint8_t> *bytes) {
    mxc_ndarray a = nullptr;
    EXPECT_EQ(mxc_ndarray_create(&n, 1, dt, dev, 0, 0, &a), MXC_OK)
        << mxc_last_error();
    if (bytes && !bytes->empty()) {
      EXPECT_EQ(mxc_ndarray_copy_from_host(a, bytes->data(), bytes->size()),
                MXC_OK)
          << mxc_last_error();
    }
    return a;
  };
  bool bwd = op == "_backward_Cast";
  std::vector<uint8_t> zeros(init.size(), 0);
  mxc_ndarray in[2] = {make(src, &x), bwd ? make(dst, &zeros) : nullptr};
  mxc_ndarray out = make(dst, &init);
  // Cast's dtype is the target; _backward_Cast's the forward's target
  // (ograd's dtype), its output taking data's.
  std::string target = DtypeName(bwd ? src : dst);
  const char *keys[] = {"dtype"}, *vals[] = {target.c_str()};
  mxc_op h = nullptr;
  *rc = mxc_op_find(op.c_str(), &h);
  if (*rc == MXC_OK) {
    *rc = mxc_op_invoke(h, keys, vals, 1, in, bwd ? 2 : 1, &out, 1, &req);
  }
  if (*rc == MXC_OK) *rc = mxc_ndarray_wait_to_read(out);
  std::vector<uint8_t> r(init.size());
  if (*rc == MXC_OK && !r.empty()) {
    *rc = mxc_ndarray_copy_to_host(out, r.data(), r.size());
  }
  mxc_ndarray_free(in[0]);
  if (in[1]) mxc_ndarray_free(in[1]);
  mxc_ndarray_free(out);
  return r;
}

// got and want, arrays of dtype dt, bitwise, a NaN matching any NaN (the
// sign and payload of a NaN an operation makes are the hardware's); an
// element still holding the poison was never written.
inline void ExpectSameElems(const std::string &what, int dt,
                            const std::vector<uint8_t> &got,
                            const std::vector<uint8_t> &want) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t es = ElemSize(dt), n = got.size() / es;
  std::vector<uint8_t> poison = PoisonBytes(dt, 1);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i * es], poison.data(), es) == 0) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    double a = ElemAt(dt, got, i), b = ElemAt(dt, want, i);
    if (std::memcmp(&got[i * es], &want[i * es], es) != 0 &&
        !(std::isnan(a) && std::isnan(b))) {
      ADD_FAILURE() << what << ": element " << i << " is " << a << ", "
                    << b << " expected";
      return;
    }
  }
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_HALF_TEST_UTIL_H_
