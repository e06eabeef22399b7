// Random samplers: ranges and moments (mean and variance within 5 standard
// errors over 1e5 samples), randint coverage, multinomial frequencies,
// Poisson probabilities, shuffle permutations, write modes, and bad input.
// Every test seeds first, so each is reproducible on its own.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "tests/ops/random/random_test_util.h"

using namespace mxct;

namespace {

constexpr int kN = 100000;
const std::string kShape = "(" + std::to_string(kN) + ",)";

const char *dtname(int dt) {
  return dt == MXC_DTYPE_FLOAT64 ? "float64" : "float32";
}

TEST(Uniform, RangeAndMoments) {
  mxc_random_seed(1);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    auto out = invoke("_random_uniform", {},
                      {{"shape", kShape},
                       {"low", "-2"},
                       {"high", "3"},
                       {"dtype", dtname(dt)}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), dt);
    EXPECT_EQ(out[0].shape(), Shape({kN}));
    auto x = read(out[0]);
    for (double v : x) ASSERT_TRUE(v >= -2 && v < 3) << v;
    double w = 5;  // width; central moments of U(a, b)
    check_moments(x, 0.5, w * w / 12, std::pow(w, 4) / 80, dtname(dt));
  }
}

TEST(Uniform, DefaultsAndAliases) {
  mxc_random_seed(2);
  for (const char *name : {"_random_uniform", "random_uniform", "uniform"}) {
    auto out = invoke(name, {}, {{"shape", "(1000, 10)"}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);  // the default dtype
    EXPECT_EQ(out[0].shape(), Shape({1000, 10}));
    auto x = read(out[0]);
    for (double v : x) ASSERT_TRUE(v >= 0 && v < 1) << name;
    check_moments(x, 0.5, 1.0 / 12, 1.0 / 80, name);
  }
}

TEST(Normal, Moments) {
  mxc_random_seed(3);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    for (const char *name : {"_random_normal", "random_normal", "normal"}) {
      auto x = draw(name, {{"shape", kShape},
                           {"loc", "1.5"},
                           {"scale", "2"},
                           {"dtype", dtname(dt)}});
      double s2 = 4;
      check_moments(x, 1.5, s2, 3 * s2 * s2, name);
      // Tails exist but stay sane: |z| < 6 over 1e5 draws.
      for (double v : x) ASSERT_LT(std::fabs(v - 1.5) / 2, 6.0);
    }
  }
  auto c = draw("normal", {{"shape", "(5,)"}, {"loc", "7"}, {"scale", "0"}});
  EXPECT_EQ(c, std::vector<double>(5, 7.0));
}

TEST(Gamma, MomentsForSmallAndLargeShape) {
  mxc_random_seed(4);
  for (double alpha : {0.3, 1.0, 3.5, 9.0}) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
      double beta = 0.5;
      auto x = draw("_random_gamma", {{"shape", kShape},
                                      {"alpha", std::to_string(alpha)},
                                      {"beta", "0.5"},
                                      {"dtype", dtname(dt)}});
      for (double v : x) ASSERT_GE(v, 0.0);
      double var = alpha * beta * beta;
      double mu4 = 3 * alpha * (alpha + 2) * std::pow(beta, 4);
      check_moments(x, alpha * beta, var, mu4,
                    "gamma alpha=" + std::to_string(alpha));
    }
  }
  // The alias and the defaults (alpha = beta = 1: exponential(1)).
  auto x = draw("random_gamma", {{"shape", kShape}});
  check_moments(x, 1, 1, 9, "gamma defaults");
}

TEST(Exponential, Moments) {
  mxc_random_seed(5);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    auto x = draw("_random_exponential",
                  {{"shape", kShape}, {"lam", "2"}, {"dtype", dtname(dt)}});
    for (double v : x) ASSERT_GE(v, 0.0);
    double l = 2;
    check_moments(x, 1 / l, 1 / (l * l), 9 / std::pow(l, 4), dtname(dt));
  }
  auto x = draw("random_exponential", {{"shape", kShape}});
  check_moments(x, 1, 1, 9, "exponential defaults");
}

