// backends/cuda/dnn_plan.h, on every machine: the descriptor values the
// cuDNN kernels hand to cuDNN. A naive host convolution that reads only
// the plan (dims, strides, pads, strides, dilations, groups, beta), with
// cuDNN's semantics (cross-correlation, output = result + beta * output,
// bias added by cudnnAddTensor, bias gradient summed over all but the
// channel axis), must give what mxc's CPU operators give through the C
// API, forward and backward, write and add. A wrong transposition, pad or
// group mapping in the plan fails here without a GPU (ABrokenPlanFails
// shows that it does).
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "backends/cuda/dnn_plan.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/half_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;

struct Case {
  Dims data;
  std::vector<std::pair<std::string, std::string>> params;
};

// Mixed geometry: groups, dilation, stride, pad, asymmetric extents,
// 1-D, 2-D and 3-D, with and without bias.
const std::vector<Case> kCases = {
    {{2, 3, 7, 5}, {{"kernel", "(3,2)"}, {"num_filter", "4"}}},
    {{2, 4, 9, 8},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,1)"}, {"pad", "(1,2)"}, {"dilate", "(1,2)"}}},
    {{1, 6, 5, 11},
     {{"kernel", "(2,3)"}, {"num_filter", "3"}, {"num_group", "3"},
      {"stride", "(1,3)"}, {"pad", "(0,1)"}, {"no_bias", "true"}}},
    {{3, 2, 13},
     {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(2,)"},
      {"pad", "(3,)"}, {"dilate", "(2,)"}}},
    {{2, 4, 5, 6, 4},
     {{"kernel", "(2,3,2)"}, {"num_filter", "4"}, {"num_group", "2"},
      {"stride", "(1,2,1)"}, {"pad", "(1,0,1)"}, {"dilate", "(2,1,1)"}}},
    {{2, 3, 4, 4}, {{"kernel", "(1,1)"}, {"num_filter", "2"}}},
};

std::string Err() { return mxc_last_error(); }

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

Vec Random(int64_t n, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Vec v((size_t)n);
  for (auto &x : v) x = u(*g);
  return v;
}

// The parsed mxc__conv_param, as the operator gets it (defaults filled).
struct Params {
  void *p = nullptr;
  std::vector<const char *> keys, vals;
  explicit Params(const Case &c, const char *op = "Convolution") {
    for (const auto &kv : c.params) {
      keys.push_back(kv.first.c_str());
      vals.push_back(kv.second.c_str());
    }
    EXPECT_EQ(mxc__op_parse_params(mxc__op_find(op), keys.data(),
                                   vals.data(), (int)keys.size(), &p),
              MXC_OK)
        << Err();
  }
  ~Params() { mxc__free(p); }
};

mxc__dnn_conv_plan MakePlan(const Case &c, const Params &prm) {
  mxc__dnn_conv_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_conv_plan_make(prm.p, c.data.data(), (int)c.data.size(),
                                    nullptr, &pl, why, sizeof why),
            MXC_OK)
      << why;
  return pl;
}

// ---- the naive cuDNN, reading nothing but the plan ----

int64_t Count(const mxc__dnn_tensor &t, int nb) {
  int64_t n = 1;
  for (int i = 0; i < nb; ++i) n *= t.dims[i];
  return n;
}

// Calls f(x index, w index, y index) for every multiply of the
// convolution the plan describes (cross-correlation, groups).
void ForEachTap(const mxc__dnn_conv_plan &p,
                const std::function<void(int64_t, int64_t, int64_t)> &f) {
  int sp = p.nbdims - 2;
  int F = p.w.dims[0], Cg = p.w.dims[1], Fg = F / p.groups;
  int od[3] = {1, 1, 1}, kd[3] = {1, 1, 1};
  for (int j = 0; j < sp; ++j) od[j] = p.y.dims[2 + j], kd[j] = p.w.dims[2 + j];
  for (int n = 0; n < p.x.dims[0]; ++n)
    for (int fo = 0; fo < F; ++fo)
      for (int c = 0; c < Cg; ++c)
        for (int o0 = 0; o0 < od[0]; ++o0)
          for (int o1 = 0; o1 < od[1]; ++o1)
            for (int o2 = 0; o2 < od[2]; ++o2)
              for (int k0 = 0; k0 < kd[0]; ++k0)
                for (int k1 = 0; k1 < kd[1]; ++k1)
                  for (int k2 = 0; k2 < kd[2]; ++k2) {
                    int o[3] = {o0, o1, o2}, k[3] = {k0, k1, k2};
                    int ic = fo / Fg * Cg + c;
                    int64_t xi = (int64_t)n * p.x.strides[0] +
                                 (int64_t)ic * p.x.strides[1];
                    int64_t wi = (int64_t)fo * p.w.strides[0] +
                                 (int64_t)c * p.w.strides[1];
                    int64_t yi = (int64_t)n * p.y.strides[0] +
                                 (int64_t)fo * p.y.strides[1];
                    bool inside = true;
                    for (int j = 0; j < sp; ++j) {
                      int at = o[j] * p.stride[j] - p.pad[j] +
                               k[j] * p.dilation[j];
                      inside = inside && at >= 0 && at < p.x.dims[2 + j];
                      xi += (int64_t)at * p.x.strides[2 + j];
                      wi += (int64_t)k[j] * p.w.strides[2 + j];
                      yi += (int64_t)o[j] * p.y.strides[2 + j];
                    }
                    if (inside) f(xi, wi, yi);
                  }
}

// out = acc + beta * out, as cuDNN's alpha = 1 / beta arguments.
void Blend(const std::vector<double> &acc, int beta, Vec *out) {
  for (size_t i = 0; i < acc.size(); ++i) {
    (*out)[i] = (float)(acc[i] + (beta ? (*out)[i] : 0.0));
  }
}

void NaiveForward(const mxc__dnn_conv_plan &p, const Vec &x, const Vec &w,
                  const Vec *b, int beta, Vec *y) {
  std::vector<double> acc((size_t)Count(p.y, p.nbdims), 0.0);
  ForEachTap(p, [&](int64_t xi, int64_t wi, int64_t yi) {
    acc[yi] += (double)x[xi] * w[wi];
  });
  Blend(acc, beta, y);
  if (!b) return;
  // cudnnAddTensor(alpha 1, bias (1, F, 1...), beta 1, y): broadcast
  // over every axis whose bias dim is 1.
  for (int64_t i = 0; i < (int64_t)y->size(); ++i) {
    int64_t bi = 0, r = i;
    for (int d = 0; d < p.nbdims; ++d) {
      int64_t at = r / p.y.strides[d];
      r %= p.y.strides[d];
      if (p.b.dims[d] != 1) bi += at * p.b.strides[d];
    }
    (*y)[i] += (*b)[bi];
  }
}

struct Grads {
  Vec dx, dw, db;
};

void NaiveBackward(const mxc__dnn_conv_plan &p, const Vec &dy, const Vec &x,
                   const Vec &w, const int beta[3], Grads *g) {
  std::vector<double> dx(g->dx.size(), 0.0), dw(g->dw.size(), 0.0);
  ForEachTap(p, [&](int64_t xi, int64_t wi, int64_t yi) {
    dx[xi] += (double)dy[yi] * w[wi];
    dw[wi] += (double)dy[yi] * x[xi];
  });
  Blend(dx, beta[0], &g->dx);
  Blend(dw, beta[1], &g->dw);
  if (g->db.empty()) return;
  std::vector<double> db(g->db.size(), 0.0);
  for (int64_t i = 0; i < (int64_t)dy.size(); ++i) {
    db[(size_t)(i / p.y.strides[1] % p.y.dims[1])] += dy[(size_t)i];
  }
  Blend(db, beta[2], &g->db);
}

// ---- mxc's CPU operators through the C API ----

mxc_ndarray Cpu(const Dims &d, const Vec &v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(d.data(), (int)d.size(), MXC_DTYPE_FLOAT32,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << Err();
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK);
  return a;
}

