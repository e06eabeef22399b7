// The oneDNN backend (backends/onednn) against the reference kernels:
// every attached kernel runs random float32 inputs of odd shapes through
// the public invoke path twice, once restricted to the reference kernels
// (the thread's reference-only switch) and once free to pick oneDNN, and
// the results must agree within the tolerance stated per case. The last
// test fails when an attached kernel has no case here. Also: the
// primitive cache (bounded, reused, thread-safe), the switches
// (MXC_ONEDNN=0 in test_onednn_off, MXC_BIND_NO_ONEDNN) and the feature.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dlpack/dlpack.h>

#include "tests/onednn/probe.h"
#include "tests/testutil/mxnet_models.h"
#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

std::set<std::string> &compared() {
  static std::set<std::string> s;
  return s;
}

struct Case {
  std::string op;
  Params p;
  std::vector<Shape> in;
  double tol;      // |got - want| <= tol * (1 + |want|)
  int n_out = -1;  // outputs compared: -1 the visible ones
  double lo = -1, hi = 1;
  int onednn = 1;  // 1 runs on oneDNN; 0 handed back before asking oneDNN;
                  // -1 oneDNN asked, then the reference (no check)
  bool train = false;  // run in training mode (mxc_set_training)
};

std::vector<Arr> make_inputs(const Case &c, unsigned seed) {
  std::vector<Arr> a;
  for (size_t i = 0; i < c.in.size(); ++i) {
    a.push_back(make(c.in[i], uniform(numel(c.in[i]), c.lo, c.hi,
                                      seed + (unsigned)i)));
  }
  return a;
}

// Outputs (and the inputs afterwards: aux states are updated in place)
// of one run.
std::vector<std::vector<double>> run(const Case &c, unsigned seed,
                                     bool reference) {
  std::vector<Arr> a = make_inputs(c, seed);
  std::vector<const Arr *> ptrs;
  for (auto &x : a) ptrs.push_back(&x);
  od_reference_only(reference ? 1 : 0);
  int prev = 0, rc = MXC_OK;
  EXPECT_EQ(mxc_set_training(c.train ? 1 : 0, &prev), MXC_OK);
  std::vector<Arr> out = invoke_count(c.op, ptrs, c.p, c.n_out, &rc);
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << c.op << ": " << err();
  EXPECT_EQ(mxc_set_training(prev, nullptr), MXC_OK);
  od_reference_only(0);
  EXPECT_EQ(rc, MXC_OK) << c.op << ": " << err();
  std::vector<std::vector<double>> r;
  for (auto &o : out) r.push_back(read(o));
  for (auto &x : a) r.push_back(read(x));
  return r;
}

void compare(const Case &c, unsigned seed = 7) {
  SCOPED_TRACE(c.op);
  std::vector<std::vector<double>> want = run(c, seed, true);
  int64_t before = od_lookups();
  std::vector<std::vector<double>> got = run(c, seed, false);
  if (od_enabled() && c.onednn == 1) {
    EXPECT_GT(od_lookups(), before) << c.op << ": oneDNN did not run";
  } else if (c.onednn == 0 || !od_enabled()) {
    EXPECT_EQ(od_lookups(), before) << c.op << ": oneDNN ran";
  }
  ASSERT_EQ(want.size(), got.size());
  double worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].size(), got[k].size());
    for (size_t i = 0; i < want[k].size(); ++i) {
      double e = std::fabs(got[k][i] - want[k][i]) / (1 + std::fabs(want[k][i]));
      worst = std::max(worst, e);
      ASSERT_LE(e, c.tol) << "array " << k << " element " << i << ": got "
                          << got[k][i] << " want " << want[k][i];
    }
  }
  compared().insert(c.op);
}

}  // namespace

// ---- Convolution: tolerance 1e-4 relative (float32 sums in another
// order; oneDNN may use Winograd-free direct kernels with FMA) ----

TEST(OneDnn, Convolution2D) {
  compare({"Convolution",
           {{"kernel", "(3,3)"}, {"num_filter", "5"}, {"pad", "(1,1)"}},
           {{2, 3, 7, 9}, {5, 3, 3, 3}, {5}},
           1e-4});
}

TEST(OneDnn, ConvolutionStridedDilatedNoBias) {
  compare({"Convolution",
           {{"kernel", "(3,2)"}, {"num_filter", "4"}, {"stride", "(2,3)"},
            {"dilate", "(2,1)"}, {"pad", "(2,1)"}, {"no_bias", "true"}},
           {{3, 2, 11, 10}, {4, 2, 3, 2}},
           1e-4});
}

TEST(OneDnn, ConvolutionGroups) {
  compare({"Convolution",
           {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "3"},
            {"pad", "(1,1)"}},
           {{2, 9, 6, 5}, {6, 3, 3, 3}, {6}},
           1e-4});
  compare({"Convolution",  // depthwise, as in MobileNet
           {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "4"},
            {"stride", "(2,2)"}, {"pad", "(1,1)"}},
           {{1, 4, 9, 9}, {4, 1, 3, 3}, {4}},
           1e-4});
}

TEST(OneDnn, Convolution1DAnd3D) {
  compare({"Convolution",
           {{"kernel", "(5,)"}, {"num_filter", "3"}, {"pad", "(2,)"},
            {"dilate", "(2,)"}},
           {{2, 4, 17}, {3, 4, 5}, {3}},
           1e-4});
  compare({"Convolution",
           {{"kernel", "(3,3,3)"}, {"num_filter", "2"}, {"pad", "(1,0,1)"},
            {"stride", "(1,2,1)"}},
           {{1, 3, 5, 7, 6}, {2, 3, 3, 3, 3}, {2}},
           1e-4});
}

TEST(OneDnn, ConvolutionRaggedEndRunsOnOneDnn) {
  // pad 0 with stride 3 leaves a ragged end: MXNet drops what does not
  // fill a whole stride, which oneDNN says as a negative right padding.
  Case c{"Convolution",
         {{"kernel", "(2,2)"}, {"num_filter", "3"}, {"stride", "(3,3)"}},
         {{1, 2, 9, 9}, {3, 2, 2, 2}, {3}},
         1e-4};
  c.onednn = 1;
  compare(c);
}

TEST(OneDnn, StridedOneByOneConvolutionRunsOnOneDnn) {
  // A ResNet's downsampling shortcut: 1x1, stride 2 over an even extent
  // (right padding -1). It ran the reference kernel until 2026-11-27.
  Case c{"Convolution",
         {{"kernel", "(1,1)"}, {"num_filter", "8"}, {"stride", "(2,2)"},
          {"no_bias", "true"}},
         {{2, 4, 8, 6}, {8, 4, 1, 1}},
         1e-4};
  c.onednn = 1;
  compare(c);
}

