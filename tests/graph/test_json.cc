// MXNet JSON and Graphviz DOT: the exact layout we write (hand-written
// expectation), round trips, hand-written files in Apache MXNet's 1.x and
// 0.x layouts (argument lists, inference and node_row_ptr checked against
// values worked out by hand), malformed text with byte offsets, structural
// errors, unknown operators, files (atomic save under injected I/O
// failures), DOT contents, and allocation failures.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "graph_test_util.h"

extern "C" {
#include "core/base/file.h"
}

namespace {

using gt::err;
using gt::Sym;
using Names = std::vector<std::string>;

std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string tmp_path(const char *name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

std::string to_json(mxc_symbol s) {
  char *j = nullptr;
  EXPECT_EQ(mxc_symbol_to_json(s, &j), MXC_OK) << err();
  std::string r = j ? j : "";
  mxc_string_free(j);
  return r;
}

Sym from_json(const std::string &text) {
  Sym s;
  EXPECT_EQ(mxc_symbol_from_json(text.c_str(), s.out()), MXC_OK) << err();
  return s;
}

int load_status(const std::string &text) {
  Sym s;
  int rc = mxc_symbol_from_json(text.c_str(), s.out());
  if (rc != MXC_OK) {
    EXPECT_FALSE(s);
  }
  return rc;
}

// The integers of the JSON array following `"key": ` in text.
std::vector<long> int_array(const std::string &text, const char *key) {
  std::vector<long> r;
  size_t p = text.find(std::string("\"") + key + "\"");
  if (p == std::string::npos) return r;
  p = text.find('[', p);
  size_t end = text.find(']', p);
  std::string body = text.substr(p + 1, end - p - 1);
  for (char &c : body) {
    if (c == ',' || c == '\n') c = ' ';
  }
  std::istringstream in(body);
  long v;
  while (in >> v) r.push_back(v);
  return r;
}

std::string attr_of(mxc_symbol s, const char *output, const char *key) {
  Sym in, one;
  EXPECT_EQ(mxc_symbol_internals(s, in.out()), MXC_OK) << err();
  EXPECT_EQ(mxc_symbol_output_by_name(in.get(), output, one.out()), MXC_OK)
      << err();
  int found = 0;
  char *v = nullptr;
  EXPECT_EQ(mxc_symbol_get_attr(one.get(), key, &found, &v), MXC_OK);
  std::string r = found ? v : "<absent>";
  mxc_string_free(v);
  return r;
}

TEST(Json, ExactLayout) {
  Sym x = gt::var("x");
  Sym a = gt::create("Activation", {{"act_type", "relu"}}, "act", {x.get()});
  const char *expected =
      "{\n"
      "  \"nodes\": [\n"
      "    {\n"
      "      \"op\": \"null\",\n"
      "      \"name\": \"x\",\n"
      "      \"inputs\": []\n"
      "    },\n"
      "    {\n"
      "      \"op\": \"Activation\",\n"
      "      \"name\": \"act\",\n"
      "      \"attrs\": {\n"
      "        \"act_type\": \"relu\"\n"
      "      },\n"
      "      \"inputs\": [[0, 0, 0]]\n"
      "    }\n"
      "  ],\n"
      "  \"arg_nodes\": [0],\n"
      "  \"node_row_ptr\": [0, 1, 2],\n"
      "  \"heads\": [[1, 0, 0]],\n"
      "  \"attrs\": {\"mxnet_version\": [\"int\", 10900]}\n"
      "}\n";
  EXPECT_EQ(to_json(a.get()), expected);
}

TEST(Json, RoundTrip) {
  Sym mlp = gt::mlp(), conv = gt::convnet();
  Sym x = gt::var("we\"ird\\name\n", {{"k\t", "caf\xc3\xa9 \xe2\x9c\x93 \x01"}});
  Sym r = gt::create("relu", {{"__lr_mult__", "0.1"}}, "r", {x.get()});
  Sym sp = gt::create("split", {{"num_outputs", "2"}}, "sp", {r.get()});
  Sym o1;
  ASSERT_EQ(mxc_symbol_output(sp.get(), 1, o1.out()), MXC_OK);
  mxc_symbol parts[] = {conv.get(), o1.get(), mlp.get()};
  Sym g;
  ASSERT_EQ(mxc_symbol_group(parts, 3, g.out()), MXC_OK);
  for (mxc_symbol s : {mlp.get(), conv.get(), g.get()}) {
    std::string j = to_json(s);
    Sym back = from_json(j);
    EXPECT_EQ(to_json(back.get()), j);
    EXPECT_EQ(gt::arguments(back.get()), gt::arguments(s));
    EXPECT_EQ(gt::outputs(back.get()), gt::outputs(s));
    EXPECT_EQ(gt::auxiliary(back.get()), gt::auxiliary(s));
  }
  Sym back = from_json(to_json(g.get()));
  EXPECT_EQ(attr_of(back.get(), "we\"ird\\name\n", "k\t"),
            "caf\xc3\xa9 \xe2\x9c\x93 \x01");
  EXPECT_EQ(attr_of(back.get(), "r_output", "__lr_mult__"), "0.1");
}

TEST(Json, HiddenOutputsCountInRowPointers) {
  Sym conv = gt::convnet();
  std::string j = to_json(conv.get());
  // data conv1_weight conv1_bias conv1 bn1_gamma bn1_beta bn1_moving_mean
  // bn1_moving_var bn1(3 outputs) relu1 pool1 flatten1 fc1_weight fc1_bias
  // fc1 softmax_label softmax
  EXPECT_EQ(int_array(j, "node_row_ptr"),
            std::vector<long>({0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15,
                               16, 17, 18, 19}));
  EXPECT_EQ(int_array(j, "arg_nodes"),
            std::vector<long>({0, 1, 2, 4, 5, 6, 7, 12, 13, 15}));
}

TEST(Json, MxnetMlpFile) {
  std::string text = read_file("tests/graph/testdata/mlp_mxnet1x.json");
  Sym s = from_json(text);
  ASSERT_TRUE(s);
  EXPECT_EQ(gt::arguments(s.get()),
            Names({"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                   "softmax_label"}));
  EXPECT_EQ(gt::outputs(s.get()), Names({"softmax_output"}));
  EXPECT_EQ(attr_of(s.get(), "fc1_weight", "__lr_mult__"), "2.0");
  // Operator attributes copied onto variables by MXNet stay attributes.
  EXPECT_EQ(attr_of(s.get(), "fc2_bias", "num_hidden"), "10");

  const char *names[] = {"data"};
  int nd[] = {2};
  int64_t dims[] = {32, 784};
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_shape(s.get(), 1, names, nd, dims, 0, &inf),
            MXC_OK)
      << err();
  int ndim = 0;
  int64_t d[MXC_MAX_NDIM];
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 1, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim), std::vector<int64_t>({128, 784}));
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 3, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim), std::vector<int64_t>({10, 128}));
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_OUTPUTS, 0, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim), std::vector<int64_t>({32, 10}));
  mxc_infer_free(inf);

  // Re-saved: same numbering as MXNet (Dropout has 2 outputs), stable.
  std::string ours = to_json(s.get());
  EXPECT_EQ(int_array(ours, "node_row_ptr"), int_array(text, "node_row_ptr"));
  EXPECT_EQ(int_array(ours, "arg_nodes"), int_array(text, "arg_nodes"));
  EXPECT_EQ(int_array(ours, "heads"), int_array(text, "heads"));
  EXPECT_EQ(to_json(from_json(ours).get()), ours);
}

