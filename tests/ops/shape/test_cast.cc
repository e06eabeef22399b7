// Cast: every pair of the nine dtypes on values all of them hold exactly,
// golden bit patterns for rounding (including cases where rounding through
// float32 first would round twice), truncation and saturation toward
// integers, wrapping between integers, bool, the gradient, and bad dtypes.
#include <cmath>
#include <limits>

#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

const char *dtype_name(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: return "float32";
    case MXC_DTYPE_FLOAT64: return "float64";
    case MXC_DTYPE_FLOAT16: return "float16";
    case MXC_DTYPE_BFLOAT16: return "bfloat16";
    case MXC_DTYPE_UINT8: return "uint8";
    case MXC_DTYPE_INT8: return "int8";
    case MXC_DTYPE_INT32: return "int32";
    case MXC_DTYPE_INT64: return "int64";
    default: return "bool";
  }
}

std::vector<double> cast(const std::vector<double> &v, int from, int to) {
  Arr a = make({(int64_t)v.size()}, v, from);
  auto r = invoke("Cast", {&a}, {{"dtype", dtype_name(to)}});
  EXPECT_EQ(r.size(), 1u);
  if (r.empty()) return {};
  EXPECT_EQ(r[0].dtype(), to);
  return read(r[0]);
}

// The raw element bits of a cast (uint64 holding 1, 2, 4 or 8 bytes).
template <typename In>
std::vector<uint64_t> cast_bits(const std::vector<In> &v, int from, int to) {
  Bytes b(v.size() * sizeof(In));
  memcpy(b.data(), v.data(), b.size());
  Arr a = make_raw({(int64_t)v.size()}, from, b);
  auto r = invoke("Cast", {&a}, {{"dtype", dtype_name(to)}});
  std::vector<uint64_t> bits;
  if (r.empty()) return bits;
  Bytes ob = raw(r[0]);
  size_t es = esize(to);
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t u = 0;
    memcpy(&u, &ob[i * es], es);
    bits.push_back(u);
  }
  return bits;
}

TEST(Cast, EveryPairOnExactValues) {
  std::vector<double> v = {0, 1, 2, 3, 100, 127};
  for (int from : all_dtypes()) {
    for (int to : all_dtypes()) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      std::vector<double> in = v;
      if (from == MXC_DTYPE_BOOL) in = {0, 1, 1, 0, 1, 1};
      std::vector<double> want = in;
      if (to == MXC_DTYPE_BOOL)
        for (auto &x : want) x = x != 0;
      EXPECT_EQ(cast(in, from, to), want);
    }
  }
}

TEST(Cast, Alias) {
  Arr a = make({2}, {1.5, -1.5});
  auto r = invoke("cast", {&a}, {{"dtype", "int8"}});
  EXPECT_EQ(read(r[0]), std::vector<double>({1, -1}));
}

TEST(Cast, FloatToIntegerTruncatesTowardZeroAndSaturates) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cast({2.5, -2.7, 0.9, -0.9, 1e10, -1e10, nan, inf},
                 MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32),
            std::vector<double>(
                {2, -2, 0, 0, 2147483647, -2147483648.0, 0, 2147483647}));
  EXPECT_EQ(cast({300.7, -5, 255.9, nan}, MXC_DTYPE_FLOAT64, MXC_DTYPE_UINT8),
            std::vector<double>({255, 0, 255, 0}));
  EXPECT_EQ(
      cast({-128.9, 127.9, -1000, 1000}, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT8),
      std::vector<double>({-128, 127, -128, 127}));
  auto big = cast_bits<double>({9.3e18, -9.3e18, 4611686018427387904.0},
                               MXC_DTYPE_FLOAT64, MXC_DTYPE_INT64);
  EXPECT_EQ(big,
            std::vector<uint64_t>({0x7fffffffffffffffull, 0x8000000000000000ull,
                                   0x4000000000000000ull}));
  EXPECT_EQ(cast({-2.5, 3.75}, MXC_DTYPE_BFLOAT16, MXC_DTYPE_INT64),
            std::vector<double>({-2, 3}));
  EXPECT_EQ(cast({-2.5, 3.75}, MXC_DTYPE_FLOAT16, MXC_DTYPE_INT32),
            std::vector<double>({-2, 3}));
}

