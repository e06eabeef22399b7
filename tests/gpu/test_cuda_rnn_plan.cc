// The cuDNN RNN kernels' parameter plan (backends/cuda/rnn_plan.h) on the
// host: mxc's packed vector is cut into cuDNN's per-(pseudo-layer,
// linLayerID) matrices and biases as the plan says, a naive RNN that
// follows cuDNN's documented equations and ids (not mxc's code) runs on
// them, and its results must match mxc's CPU RNN operator through the C
// API (float64, every mode, 2 layers, one and two directions). The weight
// gradient goes back through the same plan: finite differences of the
// naive RNN with respect to cuDNN's matrices, placed into mxc's layout by
// the plan, must match _backward_RNN's dparameters. A plan that swaps two
// gates, the two biases or the directions fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/rnn_plan.h"
#include "mxc/mxc.h"

namespace {

using V = std::vector<double>;
using Dims = std::vector<int64_t>;

std::string Err() { return mxc_last_error(); }

struct Case {
  const char *mode;
  int mode_id, layers;
  bool bi;
};

const Case kCases[] = {
    {"rnn_relu", MXC__RNN_RELU, 2, true}, {"rnn_tanh", MXC__RNN_TANH, 2, true},
    {"lstm", MXC__RNN_LSTM, 2, true},     {"gru", MXC__RNN_GRU, 2, true},
    {"lstm", MXC__RNN_LSTM, 2, false},    {"gru", MXC__RNN_GRU, 1, false},
};

const int64_t T = 4, N = 3, I = 5, H = 3;

// ---- the naive RNN of cuDNN's documentation ----

using Key = std::pair<int, int>;  // (pseudo-layer, linLayerID)
struct CudnnWeights {
  std::map<Key, V> w, b;  // (H, cols) row-major, and (H)
};

// cuDNN's matrices, cut from mxc's vector as the plan says; each id
// exactly once and of the size cuDNN's documentation gives it.
CudnnWeights Place(const mxc__rnn_plan &pl, const V &packed) {
  CudnnWeights cw;
  int64_t G = pl.g.G;
  for (int k = 0; k < pl.n_mats; ++k) {
    mxc__rnn_mat m = mxc__rnn_plan_mat(&pl, k);
    Key key(m.pseudo_layer, m.lin_id);
    EXPECT_EQ(cw.w.count(key), 0u) << "matrix placed twice";
    int64_t layer = m.pseudo_layer / pl.g.D;
    int64_t in = layer == 0 ? pl.g.I : pl.g.D * pl.g.H;
    EXPECT_EQ(m.rows, pl.g.H);
    EXPECT_EQ(m.cols, m.lin_id < G ? in : pl.g.H);
    cw.w[key] =
        V(packed.begin() + m.w_off, packed.begin() + m.w_off + m.rows * m.cols);
    cw.b[key] = V(packed.begin() + m.b_off, packed.begin() + m.b_off + m.rows);
  }
  EXPECT_EQ((int64_t)cw.w.size(), pl.g.L * pl.g.D * 2 * G);
  return cw;
}

// W x + b for matrix `key` (x of its cols).
V Affine(const CudnnWeights &cw, Key key, const double *x) {
  const V &w = cw.w.at(key), &b = cw.b.at(key);
  int64_t cols = (int64_t)(w.size() / b.size());
  V r(b);
  for (size_t i = 0; i < b.size(); ++i) {
    for (int64_t j = 0; j < cols; ++j) r[i] += w[i * cols + j] * x[j];
  }
  return r;
}

double Sigm(double v) { return 1 / (1 + std::exp(-v)); }

struct Result {
  V y, hy, cy;
};

// One step of unit u (pseudo-layer) with cuDNN's equations; h, c updated.
void CellStep(int mode, int64_t G, const CudnnWeights &cw, int u,
              const double *x, V *h, V *c) {
  std::vector<V> a(G), r(G);
  for (int g = 0; g < G; ++g) {
    a[g] = Affine(cw, Key(u, g), x);                   // W_g x + bW_g
    r[g] = Affine(cw, Key(u, (int)G + g), h->data());  // R_g h + bR_g
  }
  for (int64_t j = 0; j < H; ++j) {
    if (mode == MXC__RNN_RELU) {
      (*h)[j] = std::fmax(0.0, a[0][j] + r[0][j]);
    } else if (mode == MXC__RNN_TANH) {
      (*h)[j] = std::tanh(a[0][j] + r[0][j]);
    } else if (mode == MXC__RNN_LSTM) {  // i, f, c', o
      double ig = Sigm(a[0][j] + r[0][j]), fg = Sigm(a[1][j] + r[1][j]);
      double cg = std::tanh(a[2][j] + r[2][j]), og = Sigm(a[3][j] + r[3][j]);
      (*c)[j] = fg * (*c)[j] + ig * cg;
      (*h)[j] = og * std::tanh((*c)[j]);
    } else {  // GRU: r, z, h' = tanh(W x + bW + r (R h + bR))
      double rg = Sigm(a[0][j] + r[0][j]), zg = Sigm(a[1][j] + r[1][j]);
      double hn = std::tanh(a[2][j] + rg * r[2][j]);
      (*h)[j] = (1 - zg) * hn + zg * (*h)[j];
    }
  }
}

Result NaiveCudnn(const mxc__rnn_plan &pl, const CudnnWeights &cw, const V &x,
                  const V &hx, const V &cx) {
  const mxc__rnn_geom &g = pl.g;
  int64_t DH = g.D * H;
  Result res{V(), V(hx.size()), V(cx.size())};
  V in = x;
  for (int64_t l = 0; l < g.L; ++l) {
    int64_t cols = l == 0 ? I : DH;
    V out((size_t)(T * N * DH));
    for (int64_t d = 0; d < g.D; ++d) {
      int u = (int)(l * g.D + d);
      for (int64_t n = 0; n < N; ++n) {
        V h(hx.begin() + (u * N + n) * H, hx.begin() + (u * N + n + 1) * H);
        V c(cx.begin() + (u * N + n) * H, cx.begin() + (u * N + n + 1) * H);
        for (int64_t k = 0; k < T; ++k) {
          int64_t t = d ? T - 1 - k : k;
          CellStep(g.mode, g.G, cw, u, &in[(t * N + n) * cols], &h, &c);
          for (int64_t j = 0; j < H; ++j)
            out[(t * N + n) * DH + d * H + j] = h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          res.hy[(u * N + n) * H + j] = h[j];
          res.cy[(u * N + n) * H + j] = c[j];
        }
      }
    }
    in = out;
  }
  res.y = in;
  return res;
}

// ---- mxc's CPU operator ----

mxc_ndarray Make(const Dims &d, const V &v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(d.data(), (int)d.size(), MXC_DTYPE_FLOAT64,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << Err();
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 8), MXC_OK);
  }
  return a;
}

