// Graphs written by older MXNet versions and the real models of the shared
// mxnet-models directory (written by Apache MXNet, not by mxc):
//  - the upgrades MXNet applies to old JSON (hidden attribute keys, the
//    inputs 0.8 files omit, __init__, argmax axis, legacy operator names),
//    checked on small graphs and through mxc_symbol_to_json round trips;
//  - every shared model loads with its weights, binds and runs, and its
//    outputs equal those of scripts/mxnet_ref.py, an independent float64
//    interpreter of MXNet JSON (numpy/torch) reading the same files.
// The shared models skip, saying why, when the directory is absent.
#include <gtest/gtest.h>

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <stdint.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/mxnet_models.h"

namespace {

std::string err() { return mxc_last_error(); }

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}


// The shared real MXNet files (tests/testutil/mxnet_models.h).
std::string models_dir() {
  return mxct::mxnet_models_dir("scripts/mxnet_ref.py");
}

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<float> floats(mxc_ndarray a) {
  int64_t n;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 4), MXC_OK)
      << err();
  return v;
}

std::vector<std::string> strings(mxc_str_list l) {
  int n = 0;
  mxc_str_list_size(l, &n);
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) {
    const char *s;
    mxc_str_list_get(l, i, &s);
    v.push_back(s);
  }
  mxc_str_list_free(l);
  return v;
}

// Attributes of every node of sym, by node name (from its internals).
std::map<std::string, std::map<std::string, std::string>> attr_dict(
    mxc_symbol sym) {
  std::map<std::string, std::map<std::string, std::string>> out;
  mxc_symbol in;
  EXPECT_EQ(mxc_symbol_internals(sym, &in), MXC_OK);
  int n = 0;
  mxc_symbol_num_outputs(in, &n);
  for (int i = 0; i < n; ++i) {
    mxc_symbol o;
    mxc_symbol_output(in, i, &o);
    char *name;
    mxc_symbol_name(o, &name);
    mxc_str_list keys;
    mxc_symbol_attr_keys(o, &keys);
    for (const auto &k : strings(keys)) {
      int found;
      char *v;
      mxc_symbol_get_attr(o, k.c_str(), &found, &v);
      if (found) out[name][k] = v;
      mxc_string_free(v);
    }
    if (!out.count(name)) out[name];
    mxc_string_free(name);
    mxc_symbol_free(o);
  }
  mxc_symbol_free(in);
  return out;
}

// JSON written again from a symbol, and loaded again, gives the same text.
std::string round_trip(mxc_symbol sym) {
  char *j1, *j2;
  EXPECT_EQ(mxc_symbol_to_json(sym, &j1), MXC_OK) << err();
  mxc_symbol again;
  EXPECT_EQ(mxc_symbol_from_json(j1, &again), MXC_OK) << err();
  EXPECT_EQ(mxc_symbol_to_json(again, &j2), MXC_OK);
  EXPECT_STREQ(j1, j2);
  std::string s = j1;
  mxc_string_free(j1);
  mxc_string_free(j2);
  mxc_symbol_free(again);
  return s;
}

// ---- legacy upgrades on small graphs ---------------------------------------

