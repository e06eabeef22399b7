// Imperative autograd through the public API: gradients of recorded
// computations against finite differences and hand-derived values, and
// the rules of recording, marking, backward, retain_graph and detach.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/autograd/ag_util.h"

namespace {

using namespace agt;

Arr mark(const Arr &x, int req = MXC_REQ_WRITE, double init = 0) {
  Arr g = make(x.shape(), std::vector<double>((size_t)numel(x.shape()), init),
               x.dtype());
  EXPECT_EQ(mxc_autograd_mark_variables(1, &x.h, &req, &g.h), MXC_OK) << err();
  return g;
}

int backward1(const Arr &y, mxc_ndarray hg = nullptr, int retain = 0) {
  return mxc_autograd_backward(1, &y.h, hg ? &hg : nullptr, retain);
}

void expect_near(const std::vector<double> &a, const std::vector<double> &b,
                 double tol = 1e-9) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << i;
}

TEST(Autograd, TheCheckerCatchesAWrongGradient) {
  // BlockGrad is the identity with a zero gradient by definition: the
  // finite differences disagree, and the checker must say so.
  Program prog = [](const std::vector<mxc_ndarray> &v) {
    std::vector<Arr> r;
    r.push_back(invoke1("BlockGrad", {v[0]}));
    return r;
  };
  int bad = 0;
  EXPECT_NONFATAL_FAILURE(
      bad = check_gradients("BlockGrad", prog, {Input{{1}, {2}}}),
      "finite difference");
  EXPECT_EQ(bad, 1);
}

TEST(Autograd, CompositeExpressionMatchesFiniteDifferences) {
  // y = sum(sigmoid(x * w + b)^2), b broadcast over rows.
  Program prog = [](const std::vector<mxc_ndarray> &v) {
    std::vector<Arr> r;
    Arr xw = invoke1("elemwise_mul", {v[0], v[1]});
    Arr z = invoke1("broadcast_add", {xw.h, v[2]});
    Arr s = invoke1("sigmoid", {z.h});
    Arr q = invoke1("square", {s.h});
    r.push_back(invoke1("sum", {q.h}));
    return r;
  };
  check_gradients("sum(sigmoid(x*w+b)^2)", prog,
                  {Input{{3, 4}, uniform(12, -2, 2, 1)},
                   Input{{3, 4}, uniform(12, -2, 2, 2)},
                   Input{{1, 4}, uniform(4, -1, 1, 3)}});
}

// Two-layer perceptron with a cross-entropy loss.
std::vector<Arr> mlp(const std::vector<mxc_ndarray> &v, const char *loss) {
  std::vector<Arr> r;
  Arr h = invoke1("FullyConnected", {v[0], v[1], v[2]}, {{"num_hidden", "5"}});
  Arr a = invoke1("Activation", {h.h}, {{"act_type", "relu"}});
  Arr o = invoke1("FullyConnected", {a.h, v[3], v[4]}, {{"num_hidden", "3"}});
  r.push_back(invoke1(loss, {o.h, v[5]}));
  return r;
}

std::vector<Input> mlp_inputs() {
  return {Input{{4, 6}, uniform(24, -1, 1, 11)},
          Input{{5, 6}, uniform(30, -1, 1, 12)},
          Input{{5}, uniform(5, -0.5, 0.5, 13)},
          Input{{3, 5}, uniform(15, -1, 1, 14)},
          Input{{3}, uniform(3, -0.5, 0.5, 15)},
          Input{{4}, {0, 2, 1, 2}, MXC_DTYPE_FLOAT64, false}};
}

TEST(Autograd, MlpWithCrossEntropyMatchesFiniteDifferences) {
  check_gradients(
      "mlp",
      [](const std::vector<mxc_ndarray> &v) {
        return mlp(v, "softmax_cross_entropy");
      },
      mlp_inputs());
}

TEST(Autograd, MlpWithSoftmaxOutputGivesTheCrossEntropyGradient) {
  // SoftmaxOutput's gradient is that of the summed cross-entropy whatever
  // the head gradient, so both losses give the same parameter gradients;
  // the cross-entropy ones are checked against finite differences above.
  auto inputs = mlp_inputs();
  std::vector<std::vector<double>> got[2];
  const char *losses[2] = {"softmax_cross_entropy", "SoftmaxOutput"};
  for (int l = 0; l < 2; ++l) {
    std::vector<Arr> xs, gs;
    std::vector<mxc_ndarray> h;
    for (auto &i : inputs) {
      xs.push_back(make(i.shape, i.values));
      h.push_back(xs.back().h);
    }
    for (int i = 0; i < 5; ++i) gs.push_back(mark(xs[i]));
    std::vector<Arr> y;
    {
      Recording r;
      y = mlp(h, losses[l]);
    }
    ASSERT_EQ(backward1(y[0]), MXC_OK) << err();
    for (auto &g : gs) got[l].push_back(read(g));
  }
  for (int i = 0; i < 5; ++i) expect_near(got[0][i], got[1][i], 1e-9);
}

