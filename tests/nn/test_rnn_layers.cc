// The recurrent layers ("lstm", "gru") through the public C API, against
// references written here:
//  - outputs against a naive step-by-step LSTM / GRU loop over the
//    parameters read back from the block (multi-layer, bidirectional, both
//    layouts), which also pins Gluon's parameter names and shapes;
//  - gradients of a recorded pass against central finite differences,
//    and the exported graph's executor gradients against autograd's;
//  - hybridized (executor) outputs against the imperative ones, also of a
//    user block holding a GRU (traced);
//  - export -> predictor (also at another batch size: the begin state
//    follows the input), and the graph Gluon exports for the same layers
//    (_rnn_param_concat, _zeros begin states) with mxc's parameters;
//  - bad configuration and inputs refused with a message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/nn/nn_test_util.h"

namespace {

using nn_test::block;
using nn_test::host;
using nn_test::make;
using nn_test::shape_of;
using nn_test::tmp_path;

using Vec = std::vector<double>;

Vec ramp(size_t n, double scale, double shift) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(1.3 * (double)i + shift) * scale;
  return v;
}

void init(mxc_block b) {
  const char *k[] = {"scale"}, *v[] = {"0.6"};
  ASSERT_EQ(mxc_block_initialize(b, "uniform", k, v, 1, 0), MXC_OK)
      << mxc_last_error();
}

mxc_ndarray forward(mxc_block b, mxc_ndarray x) {
  mxc_ndarray y = nullptr;
  EXPECT_EQ(mxc_block_forward(b, 1, &x, &y), MXC_OK) << mxc_last_error();
  return y;
}

std::string param_name(mxc_block b, int i) {
  const char *s = nullptr;
  EXPECT_EQ(mxc_block_param_name(b, i, &s), MXC_OK) << mxc_last_error();
  return s ? s : "";
}

void expect_near(const Vec &a, const Vec &b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
}

double sigm(double v) { return 1 / (1 + std::exp(-v)); }

// W (rows, cols) row-major times v, plus b.
Vec affine(const Vec &W, const Vec &v, const Vec &b) {
  Vec out(b);
  size_t cols = v.size();
  for (size_t r = 0; r < b.size(); ++r) {
    for (size_t c = 0; c < cols; ++c) out[r] += W[r * cols + c] * v[c];
  }
  return out;
}

// One unit's parameters as the block holds them (Gluon's order).
struct Unit {
  Vec wi, wh, bi, bh;
};

// One step of one unit for one example: h (and c for LSTM) updated.
void step(bool lstm, const Unit &u, const Vec &x, Vec &h, Vec &c) {
  size_t H = h.size();
  Vec a = affine(u.wi, x, u.bi), r = affine(u.wh, h, u.bh);
  if (lstm) {  // gates i, f, g, o
    for (size_t j = 0; j < H; ++j) {
      double i = sigm(a[j] + r[j]), f = sigm(a[H + j] + r[H + j]);
      double g = std::tanh(a[2 * H + j] + r[2 * H + j]);
      double o = sigm(a[3 * H + j] + r[3 * H + j]);
      c[j] = f * c[j] + i * g;
      h[j] = o * std::tanh(c[j]);
    }
    return;
  }
  for (size_t j = 0; j < H; ++j) {  // gates r, z, n; r scales W_hn h + b_hn
    double rr = sigm(a[j] + r[j]), z = sigm(a[H + j] + r[H + j]);
    double n = std::tanh(a[2 * H + j] + rr * r[2 * H + j]);
    h[j] = (1 - z) * n + z * h[j];
  }
}

// The naive network: seq[t][n] is example n's input at step t; returns
// out[t][n] (D*H features), from zero begin states.
std::vector<std::vector<Vec>> naive(bool lstm, const std::vector<Unit> &units,
                                    int L, int D, size_t H,
                                    std::vector<std::vector<Vec>> seq) {
  size_t T = seq.size(), N = seq[0].size();
  for (int l = 0; l < L; ++l) {
    std::vector<std::vector<Vec>> out(T, std::vector<Vec>(N, Vec(D * H)));
    for (int d = 0; d < D; ++d) {
      for (size_t n = 0; n < N; ++n) {
        Vec h(H, 0.0), c(H, 0.0);
        for (size_t s = 0; s < T; ++s) {
          size_t t = d ? T - 1 - s : s;
          step(lstm, units[(size_t)(l * D + d)], seq[t][n], h, c);
          for (size_t j = 0; j < H; ++j) out[t][n][d * H + j] = h[j];
        }
      }
    }
    seq = out;
  }
  return seq;
}

