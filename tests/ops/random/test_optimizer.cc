// Optimizer updates against reference implementations written here from
// MXNet's published update rules, over several steps with clipping, weight
// decay and rescaling, checking the weight and every state after each step;
// in-place semantics; and bad input.
#include <functional>
#include <map>

#include "tests/ops/random/random_test_util.h"

using namespace mxct;

namespace {

using P = std::map<std::string, double>;

double clipv(double x, double c) {
  if (c < 0) return x;
  return std::max(-c, std::min(c, x));
}
double sgn(double x) { return (x > 0) - (x < 0); }

// Reference rules: w and states s updated in place.
using Rule = std::function<void(P &, double &, double, std::vector<double> &)>;

struct Opt {
  const char *name;
  std::vector<const char *> states;
  P defaults;  // MXNet's defaults of the rule-specific parameters
  P custom;    // non-default values for the tests
  Rule rule;
};

const std::vector<Opt> &opts() {
  static const std::vector<Opt> k = {
      {"sgd_update",
       {},
       {},
       {},
       [](P &p, double &w, double g, std::vector<double> &) {
         double r = clipv(p["rescale_grad"] * g, p["clip_gradient"]);
         w = w - p["lr"] * (r + p["wd"] * w);
       }},
      {"sgd_mom_update",
       {"mom"},
       {{"momentum", 0}},
       {{"momentum", 0.9}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r = clipv(p["rescale_grad"] * g, p["clip_gradient"]);
         s[0] = p["momentum"] * s[0] - p["lr"] * (r + p["wd"] * w);
         w += s[0];
       }},
      {"nag_mom_update",
       {"mom"},
       {{"momentum", 0}},
       {{"momentum", 0.8}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         // MXNet 1.9's NAGMomKernel: mom' = momentum*mom; out = w - mom'
         // + (momentum+1)*(mom' - lr*r); mom = mom' - lr*r.
         double r =
             clipv(p["rescale_grad"] * g, p["clip_gradient"]) + p["wd"] * w;
         double m = p["momentum"] * s[0];
         w = w - m + (p["momentum"] + 1) * (m - p["lr"] * r);
         s[0] = m - p["lr"] * r;
       }},
      {"adam_update",
       {"mean", "var"},
       {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-8}},
       {{"beta1", 0.85}, {"beta2", 0.99}, {"epsilon", 1e-6}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r =
             clipv(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"]);
         s[0] = p["beta1"] * s[0] + (1 - p["beta1"]) * r;
         s[1] = p["beta2"] * s[1] + (1 - p["beta2"]) * r * r;
         w -= p["lr"] * s[0] / (std::sqrt(s[1]) + p["epsilon"]);
       }},
      {"rmsprop_update",
       {"n"},
       {{"gamma1", 0.95}, {"epsilon", 1e-8}, {"clip_weights", -1}},
       {{"gamma1", 0.9}, {"epsilon", 1e-6}, {"clip_weights", 0.9}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r =
             clipv(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"]);
         s[0] = p["gamma1"] * s[0] + (1 - p["gamma1"]) * r * r;
         w = clipv(w - p["lr"] * r / std::sqrt(s[0] + p["epsilon"]),
                   p["clip_weights"]);
       }},
      {"rmspropalex_update",
       {"n", "g", "delta"},
       {{"gamma1", 0.95},
        {"gamma2", 0.9},
        {"epsilon", 1e-8},
        {"clip_weights", -1}},
       {{"gamma1", 0.9},
        {"gamma2", 0.8},
        {"epsilon", 1e-6},
        {"clip_weights", 0.95}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r =
             clipv(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"]);
         s[0] = p["gamma1"] * s[0] + (1 - p["gamma1"]) * r * r;
         s[1] = p["gamma1"] * s[1] + (1 - p["gamma1"]) * r;
         s[2] = p["gamma2"] * s[2] -
                p["lr"] * r / std::sqrt(s[0] - s[1] * s[1] + p["epsilon"]);
         w = clipv(w + s[2], p["clip_weights"]);
       }},
      {"adagrad_update",
       {"history"},
       {{"epsilon", 1e-7}},
       {{"epsilon", 1e-5}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r = clipv(p["rescale_grad"] * g, p["clip_gradient"]);
         s[0] += r * r;
         w -= p["lr"] * (r / std::sqrt(s[0] + p["epsilon"]) + p["wd"] * w);
       }},
      {"ftrl_update",
       {"z", "n"},
       {{"lamda1", 0.01}, {"beta", 1}},
       {{"lamda1", 0.05}, {"beta", 1.5}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r = clipv(p["rescale_grad"] * g, p["clip_gradient"]);
         double lr = p["lr"];
         s[0] += r - (std::sqrt(s[1] + r * r) - std::sqrt(s[1])) * w / lr;
         s[1] += r * r;
         w = std::fabs(s[0]) > p["lamda1"]
                 ? (sgn(s[0]) * p["lamda1"] - s[0]) /
                       ((p["beta"] + std::sqrt(s[1])) / lr + p["wd"])
                 : 0.0;
       }},
      {"signsgd_update",
       {},
       {},
       {},
       [](P &p, double &w, double g, std::vector<double> &) {
         w = (1 - p["lr"] * p["wd"]) * w - p["lr"] * sgn(g);
       }},
      {"signum_update",
       {"mom"},
       {{"momentum", 0.9}, {"wd_lh", 0}},
       {{"momentum", 0.85}, {"wd_lh", 0.02}},
       [](P &p, double &w, double g, std::vector<double> &s) {
         double r = clipv(p["rescale_grad"] * g, p["clip_gradient"]);
         double m = p["momentum"];
         s[0] = m * s[0] - (1 - m) * (p["wd"] * w + r);
         w = (1 - p["lr"] * p["wd_lh"]) * w + p["lr"] * sgn(s[0]);
       }},
  };
  return k;
}

// Initial state values: second moments must be >= 0, and the centred
// RMSProp needs n >= g^2.
std::vector<double> init_state(const std::string &opt, const std::string &st,
                               int n, unsigned seed) {
  bool positive = st == "var" || st == "n" || st == "history";
  if (opt == "rmspropalex_update" && st == "n") return uniform(n, 0.5, 1, seed);
  return positive ? uniform(n, 0, 0.1, seed) : uniform(n, -0.1, 0.1, seed);
}

std::string fmt(double v) {
  char b[64];
  snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Runs `steps` in-place updates and compares with the reference after each.
void run_case(const Opt &o, int dt, const P &common, bool custom) {
  const int n = 20;
  const Shape shape = {4, 5};
  P p = o.defaults;
  for (auto &kv : common) p[kv.first] = kv.second;
  Params params;
  for (auto &kv : common) params.push_back({kv.first, fmt(kv.second)});
  if (custom) {
    for (auto &kv : o.custom) {
      p[kv.first] = kv.second;
      params.push_back({kv.first, fmt(kv.second)});
    }
  }
  auto store = [dt](double v) {
    return dt == MXC_DTYPE_FLOAT32 ? (double)(float)v : v;
  };
  std::vector<double> w = uniform(n, -1, 1, 21);
  for (auto &v : w) v = store(v);
  std::vector<std::vector<double>> s;
  for (size_t k = 0; k < o.states.size(); ++k) {
    s.push_back(init_state(o.name, o.states[k], n, 31 + (unsigned)k));
    for (auto &v : s.back()) v = store(v);
  }
  Arr wa = make(shape, w, dt);
  std::vector<Arr> sa;
  for (auto &st : s) sa.push_back(make(shape, st, dt));
  double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 2e-6;
  for (int step = 0; step < 5; ++step) {
    std::vector<double> g = uniform(n, -2, 2, 100 + step);
    for (auto &v : g) v = store(v);
    Arr ga = make(shape, g, dt);
    std::vector<mxc_ndarray> in = {wa.h, ga.h};
    for (auto &a : sa) in.push_back(a.h);
    std::vector<mxc_ndarray> out = {wa.h};  // in place
    ASSERT_EQ(invoke_into(o.name, in, &out, params), MXC_OK)
        << o.name << ": " << err();
    ASSERT_EQ(out[0], wa.h) << "the output handle is the weight handle";
    for (int i = 0; i < n; ++i) {
      std::vector<double> si(s.size());
      for (size_t k = 0; k < s.size(); ++k) si[k] = s[k][i];
      o.rule(p, w[i], g[i], si);
      w[i] = store(w[i]);
      for (size_t k = 0; k < s.size(); ++k) s[k][i] = store(si[k]);
    }
    auto got = read(wa);
    for (int i = 0; i < n; ++i) {
      ASSERT_NEAR(got[i], w[i], tol * (1 + std::fabs(w[i])))
          << o.name << " weight step " << step << " i " << i;
    }
    for (size_t k = 0; k < s.size(); ++k) {
      auto gs = read(sa[k]);
      for (int i = 0; i < n; ++i) {
        ASSERT_NEAR(gs[i], s[k][i], tol * (1 + std::fabs(s[k][i])))
            << o.name << " state " << o.states[k] << " step " << step;
      }
    }
  }
}

// gtest prints parameters of failing cases; a name beats raw bytes.
void PrintTo(const Opt &o, std::ostream *os) { *os << o.name; }

class Optimizer : public ::testing::TestWithParam<Opt> {};

TEST_P(Optimizer, ClippedRescaledWithWeightDecay) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    run_case(GetParam(), dt,
             {{"lr", 0.1},
              {"wd", 0.01},
              {"rescale_grad", 0.7},
              {"clip_gradient", 0.5}},
             true);
  }
}

TEST_P(Optimizer, NoClipping) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    run_case(GetParam(), dt,
             {{"lr", 0.05},
              {"wd", 0.0},
              {"rescale_grad", 1.3},
              {"clip_gradient", -1}},
             true);
  }
}