TEST(OneDnn, GeometryOneDnnRefusesRunsTheReference) {
  // A dilation far beyond the data: valid for a 1x1 kernel, refused by
  // oneDNN's descriptor (invalid_arguments), so the reference runs.
  Case c{"Convolution",
         {{"kernel", "(1,1)"}, {"num_filter", "2"},
          {"dilate", "(1099511627776,1)"}},
         {{1, 2, 3, 3}, {2, 2, 1, 1}, {2}},
         1e-5};
  c.onednn = -1;
  compare(c);
}

TEST(OneDnn, ConvolutionOneByOne) {
  compare({"Convolution",
           {{"kernel", "(1,1)"}, {"num_filter", "17"}},
           {{3, 13, 5, 7}, {17, 13, 1, 1}, {17}},
           1e-4});
}

// ---- Deconvolution: 1e-4 (sums in another order). Weights are MXNet's
// (C_in, num_filter / groups, kernel...) ----

TEST(OneDnn, Deconvolution2DWithAdjAndBias) {
  compare({"Deconvolution",
           {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(2,2)"},
            {"pad", "(1,1)"}, {"adj", "(1,0)"}, {"no_bias", "false"}},
           {{2, 3, 5, 4}, {3, 4, 3, 3}, {4}},
           1e-4});
}

TEST(OneDnn, DeconvolutionGroupsDilated) {
  compare({"Deconvolution",
           {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"},
            {"dilate", "(2,2)"}, {"pad", "(1,2)"}},
           {{1, 6, 4, 5}, {6, 2, 3, 3}},
           1e-4});
}

TEST(OneDnn, Deconvolution1DAnd3DAndTargetShape) {
  compare({"Deconvolution",
           {{"kernel", "(4,)"}, {"num_filter", "2"}, {"stride", "(2,)"},
            {"pad", "(1,)"}},
           {{2, 3, 7}, {3, 2, 4}},
           1e-4});
  compare({"Deconvolution",
           {{"kernel", "(2,2,2)"}, {"num_filter", "3"}, {"stride", "(1,2,1)"}},
           {{1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}},
           1e-4});
  compare({"Deconvolution",
           {{"kernel", "(4,4)"}, {"num_filter", "3"}, {"stride", "(2,2)"},
            {"target_shape", "(10,9)"}},
           {{1, 2, 5, 5}, {2, 3, 4, 4}},
           1e-4});
}

TEST(OneDnn, DeconvolutionAdjBeyondPadRunsTheReference) {
  // adj 1 with pad 0: oneDNN would need a negative right padding.
  Case c{"Deconvolution",
         {{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(2,2)"},
          {"adj", "(1,1)"}},
         {{1, 2, 4, 4}, {2, 2, 3, 3}},
         1e-4};
  c.onednn = 0;
  compare(c);
}

// ---- FullyConnected: 1e-4 (sums in another order) ----

TEST(OneDnn, FullyConnected) {
  compare({"FullyConnected", {{"num_hidden", "7"}},
           {{5, 3, 2, 3}, {7, 18}, {7}}, 1e-4});
  compare({"FullyConnected", {{"num_hidden", "3"}, {"no_bias", "true"}},
           {{1, 33}, {3, 33}}, 1e-4});
  compare({"FullyConnected", {{"num_hidden", "4"}, {"flatten", "false"}},
           {{2, 3, 5}, {4, 5}, {4}}, 1e-4});
}

// ---- Pooling: max exact; avg 1e-6 (a float division per window) ----

TEST(OneDnn, PoolingMax) {
  compare({"Pooling",
           {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
            {"pool_type", "max"}},
           {{2, 3, 9, 8}}, 0});
  compare({"Pooling", {{"kernel", "(2,)"}, {"stride", "(2,)"}},
           {{2, 3, 10}}, 0});
  compare({"Pooling", {{"kernel", "(2,2,2)"}, {"pool_type", "max"}},
           {{1, 2, 4, 5, 3}}, 0});
}

TEST(OneDnn, PoolingAvgBothPaddingCounts) {
  for (const char *cip : {"true", "false"}) {
    compare({"Pooling",
             {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
              {"pool_type", "avg"}, {"count_include_pad", cip}},
             {{2, 3, 7, 8}}, 1e-6});
  }
}

TEST(OneDnn, PoolingGlobal) {
  for (const char *type : {"avg", "max"}) {
    compare({"Pooling",
             {{"kernel", "(1,1)"}, {"global_pool", "true"},
              {"pool_type", type}},
             {{3, 5, 7, 6}}, 1e-6});
  }
}

TEST(OneDnn, PoolingFullConventionRunsTheReference) {
  Case c{"Pooling",
         {{"kernel", "(2,2)"}, {"stride", "(2,2)"},
          {"pooling_convention", "full"}},
         {{1, 2, 5, 5}}, 0};
  c.onednn = 0;
  compare(c);
}

// ---- Activation is not attached (backends/onednn/softmax.c says why):
// its calls never reach oneDNN ----

TEST(OneDnn, ActivationRunsTheReference) {
  for (const char *t : {"relu", "sigmoid", "tanh", "softrelu"}) {
    Case c{"Activation", {{"act_type", t}}, {{3, 7, 5}}, 0};
    c.onednn = 0;
    compare(c);
  }
}

// ---- softmax / log_softmax: 1e-5 (float32 exp and log-sum in another
// order: ~1e-6 seen) ----

TEST(OneDnn, SoftmaxAxes) {
  for (const char *op : {"softmax", "log_softmax"}) {
    compare({op, {}, {{4, 13}}, 1e-5});
    compare({op, {{"axis", "1"}}, {{2, 5, 3, 3}}, 1e-5});
    compare({op, {{"axis", "-1"}}, {{2, 3, 17}}, 1e-5});
  }
  Case t{"softmax", {{"temperature", "2"}}, {{2, 3}}, 0};
  t.onednn = 0;
  compare(t);
}

// ---- BatchNorm with moving statistics (inference): 1e-5 relative;
// the hidden mean and inverse std outputs are compared too ----

TEST(OneDnn, BatchNormInference) {
  for (const char *fix : {"true", "false"}) {
    Case c{"BatchNorm", {{"fix_gamma", fix}, {"eps", "0.001"}},
           {{2, 3, 5, 4}, {3}, {3}, {3}, {3}}, 1e-5};
    c.n_out = 3;
    c.lo = 0.1;  // positive moving variances
    c.hi = 2;
    compare(c);
  }
  Case d{"BatchNorm", {{"fix_gamma", "false"}}, {{4, 6}, {6}, {6}, {6}, {6}},
         1e-5};
  d.lo = 0.5;
  d.hi = 1.5;
  compare(d);
}

// ---- LayerNorm along the last axis, mean and std compared too: 1e-5
// (float32 statistics summed in another order) ----

TEST(OneDnn, LayerNormLastAxis) {
  for (std::vector<Shape> in : std::vector<std::vector<Shape>>{
           {{3, 4, 7}, {7}, {7}}, {{5, 33}, {33}, {33}},
           {{2, 3, 2, 2, 9}, {9}, {9}}}) {
    Case c{"LayerNorm", {{"eps", "1e-5"}}, in, 1e-5};
    c.n_out = 3;
    compare(c);
  }
  Case d{"LayerNorm", {{"axis", "2"}, {"eps", "0.01"}},
         {{2, 3, 6}, {6}, {6}}, 1e-5};
  d.n_out = 3;
  compare(d);
}

TEST(OneDnn, LayerNormOtherAxesRunTheReference) {
  Case c{"LayerNorm", {{"axis", "1"}}, {{2, 5, 3}, {5}, {5}}, 0};
  c.n_out = 3;
  c.onednn = 0;
  compare(c);
}

// ---- gradients: the backward operators on random output gradients,
// every gradient output compared; 1e-4 relative (float32 sums of many
// products in another order) ----

TEST(OneDnnBackward, Convolution) {
  compare({"_backward_Convolution",
           {{"kernel", "(3,3)"}, {"num_filter", "5"}, {"pad", "(1,1)"}},
           {{2, 5, 7, 9}, {2, 3, 7, 9}, {5, 3, 3, 3}, {5}},
           1e-4});
  compare({"_backward_Convolution",
           {{"kernel", "(3,2)"}, {"num_filter", "4"}, {"stride", "(2,3)"},
            {"dilate", "(2,1)"}, {"pad", "(2,1)"}, {"no_bias", "true"}},
           {{3, 4, 6, 4}, {3, 2, 11, 10}, {4, 2, 3, 2}},
           1e-4});
  compare({"_backward_Convolution",
           {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "3"},
            {"pad", "(1,1)"}},
           {{2, 6, 6, 5}, {2, 9, 6, 5}, {6, 3, 3, 3}, {6}},
           1e-4});
  compare({"_backward_Convolution",
           {{"kernel", "(5,)"}, {"num_filter", "3"}, {"pad", "(2,)"},
            {"dilate", "(2,)"}},
           {{2, 3, 13}, {2, 4, 17}, {3, 4, 5}, {3}},
           1e-4});
  compare({"_backward_Convolution",
           {{"kernel", "(3,3,3)"}, {"num_filter", "2"}, {"pad", "(1,0,1)"},
            {"stride", "(1,2,1)"}},
           {{1, 2, 5, 3, 6}, {1, 3, 5, 7, 6}, {2, 3, 3, 3, 3}, {2}},
           1e-4});
  // Ragged ends (negative right padding): a ResNet's strided 1x1
  // shortcut, and a stride beyond the kernel.
  compare({"_backward_Convolution",
           {{"kernel", "(1,1)"}, {"num_filter", "8"}, {"stride", "(2,2)"},
            {"no_bias", "true"}},
           {{2, 8, 4, 3}, {2, 4, 8, 6}, {8, 4, 1, 1}},
           1e-4});
  compare({"_backward_Convolution",
           {{"kernel", "(2,2)"}, {"num_filter", "3"}, {"stride", "(3,3)"}},
           {{1, 3, 3, 3}, {1, 2, 9, 9}, {3, 2, 2, 2}, {3}},
           1e-4});
}