// A 0.8-style file (no mxnet_version): "param"/"attr", two-number inputs,
// old attribute keys, a BatchNorm listing 3 inputs, legacy operator names.
const char kOld[] = R"({"nodes": [
  {"op": "null", "param": {}, "name": "data", "inputs": [],
   "backward_source_id": -1, "attr": {"ctx_group": "g1", "lr_mult": "0.5"}},
  {"op": "null", "param": {}, "name": "fc_weight", "inputs": [],
   "backward_source_id": -1, "attr": {"weight_lr_mult": "2"}},
  {"op": "null", "param": {}, "name": "fc_bias", "inputs": [],
   "backward_source_id": -1},
  {"op": "FullyConnected", "param": {"num_hidden": "3"}, "name": "fc",
   "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
   "attr": {"weight_lr_mult": "1.5", "bias_wd_mult": "0", "wd_mult": "0.3",
            "ctx_group": "g2", "data_lr_mult": "7", "mirror_stage": "1",
            "other": "kept"}},
  {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [],
   "backward_source_id": -1},
  {"op": "null", "param": {}, "name": "bn_beta", "inputs": [],
   "backward_source_id": -1},
  {"op": "BatchNorm", "param": {"fix_gamma": "False"}, "name": "bn",
   "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1,
   "attr": {"ctx_group": "g3"}},
  {"op": "_MulScalar", "param": {"scalar": "2"}, "name": "twice",
   "inputs": [[6, 0]], "backward_source_id": -1},
  {"op": "_Plus", "param": {}, "name": "sum", "inputs": [[7, 0], [6, 0]],
   "backward_source_id": -1},
  {"op": "argmax", "param": {"axis": "-1"}, "name": "am",
   "inputs": [[8, 0]], "backward_source_id": -1}],
 "arg_nodes": [0, 1, 2, 4, 5], "heads": [[8, 0], [9, 0]]})";

TEST(LegacyJson, UpgradesA08File) {
  mxc_symbol sym;
  ASSERT_EQ(mxc_symbol_from_json(kOld, &sym), MXC_OK) << err();
  auto d = attr_dict(sym);
  using M = std::map<std::string, std::string>;
  // Old keys become dunder keys; "<input>_<key>" moves to the variable,
  // over the variable's own value (fc's data_lr_mult wins over data's
  // lr_mult, as in MXNet, which upgrades nodes in order).
  EXPECT_EQ(d["data"], (M{{"__ctx_group__", "g1"}, {"__lr_mult__", "7"}}));
  // The variable's own "weight_lr_mult" is no hidden key of a variable:
  // kept, as MXNet keeps it.
  EXPECT_EQ(d["fc_weight"],
            (M{{"__lr_mult__", "1.5"}, {"weight_lr_mult", "2"}}));
  EXPECT_EQ(d["fc_bias"], (M{{"__wd_mult__", "0"}}));
  EXPECT_EQ(d["fc"]["__wd_mult__"], "0.3");
  EXPECT_EQ(d["fc"]["__ctx_group__"], "g2");
  EXPECT_EQ(d["fc"]["__mirror_stage__"], "1");
  EXPECT_EQ(d["fc"]["other"], "kept");
  EXPECT_EQ(d["fc"].count("weight_lr_mult"), 0u);
  EXPECT_EQ(d["fc"].count("data_lr_mult"), 0u);
  // BatchNorm's moving statistics: new variables with the node's hidden
  // attributes and the initializers MXNet 0.9.4 gives them.
  EXPECT_EQ(d["bn_moving_mean"],
            (M{{"__ctx_group__", "g3"}, {"__init__", "[\"zero\", {}]"}}));
  EXPECT_EQ(d["bn_moving_var"],
            (M{{"__ctx_group__", "g3"}, {"__init__", "[\"one\", {}]"}}));
  mxc_str_list aux;
  ASSERT_EQ(mxc_symbol_list_auxiliary_states(sym, &aux), MXC_OK);
  EXPECT_EQ(strings(aux),
            (std::vector<std::string>{"bn_moving_mean", "bn_moving_var"}));
  // argmax axis=-1 meant all axes before 0.9.5: dropped.
  EXPECT_EQ(d["am"].count("axis"), 0u);
  // Written back upgraded, under current operator names.
  std::string js = round_trip(sym);
  EXPECT_EQ(js.find("_MulScalar"), std::string::npos);
  EXPECT_EQ(js.find("\"_Plus\""), std::string::npos);
  EXPECT_NE(js.find("\"_mul_scalar\""), std::string::npos);
  EXPECT_NE(js.find("\"op\": \"add\""), std::string::npos);
  EXPECT_EQ(js.find("\"lr_mult\""), std::string::npos);
  EXPECT_NE(js.find("\"mxnet_version\": [\"int\", 10900]"), std::string::npos);

  // It runs: bn(fc(x)) * 2 + bn(fc(x)), and argmax over everything.
  const char *dn[] = {"data"};
  int nd[] = {2};
  int64_t dd[] = {2, 4};
  mxc_executor ex;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, dn, nd, dd,
                                     nullptr, MXC_REQ_NULL, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  mxc_ndarray am;
  ASSERT_EQ(mxc_executor_output(ex, 1, &am), MXC_OK);
  int ndim;
  const int64_t *dims;
  mxc_ndarray_shape(am, &ndim, &dims);
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[i];
  EXPECT_EQ(n, 1) << "argmax without axis reduces everything";
  mxc_ndarray_free(am);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
}