TEST(Poisson, MomentsAcrossBothAlgorithms) {
  mxc_random_seed(6);
  // Below 10: inversion; from 10: PTRS.
  for (double lam : {0.5, 4.0, 9.5, 10.0, 30.0, 1000.0}) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
      auto x = draw("_random_poisson", {{"shape", kShape},
                                        {"lam", std::to_string(lam)},
                                        {"dtype", dtname(dt)}});
      for (double v : x) ASSERT_TRUE(v >= 0 && v == std::floor(v)) << v;
      check_moments(x, lam, lam, lam * (1 + 3 * lam),
                    "poisson lam=" + std::to_string(lam));
    }
  }
  auto z = draw("random_poisson", {{"shape", "(10,)"}, {"lam", "0"}});
  EXPECT_EQ(z, std::vector<double>(10, 0.0));
}

// P(X = k) for small k against the pmf, each within 5 standard errors.
TEST(Poisson, Probabilities) {
  mxc_random_seed(7);
  for (double lam : {3.0, 15.0}) {
    auto x = draw("_random_poisson", {{"shape", kShape},
                                      {"lam", std::to_string(lam)},
                                      {"dtype", "float64"}});
    std::map<int, int> count;
    for (double v : x) count[(int)v]++;
    for (int k = 0; k < 3 * (int)lam; ++k) {
      double p = std::exp(-lam + k * std::log(lam) - std::lgamma(k + 1.0));
      double f = (double)count[k] / kN;
      EXPECT_NEAR(f, p, 5 * std::sqrt(p * (1 - p) / kN) + 1e-9)
          << "lam=" << lam << " k=" << k;
    }
  }
}

TEST(Randint, BoundsCoverageAndFrequencies) {
  mxc_random_seed(8);
  for (const char *name : {"_random_randint", "random_randint", "randint"}) {
    auto out =
        invoke(name, {}, {{"shape", kShape}, {"low", "-3"}, {"high", "7"}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), MXC_DTYPE_INT32);
    std::map<int, int> count;
    for (double v : read(out[0])) count[(int)v]++;
    ASSERT_EQ(count.size(), 10u) << "every value in [-3, 7) appears";
    EXPECT_EQ(count.begin()->first, -3);
    EXPECT_EQ(count.rbegin()->first, 6);
    for (auto &kv : count) {
      double f = (double)kv.second / kN;
      EXPECT_NEAR(f, 0.1, 5 * std::sqrt(0.1 * 0.9 / kN)) << kv.first;
    }
  }
}

TEST(Randint, Int64WideRange) {
  mxc_random_seed(9);
  // [-2^62, 2^62): the span exceeds int64 arithmetic would allow as a
  // signed difference of the extreme bounds.
  auto out = invoke("randint", {},
                    {{"shape", "(20000,)"},
                     {"low", "-4611686018427387904"},
                     {"high", "4611686018427387904"},
                     {"dtype", "int64"}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), MXC_DTYPE_INT64);
  auto b = bytes(out[0]);
  std::vector<int64_t> v(b.size() / 8);
  memcpy(v.data(), b.data(), b.size());
  int64_t lo = INT64_C(-4611686018427387904), hi = -lo;
  int neg = 0;
  for (int64_t x : v) {
    ASSERT_TRUE(x >= lo && x < hi) << x;
    neg += x < 0;
  }
  EXPECT_NEAR((double)neg / v.size(), 0.5, 5 * std::sqrt(0.25 / v.size()));
  // The full int64 range (span 2^64 - 1) works too.
  auto full = invoke("randint", {},
                     {{"shape", "(100,)"},
                      {"low", "-9223372036854775808"},
                      {"high", "9223372036854775807"},
                      {"dtype", "int64"}});
  ASSERT_EQ(full.size(), 1u);
}

TEST(Multinomial, FrequenciesMatchProbabilities) {
  mxc_random_seed(10);
  std::vector<std::vector<double>> p = {{0.1, 0.2, 0.3, 0.4},
                                        {0.5, 0.0, 0.5, 0.0}};
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr probs = make({2, 4}, {0.1, 0.2, 0.3, 0.4, 0.5, 0, 0.5, 0}, dt);
    for (const char *name : {"_sample_multinomial", "sample_multinomial"}) {
      int n = 50000;
      auto out =
          invoke(name, {&probs}, {{"shape", "(" + std::to_string(n) + ",)"}});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].dtype(), MXC_DTYPE_INT32);
      EXPECT_EQ(out[0].shape(), Shape({2, n}));
      auto x = read(out[0]);
      for (int r = 0; r < 2; ++r) {
        std::vector<int> count(4, 0);
        for (int s = 0; s < n; ++s) count.at((size_t)x[r * n + s])++;
        for (int j = 0; j < 4; ++j) {
          double q = p[r][j], f = (double)count[j] / n;
          if (q == 0) {
            EXPECT_EQ(count[j], 0) << "probability-0 category drawn";
          } else {
            EXPECT_NEAR(f, q, 5 * std::sqrt(q * (1 - q) / n)) << r << j;
          }
        }
      }
    }
  }
}

