// Inference graph passes (core/exec/passes.h): every rewritten graph is
// checked for equal outputs against the same symbol bound over the same
// arrays with MXC_BIND_NO_INFER_PASSES (the unoptimised graph, itself
// tested against the imperative reference in test_exec.cc), and for the
// rewrites actually made, read from mxc_executor_debug_str (operator names
// of the bound nodes and the pass counters).
//
// Tolerance: float32 outputs agree to 1e-4 relative (plus 1e-4 absolute
// near zero). Folding a BatchNorm rounds w*s once instead of rounding the
// convolution and then the normalization; fusing a sum adds bias and sum
// in another order; both differ from the unfused graph by a few ulp of
// each partial result, far below that bound for these sizes (K <= 100).
// Float64 runs of the fused operators agree to 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/exec/exec_test_util.h"

using namespace exectest;

namespace {

// Two ResNet basic blocks as MXNet writes them: an identity shortcut
// (relu(bn2(conv2(relu(bn1(conv1(x))))) + x)) and a projection shortcut
// with stride 2 (a 1x1 convolution + BatchNorm on the shortcut; conv4
// has a bias and bn4 keeps fix_gamma's default, true).
const char *kResNet = R"JSON({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c1_weight", "inputs": []},
    {"op": "Convolution", "name": "conv1", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "null", "name": "bn1_gamma", "inputs": []},
    {"op": "null", "name": "bn1_beta", "inputs": []},
    {"op": "null", "name": "bn1_moving_mean", "inputs": []},
    {"op": "null", "name": "bn1_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn1", "attrs": {"fix_gamma": "False",
     "eps": "1e-5"},
     "inputs": [[2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"},
     "inputs": [[7, 0, 0]]},
    {"op": "null", "name": "c2_weight", "inputs": []},
    {"op": "Convolution", "name": "conv2", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[8, 0, 0], [9, 0, 0]]},
    {"op": "null", "name": "bn2_gamma", "inputs": []},
    {"op": "null", "name": "bn2_beta", "inputs": []},
    {"op": "null", "name": "bn2_moving_mean", "inputs": []},
    {"op": "null", "name": "bn2_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn2", "attrs": {"fix_gamma": "False",
     "eps": "1e-5"},
     "inputs": [[10, 0, 0], [11, 0, 0], [12, 0, 0], [13, 0, 0], [14, 0, 0]]},
    {"op": "elemwise_add", "name": "add1",
     "inputs": [[15, 0, 0], [0, 0, 0]]},
    {"op": "Activation", "name": "relu2", "attrs": {"act_type": "relu"},
     "inputs": [[16, 0, 0]]},
    {"op": "null", "name": "c3_weight", "inputs": []},
    {"op": "Convolution", "name": "conv3", "attrs": {"kernel": "(3, 3)",
     "stride": "(2, 2)", "pad": "(1, 1)", "num_filter": "8",
     "no_bias": "True"},
     "inputs": [[17, 0, 0], [18, 0, 0]]},
    {"op": "null", "name": "bn3_gamma", "inputs": []},
    {"op": "null", "name": "bn3_beta", "inputs": []},
    {"op": "null", "name": "bn3_moving_mean", "inputs": []},
    {"op": "null", "name": "bn3_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn3", "attrs": {"fix_gamma": "False"},
     "inputs": [[19, 0, 0], [20, 0, 0], [21, 0, 0], [22, 0, 0], [23, 0, 0]]},
    {"op": "Activation", "name": "relu3", "attrs": {"act_type": "relu"},
     "inputs": [[24, 0, 0]]},
    {"op": "null", "name": "c4_weight", "inputs": []},
    {"op": "null", "name": "c4_bias", "inputs": []},
    {"op": "Convolution", "name": "conv4", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "8"},
     "inputs": [[25, 0, 0], [26, 0, 0], [27, 0, 0]]},
    {"op": "null", "name": "bn4_gamma", "inputs": []},
    {"op": "null", "name": "bn4_beta", "inputs": []},
    {"op": "null", "name": "bn4_moving_mean", "inputs": []},
    {"op": "null", "name": "bn4_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn4",
     "inputs": [[28, 0, 0], [29, 0, 0], [30, 0, 0], [31, 0, 0], [32, 0, 0]]},
    {"op": "null", "name": "sc_weight", "inputs": []},
    {"op": "Convolution", "name": "sc", "attrs": {"kernel": "(1, 1)",
     "stride": "(2, 2)", "num_filter": "8", "no_bias": "True"},
     "inputs": [[17, 0, 0], [34, 0, 0]]},
    {"op": "null", "name": "bnsc_gamma", "inputs": []},
    {"op": "null", "name": "bnsc_beta", "inputs": []},
    {"op": "null", "name": "bnsc_moving_mean", "inputs": []},
    {"op": "null", "name": "bnsc_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bnsc", "attrs": {"fix_gamma": "False"},
     "inputs": [[35, 0, 0], [36, 0, 0], [37, 0, 0], [38, 0, 0], [39, 0, 0]]},
    {"op": "_Plus", "name": "add2", "inputs": [[33, 0, 0], [40, 0, 0]]},
    {"op": "Activation", "name": "relu4", "attrs": {"act_type": "relu"},
     "inputs": [[41, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 3, 4, 5, 6, 9, 11, 12, 13, 14, 18, 20, 21, 22, 23, 26,
                27, 29, 30, 31, 32, 34, 36, 37, 38, 39],
  "heads": [[42, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10900]}
})JSON";

