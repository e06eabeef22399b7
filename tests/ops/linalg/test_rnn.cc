// RNN (the fused recurrent operator) against torch: golden files written by
// scripts/make_rnn_golden.py (torch.nn.RNN/LSTM/GRU in float64, weights
// repacked into MXNet's layout, gradients by torch autograd), and against
// finite differences of the operator itself.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

struct Rec {
  Shape shape;
  std::vector<double> v;
};
using Golden = std::map<std::string, Rec>;

// Reads the script's record file (see make_rnn_golden.py).
Golden load_golden(const std::string &name) {
  Golden g;
  std::ifstream f("tests/ops/linalg/rnn/" + name + ".bin", std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing golden file for " << name;
  uint32_t len = 0;
  while (f.read(reinterpret_cast<char *>(&len), 4)) {
    std::string key(len, '\0');
    uint32_t nd = 0;
    f.read(&key[0], len);
    f.read(reinterpret_cast<char *>(&nd), 4);
    Rec r;
    r.shape.resize(nd);
    f.read(reinterpret_cast<char *>(r.shape.data()), 8 * nd);
    r.v.resize((size_t)numel(r.shape));
    f.read(reinterpret_cast<char *>(r.v.data()), 8 * r.v.size());
    g[key] = r;
  }
  return g;
}

struct Case {
  const char *name, *mode;
  int layers;
  bool bi, lens;
};

const Case kCases[] = {
    {"lstm_1l", "lstm", 1, false, false},
    {"lstm_2l_bi", "lstm", 2, true, false},
    {"gru_1l", "gru", 1, false, false},
    {"gru_3l_bi", "gru", 3, true, false},
    {"tanh_2l", "rnn_tanh", 2, false, false},
    {"relu_1l_bi", "rnn_relu", 1, true, false},
    {"lstm_bi_len", "lstm", 2, true, true},
    {"gru_len", "gru", 1, false, true},
};

Params params_of(const Case &c, const Golden &g) {
  Params p = {{"mode", c.mode},
              {"state_size", std::to_string(g.at("h0").shape[2])},
              {"num_layers", std::to_string(c.layers)},
              {"bidirectional", c.bi ? "true" : "false"},
              {"state_outputs", "true"}};
  if (c.lens) p.push_back({"use_sequence_length", "true"});
  return p;
}

// Input names in the operator's order for this case.
std::vector<std::string> input_keys(const Case &c) {
  std::vector<std::string> k = {"x", "params", "h0"};
  if (std::string(c.mode) == "lstm") k.push_back("c0");
  if (c.lens) k.push_back("lens");
  return k;
}

void expect_near(const std::vector<double> &got, const Rec &want,
                 double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.v.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want.v[i], tol * (1 + std::fabs(want.v[i])))
        << what << " element " << i;
  }
}

std::vector<Arr> inputs_of(const Case &c, const Golden &g, int dtype) {
  std::vector<Arr> in;
  for (auto &k : input_keys(c)) {
    const Rec &r = g.at(k);
    in.push_back(make(r.shape, r.v, dtype));
  }
  return in;
}

std::vector<const Arr *> ptrs(const std::vector<Arr> &v) {
  std::vector<const Arr *> p;
  for (auto &a : v) p.push_back(&a);
  return p;
}

class RnnGolden : public ::testing::TestWithParam<Case> {};

TEST_P(RnnGolden, ForwardMatchesTorch) {
  const Case &c = GetParam();
  Golden g = load_golden(c.name);
  auto in = inputs_of(c, g, MXC_DTYPE_FLOAT64);
  auto out = invoke("RNN", ptrs(in), params_of(c, g));
  bool lstm = std::string(c.mode) == "lstm";
  ASSERT_EQ(out.size(), lstm ? 3u : 2u);
  EXPECT_EQ(out[0].shape(), g.at("out").shape);
  expect_near(read(out[0]), g.at("out"), 1e-10, "out");
  expect_near(read(out[1]), g.at("hy"), 1e-10, "hy");
  if (lstm) expect_near(read(out[2]), g.at("cy"), 1e-10, "cy");
}

TEST_P(RnnGolden, Float32ForwardMatchesTorch) {
  const Case &c = GetParam();
  Golden g = load_golden(c.name);
  auto in = inputs_of(c, g, MXC_DTYPE_FLOAT32);
  auto out = invoke("RNN", ptrs(in), params_of(c, g));
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
  expect_near(read(out[0]), g.at("out"), 1e-4, "out");
  expect_near(read(out[1]), g.at("hy"), 1e-4, "hy");
}