TEST(Multinomial, GetProbAndShapes) {
  mxc_random_seed(11);
  Arr probs = make({3, 2, 3}, uniform(18, 0.1, 1, 3), MXC_DTYPE_FLOAT64);
  auto pv = read(probs);
  auto out =
      invoke("_sample_multinomial", {&probs},
             {{"shape", "(4, 5)"}, {"get_prob", "true"}, {"dtype", "int64"}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), Shape({3, 2, 4, 5}));
  EXPECT_EQ(out[1].shape(), Shape({3, 2, 4, 5}));
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_INT64);
  EXPECT_EQ(out[1].dtype(), MXC_DTYPE_FLOAT64);
  auto idx = read(out[0]), lp = read(out[1]);
  for (int row = 0; row < 6; ++row) {
    double total = pv[row * 3] + pv[row * 3 + 1] + pv[row * 3 + 2];
    for (int s = 0; s < 20; ++s) {
      int j = (int)idx[row * 20 + s];
      ASSERT_TRUE(j >= 0 && j < 3);
      // Rows need not sum to 1: log-probabilities are of p / sum(p).
      EXPECT_NEAR(lp[row * 20 + s], std::log(pv[row * 3 + j] / total), 1e-12);
    }
  }
  // Default shape (): one draw per row; float dtype for the indices.
  auto one = invoke("sample_multinomial", {&probs}, {{"dtype", "float32"}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].shape(), Shape({3, 2}));
  EXPECT_EQ(one[0].dtype(), MXC_DTYPE_FLOAT32);
}

TEST(Multinomial, BadProbabilitiesFailWhenRun) {
  Arr neg = make({2}, {0.5, -0.5});
  auto out = invoke("_sample_multinomial", {&neg});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int32_t> v(1);
  // The kernel's failure surfaces at the wait (the code is the engine's
  // business; the message is ours).
  EXPECT_NE(mxc_ndarray_copy_to_host(out[0].h, v.data(), 4), MXC_OK);
  EXPECT_NE(err().find("expected finite values >= 0"), std::string::npos)
      << err();
  Arr zero = make({2}, {0, 0});
  out = invoke("_sample_multinomial", {&zero});
  EXPECT_NE(mxc_ndarray_copy_to_host(out[0].h, v.data(), 4), MXC_OK);
  EXPECT_NE(err().find("sum to 0"), std::string::npos) << err();
  mxc_wait_all();
}

std::vector<double> rows_of(const std::vector<double> &x, int w, int r) {
  return std::vector<double>(x.begin() + r * w, x.begin() + (r + 1) * w);
}

TEST(Shuffle, IsAPermutationOfWholeRows) {
  mxc_random_seed(12);
  const int n = 1000, w = 3;
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(i);
    v.push_back(i + 0.5);
    v.push_back(-i);
  }
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32}) {
    if (dt == MXC_DTYPE_INT32)
      for (int i = 0; i < n; ++i) v[i * w + 1] = 2 * i;
    Arr a = make({n, w}, v, dt);
    for (const char *name : {"_shuffle", "shuffle"}) {
      auto out = invoke(name, {&a});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].shape(), Shape({n, w}));
      EXPECT_EQ(out[0].dtype(), dt);
      auto y = read(out[0]);
      std::set<int> seen;
      int fixed = 0;
      for (int r = 0; r < n; ++r) {
        int src = (int)y[r * w];
        ASSERT_TRUE(src >= 0 && src < n);
        EXPECT_EQ(rows_of(y, w, r), rows_of(v, w, src)) << "row moved whole";
        seen.insert(src);
        fixed += src == r;
      }
      EXPECT_EQ(seen.size(), (size_t)n);
      EXPECT_LT(fixed, 10) << "expected ~1 fixed point, not the identity";
      EXPECT_EQ(read(a), v) << "input untouched";
    }
  }
}

// Every permutation of 4 rows equally likely (24 cells, 4800 shuffles).
TEST(Shuffle, PermutationsAreUniform) {
  mxc_random_seed(13);
  Arr a = make({4}, {0, 1, 2, 3}, MXC_DTYPE_INT32);
  const int trials = 4800;
  std::vector<Arr> outs;
  for (int t = 0; t < trials; ++t)
    outs.push_back(std::move(invoke("shuffle", {&a})[0]));
  std::map<std::vector<double>, int> count;
  for (auto &o : outs) count[read(o)]++;
  ASSERT_EQ(count.size(), 24u);
  double p = 1.0 / 24;
  for (auto &kv : count) {
    EXPECT_NEAR((double)kv.second / trials, p,
                5 * std::sqrt(p * (1 - p) / trials));
  }
}