TEST(OneDnnBackward, FullyConnected) {
  compare({"_backward_FullyConnected", {{"num_hidden", "7"}},
           {{5, 7}, {5, 3, 2, 3}, {7, 18}, {7}}, 1e-4});
  compare({"_backward_FullyConnected",
           {{"num_hidden", "4"}, {"flatten", "false"}, {"no_bias", "true"}},
           {{2, 3, 4}, {2, 3, 5}, {4, 5}}, 1e-4});
}

TEST(OneDnnBackward, Pooling) {
  compare({"_backward_Pooling",
           {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
            {"pool_type", "max"}},
           {{2, 3, 5, 4}, {2, 3, 9, 8}}, 1e-6});
  for (const char *cip : {"true", "false"}) {
    compare({"_backward_Pooling",
             {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"},
              {"pool_type", "avg"}, {"count_include_pad", cip}},
             {{2, 3, 4, 4}, {2, 3, 7, 8}}, 1e-6});
  }
  compare({"_backward_Pooling",
           {{"kernel", "(1,1)"}, {"global_pool", "true"},
            {"pool_type", "avg"}},
           {{3, 5, 1, 1}, {3, 5, 7, 6}}, 1e-6});
}

namespace {

// Max pooling 3x3, stride 2, pad 1 of x (n, c, h, w) into (n, c, oh, ow):
// the gradient g of the output sent to each window's first maximum, as
// naive loops (the test's own reference).
std::vector<double> max_pool_grad(const std::vector<double> &x,
                                  const std::vector<double> &g, int n, int c,
                                  int h, int w, int oh, int ow) {
  std::vector<double> dx(x.size(), 0.0);
  for (int p = 0; p < n * c; ++p) {
    for (int i = 0; i < oh; ++i) {
      for (int j = 0; j < ow; ++j) {
        int best = -1;
        for (int a = 2 * i - 1; a <= 2 * i + 1; ++a) {
          for (int b = 2 * j - 1; b <= 2 * j + 1; ++b) {
            if (a < 0 || a >= h || b < 0 || b >= w) continue;
            int at = (p * h + a) * w + b;
            if (best < 0 || x[at] > x[best]) best = at;
          }
        }
        dx[best] += g[(p * oh + i) * ow + j];
      }
    }
  }
  return dx;
}

void expect_near_all(const std::vector<double> &got,
                     const std::vector<double> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-6) << what << " element " << i;
  }
}

}  // namespace