TEST(Cast, IntegersWrap) {
  EXPECT_EQ(cast({300, -1, 256, -129}, MXC_DTYPE_INT32, MXC_DTYPE_UINT8),
            std::vector<double>({44, 255, 0, 127}));
  EXPECT_EQ(cast({200, 255}, MXC_DTYPE_UINT8, MXC_DTYPE_INT8),
            std::vector<double>({-56, -1}));
  auto w = cast_bits<int64_t>({(1ll << 40) + 5, -1, INT64_MIN}, MXC_DTYPE_INT64,
                              MXC_DTYPE_INT32);
  EXPECT_EQ(w, std::vector<uint64_t>({5, 0xffffffffull, 0}));
  auto x = cast_bits<int64_t>({INT64_MAX, INT64_MIN}, MXC_DTYPE_INT64,
                              MXC_DTYPE_INT64);
  EXPECT_EQ(
      x, std::vector<uint64_t>({0x7fffffffffffffffull, 0x8000000000000000ull}));
}

TEST(Cast, ToAndFromBool) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cast({0.0, -0.0, 0.1, -3, nan}, MXC_DTYPE_FLOAT64, MXC_DTYPE_BOOL),
            std::vector<double>({0, 0, 1, 1, 1}));
  EXPECT_EQ(cast({0, 2, -1, 256}, MXC_DTYPE_INT32, MXC_DTYPE_BOOL),
            std::vector<double>({0, 1, 1, 1}));
  EXPECT_EQ(cast({0, 1}, MXC_DTYPE_BOOL, MXC_DTYPE_BFLOAT16),
            std::vector<double>({0, 1}));
}

TEST(Cast, HalfTypesRoundToNearestEvenGolden) {
  // float16: 65504 is the largest finite value; 2049 and 2051 are ties
  // between representable neighbours (even wins); 65520 rounds to inf.
  EXPECT_EQ(cast_bits<float>({65504.0f, 2049.0f, 2051.0f, 65520.0f, 65519.0f,
                              -0.0f, 1e-8f, 5.960464477539063e-8f},
                             MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16),
            std::vector<uint64_t>({0x7bff, 0x6800, 0x6802, 0x7c00, 0x7bff,
                                   0x8000, 0x0000, 0x0001}));
  // bfloat16: 1/3 = 0x3eaaaaab -> 0x3eab; 1 + 2^-8 is a tie -> 1.
  EXPECT_EQ(cast_bits<float>({1.0f / 3, 1.00390625f, 1.01171875f, -2.0f},
                             MXC_DTYPE_FLOAT32, MXC_DTYPE_BFLOAT16),
            std::vector<uint64_t>({0x3eab, 0x3f80, 0x3f82, 0xc000}));
  // From float64 just above a half-way point: rounding to float32 first
  // would land exactly on the tie and round down to even.
  double above_f16_tie = 1 + std::ldexp(1, -11) + std::ldexp(1, -40);
  double above_bf16_tie = 1 + std::ldexp(1, -8) + std::ldexp(1, -40);
  EXPECT_EQ(
      cast_bits<double>({above_f16_tie, -above_f16_tie, 1 + std::ldexp(1, -11)},
                        MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16),
      std::vector<uint64_t>({0x3c01, 0xbc01, 0x3c00}));
  EXPECT_EQ(cast_bits<double>({above_bf16_tie, 1e300, -1e300},
                              MXC_DTYPE_FLOAT64, MXC_DTYPE_BFLOAT16),
            std::vector<uint64_t>({0x3f81, 0x7f80, 0xff80}));
  // int64 above a bfloat16 tie by 1 (float32 would round to the tie).
  EXPECT_EQ(cast_bits<int64_t>(
                {(1ll << 24) + (1ll << 16) + 1, (1ll << 24) + (1ll << 16),
                 -((1ll << 24) + (1ll << 16) + 1), INT64_MAX},
                MXC_DTYPE_INT64, MXC_DTYPE_BFLOAT16),
            std::vector<uint64_t>({0x4b81, 0x4b80, 0xcb81, 0x5f00}));
  EXPECT_EQ(cast_bits<int32_t>({2049, 65519, 65520, -70000}, MXC_DTYPE_INT32,
                               MXC_DTYPE_FLOAT16),
            std::vector<uint64_t>({0x6800, 0x7bff, 0x7c00, 0xfc00}));
}

