// float16 and bfloat16 in Activation and Embedding (computed in float32,
// stored half, as MXNet does; see core/op/half_compute.h). References are
// naive float64 formulas on the same half values, within one rounding to
// half (relative 2^-11 for float16, 2^-8 for bfloat16) plus float32's
// own error for the transcendental functions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {
namespace {

const int kHalves[] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16};

std::vector<double> rounded(const std::vector<double> &v, int dtype) {
  return decode(encode(v, dtype), dtype);
}

double unit_roundoff(int dtype) {
  return dtype == MXC_DTYPE_FLOAT16 ? std::ldexp(1.0, -11)
                                    : std::ldexp(1.0, -8);
}

double act_ref(const std::string &t, double x) {
  if (t == "relu") return x > 0 ? x : 0;
  if (t == "sigmoid") return 1 / (1 + std::exp(-x));
  if (t == "tanh") return std::tanh(x);
  if (t == "softrelu") return std::log1p(std::exp(x));
  return x / (1 + std::fabs(x));  // softsign
}

TEST(HalfNN, ActivationForward) {
  for (int dt : kHalves) {
    auto x = rounded(uniform(200, -6, 6, 21), dt);
    Arr a = make({200}, x, dt);
    for (std::string t : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
      int rc = -1;
      auto out = invoke("Activation", {&a}, {{"act_type", t}}, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(out[0].dtype(), dt);
      auto got = read(out[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        double r = act_ref(t, x[i]);
        EXPECT_NEAR(got[i], r, unit_roundoff(dt) * std::fabs(r) + 1e-6)
            << t << " x=" << x[i];
      }
    }
  }
}

TEST(HalfNN, ActivationBackward) {
  for (int dt : kHalves) {
    auto x = rounded(uniform(50, -3, 3, 22), dt);
    auto g = rounded(uniform(50, -1, 1, 23), dt);
    std::vector<double> y(50);
    for (int i = 0; i < 50; ++i) y[i] = act_ref("tanh", x[i]);
    y = rounded(y, dt);
    Arr ag = make({50}, g, dt), ax = make({50}, x, dt), ay = make({50}, y, dt);
    int rc = -1;
    auto out = invoke("_backward_Activation", {&ag, &ax, &ay},
                      {{"act_type", "tanh"}}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    auto got = read(out[0]);
    for (int i = 0; i < 50; ++i) {
      double r = g[i] * (1 - y[i] * y[i]);  // from the stored output
      EXPECT_NEAR(got[i], r, unit_roundoff(dt) * std::fabs(r) + 1e-6) << i;
    }
  }
}

TEST(HalfNN, EmbeddingLooksUpRowsExactly) {
  for (int dt : kHalves) {
    const std::string name = dt == MXC_DTYPE_FLOAT16 ? "float16" : "bfloat16";
    auto w = rounded(uniform(5 * 3, -4, 4, 24), dt);
    Arr aw = make({5, 3}, w, dt);
    Arr idx = make({2, 2}, {4, 0, 2, 9}, MXC_DTYPE_INT32);  // 9 clips to 4
    Params p = {{"input_dim", "5"}, {"output_dim", "3"}, {"dtype", name}};
    int rc = -1;
    auto out = invoke("Embedding", {&idx, &aw}, p, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    EXPECT_EQ(out[0].dtype(), dt);
    EXPECT_EQ(out[0].shape(), (Shape{2, 2, 3}));
    auto got = read(out[0]);
    const int rows[] = {4, 0, 2, 4};
    for (int r = 0; r < 4; ++r) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(got[r * 3 + j], w[rows[r] * 3 + j]);
    }
    // The weight's dtype must match the parameter.
    Arr f32 = make({5, 3}, w, MXC_DTYPE_FLOAT32);
    invoke("Embedding", {&idx, &f32}, p, &rc);
    EXPECT_EQ(rc, MXC_ERR_DTYPE) << err();
  }
}

TEST(HalfNN, EmbeddingBackwardAccumulatesInFloat32) {
  // 4096 gradient rows of 1 onto one weight row. Accumulated in half the
  // sum would stall at 2048 (2048 + 1 rounds back to 2048); accumulated
  // in float32 it is 4096, exactly representable in half.
  const int n = 4096;
  std::vector<double> g(n * 2, 1.0), data(n, 1.0);
  Arr ag = make({n, 2}, g, MXC_DTYPE_FLOAT16);
  Arr ad = make({n}, data, MXC_DTYPE_FLOAT32);
  int rc = -1;
  auto out = invoke("_backward_Embedding", {&ag, &ad},
                    {{"input_dim", "3"}, {"output_dim", "2"},
                     {"dtype", "float16"}}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(read(out[0]), (std::vector<double>{0, 0, n, n, 0, 0}));
}

}  // namespace
}  // namespace mxct