// A training forward of max pooling keeps oneDNN's workspace for the
// backward (backends/onednn/pool_ws.c) instead of the backward running
// the forward again; data written in between must not be given the
// old maxima. Checked against naive loops, with the backend on and off.
TEST(OneDnnBackward, MaxPoolingWorkspaceKeptForItsBackward) {
  const Params p = {{"kernel", "(3,3)"}, {"stride", "(2,2)"},
                    {"pad", "(1,1)"}, {"pool_type", "max"}};
  Arr x = make({2, 3, 9, 8}, uniform(2 * 3 * 72, -1, 1, 71));
  Arr og = make({2, 3, 5, 4}, uniform(2 * 3 * 20, -1, 1, 72));
  int prev = 0, e = 0;
  int64_t h0, m0, h1, m1;
  ASSERT_EQ(mxc_set_training(1, &prev), MXC_OK);
  ASSERT_EQ(invoke("Pooling", {&x}, p).size(), 1u) << err();
  od_pool_ws_stats(&e, &h0, &m0);
  auto d1 = invoke("_backward_Pooling", {&og, &x}, p);
  ASSERT_EQ(d1.size(), 1u) << err();
  od_pool_ws_stats(&e, &h1, &m1);
  if (od_enabled()) {
    EXPECT_EQ(h1, h0 + 1) << "the backward ran the forward again";
  }
  std::vector<double> x1 = read(x), g = read(og);
  expect_near_all(read(d1[0]), max_pool_grad(x1, g, 2, 3, 9, 8, 5, 4),
                  "kept workspace");
  // A forward keeps a workspace for x, then x changes: a miss.
  ASSERT_EQ(invoke("Pooling", {&x}, p).size(), 1u) << err();
  std::vector<double> u2 = uniform(2 * 3 * 72, -1, 1, 73);
  std::vector<float> f2(u2.begin(), u2.end());
  ASSERT_EQ(mxc_ndarray_copy_from_host(x.h, f2.data(), f2.size() * 4),
            MXC_OK);
  auto d2 = invoke("_backward_Pooling", {&og, &x}, p);
  ASSERT_EQ(d2.size(), 1u) << err();
  od_pool_ws_stats(&e, &h0, &m0);
  EXPECT_EQ(h0, h1) << "data written since the forward was given its maxima";
  std::vector<double> want2 = max_pool_grad(read(x), g, 2, 3, 9, 8, 5, 4);
  expect_near_all(read(d2[0]), want2, "data written since");
  EXPECT_NE(want2, max_pool_grad(x1, g, 2, 3, 9, 8, 5, 4));
  ASSERT_EQ(mxc_set_training(prev, nullptr), MXC_OK);
}

TEST(OneDnnBackward, BatchNormTrainingForwardAndBackward) {
  for (const char *fix : {"true", "false"}) {
    Case f{"BatchNorm", {{"fix_gamma", fix}, {"momentum", "0.8"}},
           {{3, 4, 5, 2}, {4}, {4}, {4}, {4}}, 1e-4};
    f.n_out = 3;
    f.lo = 0.1;
    f.hi = 2;
    f.train = true;
    compare(f);
    // (ograd, data, gamma, beta, moving_mean, moving_var, output, mean,
    // inv_std): positive statistics from the value range.
    Case b{"_backward_BatchNorm", {{"fix_gamma", fix}},
           {{3, 4, 5, 2}, {3, 4, 5, 2}, {4}, {4}, {4}, {4}, {3, 4, 5, 2},
            {4}, {4}},
           1e-4};
    b.lo = 0.2;
    b.hi = 1.5;
    for (bool train : {true, false}) {
      b.train = train;
      compare(b);
    }
  }
}

// The executor's BatchNorm + relu (core/fuse/bn_relu.c): oneDNN's
// dnnl_fuse_norm_relu against the reference (BatchNorm, then relu), in
// training (batch statistics, moving ones updated) and inference, data
// of both signs so that the relu cuts.
TEST(OneDnnBackward, FusedBatchNormReluForward) {
  for (const char *fix : {"true", "false"}) {
    for (bool train : {true, false}) {
      Case f{"_FusedBatchNormReLU", {{"fix_gamma", fix}, {"momentum", "0.8"}},
             {{3, 4, 5, 2}, {4}, {4}, {4}, {4}}, 1e-4};
      f.n_out = 3;
      f.lo = 0.1;  // positive moving variances (normalized data still
      f.hi = 2;    // has both signs, so the relu cuts some)
      f.train = train;
      compare(f);
    }
  }
  Case d{"_FusedBatchNormReLU", {{"fix_gamma", "false"}},
         {{2, 16, 3, 3}, {16}, {16}, {16}, {16}}, 1e-4};
  d.n_out = 3;
  d.lo = -1;  // gamma and beta of both signs (training: the moving
  d.hi = 1;   // variance is only updated, never used)
  d.train = true;
  compare(d);
}

// (ograd, data, weight[, bias]) -> (ddata, dweight[, dbias]).
TEST(OneDnnBackward, Deconvolution) {
  compare({"_backward_Deconvolution",
           {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"stride", "(2,2)"},
            {"pad", "(1,1)"}, {"adj", "(1,0)"}, {"no_bias", "false"}},
           {{2, 4, 10, 7}, {2, 3, 5, 4}, {3, 4, 3, 3}, {4}},
           1e-4});
  compare({"_backward_Deconvolution",
           {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"num_group", "2"},
            {"dilate", "(2,2)"}, {"pad", "(1,2)"}},
           {{1, 4, 6, 5}, {1, 6, 4, 5}, {6, 2, 3, 3}},
           1e-4});
  compare({"_backward_Deconvolution",
           {{"kernel", "(4,)"}, {"num_filter", "2"}, {"stride", "(2,)"},
            {"pad", "(1,)"}},
           {{2, 2, 14}, {2, 3, 7}, {3, 2, 4}},
           1e-4});
}

// (ograd, data, gamma, beta, output, mean, std): std positive, from the
// value range; both kernels use the statistics given.
TEST(OneDnnBackward, LayerNorm) {
  Case b{"_backward_LayerNorm", {{"eps", "1e-5"}},
         {{3, 4, 7}, {3, 4, 7}, {7}, {7}, {3, 4, 7}, {3, 4, 1}, {3, 4, 1}},
         1e-4};
  b.lo = 0.2;
  b.hi = 1.5;
  compare(b);
}

// ---- post-ops of the fused operators' builders: the reference
// Convolution / FullyConnected, then + sum, then the activation, in
// double; 1e-4 relative ----

namespace {

double act_ref(const char *act, double v) {
  if (!act) return v;
  std::string a = act;
  if (a == "relu") return v > 0 ? v : 0;
  if (a == "sigmoid") return 1 / (1 + std::exp(-v));
  if (a == "tanh") return std::tanh(v);
  return std::log1p(std::exp(v));  // softrelu
}

std::vector<float> to_f(const std::vector<double> &v) {
  return std::vector<float>(v.begin(), v.end());
}

void check_post(const std::vector<double> &base, const std::vector<double> &sum,
                const char *act, const std::vector<float> &got) {
  ASSERT_EQ(base.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double want = act_ref(act, base[i] + (sum.empty() ? 0 : (float)sum[i]));
    ASSERT_NEAR(got[i], want, 1e-4 * (1 + std::fabs(want)))
        << (act ? act : "none") << " element " << i;
  }
}

}  // namespace

