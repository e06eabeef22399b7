// Dropout: statistics of the mask, scaling of kept values, determinism
// under a seed, identity at inference, mode=always, shared axes, the
// gradient, and bad parameters.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;
using nnt::invoke_n;
using nnt::Training;

namespace {

// (output, mask) of Dropout on x in the given mode.
std::pair<std::vector<double>, std::vector<double>> drop(const Arr &x,
                                                         const Params &p,
                                                         uint64_t seed) {
  mxc_random_seed(seed);
  auto out = invoke_n("Dropout", {&x}, p, 2);
  EXPECT_EQ(out.size(), 2u);
  if (out.size() != 2) return {};
  return {read(out[0]), read(out[1])};
}

TEST(Dropout, FractionDroppedAndScaling) {
  Training mode(1);
  const int64_t n = 20000;
  auto xv = uniform(n, 0.5, 2, 51);  // nonzero, so zeros in out are drops
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr x = make({100, 200}, xv, dt);
    auto xs = read(x);
    for (double p : {0.3, 0.5, 0.9}) {
      auto r = drop(x, {{"p", std::to_string(p)}}, 7);
      int64_t zeros = 0;
      for (int64_t i = 0; i < n; ++i) {
        double keep = 1 / (1 - p);
        if (r.first[i] == 0) {
          ++zeros;
          EXPECT_EQ(r.second[i], 0) << i;
        } else {
          EXPECT_NEAR(r.first[i], xs[i] * keep, 1e-5 * xs[i] * keep) << i;
          EXPECT_NEAR(r.second[i], keep, 1e-6 * keep) << i;
        }
      }
      // The binomial standard deviation is below 0.004 here.
      EXPECT_NEAR((double)zeros / n, p, 0.03) << "p=" << p;
    }
  }
}

TEST(Dropout, SameSeedSameMaskOtherSeedOtherMask) {
  Training mode(1);
  Arr x = make({1000}, uniform(1000, 1, 2, 52));
  auto a = drop(x, {}, 123), b = drop(x, {}, 123), c = drop(x, {}, 124);
  EXPECT_EQ(a.second, b.second);
  EXPECT_EQ(a.first, b.first);
  EXPECT_NE(a.second, c.second);
  // float32 and float64 data draw the same numbers.
  Arr xd = make({1000}, uniform(1000, 1, 2, 52), MXC_DTYPE_FLOAT64);
  auto d = drop(xd, {}, 123);
  for (size_t i = 0; i < a.second.size(); ++i)
    EXPECT_EQ(a.second[i] == 0, d.second[i] == 0) << i;
}

TEST(Dropout, IdentityAtInferenceUnlessAlways) {
  Training mode(0);
  auto xv = uniform(500, -1, 1, 53);
  Arr x = make({500}, xv, MXC_DTYPE_FLOAT64);
  auto r = drop(x, {{"p", "0.5"}}, 1);
  EXPECT_EQ(r.first, xv);
  EXPECT_EQ(r.second, std::vector<double>(500, 1.0));
  auto a = drop(x, {{"p", "0.5"}, {"mode", "always"}}, 1);
  int zeros = 0;
  for (double v : a.first) zeros += v == 0;
  EXPECT_GT(zeros, 150);
  EXPECT_LT(zeros, 350);
  // p = 0 is the identity even in training mode.
  Training on(1);
  EXPECT_EQ(drop(x, {{"p", "0"}}, 1).first, xv);
}

TEST(Dropout, SharedAxesRepeatTheMask) {
  Training mode(1);
  Arr x = make({4, 5, 6}, std::vector<double>(120, 1.0));
  auto r = drop(x, {{"axes", "(1,)"}}, 9);
  int zeros = 0;
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 6; ++c) {
      double m0 = r.second[(a * 5 + 0) * 6 + c];
      zeros += m0 == 0;
      for (int b = 1; b < 5; ++b)
        EXPECT_EQ(r.second[(a * 5 + b) * 6 + c], m0)
            << a << "," << b << "," << c;
    }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, 24);
}

TEST(Dropout, GradientIsOgradTimesMask) {
  Training mode(1);
  auto xv = uniform(60, -1, 1, 54);
  Arr x = make({6, 10}, xv, MXC_DTYPE_FLOAT64);
  mxc_random_seed(5);
  auto out = invoke_n("Dropout", {&x}, {{"p", "0.4"}}, 2);
  auto ogv = uniform(60, -1, 1, 55);
  Arr og = make({6, 10}, ogv, MXC_DTYPE_FLOAT64);
  auto ig = nnt::eval_grad("Dropout", {&x}, {&out[0], &out[1]}, {&og},
                           {{"p", "0.4"}});
  ASSERT_EQ(ig.size(), 1u);
  auto mask = read(out[1]);
  std::vector<double> want;
  for (size_t i = 0; i < ogv.size(); ++i) want.push_back(ogv[i] * mask[i]);
  expect_near(read(ig[0]), want, 1e-15, 0, "dx");
  // And by finite differences, re-seeding so every pass draws one mask.
  nnt::grad_check_hidden("Dropout", {{3, 4}}, {uniform(12, -1, 1, 56)},
                         {{"p", "0.5"}}, 2, 1, 1e-6, 1e-6, 1e-8, {}, 77);
}

TEST(DropoutBad, POutOfRangeAndAxes) {
  Arr x = make({2, 2}, {1, 2, 3, 4});
  int rc = 0;
  for (auto p : {"1", "1.5", "-0.1", "nan"}) {
    invoke("Dropout", {&x}, {{"p", p}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << p;
    EXPECT_NE(err().find("0 <= p < 1"), std::string::npos) << err();
  }
  invoke("Dropout", {&x}, {{"axes", "(2,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'axes' = 2 is out of range"), std::string::npos)
      << err();
  invoke("Dropout", {&x}, {{"mode", "sometimes"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