// Runs op on CPU arrays; outs hold the initial values and get the results.
void RunCpu(const char *name, const Case &c, const std::vector<Dims> &in_d,
            const std::vector<Vec> &in, const std::vector<Dims> &out_d,
            std::vector<Vec> *outs, const std::vector<int> &req) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << Err();
  Params prm(c, name);
  std::vector<mxc_ndarray> ins, os;
  for (size_t i = 0; i < in.size(); ++i) ins.push_back(Cpu(in_d[i], in[i]));
  for (size_t i = 0; i < outs->size(); ++i) {
    os.push_back(Cpu(out_d[i], (*outs)[i]));
  }
  ASSERT_EQ(mxc_op_invoke(op, prm.keys.data(), prm.vals.data(),
                          (int)prm.keys.size(), ins.data(), (int)ins.size(),
                          os.data(), (int)os.size(), req.data()),
            MXC_OK)
      << Err();
  for (size_t i = 0; i < os.size(); ++i) {
    ASSERT_EQ(mxc_ndarray_copy_to_host(os[i], (*outs)[i].data(),
                                       (*outs)[i].size() * 4),
              MXC_OK)
        << Err();
  }
  for (mxc_ndarray a : ins) mxc_ndarray_free(a);
  for (mxc_ndarray a : os) mxc_ndarray_free(a);
}

// Largest |a - b| relative to the largest |b| (at least 1): both sum the
// same products in another order.
double RelErr(const Vec &a, const Vec &b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0, scale = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::fmax(scale, std::fabs(b[i]));
  }
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::fmax(worst, std::fabs((double)a[i] - b[i]));
  }
  return worst / scale;
}

const double kTol = 1e-5;

Dims YDims(const mxc__dnn_conv_plan &p, size_t ndim) {
  Dims d = {p.y.dims[0], p.y.dims[1]};
  for (size_t i = 2; i < ndim; ++i) {
    d.push_back(p.y.dims[ndim == 3 ? 3 : i]);
  }
  return d;
}

Dims WDims(const mxc__dnn_conv_plan &p, size_t ndim) {
  Dims d = {p.w.dims[0], p.w.dims[1]};
  for (size_t i = 2; i < ndim; ++i) d.push_back(p.w.dims[ndim == 3 ? 3 : i]);
  return d;
}

// The forward of one case in write or add mode: (naive, cpu) outputs.
std::pair<Vec, Vec> Forward(const Case &c, const mxc__dnn_conv_plan &pl,
                            int req, std::mt19937 *g) {
  Dims wd = WDims(pl, c.data.size()), yd = YDims(pl, c.data.size());
  Vec x = Random(Numel(c.data), g), w = Random(Numel(wd), g);
  Vec b = Random(pl.w.dims[0], g), y0 = Random(Numel(yd), g);
  std::vector<Dims> in_d = {c.data, wd};
  std::vector<Vec> in = {x, w};
  if (pl.has_bias) in_d.push_back({pl.w.dims[0]}), in.push_back(b);
  std::vector<Vec> cpu = {y0};
  RunCpu("Convolution", c, in_d, in, {yd}, &cpu, {req});
  Vec naive = y0;
  NaiveForward(pl, x, w, pl.has_bias ? &b : nullptr, mxc__dnn_beta(req),
               &naive);
  return {naive, cpu[0]};
}

TEST(CudaDnnPlan, ForwardFollowsTheCpuOperator) {
  std::mt19937 g(17);
  for (size_t i = 0; i < kCases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    Params prm(kCases[i]);
    mxc__dnn_conv_plan pl = MakePlan(kCases[i], prm);
    for (int req : {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_ADD}) {
      auto r = Forward(kCases[i], pl, req, &g);
      EXPECT_LT(RelErr(r.first, r.second), kTol) << "req " << req;
    }
  }
}

TEST(CudaDnnPlan, BackwardFollowsTheCpuOperator) {
  std::mt19937 g(18);
  for (size_t i = 0; i < kCases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case &c = kCases[i];
    Params prm(c);
    mxc__dnn_conv_plan pl = MakePlan(c, prm);
    Dims wd = WDims(pl, c.data.size()), yd = YDims(pl, c.data.size());
    Vec dy = Random(Numel(yd), &g), x = Random(Numel(c.data), &g);
    Vec w = Random(Numel(wd), &g), b = Random(pl.w.dims[0], &g);
    std::vector<Dims> in_d = {yd, c.data, wd}, out_d = {c.data, wd};
    std::vector<Vec> in = {dy, x, w};
    Grads init = {Random(Numel(c.data), &g), Random(Numel(wd), &g), {}};
    if (pl.has_bias) {
      in_d.push_back({pl.w.dims[0]}), in.push_back(b);
      out_d.push_back({pl.w.dims[0]}), init.db = Random(pl.w.dims[0], &g);
    }
    // Each output in its own mode: add, write, add.
    std::vector<int> req = {MXC__GPU_REQ_ADD, MXC__GPU_REQ_WRITE,
                            MXC__GPU_REQ_ADD};
    req.resize(out_d.size());
    std::vector<Vec> cpu = {init.dx, init.dw};
    if (pl.has_bias) cpu.push_back(init.db);
    RunCpu("_backward_Convolution", c, in_d, in, out_d, &cpu, req);
    int beta[3] = {1, 0, 1};
    Grads naive = init;
    NaiveBackward(pl, dy, x, w, beta, &naive);
    EXPECT_LT(RelErr(naive.dx, cpu[0]), kTol) << "data gradient";
    EXPECT_LT(RelErr(naive.dw, cpu[1]), kTol) << "weight gradient";
    if (pl.has_bias) {
      EXPECT_LT(RelErr(naive.db, cpu[2]), kTol) << "bias gradient";
    }
  }
}

// The test can fail: a plan with one wrong value (the pad of the other
// axis, the group count, the 1-D axis placed first) disagrees.
TEST(CudaDnnPlan, ABrokenPlanFails) {
  std::mt19937 g(19);
  std::vector<std::function<void(mxc__dnn_conv_plan *)>> breaks = {
      [](mxc__dnn_conv_plan *p) { std::swap(p->pad[0], p->pad[1]); },
      [](mxc__dnn_conv_plan *p) { std::swap(p->stride[0], p->stride[1]); },
      [](mxc__dnn_conv_plan *p) { p->dilation[1] = 1; },
  };
  Params prm(kCases[1]);
  for (size_t i = 0; i < breaks.size(); ++i) {
    mxc__dnn_conv_plan pl = MakePlan(kCases[1], prm);
    mxc__dnn_conv_plan bad = pl;
    breaks[i](&bad);
    bad.y = pl.y;  // same output extents: only the mapping differs
    auto r = Forward(kCases[1], bad, MXC__GPU_REQ_WRITE, &g);
    EXPECT_GT(RelErr(r.first, r.second), 1e-2) << "break " << i;
  }
}

TEST(CudaDnnPlan, OneDIsTwoDWithTheAxisLast) {
  Params prm(kCases[3]);
  mxc__dnn_conv_plan pl = MakePlan(kCases[3], prm);
  EXPECT_EQ(pl.nbdims, 4);
  EXPECT_EQ(pl.x.dims[2], 1);
  EXPECT_EQ(pl.x.dims[3], 13);
  EXPECT_EQ(pl.w.dims[2], 1);
  EXPECT_EQ(pl.pad[0], 0);
  EXPECT_EQ(pl.pad[1], 3);
  EXPECT_EQ(pl.dilation[1], 2);
  EXPECT_EQ(pl.y.dims[3], (13 + 6 - 7) / 2 + 1);
}

TEST(CudaDnnPlan, RefusesWhatCudnnCannotDescribe) {
  Case big = {{1, (int64_t)1 << 32, 3, 3},
              {{"kernel", "(1,1)"}, {"num_filter", "1"}}};
  Params prm(big);
  mxc__dnn_conv_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_conv_plan_make(prm.p, big.data.data(), 4, nullptr, &pl,
                                    why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("int"), std::string::npos) << why;
  Case empty = {{2, 0, 3, 3}, {{"kernel", "(1,1)"}, {"num_filter", "1"}}};
  Params prm2(empty);
  EXPECT_EQ(mxc__dnn_conv_plan_make(prm2.p, empty.data.data(), 4, nullptr,
                                    &pl, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("empty"), std::string::npos) << why;
}

TEST(CudaDnnPlan, ChecksTheOutputArray) {
  Params prm(kCases[0]);
  mxc__gpu_array out = {};
  out.ndim = 4;
  int64_t right[4] = {2, 4, 5, 4};
  for (int i = 0; i < 4; ++i) out.dims[i] = right[i];
  mxc__dnn_conv_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_conv_plan_make(prm.p, kCases[0].data.data(), 4, &out,
                                    &pl, why, sizeof why),
            MXC_OK)
      << why;
  out.dims[3] = 5;
  EXPECT_EQ(mxc__dnn_conv_plan_make(prm.p, kCases[0].data.data(), 4, &out,
                                    &pl, why, sizeof why),
            MXC_ERR_SHAPE);
}

