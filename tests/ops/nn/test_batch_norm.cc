// BatchNorm against a loop reference in training mode (batch statistics,
// moving statistics updated in place) and inference mode (moving
// statistics, nothing updated), gradients by finite differences in both
// modes, and bad input.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;
using nnt::invoke_n;
using nnt::Training;

namespace {

// data (outer, C, inner) normalized per channel c.
struct Ref {
  std::vector<double> out, mean, var, mm, mv;
};

Ref bn_ref(const std::vector<double> &x, int64_t outer, int64_t c,
           int64_t inner, const std::vector<double> &gamma,
           const std::vector<double> &beta, std::vector<double> mm,
           std::vector<double> mv, bool training, bool fix_gamma, double eps,
           double momentum) {
  Ref r;
  r.out.resize(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = mm[ch], var = mv[ch];
    if (training) {
      double s = 0, q = 0, m = (double)(outer * inner);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < inner; ++k) s += x[(o * c + ch) * inner + k];
      mean = s / m;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < inner; ++k) {
          double d = x[(o * c + ch) * inner + k] - mean;
          q += d * d;
        }
      var = q / m;
      mm[ch] = mm[ch] * momentum + mean * (1 - momentum);
      mv[ch] = mv[ch] * momentum + var * (1 - momentum);
    }
    double g = fix_gamma ? 1 : gamma[ch];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t i = (o * c + ch) * inner + k;
        r.out[i] = (x[i] - mean) / std::sqrt(var + eps) * g + beta[ch];
      }
    r.mean.push_back(mean);
    r.var.push_back(var);
  }
  r.mm = mm;
  r.mv = mv;
  return r;
}

struct Inputs {
  std::vector<double> x, gamma, beta, mm, mv;
};

Inputs inputs(int64_t n, int64_t c) {
  Inputs in;
  in.x = uniform(n, -2, 3, 21);
  in.gamma = uniform(c, 0.5, 1.5, 22);
  in.beta = uniform(c, -1, 1, 23);
  in.mm = uniform(c, -0.5, 0.5, 24);
  in.mv = uniform(c, 0.5, 2, 25);
  return in;
}

void run_case(bool training, bool fix_gamma, int dt) {
  SCOPED_TRACE(std::string(training ? "training" : "inference") +
               (fix_gamma ? " fix_gamma" : "") +
               (dt == MXC_DTYPE_FLOAT32 ? " float32" : " float64"));
  const int64_t outer = 4, c = 3, inner = 5;
  Inputs v = inputs(outer * c * inner, c);
  Arr x = make({outer, c, inner}, v.x, dt), g = make({c}, v.gamma, dt),
      b = make({c}, v.beta, dt), mm = make({c}, v.mm, dt),
      mv = make({c}, v.mv, dt);
  Params p = {{"eps", "0.001"},
              {"momentum", "0.8"},
              {"fix_gamma", fix_gamma ? "true" : "false"}};
  Training mode(training ? 1 : 0);
  auto out = invoke_n("BatchNorm", {&x, &g, &b, &mm, &mv}, p, 3);
  ASSERT_EQ(out.size(), 3u);
  // Reference from the values as stored (float32 rounding included).
  Ref r = bn_ref(read(x), outer, c, inner, read(g), read(b),
                 read(make({c}, v.mm, dt)), read(make({c}, v.mv, dt)), training,
                 fix_gamma, 0.001, 0.8);
  double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 2e-6;
  expect_near(read(out[0]), r.out, tol, tol, "output");
  expect_near(read(out[1]), r.mean, tol, tol, "mean");
  // MXNet's var output is the inverse standard deviation.
  std::vector<double> inv_std;
  for (double v : r.var) inv_std.push_back(1 / std::sqrt(v + 0.001));
  expect_near(read(out[2]), inv_std, tol, tol, "var (1/sqrt(var + eps))");
  expect_near(read(mm), r.mm, tol, tol, "moving_mean after");
  expect_near(read(mv), r.mv, tol, tol, "moving_var after");
}

TEST(BatchNorm, TrainingUsesBatchStatsAndUpdatesMovingStats) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    run_case(true, false, dt);
    run_case(true, true, dt);
  }
}

TEST(BatchNorm, InferenceUsesMovingStatsAndLeavesThem) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    run_case(false, false, dt);
    run_case(false, true, dt);
  }
}

TEST(BatchNorm, MovingStatsFollowTheDocumentedFormula) {
  // Channel 0 holds {1, 3}: mean 2, biased var 1. Defaults: momentum 0.9.
  Arr x = make({2, 1}, {1, 3}, MXC_DTYPE_FLOAT64);
  Arr g = make({1}, {1}, MXC_DTYPE_FLOAT64),
      b = make({1}, {0}, MXC_DTYPE_FLOAT64);
  Arr mm = make({1}, {10}, MXC_DTYPE_FLOAT64),
      mv = make({1}, {5}, MXC_DTYPE_FLOAT64);
  Training mode(1);
  auto out = invoke("BatchNorm", {&x, &g, &b, &mm, &mv});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(read(mm)[0], 10 * 0.9 + 2 * 0.1, 1e-12);
  EXPECT_NEAR(read(mv)[0], 5 * 0.9 + 1 * 0.1, 1e-12);
  // Twice: the update compounds.
  invoke("BatchNorm", {&x, &g, &b, &mm, &mv});
  EXPECT_NEAR(read(mm)[0], (10 * 0.9 + 0.2) * 0.9 + 0.2, 1e-12);
}