TEST(LegacyJson, CurrentFilesAreNotUpgraded) {
  // Files of 1.9 (and mxc's own) keep keys as written: "lr_mult" stays.
  const char json[] = R"({"nodes": [
    {"op": "null", "name": "x", "attrs": {"lr_mult": "3"}, "inputs": []},
    {"op": "argmax", "name": "am", "attrs": {"axis": "-1"},
     "inputs": [[0, 0, 0]]}],
   "arg_nodes": [0], "heads": [[1, 0, 0]],
   "attrs": {"mxnet_version": ["int", 10900]}})";
  mxc_symbol sym;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << err();
  auto d = attr_dict(sym);
  EXPECT_EQ(d["x"]["lr_mult"], "3");
  EXPECT_EQ(d["x"].count("__lr_mult__"), 0u);
  EXPECT_EQ(d["am"]["axis"], "-1");
  round_trip(sym);
  mxc_symbol_free(sym);
  // A 1.2 file (version 10200) gets the key upgrade but keeps axis=-1.
  std::string v12 = json;
  v12.replace(v12.find("10900"), 5, "10200");
  ASSERT_EQ(mxc_symbol_from_json(v12.c_str(), &sym), MXC_OK) << err();
  d = attr_dict(sym);
  EXPECT_EQ(d["x"]["__lr_mult__"], "3");
  EXPECT_EQ(d["am"]["axis"], "-1");
  mxc_symbol_free(sym);
}

TEST(LegacyJson, LegacyOperatorNamesAreAliases) {
  // MXNet 1.9's legacy names of the binary operators, each found and
  // computing what its current name computes on the same inputs.
  struct Case {
    const char *legacy, *current;
    int n_in;
  } cases[] = {
      {"_Plus", "add", 2},          {"_Minus", "sub", 2},
      {"_Mul", "mul", 2},           {"_Div", "div", 2},
      {"_Mod", "mod", 2},           {"_Power", "power", 2},
      {"_Maximum", "maximum", 2},   {"_Minimum", "minimum", 2},
      {"_Hypot", "hypot", 2},       {"_Equal", "equal", 2},
      {"_Not_Equal", "not_equal", 2}, {"_Greater", "greater", 2},
      {"_Greater_Equal", "greater_equal", 2},
      {"_Lesser", "lesser", 2},     {"_Lesser_Equal", "lesser_equal", 2},
      {"_Logical_And", "logical_and", 2},
      {"_Logical_Or", "logical_or", 2},
      {"_Logical_Xor", "logical_xor", 2},
      {"_PlusScalar", "_plus_scalar", 1},
      {"_MinusScalar", "_minus_scalar", 1},
      {"_RMinusScalar", "_rminus_scalar", 1},
      {"_MulScalar", "_mul_scalar", 1},
      {"_DivScalar", "_div_scalar", 1},
      {"_RDivScalar", "_rdiv_scalar", 1},
      {"_ModScalar", "_mod_scalar", 1},
      {"_RModScalar", "_rmod_scalar", 1},
      {"_PowerScalar", "_power_scalar", 1},
      {"_RPowerScalar", "_rpower_scalar", 1},
      {"_MaximumScalar", "_maximum_scalar", 1},
      {"_MinimumScalar", "_minimum_scalar", 1},
      {"_HypotScalar", "_hypot_scalar", 1},
      {"_EqualScalar", "_equal_scalar", 1},
      {"_NotEqualScalar", "_not_equal_scalar", 1},
      {"_GreaterScalar", "_greater_scalar", 1},
      {"_GreaterEqualScalar", "_greater_equal_scalar", 1},
      {"_LesserScalar", "_lesser_scalar", 1},
      {"_LesserEqualScalar", "_lesser_equal_scalar", 1},
      {"_LogicalAndScalar", "_logical_and_scalar", 1},
      {"_LogicalOrScalar", "_logical_or_scalar", 1},
      {"_LogicalXorScalar", "_logical_xor_scalar", 1},
      {"crop", "slice", 0},
  };
  for (const auto &c : cases) {
    mxc_op a, b;
    ASSERT_EQ(mxc_op_find(c.legacy, &a), MXC_OK) << c.legacy << ": " << err();
    ASSERT_EQ(mxc_op_find(c.current, &b), MXC_OK) << c.current;
    const char *na, *nb;
    mxc_op_name(a, &na);
    mxc_op_name(b, &nb);
    EXPECT_STREQ(na, nb) << c.legacy;
  }
}

