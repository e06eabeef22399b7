// Loss layers: forward against references, and the gradients they
// produce checked against the loss-gradient formulas directly (they
// ignore the head gradient, so finite differences of the output do not
// apply), except softmax_cross_entropy, an ordinary operator checked by
// finite differences too.
#include <algorithm>
#include <functional>

#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

// softmax over groups (outer, n, inner).
std::vector<double> softmax_ref(const std::vector<double> &x, int64_t outer,
                                int64_t n, int64_t inner) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double mx = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j)
        mx = std::max(mx, x[(o * n + j) * inner + k]);
      for (int64_t j = 0; j < n; ++j)
        s += std::exp(x[(o * n + j) * inner + k] - mx);
      for (int64_t j = 0; j < n; ++j)
        y[(o * n + j) * inner + k] =
            std::exp(x[(o * n + j) * inner + k] - mx) / s;
    }
  return y;
}

// The gradient the operator produces, with a random head gradient (which
// it must ignore).
std::vector<double> loss_grad(const std::string &name, const Arr &data,
                              const Arr &label, const Params &p,
                              unsigned seed = 1) {
  auto out = invoke(name, {&data, &label}, p);
  EXPECT_EQ(out.size(), 1u);
  if (out.empty()) return {};
  Arr og = make(out[0].shape(), uniform(numel(out[0].shape()), -5, 5, seed),
                data.dtype());
  auto ig = nnt::eval_grad(name, {&data, &label}, {&out[0]}, {&og}, p);
  EXPECT_EQ(ig.size(), 2u);
  EXPECT_EQ(ig[1].h, nullptr) << "the label gets no gradient";
  return ig[0].h ? read(ig[0]) : std::vector<double>();
}

TEST(SoftmaxOutput, ForwardAndGradient2D) {
  auto xv = uniform(4 * 5, -3, 3, 71);
  std::vector<double> label = {0, 4, 2, 2};
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
    Arr x = make({4, 5}, xv, dt), l = make({4}, label, dt);
    auto sm = softmax_ref(read(x), 4, 5, 1);
    auto out = invoke("SoftmaxOutput", {&x, &l});
    expect_near(read(out[0]), sm, tol, tol, "softmax");
    for (auto gs : {1.0, 0.5}) {
      auto g = loss_grad("SoftmaxOutput", x, l,
                         {{"grad_scale", std::to_string(gs)}});
      std::vector<double> want(sm);
      for (int r = 0; r < 4; ++r) want[r * 5 + (int)label[r]] -= 1;
      for (auto &v : want) v *= gs;
      expect_near(g, want, tol, tol, "grad");
      // Another head gradient, same result.
      expect_near(loss_grad("SoftmaxOutput", x, l,
                            {{"grad_scale", std::to_string(gs)}}, 9),
                  g, 0, 0, "independent of ograd");
    }
  }
  // The alias.
  Arr x = make({4, 5}, xv), l = make({4}, label);
  EXPECT_EQ(read(invoke("Softmax", {&x, &l})[0]),
            read(invoke("SoftmaxOutput", {&x, &l})[0]));
}