V Read(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_wait_to_read(a), MXC_OK) << Err();
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  V v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 8), MXC_OK);
  return v;
}

struct Params {
  std::vector<std::string> k, v;
  std::vector<const char *> kp, vp;
  explicit Params(const Case &c) {
    k = {"mode", "state_size", "num_layers", "bidirectional", "state_outputs"};
    v = {c.mode, std::to_string(H), std::to_string(c.layers),
         c.bi ? "true" : "false", "true"};
    for (size_t i = 0; i < k.size(); ++i) {
      kp.push_back(k[i].c_str());
      vp.push_back(v[i].c_str());
    }
  }
};

// NULL slots of *out receive new arrays.
int Invoke(const char *name, const Params &p,
           const std::vector<mxc_ndarray> &in, std::vector<mxc_ndarray> *out) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  return mxc_op_invoke(op, p.kp.data(), p.vp.data(), (int)p.kp.size(),
                       in.data(), (int)in.size(), out->data(), (int)out->size(),
                       nullptr);
}

void FreeAll(const std::vector<mxc_ndarray> &v) {
  for (mxc_ndarray a : v) mxc_ndarray_free(a);
}

// The operator's hidden reserve (ops/linalg/rnn.c): per unit T*N*H*(G+2),
// per layer above the first 2*T*N*D*H.
int64_t ReserveSize(const mxc__rnn_geom &g) {
  return T * N * H * (g.G + 2) * g.L * g.D + 2 * T * N * g.D * H * (g.L - 1);
}

struct RnnSetup {
  Case c;
  mxc__rnn_plan pl;
  V x, w, hx, cx;
};