TEST_P(RnnGolden, GradientMatchesTorchAutograd) {
  const Case &c = GetParam();
  Golden g = load_golden(c.name);
  Params p = params_of(c, g);
  auto in = inputs_of(c, g, MXC_DTYPE_FLOAT64);
  std::vector<const char *> keys, vals;
  for (auto &kv : p) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  int n_all = mxct_num_all_outputs("RNN", keys.data(), vals.data(),
                                   (int)keys.size());
  auto out = invoke_count("RNN", ptrs(in), p, n_all);
  ASSERT_EQ((int)out.size(), n_all);
  bool lstm = std::string(c.mode) == "lstm";
  std::vector<Arr> og;
  for (auto k : {"dout", "dhy", "dcy"}) {
    if (std::string(k) == "dcy" && !lstm) break;
    og.push_back(make(g.at(k).shape, g.at(k).v, MXC_DTYPE_FLOAT64));
  }
  std::vector<mxc_ndarray> iin, iout, iog, ig(in.size(), nullptr);
  for (auto &a : in) iin.push_back(a.h);
  for (auto &a : out) iout.push_back(a.h);
  for (auto &a : og) iog.push_back(a.h);
  ASSERT_EQ(mxct_grad_eval("RNN", keys.data(), vals.data(), (int)keys.size(),
                           iin.data(), (int)iin.size(), iout.data(),
                           (int)iout.size(), iog.data(), ig.data()),
            MXC_OK)
      << err();
  const char *want[] = {"dx", "dparams", "dh0", "dc0"};
  for (size_t i = 0; i < in.size(); ++i) {
    Arr gi(ig[i]);
    if (c.lens && i + 1 == in.size()) {
      EXPECT_EQ(gi.h, nullptr) << "sequence_length gets no gradient";
      continue;
    }
    ASSERT_NE(gi.h, nullptr) << "input " << i;
    expect_near(read(gi), g.at(want[i]), 1e-9, want[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Torch, RnnGolden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return std::string(i.param.name);
                         });

// Parameter count of MXNet's layout: per layer and direction
// G*H*(in + H) weights and 2*G*H biases.
int64_t param_count(int g, int64_t in, int64_t h, int layers, int dirs) {
  int64_t n = 0;
  for (int l = 0; l < layers; ++l) {
    int64_t li = l == 0 ? in : dirs * h;
    n += dirs * (g * h * (li + h) + 2 * g * h);
  }
  return n;
}

struct Small {
  Shape x, p, s;
  std::vector<std::vector<double>> vals;
  std::vector<Shape> shapes;
};

// Random inputs for a small configuration (values where the
// non-linearities are smooth: finite differences stay accurate).
Small small(const std::string &mode, int64_t t, int64_t n, int64_t in,
            int64_t h, int layers, int dirs, bool lens) {
  int g = mode == "lstm" ? 4 : mode == "gru" ? 3 : 1;
  Small s;
  s.shapes = {{t, n, in}, {param_count(g, in, h, layers, dirs)},
              {layers * dirs, n, h}};
  if (mode == "lstm") s.shapes.push_back({layers * dirs, n, h});
  unsigned seed = 7;
  for (auto &sh : s.shapes) s.vals.push_back(uniform(numel(sh), -0.6, 0.6, seed++));
  if (lens) {
    s.shapes.push_back({n});
    std::vector<double> l(n);
    for (int64_t i = 0; i < n; ++i) l[i] = (double)(t - i % t);
    s.vals.push_back(l);
  }
  return s;
}

Params small_params(const std::string &mode, int64_t h, int layers, int dirs,
                    bool lens) {
  Params p = {{"mode", mode}, {"state_size", std::to_string(h)},
              {"num_layers", std::to_string(layers)},
              {"bidirectional", dirs == 2 ? "1" : "0"},
              {"state_outputs", "1"}};
  if (lens) p.push_back({"use_sequence_length", "1"});
  return p;
}

TEST(Rnn, FiniteDifferencesEveryMode) {
  for (std::string mode : {"lstm", "gru", "rnn_tanh"}) {
    SCOPED_TRACE(mode);
    Small s = small(mode, 3, 2, 3, 2, 2, 2, false);
    grad_check("RNN", s.shapes, s.vals, small_params(mode, 2, 2, 2, false));
  }
}

TEST(Rnn, FiniteDifferencesRelu) {
  // Shifted inputs keep pre-activations away from the kink at 0.
  Small s = small("rnn_relu", 3, 2, 2, 3, 1, 1, false);
  grad_check("RNN", s.shapes, s.vals, small_params("rnn_relu", 3, 1, 1, false),
             1e-7, 1e-4, 1e-6);
}

TEST(Rnn, FiniteDifferencesSequenceLength) {
  for (std::string mode : {"lstm", "gru"}) {
    SCOPED_TRACE(mode);
    Small s = small(mode, 4, 3, 2, 2, 1, 2, true);
    int seq = (int)s.shapes.size() - 1;
    grad_check("RNN", s.shapes, s.vals, small_params(mode, 2, 1, 2, true),
               1e-6, 1e-4, 1e-6, {seq});
  }
}

TEST(Rnn, SequenceLengthPadsOutputWithZeros) {
  Small s = small("gru", 4, 3, 2, 2, 1, 1, true);
  std::vector<Arr> in;
  for (size_t i = 0; i < s.shapes.size(); ++i)
    in.push_back(make(s.shapes[i], s.vals[i], MXC_DTYPE_FLOAT64));
  auto out = invoke("RNN", ptrs(in), small_params("gru", 2, 1, 1, true));
  ASSERT_EQ(out.size(), 2u);
  auto y = read(out[0]);
  auto hy = read(out[1]);
  for (int64_t r = 0; r < 3; ++r) {
    int64_t len = (int64_t)s.vals.back()[r];
    for (int64_t t = 0; t < 4; ++t) {
      for (int j = 0; j < 2; ++j) {
        double v = y[(t * 3 + r) * 2 + j];
        if (t >= len) {
          EXPECT_EQ(v, 0.0);
        }
        // hy is the state after the row's own last step.
        if (t == len - 1) {
          EXPECT_EQ(hy[r * 2 + j], v);
        }
      }
    }
  }
}

TEST(Rnn, StateClipping) {
  Small s = small("lstm", 4, 2, 3, 3, 1, 1, false);
  for (auto &v : s.vals[0]) v *= 4;  // drive the cells past the bounds
  std::vector<Arr> in;
  for (size_t i = 0; i < s.shapes.size(); ++i)
    in.push_back(make(s.shapes[i], s.vals[i], MXC_DTYPE_FLOAT64));
  Params p = small_params("lstm", 3, 1, 1, false);
  auto free_run = invoke("RNN", ptrs(in), p);
  p.push_back({"lstm_state_clip_min", "-0.2"});
  p.push_back({"lstm_state_clip_max", "0.25"});
  auto clipped = invoke("RNN", ptrs(in), p);
  ASSERT_EQ(clipped.size(), 3u);
  bool any = false;
  auto c0 = read(free_run[2]), c1 = read(clipped[2]);
  for (size_t i = 0; i < c1.size(); ++i) {
    EXPECT_GE(c1[i], -0.2);
    EXPECT_LE(c1[i], 0.25);
    any |= c0[i] < -0.2 || c0[i] > 0.25;
  }
  EXPECT_TRUE(any) << "the test should drive some cell past a bound";
  grad_check("RNN", s.shapes, s.vals, p);
}

TEST(Rnn, DropoutBetweenLayersOnlyInTraining) {
  Small s = small("rnn_tanh", 3, 4, 3, 5, 2, 1, false);
  std::vector<Arr> in;
  for (size_t i = 0; i < s.shapes.size(); ++i)
    in.push_back(make(s.shapes[i], s.vals[i], MXC_DTYPE_FLOAT64));
  Params p = small_params("rnn_tanh", 5, 2, 1, false);
  auto plain = read(invoke("RNN", ptrs(in), p)[0]);
  p.push_back({"p", "0.5"});
  auto infer = read(invoke("RNN", ptrs(in), p)[0]);
  EXPECT_EQ(infer, plain) << "dropout must not act in inference";
  int prev = 0;
  ASSERT_EQ(mxc_set_training(1, &prev), MXC_OK);
  auto train = read(invoke("RNN", ptrs(in), p)[0]);
  mxc_set_training(prev, nullptr);
  EXPECT_NE(train, plain);
}

TEST(Rnn, InfersParameterAndStateShapes) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("RNN", &op), MXC_OK);
  Small s = small("gru", 2, 3, 4, 5, 2, 2, false);
  auto x = make(s.shapes[0], s.vals[0], MXC_DTYPE_FLOAT32);
  auto w = make({7}, std::vector<double>(7, 0), MXC_DTYPE_FLOAT32);
  auto h = make(s.shapes[2], s.vals[2], MXC_DTYPE_FLOAT32);
  int rc = 0;
  invoke("RNN", {&x, &w, &h}, small_params("gru", 5, 2, 2, false), &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find(std::to_string(s.shapes[1][0])), std::string::npos)
      << err();
}

