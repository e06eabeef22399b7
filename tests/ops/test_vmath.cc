// The vectorized float32 exp, sigmoid and tanh (elemwise operators and
// Activation) and relu (Activation) and their gradients, on arrays large enough to be split
// over threads, against double-precision libm: a few float ulp, special
// values (0, -0, +-inf, NaN, tiny and huge inputs) handled as tanhf/expf.
// Also the split of long binary rows over threads (ops/binary/kernels.c)
// against plain loops here, float32 and float64, forward and backward.
#include <cmath>
#include <limits>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

double ulp_of(double v) {
  float f = std::fabs(float(v));
  if (f == 0 || std::isinf(f)) return std::numeric_limits<float>::denorm_min();
  return double(std::nextafter(f, INFINITY) - f);
}

struct Fn {
  const char *op, *act;
  double (*f)(double);
  double (*df)(double y);  // derivative from the output
  double lo, hi;
};

double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double ref_exp(double x) { return std::exp(x); }
double ref_tanh(double x) { return std::tanh(x); }

const Fn kFns[] = {
    {"tanh", "tanh", ref_tanh, [](double y) { return 1 - y * y; }, -12, 12},
    {"sigmoid", "sigmoid", ref_sigmoid,
     [](double y) { return y * (1 - y); }, -30, 30},
    {"exp", nullptr, ref_exp, [](double y) { return y; }, -100, 88},
};

std::vector<double> inputs(const Fn &f) {
  auto x = uniform(200000, f.lo, f.hi, 3);
  auto small = uniform(50000, -1e-3, 1e-3, 4);
  x.insert(x.end(), small.begin(), small.end());
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, 1e-30, -1e-30, 1e-42, 0.3, -0.35, 0.7, 9.5,
                   -9.5, 10.0, 50.0, -50.0, inf, -inf}) {
    x.push_back(v);
  }
  for (auto &v : x) v = double(float(v));
  return x;
}

void expect_ulps(const std::vector<double> &got, const std::vector<double> &x,
                 double (*f)(double), const char *what) {
  ASSERT_EQ(got.size(), x.size());
  int bad = 0;
  for (size_t i = 0; i < x.size() && bad < 10; ++i) {
    double want = double(float(f(x[i])));
    if (std::isnan(want) || std::isinf(want) || want == 0) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << what << " x=" << x[i];
      } else if (!(got[i] == want ||
                   (want == 0 && std::fabs(got[i]) < 1e-37))) {
        ADD_FAILURE() << what << " x=" << x[i] << " got " << got[i]
                      << " want " << want;
        ++bad;
      }
      continue;
    }
    if (std::fabs(got[i] - f(x[i])) > 4 * ulp_of(want) + 1e-45) {
      ADD_FAILURE() << what << " x=" << x[i] << " got " << got[i]
                    << " want " << f(x[i]);
      ++bad;
    }
  }
}

TEST(Vmath, ForwardWithinFewUlp) {
  for (const auto &f : kFns) {
    auto x = inputs(f);
    Arr a = make({int64_t(x.size())}, x);
    expect_ulps(read(invoke(f.op, {&a})[0]), x, f.f, f.op);
    if (f.act) {
      expect_ulps(read(invoke("Activation", {&a}, {{"act_type", f.act}})[0]),
                  x, f.f, f.act);
    }
  }
}

TEST(Vmath, NaNPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Arr a = make({3}, {nan, 1, -nan});
  for (const auto &f : kFns) {
    auto y = read(invoke(f.op, {&a})[0]);
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[2])) << f.op;
  }
}