// LeNet-like: conv-bn-relu-pool, a _copy, fc-relu (the relu operator),
// Dropout, fc-bn-tanh (BatchNorm on a FullyConnected output).
const char *kLeNet = R"JSON({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c1_weight", "inputs": []},
    {"op": "null", "name": "c1_bias", "inputs": []},
    {"op": "Convolution", "name": "conv1", "attrs": {"kernel": "(5, 5)",
     "num_filter": "4"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "null", "name": "bn1_gamma", "inputs": []},
    {"op": "null", "name": "bn1_beta", "inputs": []},
    {"op": "null", "name": "bn1_moving_mean", "inputs": []},
    {"op": "null", "name": "bn1_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn1", "attrs": {"fix_gamma": "False",
     "eps": "2e-5"},
     "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0], [7, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"},
     "inputs": [[8, 0, 0]]},
    {"op": "Pooling", "name": "pool1", "attrs": {"kernel": "(2, 2)",
     "stride": "(2, 2)", "pool_type": "max"}, "inputs": [[9, 0, 0]]},
    {"op": "_copy", "name": "copy1", "inputs": [[10, 0, 0]]},
    {"op": "null", "name": "fc1_weight", "inputs": []},
    {"op": "null", "name": "fc1_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "10"},
     "inputs": [[11, 0, 0], [12, 0, 0], [13, 0, 0]]},
    {"op": "relu", "name": "relu2", "inputs": [[14, 0, 0]]},
    {"op": "Dropout", "name": "drop1", "attrs": {"p": "0.5"},
     "inputs": [[15, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "inputs": []},
    {"op": "null", "name": "fc2_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "3"},
     "inputs": [[16, 0, 0], [17, 0, 0], [18, 0, 0]]},
    {"op": "null", "name": "bn2_gamma", "inputs": []},
    {"op": "null", "name": "bn2_beta", "inputs": []},
    {"op": "null", "name": "bn2_moving_mean", "inputs": []},
    {"op": "null", "name": "bn2_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn2", "attrs": {"fix_gamma": "False"},
     "inputs": [[19, 0, 0], [20, 0, 0], [21, 0, 0], [22, 0, 0], [23, 0, 0]]},
    {"op": "Activation", "name": "tanh1", "attrs": {"act_type": "tanh"},
     "inputs": [[24, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 4, 5, 6, 7, 12, 13, 17, 18, 20, 21, 22, 23],
  "heads": [[25, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10900]}
})JSON";

// conv -> bn, whose output two activations read (a shared intermediate),
// summed; shared_json adds the heads.
const char *kSharedNodes = R"JSON(
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c_weight", "inputs": []},
    {"op": "Convolution", "name": "conv", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "null", "name": "bn_gamma", "inputs": []},
    {"op": "null", "name": "bn_beta", "inputs": []},
    {"op": "null", "name": "bn_moving_mean", "inputs": []},
    {"op": "null", "name": "bn_moving_var", "inputs": []},
    {"op": "BatchNorm", "name": "bn", "attrs": {"fix_gamma": "False"},
     "inputs": [[2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]},
    {"op": "Activation", "name": "relu", "attrs": {"act_type": "relu"},
     "inputs": [[7, 0, 0]]},
    {"op": "Activation", "name": "sig", "attrs": {"act_type": "sigmoid"},
     "inputs": [[7, 0, 0]]},
    {"op": "elemwise_add", "name": "add", "inputs": [[8, 0, 0], [9, 0, 0]]}
)JSON";

std::string shared_json(const char *heads) {
  return std::string("{\"nodes\": [") + kSharedNodes +
         "], \"arg_nodes\": [0, 1, 3, 4, 5, 6], \"heads\": " + heads +
         ", \"attrs\": {\"mxnet_version\": [\"int\", 10900]}}";
}

int count(const std::string &s, const std::string &what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos;
       p = s.find(what, p + 1)) {
    ++n;
  }
  return n;
}

std::string debug_str(mxc_executor ex) {
  char *s = nullptr;
  EXPECT_EQ(mxc_executor_debug_str(ex, &s), MXC_OK) << err();
  std::string out = s ? s : "";
  mxc_string_free(s);
  return out;
}

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() &&
         s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// One symbol bound twice over the same arrays: `ref` without the passes
// (simple_bind makes the arrays) and `opt` with opt_flags, every argument
// and auxiliary state random (moving variances in [0.5, 1.5]).
struct Pair {
  mxc_symbol sym = nullptr;
  mxc_executor ref = nullptr, opt = nullptr;
  std::vector<std::string> args, aux;
  ~Pair() {
    mxc_executor_free(opt);
    mxc_executor_free(ref);
    mxc_symbol_free(sym);
  }

  void fill(const std::string &name, int is_aux, std::mt19937 &rng) {
    mxc_ndarray a = nullptr;
    ASSERT_EQ(is_aux ? mxc_executor_aux(ref, name.c_str(), &a)
                     : mxc_executor_arg(ref, name.c_str(), &a),
              MXC_OK)
        << err();
    int64_t n = 0;
    ASSERT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
    bool var = ends_with(name, "moving_var");
    set(a, random_vec(n, rng, var ? 0.5 : -1, var ? 1.5 : 1));
    mxc_ndarray_free(a);
  }

  void randomize(unsigned seed) {
    std::mt19937 rng(seed);
    for (const auto &n : args) fill(n, 0, rng);
    for (const auto &n : aux) fill(n, 1, rng);
  }

  std::vector<mxc_ndarray> arrays(int is_aux) {
    std::vector<mxc_ndarray> v;
    for (const auto &n : is_aux ? aux : args) {
      mxc_ndarray a = nullptr;
      EXPECT_EQ(is_aux ? mxc_executor_aux(ref, n.c_str(), &a)
                       : mxc_executor_arg(ref, n.c_str(), &a),
                MXC_OK)
          << err();
      v.push_back(a);
    }
    return v;
  }

  void bind(const std::string &json, const Shape &data, unsigned seed,
            int opt_flags = 0) {
    ASSERT_EQ(mxc_symbol_from_json(json.c_str(), &sym), MXC_OK) << err();
    args = arguments(sym);
    aux = aux_states(sym);
    const char *names[1] = {"data"};
    int nd = (int)data.size();
    ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, &nd,
                                       data.data(), nullptr, MXC_REQ_NULL, 0,
                                       nullptr, nullptr,
                                       MXC_BIND_NO_INFER_PASSES, &ref),
              MXC_OK)
        << err();
    randomize(seed);
    std::vector<mxc_ndarray> a = arrays(0), x = arrays(1);
    ASSERT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, (int)a.size(),
                                a.data(), nullptr, nullptr, (int)x.size(),
                                x.data(), opt_flags, &opt),
              MXC_OK)
        << err();
    for (auto h : a) mxc_ndarray_free(h);
    for (auto h : x) mxc_ndarray_free(h);
  }

  // Runs both and compares every output.
  void expect_equal(int is_train, const std::string &what) {
    ASSERT_EQ(mxc_executor_forward(ref, is_train), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_forward(opt, is_train), MXC_OK) << err();
    int n = 0;
    ASSERT_EQ(mxc_executor_num_outputs(ref, &n), MXC_OK);
    for (int i = 0; i < n; ++i) {
      expect_close(output(opt, i), output(ref, i), 1e-4,
                   what + " output " + std::to_string(i));
    }
  }

  Vec arg(const std::string &name) { return get_named(ref, name, 0); }

  // Another executor of sym over ref's arrays (the caller frees it).
  mxc_executor bind_again(int flags) {
    std::vector<mxc_ndarray> a = arrays(0), x = arrays(1);
    mxc_executor e = nullptr;
    EXPECT_EQ(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, (int)a.size(),
                                a.data(), nullptr, nullptr, (int)x.size(),
                                x.data(), flags, &e),
              MXC_OK)
        << err();
    for (auto h : a) mxc_ndarray_free(h);
    for (auto h : x) mxc_ndarray_free(h);
    return e;
  }
};

