// Every public operator with a gradient function, run under recording and
// differentiated with mxc_autograd_backward, against central finite
// differences (float64) of the same operator run without recording.
//
// Operators needing parameters or particular inputs have cases in a
// table; the rest get a generic case (inputs of shape (2, 3) with values
// in [0.2, 0.8), "scalar" = 0.7 where required). Operators whose gradient
// is declared absent (mxc__grad_none) must give zero gradients. The test
// fails if an operator with a gradient is neither checked nor listed as
// skipped with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/autograd/ag_util.h"

extern "C" {
#include "core/op/op.h"
// core/op/node.h uses C11 atomics; the gradient builders are plain functions.
int mxc__grad_none(const struct mxc__node *, const struct mxc__entry *,
                   struct mxc__entry *);
}

namespace {

using namespace agt;

struct Case {
  std::string label;
  Params params;
  std::vector<Input> inputs;
  bool train = false;
  double rtol = 1e-5;
};

Input in(const Shape &s, double lo = 0.2, double hi = 0.8, unsigned seed = 1) {
  return Input{s, uniform(numel(s), lo, hi, seed)};
}

// Values in +-[0.2, 0.8): away from the kinks at 0.
Input mixed(const Shape &s, unsigned seed = 2) {
  Input x = in(s, 0.2, 0.8, seed);
  for (size_t i = 0; i < x.values.size(); i += 2) x.values[i] = -x.values[i];
  return x;
}

Input fixed(const Shape &s, std::vector<double> v, bool wrt = false) {
  return Input{s, std::move(v), MXC_DTYPE_FLOAT64, wrt};
}

// Matrices (n x n) with a dominant positive diagonal: invertible,
// well-conditioned, a valid Cholesky factor.
Input dominant(int64_t n, unsigned seed) {
  Input x = in({n, n}, -0.5, 0.5, seed);
  for (int64_t i = 0; i < n; ++i) x.values[i * n + i] += 2.5;
  return x;
}

// The vision, ctc and linalg_* families (ops/vision, ops/ctc, la_ops.c):
// inputs away from the kinks of ROI bins, sampler cells and NMS
// thresholds.
void vision_and_linalg(std::map<std::string, std::vector<Case>> &t) {
  Params roi = {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}};
  t["ROIPooling"].push_back(
      {"",
       roi,
       {in({1, 2, 4, 5}), fixed({2, 5}, {0, 0, 0, 3, 3, 0, 1, 1, 4, 3})}});
  roi.push_back({"sample_ratio", "2"});
  t["_contrib_ROIAlign"].push_back(
      {"",
       roi,
       {in({1, 2, 4, 5}),
        fixed({2, 5}, {0, 0.3, 0.2, 3.1, 2.7, 0, 1.2, 0.6, 4.1, 3.3})}});
  std::vector<double> boxes;
  for (int i = 0; i < 6; ++i) {
    double x = (i % 3) * 1.5, y = (i / 3) * 0.7;
    for (double v : {i % 2 + 0.5, 0.9 - 0.1 * i, x, y, x + 2.0, y + 2.0})
      boxes.push_back(v);
  }
  t["_contrib_box_nms"].push_back(
      {"", {{"overlap_thresh", "0.45"}}, {fixed({6, 6}, boxes, true)}});
  t["GridGenerator"].push_back(
      {"affine",
       {{"transform_type", "affine"}, {"target_shape", "(3,4)"}},
       {in({2, 6}, -1, 1)}});
  t["GridGenerator"].push_back(
      {"warp", {{"transform_type", "warp"}}, {in({1, 2, 3, 4}, -1, 1)}});
  t["BilinearSampler"].push_back(
      {"", {}, {in({1, 2, 4, 4}), in({1, 2, 3, 3}, -0.9, 0.9, 5)}});
  t["SpatialTransformer"].push_back(
      {"",
       {{"transform_type", "affine"},
        {"sampler_type", "bilinear"},
        {"target_shape", "(3,3)"}},
       {in({1, 2, 4, 4}),
        fixed({1, 6}, {0.83, 0.11, 0.052, -0.21, 0.93, 0.097}, true)}});
  t["CTCLoss"].push_back(
      {"", {}, {in({5, 2, 4}, -1, 1), fixed({2, 2}, {1, 2, 3, 0})}});
  t["_contrib_MultiBoxPrior"].push_back(
      {"", {{"sizes", "(0.5,0.25)"}}, {in({1, 1, 2, 2})}});
  t["_contrib_MultiBoxDetection"].push_back(
      {"", {}, {in({1, 3, 2}), in({1, 8}), in({1, 2, 4})}});
  t["_contrib_MultiBoxTarget"].push_back(
      {"",
       {},
       {fixed({1, 2, 4}, {0.1, 0.1, 0.4, 0.4, 0.5, 0.5, 0.9, 0.9}),
        fixed({1, 1, 5}, {0, 0.1, 0.1, 0.4, 0.45}), in({1, 3, 2})}});
  t["_contrib_box_iou"].push_back({"", {}, {in({2, 4}), in({3, 4})}});
  t["linalg_gemm"].push_back({"",
                              {{"alpha", "1.5"}, {"beta", "0.5"}},
                              {in({2, 3}), in({3, 4}), in({2, 4})}});
  t["linalg_gemm2"].push_back(
      {"", {{"transpose_a", "true"}}, {in({3, 2}), in({3, 4})}});
  for (const char *op : {"linalg_trmm", "linalg_trsm"}) {
    t[op].push_back({"", {{"alpha", "0.7"}}, {dominant(3, 6), in({3, 2})}});
    t[op].push_back({"upper,rightside",
                     {{"lower", "false"}, {"rightside", "true"}},
                     {dominant(3, 6), in({2, 3})}});
  }
  for (const char *op : {"linalg_potri", "linalg_sumlogdiag", "linalg_inverse",
                         "linalg_det", "linalg_slogdet"}) {
    t[op].push_back({"", {}, {dominant(3, 7)}});
  }
  t["linalg_extractdiag"].push_back({"", {{"offset", "1"}}, {in({3, 3})}});
}