TEST(SoftmaxOutput, IgnoreLabelAndNormalization) {
  auto xv = uniform(4 * 3, -2, 2, 72);
  std::vector<double> label = {1, -1, 2, -1};
  Arr x = make({4, 3}, xv, MXC_DTYPE_FLOAT64),
      l = make({4}, label, MXC_DTYPE_FLOAT64);
  auto sm = softmax_ref(xv, 4, 3, 1);
  auto base = [&](bool ignore) {
    std::vector<double> w(sm);
    for (int r = 0; r < 4; ++r) {
      if (label[r] < 0) {
        for (int j = 0; j < 3; ++j) w[r * 3 + j] = ignore ? 0 : sm[r * 3 + j];
      } else {
        w[r * 3 + (int)label[r]] -= 1;
      }
    }
    return w;
  };
  struct C {
    Params p;
    bool ignore;
    double norm;
  } cases[] = {
      {{{"use_ignore", "true"}}, true, 1},
      {{{"use_ignore", "true"}, {"normalization", "valid"}}, true, 2},
      {{{"use_ignore", "true"}, {"normalization", "batch"}}, true, 4},
      // MXNet's 'valid' leaves out labels equal to ignore_label even
      // without use_ignore (their rows still get a gradient).
      {{{"normalization", "valid"}}, false, 2},
      // Without use_ignore, -1 is just an invalid class: no one-hot.
      {{{"grad_scale", "3"}}, false, 1.0 / 3},
  };
  for (auto &c : cases) {
    auto want = base(c.ignore);
    for (auto &v : want) v /= c.norm;
    expect_near(loss_grad("SoftmaxOutput", x, l, c.p), want, 1e-14, 1e-15,
                c.p[0].first + "=" + c.p[0].second);
  }
}

TEST(SoftmaxOutput, MultiOutputAndPreserveShape) {
  // data (N=2, C=3, 4): classes on axis 1; label (2, 4).
  auto xv = uniform(24, -2, 2, 73);
  std::vector<double> label = {0, 1, 2, 0, 2, 2, 1, 0};
  Arr x = make({2, 3, 4}, xv, MXC_DTYPE_FLOAT64),
      l = make({2, 4}, label, MXC_DTYPE_FLOAT64);
  auto sm = softmax_ref(xv, 2, 3, 4);
  Params mo = {{"multi_output", "true"}, {"normalization", "batch"}};
  expect_near(read(invoke("SoftmaxOutput", {&x, &l}, mo)[0]), sm, 1e-14, 0,
              "multi_output softmax");
  std::vector<double> want(sm);
  for (int o = 0; o < 2; ++o)
    for (int k = 0; k < 4; ++k)
      want[(o * 3 + (int)label[o * 4 + k]) * 4 + k] -= 1;
  // MXNet 1.9: batch divides by N and, with multi_output, by the 4
  // positions per sample too.
  for (auto &v : want) v /= 2 * 4;
  expect_near(loss_grad("SoftmaxOutput", x, l, mo), want, 1e-14, 1e-15,
              "multi_output grad");
  // (N, 1, 4) labels are the same elements.
  Arr l3 = make({2, 1, 4}, label, MXC_DTYPE_FLOAT64);
  expect_near(loss_grad("SoftmaxOutput", x, l3, mo), want, 1e-14, 1e-15,
              "multi_output grad, label (N,1,4)");
  // preserve_shape: classes on the last axis, label (2, 3).
  std::vector<double> lp = {0, 3, 1, 2, 2, 0};
  Arr l2 = make({2, 3}, lp, MXC_DTYPE_FLOAT64);
  Params ps = {{"preserve_shape", "true"}};
  auto smp = softmax_ref(xv, 6, 4, 1);
  expect_near(read(invoke("SoftmaxOutput", {&x, &l2}, ps)[0]), smp, 1e-14, 0,
              "preserve_shape softmax");
  std::vector<double> wp(smp);
  for (int r = 0; r < 6; ++r) wp[r * 4 + (int)lp[r]] -= 1;
  expect_near(loss_grad("SoftmaxOutput", x, l2, ps), wp, 1e-14, 1e-15,
              "preserve_shape grad");
  // Default on 3-D data: flattened rows, label (N).
  Arr l1 = make({2}, {5, 11}, MXC_DTYPE_FLOAT64);
  auto smf = softmax_ref(xv, 2, 12, 1);
  auto wf = smf;
  wf[5] -= 1;
  wf[12 + 11] -= 1;
  expect_near(loss_grad("SoftmaxOutput", x, l1, {}), wf, 1e-14, 1e-15,
              "flattened grad");
}