TEST(InferPasses, ResNetBlocksFoldAndFuse) {
  Pair p;
  p.bind(kResNet, {2, 4, 6, 6}, 1);
  p.expect_equal(0, "resnet blocks");
  std::string d = debug_str(p.opt);
  EXPECT_NE(d.find("inference passes: 0 identity nodes removed, 5 "
                   "BatchNorms folded, 6 activations or sums fused"),
            std::string::npos)
      << d;
  // Four convolutions carry their BatchNorm, activation and (conv2,
  // conv4) residual sum; the projection shortcut stays a Convolution
  // (with its BatchNorm folded) and becomes conv4's sum input.
  EXPECT_EQ(count(d, "(_FusedConvolution)"), 4) << d;
  EXPECT_EQ(count(d, "(Convolution)"), 1) << d;
  EXPECT_EQ(count(d, "(BatchNorm)"), 0) << d;
  EXPECT_EQ(count(d, "(Activation)"), 0) << d;
  EXPECT_EQ(count(d, "(elemwise_add)"), 0) << d;
  EXPECT_NE(d.find("replaces conv2,bn2,add1,relu2"), std::string::npos) << d;
  // The unoptimised executor really is unoptimised.
  std::string r = debug_str(p.ref);
  EXPECT_EQ(r.find("inference passes"), std::string::npos) << r;
  // (BatchNorms before a relu run fused with it: not folded either.)
  EXPECT_EQ(count(r, "(BatchNorm)") + count(r, "(_FusedBatchNormReLU)"), 5)
      << r;
}

