// Symbols through the public API: automatic and implicit names (MXNet's
// conventions, written out here by hand), argument / output / auxiliary
// lists, named and positional inputs, groups, outputs, internals,
// composition (positional and by name, sharing what it does not replace),
// deep copies, attributes, every function's argument and handle errors,
// and allocation failures.
#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

#include "graph_test_util.h"

namespace {

using gt::err;
using gt::Sym;
using Names = std::vector<std::string>;

std::string name_of(mxc_symbol s) {
  char *n = nullptr;
  EXPECT_EQ(mxc_symbol_name(s, &n), MXC_OK) << err();
  std::string r = n ? n : "";
  mxc_string_free(n);
  return r;
}

std::string attr(mxc_symbol s, const char *key, int *found = nullptr) {
  int f = -1;
  char *v = nullptr;
  EXPECT_EQ(mxc_symbol_get_attr(s, key, &f, &v), MXC_OK) << err();
  if (found) *found = f;
  std::string r = v ? v : "";
  if (!f) {
    EXPECT_EQ(v, nullptr);
  }
  mxc_string_free(v);
  return r;
}

TEST(Symbol, VariableNameAndAttributes) {
  Sym v = gt::var("data", {{"__shape__", "(2,3)"}, {"__lr_mult__", "0.5"}});
  EXPECT_EQ(name_of(v.get()), "data");
  EXPECT_EQ(gt::arguments(v.get()), Names({"data"}));
  EXPECT_EQ(gt::outputs(v.get()), Names({"data"}));
  EXPECT_TRUE(gt::auxiliary(v.get()).empty());
  EXPECT_EQ(attr(v.get(), "__lr_mult__"), "0.5");
  mxc_str_list keys = nullptr;
  ASSERT_EQ(mxc_symbol_attr_keys(v.get(), &keys), MXC_OK);
  EXPECT_EQ(gt::strs(keys), Names({"__shape__", "__lr_mult__"}));
  int n = 0;
  ASSERT_EQ(mxc_symbol_num_outputs(v.get(), &n), MXC_OK);
  EXPECT_EQ(n, 1);
}

TEST(Symbol, ImplicitArgumentsInDepthFirstOrder) {
  Sym net = gt::mlp();
  EXPECT_EQ(gt::arguments(net.get()),
            Names({"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                   "softmax_label"}));
  EXPECT_EQ(gt::outputs(net.get()), Names({"softmax_output"}));
  EXPECT_TRUE(gt::auxiliary(net.get()).empty());

  Sym conv = gt::convnet();
  EXPECT_EQ(gt::arguments(conv.get()),
            Names({"data", "conv1_weight", "conv1_bias", "bn1_gamma",
                   "bn1_beta", "fc1_weight", "fc1_bias", "softmax_label"}));
  EXPECT_EQ(gt::auxiliary(conv.get()),
            Names({"bn1_moving_mean", "bn1_moving_var"}));

  Sym data = gt::var("x");
  Sym nb = gt::create("FullyConnected", {{"num_hidden", "4"}, {"no_bias", "True"}},
                      "fc", {data.get()});
  EXPECT_EQ(gt::arguments(nb.get()), Names({"x", "fc_weight"}));
}

TEST(Symbol, AutomaticNamesCountPerOperator) {
  Sym x = gt::var("x");
  Sym a = gt::create("FullyConnected", {{"num_hidden", "2"}}, nullptr, {x.get()});
  Sym b = gt::create("FullyConnected", {{"num_hidden", "2"}}, nullptr, {a.get()});
  std::string na = name_of(a.get()), nb = name_of(b.get());
  const std::string prefix = "fullyconnected";
  ASSERT_EQ(na.compare(0, prefix.size(), prefix), 0) << na;
  ASSERT_EQ(nb.compare(0, prefix.size(), prefix), 0) << nb;
  long ka = std::stol(na.substr(prefix.size()));
  long kb = std::stol(nb.substr(prefix.size()));
  EXPECT_EQ(kb, ka + 1);
  EXPECT_EQ(gt::arguments(a.get()), Names({"x", na + "_weight", na + "_bias"}));
  EXPECT_EQ(gt::outputs(b.get()), Names({nb + "_output"}));
  // Aliases count under the canonical operator name's lower case.
  Sym r = gt::create("Activation", {{"act_type", "tanh"}}, nullptr, {x.get()});
  EXPECT_EQ(name_of(r.get()).compare(0, 10, "activation"), 0);
}

TEST(Symbol, AutomaticNamesAreUniqueAcrossThreads) {
  const int kThreads = 4, kEach = 50;
  std::vector<std::vector<std::string>> names(kThreads);
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; ++t) {
    th.emplace_back([&names, t]() {
      mxc_symbol x = nullptr;
      ASSERT_EQ(mxc_symbol_variable("x", &x), MXC_OK);
      mxc_op op = nullptr;
      ASSERT_EQ(mxc_op_find("relu", &op), MXC_OK);
      for (int i = 0; i < kEach; ++i) {
        mxc_symbol s = nullptr;
        ASSERT_EQ(mxc_symbol_create(op, nullptr, nullptr, 0, nullptr, nullptr,
                                    &x, 1, &s),
                  MXC_OK);
        char *n = nullptr;
        ASSERT_EQ(mxc_symbol_name(s, &n), MXC_OK);
        names[t].push_back(n);
        mxc_string_free(n);
        mxc_symbol_free(s);
      }
      mxc_symbol_free(x);
    });
  }
  for (auto &t : th) t.join();
  std::set<std::string> all;
  for (auto &v : names) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), (size_t)(kThreads * kEach));
}

TEST(Symbol, InputsByName) {
  Sym w = gt::var("W"), d = gt::var("D");
  Sym fc = gt::create("FullyConnected", {{"num_hidden", "3"}}, "fc",
                      {w.get(), d.get()}, {"weight", "data"});
  EXPECT_EQ(gt::arguments(fc.get()), Names({"D", "W", "fc_bias"}));
  Sym only_w = gt::create("FullyConnected", {{"num_hidden", "3"}}, "fc2",
                          {w.get()}, {"weight"});
  EXPECT_EQ(gt::arguments(only_w.get()), Names({"fc2_data", "W", "fc2_bias"}));
}

TEST(Symbol, VariadicCountComesFromInputs) {
  Sym a = gt::var("a"), b = gt::var("b"), c = gt::var("c");
  Sym sum = gt::create("add_n", {}, "sum", {a.get(), b.get(), c.get()});
  EXPECT_EQ(gt::arguments(sum.get()), Names({"a", "b", "c"}));
  int found = 0;
  char *v = nullptr;
  ASSERT_EQ(mxc_symbol_get_attr(sum.get(), "num_args", &found, &v), MXC_OK);
  ASSERT_EQ(found, 1);
  EXPECT_STREQ(v, "3");
  mxc_string_free(v);
  // An explicit count still wins, and a mismatch is reported.
  Sym bad;
  EXPECT_EQ(gt::try_create("add_n", {{"num_args", "2"}}, "bad",
                           {a.get(), b.get(), c.get()}, {}, &bad),
            MXC_ERR_INVALID_ARGUMENT);
}

TEST(Symbol, CreateErrors) {
  Sym x = gt::var("x"), y = gt::var("y"), z = gt::var("z"), w = gt::var("w");
  Sym s;
  // Too many inputs (FullyConnected without bias takes two).
  EXPECT_EQ(gt::try_create("FullyConnected",
                           {{"num_hidden", "2"}, {"no_bias", "true"}}, "f",
                           {x.get(), y.get(), z.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("FullyConnected"), std::string::npos) << err();
  EXPECT_FALSE(s);
  // Unknown and repeated input names.
  EXPECT_EQ(gt::try_create("FullyConnected", {{"num_hidden", "2"}}, "f",
                           {x.get()}, {"wieght"}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("wieght"), std::string::npos) << err();
  EXPECT_EQ(gt::try_create("FullyConnected", {{"num_hidden", "2"}}, "f",
                           {x.get(), y.get()}, {"data", "data"}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("twice"), std::string::npos) << err();
  // 'bias' does not exist with no_bias.
  EXPECT_EQ(gt::try_create("FullyConnected",
                           {{"num_hidden", "2"}, {"no_bias", "true"}}, "f",
                           {x.get()}, {"bias"}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  // Parameters: unknown key, bad value, missing required.
  EXPECT_EQ(gt::try_create("FullyConnected", {{"num_hiden", "2"}}, "f",
                           {x.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_hiden"), std::string::npos) << err();
  EXPECT_EQ(gt::try_create("FullyConnected", {{"num_hidden", "two"}}, "f",
                           {x.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gt::try_create("FullyConnected", {}, "f", {x.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  // A multi-output input.
  Sym g;
  mxc_symbol two[] = {x.get(), y.get()};
  ASSERT_EQ(mxc_symbol_group(two, 2, g.out()), MXC_OK);
  EXPECT_EQ(gt::try_create("relu", {}, "r", {g.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("2 outputs"), std::string::npos) << err();
  // Empty name, NULL op, an op pointer that is no operator handle.
  EXPECT_EQ(gt::try_create("relu", {}, "", {x.get()}, {}, &s),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_symbol in[] = {x.get()};
  mxc_symbol out = nullptr;
  EXPECT_EQ(mxc_symbol_create(nullptr, nullptr, nullptr, 0, "r", nullptr, in,
                              1, &out),
            MXC_ERR_INVALID_ARGUMENT);
  static const int not_an_op = 0;
  EXPECT_EQ(mxc_symbol_create((mxc_op)&not_an_op, nullptr, nullptr, 0, "r",
                              nullptr, in, 1, &out),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_symbol_create(gt::op("relu"), nullptr, nullptr, 0, "r",
                              nullptr, in, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_create(gt::op("relu"), nullptr, nullptr, 0, "r",
                              nullptr, nullptr, 1, &out),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_create(gt::op("relu"), nullptr, nullptr, 1, "r",
                              nullptr, in, 1, &out),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  // A freed input handle.
  mxc_symbol dead = nullptr;
  ASSERT_EQ(mxc_symbol_variable("dead", &dead), MXC_OK);
  mxc_symbol_free(dead);
  EXPECT_EQ(mxc_symbol_create(gt::op("relu"), nullptr, nullptr, 0, "r",
                              nullptr, &dead, 1, &out),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_symbol_variable("", &out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_variable(nullptr, &out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_variable("v", nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_variable_ex("v", nullptr, nullptr, 1, &out),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_variable_ex("v", nullptr, nullptr, -1, &out),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
}

TEST(Symbol, MultiOutputNames) {
  Sym x = gt::var("x");
  Sym sp = gt::create("split", {{"num_outputs", "3"}}, "sp", {x.get()});
  EXPECT_EQ(gt::outputs(sp.get()),
            Names({"sp_output0", "sp_output1", "sp_output2"}));
  Sym one;
  ASSERT_EQ(mxc_symbol_output(sp.get(), 1, one.out()), MXC_OK);
  EXPECT_EQ(gt::outputs(one.get()), Names({"sp_output1"}));
  EXPECT_EQ(name_of(one.get()), "sp");
  Sym bad;
  EXPECT_EQ(mxc_symbol_output(sp.get(), 3, bad.out()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_output(sp.get(), -1, bad.out()),
            MXC_ERR_INVALID_ARGUMENT);
  char *n = nullptr;
  EXPECT_EQ(mxc_symbol_name(sp.get(), &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(n, nullptr);
  // Hidden outputs are not symbol outputs: BatchNorm has one visible.
  Sym bn = gt::create("BatchNorm", {}, "bn", {x.get()});
  EXPECT_EQ(gt::outputs(bn.get()), Names({"bn_output"}));
}

TEST(Symbol, GroupOutputAndInternals) {
  Sym x = gt::var("x");
  Sym a = gt::create("relu", {}, "a", {x.get()});
  Sym b = gt::create("FullyConnected", {{"num_hidden", "2"}}, "b", {a.get()});
  mxc_symbol parts[] = {b.get(), a.get()};
  Sym g;
  ASSERT_EQ(mxc_symbol_group(parts, 2, g.out()), MXC_OK) << err();
  EXPECT_EQ(gt::outputs(g.get()), Names({"b_output", "a_output"}));
  EXPECT_EQ(gt::arguments(g.get()), Names({"x", "b_weight", "b_bias"}));
  int n = 0;
  ASSERT_EQ(mxc_symbol_num_outputs(g.get(), &n), MXC_OK);
  EXPECT_EQ(n, 2);

  Sym net = gt::mlp();
  Sym in;
  ASSERT_EQ(mxc_symbol_internals(net.get(), in.out()), MXC_OK) << err();
  EXPECT_EQ(gt::outputs(in.get()),
            Names({"data", "fc1_weight", "fc1_bias", "fc1_output",
                   "relu1_output", "fc2_weight", "fc2_bias", "fc2_output",
                   "softmax_label", "softmax_output"}));
  Sym fc1;
  ASSERT_EQ(mxc_symbol_output_by_name(in.get(), "fc1_output", fc1.out()),
            MXC_OK)
      << err();
  EXPECT_EQ(gt::arguments(fc1.get()), Names({"data", "fc1_weight", "fc1_bias"}));
  EXPECT_EQ(name_of(fc1.get()), "fc1");
  Sym none;
  EXPECT_EQ(mxc_symbol_output_by_name(in.get(), "fc3_output", none.out()),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("fc3_output"), std::string::npos);
  EXPECT_EQ(mxc_symbol_output_by_name(in.get(), nullptr, none.out()),
            MXC_ERR_INVALID_ARGUMENT);

  // Hidden outputs are not internals either.
  Sym conv = gt::convnet();
  Sym ci;
  ASSERT_EQ(mxc_symbol_internals(conv.get(), ci.out()), MXC_OK);
  Names co = gt::outputs(ci.get());
  EXPECT_NE(std::find(co.begin(), co.end(), "bn1_output"), co.end());
  EXPECT_EQ(std::find(co.begin(), co.end(), "bn1_mean"), co.end());
  EXPECT_EQ(std::find(co.begin(), co.end(), "bn1_var"), co.end());

  Sym e;
  EXPECT_EQ(mxc_symbol_group(parts, 0, e.out()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_group(nullptr, 1, e.out()), MXC_ERR_INVALID_ARGUMENT);
  mxc_symbol with_null[] = {a.get(), nullptr};
  EXPECT_EQ(mxc_symbol_group(with_null, 2, e.out()), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Symbol, ComposePositionalAndByName) {
  // f(x) = FC(relu(x)); compose x := tanh(z).
  Sym x = gt::var("x");
  Sym r = gt::create("relu", {}, "r", {x.get()});
  Sym f = gt::create("FullyConnected", {{"num_hidden", "2"}}, "f", {r.get()});
  Sym z = gt::var("z");
  Sym t = gt::create("tanh", {}, "t", {z.get()});
  Sym c;
  mxc_symbol args[] = {t.get()};
  ASSERT_EQ(mxc_symbol_compose(f.get(), nullptr, args, 1, c.out()), MXC_OK)
      << err();
  EXPECT_EQ(gt::arguments(c.get()), Names({"z", "f_weight", "f_bias"}));
  EXPECT_EQ(gt::outputs(c.get()), Names({"f_output"}));
  // The original is unchanged.
  EXPECT_EQ(gt::arguments(f.get()), Names({"x", "f_weight", "f_bias"}));

  // By name: replace the weight with a shared variable.
  Sym w = gt::var("shared_w");
  const char *names[] = {"f_weight"};
  mxc_symbol wa[] = {w.get()};
  Sym c2;
  ASSERT_EQ(mxc_symbol_compose(f.get(), names, wa, 1, c2.out()), MXC_OK)
      << err();
  EXPECT_EQ(gt::arguments(c2.get()), Names({"x", "shared_w", "f_bias"}));

  // Errors.
  Sym bad;
  const char *missing[] = {"nope"};
  EXPECT_EQ(mxc_symbol_compose(f.get(), missing, wa, 1, bad.out()),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("nope"), std::string::npos);
  mxc_symbol four[] = {w.get(), w.get(), w.get(), w.get()};
  EXPECT_EQ(mxc_symbol_compose(f.get(), nullptr, four, 4, bad.out()),
            MXC_ERR_INVALID_ARGUMENT);
  const char *twice[] = {"x", "x"};
  EXPECT_EQ(mxc_symbol_compose(f.get(), twice, four, 2, bad.out()),
            MXC_ERR_INVALID_ARGUMENT);
  Sym sp = gt::create("split", {{"num_outputs", "2"}}, "sp", {z.get()});
  mxc_symbol multi[] = {sp.get()};
  EXPECT_EQ(mxc_symbol_compose(f.get(), nullptr, multi, 1, bad.out()),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_compose(f.get(), nullptr, nullptr, 1, bad.out()),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_compose(f.get(), nullptr, wa, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(bad);
}

TEST(Symbol, ComposeSharesUntouchedNodesCopyDoesNot) {
  // g = group(relu(a), relu(b)); composing b := c copies only the second
  // branch, so an attribute set on the first branch through g is seen
  // through the composed symbol, and not through a deep copy.
  Sym a = gt::var("a"), b = gt::var("b"), c = gt::var("c");
  Sym ra = gt::create("relu", {}, "ra", {a.get()});
  Sym rb = gt::create("relu", {}, "rb", {b.get()});
  mxc_symbol parts[] = {ra.get(), rb.get()};
  Sym g;
  ASSERT_EQ(mxc_symbol_group(parts, 2, g.out()), MXC_OK);
  const char *names[] = {"b"};
  mxc_symbol args[] = {c.get()};
  Sym composed, copy;
  ASSERT_EQ(mxc_symbol_compose(g.get(), names, args, 1, composed.out()),
            MXC_OK);
  ASSERT_EQ(mxc_symbol_copy(g.get(), copy.out()), MXC_OK);
  EXPECT_EQ(gt::arguments(composed.get()), Names({"a", "c"}));
  EXPECT_EQ(gt::arguments(copy.get()), Names({"a", "b"}));
  EXPECT_EQ(gt::outputs(copy.get()), gt::outputs(g.get()));

  ASSERT_EQ(mxc_symbol_set_attr(ra.get(), "mark", "1"), MXC_OK);
  ASSERT_EQ(mxc_symbol_set_attr(rb.get(), "mark", "2"), MXC_OK);
  Sym c0, c1, k0;
  ASSERT_EQ(mxc_symbol_output(composed.get(), 0, c0.out()), MXC_OK);
  ASSERT_EQ(mxc_symbol_output(composed.get(), 1, c1.out()), MXC_OK);
  ASSERT_EQ(mxc_symbol_output(copy.get(), 0, k0.out()), MXC_OK);
  int found = -1;
  EXPECT_EQ(attr(c0.get(), "mark", &found), "1");  // shared node
  EXPECT_EQ(found, 1);
  attr(c1.get(), "mark", &found);  // copied before the mark
  EXPECT_EQ(found, 0);
  attr(k0.get(), "mark", &found);  // deep copy
  EXPECT_EQ(found, 0);
}

TEST(Symbol, CopyKeepsAttributes) {
  Sym x = gt::var("x", {{"__init__", "zeros"}});
  Sym f = gt::create("FullyConnected",
                     {{"num_hidden", "2"}, {"__lr_mult__", "2.0"}}, "f",
                     {x.get()});
  Sym c;
  ASSERT_EQ(mxc_symbol_copy(f.get(), c.out()), MXC_OK);
  EXPECT_EQ(attr(c.get(), "__lr_mult__"), "2.0");
  EXPECT_EQ(attr(c.get(), "num_hidden"), "2");
  Sym in;
  ASSERT_EQ(mxc_symbol_internals(c.get(), in.out()), MXC_OK);
  Sym xv;
  ASSERT_EQ(mxc_symbol_output_by_name(in.get(), "x", xv.out()), MXC_OK);
  EXPECT_EQ(attr(xv.get(), "__init__"), "zeros");
  char *j1 = nullptr, *j2 = nullptr;
  ASSERT_EQ(mxc_symbol_to_json(f.get(), &j1), MXC_OK) << err();
  ASSERT_EQ(mxc_symbol_to_json(c.get(), &j2), MXC_OK) << err();
  EXPECT_STREQ(j1, j2);
  mxc_string_free(j1);
  mxc_string_free(j2);
}

TEST(Symbol, Attributes) {
  Sym x = gt::var("x");
  Sym f = gt::create("FullyConnected", {{"num_hidden", "7"}}, "f", {x.get()});
  EXPECT_EQ(attr(f.get(), "num_hidden"), "7");
  int found = -1;
  attr(f.get(), "ctx_group", &found);
  EXPECT_EQ(found, 0);
  ASSERT_EQ(mxc_symbol_set_attr(f.get(), "ctx_group", "dev1"), MXC_OK);
  ASSERT_EQ(mxc_symbol_set_attr(f.get(), "ctx_group", "dev2"), MXC_OK);
  EXPECT_EQ(attr(f.get(), "ctx_group"), "dev2");
  mxc_str_list keys = nullptr;
  ASSERT_EQ(mxc_symbol_attr_keys(f.get(), &keys), MXC_OK);
  EXPECT_EQ(gt::strs(keys), Names({"num_hidden", "ctx_group"}));
  // Parameters are fixed, also ones not given explicitly.
  EXPECT_EQ(mxc_symbol_set_attr(f.get(), "num_hidden", "8"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_hidden"), std::string::npos);
  EXPECT_EQ(mxc_symbol_set_attr(f.get(), "no_bias", "true"),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(attr(f.get(), "num_hidden"), "7");
  EXPECT_EQ(mxc_symbol_set_attr(f.get(), nullptr, "1"), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_set_attr(f.get(), "k", nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_set_attr(f.get(), "", "1"), MXC_ERR_INVALID_ARGUMENT);
  // Groups have no single node.
  mxc_symbol two[] = {x.get(), f.get()};
  Sym g;
  ASSERT_EQ(mxc_symbol_group(two, 2, g.out()), MXC_OK);
  EXPECT_EQ(mxc_symbol_set_attr(g.get(), "k", "v"), MXC_ERR_INVALID_ARGUMENT);
  char *v = nullptr;
  EXPECT_EQ(mxc_symbol_get_attr(g.get(), "k", &found, &v),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_attr_keys(g.get(), &keys), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_get_attr(f.get(), nullptr, &found, &v),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_get_attr(f.get(), "k", nullptr, &v),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_get_attr(f.get(), "k", &found, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v, nullptr);
}

// Every symbol function given a NULL, freed, or wrong-kind handle.
TEST(Symbol, BadHandles) {
  mxc_symbol dead = nullptr;
  ASSERT_EQ(mxc_symbol_variable("d", &dead), MXC_OK);
  mxc_symbol_free(dead);
  mxc_str_list list = nullptr;
  Sym v = gt::var("v");
  ASSERT_EQ(mxc_symbol_list_arguments(v.get(), &list), MXC_OK);
  mxc_symbol wrong = (mxc_symbol)list;  // a handle of another kind
  for (mxc_symbol h : {(mxc_symbol) nullptr, dead, wrong}) {
    int want = h ? MXC_ERR_INVALID_HANDLE : MXC_ERR_INVALID_ARGUMENT;
    mxc_symbol s = nullptr;
    mxc_str_list l = nullptr;
    char *str = nullptr;
    int n = -7, found = -7;
    EXPECT_EQ(mxc_symbol_compose(h, nullptr, nullptr, 0, &s), want);
    EXPECT_EQ(mxc_symbol_copy(h, &s), want);
    EXPECT_EQ(mxc_symbol_group(&h, 1, &s), want);
    EXPECT_EQ(mxc_symbol_num_outputs(h, &n), want);
    EXPECT_EQ(mxc_symbol_output(h, 0, &s), want);
    EXPECT_EQ(mxc_symbol_internals(h, &s), want);
    EXPECT_EQ(mxc_symbol_output_by_name(h, "v", &s), want);
    EXPECT_EQ(mxc_symbol_name(h, &str), want);
    EXPECT_EQ(mxc_symbol_list_arguments(h, &l), want);
    EXPECT_EQ(mxc_symbol_list_outputs(h, &l), want);
    EXPECT_EQ(mxc_symbol_list_auxiliary_states(h, &l), want);
    EXPECT_EQ(mxc_symbol_set_attr(h, "k", "v"), want);
    EXPECT_EQ(mxc_symbol_get_attr(h, "k", &found, &str), want);
    EXPECT_EQ(mxc_symbol_attr_keys(h, &l), want);
    EXPECT_EQ(mxc_symbol_to_json(h, &str), want);
    EXPECT_EQ(mxc_symbol_save(h, "/tmp/never_written.json"), want);
    EXPECT_EQ(mxc_symbol_to_dot(h, 0, nullptr, nullptr, nullptr, &str), want);
    EXPECT_EQ(s, nullptr);
    EXPECT_EQ(l, nullptr);
    EXPECT_EQ(str, nullptr);
    EXPECT_EQ(n, -7);
    EXPECT_EQ(found, -7);
    mxc_symbol_free(h);  // reported (or ignored for NULL), never freed
  }
  // Out-parameters.
  EXPECT_EQ(mxc_symbol_num_outputs(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_copy(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_internals(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_name(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_list_outputs(v.get(), nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  // The list is still alive after being misused as a symbol.
  int n = 0;
  EXPECT_EQ(mxc_str_list_size(list, &n), MXC_OK);
  EXPECT_EQ(n, 1);
  mxc_str_list_free(list);
}

TEST(StrList, Errors) {
  Sym v = gt::var("v");
  mxc_str_list l = nullptr;
  ASSERT_EQ(mxc_symbol_list_arguments(v.get(), &l), MXC_OK);
  const char *s = nullptr;
  int n = 0;
  EXPECT_EQ(mxc_str_list_get(l, 1, &s), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_str_list_get(l, -1, &s), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_str_list_get(l, 0, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_str_list_size(l, nullptr), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_str_list_get(l, 0, &s), MXC_OK);
  EXPECT_STREQ(s, "v");
  mxc_str_list_free(l);
  EXPECT_EQ(mxc_str_list_size(l, &n), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_str_list_get(l, 0, &s), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_str_list_size(nullptr, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_str_list_size((mxc_str_list)v.get(), &n),
            MXC_ERR_INVALID_HANDLE);
  mxc_str_list_free(nullptr);
  mxc_str_list_free(l);
  mxc_string_free(nullptr);
}

TEST(SymbolFaults, AllocationFailureWalk) {
  gt::alloc_failure_walk([]() {
    mxc_symbol x = nullptr, fc = nullptr, act = nullptr, y = nullptr;
    mxc_symbol c = nullptr, cp = nullptr, in = nullptr, o = nullptr;
    mxc_str_list l = nullptr;
    char *str = nullptr;
    const char *k[] = {"num_hidden", "__lr_mult__"}, *v[] = {"4", "2"};
    const char *ak[] = {"__shape__"}, *av[] = {"(2,3)"};
    const char *rk[] = {"act_type"}, *rv[] = {"relu"};
    int rc = mxc_symbol_variable_ex("x", ak, av, 1, &x);
    if (rc == MXC_OK) {
      rc = mxc_symbol_create(gt::op("FullyConnected"), k, v, 2, nullptr,
                             nullptr, &x, 1, &fc);
    }
    if (rc == MXC_OK) {
      rc = mxc_symbol_create(gt::op("Activation"), rk, rv, 1, "act", nullptr,
                             &fc, 1, &act);
    }
    if (rc == MXC_OK) rc = mxc_symbol_variable("y", &y);
    if (rc == MXC_OK) rc = mxc_symbol_compose(act, nullptr, &y, 1, &c);
    if (rc == MXC_OK) rc = mxc_symbol_copy(c, &cp);
    if (rc == MXC_OK) rc = mxc_symbol_internals(cp, &in);
    if (rc == MXC_OK) rc = mxc_symbol_output_by_name(in, "act_output", &o);
    if (rc == MXC_OK) rc = mxc_symbol_list_arguments(o, &l);
    mxc_str_list_free(l);
    l = nullptr;
    if (rc == MXC_OK) rc = mxc_symbol_list_outputs(in, &l);
    mxc_str_list_free(l);
    l = nullptr;
    if (rc == MXC_OK) rc = mxc_symbol_attr_keys(fc, &l);
    mxc_str_list_free(l);
    if (rc == MXC_OK) rc = mxc_symbol_set_attr(cp, "group", "g1");
    if (rc == MXC_OK) rc = mxc_symbol_name(cp, &str);
    mxc_string_free(str);
    for (mxc_symbol s : {x, fc, act, y, c, cp, in, o}) mxc_symbol_free(s);
    return rc;
  });
}

}  // namespace