TEST(OneDnnPostOps, ConvolutionSumThenActivation) {
  const char *keys[] = {"kernel", "num_filter", "pad", "stride"};
  const char *vals[] = {"(3,3)", "4", "(1,1)", "(2,1)"};
  Shape xs = {2, 3, 7, 6}, ws = {4, 3, 3, 3}, ys = {2, 4, 4, 6};
  std::vector<double> x = uniform(numel(xs), -1, 1, 21);
  std::vector<double> w = uniform(numel(ws), -1, 1, 22);
  std::vector<double> b = uniform(4, -1, 1, 23);
  std::vector<double> sum = uniform(numel(ys), -1, 1, 24);
  Arr ax = make(xs, x), aw = make(ws, w), ab = make({4}, b);
  od_reference_only(1);
  auto ref = invoke("Convolution", {&ax, &aw, &ab},
                    {{"kernel", "(3,3)"}, {"num_filter", "4"},
                     {"pad", "(1,1)"}, {"stride", "(2,1)"}});
  od_reference_only(0);
  ASSERT_EQ(ref.size(), 1u) << err();
  ASSERT_EQ(ref[0].shape(), ys);
  std::vector<double> base = read(ref[0]);
  std::vector<float> fx = to_f(x), fw = to_f(w), fb = to_f(b), fs = to_f(sum);
  for (const char *act : {(const char *)nullptr, "relu", "sigmoid", "tanh",
                          "softrelu"}) {
    for (bool with_sum : {false, true}) {
      std::vector<float> y(numel(ys));
      ASSERT_EQ(od_conv_post(keys, vals, 4, fx.data(), xs.data(), fw.data(),
                             ws.data(), fb.data(),
                             with_sum ? fs.data() : nullptr, act, y.data(),
                             ys.data(), 4),
                MXC_OK)
          << err();
      check_post(base, with_sum ? sum : std::vector<double>{}, act, y);
    }
  }
}

TEST(OneDnnPostOps, InnerProductSumThenActivation) {
  int64_t rows = 5, k = 13, h = 6;
  std::vector<double> x = uniform(rows * k, -1, 1, 31);
  std::vector<double> w = uniform(h * k, -1, 1, 32);
  std::vector<double> b = uniform(h, -1, 1, 33);
  std::vector<double> sum = uniform(rows * h, -1, 1, 34);
  Arr ax = make({rows, k}, x), aw = make({h, k}, w), ab = make({h}, b);
  od_reference_only(1);
  auto ref = invoke("FullyConnected", {&ax, &aw, &ab}, {{"num_hidden", "6"}});
  od_reference_only(0);
  ASSERT_EQ(ref.size(), 1u) << err();
  std::vector<double> base = read(ref[0]);
  std::vector<float> fx = to_f(x), fw = to_f(w), fb = to_f(b), fs = to_f(sum);
  for (const char *act : {(const char *)nullptr, "relu", "tanh"}) {
    for (bool with_sum : {false, true}) {
      std::vector<float> y(rows * h);
      ASSERT_EQ(od_fc_post(fx.data(), fw.data(), fb.data(),
                           with_sum ? fs.data() : nullptr, act, rows, k, h,
                           y.data()),
                MXC_OK)
          << err();
      check_post(base, with_sum ? sum : std::vector<double>{}, act, y);
    }
  }
}

// ---- reordered weights: cached while the weights array is unchanged,
// refreshed when it is written (its engine write version changes) ----

namespace {

std::vector<double> conv_ref(const Arr &x, const std::vector<double> &w) {
  Arr aw = make({32, 16, 3, 3}, w);
  od_reference_only(1);
  auto y = invoke("Convolution", {&x, &aw}, {{"kernel", "(3,3)"},
                                             {"num_filter", "32"},
                                             {"pad", "(1,1)"},
                                             {"no_bias", "true"}});
  od_reference_only(0);
  EXPECT_EQ(y.size(), 1u) << err();
  return read(y[0]);
}

std::vector<double> conv_run(const Arr &x, const Arr &w) {
  auto y = invoke("Convolution", {&x, &w}, {{"kernel", "(3,3)"},
                                            {"num_filter", "32"},
                                            {"pad", "(1,1)"},
                                            {"no_bias", "true"}});
  EXPECT_EQ(y.size(), 1u) << err();
  return read(y[0]);
}

void expect_close(const std::vector<double> &got,
                  const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
  }
}

}  // namespace

TEST(OneDnnWeights, ChangingTheWeightsChangesTheOutput) {
  std::vector<double> w1 = uniform(32 * 16 * 9, -1, 1, 41);
  std::vector<double> w2 = uniform(32 * 16 * 9, -1, 1, 42);
  Arr x = make({2, 16, 9, 8}, uniform(2 * 16 * 72, -1, 1, 43));
  Arr w = make({32, 16, 3, 3}, w1);
  int e0, e1;
  int64_t h0, m0, h1, m1;
  expect_close(conv_run(x, w), conv_ref(x, w1));
  od_weights_stats(&e0, &h0, &m0);
  expect_close(conv_run(x, w), conv_ref(x, w1));  // unchanged: a hit
  od_weights_stats(&e1, &h1, &m1);
  if (od_enabled() && e0 > 0) {
    EXPECT_EQ(h1, h0 + 1) << "unchanged weights were reordered again";
  }
  std::vector<float> f2(w2.begin(), w2.end());
  ASSERT_EQ(mxc_ndarray_copy_from_host(w.h, f2.data(), f2.size() * 4), MXC_OK);
  std::vector<double> y2 = conv_run(x, w);
  expect_close(y2, conv_ref(x, w2));
  EXPECT_NE(y2, conv_ref(x, w1));
}

TEST(OneDnnWeights, WeightsWrittenByAnOperatorAreSeen) {
  std::vector<double> w1 = uniform(32 * 16 * 9, -1, 1, 51);
  Arr x = make({1, 16, 6, 7}, uniform(16 * 42, -1, 1, 52));
  Arr w = make({32, 16, 3, 3}, w1);
  expect_close(conv_run(x, w), conv_ref(x, w1));
  // w *= 2 in place through the engine (an optimizer step writes alike).
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("_mul_scalar", &op), MXC_OK) << err();
  const char *k[] = {"scalar"}, *v[] = {"2"};
  mxc_ndarray out = w.h;
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &w.h, 1, &out, 1, nullptr), MXC_OK)
      << err();
  std::vector<double> w2(w1);
  for (double &d : w2) d = (float)d * 2.0;
  expect_close(conv_run(x, w), conv_ref(x, w2));
}

TEST(OneDnnWeights, WeightsSharedThroughDlpackAreNeverCached) {
  std::vector<double> w1 = uniform(32 * 16 * 9, -1, 1, 61);
  Arr x = make({1, 16, 5, 5}, uniform(16 * 25, -1, 1, 62));
  Arr w = make({32, 16, 3, 3}, w1);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(w.h, &t), MXC_OK) << err();
  expect_close(conv_run(x, w), conv_ref(x, w1));
  // The consumer writes the shared memory without telling the engine.
  float *p = static_cast<float *>(t->dl_tensor.data);
  std::vector<double> w2(w1);
  for (size_t i = 0; i < w2.size(); ++i) {
    p[i] = -p[i];
    w2[i] = -(float)w1[i];
  }
  expect_close(conv_run(x, w), conv_ref(x, w2));
  t->deleter(t);
}