// Only lr given: every other parameter at its documented default.
TEST_P(Optimizer, Defaults) {
  run_case(
      GetParam(), MXC_DTYPE_FLOAT64,
      {{"lr", 0.02}, {"wd", 0}, {"rescale_grad", 1}, {"clip_gradient", -1}},
      false);
}

// Without the weight as output, a new array receives the new weight and
// the weight input is left alone; states are still updated in place.
TEST_P(Optimizer, SeparateOutputLeavesWeight) {
  const Opt &o = GetParam();
  std::vector<double> w0 = uniform(6, -1, 1, 5), g0 = uniform(6, -1, 1, 6);
  Arr w = make({6}, w0, MXC_DTYPE_FLOAT64),
      g = make({6}, g0, MXC_DTYPE_FLOAT64);
  std::vector<Arr> st;
  std::vector<mxc_ndarray> in = {w.h, g.h};
  for (size_t k = 0; k < o.states.size(); ++k) {
    st.push_back(make({6}, init_state(o.name, o.states[k], 6, 7 + (unsigned)k),
                      MXC_DTYPE_FLOAT64));
    in.push_back(st.back().h);
  }
  std::vector<std::vector<double>> before;
  for (auto &a : st) before.push_back(read(a));
  std::vector<mxc_ndarray> out = {nullptr};
  ASSERT_EQ(invoke_into(o.name, in, &out, {{"lr", "0.1"}}), MXC_OK) << err();
  Arr res(out[0]);
  EXPECT_EQ(read(w), w0);
  EXPECT_NE(read(res), w0);
  for (size_t k = 0; k < st.size(); ++k) {
    EXPECT_NE(read(st[k]), before[k]) << o.states[k] << " updated in place";
  }
}