TEST(CudaDnnPlan, BetaPerWriteMode) {
  EXPECT_EQ(mxc__dnn_beta(MXC__GPU_REQ_WRITE), 0);
  EXPECT_EQ(mxc__dnn_beta(MXC__GPU_REQ_INPLACE), 0);
  EXPECT_EQ(mxc__dnn_beta(MXC__GPU_REQ_ADD), 1);
  EXPECT_EQ(mxc__dnn_beta(MXC__GPU_REQ_NULL), -1);
}

// ---- pooling ----

// Max, avg with and without padding in the divisor, global, 1-D to 3-D,
// a 'full' convention whose windows are the floor rule's.
const std::vector<Case> kPools = {
    {{2, 3, 7, 6}, {{"kernel", "(3,2)"}, {"stride", "(2,2)"}}},
    {{1, 2, 9, 8},
     {{"kernel", "(3,3)"}, {"stride", "(2,1)"}, {"pad", "(1,2)"},
      {"pool_type", "avg"}}},
    {{1, 2, 9, 8},
     {{"kernel", "(3,3)"}, {"stride", "(2,1)"}, {"pad", "(1,2)"},
      {"pool_type", "avg"}, {"count_include_pad", "false"}}},
    {{2, 2, 8, 7}, {{"kernel", "(2,3)"}, {"pad", "(1,1)"}}},
    {{3, 2, 11},
     {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"},
      {"pool_type", "avg"}, {"count_include_pad", "false"}}},
    {{2, 2, 5, 6, 4},
     {{"kernel", "(2,3,2)"}, {"stride", "(1,2,2)"}, {"pad", "(1,1,0)"}}},
    {{2, 3, 5, 7}, {{"global_pool", "true"}, {"pool_type", "avg"}}},
    {{2, 3, 5, 7},
     {{"kernel", "(3,3)"}, {"stride", "(2,2)"},
      {"pooling_convention", "full"}}},
};

mxc__dnn_pool_plan MakePool(const Case &c, const Params &prm) {
  mxc__dnn_pool_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_pool_plan_make(prm.p, c.data.data(), (int)c.data.size(),
                                    nullptr, &pl, why, sizeof why),
            MXC_OK)
      << why;
  return pl;
}

// Calls f(y index, x indices of the window's input elements, divisor)
// for every output element, with cuDNN's windows.
void ForEachWindow(
    const mxc__dnn_pool_plan &p,
    const std::function<void(int64_t, const std::vector<int64_t> &, double)>
        &f) {
  int sp = p.nbdims - 2;
  int64_t planes = (int64_t)p.x.dims[0] * p.x.dims[1];
  int od[3] = {1, 1, 1};
  for (int j = 0; j < sp; ++j) od[j] = p.y.dims[2 + j];
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int o0 = 0; o0 < od[0]; ++o0)
      for (int o1 = 0; o1 < od[1]; ++o1)
        for (int o2 = 0; o2 < od[2]; ++o2) {
          int o[3] = {o0, o1, o2}, lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
          double full = 1;
          int64_t yi = pl * p.y.strides[1];
          for (int j = 0; j < sp; ++j) {
            int a = o[j] * p.stride[j] - p.pad[j];
            lo[j] = std::max(a, 0);
            hi[j] = std::min(a + p.window[j], p.x.dims[2 + j]);
            full *= p.window[j];
            yi += (int64_t)o[j] * p.y.strides[2 + j];
          }
          std::vector<int64_t> xs;
          for (int a = lo[0]; a < hi[0]; ++a)
            for (int b = lo[1]; b < hi[1]; ++b)
              for (int c = lo[2]; c < hi[2]; ++c) {
                int at[3] = {a, b, c};
                int64_t xi = pl * p.x.strides[1];
                for (int j = 0; j < sp; ++j) {
                  xi += (int64_t)at[j] * p.x.strides[2 + j];
                }
                xs.push_back(xi);
              }
          double div = p.mode == MXC__DNN_POOL_AVG_INCLUDE_PAD
                           ? full
                           : (double)xs.size();
          f(yi, xs, div);
        }
}