// An mx.rnn begin state: _zeros(shape=(0, 4)) reads 0 as "unknown" in a
// graph; the batch comes from the data it is added to. Alone, a 0 is an
// extent (an empty array), and a known extent must still agree.
TEST(LegacyJson, ZeroExtentOfInitOperatorsIsInferred) {
  auto graph = [](const char *shape) {
    return std::string(R"({"nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "i2h_weight", "inputs": []},
      {"op": "null", "name": "i2h_bias", "inputs": []},
      {"op": "FullyConnected", "name": "i2h", "attrs": {"num_hidden": "4"},
       "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
      {"op": "_zeros", "name": "begin", "attrs": {"shape": ")") +
           shape + R"("}, "inputs": []},
      {"op": "elemwise_add", "name": "h",
       "inputs": [[3, 0, 0], [4, 0, 0]]}],
     "arg_nodes": [0, 1, 2], "heads": [[5, 0, 0]],
     "attrs": {"mxnet_version": ["int", 10900]}})";
  };
  const char *dn[] = {"data"};
  int nd[] = {2};
  int64_t dd[] = {5, 3};
  for (const char *shape : {"(0, 4)", "(5, 4)", "(0, 0)"}) {
    SCOPED_TRACE(shape);
    mxc_symbol sym;
    ASSERT_EQ(mxc_symbol_from_json(graph(shape).c_str(), &sym), MXC_OK)
        << err();
    mxc_executor ex;
    ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, dn, nd, dd,
                                       nullptr, MXC_REQ_NULL, 0, nullptr,
                                       nullptr, 0, &ex),
              MXC_OK)
        << err();
    mxc_ndarray w, b, out;
    ASSERT_EQ(mxc_executor_arg(ex, "i2h_weight", &w), MXC_OK);
    ASSERT_EQ(mxc_executor_arg(ex, "i2h_bias", &b), MXC_OK);
    std::vector<float> wv(12, 0.5f), bv = {1, 2, 3, 4};
    mxc_ndarray_copy_from_host(w, wv.data(), 48);
    mxc_ndarray_copy_from_host(b, bv.data(), 16);
    ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_output(ex, 0, &out), MXC_OK);
    auto got = floats(out);
    ASSERT_EQ(got.size(), 20u);  // (5, 4): the batch of data
    // data is zero: h = bias + 0 for every row.
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], bv[i % 4]);
    for (auto a : {w, b, out}) mxc_ndarray_free(a);
    mxc_executor_free(ex);
    mxc_symbol_free(sym);
  }
  // A known extent that disagrees is still an error.
  mxc_symbol bad;
  ASSERT_EQ(mxc_symbol_from_json(graph("(2, 4)").c_str(), &bad), MXC_OK);
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(bad, MXC_DEVICE_CPU, 0, 1, dn, nd, dd,
                                     nullptr, MXC_REQ_NULL, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,4)"), std::string::npos) << err();
  mxc_symbol_free(bad);
  // Imperatively, and in a graph with nothing else to say, 0 is an extent.
  mxc_op zeros;
  ASSERT_EQ(mxc_op_find("_zeros", &zeros), MXC_OK);
  const char *k[] = {"shape"}, *v[] = {"(0,4)"};
  mxc_ndarray outs[1] = {nullptr};
  ASSERT_EQ(mxc_op_invoke(zeros, k, v, 1, nullptr, 0, outs, 1, nullptr),
            MXC_OK)
      << err();
  int ndim;
  const int64_t *dims;
  mxc_ndarray_shape(outs[0], &ndim, &dims);
  EXPECT_EQ(ndim, 2);
  EXPECT_EQ(dims[0], 0);
  EXPECT_EQ(dims[1], 4);
  mxc_ndarray_free(outs[0]);
}