TEST(Cast, HalfToWiderIsExact) {
  auto f = cast_bits<uint16_t>({0x7bff, 0x0001, 0xfc00, 0x3555},
                               MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32);
  float want[] = {65504.0f, 5.9604644775390625e-8f,
                  -std::numeric_limits<float>::infinity(), 0.333251953125f};
  for (size_t i = 0; i < 4; ++i) {
    uint32_t u;
    memcpy(&u, &want[i], 4);
    EXPECT_EQ(f[i], u) << i;
  }
  EXPECT_EQ(
      cast_bits<uint16_t>({0x3eab}, MXC_DTYPE_BFLOAT16, MXC_DTYPE_FLOAT64),
      std::vector<uint64_t>({0x3fd5600000000000ull}));
}

TEST(Cast, GradientCastsBack) {
  check_grad("Cast", {{2, 3}}, {uniform(6, -1, 1)}, {{"dtype", "float64"}});
  Arr x = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT32);
  auto y = invoke("Cast", {&x}, {{"dtype", "float64"}});
  Arr og = make({3}, {0.5, 1.0 / 3, -2}, MXC_DTYPE_FLOAT64);
  std::vector<const char *> k = {"dtype"}, v = {"float64"};
  mxc_ndarray g = nullptr;
  ASSERT_EQ(mxct_grad_eval("Cast", k.data(), v.data(), 1, &x.h, 1, &y[0].h, 1,
                           &og.h, &g),
            MXC_OK)
      << err();
  Arr ga(g);
  EXPECT_EQ(ga.dtype(), MXC_DTYPE_FLOAT32);
  EXPECT_EQ(read(ga), std::vector<double>({0.5, (double)(1.0f / 3), -2}));
}

TEST(Cast, AddWriteMode) {
  Arr x = make({3}, {1.9, -1.9, 2.5}, MXC_DTYPE_FLOAT64);
  Arr o = make({3}, {10, 10, 10}, MXC_DTYPE_INT32);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Cast", &op), MXC_OK);
  const char *k[] = {"dtype"}, *v[] = {"int32"};
  int req[] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &x.h, 1, &o.h, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({11, 9, 12}));
}

TEST(Cast, LongArraysCrossChunks) {
  auto v = uniform(1000, -100, 100, 3);
  auto got = cast(v, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32);
  ASSERT_EQ(got.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(got[i], std::trunc(v[i])) << i;
}

TEST(Cast, BadDtype) {
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("Cast", {&a}, {{"dtype", "float128"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'dtype'"), std::string::npos) << err();
  EXPECT_NE(err().find("float128"), std::string::npos) << err();
  invoke("Cast", {&a}, {{"dtype", "None"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("must name a dtype"), std::string::npos) << err();
  invoke("Cast", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("required parameter 'dtype'"), std::string::npos)
      << err();
  Arr o = make({2}, {0, 0}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Cast", &op), MXC_OK);
  const char *k[] = {"dtype"}, *v[] = {"int32"};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, &a.h, 1, &o.h, 1, nullptr),
            MXC_ERR_DTYPE);
  EXPECT_NE(err().find("expected int32"), std::string::npos) << err();
}

}  // namespace