// A residual sum computed inside the graph (relu1's result, last read by
// the fused conv2) gives its memory to conv2's result instead of being
// copied into it at every forward; the results stay those of the
// unoptimised graph, with values plain and channels-last.
const char *kInplaceSum = R"JSON({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c1_weight", "inputs": []},
    {"op": "Convolution", "name": "conv1", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"},
     "inputs": [[2, 0, 0]]},
    {"op": "null", "name": "c2_weight", "inputs": []},
    {"op": "Convolution", "name": "conv2", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[3, 0, 0], [4, 0, 0]]},
    {"op": "elemwise_add", "name": "add1", "inputs": [[5, 0, 0], [3, 0, 0]]},
    {"op": "null", "name": "c3_weight", "inputs": []},
    {"op": "Convolution", "name": "conv3", "attrs": {"kernel": "(1, 1)",
     "num_filter": "2", "no_bias": "True"},
     "inputs": [[6, 0, 0], [7, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 4, 7],
  "heads": [[8, 0, 0]]
})JSON";

TEST(InferPasses, ResidualSumGivesItsMemoryToTheFusedResult) {
  for (const char *cl : {"1", "0"}) {
    setenv("MXC_CHANNELS_LAST", cl, 1);
    Pair p;
    p.bind(kInplaceSum, {2, 4, 6, 6}, 3);
    p.expect_equal(0, std::string("in-place sum, channels-last ") + cl);
    std::string d = debug_str(p.opt);
    size_t at = d.find("replaces conv2,add1");
    ASSERT_NE(at, std::string::npos) << d;
    size_t end = d.find("fwd", at);
    EXPECT_NE(d.substr(at, end - at).find("(in place)"), std::string::npos)
        << d;
  }
  unsetenv("MXC_CHANNELS_LAST");
}

TEST(InferPasses, LeNetRemovesIdentitiesAndFusesFullyConnected) {
  Pair p;
  p.bind(kLeNet, {2, 1, 12, 12}, 2);
  p.expect_equal(0, "lenet");
  std::string d = debug_str(p.opt);
  EXPECT_NE(d.find("inference passes: 2 identity nodes removed, 2 "
                   "BatchNorms folded, 3 activations or sums fused"),
            std::string::npos)
      << d;
  EXPECT_EQ(count(d, "(_FusedConvolution)"), 1) << d;
  EXPECT_EQ(count(d, "(_FusedFullyConnected)"), 2) << d;
  EXPECT_EQ(count(d, "(Pooling)"), 1) << d;
  EXPECT_EQ(count(d, "(Dropout)") + count(d, "(_copy)") +
                count(d, "(BatchNorm)") + count(d, "(relu)"),
            0)
      << d;
}

TEST(InferPasses, UserArraysAreNeverWritten) {
  Pair p;
  p.bind(kLeNet, {2, 1, 12, 12}, 3);
  std::vector<Vec> before;
  for (const auto &n : p.args) before.push_back(p.arg(n));
  ASSERT_EQ(mxc_executor_forward(p.opt, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_wait_all(), MXC_OK) << err();
  for (size_t i = 0; i < p.args.size(); ++i) {
    EXPECT_EQ(p.arg(p.args[i]), before[i]) << p.args[i];
  }
}

TEST(InferPasses, SharedIntermediateIsNotFused) {
  Pair p;
  p.bind(shared_json("[[10, 0, 0]]"), {2, 3, 5, 5}, 4);
  p.expect_equal(0, "shared");
  std::string d = debug_str(p.opt);
  // The convolution output has one reader (bn): folded. bn's output has
  // two (relu and sig): no activation joins the convolution.
  EXPECT_NE(d.find("1 BatchNorms folded, 0 activations or sums fused"),
            std::string::npos)
      << d;
  // (Element-wise fusion, which runs after, then takes relu, sig and add.)
  EXPECT_EQ(count(d, "(Convolution)"), 1) << d;
  EXPECT_EQ(count(d, "(_FusedConvolution)"), 0) << d;
}

TEST(InferPasses, RequestedIntermediateIsNotFolded) {
  Pair p;
  p.bind(shared_json("[[10, 0, 0], [2, 0, 0]]"), {2, 3, 5, 5}, 5);
  p.expect_equal(0, "requested conv output");
  std::string d = debug_str(p.opt);
  EXPECT_EQ(count(d, "(BatchNorm)"), 1) << d;
  EXPECT_EQ(count(d, "(Convolution)"), 1) << d;
  EXPECT_EQ(d.find("inference passes"), std::string::npos) << d;
}

TEST(InferPasses, RequestedIdentityOutputKeepsItsValues) {
  // The head itself is a Dropout: it stays (as the identity at inference)
  // and the output reads exactly its input's values.
  std::string json = R"JSON({"nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc_weight", "inputs": []},
    {"op": "null", "name": "fc_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "5"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "Dropout", "name": "drop", "attrs": {"p": "0.3"},
     "inputs": [[3, 0, 0]]}],
    "arg_nodes": [0, 1, 2], "heads": [[4, 0, 0], [3, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10900]}})JSON";
  Pair p;
  p.bind(json, {3, 4}, 6);
  p.expect_equal(0, "dropout head");
  EXPECT_EQ(output(p.opt, 0), output(p.opt, 1));
  EXPECT_EQ(count(debug_str(p.opt), "(Dropout)"), 1);
}