TEST(Rnn, BadInput) {
  Small s = small("lstm", 2, 2, 3, 2, 1, 1, false);
  std::vector<Arr> in;
  for (size_t i = 0; i < s.shapes.size(); ++i)
    in.push_back(make(s.shapes[i], s.vals[i], MXC_DTYPE_FLOAT32));
  Params base = small_params("lstm", 2, 1, 1, false);
  struct Bad {
    std::string key, val, says;
    int code;
  } bad[] = {
      {"projection_size", "2", "projection_size", MXC_ERR_INVALID_ARGUMENT},
      {"p", "1", "p must be", MXC_ERR_INVALID_ARGUMENT},
      {"lstm_state_clip_min", "0", "go together", MXC_ERR_INVALID_ARGUMENT},
      {"mode", "lstmp", "mode", MXC_ERR_INVALID_ARGUMENT},
  };
  for (auto &b : bad) {
    Params p = base;
    bool replaced = false;
    for (auto &kv : p)
      if (kv.first == b.key) kv.second = b.val, replaced = true;
    if (!replaced) p.push_back({b.key, b.val});
    int rc = 0;
    invoke("RNN", ptrs(in), p, &rc);
    EXPECT_EQ(rc, b.code) << b.key;
    EXPECT_NE(err().find(b.says), std::string::npos) << err();
  }
  int rc = 0;
  invoke("RNN", {&in[0], &in[1], &in[2]}, base, &rc);  // no state_cell
  EXPECT_NE(rc, MXC_OK);
  auto x2 = make({2, 3}, std::vector<double>(6, 0), MXC_DTYPE_FLOAT32);
  invoke("RNN", {&x2, &in[1], &in[2], &in[3]}, base, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(T, N, C)"), std::string::npos) << err();
  auto xi = make(s.shapes[0], s.vals[0], MXC_DTYPE_INT32);
  invoke("RNN", {&xi, &in[1], &in[2], &in[3]}, base, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

TEST(Rnn, SequenceLengthOutOfRange) {
  Small s = small("gru", 3, 2, 2, 2, 1, 1, true);
  s.vals.back() = {1, 4};  // 4 > T
  std::vector<Arr> in;
  for (size_t i = 0; i < s.shapes.size(); ++i)
    in.push_back(make(s.shapes[i], s.vals[i], MXC_DTYPE_FLOAT32));
  auto out = invoke("RNN", ptrs(in), small_params("gru", 2, 1, 1, true));
  // Kernel errors surface at the next wait: reading the output.
  ASSERT_FALSE(out.empty());
  int rc = mxc_ndarray_wait_to_read(out[0].h);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("sequence_length[1]"), std::string::npos) << err();
  EXPECT_EQ(mxc_wait_all(), MXC_ERR_INVALID_ARGUMENT);
}

// The graph path: an MXNet-style JSON graph holding an RNN node, bound
// from the data shape alone (parameters and states inferred), forward
// and backward through the executor against torch's values.
const char *kGraph = R"({"nodes": [
 {"op": "null", "name": "data", "inputs": []},
 {"op": "null", "name": "params", "inputs": []},
 {"op": "null", "name": "state", "inputs": []},
 {"op": "null", "name": "cell", "inputs": []},
 {"op": "RNN", "name": "rnn0", "attrs": {"mode": "lstm", "state_size": "5",
  "num_layers": "2", "bidirectional": "True", "state_outputs": "True"},
  "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]}],
 "arg_nodes": [0, 1, 2, 3], "node_row_ptr": [0, 1, 2, 3, 4, 7],
 "heads": [[4, 0, 0], [4, 1, 0], [4, 2, 0]]})";

void set_arg(mxc_executor ex, const char *name, const Rec &r) {
  mxc_ndarray a = nullptr;
  ASSERT_EQ(mxc_executor_arg(ex, name, &a), MXC_OK) << name << ": " << err();
  std::vector<float> v(r.v.begin(), r.v.end());
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
      << err();
  mxc_ndarray_free(a);
}

std::vector<double> grad_of(mxc_executor ex, const char *name) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_executor_grad(ex, name, &a), MXC_OK) << name << ": " << err();
  Arr h(a);
  return read(h);
}

