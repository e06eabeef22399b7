// Activation and LeakyReLU against references written here with <cmath>,
// in float32 and float64, their gradients by finite differences, and bad
// input.
#include <functional>

#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

struct Act {
  const char *type;
  std::function<double(double)> f;
};

const Act kActs[] = {
    {"relu", [](double x) { return x > 0 ? x : 0; }},
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
    {"tanh", [](double x) { return std::tanh(x); }},
    {"softrelu", [](double x) { return std::log(1 + std::exp(x)); }},
    {"softsign", [](double x) { return x / (1 + std::fabs(x)); }},
};

// Inputs kept away from the kinks at 0 so finite differences are smooth.
std::vector<double> away_from_zero(int64_t n, unsigned seed) {
  auto x = uniform(n, -3, 3, seed);
  for (auto &v : x)
    if (std::fabs(v) < 0.05) v = 0.5;
  return x;
}

class Activation : public ::testing::TestWithParam<Act> {};

TEST_P(Activation, MatchesReference) {
  const Act &a = GetParam();
  auto x = away_from_zero(24, 3);
  x[0] = 30;  // softrelu's large-x branch
  x[1] = -30;
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr in = make({2, 3, 4}, x, dt);
    auto out = invoke("Activation", {&in}, {{"act_type", a.type}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), Shape({2, 3, 4}));
    EXPECT_EQ(out[0].dtype(), dt);
    std::vector<double> want;
    for (double v : read(in)) want.push_back(a.f(v));
    expect_near(read(out[0]), want, dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6,
                dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6, a.type);
  }
}

TEST_P(Activation, Gradient) {
  const Act &a = GetParam();
  grad_check("Activation", {{3, 4}}, {away_from_zero(12, 5)},
             {{"act_type", a.type}});
}

INSTANTIATE_TEST_SUITE_P(All, Activation, ::testing::ValuesIn(kActs),
                         [](const auto &info) {
                           return std::string(info.param.type);
                         });