// The first maximum of the window (row-major), as the gradient goes.
int64_t ArgMax(const Vec &x, const std::vector<int64_t> &xs) {
  int64_t best = xs[0];
  for (int64_t i : xs) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

void NaivePool(const mxc__dnn_pool_plan &p, const Vec &x, int beta, Vec *y) {
  std::vector<double> acc(y->size(), 0.0);
  ForEachWindow(p, [&](int64_t yi, const std::vector<int64_t> &xs,
                       double div) {
    if (p.mode == MXC__DNN_POOL_MAX) {
      acc[yi] = x[ArgMax(x, xs)];
      return;
    }
    double s = 0;
    for (int64_t i : xs) s += x[i];
    acc[yi] = s / div;
  });
  Blend(acc, beta, y);
}

void NaivePoolGrad(const mxc__dnn_pool_plan &p, const Vec &dy, const Vec &x,
                   int beta, Vec *dx) {
  std::vector<double> acc(dx->size(), 0.0);
  ForEachWindow(p, [&](int64_t yi, const std::vector<int64_t> &xs,
                       double div) {
    if (p.mode == MXC__DNN_POOL_MAX) {
      acc[ArgMax(x, xs)] += dy[yi];
      return;
    }
    for (int64_t i : xs) acc[i] += dy[yi] / div;
  });
  Blend(acc, beta, dx);
}

Dims PoolYDims(const mxc__dnn_pool_plan &p, size_t ndim) {
  Dims d = {p.y.dims[0], p.y.dims[1]};
  for (size_t i = 2; i < ndim; ++i) d.push_back(p.y.dims[ndim == 3 ? 3 : i]);
  return d;
}

TEST(CudaDnnPoolPlan, ForwardAndBackwardFollowTheCpuOperator) {
  std::mt19937 g(21);
  for (size_t i = 0; i < kPools.size(); ++i) {
    SCOPED_TRACE("pooling case " + std::to_string(i));
    const Case &c = kPools[i];
    Params prm(c, "Pooling");
    mxc__dnn_pool_plan pl = MakePool(c, prm);
    Dims yd = PoolYDims(pl, c.data.size());
    Vec x = Random(Numel(c.data), &g), dy = Random(Numel(yd), &g);
    for (int req : {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_ADD}) {
      Vec y0 = Random(Numel(yd), &g), dx0 = Random(Numel(c.data), &g);
      std::vector<Vec> cpu = {y0};
      RunCpu("Pooling", c, {c.data}, {x}, {yd}, &cpu, {req});
      Vec naive = y0;
      NaivePool(pl, x, mxc__dnn_beta(req), &naive);
      EXPECT_LT(RelErr(naive, cpu[0]), kTol) << "forward, req " << req;
      std::vector<Vec> cpu_dx = {dx0};
      RunCpu("_backward_Pooling", c, {yd, c.data}, {dy, x}, {c.data}, &cpu_dx,
             {req});
      Vec naive_dx = dx0;
      NaivePoolGrad(pl, dy, x, mxc__dnn_beta(req), &naive_dx);
      EXPECT_LT(RelErr(naive_dx, cpu_dx[0]), kTol) << "backward, req " << req;
    }
  }
}

// The pooling comparison can fail too: a swapped pad, an include-pad
// divisor where the operator excludes it.
TEST(CudaDnnPoolPlan, ABrokenPlanFails) {
  std::mt19937 g(22);
  const Case &c = kPools[2];
  Params prm(c, "Pooling");
  mxc__dnn_pool_plan pl = MakePool(c, prm);
  Dims yd = PoolYDims(pl, c.data.size());
  Vec x = Random(Numel(c.data), &g);
  std::vector<Vec> cpu = {Vec((size_t)Numel(yd), 0.f)};
  RunCpu("Pooling", c, {c.data}, {x}, {yd}, &cpu, {MXC__GPU_REQ_WRITE});
  mxc__dnn_pool_plan bad = pl;
  std::swap(bad.pad[0], bad.pad[1]);
  Vec y((size_t)Numel(yd), 0.f);
  NaivePool(bad, x, 0, &y);
  EXPECT_GT(RelErr(y, cpu[0]), 1e-2);
  bad = pl;
  bad.mode = MXC__DNN_POOL_AVG_INCLUDE_PAD;
  NaivePool(bad, x, 0, &y);
  EXPECT_GT(RelErr(y, cpu[0]), 1e-2);
}

TEST(CudaDnnPoolPlan, RefusesWhatCudnnComputesOtherwise) {
  const std::vector<Case> refused = {
      {{1, 1, 6, 6}, {{"kernel", "(3,3)"}, {"stride", "(2,2)"},
                      {"pooling_convention", "full"}}},
      {{1, 1, 6, 6}, {{"kernel", "(2,2)"}, {"pool_type", "sum"}}},
      {{1, 1, 6, 6},
       {{"kernel", "(2,2)"}, {"pool_type", "lp"}, {"p_value", "2"}}},
      {{1, 1, 6, 6}, {{"kernel", "(2,2)"}, {"pad", "(2,0)"}}},
      {{1, 1, 7}, {{"kernel", "(2,)"}, {"stride", "(2,)"},
                   {"pooling_convention", "same"}}},
  };
  for (size_t i = 0; i < refused.size(); ++i) {
    Params prm(refused[i], "Pooling");
    mxc__dnn_pool_plan pl;
    char why[256] = "";
    EXPECT_EQ(mxc__dnn_pool_plan_make(prm.p, refused[i].data.data(),
                                      (int)refused[i].data.size(), nullptr,
                                      &pl, why, sizeof why),
              MXC_ERR_UNSUPPORTED)
        << "case " << i;
    EXPECT_NE(std::string(why).find("Pooling on the GPU"), std::string::npos)
        << why;
  }
}

// ---- softmax ----

const std::vector<Case> kSoftmax = {
    {{4, 7}, {}},
    {{3, 5, 4}, {{"axis", "1"}}},
    {{3, 5, 4}, {{"axis", "0"}}},
    {{2, 3, 4, 5}, {{"axis", "-2"}}},
    {{6}, {{"axis", "0"}}},
};

// cuDNN's channel softmax over the plan's tensor: for every (n, h, w),
// along c. log: log-softmax.
void NaiveSoftmax(const mxc__dnn_softmax_plan &p, bool log, const Vec &x,
                  Vec *y) {
  const mxc__dnn_tensor &t = p.t;
  for (int n = 0; n < t.dims[0]; ++n)
    for (int h = 0; h < t.dims[2]; ++h)
      for (int w = 0; w < t.dims[3]; ++w) {
        int64_t base = (int64_t)n * t.strides[0] + (int64_t)h * t.strides[2] +
                       (int64_t)w * t.strides[3];
        double m = -INFINITY, s = 0;
        for (int c = 0; c < t.dims[1]; ++c) {
          m = std::fmax(m, x[base + (int64_t)c * t.strides[1]]);
        }
        for (int c = 0; c < t.dims[1]; ++c) {
          s += std::exp(x[base + (int64_t)c * t.strides[1]] - m);
        }
        for (int c = 0; c < t.dims[1]; ++c) {
          int64_t i = base + (int64_t)c * t.strides[1];
          (*y)[i] = (float)(log ? x[i] - m - std::log(s)
                                : std::exp(x[i] - m) / s);
        }
      }
}

void NaiveSoftmaxGrad(const mxc__dnn_softmax_plan &p, bool log, const Vec &y,
                      const Vec &dy, Vec *dx) {
  const mxc__dnn_tensor &t = p.t;
  for (int n = 0; n < t.dims[0]; ++n)
    for (int h = 0; h < t.dims[2]; ++h)
      for (int w = 0; w < t.dims[3]; ++w) {
        int64_t base = (int64_t)n * t.strides[0] + (int64_t)h * t.strides[2] +
                       (int64_t)w * t.strides[3];
        double s = 0;
        for (int c = 0; c < t.dims[1]; ++c) {
          int64_t i = base + (int64_t)c * t.strides[1];
          s += log ? dy[i] : (double)dy[i] * y[i];
        }
        for (int c = 0; c < t.dims[1]; ++c) {
          int64_t i = base + (int64_t)c * t.strides[1];
          (*dx)[i] = (float)(log ? dy[i] - std::exp(y[i]) * s
                                 : y[i] * (dy[i] - s));
        }
      }
}

TEST(CudaDnnSoftmaxPlan, ForwardAndBackwardFollowTheCpuOperators) {
  std::mt19937 g(23);
  for (const char *name : {"softmax", "log_softmax"}) {
    bool log = std::string(name) == "log_softmax";
    std::string bwd = std::string("_backward_") + name;
    for (size_t i = 0; i < kSoftmax.size(); ++i) {
      SCOPED_TRACE(std::string(name) + " case " + std::to_string(i));
      const Case &c = kSoftmax[i];
      Params prm(c, name);
      mxc__dnn_softmax_plan pl;
      char why[256] = "";
      ASSERT_EQ(mxc__dnn_softmax_plan_make(prm.p, c.data.data(),
                                           (int)c.data.size(), &pl, why,
                                           sizeof why),
                MXC_OK)
          << why;
      int64_t n = Numel(c.data);
      Vec x = Random(n, &g), dy = Random(n, &g);
      std::vector<Vec> cpu = {Vec((size_t)n, 0.f)};
      RunCpu(name, c, {c.data}, {x}, {c.data}, &cpu, {MXC__GPU_REQ_WRITE});
      Vec y((size_t)n);
      NaiveSoftmax(pl, log, x, &y);
      EXPECT_LT(RelErr(y, cpu[0]), kTol) << "forward";
      std::vector<Vec> cpu_dx = {Vec((size_t)n, 0.f)};
      RunCpu(bwd.c_str(), c, {c.data, c.data}, {dy, cpu[0]}, {c.data},
             &cpu_dx, {MXC__GPU_REQ_WRITE});
      Vec dx((size_t)n);
      NaiveSoftmaxGrad(pl, log, cpu[0], dy, &dx);
      EXPECT_LT(RelErr(dx, cpu_dx[0]), kTol) << "backward";
      // The test can fail: the axis taken as the last one instead.
      if (c.data.size() > 1 && i != 0 && i != 4) {
        mxc__dnn_softmax_plan bad = pl;
        bad.t.dims[1] = pl.t.dims[1] * pl.t.dims[2];
        bad.t.dims[2] = 1;
        bad.t.strides[1] = 1;
        NaiveSoftmax(bad, log, x, &y);
        EXPECT_GT(RelErr(y, cpu[0]), 1e-3) << "a wrong axis passed";
      }
    }
  }
}

TEST(CudaDnnSoftmaxPlan, RefusesWhatCudnnDoesNotCompute) {
  const std::vector<Case> refused = {
      {{2, 3}, {{"temperature", "2"}}},
      {{2, 3}, {{"use_length", "true"}}},
  };
  for (const Case &c : refused) {
    Params prm(c, "softmax");
    mxc__dnn_softmax_plan pl;
    char why[256] = "";
    EXPECT_EQ(mxc__dnn_softmax_plan_make(prm.p, c.data.data(),
                                         (int)c.data.size(), &pl, why,
                                         sizeof why),
              MXC_ERR_UNSUPPORTED);
  }
  Case ok = {{2, 3}, {{"temperature", "1"}}};
  Params prm(ok, "softmax");
  mxc__dnn_softmax_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_softmax_plan_make(prm.p, ok.data.data(), 2, &pl, why,
                                       sizeof why),
            MXC_OK)
      << why;
}

// ---- batch norm ----

struct BnCase {
  Case c;
  bool train;
};

const std::vector<BnCase> kBn = {
    {{{4, 3, 5, 2}, {{"fix_gamma", "false"}}}, true},
    {{{4, 3, 5, 2}, {}}, true},  // fix_gamma (the default)
    {{{6, 5}, {{"fix_gamma", "false"}, {"momentum", "0.7"}}}, true},
    {{{2, 3, 4}, {{"axis", "-1"}, {"fix_gamma", "false"}, {"eps", "1e-4"}}},
     true},
    {{{4, 3, 5, 2}, {{"fix_gamma", "false"}}}, false},
    {{{4, 3, 5, 2}, {{"fix_gamma", "false"}, {"use_global_stats", "true"}}},
     true},
};