std::map<std::string, std::vector<Case>> table() {
  std::map<std::string, std::vector<Case>> t;
  vision_and_linalg(t);
  for (const char *a : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    t["Activation"].push_back({a, {{"act_type", a}}, {mixed({2, 3})}});
  }
  for (const char *a : {"leaky", "elu", "selu", "gelu"}) {
    t["LeakyReLU"].push_back({a, {{"act_type", a}}, {mixed({2, 3})}});
  }
  t["LeakyReLU"].push_back(
      {"prelu", {{"act_type", "prelu"}}, {mixed({2, 3, 2}), in({3})}});
  for (const char *a : {"abs", "relu", "sign"})
    t[a].push_back({"", {}, {mixed({2, 3})}});
  t["arccosh"].push_back({"", {}, {in({2, 3}, 1.2, 2.0)}});
  t["BatchNorm"].push_back({"train",
                            {{"fix_gamma", "false"}},
                            {in({4, 3}, -1, 1), in({3}, 0.5, 1.5), in({3}),
                             fixed({3}, {0, 0, 0}), fixed({3}, {1, 1, 1})},
                            true});
  t["BatchNorm"].push_back(
      {"inference",
       {{"fix_gamma", "false"}},
       {in({4, 3}, -1, 1), in({3}, 0.5, 1.5), in({3}),
        fixed({3}, {0.1, 0.2, 0.3}), fixed({3}, {0.5, 1.0, 1.5})}});
  t["Cast"].push_back({"", {{"dtype", "float64"}}, {in({2, 3})}});
  t["cast_storage"].push_back({"", {{"stype", "default"}}, {in({2, 3})}});
  t["Concat"].push_back({"",
                         {{"num_args", "2"}, {"dim", "1"}},
                         {in({2, 3}), in({2, 2}, 0.2, 0.8, 3)}});
  t["Convolution"].push_back(
      {"3x3",
       {{"kernel", "(3,3)"}, {"num_filter", "2"}},
       {in({1, 2, 4, 4}, -1, 1), in({2, 2, 3, 3}, -1, 1, 5), in({2})}});
  t["Convolution"].push_back(
      {"stride-pad",
       {{"kernel", "(2,2)"},
        {"num_filter", "2"},
        {"stride", "(2,2)"},
        {"pad", "(1,1)"},
        {"no_bias", "true"}},
       {in({2, 1, 3, 3}, -1, 1), in({2, 1, 2, 2}, -1, 1, 5)}});
  t["Deconvolution"].push_back(
      {"",
       {{"kernel", "(2,2)"}, {"num_filter", "2"}, {"no_bias", "false"}},
       {in({1, 3, 3, 3}, -1, 1), in({3, 2, 2, 2}, -1, 1, 5), in({2})}});
  t["Embedding"].push_back(
      {"",
       {{"input_dim", "5"}, {"output_dim", "3"}, {"dtype", "float64"}},
       {fixed({4}, {0, 2, 4, 2}), in({5, 3})}});
  t["FullyConnected"].push_back(
      {"",
       {{"num_hidden", "4"}},
       {in({2, 3}, -1, 1), in({4, 3}, -1, 1, 4), in({4})}});
  t["FullyConnected"].push_back({"flatten-no-bias",
                                 {{"num_hidden", "2"}, {"no_bias", "true"}},
                                 {in({2, 2, 3}, -1, 1), in({2, 6}, -1, 1, 4)}});
  // RNN: (T, N, C) = (2, 2, 3), state_size 2; parameters in MXNet's
  // packed layout (56 = 4*2*(3+2) + 2*4*2 for one LSTM direction).
  t["RNN"].push_back({"lstm",
                      {{"mode", "lstm"}, {"state_size", "2"},
                       {"num_layers", "1"}, {"state_outputs", "true"}},
                      {in({2, 2, 3}, -1, 1), in({56}, -0.5, 0.5, 4),
                       in({1, 2, 2}, -0.5, 0.5, 5), in({1, 2, 2}, -0.5, 0.5, 6)}});
  t["RNN"].push_back({"gru-bidirectional",
                      {{"mode", "gru"}, {"state_size", "2"},
                       {"num_layers", "1"}, {"bidirectional", "true"}},
                      {in({2, 2, 3}, -1, 1), in({84}, -0.5, 0.5, 4),
                       in({2, 2, 2}, -0.5, 0.5, 5)}});
  t["LayerNorm"].push_back(
      {"", {}, {in({2, 3, 4}, -1, 1), in({4}, 0.5, 1.5), in({4})}});
  t["Crop"].push_back({"h_w,offset",
                       {{"num_args", "1"}, {"h_w", "(2,2)"}, {"offset", "(1,0)"}},
                       {in({1, 2, 3, 4}, -1, 1)}});
  t["Crop"].push_back({"like,center",
                       {{"num_args", "2"}, {"center_crop", "true"}},
                       {in({1, 2, 4, 5}, -1, 1),
                        fixed({1, 1, 2, 3}, {0, 0, 0, 0, 0, 0})}});
  for (const char *m : {"instance", "channel"}) {
    t["SoftmaxActivation"].push_back(
        {m, {{"mode", m}}, {in({2, 3, 2}, -1, 1)}});
  }
  t["Pad"].push_back(
      {"",
       {{"mode", "constant"}, {"pad_width", "(0,0,0,0,1,1,2,2)"}},
       {in({1, 1, 2, 3})}});
  for (const char *p : {"max", "avg", "sum"}) {
    t["Pooling"].push_back({p,
                            {{"kernel", "(2,2)"}, {"pool_type", p}},
                            {in({1, 2, 4, 4}, -1, 1)}});
  }
  t["Pooling"].push_back(
      {"global",
       {{"kernel", "(1,1)"}, {"global_pool", "true"}, {"pool_type", "avg"}},
       {in({1, 2, 3, 3})}});
  t["Reshape"].push_back({"", {{"shape", "(3,2)"}}, {in({2, 3})}});
  t["UpSampling"].push_back(
      {"",
       {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
       {in({1, 2, 2, 2})}});
  t["UpSampling"].push_back(
      {"bilinear",
       {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_args", "2"}},
       {in({1, 2, 2, 2}, -1, 1), in({2, 1, 4, 4}, -1, 1, 3)}});
  t["UpSampling"].push_back(
      {"nearest-2", {{"scale", "2"}, {"num_args", "2"}},
       {in({1, 1, 1, 2}), in({1, 2, 2, 4}, 0.2, 0.8, 3)}});
  t["LRN"].push_back({"", {{"nsize", "3"}, {"alpha", "0.5"}},
                      {in({1, 4, 2, 2}, -1, 1)}});
  t["GroupNorm"].push_back({"",
                            {{"num_groups", "2"}},
                            {in({2, 4, 3}, -1, 1), in({4}, 0.5, 1.5),
                             in({4})}});
  t["InstanceNorm"].push_back(
      {"", {}, {in({2, 3, 4}, -1, 1), in({3}, 0.5, 1.5), in({3})}});
  t["_contrib_AdaptiveAvgPooling2D"].push_back(
      {"", {{"output_size", "(2,3)"}}, {in({1, 2, 3, 5})}});
  t["_contrib_BilinearResize2D"].push_back(
      {"", {{"height", "3"}, {"width", "5"}}, {in({1, 2, 2, 3})}});
  t["depth_to_space"].push_back(
      {"", {{"block_size", "2"}}, {in({1, 4, 1, 2})}});
  t["space_to_depth"].push_back(
      {"", {{"block_size", "2"}}, {in({1, 1, 2, 4})}});
  t["add_n"].push_back(
      {"",
       {{"num_args", "3"}},
       {in({2, 3}), in({2, 3}, 0.2, 0.8, 3), in({2, 3}, 0.2, 0.8, 4)}});
  t["batch_dot"].push_back(
      {"", {}, {in({2, 2, 3}, -1, 1), in({2, 3, 4}, -1, 1, 3)}});
  t["batch_dot"].push_back({"transpose_a",
                            {{"transpose_a", "true"}},
                            {in({2, 3, 2}, -1, 1), in({2, 3, 4}, -1, 1, 3)}});
  for (const char *b :
       {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
        "broadcast_power", "broadcast_maximum", "broadcast_minimum",
        "broadcast_hypot", "broadcast_mod"}) {
    t[b].push_back({"(2,3)x(1,3)", {}, {in({2, 3}), in({1, 3}, 0.3, 0.9, 3)}});
    t[b].push_back({"(2,1)x(1,3)", {}, {in({2, 1}), in({1, 3}, 0.3, 0.9, 3)}});
  }
  t["broadcast_axis"].push_back(
      {"", {{"axis", "1"}, {"size", "3"}}, {in({2, 1})}});
  t["broadcast_to"].push_back({"", {{"shape", "(2,3)"}}, {in({1, 3})}});
  t["broadcast_like"].push_back({"", {}, {in({1, 3}), in({2, 3})}});
  t["clip"].push_back({"", {{"a_min", "0.3"}, {"a_max", "0.7"}}, {in({2, 3})}});
  t["dot"].push_back({"", {}, {in({2, 3}, -1, 1), in({3, 4}, -1, 1, 3)}});
  t["dot"].push_back({"transpose_b",
                      {{"transpose_b", "true"}},
                      {in({2, 3}, -1, 1), in({4, 3}, -1, 1, 3)}});
  t["expand_dims"].push_back({"", {{"axis", "1"}}, {in({2, 3})}});
  t["flip"].push_back({"", {{"axis", "1"}}, {in({2, 3})}});
  t["gather_nd"].push_back({"", {}, {in({3, 4}), fixed({2, 2}, {0, 2, 1, 3})}});
  t["one_hot"].push_back({"", {{"depth", "4"}}, {fixed({3}, {0, 3, 1}, true)}});
  t["pick"].push_back(
      {"", {{"axis", "1"}}, {in({3, 4}), fixed({3}, {0, 3, 1})}});
  t["repeat"].push_back({"", {{"repeats", "2"}, {"axis", "1"}}, {in({2, 3})}});
  t["scatter_nd"].push_back(
      {"", {{"shape", "(3,4)"}}, {in({2}), fixed({2, 2}, {0, 2, 1, 3})}});
  t["slice"].push_back(
      {"", {{"begin", "(0,1)"}, {"end", "(2,3)"}}, {in({2, 3})}});
  t["slice_axis"].push_back(
      {"", {{"axis", "1"}, {"begin", "0"}, {"end", "2"}}, {in({2, 3})}});
  t["split"].push_back(
      {"", {{"num_outputs", "3"}, {"axis", "1"}}, {in({2, 3})}});
  t["stack"].push_back({"",
                        {{"num_args", "2"}, {"axis", "1"}},
                        {in({2, 3}), in({2, 3}, 0.2, 0.8, 3)}});
  t["squeeze"].push_back({"", {}, {in({2, 1, 3})}});
  t["swapaxes"].push_back({"", {{"dim1", "0"}, {"dim2", "1"}}, {in({2, 3})}});
  t["take"].push_back({"", {}, {in({4, 3}), fixed({2}, {3, 1})}});
  t["tile"].push_back({"", {{"reps", "(2,1)"}}, {in({2, 3})}});
  t["topk"].push_back({"", {{"k", "2"}, {"ret_typ", "value"}}, {in({2, 3})}});
  t["where"].push_back({"",
                        {},
                        {fixed({2, 3}, {1, 0, 1, 0, 0, 1}), in({2, 3}),
                         in({2, 3}, 0.2, 0.8, 3)}});
  t["softmax_cross_entropy"].push_back(
      {"", {}, {in({3, 4}, -1, 1), fixed({3}, {0, 3, 1})}});
  for (const char *r :
       {"sum", "mean", "prod", "max", "min", "norm", "nansum", "nanprod"}) {
    t[r].push_back({"all", {}, {in({2, 3})}});
    t[r].push_back({"axis=1,keepdims",
                    {{"axis", "1"}, {"keepdims", "true"}},
                    {in({2, 3})}});
  }
  for (const char *s : {"softmax", "log_softmax"}) {
    t[s].push_back({"axis=-1", {}, {in({2, 3}, -1, 1)}});
    t[s].push_back({"axis=0", {{"axis", "0"}}, {in({2, 3}, -1, 1)}});
  }
  return t;
}

// Operators not checked here, and why.
const std::map<std::string, std::string> kSkip = {
    {"Dropout", "random mask: test_autograd.cc checks it against the forward"},
    {"SoftmaxOutput", "loss: ignores head gradients (test_autograd.cc)"},
    {"LinearRegressionOutput", "loss: ignores head gradients"},
    {"LogisticRegressionOutput", "loss: ignores head gradients"},
    {"MAERegressionOutput", "loss: ignores head gradients"},
    {"MakeLoss", "loss: ignores head gradients (tests/ops/nn)"},
    {"make_loss", "loss: ignores head gradients (tests/ops/nn)"},
    {"sgd_update", "optimizer update: not a differentiable computation"},
    {"signsgd_update", "optimizer update: not a differentiable computation"},
    {"multi_sgd_update", "optimizer update: not a differentiable computation"},
    {"lamb_update_phase2", "optimizer update: not differentiable"},
    {"mp_lamb_update_phase2", "optimizer update: not differentiable"},
    {"_sparse_retain", "row_sparse output: tests/sparse_reduce checks it"},
    {"Custom", "user callbacks: tests/ops/custom checks them by differences"},
    {"linalg_potrf",
     "symmetric gradient (MXNet's): tests/ops/la checks it with symmetric "
     "perturbations"},
};

bool needs_scalar(const mxc__op *op) {
  for (int k = 0; k < op->n_params; ++k) {
    if (!op->params[k].def && strcmp(op->params[k].name, "scalar") == 0)
      return true;
  }
  return false;
}

// The generic case, or none when the operator needs other parameters.
bool generic_case(const mxc__op *op, Case *c) {
  Params p;
  if (needs_scalar(op)) p.push_back({"scalar", "0.7"});
  mxc_op h = nullptr;
  if (mxc_op_find(op->name, &h) != MXC_OK) return false;
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  int n_in = 0;
  if (mxc_op_num_inputs(h, k.data(), v.data(), (int)k.size(), &n_in) !=
      MXC_OK) {
    return false;
  }
  c->params = p;
  c->inputs.clear();
  for (int i = 0; i < n_in; ++i)
    c->inputs.push_back(in({2, 3}, 0.2, 0.8, 1 + i));
  return n_in > 0;
}

Program program_of(const std::string &name, const Params &p) {
  return [name, p](const std::vector<mxc_ndarray> &xs) {
    int rc = MXC_OK;
    return invoke(name, xs, p, &rc);
  };
}

// Zero gradients expected (mxc__grad_none operators).
void check_zero_gradients(const std::string &name, const Case &c) {
  std::vector<Arr> xs, gs;
  std::vector<mxc_ndarray> hx, hg;
  for (auto &i : c.inputs) {
    xs.push_back(make(i.shape, i.values));
    gs.push_back(make(i.shape, std::vector<double>(i.values.size(), 5.0)));
    hx.push_back(xs.back().h);
    hg.push_back(gs.back().h);
  }
  ASSERT_EQ(mxc_autograd_mark_variables((int)hx.size(), hx.data(), nullptr,
                                        hg.data()),
            MXC_OK)
      << err();
  std::vector<Arr> outs;
  {
    Recording r;
    outs = program_of(name, c.params)(hx);
  }
  ASSERT_FALSE(outs.empty()) << name << ": " << err();
  std::vector<mxc_ndarray> heads;
  for (auto &o : outs) heads.push_back(o.h);
  ASSERT_EQ(mxc_autograd_backward((int)heads.size(), heads.data(), nullptr, 0),
            MXC_OK)
      << name << ": " << err();
  for (auto &g : gs) {
    for (double v : read(g)) EXPECT_EQ(v, 0.0) << name;
  }
}

TEST(AutogradOps, EveryDifferentiableOperatorMatchesFiniteDifferences) {
  auto t = table();
  int checked = 0, cases = 0, zero = 0;
  std::vector<std::string> unchecked;
  for (int i = 0; i < mxc__op_count(); ++i) {
    const mxc__op *op = mxc__op_at(i);
    // Optimizer updates (no gradient, inputs updated in place) are not
    // meant to be recorded.
    bool optimizer = op->mutate_inputs && op->gradient == mxc__grad_none;
    if (!op->gradient || optimizer || kSkip.count(op->name)) continue;
    std::vector<Case> cs;
    if (t.count(op->name)) {
      cs = t[op->name];
    } else {
      Case c;
      if (generic_case(op, &c)) cs.push_back(c);
    }
    bool ok = false;
    for (auto &c : cs) {
      std::string what =
          std::string(op->name) + (c.label.empty() ? "" : "[" + c.label + "]");
      if (op->gradient == mxc__grad_none) {
        check_zero_gradients(op->name, c);
        ok = true;
        ++zero;
        continue;
      }
      Training tr(c.train ? 1 : 0);
      bool ran = false;
      check_gradients(what, program_of(op->name, c.params), c.inputs, 1e-6,
                      c.rtol, 1e-6, &ran);
      if (!ran) {
        ADD_FAILURE() << what << ": forward failed: " << err();
        continue;
      }
      ok = true;
      ++cases;
    }
    if (ok) {
      ++checked;
    } else if (op->n_inputs != 0 || op->num_inputs) {
      unchecked.push_back(op->name);
    }
  }
  std::string list;
  for (auto &u : unchecked) list += u + " ";
  EXPECT_TRUE(unchecked.empty())
      << "operators with a gradient but no case: " << list;
  printf(
      "checked %d operators (%d finite-difference cases, %d zero-gradient)\n",
      checked, cases, zero);
  EXPECT_GT(checked, 120);
}

}  // namespace