// Unrolled sequence models concatenate and split hundreds of arrays: a
// graph file with SliceChannel(num_outputs=600) feeding Concat(num_args=600)
// in reverse order loads, binds and reverses the rows.
TEST(LegacyJson, HundredsOfConcatAndSplitArrays) {
  const int n = 600;
  std::string js = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "SliceChannel", "name": "parts", "attrs": {"num_outputs": ")" +
                   std::to_string(n) + R"(", "axis": "0"},
     "inputs": [[0, 0, 0]]},
    {"op": "Concat", "name": "joined", "attrs": {"num_args": ")" +
                   std::to_string(n) + R"(", "dim": "0"}, "inputs": [)";
  for (int i = 0; i < n; ++i) {
    js += (i ? ", [1, " : "[1, ") + std::to_string(n - 1 - i) + ", 0]";
  }
  js += R"(]}], "arg_nodes": [0], "heads": [[2, 0, 0]]})";
  mxc_symbol sym;
  ASSERT_EQ(mxc_symbol_from_json(js.c_str(), &sym), MXC_OK) << err();
  const char *dn[] = {"x"};
  int nd[] = {2};
  int64_t dd[] = {n, 2};
  mxc_executor ex;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, dn, nd, dd,
                                     nullptr, MXC_REQ_NULL, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_OK)
      << err();
  mxc_ndarray x, out;
  ASSERT_EQ(mxc_executor_arg(ex, "x", &x), MXC_OK);
  std::vector<float> xv(2 * n);
  for (int i = 0; i < 2 * n; ++i) xv[i] = (float)i;
  mxc_ndarray_copy_from_host(x, xv.data(), xv.size() * 4);
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_output(ex, 0, &out), MXC_OK);
  auto got = floats(out);
  ASSERT_EQ(got.size(), xv.size());
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(got[2 * r], xv[2 * (n - 1 - r)]) << r;
    EXPECT_EQ(got[2 * r + 1], xv[2 * (n - 1 - r) + 1]) << r;
  }
  mxc_ndarray_free(x);
  mxc_ndarray_free(out);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
}

// ---- the real models --------------------------------------------------------