// Element i of channel c in the plan's (outer, C, inner, 1) tensor.
template <class F>
void ForEachOfChannel(const mxc__dnn_bn_plan &p, int c, F f) {
  for (int n = 0; n < p.x.dims[0]; ++n)
    for (int h = 0; h < p.x.dims[2]; ++h) {
      f((int64_t)n * p.x.strides[0] + (int64_t)c * p.x.strides[1] +
        (int64_t)h * p.x.strides[2]);
    }
}

struct BnState {
  Vec y, mean, var, mm, mv;  // outputs; the moving statistics after
};

// What the GPU kernel asks cuDNN for, done naively: the normalization,
// cuDNN's batch statistics (saved mean and inverse std; running ones with
// factor 1: the mean and the unbiased variance), then the plan's
// moving-average update.
void NaiveBn(const mxc__dnn_bn_plan &p, const Vec &x, const Vec &gamma,
             const Vec &beta, BnState *s) {
  int C = p.x.dims[1];
  for (int c = 0; c < C; ++c) {
    double mean = s->mm[c], inv = 1 / std::sqrt(s->mv[c] + p.eps);
    if (p.batch_stats) {
      double sum = 0, sq = 0;
      ForEachOfChannel(p, c, [&](int64_t i) { sum += x[i]; });
      mean = sum / (double)p.m;
      ForEachOfChannel(p, c, [&](int64_t i) {
        sq += (x[i] - mean) * (x[i] - mean);
      });
      double var = sq / (double)p.m, unbiased = sq / (double)(p.m - 1);
      inv = 1 / std::sqrt(var + p.eps);
      s->mm[c] = (float)(p.mean_keep * s->mm[c] + p.mean_take * mean);
      s->mv[c] = (float)(p.var_keep * s->mv[c] + p.var_take * unbiased);
    }
    double g = p.fix_gamma ? 1 : gamma[c];
    ForEachOfChannel(p, c, [&](int64_t i) {
      s->y[i] = (float)(g * (x[i] - mean) * inv + beta[c]);
    });
    s->mean[c] = (float)mean;
    s->var[c] = (float)inv;
  }
}

// cudnnBatchNormalizationBackward's sums (dScale, dBias) and its dx with
// batch statistics; with fixed ones, dx = g * inv_std * dy.
void NaiveBnGrad(const mxc__dnn_bn_plan &p, const Vec &dy, const Vec &x,
                 const Vec &gamma, const Vec &saved_mean, const Vec &saved_inv,
                 Vec *dx, Vec *dg, Vec *db) {
  for (int c = 0; c < p.x.dims[1]; ++c) {
    double sg = 0, sgx = 0, inv = saved_inv[c], mu = saved_mean[c];
    ForEachOfChannel(p, c, [&](int64_t i) {
      sg += dy[i];
      sgx += dy[i] * (x[i] - mu) * inv;
    });
    double g = p.fix_gamma ? 1 : gamma[c];
    ForEachOfChannel(p, c, [&](int64_t i) {
      double d = dy[i];
      if (p.batch_stats) d -= (sg + (x[i] - mu) * inv * sgx) / (double)p.m;
      (*dx)[i] = (float)(g * inv * d);
    });
    (*dg)[c] = (float)(p.fix_gamma ? 0 : sgx);
    (*db)[c] = (float)sg;
  }
}

// BatchNorm on the CPU: outputs (y, mean, var) and the moving statistics
// after the call (updated in place in training mode).
BnState CpuBn(const BnCase &b, const Vec &x, const Vec &gamma,
              const Vec &beta, const Vec &mm, const Vec &mv) {
  const Case &c = b.c;
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find("BatchNorm", &op), MXC_OK);
  Params prm(c, "BatchNorm");
  int64_t C = 0;
  {
    mxc__dnn_bn_plan pl;
    char why[256];
    EXPECT_EQ(mxc__dnn_bn_plan_make(prm.p, c.data.data(), (int)c.data.size(),
                                    b.train, &pl, why, sizeof why),
              MXC_OK)
        << why;
    C = pl.x.dims[1];
  }
  std::vector<mxc_ndarray> in = {Cpu(c.data, x), Cpu({C}, gamma),
                                 Cpu({C}, beta), Cpu({C}, mm), Cpu({C}, mv)};
  std::vector<mxc_ndarray> out = {Cpu(c.data, x), Cpu({C}, mm), Cpu({C}, mv)};
  int reqs[3] = {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE}, prev = 0;
  mxc_set_training(b.train, &prev);
  EXPECT_EQ(mxc_op_invoke(op, prm.keys.data(), prm.vals.data(),
                          (int)prm.keys.size(), in.data(), 5, out.data(), 3,
                          reqs),
            MXC_OK)
      << Err();
  mxc_set_training(prev, nullptr);
  BnState s = {x, mm, mv, mm, mv};
  Vec *dst[5] = {&s.y, &s.mean, &s.var, &s.mm, &s.mv};
  mxc_ndarray src[5] = {out[0], out[1], out[2], in[3], in[4]};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(src[i], dst[i]->data(),
                                       dst[i]->size() * 4),
              MXC_OK);
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  for (mxc_ndarray a : out) mxc_ndarray_free(a);
  return s;
}

TEST(CudaDnnBnPlan, ForwardFollowsTheCpuOperator) {
  std::mt19937 g(24);
  for (size_t k = 0; k < kBn.size(); ++k) {
    SCOPED_TRACE("batch norm case " + std::to_string(k));
    const BnCase &b = kBn[k];
    Params prm(b.c, "BatchNorm");
    mxc__dnn_bn_plan pl;
    char why[256] = "";
    ASSERT_EQ(mxc__dnn_bn_plan_make(prm.p, b.c.data.data(),
                                    (int)b.c.data.size(), b.train, &pl, why,
                                    sizeof why),
              MXC_OK)
        << why;
    int C = pl.x.dims[1];
    Vec x = Random(Numel(b.c.data), &g), gamma = Random(C, &g);
    Vec beta = Random(C, &g), mm = Random(C, &g), mv = Random(C, &g);
    for (auto &v : mv) v = std::fabs(v) + 0.5f;
    BnState cpu = CpuBn(b, x, gamma, beta, mm, mv);
    BnState naive = {Vec(x.size()), Vec(C), Vec(C), mm, mv};
    NaiveBn(pl, x, gamma, beta, &naive);
    EXPECT_LT(RelErr(naive.y, cpu.y), kTol) << "output";
    EXPECT_LT(RelErr(naive.mean, cpu.mean), kTol) << "mean";
    EXPECT_LT(RelErr(naive.var, cpu.var), kTol) << "inverse std";
    EXPECT_LT(RelErr(naive.mm, cpu.mm), kTol) << "moving mean";
    EXPECT_LT(RelErr(naive.mv, cpu.mv), kTol) << "moving var";
    if (pl.batch_stats) {  // the test can fail: cuDNN's unbiased variance
      mxc__dnn_bn_plan bad = pl;  // taken without the (m - 1) / m
      bad.var_take = bad.mean_take;
      BnState wrong = {Vec(x.size()), Vec(C), Vec(C), mm, mv};
      NaiveBn(bad, x, gamma, beta, &wrong);
      EXPECT_GT(RelErr(wrong.mv, cpu.mv), 10 * kTol) << "a wrong update";
    }
  }
}

TEST(CudaDnnBnPlan, BackwardFollowsTheCpuOperator) {
  std::mt19937 g(25);
  for (size_t k = 0; k < kBn.size(); ++k) {
    SCOPED_TRACE("batch norm case " + std::to_string(k));
    const BnCase &b = kBn[k];
    Params prm(b.c, "BatchNorm");
    mxc__dnn_bn_plan pl;
    char why[256] = "";
    ASSERT_EQ(mxc__dnn_bn_plan_make(prm.p, b.c.data.data(),
                                    (int)b.c.data.size(), b.train, &pl, why,
                                    sizeof why),
              MXC_OK)
        << why;
    int C = pl.x.dims[1];
    const Dims &xd = b.c.data;
    Vec dy = Random(Numel(xd), &g), x = Random(Numel(xd), &g);
    Vec gamma = Random(C, &g), beta = Random(C, &g), mm = Random(C, &g);
    Vec mv = Random(C, &g), y = Random(Numel(xd), &g), mean = Random(C, &g);
    Vec inv = Random(C, &g);
    for (auto &v : inv) v = std::fabs(v) + 0.5f;
    std::vector<Dims> in_d = {xd, xd, {C}, {C}, {C}, {C}, xd, {C}, {C}};
    std::vector<Vec> in = {dy, x, gamma, beta, mm, mv, y, mean, inv};
    std::vector<Vec> cpu = {Vec(x.size()), Vec(C), Vec(C)};
    int prev = 0;
    mxc_set_training(b.train, &prev);
    RunCpu("_backward_BatchNorm", b.c, in_d, in, {xd, {C}, {C}}, &cpu,
           {MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_WRITE});
    mxc_set_training(prev, nullptr);
    Vec dx(x.size()), dg(C), db(C);
    NaiveBnGrad(pl, dy, x, gamma, mean, inv, &dx, &dg, &db);
    EXPECT_LT(RelErr(dx, cpu[0]), kTol) << "data gradient";
    EXPECT_LT(RelErr(dg, cpu[1]), kTol) << "gamma gradient";
    EXPECT_LT(RelErr(db, cpu[2]), kTol) << "beta gradient";
  }
}

