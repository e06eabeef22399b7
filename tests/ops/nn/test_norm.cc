// LayerNorm and L2Normalization against loop references, their gradients
// by finite differences (through their hidden outputs), and bad input.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;
using nnt::invoke_n;

namespace {

// Groups of a (outer, n, inner) layout: element (o, j, k).
int64_t at(int64_t o, int64_t j, int64_t k, int64_t n, int64_t inner) {
  return (o * n + j) * inner + k;
}

std::vector<double> ln_ref(const std::vector<double> &x, int64_t outer,
                           int64_t n, int64_t inner,
                           const std::vector<double> &g,
                           const std::vector<double> &b, double eps) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double s = 0, q = 0;
      for (int64_t j = 0; j < n; ++j) s += x[at(o, j, k, n, inner)];
      double mean = s / n;
      for (int64_t j = 0; j < n; ++j) {
        double d = x[at(o, j, k, n, inner)] - mean;
        q += d * d;
      }
      double sd = std::sqrt(q / n + eps);
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = at(o, j, k, n, inner);
        y[i] = (x[i] - mean) / sd * g[j] + b[j];
      }
    }
  return y;
}

TEST(LayerNorm, LastAxisAndMiddleAxis) {
  auto x = uniform(2 * 3 * 4, -2, 2, 31);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 2e-6;
    Arr in = make({2, 3, 4}, x, dt);
    auto g4 = uniform(4, 0.5, 1.5, 32), b4 = uniform(4, -1, 1, 33);
    Arr g = make({4}, g4, dt), b = make({4}, b4, dt);
    auto out = invoke("LayerNorm", {&in, &g, &b});
    ASSERT_EQ(out.size(), 1u);
    expect_near(read(out[0]), ln_ref(read(in), 6, 4, 1, read(g), read(b), 1e-5),
                tol, tol, "axis -1");
    auto g3 = uniform(3, 0.5, 1.5, 34), b3 = uniform(3, -1, 1, 35);
    Arr g_ = make({3}, g3, dt), b_ = make({3}, b3, dt);
    auto out1 =
        invoke("LayerNorm", {&in, &g_, &b_}, {{"axis", "1"}, {"eps", "0.01"}});
    expect_near(read(out1[0]),
                ln_ref(read(in), 2, 3, 4, read(g_), read(b_), 0.01), tol, tol,
                "axis 1");
  }
}

TEST(LayerNorm, HiddenMeanAndStd) {
  Arr in = make({2, 2}, {1, 3, 0, 4}, MXC_DTYPE_FLOAT64);
  Arr g = make({2}, {1, 1}, MXC_DTYPE_FLOAT64),
      b = make({2}, {0, 0}, MXC_DTYPE_FLOAT64);
  auto out = invoke_n("LayerNorm", {&in, &g, &b}, {{"eps", "0"}}, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].shape(), Shape({2, 1}));
  expect_near(read(out[1]), {2, 2}, 1e-15, 0, "mean");
  expect_near(read(out[2]), {1, 2}, 1e-15, 0, "std");
  expect_near(read(out[0]), {-1, 1, -1, 1}, 1e-15, 0, "output");
}

TEST(LayerNorm, Gradient) {
  nnt::grad_check_hidden(
      "LayerNorm", {{3, 4}, {4}, {4}},
      {uniform(12, -2, 2, 36), uniform(4, 0.5, 1.5, 37), uniform(4, -1, 1, 38)},
      {}, 3, 1);
  nnt::grad_check_hidden(
      "LayerNorm", {{2, 3, 2}, {3}, {3}},
      {uniform(12, -2, 2, 39), uniform(3, 0.5, 1.5, 40), uniform(3, -1, 1, 41)},
      {{"axis", "1"}}, 3, 1);
}

TEST(LayerNormBad, GammaShapeAndAxis) {
  Arr x = make({2, 3}, uniform(6, -1, 1));
  Arr g2 = make({2}, {1, 1}), g3 = make({3}, {1, 1, 1});
  int rc = 0;
  invoke("LayerNorm", {&x, &g2, &g3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("('gamma') has shape (2); expected (3)"),
            std::string::npos)
      << err();
  invoke("LayerNorm", {&x, &g3, &g3}, {{"axis", "-3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("LayerNorm", {&x, &g3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// ---- L2Normalization ----

std::vector<double> l2_ref(const std::vector<double> &x, int64_t outer,
                           int64_t n, int64_t inner, double eps) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double q = 0;
      for (int64_t j = 0; j < n; ++j)
        q += x[at(o, j, k, n, inner)] * x[at(o, j, k, n, inner)];
      for (int64_t j = 0; j < n; ++j)
        y[at(o, j, k, n, inner)] =
            x[at(o, j, k, n, inner)] / std::sqrt(q + eps);
    }
  return y;
}

TEST(L2Normalization, ThreeModes) {
  // data (N=2, C=3, 2, 2)
  auto x = uniform(24, -2, 2, 43);
  struct M {
    const char *mode;
    int64_t outer, n, inner;
    Shape norm;
  } modes[] = {{"instance", 2, 12, 1, {2}},
               {"channel", 2, 3, 4, {2, 1, 2, 2}},
               {"spatial", 6, 4, 1, {2, 3}}};
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
    Arr in = make({2, 3, 2, 2}, x, dt);
    for (auto &m : modes) {
      auto out = invoke_n("L2Normalization", {&in},
                          {{"mode", m.mode}, {"eps", "0.5"}}, 2);
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[1].shape(), m.norm) << m.mode;
      expect_near(read(out[0]), l2_ref(read(in), m.outer, m.n, m.inner, 0.5),
                  tol, tol, m.mode);
    }
  }
  Arr in = make({2, 3, 2, 2}, x);
  auto def = invoke("L2Normalization", {&in});  // instance, eps 1e-10
  expect_near(read(def[0]), l2_ref(read(in), 2, 12, 1, 1e-10), 1e-6, 1e-7,
              "default");
}

TEST(L2Normalization, Gradient) {
  for (auto mode : {"instance", "channel", "spatial"}) {
    nnt::grad_check_hidden("L2Normalization", {{2, 3, 2}},
                           {uniform(12, -2, 2, 44)}, {{"mode", mode}}, 2, 1);
  }
}

TEST(L2NormalizationBad, OneAxisAndMode) {
  Arr v = make({3}, {1, 2, 3});
  int rc = 0;
  invoke("L2Normalization", {&v}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("at least 2 axes"), std::string::npos) << err();
  Arr m = make({1, 3}, {1, 2, 3});
  invoke("L2Normalization", {&m}, {{"mode", "batch"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("mode"), std::string::npos) << err();
}

}  // namespace