TEST(ActivationBad, UnknownActTypeAndMissingActType) {
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("Activation", {&a}, {{"act_type", "swish"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("act_type"), std::string::npos) << err();
  EXPECT_NE(err().find("softsign"), std::string::npos) << err();
  invoke("Activation", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("act_type"), std::string::npos) << err();
}

TEST(ActivationBad, IntegerDataAndArity) {
  Arr a = make({2}, {1, 2}, MXC_DTYPE_INT32);
  int rc = 0;
  invoke("Activation", {&a}, {{"act_type", "relu"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float32 or float64"), std::string::npos) << err();
  Arr b = make({2}, {1, 2});
  invoke("Activation", {&b, &b}, {{"act_type", "relu"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 2 inputs; expected 1"), std::string::npos) << err();
}

// ---- LeakyReLU ----

const double kSeluAlpha = 1.6732632423543772848170429916717;
const double kSeluLambda = 1.0507009873554804934193349852946;

double leaky_ref(const std::string &t, double x, double slope) {
  if (t == "leaky") return x > 0 ? x : slope * x;
  if (t == "elu") return x > 0 ? x : slope * (std::exp(x) - 1);
  if (t == "selu")
    return kSeluLambda * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));  // gelu
}

TEST(LeakyReLU, MatchesReference) {
  auto x = away_from_zero(30, 7);
  for (std::string t : {"leaky", "elu", "selu", "gelu"}) {
    for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
      Arr in = make({5, 6}, x, dt);
      Params p = {{"act_type", t}};
      double slope = 0.25;  // the default
      if (t == "elu") {
        p.push_back({"slope", "0.7"});
        slope = 0.7;
      }
      auto out = invoke("LeakyReLU", {&in}, p);
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> want;
      for (double v : read(in)) want.push_back(leaky_ref(t, v, slope));
      double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
      expect_near(read(out[0]), want, tol, tol, t);
    }
  }
}

TEST(LeakyReLU, DefaultIsLeakyWithSlopeQuarter) {
  Arr in = make({4}, {-2, -1, 1, 2}, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("LeakyReLU", {&in})[0]),
            std::vector<double>({-0.5, -0.25, 1, 2}));
}

TEST(LeakyReLU, Gradients) {
  for (std::string t : {"leaky", "elu", "selu", "gelu"}) {
    grad_check("LeakyReLU", {{3, 4}}, {away_from_zero(12, 9)},
               {{"act_type", t}, {"slope", "0.3"}});
  }
}

// prelu: gamma per channel of axis 1 for data (N, C, H).
TEST(LeakyReLU, PreluPerChannelAndShared) {
  auto x = away_from_zero(2 * 3 * 4, 11);
  std::vector<double> g = {0.1, 0.2, 0.3};
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr in = make({2, 3, 4}, x, dt);
    Arr gamma = make({3}, g, dt);
    auto out = invoke("LeakyReLU", {&in, &gamma}, {{"act_type", "prelu"}});
    ASSERT_EQ(out.size(), 1u);
    auto xs = read(in), gs = read(gamma);
    std::vector<double> want;
    for (size_t i = 0; i < xs.size(); ++i) {
      double s = gs[(i / 4) % 3];
      want.push_back(xs[i] > 0 ? xs[i] : s * xs[i]);
    }
    expect_near(read(out[0]), want, 1e-6, 1e-7, "prelu");
    Arr shared = make({1}, {0.4}, dt);
    auto out2 = invoke("LeakyReLU", {&in, &shared}, {{"act_type", "prelu"}});
    want.clear();
    for (double v : xs) want.push_back(v > 0 ? v : 0.4 * v);
    expect_near(read(out2[0]), want, 1e-6, 1e-7, "prelu shared");
  }
}

TEST(LeakyReLU, PreluGradientIncludesGamma) {
  grad_check("LeakyReLU", {{2, 3, 4}, {3}},
             {away_from_zero(24, 13), {0.1, 0.2, 0.3}},
             {{"act_type", "prelu"}});
  grad_check("LeakyReLU", {{2, 3}, {1}}, {away_from_zero(6, 17), {0.25}},
             {{"act_type", "prelu"}});
}

// rrelu: inference uses the mean slope (lower + upper) / 2; training
// draws one slope per element in [lower, upper), kept in the hidden mask
// output, and the gradient of a negative element is its slope.
TEST(LeakyReLU, RreluInferenceMeanSlope) {
  auto xv = away_from_zero(12, 21);
  Arr x = make({3, 4}, xv, MXC_DTYPE_FLOAT64);
  Params p = {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.3"}};
  auto y = invoke("LeakyReLU", {&x}, p);
  ASSERT_EQ(y.size(), 1u);
  std::vector<double> want;
  for (double v : xv) want.push_back(v > 0 ? v : 0.2 * v);
  nnt::expect_near(read(y[0]), want, 1e-15, 0, "mean slope");
  nnt::grad_check_hidden("LeakyReLU", {{3, 4}}, {xv}, p, 2, 1);
}

TEST(LeakyReLU, RreluTrainingRandomSlopes) {
  nnt::Training on(1);
  auto xv = away_from_zero(400, 22);
  Arr x = make({20, 20}, xv, MXC_DTYPE_FLOAT64);
  Params p = {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.3"}};
  mxc_random_seed(5);
  auto y = nnt::invoke_n("LeakyReLU", {&x}, p, 2);
  ASSERT_EQ(y.size(), 2u);
  auto yv = read(y[0]), mask = read(y[1]);
  double lo = 1, hi = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    EXPECT_GE(mask[i], 0.1);
    EXPECT_LT(mask[i], 0.3);
    lo = std::min(lo, mask[i]);
    hi = std::max(hi, mask[i]);
    EXPECT_NEAR(yv[i], xv[i] > 0 ? xv[i] : mask[i] * xv[i], 1e-15);
  }
  EXPECT_LT(lo, 0.12) << "slopes spread over the range";
  EXPECT_GT(hi, 0.28);
  // Same seed, same slopes; the gradient uses them.
  mxc_random_seed(5);
  nnt::grad_check_hidden("LeakyReLU", {{20, 20}}, {xv}, p, 2, 1, 1e-6, 1e-4,
                         1e-6, {}, 5);
}

TEST(LeakyReLUBad, ArityGammaShapeAndType) {
  Arr x = make({2, 3}, uniform(6, -1, 1));
  int rc = 0;
  invoke("LeakyReLU", {&x}, {{"act_type", "prelu"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 1 inputs; expected 2"), std::string::npos) << err();
  Arr g2 = make({2}, {0.1, 0.2});
  invoke("LeakyReLU", {&x, &g2}, {{"act_type", "prelu"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("('gamma') has shape (2); expected (3)"),
            std::string::npos)
      << err();
  invoke("LeakyReLU", {&x, &g2}, {{"act_type", "leaky"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("LeakyReLU", {&x}, {{"act_type", "relu6"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("act_type"), std::string::npos) << err();
  invoke("LeakyReLU", {&x},
         {{"act_type", "rrelu"}, {"lower_bound", "0.5"}, {"upper_bound", "0.2"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr v = make({3}, {1, 2, 3});
  Arr g1 = make({1}, {0.1});
  invoke("LeakyReLU", {&v, &g1}, {{"act_type", "prelu"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("channel axis"), std::string::npos) << err();
}

}  // namespace

namespace {

// REQ_ADD accumulates into an existing output (how executors sum
// gradients); REQ_NULL leaves it alone.
TEST(ActivationWriteModes, AddAndNull) {
  Arr x = make({3}, {-1, 0.5, 2}, MXC_DTYPE_FLOAT64);
  Arr o = make({3}, {10, 20, 30}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("LeakyReLU", &op), MXC_OK);
  const char *k[] = {"slope", "0.5"};
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, &k[0], &k[1], 1, &x.h, 1, outs, 1, req),
            MXC_OK)
      << err();
  EXPECT_EQ(read(o), std::vector<double>({9.5, 20.5, 32}));
  req[0] = MXC_REQ_NULL;
  ASSERT_EQ(mxc_op_invoke(op, &k[0], &k[1], 1, &x.h, 1, outs, 1, req),
            MXC_OK);
  EXPECT_EQ(read(o), std::vector<double>({9.5, 20.5, 32}));
}

}  // namespace