TEST(CudaDnnBnPlan, RefusesWhatCudnnComputesOtherwise) {
  std::vector<BnCase> refused = {
      {{{4, 3}, {{"eps", "1e-6"}}}, true},
      {{{1, 3}, {}}, true},  // one element per channel: no unbiased var
      {{{0, 3}, {}}, false},
  };
  for (const BnCase &b : refused) {
    Params prm(b.c, "BatchNorm");
    mxc__dnn_bn_plan pl;
    char why[256] = "";
    EXPECT_EQ(mxc__dnn_bn_plan_make(prm.p, b.c.data.data(),
                                    (int)b.c.data.size(), b.train, &pl, why,
                                    sizeof why),
              MXC_ERR_UNSUPPORTED);
  }
  // One element per channel is fine with the moving statistics.
  Case one = {{1, 3}, {}};
  Params prm(one, "BatchNorm");
  mxc__dnn_bn_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_bn_plan_make(prm.p, one.data.data(), 2, 0, &pl, why,
                                  sizeof why),
            MXC_OK)
      << why;
}

// ---- deconvolution ----

// Stride, pad, adj, target_shape, groups, dilation; 1-D to 3-D.
const std::vector<Case> kDeconv = {
    {{2, 3, 4, 5}, {{"kernel", "(3,2)"}, {"num_filter", "4"}}},
    {{2, 4, 5, 4},
     {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
      {"stride", "(2,2)"}, {"pad", "(1,0)"}, {"adj", "(1,0)"},
      {"no_bias", "false"}}},
    {{1, 2, 6, 5},
     {{"kernel", "(3,2)"}, {"num_filter", "3"}, {"stride", "(2,3)"},
      {"dilate", "(2,1)"}, {"target_shape", "(13,13)"}}},
    {{3, 2, 7},
     {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(3,)"},
      {"pad", "(2,)"}, {"adj", "(2,)"}, {"no_bias", "false"}}},
    {{2, 4, 3, 4, 2},
     {{"kernel", "(2,3,2)"}, {"num_filter", "4"}, {"num_group", "4"},
      {"stride", "(2,1,2)"}, {"pad", "(0,1,1)"}, {"no_bias", "false"}}},
};

mxc__dnn_conv_plan MakeDeconv(const Case &c, const Params &prm) {
  mxc__dnn_conv_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_deconv_plan_make(prm.p, c.data.data(),
                                      (int)c.data.size(), nullptr, &pl, why,
                                      sizeof why),
            MXC_OK)
      << why;
  return pl;
}

Dims XDims(const mxc__dnn_conv_plan &p, size_t ndim) {
  Dims d = {p.x.dims[0], p.x.dims[1]};
  for (size_t i = 2; i < ndim; ++i) d.push_back(p.x.dims[ndim == 3 ? 3 : i]);
  return d;
}

// Per-channel bias on the image side (x), as cudnnAddTensor broadcasts it.
void AddBiasX(const mxc__dnn_conv_plan &p, const Vec &b, Vec *out) {
  for (int64_t i = 0; i < (int64_t)out->size(); ++i) {
    (*out)[i] += b[(size_t)(i / p.x.strides[1] % p.x.dims[1])];
  }
}

TEST(CudaDnnDeconvPlan, ForwardAndBackwardFollowTheCpuOperator) {
  std::mt19937 g(26);
  for (size_t k = 0; k < kDeconv.size(); ++k) {
    SCOPED_TRACE("deconvolution case " + std::to_string(k));
    const Case &c = kDeconv[k];
    Params prm(c, "Deconvolution");
    mxc__dnn_conv_plan pl = MakeDeconv(c, prm);
    size_t nd = c.data.size();
    Dims wd = WDims(pl, nd), od = XDims(pl, nd), bd = {pl.x.dims[1]};
    Vec x = Random(Numel(c.data), &g), w = Random(Numel(wd), &g);
    Vec b = Random(bd[0], &g), dout = Random(Numel(od), &g);
    std::vector<Dims> in_d = {c.data, wd};
    std::vector<Vec> in = {x, w};
    if (pl.has_bias) in_d.push_back(bd), in.push_back(b);
    // Forward: cudnnConvolutionBackwardData from the data (the column
    // side) into the output, then the bias.
    std::vector<Vec> cpu = {Vec((size_t)Numel(od), 0.f)};
    RunCpu("Deconvolution", c, in_d, in, {od}, &cpu, {MXC__GPU_REQ_WRITE});
    std::vector<double> acc((size_t)Numel(od), 0.0);
    ForEachTap(pl, [&](int64_t xi, int64_t wi, int64_t yi) {
      acc[xi] += (double)x[yi] * w[wi];
    });
    Vec naive((size_t)Numel(od));
    Blend(acc, 0, &naive);
    if (pl.has_bias) AddBiasX(pl, b, &naive);
    EXPECT_LT(RelErr(naive, cpu[0]), kTol) << "forward";
    // Backward: ddata = convolution of dout (cudnnConvolutionForward),
    // dweight = cudnnConvolutionBackwardFilter(x = dout, dy = data),
    // dbias = sums of dout per output channel.
    std::vector<Dims> bin_d = {od, c.data, wd}, bout_d = {c.data, wd};
    std::vector<Vec> bin = {dout, x, w};
    if (pl.has_bias) {
      bin_d.push_back(bd), bout_d.push_back(bd), bin.push_back(b);
    }
    std::vector<Vec> bcpu;
    for (const Dims &d : bout_d) bcpu.push_back(Vec((size_t)Numel(d), 0.f));
    std::vector<int> req(bout_d.size(), MXC__GPU_REQ_WRITE);
    RunCpu("_backward_Deconvolution", c, bin_d, bin, bout_d, &bcpu, req);
    std::vector<double> dx((size_t)Numel(c.data), 0.0);
    std::vector<double> dw((size_t)Numel(wd), 0.0);
    ForEachTap(pl, [&](int64_t xi, int64_t wi, int64_t yi) {
      dx[yi] += (double)dout[xi] * w[wi];
      dw[wi] += (double)dout[xi] * x[yi];
    });
    Vec ndx((size_t)Numel(c.data)), ndw((size_t)Numel(wd));
    Blend(dx, 0, &ndx);
    Blend(dw, 0, &ndw);
    EXPECT_LT(RelErr(ndx, bcpu[0]), kTol) << "data gradient";
    EXPECT_LT(RelErr(ndw, bcpu[1]), kTol) << "weight gradient";
    if (pl.has_bias) {
      Vec ndb((size_t)bd[0], 0.f);
      for (int64_t i = 0; i < (int64_t)dout.size(); ++i) {
        ndb[(size_t)(i / pl.x.strides[1] % pl.x.dims[1])] += dout[(size_t)i];
      }
      EXPECT_LT(RelErr(ndb, bcpu[2]), kTol) << "bias gradient";
    }
  }
}