struct Case {
  const char *kind;
  int L;
  bool bidir, ntc;
};

void check_against_naive(const Case &k) {
  const size_t T = 3, N = 2, I = 4, H = 3;
  int D = k.bidir ? 2 : 1;
  std::string L = std::to_string(k.L);
  mxc_block b = block(k.kind, {"hidden_size", "3", "num_layers", L.c_str(),
                               "bidirectional", k.bidir ? "1" : "0", "layout",
                               k.ntc ? "NTC" : "TNC"},
                      "rnn");
  init(b);
  Vec xv = ramp(T * N * I, 1.0, 0.3);
  std::vector<int64_t> xs = k.ntc ? std::vector<int64_t>{2, 3, 4}
                                  : std::vector<int64_t>{3, 2, 4};
  mxc_ndarray x = make(xs, xv, MXC_DTYPE_FLOAT64);
  mxc_ndarray y = forward(b, x);
  std::vector<int64_t> ys = k.ntc ? std::vector<int64_t>{2, 3, D * 3}
                                  : std::vector<int64_t>{3, 2, D * 3};
  EXPECT_EQ(shape_of(y), ys);
  int n = 0;
  OK(mxc_block_num_params(b, &n));
  ASSERT_EQ(n, 4 * k.L * D);
  size_t G = std::string(k.kind) == "lstm" ? 4 : 3;
  std::vector<Unit> units;
  for (int u = 0; u < k.L * D; ++u) {
    Unit un;
    Vec *dst[] = {&un.wi, &un.wh, &un.bi, &un.bh};
    const char *what[] = {"i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"};
    for (int j = 0; j < 4; ++j) {
      int i = u * 4 + j;
      std::string want = std::string("rnn_") + (u % D ? "r" : "l") +
                         std::to_string(u / D) + "_" + what[j];
      EXPECT_EQ(param_name(b, i), want);
      mxc_ndarray p = nullptr;
      OK(mxc_block_param(b, i, &p));
      size_t in = u / D == 0 ? I : D * H;
      std::vector<int64_t> ps = j == 0   ? std::vector<int64_t>{(int64_t)(G * H), (int64_t)in}
                                : j == 1 ? std::vector<int64_t>{(int64_t)(G * H), (int64_t)H}
                                         : std::vector<int64_t>{(int64_t)(G * H)};
      EXPECT_EQ(shape_of(p), ps) << want;
      *dst[j] = host(p);
      mxc_ndarray_free(p);
    }
    units.push_back(un);
  }
  std::vector<std::vector<Vec>> seq(T, std::vector<Vec>(N, Vec(I)));
  for (size_t t = 0; t < T; ++t)
    for (size_t e = 0; e < N; ++e)
      for (size_t i = 0; i < I; ++i)
        seq[t][e][i] = xv[k.ntc ? (e * T + t) * I + i : (t * N + e) * I + i];
  auto out = naive(G == 4, units, k.L, D, H, seq);
  Vec want(T * N * D * H);
  for (size_t t = 0; t < T; ++t)
    for (size_t e = 0; e < N; ++e)
      for (size_t j = 0; j < D * H; ++j)
        want[(k.ntc ? e * T + t : t * N + e) * D * H + j] = out[t][e][j];
  expect_near(host(y), want, 1e-10);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  mxc_block_free(b);
}

TEST(RnnLayers, MatchNaiveLoops) {
  for (const char *kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    check_against_naive({kind, 1, false, false});
    check_against_naive({kind, 2, true, false});
    check_against_naive({kind, 2, false, true});
  }
}

double loss_of(mxc_block net, mxc_block loss, mxc_ndarray x, mxc_ndarray t) {
  mxc_ndarray y = forward(net, x);
  mxc_ndarray l = nullptr;
  mxc_ndarray in[2] = {y, t};
  EXPECT_EQ(mxc_block_forward(loss, 2, in, &l), MXC_OK) << mxc_last_error();
  double s = 0;
  for (double v : host(l)) s += v;
  mxc_ndarray_free(y);
  mxc_ndarray_free(l);
  return s;
}