// ---- the primitive cache ----

TEST(OneDnnCache, ReusesPrimitivesForTheSameShapes) {
  if (!od_enabled()) GTEST_SKIP() << "MXC_ONEDNN=0";
  Case c{"Convolution", {{"kernel", "(3,3)"}, {"num_filter", "2"}},
         {{1, 2, 6, 6}, {2, 2, 3, 3}, {2}}, 1e-4};
  compare(c);
  int e, cap;
  int64_t h0, m0, h1, m1;
  od_cache_stats(&e, &cap, &h0, &m0);
  compare(c, 11);
  od_cache_stats(&e, &cap, &h1, &m1);
  EXPECT_EQ(m1, m0) << "same shapes built a new primitive";
  EXPECT_GT(h1, h0);
  EXPECT_LE(e, cap);
}

TEST(OneDnnCache, StaysWithinItsBoundAndStaysCorrect) {
  if (!od_enabled()) GTEST_SKIP() << "MXC_ONEDNN=0";
  int e, cap0;
  int64_t h, m;
  od_cache_stats(&e, &cap0, &h, &m);
  od_cache_set_capacity(2);
  for (int n = 1; n <= 6; ++n) {  // 6 shapes through a 2-entry cache
    compare({"softmax", {}, {{n, 3}}, 1e-5});
    od_cache_stats(&e, &cap0, &h, &m);
    EXPECT_LE(e, 2);
  }
  od_cache_set_capacity(512);
}

TEST(OneDnnCache, ConcurrentCallersAgree) {
  if (!od_enabled()) GTEST_SKIP() << "MXC_ONEDNN=0";
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([t] {
      for (int i = 0; i < 5; ++i) {
        compare({"Convolution",
                 {{"kernel", "(3,3)"}, {"num_filter", "3"}, {"pad", "(1,1)"}},
                 {{1 + (i + t) % 3, 2, 5, 6}, {3, 2, 3, 3}, {3}},
                 1e-4},
                (unsigned)(t * 10 + i));
      }
    });
  }
  for (auto &th : ts) th.join();
}

// ---- switches ----

TEST(OneDnnSwitch, FeatureFollowsTheEnvironment) {
  int on = -1;
  ASSERT_EQ(mxc_feature_enabled("ONEDNN", &on), MXC_OK) << err();
  EXPECT_EQ(on, od_enabled());
}

namespace {

// A one-node graph: relu(Convolution(data, weight)), bound with flags;
// returns the primitive cache lookups its forward made.
int64_t forward_lookups(int flags, std::vector<double> *out) {
  const char *json =
      R"J({"nodes":[{"op":"null","name":"data","inputs":[]},)J"
      R"J({"op":"null","name":"w","inputs":[]},)J"
      R"J({"op":"Convolution","name":"conv","attrs":{"kernel":"(3,3)",)J"
      R"J("num_filter":"4","no_bias":"true"},"inputs":[[0,0,0],[1,0,0]]},)J"
      R"J({"op":"Activation","name":"act","attrs":{"act_type":"relu"},)J"
      R"J("inputs":[[2,0,0]]}],"arg_nodes":[0,1],"heads":[[3,0,0]]})J";
  mxc_symbol sym = nullptr;
  EXPECT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << err();
  const char *names[] = {"data", "w"};
  int ndims[] = {4, 4};
  int64_t dims[] = {2, 3, 8, 7, 4, 3, 3, 3};
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 2, names, ndims,
                                     dims, nullptr, MXC_REQ_NULL, 0, nullptr,
                                     nullptr, flags, &ex),
            MXC_OK)
      << err();
  mxc_ndarray d = nullptr, w = nullptr, y = nullptr;
  EXPECT_EQ(mxc_executor_arg(ex, "data", &d), MXC_OK);
  EXPECT_EQ(mxc_executor_arg(ex, "w", &w), MXC_OK);
  std::vector<float> dv(2 * 3 * 8 * 7), wv(4 * 3 * 3 * 3);
  std::vector<double> du = uniform((int64_t)dv.size(), -1, 1, 5);
  std::vector<double> wu = uniform((int64_t)wv.size(), -1, 1, 6);
  std::copy(du.begin(), du.end(), dv.begin());
  std::copy(wu.begin(), wu.end(), wv.begin());
  EXPECT_EQ(mxc_ndarray_copy_from_host(d, dv.data(), dv.size() * 4), MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(w, wv.data(), wv.size() * 4), MXC_OK);
  int64_t before = od_lookups();
  EXPECT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  EXPECT_EQ(mxc_executor_output(ex, 0, &y), MXC_OK);
  Arr ya(y);
  *out = read(ya);
  int64_t n = od_lookups() - before;
  mxc_ndarray_free(d);
  mxc_ndarray_free(w);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
  return n;
}

}  // namespace

TEST(OneDnnSwitch, BindFlagRunsTheReferenceKernels) {
  std::vector<double> with, without;
  int64_t n_on = forward_lookups(MXC_BIND_DEFAULT, &with);
  int64_t n_off = forward_lookups(MXC_BIND_NO_ONEDNN, &without);
  EXPECT_EQ(n_off, 0) << "MXC_BIND_NO_ONEDNN still reached oneDNN";
  if (od_enabled()) {
    EXPECT_GT(n_on, 0);
  }
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_NEAR(with[i], without[i], 1e-4 * (1 + std::fabs(without[i]))) << i;
  }
}

// ---- whole graphs: the same executor bound with and without
// MXC_BIND_NO_ONEDNN must agree ----