TEST(Rnn, ExecutorMatchesTorch) {
  Golden g = load_golden("lstm_2l_bi");
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(kGraph, &sym), MXC_OK) << err();
  int n_out = 0;
  ASSERT_EQ(mxc_symbol_num_outputs(sym, &n_out), MXC_OK);
  EXPECT_EQ(n_out, 3) << "out, hy, cy: the reserve stays hidden";
  const char *names[] = {"data"};
  const Shape &xs = g.at("x").shape;
  int nd = 3;
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, &nd,
                                     xs.data(), nullptr, MXC_REQ_WRITE, 0,
                                     nullptr, nullptr, 0, &ex),
            MXC_OK)
      << err();
  mxc_symbol_free(sym);
  set_arg(ex, "data", g.at("x"));
  set_arg(ex, "params", g.at("params"));
  set_arg(ex, "state", g.at("h0"));
  set_arg(ex, "cell", g.at("c0"));
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  const char *outs[] = {"out", "hy", "cy"};
  std::vector<Arr> heads;
  for (int i = 0; i < 3; ++i) {
    mxc_ndarray o = nullptr;
    ASSERT_EQ(mxc_executor_output(ex, i, &o), MXC_OK);
    Arr oh(o);
    expect_near(read(oh), g.at(outs[i]), 1e-5, outs[i]);
    const Rec &d = g.at(std::string("d") + outs[i]);
    heads.push_back(make(d.shape, d.v, MXC_DTYPE_FLOAT32));
  }
  std::vector<mxc_ndarray> hh;
  for (auto &h : heads) hh.push_back(h.h);
  ASSERT_EQ(mxc_executor_backward(ex, 3, hh.data()), MXC_OK) << err();
  expect_near(grad_of(ex, "data"), g.at("dx"), 1e-4, "dx");
  expect_near(grad_of(ex, "params"), g.at("dparams"), 1e-4, "dparams");
  expect_near(grad_of(ex, "state"), g.at("dh0"), 1e-4, "dh0");
  expect_near(grad_of(ex, "cell"), g.at("dc0"), 1e-4, "dc0");
  mxc_executor_free(ex);
}

