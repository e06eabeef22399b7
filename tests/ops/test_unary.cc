// Element-wise unary operators against naive references computed here with
// <cmath>, in float32 and float64 (plus half types and integers where
// supported), and their gradients by finite differences in float64.
#include <functional>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

struct Case {
  const char *name;
  std::function<double(double)> ref;
  double lo, hi;  // input domain for tests
  bool differentiable;
};

double sgn(double x) { return (x > 0) - (x < 0); }

const Case kCases[] = {
    {"abs", [](double x) { return std::fabs(x); }, -3, 3, true},
    {"sign", sgn, -3, 3, false},
    {"negative", [](double x) { return -x; }, -3, 3, true},
    {"relu", [](double x) { return x > 0 ? x : 0; }, -3, 3, true},
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -5, 5, true},
    {"tanh", [](double x) { return std::tanh(x); }, -3, 3, true},
    {"softsign", [](double x) { return x / (1 + std::fabs(x)); }, -3, 3, true},
    {"softrelu", [](double x) { return std::log1p(std::exp(x)); }, -5, 5, true},
    {"exp", [](double x) { return std::exp(x); }, -3, 3, true},
    {"expm1", [](double x) { return std::expm1(x); }, -3, 3, true},
    {"log", [](double x) { return std::log(x); }, 0.1, 5, true},
    {"log1p", [](double x) { return std::log1p(x); }, -0.5, 5, true},
    {"log2", [](double x) { return std::log2(x); }, 0.1, 5, true},
    {"log10", [](double x) { return std::log10(x); }, 0.1, 5, true},
    {"sqrt", [](double x) { return std::sqrt(x); }, 0.1, 5, true},
    {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.1, 5, true},
    {"cbrt", [](double x) { return std::cbrt(x); }, 0.1, 5, true},
    {"square", [](double x) { return x * x; }, -3, 3, true},
    {"reciprocal", [](double x) { return 1 / x; }, 0.2, 5, true},
    {"sin", [](double x) { return std::sin(x); }, -3, 3, true},
    {"cos", [](double x) { return std::cos(x); }, -3, 3, true},
    {"tan", [](double x) { return std::tan(x); }, -1.2, 1.2, true},
    {"arcsin", [](double x) { return std::asin(x); }, -0.9, 0.9, true},
    {"arccos", [](double x) { return std::acos(x); }, -0.9, 0.9, true},
    {"arctan", [](double x) { return std::atan(x); }, -3, 3, true},
    {"sinh", [](double x) { return std::sinh(x); }, -3, 3, true},
    {"cosh", [](double x) { return std::cosh(x); }, -3, 3, true},
    {"arcsinh", [](double x) { return std::asinh(x); }, -3, 3, true},
    {"arccosh", [](double x) { return std::acosh(x); }, 1.1, 5, true},
    {"arctanh", [](double x) { return std::atanh(x); }, -0.9, 0.9, true},
    {"degrees", [](double x) { return x * 180 / M_PI; }, -3, 3, true},
    {"radians", [](double x) { return x * M_PI / 180; }, -3, 3, true},
    {"floor", [](double x) { return std::floor(x); }, -3, 3, false},
    {"ceil", [](double x) { return std::ceil(x); }, -3, 3, false},
    {"round", [](double x) { return std::round(x); }, -3, 3, false},
    // MXNet's rint: the nearer of floor and ceil, floor on a tie.
    {"rint",
     [](double x) {
       double lo = std::floor(x), hi = std::ceil(x);
       return x - lo <= hi - x ? lo : hi;
     },
     -3, 3, false},
    {"trunc", [](double x) { return std::trunc(x); }, -3, 3, false},
    {"fix", [](double x) { return std::trunc(x); }, -3, 3, false},
    {"erf", [](double x) { return std::erf(x); }, -2, 2, true},
    {"gamma", [](double x) { return std::tgamma(x); }, 0.5, 4, true},
    {"gammaln", [](double x) { return std::lgamma(x); }, 0.5, 4, true},
    {"logical_not", [](double x) { return x == 0 ? 1.0 : 0.0; }, -1, 1, false},
};

class Unary : public ::testing::TestWithParam<Case> {};

