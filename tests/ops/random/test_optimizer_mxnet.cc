// MXNet 1.9's multi-precision, aggregated, FTML and LAMB updates against
// references written here from MXNet's published update rules, over
// several steps with rescale_grad, clip_gradient and weight decay, checking
// the weight and every state after each step; float16 weights with float32
// master copies; and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {
namespace {

using V = std::vector<double>;

const int F16 = MXC_DTYPE_FLOAT16, F32 = MXC_DTYPE_FLOAT32;

double clipv(double x, double c) {
  if (c < 0) return x;
  return std::max(-c, std::min(c, x));
}

V rounded(const V &v, int dt) { return decode(encode(v, dt), dt); }

std::string num(double x) {
  char b[64];
  snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// got against want within float32 storage (or half when dt is F16).
void expect_near_all(const V &got, const V &want, int dt, const char *what,
                     int step) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double rel = dt == F16 ? std::ldexp(1.0, -10) : 2e-6;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + 1e-7)
        << what << " element " << i << " step " << step;
  }
}

// MXNet's SGD rule on one element; mom may be null (no momentum). The
// master weight and momentum are float32 in MXNet: stored as float.
void sgd_ref(double &w, double g, double *mom, double lr, double wd,
             double momentum, double rescale, double clip) {
  double r = clipv(rescale * g, clip);
  if (mom) {
    *mom = (float)(momentum * *mom - lr * wd * w - lr * r);
    w = (float)(w + *mom);
  } else {
    w = (float)((1 - lr * wd) * w - lr * r);
  }
}

struct Group {
  Shape shape;
  V w, mom;  // master weight and momentum of the reference
};

// One test of a (multi_)(mp_)sgd(_mom)_update operator over three steps.
void run_sgd_case(const std::string &op, int nw, bool mp, bool with_mom,
                  bool multi) {
  const double lrs[] = {0.1, 0.05, 0.2}, wds[] = {0.0, 0.01, 0.1};
  const Shape shapes[] = {{7}, {2, 3}, {5}};
  const double rescale = 0.5, clip = 0.3, momentum = 0.9;
  int dt = mp ? F16 : F32;
  std::vector<Group> ref(nw);
  std::vector<Arr> weights, moms, w32s;
  for (int k = 0; k < nw; ++k) {
    ref[k].shape = shapes[k];
    ref[k].w = rounded(uniform(numel(shapes[k]), -1, 1, 10 + k), dt);
    ref[k].mom = V(ref[k].w.size(), 0.0);
    weights.push_back(make(shapes[k], ref[k].w, dt));
    moms.push_back(make(shapes[k], ref[k].mom, F32));
    w32s.push_back(make(shapes[k], ref[k].w, F32));
  }
  Params p = {{"rescale_grad", num(rescale)}, {"clip_gradient", num(clip)}};
  if (with_mom) p.push_back({"momentum", num(momentum)});
  if (multi) {
    std::string l = "(", d = "(";
    for (int k = 0; k < nw; ++k) {
      l += num(lrs[k]) + (k + 1 < nw ? ", " : ")");
      d += num(wds[k]) + (k + 1 < nw ? "," : ")");
    }
    p.push_back({"lrs", l});
    p.push_back({"wds", d});
    p.push_back({"num_weights", std::to_string(nw)});
  } else {
    p.push_back({"lr", num(lrs[0])});
    p.push_back({"wd", num(wds[0])});
  }
  for (int step = 0; step < 3; ++step) {
    std::vector<Arr> grads;
    std::vector<const Arr *> in;
    for (int k = 0; k < nw; ++k) {
      V g = rounded(uniform(numel(shapes[k]), -1.5, 1.5, 100 * step + k), dt);
      grads.push_back(make(shapes[k], g, dt));
      for (size_t i = 0; i < g.size(); ++i) {
        double *m = with_mom ? &ref[k].mom[i] : nullptr;
        sgd_ref(ref[k].w[i], g[i], m, lrs[k], wds[k], momentum, rescale, clip);
        if (!mp) ref[k].w[i] = rounded({ref[k].w[i]}, dt)[0];
      }
    }
    for (int k = 0; k < nw; ++k) {
      in.push_back(&weights[k]);
      in.push_back(&grads[k]);
      if (with_mom) in.push_back(&moms[k]);
      if (mp) in.push_back(&w32s[k]);
    }
    int rc = -1;
    auto out = invoke(op, in, p, &rc);
    ASSERT_EQ(rc, MXC_OK) << op << ": " << err();
    ASSERT_EQ((int)out.size(), nw);
    for (int k = 0; k < nw; ++k) {
      EXPECT_EQ(out[k].dtype(), dt);
      EXPECT_EQ(out[k].shape(), shapes[k]);
      auto got = read(out[k]);
      expect_near_all(got, ref[k].w, dt, (op + " weight").c_str(), step);
      if (mp) {
        auto w32 = read(w32s[k]);
        expect_near_all(w32, ref[k].w, F32, (op + " weight32").c_str(), step);
        // The half weight is the master weight rounded once.
        EXPECT_EQ(got, rounded(w32, F16)) << op << " step " << step;
      }
      if (with_mom) {
        expect_near_all(read(moms[k]), ref[k].mom, F32,
                        (op + " mom").c_str(), step);
      }
      weights[k] = make(shapes[k], got, dt);  // the next step's weight
    }
  }
}