RnnSetup MakeRnnSetup(const Case &c, std::mt19937 *rng) {
  RnnSetup s{c, {}, {}, {}, {}, {}};
  mxc__rnn_param p = {};
  p.state_size = H;
  p.num_layers = c.layers;
  p.bidirectional = c.bi;
  p.mode = c.mode_id;
  p.state_outputs = 1;
  p.lstm_state_clip_min = p.lstm_state_clip_max = NAN;
  int64_t dims[3] = {T, N, I};
  char why[256];
  EXPECT_EQ(mxc__rnn_plan_make(&p, dims, 1, &s.pl, why, sizeof why), MXC_OK)
      << why;
  std::uniform_real_distribution<double> u(-0.8, 0.8);
  auto fill = [&](int64_t n) {
    V v((size_t)n);
    for (auto &e : v) e = u(*rng);
    return v;
  };
  s.x = fill(T * N * I);
  s.w = fill(s.pl.n_params);
  s.hx = fill(s.pl.n_h);
  s.cx = fill(s.pl.n_h);
  return s;
}

std::vector<mxc_ndarray> Inputs(const RnnSetup &s) {
  int64_t LD = s.pl.g.L * s.pl.g.D;
  std::vector<mxc_ndarray> in = {
      Make({T, N, I}, s.x), Make({s.pl.n_params}, s.w), Make({LD, N, H}, s.hx)};
  if (s.pl.lstm) in.push_back(Make({LD, N, H}, s.cx));
  return in;
}

void ExpectNear(const std::string &what, const V &got, const V &want,
                double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol) << what << " element " << i;
  }
}

std::string Name(const Case &c) {
  return std::string(c.mode) + " layers " + std::to_string(c.layers) +
         (c.bi ? " bidirectional" : "");
}

// Forward: the naive cuDNN RNN on the plan's matrices is mxc's RNN.
TEST(CudaRnnPlan, NaiveCudnnMatchesTheCpuOperator) {
  std::mt19937 rng(17);
  for (const Case &c : kCases) {
    RnnSetup s = MakeRnnSetup(c, &rng);
    Result want = NaiveCudnn(s.pl, Place(s.pl, s.w), s.x, s.hx, s.cx);
    std::vector<mxc_ndarray> in = Inputs(s);
    std::vector<mxc_ndarray> out(2 + s.pl.lstm, nullptr);
    ASSERT_EQ(Invoke("RNN", Params(c), in, &out), MXC_OK) << Err();
    ExpectNear(Name(c) + " out", Read(out[0]), want.y, 1e-12);
    ExpectNear(Name(c) + " hy", Read(out[1]), want.hy, 1e-12);
    if (s.pl.lstm) ExpectNear(Name(c) + " cy", Read(out[2]), want.cy, 1e-12);
    FreeAll(in);
    FreeAll(out);
  }
}

// sum(y wy) + sum(hy wh) + sum(cy wc) of the naive cuDNN RNN.
double Loss(const RnnSetup &s, const CudnnWeights &cw, const V &wy, const V &wh,
            const V &wc) {
  Result r = NaiveCudnn(s.pl, cw, s.x, s.hx, s.cx);
  double l = 0;
  for (size_t i = 0; i < r.y.size(); ++i) l += r.y[i] * wy[i];
  for (size_t i = 0; i < r.hy.size(); ++i) l += r.hy[i] * wh[i];
  for (size_t i = 0; i < r.cy.size(); ++i) l += r.cy[i] * wc[i];
  return l;
}

// Central differences of Loss with respect to every element of cuDNN's
// matrices and biases, written into mxc's layout through the plan (what
// the kernel's copy back from cuDNN's weight gradient does).
V PlanGradient(const RnnSetup &s, const V &wy, const V &wh, const V &wc) {
  CudnnWeights cw = Place(s.pl, s.w);
  V grad((size_t)s.pl.n_params, NAN);
  const double eps = 1e-6;
  for (int k = 0; k < s.pl.n_mats; ++k) {
    mxc__rnn_mat m = mxc__rnn_plan_mat(&s.pl, k);
    Key key(m.pseudo_layer, m.lin_id);
    for (int bias = 0; bias < 2; ++bias) {
      V &t = bias ? cw.b[key] : cw.w[key];
      int64_t off = bias ? m.b_off : m.w_off;
      for (size_t i = 0; i < t.size(); ++i) {
        double keep = t[i];
        t[i] = keep + eps;
        double lp = Loss(s, cw, wy, wh, wc);
        t[i] = keep - eps;
        double lm = Loss(s, cw, wy, wh, wc);
        t[i] = keep;
        grad[(size_t)off + i] = (lp - lm) / (2 * eps);
      }
    }
  }
  return grad;
}