TEST(CudaDnnDeconvPlan, RefusesAnAdjCudnnCannotMapBack) {
  // adj 2 >= stride 2 (allowed by the dilation 3): the convolution of the
  // output would have one more position than the data.
  Case c = {{1, 1, 4, 4},
            {{"kernel", "(2,2)"}, {"num_filter", "1"}, {"stride", "(2,2)"},
             {"dilate", "(3,1)"}, {"adj", "(2,0)"}}};
  Params prm(c, "Deconvolution");
  mxc__dnn_conv_plan pl;
  char why[256] = "";
  EXPECT_EQ(mxc__dnn_deconv_plan_make(prm.p, c.data.data(), 4, nullptr, &pl,
                                      why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("adj or target_shape"), std::string::npos)
      << why;
}

// ---- data types (dnn_plan.h's mxc__dnn_types) ----
//
// Which tensors cuDNN gets in which type must be what the CPU operators
// compute: half data rounded once from float32 work, BatchNorm's
// per-channel arrays float32. The rows' supports must take exactly the
// dtype combinations the CPU operators take (among float32, float16 and
// bfloat16), and a naive half BatchNorm that types its tensors by the
// plan must match the CPU's.

// The MXC_DTYPE_* of a cuDNN data type of the plan.
int MxcDtype(int dnn_dt) {
  return dnn_dt == MXC__DNN_DT_HALF       ? MXC_DTYPE_FLOAT16
         : dnn_dt == MXC__DNN_DT_BFLOAT16 ? MXC_DTYPE_BFLOAT16
                                          : MXC_DTYPE_FLOAT32;
}

// v rounded to the plan's type dnn_dt (float32: unchanged).
Vec In(int dnn_dt, const Vec &v) {
  return dnn_dt == MXC__DNN_DT_FLOAT ? v : mxct::RoundTo(MxcDtype(dnn_dt), v);
}

// Runs op on CPU arrays of the given dtypes; outs hold the initial values
// and get the results, *after the inputs after the call. The status.
int RunTyped(const char *name, const Case &c, const std::vector<Dims> &in_d,
             const std::vector<int> &in_t, const std::vector<Vec> &in,
             const std::vector<Dims> &out_d, const std::vector<int> &out_t,
             std::vector<Vec> *outs, std::vector<Vec> *after = nullptr) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  Params prm(c, name);
  auto make = [](const Dims &d, int dt, const Vec &v) {
    mxc_ndarray a = nullptr;
    EXPECT_EQ(mxc_ndarray_create(d.data(), (int)d.size(), dt, MXC_DEVICE_CPU,
                                 0, 0, &a),
              MXC_OK);
    std::vector<uint8_t> b = mxct::ToBytes(dt, v);
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK);
    return a;
  };
  std::vector<mxc_ndarray> ins, os;
  for (size_t i = 0; i < in.size(); ++i) {
    ins.push_back(make(in_d[i], in_t[i], in[i]));
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    os.push_back(make(out_d[i], out_t[i], (*outs)[i]));
  }
  std::vector<int> req(os.size(), MXC_REQ_WRITE);
  int rc = mxc_op_invoke(op, prm.keys.data(), prm.vals.data(),
                         (int)prm.keys.size(), ins.data(), (int)ins.size(),
                         os.data(), (int)os.size(), req.data());
  auto read = [](mxc_ndarray a, int dt, Vec *v) {
    std::vector<uint8_t> b(v->size() * mxct::ElemSize(dt));
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), b.size()), MXC_OK);
    *v = mxct::FromBytes(dt, b);
  };
  for (size_t i = 0; rc == MXC_OK && i < os.size(); ++i) {
    read(os[i], out_t[i], &(*outs)[i]);
  }
  if (after) *after = in;
  for (size_t i = 0; after && rc == MXC_OK && i < ins.size(); ++i) {
    read(ins[i], in_t[i], &(*after)[i]);
  }
  for (mxc_ndarray a : ins) mxc_ndarray_free(a);
  for (mxc_ndarray a : os) mxc_ndarray_free(a);
  return rc;
}

TEST(CudaDnnTypes, WhatEachFamilyHandsToCudnn) {
  mxc__dnn_types t;
  char why[256] = "";
  const int f16[4] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT16, -1,
                      MXC_DTYPE_FLOAT16};
  ASSERT_EQ(mxc__dnn_types_make(MXC__DNN_OP_SAME, f16, 3, 1, &t, why,
                                sizeof why),
            MXC_OK)
      << why;
  EXPECT_EQ(t.data, MXC__DNN_DT_HALF);
  EXPECT_EQ(t.compute, MXC__DNN_DT_FLOAT);  // float32 accumulation
  EXPECT_EQ(t.tensor_math, 1);
  EXPECT_EQ(t.elem, 2);
  const int f32[2] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32};
  ASSERT_EQ(mxc__dnn_types_make(MXC__DNN_OP_SAME, f32, 1, 1, &t, why,
                                sizeof why),
            MXC_OK);
  EXPECT_EQ(t.data, MXC__DNN_DT_FLOAT);
  EXPECT_EQ(t.tensor_math, 0);  // FMA math: no TF32
  // BatchNorm backward: ograd, data, output half; the rest float32.
  int bwd[12];
  for (int i = 0; i < 12; ++i) bwd[i] = MXC_DTYPE_FLOAT32;
  for (int i : {0, 1, 6, 9}) bwd[i] = MXC_DTYPE_BFLOAT16;
  ASSERT_EQ(mxc__dnn_types_make(MXC__DNN_OP_BN_BWD, bwd, 9, 3, &t, why,
                                sizeof why),
            MXC_OK)
      << why;
  EXPECT_EQ(t.data, MXC__DNN_DT_BFLOAT16);
  EXPECT_EQ(t.stats, MXC__DNN_DT_FLOAT);
  bwd[7] = MXC_DTYPE_BFLOAT16;  // the saved mean in half: refused
  EXPECT_EQ(mxc__dnn_types_make(MXC__DNN_OP_BN_BWD, bwd, 9, 3, &t, why,
                                sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("per-channel array 7 (inputs, then outputs)"), std::string::npos)
      << why;
  const int f64[2] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64};
  EXPECT_EQ(mxc__dnn_types_make(MXC__DNN_OP_SAME, f64, 1, 1, &t, why,
                                sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("float32, float16 or bfloat16"),
            std::string::npos)
      << why;
  const int mixed[2] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32};
  EXPECT_EQ(mxc__dnn_types_make(MXC__DNN_OP_SAME, mixed, 1, 1, &t, why,
                                sizeof why),
            MXC_ERR_UNSUPPORTED);
}

struct TypedOp {
  const char *op;
  int family;
  Case c;
  std::vector<Dims> in, out;
  std::vector<bool> data;  // per input, then output: a data array
};

// Small calls of each family, with which arrays carry the data's dtype.
std::vector<TypedOp> TypedOps() {
  Dims x = {2, 3, 4, 4}, ch = {3};
  Case conv = {x, {{"kernel", "(3,3)"}, {"num_filter", "2"}}};
  Case pool = {x, {{"kernel", "(2,2)"}}};
  Case bn = {x, {{"fix_gamma", "false"}}};
  Case sm = {x, {{"axis", "1"}}};
  // One-dtype families: the data decides, every other array tried in
  // each dtype (the CPU takes only the same).
  std::vector<bool> all(8, false);
  all[0] = true;
  return {
      {"Convolution", MXC__DNN_OP_SAME, conv, {x, {2, 3, 3, 3}, {2}},
       {{2, 2, 2, 2}}, all},
      {"Pooling", MXC__DNN_OP_SAME, pool, {x}, {{2, 3, 3, 3}}, all},
      {"softmax", MXC__DNN_OP_SAME, sm, {x}, {x}, all},
      {"log_softmax", MXC__DNN_OP_SAME, sm, {x}, {x}, all},
      {"BatchNorm", MXC__DNN_OP_BN, bn, {x, ch, ch, ch, ch}, {x, ch, ch},
       {true, false, false, false, false, true, false, false}},
      {"_backward_BatchNorm", MXC__DNN_OP_BN_BWD, bn,
       {x, x, ch, ch, ch, ch, x, ch, ch}, {x, ch, ch},
       {true, true, false, false, false, false, true, false, false, true,
        false, false}},
  };
}

