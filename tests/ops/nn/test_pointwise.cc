// smooth_l1, hard_sigmoid, softmin, MakeLoss and make_loss against
// formulas written here from MXNet's definitions, gradients by finite
// differences (the loss heads: their constant gradients), bad parameters.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

TEST(SmoothL1, ValuesBothSidesOfTheKnee) {
  std::vector<double> xv = {-3, -0.3, -0.05, 0, 0.05, 0.2, 0.26, 2};
  for (double sigma : {1.0, 2.0}) {
    std::vector<double> want;
    for (double x : xv) {
      double t = 1 / (sigma * sigma);
      want.push_back(std::fabs(x) < t ? 0.5 * sigma * sigma * x * x
                                      : std::fabs(x) - 0.5 * t);
    }
    Arr x = make({8}, xv, MXC_DTYPE_FLOAT64);
    auto out = invoke("smooth_l1", {&x}, {{"scalar", std::to_string(sigma)}});
    expect_near(read(out[0]), want, 1e-15, 1e-15, "sigma");
  }
  grad_check("smooth_l1", {{6}}, {{-2, -0.4, -0.1, 0.1, 0.3, 1.5}},
             {{"scalar", "2"}});
}

TEST(HardSigmoid, ClipAndGradient) {
  std::vector<double> xv = {-5, -2.4, -1, 0, 1.3, 2.6, 7};
  std::vector<double> want;
  for (double x : xv) want.push_back(std::min(1.0, std::max(0.0, 0.3 * x + 0.4)));
  Arr x = make({7}, xv, MXC_DTYPE_FLOAT64);
  auto out = invoke("hard_sigmoid", {&x}, {{"alpha", "0.3"}, {"beta", "0.4"}});
  expect_near(read(out[0]), want, 1e-15, 1e-15, "hard_sigmoid");
  Arr d = make({3}, {-10, 0, 10});
  auto def = invoke("hard_sigmoid", {&d});  // alpha 0.2, beta 0.5
  expect_near(read(def[0]), {0, 0.5, 1}, 0, 1e-7, "defaults");
  grad_check("hard_sigmoid", {{5}}, {{-4, -1, 0.5, 2, 4}});
}

std::vector<double> softmin_ref(const std::vector<double> &x, int64_t outer,
                                int64_t n, int64_t inner, double t) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double s = 0;
      for (int64_t j = 0; j < n; ++j) s += std::exp(-x[(o * n + j) * inner + k] / t);
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = (o * n + j) * inner + k;
        y[i] = std::exp(-x[i] / t) / s;
      }
    }
  return y;
}

TEST(Softmin, AxesTemperatureAndGradient) {
  auto xv = uniform(2 * 3 * 4, -3, 3, 541);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
    Arr x = make({2, 3, 4}, xv, dt);
    auto last = invoke("softmin", {&x});
    expect_near(read(last[0]), softmin_ref(read(x), 6, 4, 1, 1), tol, tol,
                "axis -1");
    auto mid = invoke("softmin", {&x}, {{"axis", "1"}, {"temperature", "2.5"}});
    expect_near(read(mid[0]), softmin_ref(read(x), 2, 3, 4, 2.5), tol, tol,
                "axis 1, T 2.5");
  }
  Arr big = make({3}, {1000, 1001, -1000}, MXC_DTYPE_FLOAT64);
  auto b = invoke("softmin", {&big});
  expect_near(read(b[0]), {0, 0, 1}, 0, 1e-300, "no overflow");
  grad_check("softmin", {{2, 3, 4}}, {xv}, {{"axis", "1"}, {"temperature", "0.7"}});
}

TEST(SoftminBad, Parameters) {
  Arr x = make({2, 3}, uniform(6, -1, 1));
  int rc = 0;
  invoke("softmin", {&x}, {{"axis", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("softmin", {&x}, {{"temperature", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("softmin", {&x}, {{"use_length", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  invoke("smooth_l1", {&x}, {{"scalar", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// The loss heads pass data through; their gradient ignores the incoming
// one.
std::vector<double> loss_grad(const std::string &name, const Arr &x,
                              const Params &p) {
  auto out = invoke(name, {&x}, p);
  EXPECT_EQ(read(out[0]), read(x));
  Arr og = make(x.shape(), uniform(numel(x.shape()), -5, 5, 551),
                x.dtype());
  auto ig = nnt::eval_grad(name, {&x}, {&out[0]}, {&og}, p);
  EXPECT_EQ(ig.size(), 1u);
  return ig.empty() || !ig[0].h ? std::vector<double>() : read(ig[0]);
}

TEST(MakeLoss, NormalizationModes) {
  std::vector<double> xv = {0.5, -1, 2, 0, 3, 0.1};
  Arr x = make({2, 3}, xv, MXC_DTYPE_FLOAT64);
  expect_near(loss_grad("MakeLoss", x, {}), std::vector<double>(6, 1), 0, 0,
              "null");
  expect_near(loss_grad("MakeLoss", x, {{"grad_scale", "3"},
                                        {"normalization", "batch"}}),
              std::vector<double>(6, 1.5), 1e-15, 0, "batch");
  // valid: 3 elements above 0.4 (0.5, 2, 3)
  expect_near(loss_grad("MakeLoss", x, {{"normalization", "valid"},
                                        {"valid_thresh", "0.4"}}),
              std::vector<double>(6, 1.0 / 3), 1e-15, 0, "valid");
  // none valid: divided by 1
  expect_near(loss_grad("MakeLoss", x, {{"normalization", "valid"},
                                        {"valid_thresh", "10"}}),
              std::vector<double>(6, 1), 0, 0, "valid none");
  expect_near(loss_grad("make_loss", x, {}), std::vector<double>(6, 1), 0, 0,
              "make_loss");
  int rc = 0;
  invoke("MakeLoss", {&x}, {{"normalization", "sum"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("make_loss", {&x}, {{"grad_scale", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace

namespace {

TEST(AllFinite, FlagsInfAndNan) {
  Arr good = make({2, 2}, {1, -2, 3e30, 0});
  auto ok = invoke("all_finite", {&good});
  EXPECT_EQ(ok[0].shape(), Shape({1}));
  EXPECT_EQ(ok[0].dtype(), MXC_DTYPE_FLOAT32);
  EXPECT_EQ(read(ok[0]), std::vector<double>({1}));
  for (double bad : {INFINITY, -INFINITY, NAN}) {
    Arr b = make({3}, {1, bad, 2}, MXC_DTYPE_FLOAT64);
    EXPECT_EQ(read(invoke("all_finite", {&b})[0]), std::vector<double>({0}));
    auto m = invoke("multi_all_finite", {&good, &b}, {{"num_arrays", "2"}});
    EXPECT_EQ(read(m[0]), std::vector<double>({0}));
  }
  Arr ints = make({2}, {1, 2}, MXC_DTYPE_INT32);
  auto m = invoke("multi_all_finite", {&good, &ints}, {{"num_arrays", "2"}});
  EXPECT_EQ(read(m[0]), std::vector<double>({1}));
  // init_output false keeps an earlier verdict of 0 in the given output.
  Arr flag = make({1}, {0});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("all_finite", &op), MXC_OK);
  const char *k[] = {"init_output"}, *v[] = {"false"};
  mxc_ndarray outs[1] = {flag.h};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &good.h, 1, outs, 1, nullptr), MXC_OK)
      << err();
  EXPECT_EQ(read(flag), std::vector<double>({0}));
  int rc = 0;
  invoke("multi_all_finite", {&good}, {{"num_arrays", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