namespace {

// A residual block as in ResNet: conv-BN-relu-conv-BN, + the input, relu,
// global average pooling, FullyConnected, softmax.
const char *kResBlock =
    R"J({"nodes":[
{"op":"null","name":"data","inputs":[]},
{"op":"null","name":"c1_weight","inputs":[]},
{"op":"Convolution","name":"c1","attrs":{"kernel":"(3,3)","pad":"(1,1)",
 "num_filter":"6","no_bias":"true"},"inputs":[[0,0,0],[1,0,0]]},
{"op":"null","name":"bn1_gamma","inputs":[]},
{"op":"null","name":"bn1_beta","inputs":[]},
{"op":"null","name":"bn1_moving_mean","inputs":[]},
{"op":"null","name":"bn1_moving_var","inputs":[]},
{"op":"BatchNorm","name":"bn1","attrs":{"fix_gamma":"false","eps":"1e-5"},
 "inputs":[[2,0,0],[3,0,0],[4,0,0],[5,0,0],[6,0,0]]},
{"op":"Activation","name":"r1","attrs":{"act_type":"relu"},
 "inputs":[[7,0,0]]},
{"op":"null","name":"c2_weight","inputs":[]},
{"op":"Convolution","name":"c2","attrs":{"kernel":"(3,3)","pad":"(1,1)",
 "num_filter":"6","no_bias":"true"},"inputs":[[8,0,0],[9,0,0]]},
{"op":"null","name":"bn2_gamma","inputs":[]},
{"op":"null","name":"bn2_beta","inputs":[]},
{"op":"null","name":"bn2_moving_mean","inputs":[]},
{"op":"null","name":"bn2_moving_var","inputs":[]},
{"op":"BatchNorm","name":"bn2","attrs":{"fix_gamma":"false","eps":"1e-5"},
 "inputs":[[10,0,0],[11,0,0],[12,0,0],[13,0,0],[14,0,0]]},
{"op":"elemwise_add","name":"sum","inputs":[[15,0,0],[0,0,0]]},
{"op":"Activation","name":"r2","attrs":{"act_type":"relu"},
 "inputs":[[16,0,0]]},
{"op":"Pooling","name":"gap","attrs":{"kernel":"(1,1)","global_pool":"true",
 "pool_type":"avg"},"inputs":[[17,0,0]]},
{"op":"null","name":"fc_weight","inputs":[]},
{"op":"null","name":"fc_bias","inputs":[]},
{"op":"FullyConnected","name":"fc","attrs":{"num_hidden":"5"},
 "inputs":[[18,0,0],[19,0,0],[20,0,0]]},
{"op":"softmax","name":"prob","inputs":[[21,0,0]]}],
"arg_nodes":[0,1,3,4,5,6,9,11,12,13,14,19,20],"heads":[[22,0,0]]})J";

const char *kArgs[] = {"data",      "c1_weight", "bn1_gamma", "bn1_beta",
                       "c2_weight", "bn2_gamma", "bn2_beta",  "fc_weight",
                       "fc_bias"};
const char *kAux[] = {"bn1_moving_mean", "bn1_moving_var", "bn2_moving_mean",
                      "bn2_moving_var"};

void fill(mxc_executor ex, const char *name, bool aux, unsigned seed) {
  mxc_ndarray a = nullptr;
  ASSERT_EQ(aux ? mxc_executor_aux(ex, name, &a) : mxc_executor_arg(ex, name, &a),
            MXC_OK)
      << name << ": " << err();
  int64_t n = 0;
  mxc_ndarray_size(a, &n);
  bool var = std::string(name).find("var") != std::string::npos;
  std::vector<double> u = uniform(n, var ? 0.5 : -1, var ? 1.5 : 1, seed);
  std::vector<float> f(u.begin(), u.end());
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, f.data(), f.size() * 4), MXC_OK);
  mxc_ndarray_free(a);
}

std::vector<double> fetch(mxc_executor ex, const char *what, const char *name) {
  mxc_ndarray a = nullptr;
  int rc = std::string(what) == "grad"  ? mxc_executor_grad(ex, name, &a)
           : std::string(what) == "aux" ? mxc_executor_aux(ex, name, &a)
                                        : mxc_executor_output(ex, 0, &a);
  EXPECT_EQ(rc, MXC_OK) << what << " " << name << ": " << err();
  Arr h(a);
  return read(h);
}

// A network to bind: its JSON, arguments with gradients, aux states and
// the data's shape.
struct Net {
  const char *json;
  std::vector<const char *> args, aux;
  std::vector<int64_t> dims;
};

const Net kResBlockNet = {kResBlock,
                          std::vector<const char *>(std::begin(kArgs),
                                                    std::end(kArgs)),
                          std::vector<const char *>(std::begin(kAux),
                                                    std::end(kAux)),
                          {3, 6, 7, 5}};

// Output, every argument's gradient and the updated moving statistics
// of one training step (or the output of one inference forward).
// data_req >= 0: data's own grad_req (its gradient then left out of the
// result when MXC_REQ_NULL).
std::vector<std::vector<double>> run_net(const Net &net, int flags,
                                         bool train, int data_req = -1) {
  std::vector<std::vector<double>> r;
  mxc_symbol sym = nullptr;
  EXPECT_EQ(mxc_symbol_from_json(net.json, &sym), MXC_OK) << err();
  const char *names[] = {"data"};
  int ndims[] = {(int)net.dims.size()};
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     net.dims.data(), nullptr,
                                     train ? MXC_REQ_WRITE : MXC_REQ_NULL,
                                     data_req >= 0 ? 1 : 0, names, &data_req,
                                     flags, &ex),
            MXC_OK)
      << err();
  if (!ex) return r;
  unsigned seed = 80;
  for (const char *a : net.args) fill(ex, a, false, seed++);
  for (const char *a : net.aux) fill(ex, a, true, seed++);
  EXPECT_EQ(mxc_executor_forward(ex, train ? 1 : 0), MXC_OK) << err();
  if (train) {
    EXPECT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  }
  r.push_back(fetch(ex, "out", ""));
  for (const char *a : net.args) {
    bool none = data_req == MXC_REQ_NULL && std::string(a) == "data";
    if (train && !none) r.push_back(fetch(ex, "grad", a));
  }
  for (const char *a : net.aux) r.push_back(fetch(ex, "aux", a));
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
  return r;
}

std::vector<std::vector<double>> res_block(int flags, bool train) {
  return run_net(kResBlockNet, flags, train);
}

// ResNet's stem: convolution, max pooling 3x3 stride 2 (the workspace
// kept from forward to backward), FullyConnected, softmax.
const char *kPoolNet =
    R"J({"nodes":[
{"op":"null","name":"data","inputs":[]},
{"op":"null","name":"c1_weight","inputs":[]},
{"op":"Convolution","name":"c1","attrs":{"kernel":"(3,3)","pad":"(1,1)",
 "num_filter":"4","no_bias":"true"},"inputs":[[0,0,0],[1,0,0]]},
{"op":"Pooling","name":"pool","attrs":{"kernel":"(3,3)","stride":"(2,2)",
 "pad":"(1,1)","pool_type":"max"},"inputs":[[2,0,0]]},
{"op":"null","name":"fc_weight","inputs":[]},
{"op":"null","name":"fc_bias","inputs":[]},
{"op":"FullyConnected","name":"fc","attrs":{"num_hidden":"5"},
 "inputs":[[3,0,0],[4,0,0],[5,0,0]]},
{"op":"softmax","name":"prob","inputs":[[6,0,0]]}],
"arg_nodes":[0,1,4,5],"heads":[[7,0,0]]})J";

const Net kPoolNetNet = {kPoolNet,
                         {"data", "c1_weight", "fc_weight", "fc_bias"},
                         {},
                         {2, 3, 11, 9}};

void expect_same(const std::vector<std::vector<double>> &got,
                 const std::vector<std::vector<double>> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].size(), want[k].size()) << k;
    double scale = 0;
    for (double v : want[k]) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got[k].size(); ++i) {
      ASSERT_NEAR(got[k][i], want[k][i], tol * (1 + scale))
          << "array " << k << " element " << i;
    }
  }
}

}  // namespace