// For float32, float16 and bfloat16 data with the other arrays in each of
// them: the row's supports takes the combination exactly when the CPU
// operator does.
TEST(CudaDnnTypes, SupportsWhatTheCpuOperatorsTake) {
  const int dts[3] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16,
                      MXC_DTYPE_BFLOAT16};
  int taken = 0;
  for (const TypedOp &o : TypedOps()) {
    for (int d : dts) {
      for (int p : dts) {
        std::vector<int> in_t, out_t, all;
        size_t n_in = o.in.size();
        for (size_t i = 0; i < n_in + o.out.size(); ++i) {
          int t = o.data[i] ? d : p;
          (i < n_in ? in_t : out_t).push_back(t);
          all.push_back(t);
        }
        std::vector<Vec> in, out;
        for (const Dims &dd : o.in) in.push_back(Vec((size_t)Numel(dd), 0.5f));
        for (const Dims &dd : o.out) out.push_back(Vec((size_t)Numel(dd)));
        int prev = 0;
        mxc_set_training(1, &prev);
        int rc = RunTyped(o.op, o.c, o.in, in_t, in, o.out, out_t, &out);
        mxc_set_training(prev, nullptr);
        int sup = o.family == MXC__DNN_OP_SAME ? mxc__dnn_supports_same(
                                                     all.data(), (int)n_in,
                                                     (int)o.out.size())
                  : o.family == MXC__DNN_OP_BN
                      ? mxc__dnn_supports_bn(all.data(), (int)n_in,
                                             (int)o.out.size())
                      : mxc__dnn_supports_bn_bwd(all.data(), (int)n_in,
                                                 (int)o.out.size());
        EXPECT_EQ(sup, rc == MXC_OK)
            << o.op << " data " << mxct::DtypeName(d) << ", others "
            << mxct::DtypeName(p) << ": CPU " << rc << " "
            << (rc ? Err() : "");
        taken += sup;
      }
    }
  }
  EXPECT_EQ(taken, 6 * 3);  // each op: its three data dtypes
}

// Half BatchNorm as the kernel hands it to cuDNN: data in the plan's data
// type, computed in float (cuDNN's float32 work; here double), the output
// rounded once to the data type, the statistics and the moving ones in
// the plan's stats type. Against the CPU operator in half: the output
// within one unit of the data type at its scale (both round a float
// result once), the float32 statistics to 1e-5. With the statistics
// typed half (a wrong plan) the comparison fails.
void HalfBn(int dt, const mxc__dnn_types &ty, bool expect_ok,
            std::mt19937 *g) {
  BnCase b = {{{4, 3, 5, 2}, {{"fix_gamma", "false"}}}, true};
  Params prm(b.c, "BatchNorm");
  mxc__dnn_bn_plan pl;
  char why[256] = "";
  ASSERT_EQ(mxc__dnn_bn_plan_make(prm.p, b.c.data.data(), 4, 1, &pl, why,
                                  sizeof why),
            MXC_OK)
      << why;
  int C = pl.x.dims[1];
  Vec x = mxct::RoundTo(dt, Random(Numel(b.c.data), g));
  Vec gamma = Random(C, g), beta = Random(C, g), mm = Random(C, g);
  Vec mv = Random(C, g);
  for (auto &v : mv) v = std::fabs(v) + 0.5f;
  Dims ch = {C};
  std::vector<Vec> cpu = {Vec(x.size()), Vec(C), Vec(C)}, after;
  int prev = 0;
  mxc_set_training(1, &prev);
  int f = MXC_DTYPE_FLOAT32;
  int rc = RunTyped("BatchNorm", b.c, {b.c.data, ch, ch, ch, ch},
                    {dt, f, f, f, f}, {x, gamma, beta, mm, mv},
                    {b.c.data, ch, ch}, {dt, f, f}, &cpu, &after);
  mxc_set_training(prev, nullptr);
  ASSERT_EQ(rc, MXC_OK) << Err();
  BnState nv = {Vec(x.size()), Vec(C), Vec(C), mm, mv};
  NaiveBn(pl, In(ty.data, x), In(ty.stats, gamma), In(ty.stats, beta), &nv);
  Vec y = In(ty.data, nv.y);
  bool ok = true;
  for (size_t i = 0; i < y.size(); ++i) {
    ok &= std::fabs(y[i] - cpu[0][i]) <= mxct::UlpAtLeast1(dt, cpu[0][i]);
  }
  ok &= RelErr(In(ty.stats, nv.mean), cpu[1]) < kTol;
  ok &= RelErr(In(ty.stats, nv.var), cpu[2]) < kTol;
  ok &= RelErr(In(ty.stats, nv.mm), after[3]) < kTol;
  ok &= RelErr(In(ty.stats, nv.mv), after[4]) < kTol;
  EXPECT_EQ(ok, expect_ok) << mxct::DtypeName(dt);
}

TEST(CudaDnnTypes, HalfBatchNormFollowsTheCpuOperator) {
  std::mt19937 g(26);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    int dts[8] = {dt, MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32,
                  MXC_DTYPE_FLOAT32, dt, MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32};
    mxc__dnn_types ty;
    char why[256] = "";
    ASSERT_EQ(mxc__dnn_types_make(MXC__DNN_OP_BN, dts, 5, 3, &ty, why,
                                  sizeof why),
              MXC_OK)
        << why;
    HalfBn(dt, ty, true, &g);
    mxc__dnn_types bad = ty;  // statistics kept in the data's half type
    bad.stats = bad.data;
    HalfBn(dt, bad, false, &g);
  }
}

// A half convolution as the plan types it: inputs in the data type, the
// taps summed in the compute type (float: here in double, whose
// difference from float32's sums is far below a half unit; a half type:
// each partial sum rounded to it, as cuDNN's TRUE_HALF configuration
// would), the result rounded once to the data type (write mode).
Vec NaiveTypedConv(const mxc__dnn_conv_plan &p, const mxc__dnn_types &ty,
                   const Vec &x, const Vec &w) {
  std::vector<double> acc((size_t)Count(p.y, p.nbdims), 0.0);
  int ct = MxcDtype(ty.compute);
  ForEachTap(p, [&](int64_t xi, int64_t wi, int64_t yi) {
    acc[yi] += (double)x[xi] * w[wi];
    if (ty.compute != MXC__DNN_DT_FLOAT) {
      acc[yi] = mxct::HalfToFloat(ct, mxct::FloatToHalf(ct, (float)acc[yi]));
    }
  });
  Vec y(acc.begin(), acc.end());
  return In(ty.data, y);
}

// Half convolutions (a ResNet-like 144-term layer, a grouped strided
// dilated one) against the CPU operator in half: within one unit of the
// dtype (both round a float32 sum once). Summing in half instead (a plan
// whose compute type is the data's) fails.
TEST(CudaDnnTypes, HalfConvolutionAccumulatesInFloat) {
  std::mt19937 g(27);
  const std::vector<Case> cases = {
      {{2, 16, 10, 10},
       {{"kernel", "(3,3)"}, {"num_filter", "8"}, {"pad", "(1,1)"},
        {"no_bias", "true"}}},
      {{2, 4, 9, 8},
       {{"kernel", "(3,3)"}, {"num_filter", "6"}, {"num_group", "2"},
        {"stride", "(2,1)"}, {"pad", "(1,2)"}, {"dilate", "(1,2)"},
        {"no_bias", "true"}}},
  };
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    for (size_t k = 0; k < cases.size(); ++k) {
      SCOPED_TRACE(std::string(mxct::DtypeName(dt)) + " case " +
                   std::to_string(k));
      const Case &c = cases[k];
      Params prm(c);
      mxc__dnn_conv_plan pl = MakePlan(c, prm);
      Dims wd = WDims(pl, c.data.size()), yd = YDims(pl, c.data.size());
      int dts[3] = {dt, dt, dt};
      mxc__dnn_types ty;
      char why[256] = "";
      ASSERT_EQ(mxc__dnn_types_make(MXC__DNN_OP_SAME, dts, 2, 1, &ty, why,
                                    sizeof why),
                MXC_OK)
          << why;
      Vec x = mxct::RoundTo(dt, Random(Numel(c.data), &g));
      Vec w = mxct::RoundTo(dt, Random(Numel(wd), &g));
      std::vector<Vec> cpu = {Vec((size_t)Numel(yd))};
      ASSERT_EQ(RunTyped("Convolution", c, {c.data, wd}, {dt, dt}, {x, w},
                         {yd}, {dt}, &cpu),
                MXC_OK)
          << Err();
      auto within = [&](const Vec &y) {
        for (size_t i = 0; i < y.size(); ++i) {
          if (std::fabs(y[i] - cpu[0][i]) > mxct::UlpAtLeast1(dt, cpu[0][i]))
            return false;
        }
        return true;
      };
      EXPECT_TRUE(within(NaiveTypedConv(pl, ty, x, w)));
      mxc__dnn_types bad = ty;
      bad.compute = bad.data;
      if (k == 0) {  // the 144-term sums: half partial sums drift
        EXPECT_FALSE(within(NaiveTypedConv(pl, bad, x, w)));
      }
    }
  }
}

}  // namespace
