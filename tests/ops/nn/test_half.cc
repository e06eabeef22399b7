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

// BatchNorm as MXNet runs it in mixed precision: float16/bfloat16 data
// with float32 gamma, beta and statistics; the moving statistics are
// updated in float32.
TEST(HalfNN, BatchNormMixedPrecision) {
  const int n = 4, c = 2, hw = 3;
  for (int dt : kHalves) {
    for (int training : {0, 1}) {
      auto x = rounded(uniform(n * c * hw, -2, 2, 30 + training), dt);
      std::vector<double> gamma = {1.5, -0.5}, beta = {0.25, 1.0};
      std::vector<double> mm = {0.1, -0.2}, mv = {1.2, 0.8};
      Arr ax = make({n, c, hw}, x, dt), ag = make({c}, gamma),
          ab = make({c}, beta), amm = make({c}, mm), amv = make({c}, mv);
      int prev = 0;
      ASSERT_EQ(mxc_set_training(training, &prev), MXC_OK);
      int rc = -1;
      auto out = invoke("BatchNorm", {&ax, &ag, &ab, &amm, &amv},
                        {{"fix_gamma", "false"}, {"eps", "0.001"},
                         {"momentum", "0.9"}}, &rc);
      mxc_set_training(prev, &prev);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(out[0].dtype(), dt);
      auto got = read(out[0]);
      for (int ch = 0; ch < c; ++ch) {
        double mean = mm[ch], var = mv[ch];
        if (training) {
          double s = 0, s2 = 0;
          for (int b = 0; b < n; ++b) {
            for (int k = 0; k < hw; ++k) s += x[(b * c + ch) * hw + k];
          }
          mean = s / (n * hw);
          for (int b = 0; b < n; ++b) {
            for (int k = 0; k < hw; ++k) {
              double d = x[(b * c + ch) * hw + k] - mean;
              s2 += d * d;
            }
          }
          var = s2 / (n * hw);
          // Moving statistics, float32 arrays updated in place.
          EXPECT_NEAR(read(amm)[ch], 0.9 * mm[ch] + 0.1 * mean, 1e-6);
          EXPECT_NEAR(read(amv)[ch], 0.9 * mv[ch] + 0.1 * var, 1e-6);
        }
        for (int b = 0; b < n; ++b) {
          for (int k = 0; k < hw; ++k) {
            int i = (b * c + ch) * hw + k;
            double r = (x[i] - mean) / std::sqrt(var + 0.001) * gamma[ch] +
                       beta[ch];
            EXPECT_NEAR(got[i], r, unit_roundoff(dt) * std::fabs(r) + 1e-6)
                << "training " << training << " element " << i;
          }
        }
      }
    }
  }
}

TEST(HalfNN, BatchNormHalfParamsRejected) {
  Arr x = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT16);
  Arr p = make({2}, {1, 1}, MXC_DTYPE_FLOAT16);
  int rc = MXC_OK;
  invoke("BatchNorm", {&x, &p, &p, &p, &p}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float32 gamma"), std::string::npos) << err();
}

}  // namespace
}  // namespace mxct