INSTANTIATE_TEST_SUITE_P(All, Optimizer, ::testing::ValuesIn(opts()),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

// ---- bad input ----

struct Fixture {
  Arr w = make({2, 3}, uniform(6, -1, 1, 1), MXC_DTYPE_FLOAT64);
  Arr g = make({2, 3}, uniform(6, -1, 1, 2), MXC_DTYPE_FLOAT64);
  Arr s1 = make({2, 3}, uniform(6, 0, 1, 3), MXC_DTYPE_FLOAT64);
  Arr s2 = make({2, 3}, uniform(6, 0, 1, 4), MXC_DTYPE_FLOAT64);
};

// Reads an array we do not own.
std::vector<double> read_h(mxc_ndarray h) {
  Arr a(h);
  auto v = read(a);
  a.h = nullptr;
  return v;
}

void expect_fail(const std::string &name, std::vector<mxc_ndarray> in,
                 mxc_ndarray w, const Params &p, int code,
                 const std::vector<std::string> &needles) {
  auto before = read_h(w);
  std::vector<mxc_ndarray> out = {w};
  EXPECT_EQ(invoke_into(name, in, &out, p), code) << name;
  for (auto &n : needles) {
    EXPECT_NE(err().find(n), std::string::npos)
        << name << ": '" << err() << "' lacks '" << n << "'";
  }
  EXPECT_EQ(read_h(w), before) << "output untouched";
}

TEST(OptimizerErrors, MissingLearningRate) {
  Fixture f;
  expect_fail("sgd_update", {f.w.h, f.g.h}, f.w.h, {}, MXC_ERR_INVALID_ARGUMENT,
              {"sgd_update", "lr"});
  expect_fail("adam_update", {f.w.h, f.g.h, f.s1.h, f.s2.h}, f.w.h,
              {{"wd", "0.1"}}, MXC_ERR_INVALID_ARGUMENT, {"lr"});
  expect_fail("ftrl_update", {f.w.h, f.g.h, f.s1.h, f.s2.h}, f.w.h,
              {{"lr", "0"}}, MXC_ERR_INVALID_ARGUMENT, {"lr > 0"});
  expect_fail("sgd_mom_update", {f.w.h, f.g.h, f.s1.h}, f.w.h,
              {{"lr", "0.1"}, {"beta1", "0.9"}}, MXC_ERR_INVALID_ARGUMENT,
              {"unknown parameter 'beta1'"});
}

TEST(OptimizerErrors, WrongStateShapesNamed) {
  Fixture f;
  Arr bad = make({3, 2}, uniform(6, 0, 1, 5), MXC_DTYPE_FLOAT64);
  expect_fail("adam_update", {f.w.h, f.g.h, f.s1.h, bad.h}, f.w.h,
              {{"lr", "0.1"}}, MXC_ERR_SHAPE, {"'var'", "(3,2)", "(2,3)"});
  expect_fail("sgd_update", {f.w.h, bad.h}, f.w.h, {{"lr", "0.1"}},
              MXC_ERR_SHAPE, {"'grad'", "(3,2)"});
  // An output of the wrong shape.
  Arr out = make({6}, uniform(6, 0, 1, 6), MXC_DTYPE_FLOAT64);
  expect_fail("sgd_update", {f.w.h, f.g.h}, out.h, {{"lr", "0.1"}},
              MXC_ERR_SHAPE, {"output 0", "(6)"});
}

TEST(OptimizerErrors, WrongArity) {
  Fixture f;
  expect_fail("sgd_mom_update", {f.w.h, f.g.h}, f.w.h, {{"lr", "0.1"}},
              MXC_ERR_INVALID_ARGUMENT, {"got 2 inputs; expected 3"});
  expect_fail("rmspropalex_update", {f.w.h, f.g.h, f.s1.h}, f.w.h,
              {{"lr", "0.1"}}, MXC_ERR_INVALID_ARGUMENT,
              {"got 3 inputs; expected 5"});
  expect_fail("sgd_update", {f.w.h, f.g.h, f.s1.h}, f.w.h, {{"lr", "0.1"}},
              MXC_ERR_INVALID_ARGUMENT, {"got 3 inputs; expected 2"});
}

TEST(OptimizerErrors, Dtypes) {
  Fixture f;
  Arr gi = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_FLOAT32);
  expect_fail("sgd_update", {f.w.h, gi.h}, f.w.h, {{"lr", "0.1"}},
              MXC_ERR_DTYPE, {"'grad'", "float32", "float64"});
  Arr wi = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_INT32);
  Arr gi2 = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_INT32);
  expect_fail("sgd_update", {wi.h, gi2.h}, wi.h, {{"lr", "0.1"}}, MXC_ERR_DTYPE,
              {"float32 or float64"});
}