TEST(SoftmaxOutput, LabelSmoothingAndIntegerLabels) {
  auto xv = uniform(2 * 4, -2, 2, 74);
  Arr x = make({2, 4}, xv, MXC_DTYPE_FLOAT64);
  Arr l = make({2}, {3, 0}, MXC_DTYPE_INT32);
  auto sm = softmax_ref(xv, 2, 4, 1);
  std::vector<double> want(sm);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 4; ++j)
      want[r * 4 + j] -= j == (r == 0 ? 3 : 0) ? 0.7 : 0.1;
  expect_near(loss_grad("SoftmaxOutput", x, l, {{"smooth_alpha", "0.3"}}), want,
              1e-14, 1e-15, "smoothed");
}

// A label shaped like data holds probabilities: MXNet's gradient is then
// (softmax - label) * grad_scale in every mode, with no normalization and
// no ignore_label.
TEST(SoftmaxOutput, ProbabilityLabel) {
  auto xv = uniform(2 * 3 * 2, -2, 2, 75);
  auto pv = uniform(12, 0, 1, 76);
  struct Mode {
    Params p;
    int64_t outer, n, inner;
    double gs;
  } modes[] = {
      {{{"grad_scale", "0.5"}, {"normalization", "batch"}}, 2, 6, 1, 0.5},
      {{{"multi_output", "true"}, {"normalization", "valid"},
        {"use_ignore", "true"}, {"ignore_label", "0"}},
       2, 3, 2, 1},
      {{{"preserve_shape", "true"}}, 6, 2, 1, 1},
  };
  for (auto &m : modes) {
    Arr x = make({2, 3, 2}, xv, MXC_DTYPE_FLOAT64);
    Arr l = make({2, 3, 2}, pv, MXC_DTYPE_FLOAT64);
    auto sm = softmax_ref(xv, m.outer, m.n, m.inner);
    auto out = invoke("SoftmaxOutput", {&x, &l}, m.p);
    ASSERT_EQ(out.size(), 1u);
    expect_near(read(out[0]), sm, 1e-14, 1e-14, "forward");
    double gs = m.gs;
    std::vector<double> want(sm.size());
    for (size_t i = 0; i < sm.size(); ++i) want[i] = (sm[i] - pv[i]) * gs;
    expect_near(loss_grad("SoftmaxOutput", x, l, m.p), want, 1e-14, 1e-14,
                "probability gradient");
  }
}

