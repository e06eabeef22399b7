// LRN, GroupNorm and InstanceNorm against loop references written here
// from the operators' definitions (MXNet's docs), their gradients by
// finite differences through the hidden outputs, and bad input.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;
using nnt::invoke_n;

namespace {

// LRN on (N, C, S): the window of channel c holds the channels of a
// zero-padded average pool of size nsize with nsize/2 before c.
std::vector<double> lrn_ref(const std::vector<double> &x, int64_t n, int64_t c,
                            int64_t s, int64_t nsize, double alpha,
                            double beta, double k) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < s; ++p) {
        double avg = 0;
        for (int64_t w = 0; w < nsize; ++w) {
          int64_t cc = ch - nsize / 2 + w;
          if (cc >= 0 && cc < c) {
            double v = x[(b * c + cc) * s + p];
            avg += v * v / nsize;
          }
        }
        int64_t i = (b * c + ch) * s + p;
        y[i] = x[i] / std::pow(k + alpha * avg, beta);
      }
  return y;
}

TEST(LRN, MatchesReferenceOddAndEvenWindows) {
  auto xv = uniform(2 * 6 * 3 * 2, -2, 2, 501);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 2e-6;
    Arr x = make({2, 6, 3, 2}, xv, dt);
    for (int nsize : {1, 3, 4, 5}) {
      auto out = invoke("LRN", {&x},
                        {{"nsize", std::to_string(nsize)},
                         {"alpha", "0.5"},
                         {"beta", "0.6"},
                         {"knorm", "1.5"}});
      ASSERT_EQ(out.size(), 1u);
      expect_near(read(out[0]),
                  lrn_ref(read(x), 2, 6, 6, nsize, 0.5, 0.6, 1.5), tol, tol,
                  "nsize " + std::to_string(nsize));
    }
    auto def = invoke("LRN", {&x}, {{"nsize", "5"}});  // 1e-4, 0.75, 2
    expect_near(read(def[0]), lrn_ref(read(x), 2, 6, 6, 5, 1e-4, 0.75, 2),
                tol, tol, "defaults");
  }
}

TEST(LRN, Gradient) {
  for (const char *nsize : {"3", "4"}) {
    nnt::grad_check_hidden("LRN", {{2, 5, 2, 2}}, {uniform(40, -2, 2, 502)},
                           {{"nsize", nsize}, {"alpha", "0.8"}, {"knorm", "1"}},
                           2, 1);
  }
}