TEST(OptimizerErrors, NotDifferentiableAndMutatesStates) {
  for (auto &o : opts()) {
    mxc_op op = nullptr;
    ASSERT_EQ(mxc_op_find(o.name, &op), MXC_OK) << o.name;
    int n_in = 0, variadic = 1;
    ASSERT_EQ(mxc_op_inputs(op, &n_in, &variadic), MXC_OK);
    EXPECT_EQ(n_in, 2 + (int)o.states.size()) << o.name;
    EXPECT_EQ(variadic, 0);
    for (size_t k = 0; k < o.states.size(); ++k) {
      const char *nm = nullptr;
      ASSERT_EQ(mxc_op_input_name(op, 2 + (int)k, &nm), MXC_OK);
      EXPECT_STREQ(nm, o.states[k]) << o.name;
    }
  }
  Fixture f;
  std::vector<double> w = read(f.w);
  mxc_ndarray in[3] = {f.w.h, f.g.h, f.s1.h};
  const char *k[] = {"lr"}, *v[] = {"0.1"};
  mxc_ndarray ig[3] = {nullptr, nullptr, nullptr};
  mxc_ndarray og = f.g.h;
  ASSERT_EQ(
      mxct_grad_eval("sgd_mom_update", k, v, 1, in, 3, &f.w.h, 1, &og, ig),
      MXC_OK)
      << err();
  for (auto h : ig) EXPECT_EQ(h, nullptr);
}

}  // namespace