TEST(MxnetOptim, MpSgd) {
  run_sgd_case("mp_sgd_update", 1, true, false, false);
  run_sgd_case("mp_sgd_mom_update", 1, true, true, false);
}

TEST(MxnetOptim, MultiSgd) {
  run_sgd_case("multi_sgd_update", 3, false, false, true);
  run_sgd_case("multi_sgd_mom_update", 3, false, true, true);
  run_sgd_case("multi_mp_sgd_update", 3, true, false, true);
  run_sgd_case("multi_mp_sgd_mom_update", 3, true, true, true);
  run_sgd_case("multi_sgd_update", 1, false, false, true);
}

TEST(MxnetOptim, Ftml) {
  const int n = 9;
  const double lr = 0.05, b1 = 0.6, b2 = 0.999, eps = 1e-8, wd = 0.01,
               rescale = 0.5, clip = 0.3;
  V w = rounded(uniform(n, -1, 1, 3), F32), d(n, 0), v(n, 0), z(n, 0);
  Arr ad = make({n}, d), av = make({n}, v), az = make({n}, z);
  for (int t = 1; t <= 3; ++t) {
    V g = rounded(uniform(n, -1.5, 1.5, 40 + t), F32);
    Arr aw = make({n}, w), ag = make({n}, g);
    int rc = -1;
    auto out = invoke("ftml_update", {&aw, &ag, &ad, &av, &az},
                      {{"lr", num(lr)}, {"beta1", num(b1)}, {"beta2", num(b2)},
                       {"epsilon", num(eps)}, {"t", std::to_string(t)},
                       {"wd", num(wd)}, {"rescale_grad", num(rescale)},
                       {"clip_grad", num(clip)}},
                      &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    for (int i = 0; i < n; ++i) {
      double gi = clipv(rescale * g[i] + wd * w[i], clip);
      v[i] = (float)(b2 * v[i] + (1 - b2) * gi * gi);
      double dt = (1 - std::pow(b1, t)) / lr *
                  (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
      z[i] = (float)(b1 * z[i] + (1 - b1) * gi - (dt - b1 * d[i]) * w[i]);
      d[i] = (float)dt;
      w[i] = (float)(-z[i] / d[i]);
    }
    expect_near_all(read(ad), d, F32, "ftml d", t);
    expect_near_all(read(av), v, F32, "ftml v", t);
    expect_near_all(read(az), z, F32, "ftml z", t);
    expect_near_all(read(out[0]), w, F32, "ftml weight", t);
    w = read(out[0]);
  }
}

double norm2(const V &x) {
  double s = 0;
  for (double e : x) s += e * e;
  return std::sqrt(s);
}

// LAMB over three steps: phase 1 against the rule, r1/r2 computed here,
// phase 2 against w - lr * r1/r2 * g; mp forms with a float16 weight.
void run_lamb(bool bias_correction, bool mp, double lower, double upper) {
  const int n = 8;
  const double b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.01, rescale = 0.5,
               clip = 0.3, lr = 0.01;
  int dt = mp ? F16 : F32;
  V w = rounded(uniform(n, -1, 1, 5), dt), m(n, 0), u(n, 0);
  Arr am = make({n}, m), au = make({n}, u), aw32 = make({n}, w);
  std::string p1 = mp ? "mp_lamb_update_phase1" : "lamb_update_phase1";
  std::string p2 = mp ? "mp_lamb_update_phase2" : "lamb_update_phase2";
  for (int t = 1; t <= 3; ++t) {
    V g = rounded(uniform(n, -1.5, 1.5, 60 + t), dt);
    Arr aw = make({n}, w, dt), ag = make({n}, g, dt);
    std::vector<const Arr *> in1 = {&aw, &ag, &am, &au};
    if (mp) in1.push_back(&aw32);
    int rc = -1;
    auto gout = invoke(p1, in1,
                       {{"beta1", num(b1)}, {"beta2", num(b2)},
                        {"epsilon", num(eps)}, {"t", std::to_string(t)},
                        {"bias_correction", bias_correction ? "1" : "0"},
                        {"wd", num(wd)}, {"rescale_grad", num(rescale)},
                        {"clip_gradient", num(clip)}},
                       &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    EXPECT_EQ(gout[0].dtype(), mp ? F32 : dt);
    V gref(n);
    for (int i = 0; i < n; ++i) {
      double r = clipv(rescale * g[i], clip);
      m[i] = (float)(b1 * m[i] + (1 - b1) * r);
      u[i] = (float)(b2 * u[i] + (1 - b2) * r * r);
      double mh = bias_correction ? m[i] / (1 - std::pow(b1, t)) : m[i];
      double uh = bias_correction ? u[i] / (1 - std::pow(b2, t)) : u[i];
      gref[i] = mh / (std::sqrt(uh) + eps) + wd * w[i];
    }
    expect_near_all(read(am), m, F32, "lamb mean", t);
    expect_near_all(read(au), u, F32, "lamb var", t);
    V gv = read(gout[0]);
    expect_near_all(gv, gref, F32, "lamb g", t);
    double r1 = norm2(w), r2 = norm2(gv);
    Arr ar1 = make({1}, {r1}), ar2 = make({1}, {r2});
    std::vector<const Arr *> in2 = {&aw, &gout[0], &ar1, &ar2};
    if (mp) in2.push_back(&aw32);
    auto wout = invoke(p2, in2,
                       {{"lr", num(lr)}, {"lower_bound", num(lower)},
                        {"upper_bound", num(upper)}},
                       &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    EXPECT_EQ(wout[0].dtype(), dt);
    double r1f = (float)r1, r2f = (float)r2;
    if (lower >= 0) r1f = std::max(r1f, lower);
    if (upper >= 0) r1f = std::min(r1f, upper);
    double lrs = r1f == 0 || r2f == 0 ? lr : lr * r1f / r2f;
    V wref(n);
    for (int i = 0; i < n; ++i) wref[i] = w[i] - lrs * gv[i];
    expect_near_all(read(wout[0]), wref, dt, "lamb weight", t);
    w = read(wout[0]);
    if (mp) aw32 = make({n}, w);  // the caller keeps the master copy
  }
}

TEST(MxnetOptim, Lamb) {
  run_lamb(true, false, -1, -1);
  run_lamb(false, false, -1, -1);
  run_lamb(true, false, 5.0, 10.0);  // r1 (about 1.7) raised to 5
  run_lamb(true, false, -1, 0.5);    // r1 lowered to 0.5
  run_lamb(true, true, -1, -1);
}

TEST(MxnetOptim, LambZeroNormsUseLr) {
  Arr w = make({2}, {1, 2}), g = make({2}, {0.5, -0.5});
  Arr zero = make({1}, {0}), r2 = make({1}, {3});
  int rc = -1;
  auto out = invoke("lamb_update_phase2", {&w, &g, &zero, &r2},
                    {{"lr", "0.1"}}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(read(out[0]), (V{(float)(1 - 0.05), (float)(2 + 0.05)}));
}

TEST(MxnetOptim, SparseAdagradIsAdagrad) {
  mxc_op a = nullptr, b = nullptr;
  ASSERT_EQ(mxc_op_find("_sparse_adagrad_update", &a), MXC_OK);
  ASSERT_EQ(mxc_op_find("adagrad_update", &b), MXC_OK);
  V w = {0.5, -1, 2}, g = {1, -3, 0.25}, h = {0.1, 0, 2};
  Arr aw = make({3}, w), ag = make({3}, g), ah = make({3}, h);
  int rc = -1;
  auto out = invoke("_sparse_adagrad_update", {&aw, &ag, &ah},
                    {{"lr", "0.1"}, {"epsilon", "1e-7"},
                     {"rescale_grad", "0.5"}, {"clip_gradient", "1"}},
                    &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  V wref(3), href(3);
  for (int i = 0; i < 3; ++i) {
    double r = clipv(0.5 * g[i], 1);
    href[i] = h[i] + r * r;
    wref[i] = w[i] - 0.1 * r / std::sqrt(href[i] + 1e-7);
  }
  expect_near_all(read(ah), href, F32, "history", 0);
  expect_near_all(read(out[0]), wref, F32, "weight", 0);
}

TEST(MxnetOptim, BadInput) {
  Arr w = make({3}, {1, 2, 3}), g = make({3}, {1, 1, 1});
  Arr w2 = make({2}, {1, 2}), g4 = make({4}, {1, 1, 1, 1});
  int rc = MXC_OK;
  // lrs/wds counts must match num_weights.
  invoke("multi_sgd_update", {&w, &g, &w2, &w2},
         {{"lrs", "(0.1)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_weights"), std::string::npos) << err();
  invoke("multi_sgd_update", {&w, &g},
         {{"lrs", "(0.1, x)"}, {"wds", "(0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("lrs"), std::string::npos) << err();
  invoke("multi_sgd_update", {&w, &g}, {{"lrs", "0.1"}, {"wds", "[0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  // A grad of another shape than its weight.
  invoke("multi_sgd_update", {&w, &g4}, {{"lrs", "0.1"}, {"wds", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  // Too many weights for the in-place state mask.
  invoke("multi_mp_sgd_mom_update", {&w, &g, &w, &w},
         {{"lrs", "0.1"}, {"wds", "0"}, {"num_weights", "9"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  // weight32 must be float32.
  Arr h = make({3}, {1, 2, 3}, F16), hg = make({3}, {1, 1, 1}, F16);
  invoke("mp_sgd_update", {&h, &hg, &h}, {{"lr", "0.1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("weight32"), std::string::npos) << err();
  // Integer weights.
  Arr i = make({3}, {1, 2, 3}, MXC_DTYPE_INT32);
  invoke("lamb_update_phase1", {&i, &i, &i, &i}, {{"t", "1"}, {"wd", "0"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  // r1, r2 hold one value each.
  invoke("lamb_update_phase2", {&w, &g, &w2, &w2}, {{"lr", "0.1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(1,)"), std::string::npos) << err();
  // FTML divides by lr and needs t >= 1.
  invoke("ftml_update", {&w, &g, &w, &w, &w}, {{"lr", "0"}, {"t", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("ftml_update", {&w, &g, &w, &w, &w}, {{"lr", "0.1"}, {"t", "0"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  // lamb phase 1 requires wd and t, as MXNet.
  invoke("lamb_update_phase1", {&w, &g, &w, &w}, {{"t", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace mxct