TEST(Autograd, SoftmaxOutputGradientIsSoftmaxMinusOneHot) {
  std::vector<double> x = uniform(6, -2, 2, 3), label = {2, 0};
  Arr a = make({2, 3}, x), l = make({2}, label);
  Arr g = mark(a);
  Arr y;
  {
    Recording r;
    y = invoke1("SoftmaxOutput", {a.h, l.h});
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  std::vector<double> want(6);
  for (int i = 0; i < 2; ++i) {
    double m = std::max(x[3 * i], std::max(x[3 * i + 1], x[3 * i + 2])), s = 0;
    for (int j = 0; j < 3; ++j) s += std::exp(x[3 * i + j] - m);
    for (int j = 0; j < 3; ++j) {
      want[3 * i + j] =
          std::exp(x[3 * i + j] - m) / s - (j == label[i] ? 1 : 0);
    }
  }
  expect_near(read(g), want, 1e-12);
}

TEST(Autograd, VariableUsedTwiceSumsItsGradients) {
  std::vector<double> xv = {0.5, -1.5, 2.0, 3.0};
  Arr x = make({4}, xv);
  Arr g = mark(x);
  Arr y;
  {
    Recording r;
    Arr xx = invoke1("elemwise_mul", {x.h, x.h});
    y = invoke1("elemwise_add", {xx.h, x.h});
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  std::vector<double> want;
  for (double v : xv) want.push_back(2 * v + 1);
  expect_near(read(g), want);
}

TEST(Autograd, AddRequestAccumulatesAcrossBackwardCalls) {
  Arr x = make({3}, {1, 2, 3});
  Arr g = mark(x, MXC_REQ_ADD, 1.0);
  Arr y;
  {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "3"}});
  }
  ASSERT_EQ(backward1(y, nullptr, 1), MXC_OK) << err();
  ASSERT_EQ(backward1(y, nullptr, 1), MXC_OK) << err();
  expect_near(read(g), {7, 7, 7});
}

TEST(Autograd, WriteRequestOverwrites) {
  Arr x = make({3}, {1, 2, 3});
  Arr g = mark(x, MXC_REQ_WRITE, 100.0);
  Arr y;
  {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "3"}});
  }
  ASSERT_EQ(backward1(y, nullptr, 1), MXC_OK) << err();
  ASSERT_EQ(backward1(y, nullptr, 1), MXC_OK) << err();
  expect_near(read(g), {3, 3, 3});
}

TEST(Autograd, NullRequestLeavesTheBufferAlone) {
  Arr x = make({2}, {1, 2}), w = make({2}, {3, 4});
  Arr gx = mark(x, MXC_REQ_NULL, 9.0), gw = mark(w);
  Arr y;
  {
    Recording r;
    y = invoke1("elemwise_mul", {x.h, w.h});
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(gx), {9, 9});
  expect_near(read(gw), {1, 2});
}

TEST(Autograd, HeadGradientsScaleTheResult) {
  Arr x = make({3}, {1, 2, 3});
  Arr g = mark(x);
  Arr y, z;
  {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "2"}});
    z = invoke1("square", {x.h});
  }
  Arr h = make({3}, {0.5, -1, 4});
  // Two heads: y with an explicit gradient, z with ones (NULL slot).
  mxc_ndarray heads[2] = {y.h, z.h}, hg[2] = {h.h, nullptr};
  ASSERT_EQ(mxc_autograd_backward(2, heads, hg, 0), MXC_OK) << err();
  expect_near(read(g), {2 * 0.5 + 2 * 1, 2 * -1 + 2 * 2, 2 * 4 + 2 * 3});
}