TEST(InferPasses, TrainingForwardRunsTheGraphAsWritten) {
  Pair p;
  p.bind(kResNet, {2, 4, 6, 6}, 7);
  // Batch statistics in both (BatchNorm updates the shared moving
  // statistics each time), then inference on the updated statistics: the
  // folded weights must follow those writes.
  p.expect_equal(1, "training forward");
  ASSERT_EQ(mxc_executor_backward(p.opt, 0, nullptr), MXC_OK) << err();
  p.expect_equal(0, "inference after training forwards");
  p.expect_equal(1, "training forward again");
}

TEST(InferPasses, GradientRequestDisablesThePasses) {
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(kLeNet, &sym), MXC_OK) << err();
  const char *names[1] = {"data"};
  int nd = 4;
  int64_t dims[4] = {2, 1, 12, 12};
  const char *req_names[1] = {"fc2_weight"};
  int reqs[1] = {MXC_REQ_WRITE};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, &nd,
                                     dims, nullptr, MXC_REQ_NULL, 1,
                                     req_names, reqs, 0, &ex),
            MXC_OK)
      << err();
  std::string d = debug_str(ex);
  EXPECT_EQ(d.find("inference passes"), std::string::npos) << d;
  EXPECT_EQ(count(d, "(BatchNorm)") + count(d, "(_FusedBatchNormReLU)"), 2)
      << d;
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
}

TEST(InferPasses, FlagDisablesThePasses) {
  Pair p;
  p.bind(kLeNet, {2, 1, 12, 12}, 8, MXC_BIND_NO_INFER_PASSES);
  std::string d = debug_str(p.opt);
  EXPECT_EQ(d.find("inference passes"), std::string::npos) << d;
  EXPECT_EQ(count(d, "(Dropout)"), 1) << d;
}

// Folded weights follow writes made after bind: a parameter file loaded
// into the executor, and a host copy into an argument array.
TEST(InferPasses, FoldsFollowLoadParamsAndCopies) {
  Pair p;
  p.bind(kLeNet, {2, 1, 12, 12}, 9);
  p.expect_equal(0, "before load");
  Vec first = output(p.opt, 0);
  std::mt19937 rng(10);
  std::vector<std::string> names = {"arg:c1_weight", "arg:bn1_gamma",
                                    "aux:bn1_moving_var", "arg:fc2_bias",
                                    "aux:bn2_moving_mean"};
  std::vector<mxc_ndarray> arrs;
  for (const auto &n : names) {
    mxc_ndarray a = nullptr;
    std::string bare = n.substr(4);
    ASSERT_EQ(n[0] == 'a' && n[1] == 'u'
                  ? mxc_executor_aux(p.ref, bare.c_str(), &a)
                  : mxc_executor_arg(p.ref, bare.c_str(), &a),
              MXC_OK);
    Shape s = shape_of(a);
    mxc_ndarray_free(a);
    bool var = ends_with(n, "moving_var");
    arrs.push_back(make(s, random_vec(numel(s), rng, var ? 0.5 : -1, 2)));
  }
  std::vector<const char *> cn;
  for (const auto &n : names) cn.push_back(n.c_str());
  std::string path = ::testing::TempDir() + "infer_passes_params.mxc";
  ASSERT_EQ(mxc_ndarray_save(path.c_str(), arrs.data(), cn.data(),
                             (int)arrs.size()),
            MXC_OK)
      << err();
  for (auto a : arrs) mxc_ndarray_free(a);
  ASSERT_EQ(mxc_executor_load_params(p.opt, path.c_str(), 0), MXC_OK) << err();
  std::remove(path.c_str());
  p.expect_equal(0, "after load_params");
  Vec second = output(p.opt, 0);
  EXPECT_NE(first, second);  // the loaded values matter

  mxc_ndarray gamma = nullptr;
  ASSERT_EQ(mxc_executor_arg(p.opt, "bn2_gamma", &gamma), MXC_OK) << err();
  set(gamma, random_vec(3, rng, 1, 3));
  mxc_ndarray_free(gamma);
  p.expect_equal(0, "after a copy into bn2_gamma");
  EXPECT_NE(output(p.opt, 0), second);
}

TEST(InferPasses, WriteVersionMovesOnWritesOnly) {
  mxc_ndarray a = make({4}, {1, 2, 3, 4});
  mxc_ndarray b = make({4}, {0, 0, 0, 0});
  long long v0 = mxct_write_version(a);
  Vec host = get(a);  // reading leaves it
  EXPECT_EQ(mxct_write_version(a), v0);
  set(a, {5, 6, 7, 8});
  long long v1 = mxct_write_version(a);
  EXPECT_GT(v1, v0);
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("_copy", &op), MXC_OK);
  long long vb = mxct_write_version(b);
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &b, 1, nullptr),
            MXC_OK)
      << err();
  EXPECT_EQ(mxct_write_version(a), v1);  // an input: read only
  EXPECT_GT(mxct_write_version(b), vb);
  EXPECT_EQ(get(b), Vec({5, 6, 7, 8}));
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
}