void check_gradients(const char *kind) {
  mxc_block b = block(kind, {"hidden_size", "2", "bidirectional", "1",
                             "layout", "NTC"});
  init(b);
  mxc_block loss = block("l2_loss", {});
  mxc_ndarray x = make({2, 3, 2}, ramp(12, 1.0, 0.1), MXC_DTYPE_FLOAT64);
  mxc_ndarray t = make({2, 3, 4}, ramp(24, 0.5, 2.0), MXC_DTYPE_FLOAT64);
  OK(mxc_autograd_set_recording(1, nullptr));
  mxc_ndarray y = forward(b, x);
  mxc_ndarray l = nullptr;
  mxc_ndarray in[2] = {y, t};
  OK(mxc_block_forward(loss, 2, in, &l));
  OK(mxc_autograd_set_recording(0, nullptr));
  OK(mxc_autograd_backward(1, &l, nullptr, 0));
  int n = 0;
  OK(mxc_block_num_params(b, &n));
  ASSERT_EQ(n, 8);
  const double h = 1e-6;
  double max_g = 0;
  for (int i = 0; i < n; ++i) {
    mxc_ndarray p = nullptr, g = nullptr;
    OK(mxc_block_param(b, i, &p));
    OK(mxc_block_param_grad(b, i, &g));
    Vec pv = host(p), gv = host(g);
    for (size_t j = 0; j < pv.size(); ++j) {
      Vec q = pv;
      q[j] = pv[j] + h;
      OK(mxc_ndarray_copy_from_host(p, q.data(), q.size() * 8));
      double up = loss_of(b, loss, x, t);
      q[j] = pv[j] - h;
      OK(mxc_ndarray_copy_from_host(p, q.data(), q.size() * 8));
      double down = loss_of(b, loss, x, t);
      OK(mxc_ndarray_copy_from_host(p, pv.data(), pv.size() * 8));
      EXPECT_NEAR(gv[j], (up - down) / (2 * h), 1e-6)
          << param_name(b, i) << "[" << j << "]";
      max_g = std::max(max_g, std::fabs(gv[j]));
    }
    mxc_ndarray_free(p);
    mxc_ndarray_free(g);
  }
  EXPECT_GT(max_g, 1e-3);  // the comparison is not between zeros
  for (mxc_ndarray a : {x, t, y, l}) mxc_ndarray_free(a);
  mxc_block_free(b);
  mxc_block_free(loss);
}

TEST(RnnLayers, GradientsMatchFiniteDifferences) {
  check_gradients("lstm");
  check_gradients("gru");
}

// An LSTM (NTC) then a dense layer on its last axis, in a sequential block.
mxc_block seq_net(const char *kind) {
  mxc_block net = block("sequential", {});
  mxc_block r = block(kind, {"hidden_size", "5", "num_layers", "2", "layout",
                             "NTC", "bidirectional", "1"},
                      "enc");
  mxc_block d = block("dense", {"units", "3", "flatten", "0"}, "head");
  EXPECT_EQ(mxc_block_add(net, r), MXC_OK);
  EXPECT_EQ(mxc_block_add(net, d), MXC_OK);
  mxc_block_free(r);
  mxc_block_free(d);
  init(net);
  return net;
}

TEST(RnnLayers, HybridizedEqualsImperative) {
  for (const char *kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    mxc_block net = seq_net(kind);
    mxc_ndarray x = make({2, 4, 3}, ramp(24, 1.0, 0.5), MXC_DTYPE_FLOAT32);
    mxc_ndarray x5 = make({5, 4, 3}, ramp(60, 1.0, 0.7), MXC_DTYPE_FLOAT32);
    mxc_ndarray y = forward(net, x), y5 = forward(net, x5);
    OK(mxc_block_hybridize(net, 1));
    mxc_ndarray h = forward(net, x), h5 = forward(net, x5);
    EXPECT_EQ(shape_of(h), (std::vector<int64_t>{2, 4, 3}));
    expect_near(host(h), host(y), 1e-5);
    expect_near(host(h5), host(y5), 1e-5);
    for (mxc_ndarray a : {x, x5, y, y5, h, h5}) mxc_ndarray_free(a);
    mxc_block_free(net);
  }
}