TEST(Autograd, MarkedVariableAsItsOwnHead) {
  Arr x = make({2}, {1, 2});
  Arr g = mark(x);
  Arr h = make({2}, {5, 6});
  ASSERT_EQ(backward1(x, h.h), MXC_OK) << err();
  expect_near(read(g), {5, 6});
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  Arr x = make({2}, {1, 2});
  Arr g = mark(x, MXC_REQ_ADD);
  Arr y;
  {
    Recording r;
    Arr e = invoke1("exp", {x.h});
    y = invoke1("sum", {e.h});
  }
  ASSERT_EQ(backward1(y, nullptr, 1), MXC_OK) << err();
  ASSERT_EQ(backward1(y, nullptr, 0), MXC_OK) << err();
  expect_near(read(g), {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-12);
  // The history is freed now.
  EXPECT_EQ(backward1(y), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("freed"), std::string::npos)
      << err();
  expect_near(read(g), {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-12);
  // A result computed from a freed history cannot be differentiated either.
  Arr z;
  {
    Recording r;
    z = invoke1("_mul_scalar", {y.h}, {{"scalar", "2"}});
  }
  EXPECT_EQ(backward1(z), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Autograd, DetachStopsGradients) {
  std::vector<double> xv = {1.5, -2, 3};
  Arr x = make({3}, xv);
  Arr g = mark(x);
  Arr y, d;
  ASSERT_EQ(mxc_ndarray_detach(x.h, &d.h), MXC_OK) << err();
  EXPECT_EQ(read(d), xv);  // same values
  {
    Recording r;
    y = invoke1("elemwise_mul", {d.h, x.h});
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(g), xv);  // d(d*x)/dx with d constant = d = x
  Arr dy;
  ASSERT_EQ(mxc_ndarray_detach(y.h, &dy.h), MXC_OK) << err();
  EXPECT_EQ(backward1(dy), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Autograd, RecordingOffRecordsNothing) {
  int on = -1, prev = -1;
  ASSERT_EQ(mxc_autograd_is_recording(&on), MXC_OK);
  EXPECT_EQ(on, 0);
  Arr x = make({2}, {1, 2});
  Arr g = mark(x);
  Arr y = invoke1("exp", {x.h});
  EXPECT_EQ(backward1(y), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("heads[0]"), std::string::npos);
  ASSERT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  EXPECT_EQ(prev, 0);
  ASSERT_EQ(mxc_autograd_is_recording(&on), MXC_OK);
  EXPECT_EQ(on, 1);
  // Inputs without history: nothing recorded even while recording.
  Arr c = make({2}, {3, 4});
  Arr z = invoke1("exp", {c.h});
  ASSERT_EQ(mxc_autograd_set_recording(0, &prev), MXC_OK);
  EXPECT_EQ(prev, 1);
  EXPECT_EQ(backward1(z), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_autograd_is_recording(nullptr), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Autograd, RecordingIsPerThread) {
  Recording r;
  int other = -1;
  std::thread t([&] { mxc_autograd_is_recording(&other); });
  t.join();
  EXPECT_EQ(other, 0);
}

TEST(Autograd, MarkErrors) {
  Arr x = make({2, 3}, std::vector<double>(6, 1.0));
  Arr gbad = make({3, 2}, std::vector<double>(6, 0.0));
  Arr gf32 = make({2, 3}, std::vector<double>(6, 0.0), MXC_DTYPE_FLOAT32);
  Arr gok = zeros({2, 3});
  EXPECT_EQ(mxc_autograd_mark_variables(1, &x.h, nullptr, &gbad.h),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc_last_error()).find("grads[0]"), std::string::npos);
  EXPECT_EQ(mxc_autograd_mark_variables(1, &x.h, nullptr, &gf32.h),
            MXC_ERR_DTYPE);
  EXPECT_EQ(mxc_autograd_mark_variables(1, nullptr, nullptr, &gok.h),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_autograd_mark_variables(1, &x.h, nullptr, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_autograd_mark_variables(-1, &x.h, nullptr, &gok.h),
            MXC_ERR_INVALID_ARGUMENT);
  int bad_req = 2;
  EXPECT_EQ(mxc_autograd_mark_variables(1, &x.h, &bad_req, &gok.h),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray null_h = nullptr;
  EXPECT_EQ(mxc_autograd_mark_variables(1, &null_h, nullptr, &gok.h),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray dead = nullptr;
  int64_t s[1] = {6};
  ASSERT_EQ(
      mxc_ndarray_create(s, 1, MXC_DTYPE_FLOAT64, MXC_DEVICE_CPU, 0, 0, &dead),
      MXC_OK);
  mxc_ndarray_free(dead);
  EXPECT_EQ(mxc_autograd_mark_variables(1, &dead, nullptr, &gok.h),
            MXC_ERR_INVALID_HANDLE);
  // Nothing was marked by the failures.
  mxc_ndarray out = (mxc_ndarray)0x1;
  EXPECT_EQ(mxc_autograd_get_grad(x.h, &out), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(out, (mxc_ndarray)0x1);
  EXPECT_EQ(mxc_autograd_mark_variables(0, nullptr, nullptr, nullptr), MXC_OK);
  EXPECT_EQ(mxc_autograd_get_grad(x.h, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_autograd_get_grad(dead, &out), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_detach(dead, &out), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_detach(x.h, nullptr), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Autograd, BackwardErrors) {
  Arr x = make({2}, {1, 2});
  Arr g = mark(x);
  Arr y;
  {
    Recording r;
    y = invoke1("exp", {x.h});
  }
  Arr plain = make({2}, {1, 2});
  Arr wrong = make({3}, {1, 2, 3});
  EXPECT_EQ(mxc_autograd_backward(0, &y.h, nullptr, 0),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_autograd_backward(1, nullptr, nullptr, 0),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(backward1(plain), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(backward1(y, wrong.h), MXC_ERR_SHAPE);
  mxc_ndarray null_h = nullptr;
  EXPECT_EQ(mxc_autograd_backward(1, &null_h, nullptr, 0),
            MXC_ERR_INVALID_ARGUMENT);
  // None of the failures consumed the history or touched the gradient.
  expect_near(read(g), {0, 0});
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(g), {std::exp(1.0), std::exp(2.0)}, 1e-12);
}

TEST(Autograd, RecordedWritesIntoArraysWithHistoryAreRefused) {
  Arr x = make({2}, {1, 2});
  Arr g = mark(x);
  Recording r;
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("exp", &op), MXC_OK);
  mxc_ndarray out = x.h;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &x.h, 1, &out, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  Arr acc = zeros({2});
  int add = MXC_REQ_ADD;
  out = acc.h;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &x.h, 1, &out, 1, &add),
            MXC_ERR_INVALID_ARGUMENT);
  // Writing into a plain array is recorded: it gets the history.
  Arr dst = zeros({2});
  out = dst.h;
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &x.h, 1, &out, 1, nullptr),
            MXC_OK)
      << err();
  ASSERT_EQ(backward1(dst), MXC_OK) << err();
  expect_near(read(g), {std::exp(1.0), std::exp(2.0)}, 1e-12);
}

TEST(Autograd, MarkingAgainReplacesTheBuffer) {
  Arr x = make({2}, {1, 2});
  Arr g1 = mark(x);
  Arr y;
  {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "4"}});
  }
  Arr g2 = mark(x);
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(g1), {0, 0});
  expect_near(read(g2), {4, 4});
  mxc_ndarray got = nullptr;
  ASSERT_EQ(mxc_autograd_get_grad(x.h, &got), MXC_OK);
  expect_near(read(got), {4, 4});
  mxc_ndarray_free(got);
}

TEST(Autograd, UnreachedVariablesGetZerosUnderWrite) {
  Arr x = make({2}, {1, 2}), z = make({2}, {3, 4});
  Arr gx = mark(x, MXC_REQ_WRITE, 7.0), gz = mark(z, MXC_REQ_WRITE, 7.0);
  Arr y;
  {
    Recording r;
    Arr b = invoke1("BlockGrad", {z.h});
    y = invoke1("elemwise_mul", {x.h, b.h});
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(gx), {3, 4});
  expect_near(read(gz), {0, 0});
}

TEST(Autograd, IntermediatesFreedByTheUserStillDifferentiate) {
  std::vector<double> xv = {0.3, 0.7};
  Arr x = make({2}, xv);
  Arr g = mark(x);
  Arr y;
  {
    Recording r;
    Arr s = invoke1("sin", {x.h});
    Arr c = invoke1("cos", {s.h});
    y = invoke1("sum", {c.h});
  }  // s and c are freed here
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  std::vector<double> want;
  for (double v : xv) want.push_back(-std::sin(std::sin(v)) * std::cos(v));
  expect_near(read(g), want, 1e-12);
}

TEST(Autograd, BatchNormUsesTheTrainingModeOfTheRecording) {
  // Recorded in training mode (batch statistics), differentiated after
  // leaving it: the backward must still use batch statistics.
  Program prog = [](const std::vector<mxc_ndarray> &v) {
    Training t(1);
    std::vector<Arr> r;
    r.push_back(invoke1("BatchNorm", {v[0], v[1], v[2], v[3], v[4]},
                        {{"fix_gamma", "false"}}));
    return r;
  };
  check_gradients(
      "BatchNorm(train)", prog,
      {Input{{5, 2, 3}, uniform(30, -2, 2, 21)}, Input{{2}, {0.8, 1.3}},
       Input{{2}, {0.1, -0.2}}, Input{{2}, {0, 0}, MXC_DTYPE_FLOAT64, false},
       Input{{2}, {1, 1}, MXC_DTYPE_FLOAT64, false}});
}

TEST(Autograd, DropoutGradientFollowsTheForwardMask) {
  std::vector<double> xv = uniform(200, 0.5, 1.5, 4);
  Arr x = make({200}, xv);
  Arr g = mark(x);
  Arr y;
  {
    Training t(1);
    Recording r;
    y = invoke1("Dropout", {x.h}, {{"p", "0.5"}});
  }
  Arr h = make({200}, uniform(200, -1, 1, 5));
  ASSERT_EQ(backward1(y, h.h), MXC_OK) << err();
  auto yv = read(y), gv = read(g), hv = read(h);
  int dropped = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    double mask = yv[i] / xv[i];  // 0 or 1 / (1 - p) = 2
    EXPECT_TRUE(std::fabs(mask) < 1e-12 || std::fabs(mask - 2) < 1e-12) << mask;
    EXPECT_NEAR(gv[i], hv[i] * mask, 1e-12) << i;
    dropped += std::fabs(mask) < 1e-12;
  }
  EXPECT_GT(dropped, 50);
  EXPECT_LT(dropped, 150);
}

TEST(Autograd, HiddenOutputsRequestedByTheCallerStillRecord) {
  // BatchNorm with all three outputs asked for (mean and var).
  Arr x = make({4, 2}, uniform(8, -1, 1, 8));
  Arr gam = make({2}, {1, 1}), bet = make({2}, {0, 0});
  Arr mm = make({2}, {0, 0}), mv = make({2}, {1, 1});
  Arr g = mark(x);
  std::vector<Arr> outs;
  {
    Training t(1);
    Recording r;
    outs = invoke("BatchNorm", {x.h, gam.h, bet.h, mm.h, mv.h},
                  {{"fix_gamma", "false"}}, nullptr, 3);
  }
  ASSERT_EQ(outs.size(), 3u);
  // d(sum of normalized values)/dx = 0 with batch statistics.
  ASSERT_EQ(backward1(outs[0]), MXC_OK) << err();
  expect_near(read(g), std::vector<double>(8, 0.0), 1e-9);
}

TEST(Autograd, LongChainsDoNotRecurse) {
  Arr x = make({1}, {1.0});
  Arr g = mark(x);
  const int n = 3000;
  Arr y;
  {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "1.0001"}});
    for (int i = 1; i < n; ++i) {
      y = invoke1("_mul_scalar", {y.h}, {{"scalar", "1.0001"}});
    }
  }
  ASSERT_EQ(backward1(y), MXC_OK) << err();
  expect_near(read(g), {std::pow(1.0001, n)}, 1e-9);
}