// ---- the fused operators against the unfused chain, imperatively ----

mxc_ndarray invoke1(const std::string &name, const KV &params,
                    const std::vector<mxc_ndarray> &in,
                    mxc_ndarray out = nullptr, int req = MXC_REQ_WRITE) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &kv : params) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                          (int)in.size(), &out, 1, &req),
            MXC_OK)
      << name << ": " << err();
  return out;
}

TEST(InferPasses, FusedConvolutionMatchesTheChain) {
  const char *acts[] = {"relu", "sigmoid", "tanh", "softrelu"};
  std::mt19937 rng(11);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    for (const char *act : acts) {
      mxc_ndarray x = make({2, 3, 5, 5}, random_vec(150, rng), dt);
      mxc_ndarray w = make({4, 3, 3, 3}, random_vec(108, rng), dt);
      mxc_ndarray b = make({4}, random_vec(4, rng), dt);
      mxc_ndarray s = make({2, 4, 3, 3}, random_vec(72, rng), dt);
      KV conv = {{"kernel", "(3, 3)"}, {"num_filter", "4"}};
      mxc_ndarray c = invoke1("Convolution", conv, {x, w, b});
      mxc_ndarray sum = invoke1("elemwise_add", {}, {c, s});
      mxc_ndarray want = invoke1("Activation", {{"act_type", act}}, {sum});
      KV fused = conv;
      fused.push_back({"act_type", act});
      fused.push_back({"with_sum", "True"});
      mxc_ndarray got = invoke1("_FusedConvolution", fused, {x, w, b, s});
      double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
      expect_close(get(got), get(want), tol, std::string("conv ") + act);
      // Accumulating write mode: got += the same value.
      invoke1("_FusedConvolution", fused, {x, w, b, s}, got, MXC_REQ_ADD);
      Vec twice = get(want);
      for (auto &t : twice) t *= 2;
      expect_close(get(got), twice, tol, std::string("conv add ") + act);
      for (auto a : {x, w, b, s, c, sum, want, got}) mxc_ndarray_free(a);
    }
  }
}

TEST(InferPasses, FusedFullyConnectedMatchesTheChain) {
  std::mt19937 rng(12);
  mxc_ndarray x = make({3, 2, 4}, random_vec(24, rng), MXC_DTYPE_FLOAT64);
  mxc_ndarray w = make({5, 8}, random_vec(40, rng), MXC_DTYPE_FLOAT64);
  KV fc = {{"num_hidden", "5"}, {"no_bias", "True"}};
  mxc_ndarray y = invoke1("FullyConnected", fc, {x, w});
  mxc_ndarray want = invoke1("Activation", {{"act_type", "sigmoid"}}, {y});
  KV fused = fc;
  fused.push_back({"act_type", "sigmoid"});
  mxc_ndarray got = invoke1("_FusedFullyConnected", fused, {x, w});
  expect_close(get(got), get(want), 1e-12, "fc sigmoid");
  for (auto a : {x, w, y, want, got}) mxc_ndarray_free(a);
}

TEST(InferPasses, FusedOperatorsAreHidden) {
  int n = 0;
  ASSERT_EQ(mxc_op_count(&n), MXC_OK);
  for (int i = 0; i < n; ++i) {
    mxc_op op = nullptr;
    const char *name = nullptr;
    ASSERT_EQ(mxc_op_at(i, &op), MXC_OK);
    ASSERT_EQ(mxc_op_name(op, &name), MXC_OK);
    EXPECT_NE(std::string(name).rfind("_Fused", 0), 0u) << name;
  }
}

// ---- channels-last values (core/exec/format.c) ----
//
// With the oneDNN backend, an inference executor keeps the values between
// oneDNN convolutions and poolings channels-last. Outputs must not change
// beyond the summation order of another convolution algorithm (1e-5
// against the same graph with plain values, 1e-4 against the reference
// kernels), and nothing a user sees (outputs, the monitor) is ever
// channels-last.

bool onednn_on() {
  int on = 0;
  EXPECT_EQ(mxc_feature_enabled("ONEDNN", &on), MXC_OK);
  const char *e = getenv("MXC_ONEDNN");
  return on && !(e && std::string(e) == "0");
}

int channels_last_values(mxc_executor ex) {
  std::string d = debug_str(ex);
  size_t p = d.find("channels-last values: ");
  return p == std::string::npos ? 0 : std::atoi(d.c_str() + p + 22);
}

// An executor bound with MXC_CHANNELS_LAST=0 in the environment.
mxc_executor bind_plain(Pair &p) {
  setenv("MXC_CHANNELS_LAST", "0", 1);
  mxc_executor e = p.bind_again(0);
  unsetenv("MXC_CHANNELS_LAST");
  return e;
}