TEST(Vmath, BackwardAndAccumulation) {
  for (const auto &f : kFns) {
    auto x = uniform(100003, -3, 3, 5);
    auto og = uniform(x.size(), -1, 1, 6);
    for (auto &v : og) v = double(float(v));
    Shape s = {int64_t(x.size())};
    Arr ax = make(s, x), aog = make(s, og);
    auto y = invoke(f.op, {&ax});
    auto yv = read(y[0]);
    std::string bname = std::string("_backward_") + f.op;
    auto dx = read(invoke(bname, {&aog, &ax, &y[0]})[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      double want = og[i] * f.df(yv[i]);
      ASSERT_NEAR(dx[i], want, 1e-6 * (1 + std::fabs(want))) << f.op << i;
    }
    if (f.act) {
      auto dxa = read(invoke("_backward_Activation", {&aog, &ax, &y[0]},
                             {{"act_type", f.act}})[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_NEAR(dxa[i], dx[i], 1e-6 * (1 + std::fabs(dx[i]))) << f.act;
      }
    }
  }
}

// Activation relu (float32 through the vectorized map): exact, the sign
// of zero included, NaN kept; its gradient from the output g * (1 above
// 0, 0 else), NaN for NaN. Large enough to be split over threads.
TEST(Vmath, ReluExactWithSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto x = uniform(150001, -3, 3, 8);
  for (double v : {0.0, -0.0, inf, -inf, nan, 1e-42, -1e-42}) x.push_back(v);
  for (auto &v : x) v = double(float(v));
  auto og = uniform(x.size(), -1, 1, 9);
  og.back() = -2;  // times the last input's 0 gives -0
  for (auto &v : og) v = double(float(v));
  Shape s = {int64_t(x.size())};
  Arr ax = make(s, x), aog = make(s, og);
  auto y = invoke("Activation", {&ax}, {{"act_type", "relu"}});
  auto yv = read(y[0]);
  auto dx = read(invoke("_backward_Activation", {&aog, &ax, &y[0]},
                        {{"act_type", "relu"}})[0]);
  for (size_t i = 0; i < x.size(); ++i) {
    bool keep = x[i] > 0 || std::isnan(x[i]);
    float want = keep ? float(x[i]) : 0.0f;
    float m = std::isnan(x[i]) ? float(x[i]) : x[i] > 0 ? 1.0f : 0.0f;
    float dwant = float(og[i]) * m;
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(yv[i]) && std::isnan(dx[i])) << i;
      continue;
    }
    ASSERT_EQ(float(yv[i]), want) << i;
    ASSERT_EQ(std::signbit(yv[i]), std::signbit(want)) << i;
    ASSERT_EQ(float(dx[i]), dwant) << i;
    ASSERT_EQ(std::signbit(dx[i]), std::signbit(dwant)) << i;
  }
}

TEST(ParallelRows, BinaryForwardAndBackward) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    const int64_t n = 300007;  // several chunks and a short last one
    auto a = uniform(n, -2, 2, 11), b = uniform(n, 0.5, 2, 12);
    auto og = uniform(n, -1, 1, 13);
    if (dt == MXC_DTYPE_FLOAT32) {
      for (auto *v : {&a, &b, &og})
        for (auto &e : *v) e = double(float(e));
    }
    Arr xa = make({n}, a, dt), xb = make({n}, b, dt), xg = make({n}, og, dt);
    double tol = dt == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-14;
    auto mul = read(invoke("mul", {&xa, &xb})[0]);
    auto div = read(invoke("div", {&xa, &xb})[0]);
    auto grads = invoke_count("_backward_div", {&xg, &xa, &xb}, {}, -1);
    ASSERT_EQ(grads.size(), 2u) << err();
    auto ga = read(grads[0]), gb = read(grads[1]);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(mul[i], a[i] * b[i], tol * (1 + std::fabs(a[i] * b[i])));
      ASSERT_NEAR(div[i], a[i] / b[i], tol * (1 + std::fabs(a[i] / b[i])));
      double wa = og[i] / b[i], wb = -og[i] * a[i] / (b[i] * b[i]);
      ASSERT_NEAR(ga[i], wa, tol * (1 + std::fabs(wa))) << i;
      ASSERT_NEAR(gb[i], wb, 4 * tol * (1 + std::fabs(wb))) << i;
    }
  }
}

}  // namespace