TEST(Autograd, ThreadsRecordAndDifferentiateIndependently) {
  const int n_threads = 4, iters = 20;
  std::vector<int> fails(n_threads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < n_threads; ++t) {
    ts.emplace_back([t, &fails] {
      for (int it = 0; it < iters; ++it) {
        double a = 1 + t, b = 0.5 + it;
        Arr x = make({3}, {a, b, a + b});
        Arr g = zeros({3});
        if (mxc_autograd_mark_variables(1, &x.h, nullptr, &g.h) != MXC_OK) {
          fails[t]++;
          continue;
        }
        Arr y;
        {
          Recording r;
          Arr sq = invoke1("square", {x.h});
          y = invoke1("sum", {sq.h});
        }
        if (backward1(y) != MXC_OK) fails[t]++;
        auto gv = read(g);
        if (gv != std::vector<double>({2 * a, 2 * b, 2 * (a + b)})) fails[t]++;
      }
    });
  }
  for (auto &th : ts) th.join();
  for (int t = 0; t < n_threads; ++t) EXPECT_EQ(fails[t], 0) << "thread " << t;
}

TEST(Autograd, HistoriesMayCrossThreads) {
  // Recorded on one thread, differentiated on another.
  Arr x = make({2}, {1, 2});
  Arr g = mark(x);
  Arr y;
  std::thread rec([&] {
    Recording r;
    y = invoke1("_mul_scalar", {x.h}, {{"scalar", "5"}});
  });
  rec.join();
  int rc = -1;
  std::thread bw([&] { rc = backward1(y); });
  bw.join();
  ASSERT_EQ(rc, MXC_OK);
  expect_near(read(g), {5, 5});
}

}  // namespace