// Imperative autograd: record RNN on marked variables, backward with
// torch's head gradients.
TEST(Rnn, AutogradMatchesTorch) {
  Case c = kCases[2];  // gru_1l
  Golden g = load_golden(c.name);
  auto in = inputs_of(c, g, MXC_DTYPE_FLOAT64);
  std::vector<mxc_ndarray> vars;
  std::vector<Arr> grads;
  for (auto &a : in) {
    vars.push_back(a.h);
    grads.push_back(make(a.shape(), std::vector<double>(numel(a.shape()), 0),
                         MXC_DTYPE_FLOAT64));
  }
  std::vector<mxc_ndarray> gh;
  for (auto &a : grads) gh.push_back(a.h);
  std::vector<int> reqs(vars.size(), MXC_REQ_WRITE);
  ASSERT_EQ(mxc_autograd_mark_variables((int)vars.size(), vars.data(),
                                        reqs.data(), gh.data()),
            MXC_OK)
      << err();
  int prev = 0;
  ASSERT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  auto out = invoke("RNN", ptrs(in), params_of(c, g));
  mxc_autograd_set_recording(prev, nullptr);
  ASSERT_EQ(out.size(), 2u);
  auto d0 = make(g.at("dout").shape, g.at("dout").v, MXC_DTYPE_FLOAT64);
  auto d1 = make(g.at("dhy").shape, g.at("dhy").v, MXC_DTYPE_FLOAT64);
  mxc_ndarray heads[] = {out[0].h, out[1].h}, hg[] = {d0.h, d1.h};
  ASSERT_EQ(mxc_autograd_backward(2, heads, hg, 0), MXC_OK) << err();
  expect_near(read(grads[0]), g.at("dx"), 1e-9, "dx");
  expect_near(read(grads[1]), g.at("dparams"), 1e-9, "dparams");
  expect_near(read(grads[2]), g.at("dh0"), 1e-9, "dh0");
}

}  // namespace