Vec predict(const std::string &prefix, std::vector<int64_t> dims, const Vec &xv,
            size_t n_out);

// A user block around a GRU: its forward runs the child, then tanh.
int user_forward(void *, mxc_block self, int n_in, const mxc_ndarray *in,
                 mxc_ndarray *out) {
  if (n_in != 1) return MXC_ERR_INVALID_ARGUMENT;
  mxc_block c = nullptr;
  mxc_ndarray h = nullptr;
  int rc = mxc_block_child(self, 0, &c);
  if (rc == MXC_OK) rc = mxc_block_forward(c, 1, in, &h);
  mxc_block_free(c);
  mxc_op op = nullptr;
  if (rc == MXC_OK) rc = mxc_op_find("tanh", &op);
  *out = nullptr;
  if (rc == MXC_OK) rc = mxc_op_invoke(op, nullptr, nullptr, 0, &h, 1, out, 1, nullptr);
  mxc_ndarray_free(h);
  return rc;
}

// Traced (the begin state's operators are recorded, so the trace holds
// no constant), then exported: the traced graph loads in the predictor.
TEST(RnnLayers, UserBlockHoldingOneIsTracedAndExported) {
  mxc_block u = nullptr;
  OK(mxc_block_create_user("wrap", user_forward, nullptr, nullptr, &u));
  mxc_block r = block("gru", {"hidden_size", "4", "bidirectional", "1"}, "g");
  OK(mxc_block_add(u, r));
  mxc_block_free(r);
  init(u);
  Vec xv = ramp(30, 1.0, 0.2);
  mxc_ndarray x = make({5, 2, 3}, xv, MXC_DTYPE_FLOAT32);
  mxc_ndarray y = forward(u, x);
  OK(mxc_block_hybridize(u, 1));
  mxc_ndarray h = forward(u, x);
  expect_near(host(h), host(y), 1e-5);
  std::string prefix = tmp_path("wrapped");
  OK(mxc_block_export(u, prefix.c_str(), 1));
  expect_near(predict(prefix, {5, 2, 3}, xv, 80), host(y), 1e-5);
  for (mxc_ndarray a : {x, y, h}) mxc_ndarray_free(a);
  mxc_block_free(u);
}

std::vector<std::string> list_names(mxc_ndarray_list l) {
  int n = 0;
  EXPECT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const char *s = nullptr;
    EXPECT_EQ(mxc_ndarray_list_name(l, i, &s), MXC_OK);
    out.push_back(s);
  }
  return out;
}