// Fills every argument but data and labels, and every auxiliary state, of
// ex with fixed values, and saves them in MXNet's format for the
// reference. Weights are scaled by 1/sqrt(fan-in) so that activations stay
// of order 1 through deep graphs (otherwise the logits grow without bound
// and the softmax compares rounding noise); variances are positive.
void fill_params(mxc_symbol sym, mxc_executor ex, const std::string &path) {
  mxc_str_list al, xl;
  ASSERT_EQ(mxc_symbol_list_arguments(sym, &al), MXC_OK);
  ASSERT_EQ(mxc_symbol_list_auxiliary_states(sym, &xl), MXC_OK);
  std::vector<std::string> names;
  std::vector<mxc_ndarray> arrays;
  int k = 0;
  for (int group = 0; group < 2; ++group) {
    for (const auto &name : strings(group ? xl : al)) {
      if (name == "data" || name.find("label") != std::string::npos) continue;
      mxc_ndarray a;
      ASSERT_EQ(group ? mxc_executor_aux(ex, name.c_str(), &a)
                      : mxc_executor_arg(ex, name.c_str(), &a),
                MXC_OK)
          << name;
      auto v = floats(a);
      int ndim;
      const int64_t *dims;
      mxc_ndarray_shape(a, &ndim, &dims);
      double fan_in = 1;
      for (int d = 1; d < ndim; ++d) fan_in *= (double)dims[d];
      double scale = ndim > 1 ? std::sqrt(3.0 / fan_in) : 0.2;
      bool var = name.find("var") != std::string::npos;
      for (size_t i = 0; i < v.size(); ++i, ++k) {
        // A hash of k in [-1, 1): uncorrelated along a weight's rows (a
        // smooth sequence would add up coherently, layer after layer).
        uint32_t h = (uint32_t)k * 2654435761u;
        double s = (double)(h ^ (h >> 15)) / 2147483648.0 - 1.0;
        v[i] = var ? (float)(1.0 + 0.5 * s * s) : (float)(scale * s);
      }
      ASSERT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4),
                MXC_OK);
      names.push_back((group ? "aux:" : "arg:") + name);
      arrays.push_back(a);
    }
  }
  std::vector<const char *> cn;
  for (auto &n : names) cn.push_back(n.c_str());
  ASSERT_EQ(mxc_ndarray_save_format(path.c_str(), arrays.data(), cn.data(),
                                    (int)arrays.size(), MXC_FILE_FORMAT_MXNET),
            MXC_OK)
      << err();
  for (auto a : arrays) mxc_ndarray_free(a);
}

struct Model {
  const char *label;
  std::string symbol, params;  // params "" when the test makes its own
  std::vector<int64_t> shape;
  float lo, hi;                // the input range the model expects
};

// Binds m, loads (or makes) its weights, runs it on a fixed input and
// compares every output with scripts/mxnet_ref.py's float64 forward.
// Returns the outputs.
std::vector<std::vector<float>> run_and_compare(const Model &m) {
  std::vector<std::vector<float>> outs;
  mxc_symbol sym;
  EXPECT_EQ(mxc_symbol_load(m.symbol.c_str(), &sym), MXC_OK)
      << m.label << ": " << err();
  if (::testing::Test::HasFailure()) return outs;
  const char *dn[] = {"data"};
  int nd[] = {(int)m.shape.size()};
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, dn, nd,
                                     m.shape.data(), nullptr, MXC_REQ_NULL, 0,
                                     nullptr, nullptr, 0, &ex),
            MXC_OK)
      << m.label << ": " << err();
  if (!ex) return outs;
  std::string params = m.params;
  if (params.empty()) {
    params = tmp_path(std::string(m.label) + ".params");
    fill_params(sym, ex, params);
  } else {
    EXPECT_EQ(mxc_executor_load_params(ex, params.c_str(), 0), MXC_OK)
        << m.label << ": " << err();
  }
  mxc_ndarray data;
  EXPECT_EQ(mxc_executor_arg(ex, "data", &data), MXC_OK);
  int64_t n;
  mxc_ndarray_size(data, &n);
  std::vector<float> x((size_t)n);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = m.lo + (m.hi - m.lo) * (float)((i * 37 + 11) % 101) / 100.0f;
  }
  EXPECT_EQ(mxc_ndarray_copy_from_host(data, x.data(), x.size() * 4), MXC_OK);
  EXPECT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << m.label << ": " << err();
  // The reference reads the same input bytes.
  std::string in = tmp_path(std::string(m.label) + ".f32");
  std::string prefix = tmp_path(std::string(m.label) + ".ref");
  {
    std::ofstream f(in, std::ios::binary);
    f.write((const char *)x.data(), (std::streamsize)(x.size() * 4));
  }
  std::string shape;
  for (size_t i = 0; i < m.shape.size(); ++i) {
    shape += (i ? "," : "") + std::to_string(m.shape[i]);
  }
  std::string cmd = "/usr/bin/python3 scripts/mxnet_ref.py '" + m.symbol +
                    "' '" + params + "' '" + in + "' " + shape + " '" +
                    prefix + "'";
  EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
  int n_out = 0;
  mxc_executor_num_outputs(ex, &n_out);
  for (int i = 0; i < n_out; ++i) {
    mxc_ndarray o;
    EXPECT_EQ(mxc_executor_output(ex, i, &o), MXC_OK);
    auto got = floats(o);
    mxc_ndarray_free(o);
    std::string raw = slurp(prefix + "." + std::to_string(i) + ".f64");
    EXPECT_EQ(raw.size(), got.size() * 8) << m.label << " output " << i;
    if (raw.size() != got.size() * 8) continue;
    const double *want = (const double *)raw.data();
    double scale = 1e-6;
    for (size_t k = 0; k < got.size(); ++k) {
      scale = std::max(scale, std::fabs(want[k]));
    }
    double worst = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      worst = std::max(worst, std::fabs(got[k] - want[k]) / scale);
    }
    // float32 against float64 through up to ~50 layers.
    EXPECT_LT(worst, 1e-4) << m.label << " output " << i;
    outs.push_back(got);
  }
  mxc_ndarray_free(data);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
  return outs;
}