TEST(Json, MxnetConvNetFile) {
  std::string text = read_file("tests/graph/testdata/convnet_mxnet1x.json");
  Sym s = from_json(text);
  ASSERT_TRUE(s);
  EXPECT_EQ(gt::arguments(s.get()),
            Names({"data", "conv1_weight", "conv1_bias", "bn1_gamma",
                   "bn1_beta", "fc1_weight", "fc1_bias", "softmax_label"}));
  EXPECT_EQ(gt::auxiliary(s.get()),
            Names({"bn1_moving_mean", "bn1_moving_var"}));
  // A parameter this build lacks is kept as an attribute; known ones parse.
  EXPECT_EQ(attr_of(s.get(), "conv1_output", "cudnn_tune"),
            "limited_workspace");
  EXPECT_EQ(attr_of(s.get(), "conv1_output", "workspace"), "512");
  EXPECT_EQ(attr_of(s.get(), "bn1_moving_var", "__init__"), "[\"one\", {}]");

  const char *names[] = {"data"};
  int nd[] = {4};
  int64_t dims[] = {8, 1, 28, 28};
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_shape(s.get(), 1, names, nd, dims, 0, &inf),
            MXC_OK)
      << err();
  int ndim = 0;
  int64_t d[MXC_MAX_NDIM];
  // conv 5x5: 24x24; pool 2x2/2: 12x12; flatten: 20*12*12 = 2880.
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 1, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim),
            std::vector<int64_t>({20, 1, 5, 5}));
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 5, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim),
            std::vector<int64_t>({10, 2880}));
  ASSERT_EQ(mxc_infer_shape(inf, MXC_INFER_AUX, 1, &ndim, d), MXC_OK);
  EXPECT_EQ(std::vector<int64_t>(d, d + ndim), std::vector<int64_t>({20}));
  mxc_infer_free(inf);

  std::string ours = to_json(s.get());
  EXPECT_EQ(int_array(ours, "node_row_ptr"), int_array(text, "node_row_ptr"));
  EXPECT_EQ(int_array(ours, "arg_nodes"), int_array(text, "arg_nodes"));
  EXPECT_EQ(to_json(from_json(ours).get()), ours);
}