TEST(Shuffle, InPlaceAndEdgeShapes) {
  mxc_random_seed(14);
  std::vector<double> v(50);
  for (int i = 0; i < 50; ++i) v[i] = i;
  Arr a = make({25, 2}, v, MXC_DTYPE_FLOAT64);
  std::vector<mxc_ndarray> outs = {a.h};
  ASSERT_EQ(invoke_into("_shuffle", {a.h}, &outs), MXC_OK) << err();
  EXPECT_EQ(outs[0], a.h);
  auto y = read(a);
  EXPECT_NE(y, v);
  std::vector<double> firsts;
  for (int r = 0; r < 25; ++r) {
    EXPECT_EQ(y[2 * r + 1], y[2 * r] + 1);
    firsts.push_back(y[2 * r]);
  }
  std::sort(firsts.begin(), firsts.end());
  for (int r = 0; r < 25; ++r) EXPECT_EQ(firsts[r], 2 * r);
  // Scalars and empty arrays pass through.
  Arr s = make({}, {4.5});
  EXPECT_EQ(read(invoke("shuffle", {&s})[0]), std::vector<double>({4.5}));
  Arr e = make({0, 3}, {});
  EXPECT_EQ(invoke("shuffle", {&e})[0].shape(), Shape({0, 3}));
}

// Values are a function of the index alone: a prefix of a longer draw
// equals a shorter draw after the same seed, for every sampler.
TEST(Samplers, ValueIDependsOnlyOnI) {
  std::vector<std::pair<std::string, Params>> cases = {
      {"_random_uniform", {}},
      {"_random_normal", {}},
      {"_random_gamma", {{"alpha", "0.7"}}},
      {"_random_exponential", {}},
      {"_random_poisson", {{"lam", "3"}}},
      {"_random_poisson", {{"lam", "40"}}},
      {"_random_randint", {{"low", "0"}, {"high", "1000"}}}};
  for (auto &c : cases) {
    for (const char *dt : {"float32", "float64"}) {
      Params p = c.second;
      if (c.first != "_random_randint") p.push_back({"dtype", dt});
      Params small = p, big = p;
      small.push_back({"shape", "(7,)"});
      big.push_back({"shape", "(5000,)"});
      mxc_random_seed(77);
      auto a = draw(c.first, small);
      mxc_random_seed(77);
      auto b = draw(c.first, big);
      ASSERT_EQ(a.size(), 7u);
      EXPECT_EQ(a, std::vector<double>(b.begin(), b.begin() + 7)) << c.first;
    }
  }
}

TEST(Samplers, OutputArrayGivesShapeAndDtypeAndWriteModes) {
  mxc_random_seed(15);
  Arr o = make({3, 4}, std::vector<double>(12, 10.0), MXC_DTYPE_FLOAT64);
  std::vector<mxc_ndarray> outs = {o.h};
  // No shape and no dtype: taken from the given output.
  ASSERT_EQ(invoke_into("uniform", {}, &outs, {}, {MXC_REQ_ADD}), MXC_OK)
      << err();
  for (double v : read(o)) EXPECT_TRUE(v >= 10 && v < 11) << v;
  auto before = read(o);
  ASSERT_EQ(invoke_into("normal", {}, &outs, {}, {MXC_REQ_NULL}), MXC_OK);
  EXPECT_EQ(read(o), before);
  ASSERT_EQ(invoke_into("_random_exponential", {}, &outs, {{"shape", "(3,4)"}}),
            MXC_OK);
  for (double v : read(o)) EXPECT_TRUE(v >= 0 && v < 40) << v;
}

// ---- bad input: errors at invoke time, output slots untouched ----

void expect_error(const std::string &name, const std::vector<const Arr *> &in,
                  const Params &p, int code, const std::string &needle) {
  int rc = 0;
  auto out = invoke(name, in, p, &rc);
  EXPECT_EQ(rc, code) << name;
  EXPECT_TRUE(out.empty());
  EXPECT_NE(err().find(needle), std::string::npos)
      << name << ": '" << err() << "' lacks '" << needle << "'";
}