#define NEED_MODELS(dir)                                             \
  std::string dir = models_dir();                                    \
  if (dir.empty()) {                                                 \
    GTEST_SKIP() << "shared mxnet-models directory not found (set "  \
                    "MXC_MXNET_MODELS)";                             \
  }

TEST(RealModels, Save000800UpgradedAsMxnetTestLoad000800) {
  NEED_MODELS(dir);
  mxc_symbol sym;
  ASSERT_EQ(mxc_symbol_load((dir + "/mxnet_save_000800.json").c_str(), &sym),
            MXC_OK)
      << err();
  // The dunder attributes MXNet's test_load_000800 expects (those of the
  // same graph built in MXNet 1.x with AttrScope(ctx_group=...)).
  auto d = attr_dict(sym);
  using M = std::map<std::string, std::string>;
  std::map<std::string, M> want = {
      {"data", {{"__ctx_group__", "stage1"}, {"__lr_mult__", "0.2"}}},
      {"fc1_weight", {{"__ctx_group__", "stage1"}, {"__lr_mult__", "1.2"}}},
      {"fc1", {{"__ctx_group__", "stage1"}, {"__wd_mult__", "0.3"}}},
      {"fc2", {{"__ctx_group__", "stage2"}, {"__lr_mult__", "0.01"}}},
      {"fc3_weight", {{"__ctx_group__", "stage2"}}},
      {"batchnorm0_moving_mean",
       {{"__ctx_group__", "stage2"}, {"__init__", "[\"zero\", {}]"}}},
      {"batchnorm0_moving_var",
       {{"__ctx_group__", "stage2"}, {"__init__", "[\"one\", {}]"}}},
      {"softmax", {{"__ctx_group__", "stage2"}}},
  };
  for (const auto &node : want) {
    ASSERT_TRUE(d.count(node.first)) << node.first;
    for (const auto &kv : node.second) {
      EXPECT_EQ(d[node.first][kv.first], kv.second)
          << node.first << " " << kv.first;
    }
  }
  mxc_str_list args;
  ASSERT_EQ(mxc_symbol_list_arguments(sym, &args), MXC_OK);
  EXPECT_EQ(strings(args),
            (std::vector<std::string>{
                "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                "fc3_weight", "fc3_bias", "batchnorm0_gamma",
                "batchnorm0_beta", "softmax_label"}));
  round_trip(sym);
  mxc_symbol_free(sym);
  // Binds at data (1, 200) and computes what the reference computes.
  run_and_compare({"save_000800", dir + "/mxnet_save_000800.json", "",
                   {1, 200}, -1, 1});
}