TEST(Json, Mxnet0xFile) {
  std::string text = read_file("tests/graph/testdata/mlp_mxnet0x.json");
  Sym s = from_json(text);
  ASSERT_TRUE(s);
  EXPECT_EQ(gt::arguments(s.get()),
            Names({"data", "fc1_weight", "fc1_bias", "softmax_label"}));
  EXPECT_EQ(attr_of(s.get(), "fc1_weight", "__wd_mult__"), "0.5");
  EXPECT_EQ(attr_of(s.get(), "fc1_output", "num_hidden"), "64");
  std::string ours = to_json(s.get());
  EXPECT_NE(ours.find("\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]"),
            std::string::npos)
      << ours;
  EXPECT_EQ(to_json(from_json(ours).get()), ours);
}

struct Malformed {
  const char *text;
  long byte;  // -1: any
};

TEST(Json, MalformedTextNamesTheByte) {
  const Malformed cases[] = {
      {"", 0},
      {"{", 1},
      {"{\"nodes\": [}", 11},
      {"[1, 2,]", 6},
      {"{\"a\": 1} x", 9},
      {"{\"a\": \"b\\q\"}", 9},
      {"{\"a\": 01}", 6},
      {"{\"a\": \"abc", 10},
      {"{\"a\" 1}", 5},
      {"{\"a\": -}", 6},
      {"{\"a\": 1.}", 6},
      {"{\"a\": tru}", 6},
      {"\"\\ud800\"", -1},
      {"\"\\u0000\"", -1},
      {"\"a\x01\"", 2},
  };
  for (const Malformed &c : cases) {
    EXPECT_EQ(load_status(c.text), MXC_ERR_INVALID_ARGUMENT) << c.text;
    std::string m = err();
    EXPECT_NE(m.find("malformed JSON"), std::string::npos) << c.text << ": " << m;
    if (c.byte >= 0) {
      EXPECT_NE(m.find("at byte " + std::to_string(c.byte) + ":"),
                std::string::npos)
          << c.text << ": " << m;
    }
  }
  std::string deep(1000, '[');
  EXPECT_EQ(load_status(deep), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("too deep"), std::string::npos) << err();
}