// The predictor's output for input xv of shape dims.
Vec predict(const std::string &prefix, std::vector<int64_t> dims, const Vec &xv,
            size_t n_out) {
  const char *names[] = {"data"};
  int ndims[] = {3};
  mxc_predictor pred = nullptr;
  EXPECT_EQ(mxc_predictor_create_from_checkpoint(prefix.c_str(), 1,
                                                 MXC_DEVICE_CPU, 0, 1, names,
                                                 ndims, dims.data(), nullptr,
                                                 0, nullptr, &pred),
            MXC_OK)
      << mxc_last_error();
  if (!pred) return {};
  std::vector<float> xf(xv.begin(), xv.end()), out(n_out);
  EXPECT_EQ(mxc_predictor_set_input(pred, "data", xf.data(), xf.size() * 4), MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(mxc_predictor_forward(pred), MXC_OK) << mxc_last_error();
  EXPECT_EQ(mxc_predictor_get_output(pred, 0, out.data(), out.size() * 4), MXC_OK)
      << mxc_last_error();
  mxc_predictor_free(pred);
  return Vec(out.begin(), out.end());
}

// The graph Gluon (MXNet 1.x) exports for the same network, written here
// node by node as its rnn_layer.py and the JSON exporter make it: the
// begin states as _zeros of shape (L*D, 0, H) (0: the batch, left to
// inference), the input swapped to TNC, every weight then every bias
// flattened by Reshape(-1) in the order (weight|bias, layer, direction,
// i2h|h2h), packed by _rnn_param_concat, the RNN operator with
// state_outputs, the output swapped back, then the Dense head. It loads
// with mxc's own .params file (the same parameter names) and predicts
// what the block computes.
std::string gluon_graph(const char *mode) {
  std::string nodes, args;
  int n = 0;
  std::vector<int> row_ptr = {0};
  auto node = [&](const std::string &op, const std::string &name,
                  const std::string &attrs, const std::vector<int> &in,
                  int outs) {
    std::string inputs;
    for (int i : in) inputs += (inputs.empty() ? "" : ", ") + ("[" + std::to_string(i) + ", 0, 0]");
    nodes += std::string(n ? ",\n" : "") + "    {\"op\": \"" + op + "\", \"name\": \"" +
             name + "\"" + (attrs.empty() ? "" : ", \"attrs\": {" + attrs + "}") +
             ", \"inputs\": [" + inputs + "]}";
    if (op == "null") args += (args.empty() ? "" : ", ") + std::to_string(n);
    row_ptr.push_back(row_ptr.back() + outs);
    return n++;
  };
  int data = node("null", "data", "", {}, 1);
  int h0 = node("_zeros", "enc_h0_0",
                "\"__layout__\": \"LNC\", \"dtype\": \"float32\", \"shape\": \"(4, 0, 5)\"", {}, 1);
  int c0 = std::string(mode) == "lstm"
               ? node("_zeros", "enc_h0_1",
                      "\"__layout__\": \"LNC\", \"dtype\": \"float32\", \"shape\": \"(4, 0, 5)\"", {}, 1)
               : -1;
  int tnc = node("SwapAxis", "enc_swapaxes0", "\"dim1\": \"0\", \"dim2\": \"1\"", {data}, 1);
  std::vector<int> flat;
  for (const char *t : {"weight", "bias"})
    for (int l = 0; l < 2; ++l)
      for (const char *d : {"l", "r"})
        for (const char *g : {"i2h", "h2h"}) {
          std::string pname = std::string("enc_") + d + std::to_string(l) + "_" + g + "_" + t;
          int v = node("null", pname, "", {}, 1);
          flat.push_back(node("Reshape", "enc_reshape" + std::to_string(flat.size()),
                              "\"shape\": \"(-1,)\"", {v}, 1));
        }
  int packed = node("_rnn_param_concat", "enc_rnn_param_concat0",
                    "\"dim\": \"0\", \"num_args\": \"16\"", flat, 1);
  std::vector<int> rin = {tnc, packed, h0};
  if (c0 >= 0) rin.push_back(c0);
  int rnn = node("RNN", "enc_rnn0",
                 std::string("\"bidirectional\": \"True\", \"lstm_state_clip_max\": \"None\", "
                             "\"lstm_state_clip_min\": \"None\", \"lstm_state_clip_nan\": \"False\", "
                             "\"mode\": \"") + mode + "\", \"num_layers\": \"2\", \"p\": \"0.0\", "
                             "\"projection_size\": \"None\", \"state_outputs\": \"True\", "
                             "\"state_size\": \"5\", \"use_sequence_length\": \"False\"",
                 rin, c0 >= 0 ? 3 : 2);
  int ntc = node("SwapAxis", "enc_swapaxes1", "\"dim1\": \"0\", \"dim2\": \"1\"", {rnn}, 1);
  int w = node("null", "head_weight", "", {}, 1);
  int b = node("null", "head_bias", "", {}, 1);
  int fc = node("FullyConnected", "head_fwd",
                "\"flatten\": \"False\", \"no_bias\": \"False\", \"num_hidden\": \"3\"",
                {ntc, w, b}, 1);
  std::string rows;
  for (int r : row_ptr) rows += (rows.empty() ? "" : ", ") + std::to_string(r);
  return "{\n  \"nodes\": [\n" + nodes + "\n  ],\n  \"arg_nodes\": [" + args +
         "],\n  \"node_row_ptr\": [" + rows + "],\n  \"heads\": [[" +
         std::to_string(fc) + ", 0, 0]],\n  \"attrs\": {\"mxnet_version\": [\"int\", 10600]}\n}\n";
}

TEST(RnnLayers, ExportLoadsInThePredictor) {
  for (const char *kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    mxc_block net = seq_net(kind);
    Vec xv = ramp(24, 1.0, 0.5), x5v = ramp(60, 1.0, 0.7);
    mxc_ndarray x = make({2, 4, 3}, xv, MXC_DTYPE_FLOAT32);
    mxc_ndarray x5 = make({5, 4, 3}, x5v, MXC_DTYPE_FLOAT32);
    mxc_ndarray y = forward(net, x), y5 = forward(net, x5);
    std::string prefix = tmp_path(kind);
    OK(mxc_block_export(net, prefix.c_str(), 1));
    mxc_symbol sym = nullptr;
    mxc_ndarray_list args = nullptr, aux = nullptr;
    OK(mxc_checkpoint_load(prefix.c_str(), 1, &sym, &args, &aux));
    std::vector<std::string> names = list_names(args);
    EXPECT_EQ(names.size(), 18u);  // 2 layers x 2 directions x 4, dense 2
    EXPECT_EQ(names[0], "enc_l0_i2h_weight");
    EXPECT_EQ(names[5], "enc_r0_h2h_weight");
    EXPECT_EQ(names[15], "enc_r1_h2h_bias");
    expect_near(predict(prefix, {2, 4, 3}, xv, 24), host(y), 1e-5);
    expect_near(predict(prefix, {5, 4, 3}, x5v, 60), host(y5), 1e-5);
    // Gluon's graph of the same layers with these parameters.
    std::string gluon = prefix + "_gluon";
    {
      std::ofstream(gluon + "-symbol.json") << gluon_graph(kind);
      std::ifstream in(prefix + "-0001.params", std::ios::binary);
      std::ofstream(gluon + "-0001.params", std::ios::binary) << in.rdbuf();
    }
    expect_near(predict(gluon, {2, 4, 3}, xv, 24), host(y), 1e-5);
    expect_near(predict(gluon, {5, 4, 3}, x5v, 60), host(y5), 1e-5);
    mxc_symbol_free(sym);
    mxc_ndarray_list_free(args);
    mxc_ndarray_list_free(aux);
    for (mxc_ndarray a : {x, x5, y, y5}) mxc_ndarray_free(a);
    mxc_block_free(net);
  }
}

// The exported graph bound with gradients (as fit() trains a hybridized
// block through the executor) gives autograd's parameter gradients of the
// imperative pass, for the same head gradient.
TEST(RnnLayers, ExecutorGradientsEqualAutograds) {
  for (const char *kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    mxc_block net = seq_net(kind);
    mxc_ndarray x = make({2, 4, 3}, ramp(24, 1.0, 0.5), MXC_DTYPE_FLOAT32);
    mxc_ndarray hg = make({2, 4, 3}, ramp(24, 1.0, 1.1), MXC_DTYPE_FLOAT32);
    OK(mxc_autograd_set_recording(1, nullptr));
    mxc_ndarray y = forward(net, x);
    OK(mxc_autograd_set_recording(0, nullptr));
    OK(mxc_autograd_backward(1, &y, &hg, 0));
    std::string prefix = tmp_path("grad");
    OK(mxc_block_export(net, prefix.c_str(), 1));
    mxc_symbol sym = nullptr;
    mxc_ndarray_list args = nullptr, aux = nullptr;
    OK(mxc_checkpoint_load(prefix.c_str(), 1, &sym, &args, &aux));
    const char *names[] = {"data"};
    int ndims[] = {3}, reqs[] = {MXC_REQ_NULL};
    int64_t dims[] = {2, 4, 3};
    mxc_executor ex = nullptr;
    OK(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                                nullptr, MXC_REQ_WRITE, 1, names, reqs, 0, &ex));
    OK(mxc_executor_load_params(ex, (prefix + "-0001.params").c_str(), 0));
    mxc_ndarray data = nullptr, ey = nullptr;
    OK(mxc_executor_arg(ex, "data", &data));
    Vec xv = host(x);
    std::vector<float> xf(xv.begin(), xv.end());
    OK(mxc_ndarray_copy_from_host(data, xf.data(), xf.size() * 4));
    OK(mxc_executor_forward(ex, 1));
    OK(mxc_executor_backward(ex, 1, &hg));
    OK(mxc_executor_output(ex, 0, &ey));
    expect_near(host(ey), host(y), 1e-5);
    int n = 0;
    OK(mxc_block_num_params(net, &n));
    for (int i = 0; i < n; ++i) {
      mxc_ndarray g = nullptr, eg = nullptr;
      OK(mxc_block_param_grad(net, i, &g));
      OK(mxc_executor_grad(ex, param_name(net, i).c_str(), &eg));
      Vec a = host(eg), b = host(g);
      SCOPED_TRACE(param_name(net, i));
      expect_near(a, b, 1e-4);
      mxc_ndarray_free(g);
      mxc_ndarray_free(eg);
    }
    mxc_executor_free(ex);
    mxc_symbol_free(sym);
    mxc_ndarray_list_free(args);
    mxc_ndarray_list_free(aux);
    for (mxc_ndarray e : {x, hg, y, data, ey}) mxc_ndarray_free(e);
    mxc_block_free(net);
  }
}