TEST(RealModels, DnnlModel1) {
  NEED_MODELS(dir);
  // The batch MXNet's DNNL tests use: shapes infer through the whole graph
  // (binding it would take gigabytes).
  mxc_symbol sym;
  ASSERT_EQ(mxc_symbol_load((dir + "/mxnet_dnnl_model1.json").c_str(), &sym),
            MXC_OK)
      << err();
  const char *dn[] = {"data"};
  int nd[] = {4};
  int64_t dd[] = {32, 3, 300, 300};
  mxc_infer inf;
  ASSERT_EQ(mxc_symbol_infer_shape(sym, 1, dn, nd, dd, 0, &inf), MXC_OK)
      << err();
  int ndim = 0;
  int64_t dims[MXC_MAX_NDIM];
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_OUTPUTS, 0, &ndim, dims), MXC_OK);
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(dims[0], 32);
  EXPECT_EQ(dims[1], 1000);
  mxc_infer_free(inf);
  mxc_symbol_free(sym);
  // The VGG-style graph MXNet's DNNL tests bind at (32, 3, 300, 300);
  // one image keeps the float64 reference quick.
  run_and_compare(
      {"dnnl_model1", dir + "/mxnet_dnnl_model1.json", "", {1, 3, 300, 300},
       0, 1});
}

TEST(RealModels, CheckpointsMatchTheReference) {
  NEED_MODELS(dir);
  struct Ckpt {
    const char *prefix;
    int epoch;
    std::vector<int64_t> shape;
    float lo, hi;
  } ckpts[] = {
      {"mentalblood_mnist", 35, {2, 1, 28, 28}, 0, 1},
      {"mentalblood_fashion-mnist", 39, {2, 1, 28, 28}, 0, 1},
      {"pangyupo_mtcnn_det2", 1, {2, 3, 24, 24}, -1, 1},
      {"pangyupo_mtcnn_det3", 1, {2, 3, 48, 48}, -1, 1},
      {"pangyupo_mtcnn_det4", 1, {2, 15, 24, 24}, -1, 1},
      {"hanson_mobilefacenet", 0, {1, 3, 112, 112}, 0, 255},
  };
  for (const auto &c : ckpts) {
    std::string p = dir + "/" + c.prefix;
    char epoch[16];
    snprintf(epoch, sizeof epoch, "-%04d.params", c.epoch);
    run_and_compare({c.prefix, p + "-symbol.json", p + epoch, c.shape, c.lo,
                     c.hi});
  }
}

// MTCNN's P-Net: 0.8-era JSON, legacy v0 weights, and a channel softmax
// (SoftmaxActivation mode=channel) whose two class maps sum to 1 at every
// position.
TEST(RealModels, MtcnnPNetChannelSoftmax) {
  NEED_MODELS(dir);
  std::string p = dir + "/pangyupo_mtcnn_det1";
  auto outs = run_and_compare({"mtcnn_det1", p + "-symbol.json",
                               p + "-0001.params", {1, 3, 48, 48}, -1, 1});
  ASSERT_EQ(outs.size(), 2u);
  // Heads: bounding-box regression (1, 4, 19, 19), then the class
  // probabilities (1, 2, 19, 19).
  const auto &prob = outs[1];
  ASSERT_EQ(prob.size(), 2u * 19 * 19);
  size_t plane = prob.size() / 2;
  for (size_t i = 0; i < plane; ++i) {
    EXPECT_NEAR(prob[i] + prob[plane + i], 1.0, 1e-5) << i;
    EXPECT_GE(prob[i], 0.0f);
  }
}

}  // namespace