// Tolerance 1e-4 of each array's largest magnitude: float32 through
// convolutions, batch statistics and their gradients in another order.
TEST(OneDnnGraph, ResidualBlockInferenceAndTrainingStep) {
  for (bool train : {false, true}) {
    int64_t before = od_lookups();
    auto on = res_block(MXC_BIND_DEFAULT, train);
    if (od_enabled()) {
      EXPECT_GT(od_lookups(), before);
    }
    before = od_lookups();
    auto off = res_block(MXC_BIND_NO_ONEDNN, train);
    EXPECT_EQ(od_lookups(), before);
    expect_same(on, off, 1e-4);
  }
}

// The same through an executor with max pooling: forward and every
// gradient with oneDNN (its workspace kept from forward to backward)
// and with the reference kernels.
TEST(OneDnnGraph, MaxPoolingTrainingStepKeepsItsWorkspace) {
  int e;
  int64_t h0, m0, h1, m1;
  od_pool_ws_stats(&e, &h0, &m0);
  auto on = run_net(kPoolNetNet, MXC_BIND_DEFAULT, true);
  od_pool_ws_stats(&e, &h1, &m1);
  if (od_enabled()) {
    EXPECT_EQ(h1, h0 + 1) << "the pooling backward ran its forward again";
  }
  int64_t before = od_lookups();
  auto off = run_net(kPoolNetNet, MXC_BIND_NO_ONEDNN, true);
  EXPECT_EQ(od_lookups(), before);
  expect_same(on, off, 1e-4);
}

// The first convolution of a training step whose data needs no gradient
// (grad_req null for data, as bench/train binds it) does not compute it:
// the executor gives that output MXC__REQ_NULL and the kernel skips
// oneDNN's backward-data primitive (one primitive lookup fewer), and
// every other gradient stays what it was.
TEST(OneDnnGraph, DataWithoutGradientSkipsTheFirstBackwardData) {
  if (!od_enabled()) GTEST_SKIP() << "MXC_ONEDNN=0";
  int64_t l0 = od_lookups();
  auto all = run_net(kPoolNetNet, MXC_BIND_DEFAULT, true, MXC_REQ_WRITE);
  int64_t l1 = od_lookups();
  auto some = run_net(kPoolNetNet, MXC_BIND_DEFAULT, true, MXC_REQ_NULL);
  int64_t l2 = od_lookups();
  EXPECT_LT(l2 - l1, l1 - l0) << "the data gradient was computed anyway";
  ASSERT_EQ(all.size(), some.size() + 1);
  all.erase(all.begin() + 1);  // data's gradient (args[0])
  expect_same(some, all, 1e-5);
}

// A real network exported by MXNet (MobileFaceNet: convolutions,
// depthwise ones included, BatchNorm, PReLU, FullyConnected), forward
// with and without oneDNN; skipped without the shared models directory.
TEST(OneDnnGraph, MobileFaceNetMatchesTheReferenceKernels) {
  std::string dir = mxct::mxnet_models_dir("scripts/mxnet_ref.py");
  if (dir.empty()) GTEST_SKIP() << "shared mxnet-models directory not found";
  std::vector<std::vector<float>> outs;
  for (int flags : {MXC_BIND_DEFAULT, MXC_BIND_NO_ONEDNN}) {
    mxc_symbol sym = nullptr;
    ASSERT_EQ(mxc_symbol_load((dir + "/hanson_mobilefacenet-symbol.json").c_str(),
                              &sym),
              MXC_OK)
        << err();
    const char *dn[] = {"data"};
    int nd[] = {4};
    int64_t dd[] = {1, 3, 112, 112};
    mxc_executor ex = nullptr;
    ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, dn, nd, dd,
                                       nullptr, MXC_REQ_NULL, 0, nullptr,
                                       nullptr, flags, &ex),
              MXC_OK)
        << err();
    ASSERT_EQ(mxc_executor_load_params(
                  ex, (dir + "/hanson_mobilefacenet-0000.params").c_str(), 0),
              MXC_OK)
        << err();
    mxc_ndarray data = nullptr, y = nullptr;
    ASSERT_EQ(mxc_executor_arg(ex, "data", &data), MXC_OK);
    std::vector<float> x(3 * 112 * 112);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (float)((i * 37 + 11) % 256);
    ASSERT_EQ(mxc_ndarray_copy_from_host(data, x.data(), x.size() * 4), MXC_OK);
    ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_output(ex, 0, &y), MXC_OK);
    Arr ya(y);
    std::vector<double> v = read(ya);
    outs.emplace_back(v.begin(), v.end());
    mxc_ndarray_free(data);
    mxc_executor_free(ex);
    mxc_symbol_free(sym);
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  double scale = 0;
  for (float v : outs[1]) scale = std::max(scale, (double)std::fabs(v));
  for (size_t i = 0; i < outs[0].size(); ++i) {
    EXPECT_NEAR(outs[0][i], outs[1][i], 1e-4 * scale) << i;
  }
}

// ---- the inference passes' fused operators: the layer, the sum and the
// activation as oneDNN post-ops against the reference chain; 1e-4
// relative as for the layers themselves ----

TEST(OneDnn, FusedConvolutionPostOps) {
  for (const char *act : {"none", "relu", "sigmoid", "tanh", "softrelu"}) {
    compare({"_FusedConvolution",
             {{"kernel", "(3,3)"}, {"num_filter", "5"}, {"pad", "(1,1)"},
              {"act_type", act}, {"with_sum", "true"}},
             {{2, 3, 9, 7}, {5, 3, 3, 3}, {5}, {2, 5, 9, 7}},
             1e-4});
  }
  compare({"_FusedConvolution",
           {{"kernel", "(3,)"}, {"num_filter", "4"}, {"no_bias", "true"},
            {"stride", "(2,)"}, {"act_type", "relu"}},
           {{2, 3, 11}, {4, 3, 3}},
           1e-4});
}

TEST(OneDnn, FusedFullyConnectedPostOps) {
  for (const char *act : {"none", "relu", "tanh"}) {
    compare({"_FusedFullyConnected", {{"num_hidden", "6"}, {"act_type", act}},
             {{3, 2, 5}, {6, 10}, {6}},
             1e-4});
  }
  compare({"_FusedFullyConnected",
           {{"num_hidden", "4"}, {"no_bias", "true"}, {"act_type", "sigmoid"}},
           {{5, 7}, {4, 7}},
           1e-4});
}

// Last: every operator with a oneDNN kernel has a comparison above.
TEST(OneDnnZ, EveryAttachedKernelIsCompared) {
  int n = 0;
  for (const char *name; (name = od_attached(n)) != nullptr; ++n) {
    EXPECT_TRUE(compared().count(name))
        << "the oneDNN kernel of " << name << " is never compared";
  }
  EXPECT_GE(n, 10);
}