TEST(Json, StructuralErrors) {
  const char *var = "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}";
  auto graph = [](const std::string &nodes, const std::string &heads) {
    return "{\"nodes\": [" + nodes + "], \"heads\": [" + heads + "]}";
  };
  EXPECT_EQ(load_status("[]"), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status("{\"heads\": []}"), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(var, "")), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(var, "[1, 0, 0]")), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(var, "[0, 1, 0]")), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("1 outputs"), std::string::npos) << err();
  EXPECT_EQ(load_status(graph(var, "[0]")), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(var, "[0.5, 0]")), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(var, "[0, 0, 0, 0]")), MXC_ERR_INVALID_ARGUMENT);
  // An input referring to a later node.
  std::string fwd =
      graph("{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[1, 0, 0]]}, " +
                std::string(var),
            "[0, 0, 0]");
  EXPECT_EQ(load_status(fwd), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("node 0 input 0"), std::string::npos) << err();
  // Missing op / name, non-string attribute, variable with inputs.
  EXPECT_EQ(load_status(graph("{\"name\": \"x\"}", "[0, 0, 0]")),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph("{\"op\": \"null\"}", "[0, 0, 0]")),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(load_status(graph(std::string(var) +
                                  ", {\"op\": \"FullyConnected\", \"name\": "
                                  "\"f\", \"attrs\": {\"num_hidden\": 3}, "
                                  "\"inputs\": [[0, 0, 0]]}",
                              "[1, 0, 0]")),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_hidden"), std::string::npos) << err();
  EXPECT_EQ(load_status(graph(std::string(var) +
                                  ", {\"op\": \"null\", \"name\": \"y\", "
                                  "\"inputs\": [[0, 0, 0]]}",
                              "[1, 0, 0]")),
            MXC_ERR_INVALID_ARGUMENT);
  // Wrong input count and bad parameter values name the node. (Inputs
  // missing from a file without mxnet_version, MXNet 0.8, become
  // variables as MXNet's upgrade makes them: tests/io/test_mxnet_models.)
  std::string few = graph(std::string(var) +
                              ", {\"op\": \"FullyConnected\", \"name\": "
                              "\"f\", \"attrs\": {\"num_hidden\": \"3\"}, "
                              "\"inputs\": [[0, 0, 0]]}",
                          "[1, 0, 0]");
  EXPECT_EQ(load_status(few), MXC_OK) << err();
  few.insert(few.size() - 1,
             ", \"attrs\": {\"mxnet_version\": [\"int\", 10900]}");
  EXPECT_EQ(load_status(few), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'f'"), std::string::npos) << err();
  EXPECT_EQ(load_status(graph(std::string(var) +
                                  ", {\"op\": \"Activation\", \"name\": "
                                  "\"a\", \"attrs\": {\"act_type\": \"nope\"}, "
                                  "\"inputs\": [[0, 0, 0]]}",
                              "[1, 0, 0]")),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("act_type"), std::string::npos) << err();
  // Graph features mxc lacks.
  EXPECT_EQ(load_status(graph("{\"op\": \"null\", \"name\": \"x\", "
                              "\"inputs\": [], \"control_deps\": [0]}",
                              "[0, 0, 0]")),
            MXC_ERR_UNSUPPORTED);
  // Empty extras are fine.
  Sym ok = from_json(graph("{\"op\": \"null\", \"name\": \"x\", \"inputs\": "
                           "[], \"control_deps\": [], \"subgraphs\": []}",
                           "[0, 0, 0]"));
  EXPECT_TRUE(ok);
}

TEST(Json, UnknownOperatorIsNotFound) {
  std::string text = read_file("tests/graph/testdata/mlp_mxnet1x.json");
  size_t p = text.find("\"Activation\"");
  ASSERT_NE(p, std::string::npos);
  text.replace(p, 12, "\"NoSuchOp\"");
  EXPECT_EQ(load_status(text), MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("NoSuchOp"), std::string::npos) << err();
  EXPECT_NE(err().find("relu1"), std::string::npos) << err();
}

TEST(Json, ApiArgumentErrors) {
  Sym s;
  EXPECT_EQ(mxc_symbol_from_json(nullptr, s.out()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_from_json("{}", nullptr), MXC_ERR_INVALID_ARGUMENT);
  Sym v = gt::var("v");
  EXPECT_EQ(mxc_symbol_to_json(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_save(v.get(), nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_load(nullptr, s.out()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_load("x.json", nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(s);
}

TEST(JsonFile, SaveLoad) {
  Sym net = gt::convnet();
  std::string path = tmp_path("convnet.json");
  ASSERT_EQ(mxc_symbol_save(net.get(), path.c_str()), MXC_OK) << err();
  EXPECT_EQ(read_file(path), to_json(net.get()));
  Sym back;
  ASSERT_EQ(mxc_symbol_load(path.c_str(), back.out()), MXC_OK) << err();
  EXPECT_EQ(to_json(back.get()), to_json(net.get()));

  Sym none;
  EXPECT_EQ(mxc_symbol_load(tmp_path("missing.json").c_str(), none.out()),
            MXC_ERR_IO);
  EXPECT_EQ(mxc_symbol_save(net.get(), tmp_path("no/such/dir/x.json").c_str()),
            MXC_ERR_IO);
  std::string bad = tmp_path("bad.json");
  { std::ofstream(bad) << "{\"nodes\": ["; }
  EXPECT_EQ(mxc_symbol_load(bad.c_str(), none.out()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("bad.json"), std::string::npos) << err();
  EXPECT_FALSE(none);
}

TEST(JsonFile, SaveIsAtomicUnderIoFailures) {
  Sym old = gt::mlp(), fresh = gt::convnet();
  std::string path = tmp_path("atomic.json");
  ASSERT_EQ(mxc_symbol_save(old.get(), path.c_str()), MXC_OK) << err();
  const std::string before = read_file(path);
  for (int n = 1; n < 1000; ++n) {
    mxc__fault_io_arm(n);
    int rc = mxc_symbol_save(fresh.get(), path.c_str());
    int fired = mxc__fault_io_fired();
    mxc__fault_io_arm(0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(read_file(path), to_json(fresh.get()));
      return;
    }
    EXPECT_EQ(rc, MXC_ERR_IO) << n << ": " << err();
    EXPECT_EQ(read_file(path), before) << "I/O failure " << n;
  }
  FAIL() << "save never completed";
}

// ---- DOT ----

TEST(Dot, NodesEdgesAndShapes) {
  Sym net = gt::mlp();
  char *dot = nullptr;
  ASSERT_EQ(mxc_symbol_to_dot(net.get(), 0, nullptr, nullptr, nullptr, &dot),
            MXC_OK)
      << err();
  std::string d = dot;
  mxc_string_free(dot);
  EXPECT_EQ(d.rfind("digraph", 0), 0u) << d;
  EXPECT_NE(d.find("n0 [label=\"data\", shape=oval];"), std::string::npos) << d;
  EXPECT_NE(d.find("n3 [label=\"fc1\\nFullyConnected\\nnum_hidden=10\", "
                   "shape=box];"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("n0 -> n3;"), std::string::npos) << d;
  EXPECT_NE(d.find("n3 -> n4;"), std::string::npos) << d;
  size_t edges = 0;
  for (size_t p = d.find("->"); p != std::string::npos; p = d.find("->", p + 1)) {
    ++edges;
  }
  EXPECT_EQ(edges, 9u);  // fc1: 3, relu: 1, fc2: 3, softmax: 2

  const char *names[] = {"data"};
  int nd[] = {2};
  int64_t dims[] = {4, 784};
  ASSERT_EQ(mxc_symbol_to_dot(net.get(), 1, names, nd, dims, &dot), MXC_OK)
      << err();
  d = dot;
  mxc_string_free(dot);
  EXPECT_NE(d.find("n0 -> n3 [label=\"4x784\"];"), std::string::npos) << d;
  EXPECT_NE(d.find("n1 -> n3 [label=\"10x784\"];"), std::string::npos) << d;
  EXPECT_NE(d.find("n2 -> n3 [label=\"10\"];"), std::string::npos) << d;
  EXPECT_NE(d.find("n3 -> n4 [label=\"4x10\"];"), std::string::npos) << d;

  const char *bad[] = {"nope"};
  EXPECT_EQ(mxc_symbol_to_dot(net.get(), 1, bad, nd, dims, &dot),
            MXC_ERR_NOT_FOUND);
  const char *w[] = {"data", "fc1_weight"};
  int nd2[] = {2, 2};
  int64_t d2[] = {4, 784, 3, 3};
  EXPECT_EQ(mxc_symbol_to_dot(net.get(), 2, w, nd2, d2, &dot), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_symbol_to_dot(net.get(), 1, names, nullptr, dims, &dot),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_to_dot(net.get(), 0, nullptr, nullptr, nullptr, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
}

TEST(Dot, EscapesNames) {
  Sym x = gt::var("a\"b\\c");
  char *dot = nullptr;
  ASSERT_EQ(mxc_symbol_to_dot(x.get(), 0, nullptr, nullptr, nullptr, &dot),
            MXC_OK);
  EXPECT_NE(std::string(dot).find("label=\"a\\\"b\\\\c\""), std::string::npos)
      << dot;
  mxc_string_free(dot);
}

// ---- allocation failures ----

TEST(JsonFaults, AllocationFailureWalk) {
  const std::string text =
      read_file("tests/graph/testdata/convnet_mxnet1x.json");
  const std::string path = tmp_path("walk.json");
  gt::alloc_failure_walk([&]() {
    mxc_symbol s = nullptr, t = nullptr, u = nullptr;
    char *j = nullptr, *dot = nullptr;
    int rc = mxc_symbol_from_json(text.c_str(), &s);
    if (rc == MXC_OK) rc = mxc_symbol_to_json(s, &j);
    if (rc == MXC_OK) rc = mxc_symbol_from_json(j, &t);
    const char *names[] = {"data"};
    int nd[] = {4};
    int64_t dims[] = {2, 1, 28, 28};
    if (rc == MXC_OK) rc = mxc_symbol_to_dot(t, 1, names, nd, dims, &dot);
    if (rc == MXC_OK) rc = mxc_symbol_save(t, path.c_str());
    if (rc == MXC_OK) rc = mxc_symbol_load(path.c_str(), &u);
    mxc_string_free(j);
    mxc_string_free(dot);
    mxc_symbol_free(s);
    mxc_symbol_free(t);
    mxc_symbol_free(u);
    return rc;
  });
}

}  // namespace