TEST(LRNBad, ShapeAndNsize) {
  Arr x3 = make({2, 3, 4}, uniform(24, -1, 1));
  int rc = 0;
  invoke("LRN", {&x3}, {{"nsize", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("4-D"), std::string::npos) << err();
  Arr x = make({1, 3, 2, 2}, uniform(12, -1, 1));
  invoke("LRN", {&x}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("nsize"), std::string::npos) << err();
  invoke("LRN", {&x}, {{"nsize", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// Group normalization of (N, C, S) with G groups, gamma/beta per channel.
std::vector<double> gn_ref(const std::vector<double> &x, int64_t n, int64_t c,
                           int64_t s, int64_t g, const std::vector<double> &ga,
                           const std::vector<double> &be, double eps) {
  std::vector<double> y(x.size());
  int64_t cpg = c / g;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t q = 0; q < g; ++q) {
      double sum = 0, sq = 0, cnt = (double)(cpg * s);
      for (int64_t ch = q * cpg; ch < (q + 1) * cpg; ++ch)
        for (int64_t p = 0; p < s; ++p) sum += x[(b * c + ch) * s + p];
      double mean = sum / cnt;
      for (int64_t ch = q * cpg; ch < (q + 1) * cpg; ++ch)
        for (int64_t p = 0; p < s; ++p) {
          double d = x[(b * c + ch) * s + p] - mean;
          sq += d * d;
        }
      double sd = std::sqrt(sq / cnt + eps);
      for (int64_t ch = q * cpg; ch < (q + 1) * cpg; ++ch)
        for (int64_t p = 0; p < s; ++p) {
          int64_t i = (b * c + ch) * s + p;
          y[i] = (x[i] - mean) / sd * ga[ch] + be[ch];
        }
    }
  return y;
}

TEST(GroupNorm, MatchesReference) {
  auto xv = uniform(2 * 6 * 5, -3, 3, 511);
  auto gv = uniform(6, 0.5, 1.5, 512), bv = uniform(6, -1, 1, 513);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 3e-6;
    Arr x = make({2, 6, 5}, xv, dt), g = make({6}, gv, dt),
        b = make({6}, bv, dt);
    for (int groups : {1, 2, 3, 6}) {
      auto out = invoke_n("GroupNorm", {&x, &g, &b},
                          {{"num_groups", std::to_string(groups)},
                           {"eps", "0.01"}},
                          3);
      ASSERT_EQ(out.size(), 3u);
      EXPECT_EQ(out[1].shape(), Shape({2, groups}));
      expect_near(read(out[0]),
                  gn_ref(read(x), 2, 6, 5, groups, read(g), read(b), 0.01),
                  tol, tol, "groups " + std::to_string(groups));
    }
  }
}

TEST(InstanceNorm, MatchesReferenceAndHiddenVar) {
  auto xv = uniform(2 * 3 * 2 * 2, -3, 3, 521);
  auto gv = uniform(3, 0.5, 1.5, 522), bv = uniform(3, -1, 1, 523);
  Arr x = make({2, 3, 2, 2}, xv, MXC_DTYPE_FLOAT64),
      g = make({3}, gv, MXC_DTYPE_FLOAT64), b = make({3}, bv, MXC_DTYPE_FLOAT64);
  auto out = invoke_n("InstanceNorm", {&x, &g, &b}, {}, 3);  // eps 1e-3
  ASSERT_EQ(out.size(), 3u);
  expect_near(read(out[0]), gn_ref(xv, 2, 3, 4, 3, gv, bv, 1e-3), 1e-13, 1e-13,
              "out");
  // var of sample 0, channel 0: the biased variance of its 4 values.
  double m = (xv[0] + xv[1] + xv[2] + xv[3]) / 4, v = 0;
  for (int i = 0; i < 4; ++i) v += (xv[i] - m) * (xv[i] - m) / 4;
  EXPECT_NEAR(read(out[2])[0], v, 1e-14);
  EXPECT_NEAR(read(out[1])[0], m, 1e-14);
}

TEST(GroupNorm, Gradients) {
  nnt::grad_check_hidden(
      "GroupNorm", {{2, 4, 3}, {4}, {4}},
      {uniform(24, -2, 2, 531), uniform(4, 0.5, 1.5, 532),
       uniform(4, -1, 1, 533)},
      {{"num_groups", "2"}}, 3, 1);
  nnt::grad_check_hidden(
      "InstanceNorm", {{2, 3, 2, 2}, {3}, {3}},
      {uniform(24, -2, 2, 534), uniform(3, 0.5, 1.5, 535),
       uniform(3, -1, 1, 536)},
      {{"eps", "0.01"}}, 3, 1);
}

TEST(GroupNormBad, GroupsShapesAndDtype) {
  Arr x = make({2, 6, 5}, uniform(60, -1, 1));
  Arr g = make({6}, uniform(6, 0, 1)), b = make({6}, uniform(6, 0, 1));
  int rc = 0;
  invoke("GroupNorm", {&x, &g, &b}, {{"num_groups", "4"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("does not divide"), std::string::npos) << err();
  invoke("GroupNorm", {&x, &g, &b}, {{"num_groups", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr g3 = make({3}, {1, 1, 1});
  invoke("InstanceNorm", {&x, &g3, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("gamma"), std::string::npos) << err();
  Arr x2 = make({2, 6}, uniform(12, -1, 1));
  invoke("InstanceNorm", {&x2, &g, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  // No channels: an empty result, not a division by zero (fuzz finding).
  Arr z = make({2, 0, 3}, {}), z0 = make({0}, {});
  auto empty = invoke("InstanceNorm", {&z, &z0, &z0});
  EXPECT_EQ(empty[0].shape(), Shape({2, 0, 3}));
  Arr xi = make({2, 6, 5}, uniform(60, -1, 1), MXC_DTYPE_INT32);
  Arr gi = make({6}, uniform(6, 0, 1), MXC_DTYPE_INT32);
  invoke("GroupNorm", {&xi, &gi, &gi}, {}, &rc);
  EXPECT_NE(rc, MXC_OK);
}

}  // namespace