int create(const char *kind, std::vector<const char *> kv) {
  std::vector<const char *> k, v;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    k.push_back(kv[i]);
    v.push_back(kv[i + 1]);
  }
  mxc_block b = nullptr;
  int rc = mxc_block_create(kind, nullptr, k.data(), v.data(), (int)k.size(), &b);
  mxc_block_free(b);
  return rc;
}

bool says(const char *what) {
  return std::string(mxc_last_error()).find(what) != std::string::npos;
}

TEST(RnnLayers, BadInputIsRefusedWithAMessage) {
  EXPECT_EQ(create("lstm", {}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("hidden_size is required")) << mxc_last_error();
  EXPECT_EQ(create("gru", {"hidden_size", "0"}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("hidden_size")) << mxc_last_error();
  EXPECT_EQ(create("lstm", {"hidden_size", "4", "layout", "CTN"}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("expected TNC or NTC")) << mxc_last_error();
  EXPECT_EQ(create("lstm", {"hidden_size", "4", "num_layers", "0"}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(create("lstm", {"hidden_size", "4", "dropout", "1.5"}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(create("gru", {"hidden_size", "4", "units", "3"}),
            MXC_ERR_INVALID_ARGUMENT);

  mxc_block b = block("lstm", {"hidden_size", "2", "input_size", "3"});
  init(b);
  mxc_ndarray x2 = make({4, 3}, ramp(12, 1, 0), MXC_DTYPE_FLOAT32);
  mxc_ndarray y = nullptr;
  EXPECT_EQ(mxc_block_forward(b, 1, &x2, &y), MXC_ERR_SHAPE);
  EXPECT_TRUE(says("expected 3 (sequence, batch, features")) << mxc_last_error();
  mxc_ndarray x4 = make({2, 1, 4}, ramp(8, 1, 0), MXC_DTYPE_FLOAT32);
  EXPECT_EQ(mxc_block_forward(b, 1, &x4, &y), MXC_ERR_SHAPE);
  EXPECT_TRUE(says("_l0_i2h_weight")) << mxc_last_error();
  EXPECT_EQ(y, nullptr);
  // Zero extents: no steps or no features are refused; an empty batch
  // gives an empty output.
  mxc_block z = block("gru", {"hidden_size", "2"});
  init(z);
  for (std::vector<int64_t> zs : {std::vector<int64_t>{0, 2, 3},
                                  std::vector<int64_t>{2, 2, 0},
                                  std::vector<int64_t>{2, 0, 3}}) {
    mxc_ndarray xz = make(zs, {}, MXC_DTYPE_FLOAT32), yz = nullptr;
    int rc = mxc_block_forward(z, 1, &xz, &yz);
    if (zs[1] == 0) {
      EXPECT_EQ(rc, MXC_OK) << mxc_last_error();
      if (yz) {
        EXPECT_EQ(shape_of(yz), (std::vector<int64_t>{2, 0, 2}));
      }
    } else {
      EXPECT_EQ(rc, MXC_ERR_SHAPE);
      EXPECT_TRUE(says("expected at least 1 of each")) << mxc_last_error();
    }
    mxc_ndarray_free(xz);
    mxc_ndarray_free(yz);
  }
  mxc_block_free(z);
  // Not yet made: nothing to export.
  EXPECT_EQ(mxc_block_export(b, tmp_path("unmade").c_str(), 0),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(x2);
  mxc_ndarray_free(x4);
  mxc_block_free(b);
}

}  // namespace