TEST(SoftmaxOutputBad, LabelShapeArityParams) {
  Arr x = make({4, 5}, uniform(20, -1, 1));
  Arr l = make({3}, {0, 1, 2});
  int rc = 0;
  invoke("SoftmaxOutput", {&x, &l}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("'label') has shape (3); expected (4)"),
            std::string::npos)
      << err();
  EXPECT_NE(err().find("data (4,5)"), std::string::npos) << err();
  invoke("SoftmaxOutput", {&x}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 1 inputs; expected 2"), std::string::npos) << err();
  Arr l4 = make({4}, {0, 1, 2, 3});
  invoke("SoftmaxOutput", {&x, &l4}, {{"normalization", "all"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("SoftmaxOutput", {&x, &l4}, {{"out_grad", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  Arr xi = make({4, 5}, uniform(20, -1, 1), MXC_DTYPE_INT32);
  invoke("SoftmaxOutput", {&xi, &l4}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

// ---- softmax_cross_entropy ----

TEST(SoftmaxCrossEntropy, ForwardAndGradient) {
  auto xv = uniform(3 * 4, -3, 3, 75);
  std::vector<double> label = {3, 0, 2};
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr x = make({3, 4}, xv, dt), l = make({3}, label, dt);
    auto out = invoke("softmax_cross_entropy", {&x, &l});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), Shape({1}));
    auto sm = softmax_ref(read(x), 3, 4, 1);
    double want = 0;
    for (int r = 0; r < 3; ++r) want -= std::log(sm[r * 4 + (int)label[r]]);
    EXPECT_NEAR(read(out[0])[0], want, dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 1e-5);
  }
  // Gradient with head gradient 1: softmax - onehot.
  Arr x = make({3, 4}, xv, MXC_DTYPE_FLOAT64),
      l = make({3}, label, MXC_DTYPE_FLOAT64);
  auto out = invoke("softmax_cross_entropy", {&x, &l});
  Arr one = make({1}, {1}, MXC_DTYPE_FLOAT64);
  auto ig =
      nnt::eval_grad("softmax_cross_entropy", {&x, &l}, {&out[0]}, {&one}, {});
  ASSERT_EQ(ig.size(), 2u);
  EXPECT_EQ(ig[1].h, nullptr);
  auto want = softmax_ref(xv, 3, 4, 1);
  for (int r = 0; r < 3; ++r) want[r * 4 + (int)label[r]] -= 1;
  expect_near(read(ig[0]), want, 1e-14, 1e-15, "grad");
  grad_check_except("softmax_cross_entropy", {{3, 4}, {3}}, {xv, label}, {}, {1});
}

TEST(SoftmaxCrossEntropyBad, Shapes) {
  Arr x = make({3, 4}, uniform(12, -1, 1));
  Arr l = make({4}, {0, 1, 2, 3});
  int rc = 0;
  invoke("softmax_cross_entropy", {&x, &l}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("'label') has shape (4); expected (3)"),
            std::string::npos)
      << err();
  Arr x3 = make({1, 3, 4}, uniform(12, -1, 1));
  invoke("softmax_cross_entropy", {&x3, &l}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("2-D"), std::string::npos) << err();
}

// ---- regression outputs ----

TEST(RegressionOutputs, ForwardAndLossGradients) {
  // data (3, 2): num_output = 2, so gradients are divided by 2.
  auto xv = uniform(6, -2, 2, 76), lv = uniform(6, -1, 1, 77);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
    Arr x = make({3, 2}, xv, dt), l = make({3, 2}, lv, dt);
    auto xs = read(x), ls = read(l);
    struct R {
      const char *name;
      std::function<double(double)> f;
      std::function<double(double)> d;
    } rs[] = {
        {"LinearRegressionOutput", [](double v) { return v; },
         [](double d) { return d; }},
        {"LogisticRegressionOutput",
         [](double v) { return 1 / (1 + std::exp(-v)); },
         [](double d) { return d; }},
        {"MAERegressionOutput", [](double v) { return v; },
         [](double d) { return (double)((d > 0) - (d < 0)); }},
    };
    for (auto &r : rs) {
      auto out = invoke(r.name, {&x, &l});
      std::vector<double> y, want;
      for (double v : xs) y.push_back(r.f(v));
      expect_near(read(out[0]), y, tol, tol, r.name);
      for (size_t i = 0; i < y.size(); ++i)
        want.push_back(r.d(y[i] - ls[i]) * 0.5 / 2);
      expect_near(loss_grad(r.name, x, l, {{"grad_scale", "0.5"}}), want, tol,
                  tol, std::string(r.name) + " grad");
    }
  }
}

TEST(RegressionOutputs, LabelShapes) {
  // (N, 1) data takes an (N) label; num_output is 1.
  Arr x = make({3, 1}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr l = make({3}, {0, 0, 5}, MXC_DTYPE_FLOAT64);
  expect_near(loss_grad("LinearRegressionOutput", x, l, {}), {1, 2, -2}, 0, 0,
              "(N,1) with (N)");
  Arr bad = make({2, 2}, {0, 0, 0, 0}, MXC_DTYPE_FLOAT64);
  Arr xb = make({4}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  int rc = 0;
  invoke("LinearRegressionOutput", {&xb, &bad}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("'label') has shape (2,2) but data has shape (4)"),
            std::string::npos)
      << err();
  invoke("MAERegressionOutput", {&xb}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr lf = make({4}, {1, 2, 3, 4});
  invoke("LogisticRegressionOutput", {&xb, &lf}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

}  // namespace