TEST_P(Unary, MatchesReferenceFloat64AndFloat32) {
  const Case &c = GetParam();
  auto x = uniform(37, c.lo, c.hi, 7);
  if (std::string(c.name) == "logical_not") x[3] = 0;
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr a = make({37}, x, dt);
    auto out = invoke(c.name, {&a});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), dt);
    auto y = read(out[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      double xi = dt == MXC_DTYPE_FLOAT32 ? (double)(float)x[i] : x[i];
      double want = c.ref(xi);
      double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 2e-6;
      EXPECT_NEAR(y[i], want, tol * (1 + std::fabs(want)))
          << c.name << " x=" << xi;
    }
  }
}

TEST_P(Unary, HalfTypesRoundTripThroughFloat) {
  const Case &c = GetParam();
  auto x = uniform(9, c.lo, c.hi, 3);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    Arr a = make({9}, x, dt);
    auto xs = read(a);  // the values as stored in the half type
    auto out = invoke(c.name, {&a});
    ASSERT_EQ(out.size(), 1u);
    auto y = read(out[0]);
    double tol = dt == MXC_DTYPE_FLOAT16 ? 2e-3 : 1.6e-2;
    for (size_t i = 0; i < x.size(); ++i) {
      double want = c.ref(xs[i]);
      EXPECT_NEAR(y[i], want, tol * (1 + std::fabs(want))) << c.name;
    }
  }
}

TEST_P(Unary, GradientMatchesFiniteDifferences) {
  const Case &c = GetParam();
  if (!c.differentiable) return;
  auto x = uniform(6, c.lo, c.hi, 11);
  // Keep away from kinks of abs/relu.
  for (auto &v : x)
    if (std::fabs(v) < 1e-3) v = 0.5;
  grad_check(c.name, {{2, 3}}, {x});
}

INSTANTIATE_TEST_SUITE_P(All, Unary, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

TEST(UnaryExtra, ErfinvInvertsErf) {
  auto x = uniform(50, -0.999, 0.999, 5);
  Arr a = make({50}, x, MXC_DTYPE_FLOAT64);
  auto y = read(invoke("erfinv", {&a})[0]);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(std::erf(y[i]), x[i], 1e-13) << x[i];
  grad_check("erfinv", {{4}}, {{-0.5, 0.1, 0.3, 0.7}});
}

TEST(UnaryExtra, IntegerTypesWhereMeaningful) {
  Arr a = make({5}, {-2, -1, 0, 1, 3}, MXC_DTYPE_INT32);
  EXPECT_EQ(read(invoke("abs", {&a})[0]), std::vector<double>({2, 1, 0, 1, 3}));
  EXPECT_EQ(read(invoke("square", {&a})[0]),
            std::vector<double>({4, 1, 0, 1, 9}));
  EXPECT_EQ(read(invoke("relu", {&a})[0]), std::vector<double>({0, 0, 0, 1, 3}));
  int rc = 0;
  auto r = invoke("exp", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("floating-point"), std::string::npos) << err();
}

TEST(UnaryExtra, BadArity) {
  Arr a = make({2}, {1, 2});
  int rc = 0;
  mxc_op op;
  ASSERT_EQ(mxc_op_find("relu", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, a.h};
  mxc_ndarray outs[1] = {nullptr};
  rc = mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, nullptr);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 2 inputs; expected 1"), std::string::npos) << err();
  EXPECT_EQ(outs[0], nullptr);
}

TEST(UnaryExtra, WriteModesAddAndNull) {
  Arr a = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr o = make({3}, {10, 20, 30}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("square", &op), MXC_OK);
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a.h, 1, outs, 1, req),
            MXC_OK);
  EXPECT_EQ(read(o), std::vector<double>({11, 24, 39}));
  req[0] = MXC_REQ_NULL;
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a.h, 1, outs, 1, req),
            MXC_OK);
  EXPECT_EQ(read(o), std::vector<double>({11, 24, 39}));
  Arr wrong = make({4}, {0, 0, 0, 0}, MXC_DTYPE_FLOAT64);
  outs[0] = wrong.h;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a.h, 1, outs, 1, nullptr),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("output 0 has shape (4)"), std::string::npos) << err();
}

}  // namespace