void expect_outputs_close(mxc_executor a, mxc_executor b, double tol,
                          const std::string &what) {
  ASSERT_EQ(mxc_executor_forward(a, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(b, 0), MXC_OK) << err();
  int n = 0;
  ASSERT_EQ(mxc_executor_num_outputs(a, &n), MXC_OK);
  for (int i = 0; i < n; ++i) {
    expect_close(output(a, i), output(b, i), tol,
                 what + " output " + std::to_string(i));
  }
}

TEST(ValueFormats, ResNetKeepsValuesChannelsLastBetweenConvolutions) {
  Pair p;
  p.bind(kResNet, {2, 4, 6, 6}, 21);
  p.expect_equal(0, "resnet blocks, channels-last");
  mxc_executor plain = bind_plain(p);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(channels_last_values(plain), 0) << debug_str(plain);
  if (onednn_on()) {
    // Every value between the five (fused) convolutions: the four
    // results they pass on, conv2's read by conv3 and by the projection
    // shortcut; the data is the user's and the output a head.
    EXPECT_EQ(channels_last_values(p.opt), 4) << debug_str(p.opt);
  } else {
    EXPECT_EQ(channels_last_values(p.opt), 0) << debug_str(p.opt);
  }
  expect_outputs_close(p.opt, plain, 1e-5, "channels-last vs plain");
  mxc_executor_free(plain);
}

struct Seen {
  std::vector<std::string> names;
  std::vector<Vec> values;
};

void remember(void *data, const char *name, mxc_ndarray a) {
  Seen *s = static_cast<Seen *>(data);
  s->names.push_back(name);
  s->values.push_back(get(a));
}

TEST(ValueFormats, TheMonitorSeesPlainValues) {
  Pair p;
  p.bind(kResNet, {1, 4, 6, 6}, 22);
  mxc_executor plain = bind_plain(p);
  ASSERT_NE(plain, nullptr);
  Seen a, b;
  ASSERT_EQ(mxc_executor_set_monitor(p.opt, remember, &a), MXC_OK);
  ASSERT_EQ(mxc_executor_set_monitor(plain, remember, &b), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(p.opt, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(plain, 0), MXC_OK) << err();
  ASSERT_EQ(a.names, b.names);
  EXPECT_GE(a.names.size(), 5u);
  for (size_t i = 0; i < a.names.size(); ++i) {
    expect_close(a.values[i], b.values[i], 1e-5, a.names[i]);
  }
  mxc_executor_free(plain);
}

// conv2 (a dilation far beyond the data, valid for its 1x1 kernel, which
// oneDNN's descriptor refuses) sits between two convolutions, so it
// receives and must write channels-last values: its reference kernel runs
// on plain copies.
const char *kRagged = R"JSON({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "c1_weight", "inputs": []},
    {"op": "Convolution", "name": "conv1", "attrs": {"kernel": "(3, 3)",
     "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "null", "name": "c2_weight", "inputs": []},
    {"op": "null", "name": "c2_bias", "inputs": []},
    {"op": "Convolution", "name": "conv2", "attrs": {"kernel": "(1, 1)",
     "stride": "(3, 3)", "dilate": "(1099511627776, 1)", "num_filter": "5"},
     "inputs": [[2, 0, 0], [3, 0, 0], [4, 0, 0]]},
    {"op": "null", "name": "c3_weight", "inputs": []},
    {"op": "Convolution", "name": "conv3", "attrs": {"kernel": "(1, 1)",
     "num_filter": "3", "no_bias": "True"},
     "inputs": [[5, 0, 0], [6, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 3, 4, 6],
  "heads": [[7, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10900]}
})JSON";

TEST(ValueFormats, ACallOneDNNTurnsDownRunsTheReferenceOnPlainCopies) {
  Pair p;
  p.bind(kRagged, {2, 3, 8, 8}, 23);
  EXPECT_EQ(channels_last_values(p.opt), onednn_on() ? 2 : 0)
      << debug_str(p.opt);
  p.expect_equal(0, "ragged convolution between channels-last values");
}

// Whether this CPU computes bfloat16 natively, read from /proc/cpuinfo
// (not from mxc's own detection, which is what is tested).
bool cpu_has_bf16() {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool yes = false;
  while (!yes && fgets(line, sizeof line, f)) {
    std::string l = line;
    if (l.rfind("flags", 0) != 0) continue;
    yes = l.find(" avx512_bf16") != std::string::npos ||
          l.find(" amx_bf16") != std::string::npos;
  }
  fclose(f);
  return yes;
}

int bf16_values(mxc_executor ex) {
  std::string d = debug_str(ex);
  size_t p = d.find("channels-last values: ");
  size_t q = p == std::string::npos ? p : d.find('(', p);
  return q == std::string::npos ? 0 : std::atoi(d.c_str() + q + 1);
}

// bfloat16 values differ from float32 by their rounding (8 significant
// bits) accumulated over a few layers: outputs agree to 5e-2.
TEST(ValueFormats, Bf16KeepsValuesInBfloat16WhereTheCpuComputesIt) {
  Pair p;
  p.bind(kResNet, {2, 4, 6, 6}, 25, MXC_BIND_BF16);
  bool on = onednn_on() && cpu_has_bf16();
  EXPECT_EQ(bf16_values(p.opt), on ? 4 : 0) << debug_str(p.opt);
  ASSERT_EQ(mxc_executor_forward(p.ref, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(p.opt, 0), MXC_OK) << err();
  expect_close(output(p.opt, 0), output(p.ref, 0), on ? 5e-2 : 1e-4,
               "bf16 resnet blocks");
  // The monitor sees float32 values, close to a plain executor's.
  mxc_executor plain = bind_plain(p);
  ASSERT_NE(plain, nullptr);
  Seen a, b;
  ASSERT_EQ(mxc_executor_set_monitor(p.opt, remember, &a), MXC_OK);
  ASSERT_EQ(mxc_executor_set_monitor(plain, remember, &b), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(p.opt, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(plain, 0), MXC_OK) << err();
  ASSERT_EQ(a.names, b.names);
  for (size_t i = 0; i < a.names.size(); ++i) {
    expect_close(a.values[i], b.values[i], on ? 5e-2 : 1e-5, a.names[i]);
  }
  mxc_executor_free(plain);
}

TEST(ValueFormats, Bf16FallbackConvertsToFloat32) {
  Pair p;
  p.bind(kRagged, {2, 3, 8, 8}, 26, MXC_BIND_BF16);
  bool on = onednn_on() && cpu_has_bf16();
  EXPECT_EQ(bf16_values(p.opt), on ? 2 : 0) << debug_str(p.opt);
  ASSERT_EQ(mxc_executor_forward(p.ref, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_forward(p.opt, 0), MXC_OK) << err();
  expect_close(output(p.opt, 0), output(p.ref, 0), on ? 5e-2 : 1e-4,
               "bf16 ragged convolution");
}

// Training executors keep channels-last values too, through the backward
// convolutions, batch norms, poolings and the element-wise nodes between
// them (tied: all arguments one format). Outputs and every gradient must
// match the same graph with plain values (1e-4: other convolution and
// batch-norm algorithms).
mxc_executor bind_train(mxc_symbol sym, const Shape &data, bool plain) {
  if (plain) setenv("MXC_CHANNELS_LAST", "0", 1);
  const char *names[1] = {"data"};
  int nd = (int)data.size();
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, &nd,
                                     data.data(), nullptr, MXC_REQ_WRITE, 0,
                                     nullptr, nullptr, 0, &ex),
            MXC_OK)
      << err();
  unsetenv("MXC_CHANNELS_LAST");
  return ex;
}

void set_named(mxc_executor ex, const std::string &name, int is_aux,
               const Vec &v) {
  mxc_ndarray a = nullptr;
  ASSERT_EQ(is_aux ? mxc_executor_aux(ex, name.c_str(), &a)
                   : mxc_executor_arg(ex, name.c_str(), &a),
            MXC_OK)
      << name;
  set(a, v);
  mxc_ndarray_free(a);
}

TEST(ValueFormats, TrainingGradientsMatchPlainValues) {
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(kResNet, &sym), MXC_OK) << err();
  Shape data = {2, 4, 6, 6};
  mxc_executor cl = bind_train(sym, data, false);
  mxc_executor plain = bind_train(sym, data, true);
  ASSERT_NE(cl, nullptr);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(channels_last_values(plain), 0);
  if (onednn_on()) {
    EXPECT_GT(channels_last_values(cl), 8) << debug_str(cl);
  }
  std::mt19937 rng(27);
  std::vector<std::string> args = arguments(sym), aux = aux_states(sym);
  for (const auto &n : args) {
    Vec v = random_vec((int64_t)get_named(cl, n, 0).size(), rng);
    set_named(cl, n, 0, v);
    set_named(plain, n, 0, v);
  }
  for (const auto &n : aux) {
    mxc_ndarray a = nullptr;
    ASSERT_EQ(mxc_executor_aux(cl, n.c_str(), &a), MXC_OK);
    int64_t k = 0;
    ASSERT_EQ(mxc_ndarray_size(a, &k), MXC_OK);
    mxc_ndarray_free(a);
    Vec v = random_vec(k, rng, 0.5, 1.5);
    set_named(cl, n, 1, v);
    set_named(plain, n, 1, v);
  }
  for (int step = 0; step < 2; ++step) {
    for (mxc_executor e : {cl, plain}) {
      ASSERT_EQ(mxc_executor_forward(e, 1), MXC_OK) << err();
      ASSERT_EQ(mxc_executor_backward(e, 0, nullptr), MXC_OK) << err();
    }
    expect_close(output(cl, 0), output(plain, 0), 1e-4, "training output");
    for (const auto &n : args) {
      expect_close(get_named(cl, n, 1), get_named(plain, n, 1), 1e-4,
                   "gradient of " + n);
    }
  }
  mxc_executor_free(cl);
  mxc_executor_free(plain);
  mxc_symbol_free(sym);
}

TEST(ValueFormats, NoOneDNNBindFlagKeepsEveryValuePlain) {
  Pair p;
  p.bind(kResNet, {1, 4, 6, 6}, 24, MXC_BIND_NO_ONEDNN);
  EXPECT_EQ(channels_last_values(p.opt), 0) << debug_str(p.opt);
  p.expect_equal(0, "resnet blocks, reference kernels");
}

}  // namespace