// Backward: _backward_RNN's dparameters are the plan's placement of the
// naive cuDNN RNN's weight gradient (every element covered: no NaN left).
TEST(CudaRnnPlan, WeightGradientGoesBackThroughThePlan) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const Case &c : kCases) {
    RnnSetup s = MakeRnnSetup(c, &rng);
    V wy((size_t)s.pl.n_y), wh((size_t)s.pl.n_h), wc((size_t)s.pl.n_h, 0.0);
    for (auto &e : wy) e = u(rng);
    for (auto &e : wh) e = u(rng);
    if (s.pl.lstm) {
      for (auto &e : wc) e = u(rng);
    }
    V want = PlanGradient(s, wy, wh, wc);
    std::vector<mxc_ndarray> in = Inputs(s);
    int64_t LD = s.pl.g.L * s.pl.g.D;
    std::vector<mxc_ndarray> out = {Make({T, N, s.pl.g.D * H}, {}),
                                    Make({LD, N, H}, {})};
    if (s.pl.lstm) out.push_back(Make({LD, N, H}, {}));
    out.push_back(Make({ReserveSize(s.pl.g)}, {}));
    int prev = 0;
    ASSERT_EQ(mxc_set_training(1, &prev), MXC_OK);
    ASSERT_EQ(Invoke("RNN", Params(c), in, &out), MXC_OK) << Err();
    std::vector<mxc_ndarray> bin = {Make({T, N, s.pl.g.D * H}, wy),
                                    Make({LD, N, H}, wh)};
    if (s.pl.lstm) bin.push_back(Make({LD, N, H}, wc));
    bin.insert(bin.end(), in.begin(), in.end());
    bin.insert(bin.end(), out.begin(), out.end());
    std::vector<mxc_ndarray> grads(3 + s.pl.lstm, nullptr);
    ASSERT_EQ(Invoke("_backward_RNN", Params(c), bin, &grads), MXC_OK) << Err();
    ExpectNear(Name(c) + " dparameters", Read(grads[1]), want, 1e-6);
    mxc_set_training(prev, nullptr);
    FreeAll(bin);
    FreeAll(grads);
  }
}

// The data input's index, as the kernels find it.
TEST(CudaRnnPlan, DataInputIndex) {
  mxc__rnn_param p = {};
  p.mode = MXC__RNN_LSTM;
  EXPECT_EQ(mxc__rnn_plan_data_input(&p, 0), 0);
  EXPECT_EQ(mxc__rnn_plan_data_input(&p, 1), 1);
  p.state_outputs = 1;
  EXPECT_EQ(mxc__rnn_plan_data_input(&p, 1), 3);
  p.mode = MXC__RNN_GRU;
  EXPECT_EQ(mxc__rnn_plan_data_input(&p, 1), 2);
}

// What cuDNN does not do as the CPU does is refused with a reason.
TEST(CudaRnnPlan, RefusesWhatCudnnComputesOtherwise) {
  mxc__rnn_param p = {};
  p.state_size = 2;
  p.num_layers = 2;
  p.mode = MXC__RNN_LSTM;
  p.lstm_state_clip_min = p.lstm_state_clip_max = NAN;
  int64_t dims[3] = {3, 2, 4};
  mxc__rnn_plan pl;
  char why[256] = "";
  p.p = 0.5;
  EXPECT_EQ(mxc__rnn_plan_make(&p, dims, 0, &pl, why, sizeof why), MXC_OK);
  EXPECT_EQ(mxc__rnn_plan_make(&p, dims, 1, &pl, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("dropout"), std::string::npos) << why;
  p.p = 0;
  p.use_sequence_length = 1;
  EXPECT_EQ(mxc__rnn_plan_make(&p, dims, 0, &pl, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("sequence_length"), std::string::npos);
  p.use_sequence_length = 0;
  p.lstm_state_clip_min = -1;
  p.lstm_state_clip_max = 1;
  EXPECT_EQ(mxc__rnn_plan_make(&p, dims, 0, &pl, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("clipping"), std::string::npos);
}

}  // namespace