TEST(RandomErrors, BadParameters) {
  const int A = MXC_ERR_INVALID_ARGUMENT;
  expect_error("normal", {}, {{"shape", "(2,)"}, {"scale", "-1"}}, A, "scale");
  expect_error("uniform", {}, {{"shape", "(2,)"}, {"low", "2"}, {"high", "1"}},
               A, "expected finite low <= high");
  expect_error("randint", {}, {{"shape", "(2,)"}, {"low", "5"}, {"high", "5"}},
               A, "expected low < high");
  expect_error("randint", {}, {{"shape", "(2,)"}, {"high", "5"}}, A, "low");
  expect_error("randint", {},
               {{"shape", "(2,)"}, {"low", "0"}, {"high", "4294967296"}}, A,
               "does not fit int32");
  expect_error("_random_gamma", {}, {{"shape", "(2,)"}, {"alpha", "0"}}, A,
               "alpha");
  expect_error("_random_gamma", {}, {{"shape", "(2,)"}, {"beta", "-2"}}, A,
               "beta");
  expect_error("_random_exponential", {}, {{"shape", "(2,)"}, {"lam", "0"}}, A,
               "lam");
  expect_error("_random_poisson", {}, {{"shape", "(2,)"}, {"lam", "-1"}}, A,
               "lam");
  expect_error("uniform", {}, {{"shape", "(2,-3)"}}, MXC_ERR_SHAPE,
               "extents must be >= 0");
  expect_error("uniform", {}, {}, MXC_ERR_SHAPE, "'shape' is required");
  expect_error("uniform", {}, {{"shape", "(2,)"}, {"dtype", "int32"}},
               MXC_ERR_DTYPE, "float32 or float64");
  expect_error(
      "randint", {},
      {{"shape", "(2,)"}, {"low", "0"}, {"high", "3"}, {"dtype", "float32"}},
      MXC_ERR_DTYPE, "int32 or int64");
  expect_error("uniform", {}, {{"shape", "(2,)"}, {"mean", "0"}}, A,
               "unknown parameter 'mean'");
}

TEST(RandomErrors, ArityShapeAndDtype) {
  Arr a = make({2, 3}, uniform(6, 0.1, 1, 1));
  expect_error("uniform", {&a}, {{"shape", "(2,)"}}, MXC_ERR_INVALID_ARGUMENT,
               "got 1 inputs; expected 0");
  expect_error("shuffle", {}, {}, MXC_ERR_INVALID_ARGUMENT,
               "got 0 inputs; expected 1");
  expect_error("_sample_multinomial", {&a, &a}, {}, MXC_ERR_INVALID_ARGUMENT,
               "got 2 inputs; expected 1");
  Arr s = make({}, {1.0});
  expect_error("_sample_multinomial", {&s}, {}, MXC_ERR_SHAPE,
               "expected (..., k)");
  Arr ints = make({3}, {1, 1, 1}, MXC_DTYPE_INT32);
  expect_error("_sample_multinomial", {&ints}, {}, MXC_ERR_DTYPE,
               "float32 or float64");
  // A given output of the wrong shape is rejected and left alone.
  Arr o = make({5}, {1, 2, 3, 4, 5});
  std::vector<mxc_ndarray> outs = {o.h};
  EXPECT_EQ(invoke_into("uniform", {}, &outs, {{"shape", "(4,)"}}),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(5)"), std::string::npos) << err();
  EXPECT_EQ(read(o), std::vector<double>({1, 2, 3, 4, 5}));
}

TEST(RandomErrors, NotDifferentiableAndDocumented) {
  mxc_op op = nullptr;
  for (const char *name :
       {"_random_uniform", "_random_normal", "_random_gamma",
        "_random_exponential", "_random_poisson", "_random_randint",
        "_sample_multinomial", "_shuffle"}) {
    ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << name;
    const char *doc = nullptr;
    ASSERT_EQ(mxc_op_doc(op, &doc), MXC_OK);
    EXPECT_GT(strlen(doc), 20u) << name;
  }
  Arr p = make({3}, {0.2, 0.3, 0.5}, MXC_DTYPE_FLOAT64);
  auto out = invoke("_sample_multinomial", {&p});
  mxc_ndarray og = out[0].h, ig = nullptr;
  mxc_ndarray in = p.h;
  ASSERT_EQ(mxct_grad_eval("_sample_multinomial", nullptr, nullptr, 0, &in, 1,
                           &og, 1, &og, &ig),
            MXC_OK)
      << err();
  EXPECT_EQ(ig, nullptr) << "no gradient flows through sampling";
}

}  // namespace