TEST(BatchNorm, UseGlobalStatsInTraining) {
  Inputs v = inputs(2 * 3, 3);
  Arr x = make({2, 3}, v.x, MXC_DTYPE_FLOAT64),
      g = make({3}, v.gamma, MXC_DTYPE_FLOAT64),
      b = make({3}, v.beta, MXC_DTYPE_FLOAT64),
      mm = make({3}, v.mm, MXC_DTYPE_FLOAT64),
      mv = make({3}, v.mv, MXC_DTYPE_FLOAT64);
  Training mode(1);
  auto out = invoke("BatchNorm", {&x, &g, &b, &mm, &mv},
                    {{"use_global_stats", "true"}, {"fix_gamma", "false"}});
  Ref r = bn_ref(v.x, 2, 3, 1, v.gamma, v.beta, v.mm, v.mv, false, false, 1e-3,
                 0.9);
  expect_near(read(out[0]), r.out, 1e-12, 1e-12, "output");
  expect_near(read(mm), v.mm, 0, 0, "moving_mean untouched");
}

TEST(BatchNorm, AxisLastAndNegative) {
  Inputs v = inputs(2 * 3 * 4, 4);
  Arr x = make({2, 3, 4}, v.x, MXC_DTYPE_FLOAT64),
      g = make({4}, v.gamma, MXC_DTYPE_FLOAT64),
      b = make({4}, v.beta, MXC_DTYPE_FLOAT64),
      mm = make({4}, v.mm, MXC_DTYPE_FLOAT64),
      mv = make({4}, v.mv, MXC_DTYPE_FLOAT64);
  Training mode(1);
  auto out = invoke("BatchNorm", {&x, &g, &b, &mm, &mv},
                    {{"axis", "-1"}, {"fix_gamma", "false"}});
  Ref r =
      bn_ref(v.x, 6, 4, 1, v.gamma, v.beta, v.mm, v.mv, true, false, 1e-3, 0.9);
  expect_near(read(out[0]), r.out, 1e-12, 1e-12, "output");
  expect_near(read(mm), r.mm, 1e-12, 1e-12, "moving_mean");
}

TEST(BatchNorm, GradientTrainingMode) {
  Training mode(1);
  Inputs v = inputs(3 * 2 * 4, 2);
  for (auto fg : {"false", "true"}) {
    nnt::grad_check_hidden("BatchNorm", {{3, 2, 4}, {2}, {2}, {2}, {2}},
                           {v.x, v.gamma, v.beta, v.mm, v.mv},
                           {{"fix_gamma", fg}, {"eps", "0.01"}}, 3, 1);
  }
}

TEST(BatchNorm, GradientInferenceMode) {
  Training mode(0);
  Inputs v = inputs(3 * 2 * 4, 2);
  nnt::grad_check_hidden("BatchNorm", {{3, 2, 4}, {2}, {2}, {2}, {2}},
                         {v.x, v.gamma, v.beta, v.mm, v.mv},
                         {{"fix_gamma", "false"}}, 3, 1);
}

TEST(BatchNorm, FixGammaGivesZeroGammaGradientAndAuxGetNone) {
  Training mode(1);
  Inputs v = inputs(2 * 3, 3);
  std::vector<Arr> in;
  in.push_back(make({2, 3}, v.x, MXC_DTYPE_FLOAT64));
  for (auto *s : {&v.gamma, &v.beta, &v.mm, &v.mv})
    in.push_back(make({3}, *s, MXC_DTYPE_FLOAT64));
  std::vector<const Arr *> ip;
  for (auto &a : in) ip.push_back(&a);
  auto out = invoke_n("BatchNorm", ip, {}, 3);
  Arr og = make({2, 3}, uniform(6, -1, 1, 5), MXC_DTYPE_FLOAT64);
  auto ig =
      nnt::eval_grad("BatchNorm", ip, {&out[0], &out[1], &out[2]}, {&og}, {});
  ASSERT_EQ(ig.size(), 5u);
  ASSERT_NE(ig[1].h, nullptr);
  EXPECT_EQ(read(ig[1]), std::vector<double>({0, 0, 0}));
  EXPECT_EQ(ig[3].h, nullptr);
  EXPECT_EQ(ig[4].h, nullptr);
}

TEST(BatchNormBad, ShapesArityAxis) {
  Arr x = make({2, 3, 4}, uniform(24, -1, 1));
  Arr c3 = make({3}, {1, 1, 1}), c4 = make({4}, {1, 1, 1, 1});
  int rc = 0;
  invoke("BatchNorm", {&x, &c3, &c3, &c4, &c3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("('moving_mean') has shape (4); expected (3)"),
            std::string::npos)
      << err();
  EXPECT_NE(err().find("(2,3,4)"), std::string::npos) << err();
  invoke("BatchNorm", {&x, &c3, &c3, &c3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 4 inputs; expected 5"), std::string::npos) << err();
  invoke("BatchNorm", {&x, &c3, &c3, &c3, &c3}, {{"axis", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'axis' = 3 is out of range"), std::string::npos)
      << err();
  invoke("BatchNorm", {&x, &c3, &c3, &c3, &c3}, {{"momentum", "1.5"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("momentum"), std::string::npos) << err();
  Arr xd = make({2, 3}, uniform(6, -1, 1), MXC_DTYPE_FLOAT64);
  invoke("BatchNorm", {&xd, &c3, &c3, &c3, &c3}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

TEST(BatchNorm, OutputMeanVarMakesThreeVisibleOutputs) {
  for (const char *name : {"BatchNorm", "LayerNorm"}) {
    mxc_op op = nullptr;
    ASSERT_EQ(mxc_op_find(name, &op), MXC_OK);
    const char *k[] = {"output_mean_var"};
    for (const char *v : {"true", "false"}) {
      int n = 0;
      ASSERT_EQ(mxc_op_num_outputs(op, k, &v, 1, &n), MXC_OK) << err();
      EXPECT_EQ(n, std::string(v) == "true" ? 3 : 1) << name << " " << v;
    }
  }
}

}  // namespace
