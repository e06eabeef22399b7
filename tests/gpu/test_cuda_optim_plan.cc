// The other optimizer updates' per-element rules (backends/cuda/
// optim_plan.h, what optim.cu runs on the device) run on the host
// against the CPU operators through the C API, on every machine:
// nag_mom_update, rmsprop_update, rmspropalex_update, adagrad_update,
// ftrl_update, signsgd_update, signum_update, ftml_update,
// lamb_update_phase1 and _phase2; and mp_plan.h's (mp.cu's) plan and
// rule for mp_sgd_update, mp_sgd_mom_update and the multi_* forms in
// float32, float16 and bfloat16 weights, mp_lamb_update_phase1/2, and
// all_finite's test; the new
// weight and every
// state, in write, add and in-place calls, with and without gradient and
// weight clipping, bitwise. The parameters reach the rules through the
// operators' own parser (mxc__op_parse_params), so a drift between
// ops/random's struct and the rules' reading of it fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/mp_plan.h"  // C and C++ (half_hd.h's templates)
extern "C" {
#include "backends/cuda/optim_plan.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"

namespace {

using Vec = std::vector<float>;
using Kv = std::vector<std::pair<std::string, std::string>>;

struct Op {
  const char *name;
  int kind;
  std::vector<Kv> params;
};

const std::vector<Op> kOps = {
    {"nag_mom_update",
     MXC__OPT2_NAG_MOM,
     {{{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
      {{"lr", "0.05"},
       {"momentum", "0.8"},
       {"clip_gradient", "0.3"},
       {"rescale_grad", "2"}}}},
    {"rmsprop_update",
     MXC__OPT2_RMSPROP,
     {{{"lr", "0.01"}, {"wd", "0.001"}, {"gamma1", "0.9"}},
      {{"lr", "0.02"},
       {"clip_gradient", "0.5"},
       {"clip_weights", "1.5"},
       {"epsilon", "1e-6"}}}},
    {"rmspropalex_update",
     MXC__OPT2_RMSPROPALEX,
     {{{"lr", "0.01"}, {"gamma1", "0.9"}, {"gamma2", "0.8"}},
      {{"lr", "0.03"},
       {"wd", "0.01"},
       {"clip_gradient", "0.4"},
       {"clip_weights", "1.2"}}}},
    {"adagrad_update",
     MXC__OPT2_ADAGRAD,
     {{{"lr", "0.1"}, {"wd", "0.01"}},
      {{"lr", "0.05"}, {"clip_gradient", "0.2"}, {"rescale_grad", "0.5"}}}},
    {"ftrl_update",
     MXC__OPT2_FTRL,
     {{{"lr", "0.1"}, {"lamda1", "0.05"}, {"beta", "1"}},
      {{"lr", "0.2"},
       {"wd", "0.1"},
       {"lamda1", "0.5"},
       {"clip_gradient", "0.7"}}}},
    {"signsgd_update",
     MXC__OPT2_SIGNSGD,
     {{{"lr", "0.1"}, {"wd", "0.01"}},
      {{"lr", "0.05"}, {"rescale_grad", "-1"}}}},
    {"signum_update",
     MXC__OPT2_SIGNUM,
     {{{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
      {{"lr", "0.05"}, {"wd_lh", "0.1"}, {"clip_gradient", "0.1"}}}},
};

Vec Random(size_t n, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v(n);
  for (auto &x : v) x = u(*g);
  return v;
}

// Inputs of op over n elements: weight, grad, then states in ranges the
// rules are defined on (squared averages >= 0 and above the squared
// mean, rmspropalex's second state being that mean).
std::vector<Vec> Inputs(const Op &op, size_t n, std::mt19937 *g) {
  std::vector<Vec> in = {Random(n, -2, 2, g), Random(n, -3, 3, g)};
  int ns = mxc__opt2_states(op.kind);
  for (int s = 0; s < ns; ++s) {
    bool positive = op.kind != MXC__OPT2_NAG_MOM &&
                    op.kind != MXC__OPT2_SIGNUM &&
                    !(op.kind == MXC__OPT2_RMSPROPALEX && s > 0) &&
                    !(op.kind == MXC__OPT2_FTRL && s == 0);
    in.push_back(positive ? Random(n, 1, 2, g) : Random(n, -.5f, .5f, g));
  }
  return in;
}

mxc_ndarray Host1d(const Vec &v) {
  int64_t n = (int64_t)v.size();
  mxc_ndarray h = nullptr;
  EXPECT_EQ(
      mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &h),
      MXC_OK);
  if (n > 0) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, v.data(), v.size() * 4), MXC_OK);
  }
  return h;
}

void Back(mxc_ndarray h, Vec *v) {
  if (!v->empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(h, v->data(), v->size() * 4), MXC_OK);
  }
}

// The CPU operator: ins updated (states), out from its initial values
// (inplace: the output is input 0's array).
void Cpu(const Op &op, const Kv &kv, std::vector<Vec> *ins, Vec *out, int req,
         bool inplace) {
  mxc_op h = nullptr;
  ASSERT_EQ(mxc_op_find(op.name, &h), MXC_OK) << op.name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  if (inplace) (*ins)[0] = *out;
  std::vector<mxc_ndarray> a;
  for (const Vec &x : *ins) a.push_back(Host1d(x));
  mxc_ndarray o = inplace ? a[0] : Host1d(*out);
  ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), &o, 1, &req),
            MXC_OK)
      << op.name << ": " << mxc_last_error();
  Back(o, out);
  for (size_t i = 0; i < a.size(); ++i) Back(a[i], &(*ins)[i]);
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  if (!inplace) mxc_ndarray_free(o);
}

// optim.cu's element function over the arrays on the host.
void Host(const Op &op, const mxc__opt_param *p, std::vector<Vec> *ins,
          Vec *out, int req, bool inplace) {
  if (inplace) (*ins)[0] = *out;
  float *s[3] = {nullptr, nullptr, nullptr};
  for (size_t k = 2; k < ins->size(); ++k) s[k - 2] = (*ins)[k].data();
  float *o = inplace ? (*ins)[0].data() : out->data();
  for (size_t i = 0; i < out->size(); ++i) {
    mxc__opt2_elem(op.kind, p, (*ins)[0].data(), (*ins)[1].data(), s, o,
                   req == MXC_REQ_ADD, (int64_t)i);
  }
  if (inplace) *out = (*ins)[0];
}

void *Parse(const char *name, const Kv &kv) {
  std::vector<const char *> k, v;
  for (const auto &q : kv) k.push_back(q.first.c_str());
  for (const auto &q : kv) v.push_back(q.second.c_str());
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(name), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK)
      << name;
  return param;
}

bool Same(const Vec &a, const Vec &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

// Host against CPU for one call; returns whether every array agreed.
bool Agree(const Op &op, const Kv &kv, const mxc__opt_param *p,
           const std::vector<Vec> &in, const Vec &base, int mode) {
  int req = mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE;
  bool inplace = mode == 2;
  std::vector<Vec> ci = in, hi = in;
  Vec co = inplace ? in[0] : base, ho = co;
  Cpu(op, kv, &ci, &co, req, inplace);
  Host(op, p, &hi, &ho, req, inplace);
  bool ok = Same(co, ho);
  for (size_t i = 2; i < ci.size(); ++i) ok = ok && Same(ci[i], hi[i]);
  return ok;
}

TEST(CudaOptimPlan, UpdatesMatchTheCpuBitwise) {
  std::mt19937 g(61);
  for (const Op &op : kOps) {
    for (size_t k = 0; k < op.params.size(); ++k) {
      void *param = Parse(op.name, op.params[k]);
      const auto *p = (const mxc__opt_param *)param;
      for (size_t n : {1, 7, 1031, 0}) {
        std::vector<Vec> in = Inputs(op, n, &g);
        Vec base = Random(n, -1, 1, &g);
        for (int mode = 0; mode < 3; ++mode) {
          EXPECT_TRUE(Agree(op, op.params[k], p, in, base, mode))
              << op.name << " parameters " << k << " size " << n << " mode "
              << (mode == 0   ? "write"
                  : mode == 1 ? "add"
                              : "in place");
        }
      }
      mxc__free(param);
    }
  }
}

// ---- ftml_update, lamb_update_phase1, lamb_update_phase2 ----

struct ExtOp {
  const char *name;
  int kind;
  std::vector<Kv> params;
};

const std::vector<ExtOp> kExtOps = {
    {"ftml_update",
     MXC__OPT3_FTML,
     {{{"lr", "0.05"}, {"t", "3"}},
      {{"lr", "0.1"},
       {"t", "1"},
       {"wd", "0.01"},
       {"beta1", "0.5"},
       {"clip_grad", "0.4"},
       {"rescale_grad", "2"}}}},
    {"lamb_update_phase1",
     MXC__OPT3_LAMB1,
     {{{"wd", "0.01"}, {"t", "5"}},
      {{"wd", "0"},
       {"t", "2"},
       {"bias_correction", "false"},
       {"clip_gradient", "0.3"},
       {"epsilon", "1e-4"}}}},
    {"lamb_update_phase2",
     MXC__OPT3_LAMB2,
     {{{"lr", "0.01"}},
      {{"lr", "0.02"}, {"lower_bound", "0.5"}, {"upper_bound", "1.5"}}}},
};

// Inputs: weight, grad, then FTML's d (> 0), v (>= 0), z; LAMB's mean,
// var (>= 0); phase 2's norms r1, r2 (one element each; r2 = 0 once).
std::vector<Vec> ExtInputs(const ExtOp &op, size_t n, std::mt19937 *g) {
  std::vector<Vec> in = {Random(n, -2, 2, g), Random(n, -3, 3, g)};
  if (op.kind == MXC__OPT3_FTML) {
    in.push_back(Random(n, 1, 2, g));
    in.push_back(Random(n, 0, 1, g));
    in.push_back(Random(n, -.5f, .5f, g));
  } else if (op.kind == MXC__OPT3_LAMB1) {
    in.push_back(Random(n, -.5f, .5f, g));
    in.push_back(Random(n, 0, 1, g));
  } else {
    in.push_back(Random(1, 0.2f, 2, g));
    in.push_back(n == 7 ? Vec{0.f} : Random(1, 0.5f, 3, g));
  }
  return in;
}

// optim.cu's FTML/LAMB element functions over the arrays on the host.
void HostExt(const ExtOp &op, const mxc__opt3_plan *q, std::vector<Vec> *in,
             Vec *out, int req, bool inplace) {
  if (inplace) (*in)[0] = *out;
  std::vector<float *> a;
  for (Vec &x : *in) a.push_back(x.data());
  float *o = inplace ? a[0] : out->data();
  int add = req == MXC_REQ_ADD;
  for (size_t i = 0; i < out->size(); ++i) {
    if (op.kind == MXC__OPT3_FTML) {
      mxc__opt3_ftml(q, a[0], a[1], a[2], a[3], a[4], o, add, (int64_t)i);
    } else if (op.kind == MXC__OPT3_LAMB1) {
      mxc__opt3_lamb1(q, a[0], a[1], a[2], a[3], o, add, (int64_t)i);
    } else {
      mxc__opt3_lamb2(q, a[0], a[1], a[2], a[3], o, add, (int64_t)i);
    }
  }
  if (inplace) *out = (*in)[0];
}

bool AgreeExt(const ExtOp &op, const Kv &kv, const mxc__opt3_plan *q,
              const std::vector<Vec> &in, const Vec &base, int mode) {
  int req = mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE;
  bool inplace = mode == 2;
  std::vector<Vec> ci = in, hi = in;
  Vec co = inplace ? in[0] : base, ho = co;
  Op cpu_op = {op.name, 0, {}};
  Cpu(cpu_op, kv, &ci, &co, req, inplace);
  HostExt(op, q, &hi, &ho, req, inplace);
  bool ok = Same(co, ho);
  for (size_t i = 1; i < ci.size(); ++i) ok = ok && Same(ci[i], hi[i]);
  return ok;
}

TEST(CudaOptimPlan, FtmlAndLambMatchTheCpuBitwise) {
  std::mt19937 g(64);
  for (const ExtOp &op : kExtOps) {
    for (size_t k = 0; k < op.params.size(); ++k) {
      void *param = Parse(op.name, op.params[k]);
      mxc__opt3_plan q =
          mxc__opt3_plan_make(op.kind, (const mxc__opt_ext_param *)param);
      mxc__free(param);
      for (size_t n : {1, 7, 1031, 0}) {
        std::vector<Vec> in = ExtInputs(op, n, &g);
        Vec base = Random(n, -1, 1, &g);
        for (int mode = 0; mode < 3; ++mode) {
          EXPECT_TRUE(AgreeExt(op, op.params[k], &q, in, base, mode))
              << op.name << " parameters " << k << " size " << n << " mode "
              << (mode == 0   ? "write"
                  : mode == 1 ? "add"
                              : "in place");
        }
      }
    }
  }
}

// The comparison can fail: LAMB's bias correction from t - 1, the add
// mode rounded twice (the other updates' rule).
TEST(CudaOptimPlan, AWrongExtRuleFails) {
  std::mt19937 g(65);
  const ExtOp &op = kExtOps[1];
  void *param = Parse(op.name, op.params[0]);
  mxc__opt_ext_param p = *(const mxc__opt_ext_param *)param;
  mxc__free(param);
  mxc__opt3_plan q = mxc__opt3_plan_make(op.kind, &p);
  std::vector<Vec> in = ExtInputs(op, 1031, &g);
  Vec base = Random(1031, -1, 1, &g);
  ASSERT_TRUE(AgreeExt(op, op.params[0], &q, in, base, 0));
  p.t -= 1;
  mxc__opt3_plan wrong = mxc__opt3_plan_make(op.kind, &p);
  EXPECT_FALSE(AgreeExt(op, op.params[0], &wrong, in, base, 0));
  // Add mode through the float addition of the rounded value.
  std::vector<Vec> ci = in, hi = in;
  Vec co = base, ho = base;
  Cpu({op.name, 0, {}}, op.params[0], &ci, &co, MXC_REQ_ADD, false);
  Vec zero(base.size(), 0.f);
  HostExt(op, &q, &hi, &zero, MXC_REQ_WRITE, false);
  for (size_t i = 0; i < ho.size(); ++i) ho[i] += zero[i];
  EXPECT_FALSE(Same(co, ho));
}

// Clipping reaches the rules: rmsprop's weights clipped at 1.5 in some
// elements (a rule ignoring clip_weights would fail above).
TEST(CudaOptimPlan, WeightClippingIsExercised) {
  std::mt19937 g(62);
  const Op &op = kOps[1];
  void *param = Parse(op.name, op.params[1]);
  std::vector<Vec> in = Inputs(op, 1031, &g);
  Vec out(1031, 0.f);
  Host(op, (const mxc__opt_param *)param, &in, &out, MXC_REQ_WRITE, false);
  int clipped = 0;
  for (float w : out) clipped += w == 1.5f || w == -1.5f;
  EXPECT_GT(clipped, 10);
  mxc__free(param);
}

// The comparison can fail: a rule one rounding away from the CPU's (the
// momentum rounded to float first), and one with a parameter misread.
TEST(CudaOptimPlan, AWrongRuleFails) {
  std::mt19937 g(63);
  const Op &op = kOps[0];
  void *param = Parse(op.name, op.params[0]);
  mxc__opt_param p = *(const mxc__opt_param *)param;
  mxc__free(param);
  std::vector<Vec> in = Inputs(op, 1031, &g);
  Vec base(1031, 0.f);
  ASSERT_TRUE(Agree(op, op.params[0], &p, in, base, 0));
  mxc__opt_param wrong = p;
  wrong.momentum = (float)p.momentum;
  EXPECT_FALSE(Agree(op, op.params[0], &wrong, in, base, 0));
  wrong = p;
  wrong.wd = 0;
  EXPECT_FALSE(Agree(op, op.params[0], &wrong, in, base, 0));
}

// ---- mp_sgd_update, mp_sgd_mom_update, multi_*: mp_plan.h ----

using Bytes = std::vector<uint8_t>;

// One array of any of the updates' dtypes, as bytes.
struct Arr {
  int dt;
  size_t n;
  Bytes b;
};

Arr RandArr(int dt, size_t n, float lo, float hi, std::mt19937 *g) {
  Vec v = Random(n, lo, hi, g);
  Arr a = {dt, n, Bytes(n * (dt == MXC_DTYPE_FLOAT32 ? 4 : 2))};
  for (size_t i = 0; i < n; ++i) mxc__mp_st(a.b.data(), dt, (int64_t)i, v[i]);
  return a;
}

struct MpOp {
  const char *name;
  int kind;
  Kv kv;
  int dt;  // the weights' dtype
};

const std::vector<MpOp> kMpOps = {
    {"mp_sgd_update",
     MXC__MP_SGD,
     {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}},
     MXC_DTYPE_FLOAT16},
    {"mp_sgd_update",
     MXC__MP_SGD,
     {{"lr", "0.05"}, {"clip_gradient", "0.3"}},
     MXC_DTYPE_BFLOAT16},
    {"mp_sgd_mom_update",
     MXC__MP_SGD_MOM,
     {{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
     MXC_DTYPE_FLOAT16},
    {"mp_sgd_mom_update",
     MXC__MP_SGD_MOM,
     {{"lr", "0.07"}, {"momentum", "0.8"}, {"clip_gradient", "0.4"}},
     MXC_DTYPE_FLOAT32},
    {"multi_sgd_update",
     MXC__MP_MULTI,
     {{"lrs", "(0.1, 0.2, 0.05)"}, {"wds", "(0.01, 0, 0.02)"},
      {"num_weights", "3"}},
     MXC_DTYPE_FLOAT32},
    {"multi_sgd_update",
     MXC__MP_MULTI,
     {{"lrs", "(0.1, 0.3)"}, {"wds", "(0.001, 0.02)"}, {"num_weights", "2"},
      {"rescale_grad", "2"}, {"clip_gradient", "0.5"}},
     MXC_DTYPE_FLOAT16},
    {"multi_sgd_mom_update",
     MXC__MP_MULTI_MOM,
     {{"lrs", "(0.1, 0.2, 0.05)"}, {"wds", "(0.01, 0, 0.02)"},
      {"num_weights", "3"}, {"momentum", "0.9"}},
     MXC_DTYPE_FLOAT32},
    {"multi_mp_sgd_update",
     MXC__MP_MULTI_MP,
     {{"lrs", "(0.1, 0.2, 0.05)"}, {"wds", "(0.01, 0, 0.02)"},
      {"num_weights", "3"}},
     MXC_DTYPE_FLOAT16},
    {"multi_mp_sgd_mom_update",
     MXC__MP_MULTI_MP_MOM,
     {{"lrs", "(0.1, 0.2)"}, {"wds", "(0.01, 0.03)"}, {"num_weights", "2"},
      {"momentum", "0.85"}, {"clip_gradient", "0.4"}},
     MXC_DTYPE_BFLOAT16},
};

const size_t kMpSizes[] = {7, 1031, 1};

// The inputs of one call: per weight (weight, grad[, mom][, weight32]),
// the states float32 (weight32 near the weight's values).
std::vector<Arr> MpInputs(const MpOp &op, int n_w, std::mt19937 *g) {
  std::vector<Arr> in;
  for (int w = 0; w < n_w; ++w) {
    size_t n = kMpSizes[w % 3];
    in.push_back(RandArr(op.dt, n, -2, 2, g));
    in.push_back(RandArr(op.dt, n, -3, 3, g));
    if (mxc__mp_has_mom(op.kind)) {
      in.push_back(RandArr(MXC_DTYPE_FLOAT32, n, -.5f, .5f, g));
    }
    if (mxc__mp_has_w32(op.kind)) {
      in.push_back(RandArr(MXC_DTYPE_FLOAT32, n, -2, 2, g));
    }
  }
  return in;
}

mxc_ndarray HostArr(const Arr &a) {
  int64_t n = (int64_t)a.n;
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(&n, 1, a.dt, MXC_DEVICE_CPU, 0, 0, &h), MXC_OK);
  if (n > 0) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, a.b.data(), a.b.size()), MXC_OK);
  }
  return h;
}

// The CPU operator over in (states updated) and out (initial values,
// then the results); inplace: output w is weight w's array.
void MpCpu(const MpOp &op, std::vector<Arr> *in, std::vector<Arr> *out,
           const std::vector<int> &req, bool inplace) {
  mxc_op h = nullptr;
  ASSERT_EQ(mxc_op_find(op.name, &h), MXC_OK) << op.name;
  std::vector<const char *> k, v;
  for (const auto &p : op.kv) k.push_back(p.first.c_str());
  for (const auto &p : op.kv) v.push_back(p.second.c_str());
  int st = mxc__mp_stride(op.kind);
  std::vector<mxc_ndarray> a, o;
  for (const Arr &x : *in) a.push_back(HostArr(x));
  for (size_t w = 0; w < out->size(); ++w) {
    o.push_back(inplace ? a[w * st] : HostArr((*out)[w]));
  }
  ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), o.data(), (int)o.size(), req.data()),
            MXC_OK)
      << op.name << ": " << mxc_last_error();
  auto back = [](mxc_ndarray x, Arr *y) {
    if (y->n) {
      EXPECT_EQ(mxc_ndarray_copy_to_host(x, y->b.data(), y->b.size()), MXC_OK);
    }
  };
  for (size_t i = 0; i < a.size(); ++i) back(a[i], &(*in)[i]);
  for (size_t w = 0; w < o.size(); ++w) back(o[w], &(*out)[w]);
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  if (!inplace) {
    for (mxc_ndarray x : o) mxc_ndarray_free(x);
  }
}

mxc__gpu_array GpuArr(Arr *a) {
  mxc__gpu_array g;
  std::memset(&g, 0, sizeof g);
  g.ptr = a->b.data();
  g.size = (int64_t)a->n;
  g.ndim = 1;
  g.dims[0] = g.size;
  g.dtype = a->dt;
  return g;
}

// mp.cu's run over host arrays: the plan of each weight, its rule per
// element.
void MpHost(const MpOp &op, const mxc__mp_param *p, std::vector<Arr> *in,
            std::vector<Arr> *out, const std::vector<int> &req,
            bool inplace) {
  int st = mxc__mp_stride(op.kind);
  std::vector<mxc__gpu_array> gi, go;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  for (size_t w = 0; w < out->size(); ++w) {
    go.push_back(inplace ? gi[w * st] : GpuArr(&(*out)[w]));
  }
  mxc__gpu_call c;
  std::memset(&c, 0, sizeof c);
  c.param = p, c.in = gi.data(), c.n_in = (int)gi.size();
  c.out = go.data(), c.n_out = (int)go.size(), c.req = req.data();
  for (int w = 0; w < c.n_out; ++w) {
    if (req[w] == MXC_REQ_NULL) continue;
    mxc__mp_step s = mxc__mp_plan(op.kind, p, &c, w);
    for (int64_t i = 0; i < s.n; ++i) mxc__mp_elem(&s, i);
  }
  if (inplace) {
    for (size_t w = 0; w < out->size(); ++w) (*out)[w] = (*in)[w * st];
  }
}

// Host against CPU for one call (mode: write, add, in place, the second
// output skipped); whether every array agreed bitwise.
bool MpAgree(const MpOp &op, const mxc__mp_param *p,
             const std::vector<Arr> &in, int n_w, int mode,
             std::mt19937 *g) {
  std::vector<int> req(n_w, mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE);
  if (mode == 3 && n_w > 1) req[1] = MXC_REQ_NULL;
  std::vector<Arr> out;
  for (int w = 0; w < n_w; ++w) {
    out.push_back(RandArr(op.dt, kMpSizes[w % 3], -1, 1, g));
  }
  std::vector<Arr> ci = in, hi = in, co = out, ho = out;
  MpCpu(op, &ci, &co, req, mode == 2);
  MpHost(op, p, &hi, &ho, req, mode == 2);
  bool ok = true;
  for (size_t i = 0; i < ci.size(); ++i) ok = ok && ci[i].b == hi[i].b;
  for (size_t w = 0; w < co.size(); ++w) ok = ok && co[w].b == ho[w].b;
  return ok;
}

int MpWeights(const mxc__mp_param *p) { return (int)p->num_weights; }

TEST(CudaMpPlan, UpdatesMatchTheCpuBitwise) {
  std::mt19937 g(71);
  for (size_t k = 0; k < kMpOps.size(); ++k) {
    const MpOp &op = kMpOps[k];
    void *param = Parse(op.name, op.kv);
    const auto *p = (const mxc__mp_param *)param;
    int n_w = MpWeights(p);
    std::vector<Arr> in = MpInputs(op, n_w, &g);
    std::vector<int> dts;
    for (const Arr &a : in) dts.push_back(a.dt);
    for (int w = 0; w < n_w; ++w) dts.push_back(op.dt);
    EXPECT_TRUE(mxc__mp_supports(op.kind, dts.data(), (int)in.size(), n_w))
        << op.name << " case " << k;
    for (int mode = 0; mode < 4; ++mode) {
      EXPECT_TRUE(MpAgree(op, p, in, n_w, mode, &g))
          << op.name << " case " << k << " mode " << mode;
    }
    mxc__free(param);
  }
}

// The comparison can fail: the momentum rounded to float, the groups'
// learning rates swapped, the gradient's clipping ignored.
TEST(CudaMpPlan, AWrongPlanFails) {
  std::mt19937 g(72);
  const MpOp &op = kMpOps[8];  // multi_mp_sgd_mom_update, bfloat16
  void *param = Parse(op.name, op.kv);
  mxc__mp_param p = *(const mxc__mp_param *)param;
  mxc__free(param);
  std::vector<Arr> in = MpInputs(op, 2, &g);
  ASSERT_TRUE(MpAgree(op, &p, in, 2, 0, &g));
  mxc__mp_param wrong = p;
  wrong.momentum = (float)p.momentum;
  EXPECT_FALSE(MpAgree(op, &wrong, in, 2, 0, &g));
  wrong = p;
  std::swap(wrong.lr_v[0], wrong.lr_v[1]);
  EXPECT_FALSE(MpAgree(op, &wrong, in, 2, 0, &g));
  wrong = p;
  wrong.clip_gradient = -1;
  EXPECT_FALSE(MpAgree(op, &wrong, in, 2, 0, &g));
}

TEST(CudaMpPlan, SupportedDtypes) {
  const int f32 = MXC_DTYPE_FLOAT32, f16 = MXC_DTYPE_FLOAT16;
  int mp_ok[] = {f16, f16, f32, f32, f16};
  EXPECT_TRUE(mxc__mp_supports(MXC__MP_SGD_MOM, mp_ok, 4, 1));
  int mp_undecided[] = {f16, -1, -1, f32, -1};
  EXPECT_TRUE(mxc__mp_supports(MXC__MP_SGD_MOM, mp_undecided, 4, 1));
  int mp_half_state[] = {f16, f16, f16, f32, f16};
  EXPECT_FALSE(mxc__mp_supports(MXC__MP_SGD_MOM, mp_half_state, 4, 1));
  int f64[] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64};
  EXPECT_FALSE(mxc__mp_supports(MXC__MP_MULTI, f64, 2, 1));
  int mom_half[] = {f16, f16, f16, f16};
  EXPECT_FALSE(mxc__mp_supports(MXC__MP_MULTI_MOM, mom_half, 3, 1));
  EXPECT_FALSE(mxc__mp_supports(MXC__MP_MULTI, mp_ok, 3, 1));  // arity
}

// all_finite's per-element test against multi_all_finite on the CPU:
// float32 NaN, float16 and bfloat16 infinities, float64, integers.
TEST(CudaMpPlan, AllFiniteMatchesTheCpu) {
  std::mt19937 g(73);
  std::vector<Arr> in = {RandArr(MXC_DTYPE_FLOAT32, 100, -1e30f, 1e30f, &g),
                         RandArr(MXC_DTYPE_FLOAT16, 50, -6e4f, 6e4f, &g),
                         RandArr(MXC_DTYPE_BFLOAT16, 30, -1, 1, &g)};
  Arr d = {MXC_DTYPE_FLOAT64, 5, Bytes(40)};
  Arr ints = {MXC_DTYPE_INT32, 4, Bytes(16, 0xff)};
  in.push_back(d), in.push_back(ints);
  for (int bad = -1; bad < 4; ++bad) {
    std::vector<Arr> x = in;
    if (bad == 0) mxc__mp_st(x[0].b.data(), x[0].dt, 17, NAN);
    if (bad == 1) mxc__mp_st(x[1].b.data(), x[1].dt, 3, 1e6);  // f16 inf
    if (bad == 2) mxc__mp_st(x[2].b.data(), x[2].dt, 29, -INFINITY);
    if (bad == 3) ((double *)x[3].b.data())[4] = INFINITY;
    for (int init : {0, 1}) {
      float host = init ? 1.f : 0.5f;
      for (const Arr &a : x) {
        for (size_t i = 0; i < a.n; ++i) {
          if (!mxc__mp_finite(a.b.data(), a.dt, (int64_t)i)) host = 0;
        }
      }
      std::string n = std::to_string(x.size());
      Kv kv = {{"num_arrays", n}, {"init_output", init ? "true" : "false"}};
      std::vector<const char *> k, v;
      for (const auto &q : kv) k.push_back(q.first.c_str());
      for (const auto &q : kv) v.push_back(q.second.c_str());
      std::vector<mxc_ndarray> a;
      for (const Arr &y : x) a.push_back(HostArr(y));
      Arr flag = {MXC_DTYPE_FLOAT32, 1, Bytes(4)};
      const float half = 0.5f;
      std::memcpy(flag.b.data(), &half, 4);
      mxc_ndarray o = HostArr(flag);
      mxc_op h = nullptr;
      ASSERT_EQ(mxc_op_find("multi_all_finite", &h), MXC_OK);
      int req = MXC_REQ_WRITE;
      ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), 2, a.data(),
                              (int)a.size(), &o, 1, &req),
                MXC_OK)
          << mxc_last_error();
      float cpu = -1;
      ASSERT_EQ(mxc_ndarray_copy_to_host(o, &cpu, 4), MXC_OK);
      EXPECT_EQ(cpu, host) << "bad input " << bad << " init " << init;
      EXPECT_EQ(host, bad < 0 ? (init ? 1.f : .5f) : 0.f);
      for (mxc_ndarray y : a) mxc_ndarray_free(y);
      mxc_ndarray_free(o);
    }
  }
}

// ---- mp_lamb_update_phase1 / phase2: mp_plan.h ----

struct LambCase {
  const char *name;
  int phase;
  Kv kv;
  int dt;  // the weight's dtype
};

const std::vector<LambCase> kLamb = {
    {"mp_lamb_update_phase1", 1, {{"wd", "0.01"}, {"t", "5"}},
     MXC_DTYPE_FLOAT16},
    {"mp_lamb_update_phase1", 1,
     {{"wd", "0"}, {"t", "2"}, {"bias_correction", "false"},
      {"clip_gradient", "0.3"}, {"rescale_grad", "2"}},
     MXC_DTYPE_BFLOAT16},
    {"mp_lamb_update_phase1", 1, {{"wd", "0.1"}, {"t", "1"}},
     MXC_DTYPE_FLOAT32},
    {"mp_lamb_update_phase2", 2, {{"lr", "0.01"}}, MXC_DTYPE_FLOAT16},
    {"mp_lamb_update_phase2", 2,
     {{"lr", "0.02"}, {"lower_bound", "0.5"}, {"upper_bound", "1.5"}},
     MXC_DTYPE_BFLOAT16},
    {"mp_lamb_update_phase2", 2, {{"lr", "0.03"}}, MXC_DTYPE_FLOAT32},
};

// weight, then phase 1's grad, mean, var or phase 2's g, r1, r2 (r2 = 0
// when zero_r2), then weight32.
std::vector<Arr> LambInputs(const LambCase &c, size_t n, bool zero_r2,
                            std::mt19937 *g) {
  const int f32 = MXC_DTYPE_FLOAT32;
  std::vector<Arr> in = {RandArr(c.dt, n, -2, 2, g)};
  if (c.phase == 1) {
    in.push_back(RandArr(c.dt, n, -3, 3, g));
    in.push_back(RandArr(f32, n, -.5f, .5f, g));
    in.push_back(RandArr(f32, n, 0, 1, g));
  } else {
    in.push_back(RandArr(f32, n, -1, 1, g));
    in.push_back(RandArr(f32, 1, 0.2f, 2, g));
    in.push_back(zero_r2 ? Arr{f32, 1, Bytes(4, 0)}
                         : RandArr(f32, 1, .5f, 3, g));
  }
  in.push_back(RandArr(f32, n, -2, 2, g));
  return in;
}

// The CPU operator (ins updated: mean, var) into out.
void LambCpu(const LambCase &c, std::vector<Arr> *in, Arr *out, int req) {
  mxc_op h = nullptr;
  ASSERT_EQ(mxc_op_find(c.name, &h), MXC_OK) << c.name;
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a;
  for (const Arr &x : *in) a.push_back(HostArr(x));
  mxc_ndarray o = HostArr(*out);
  ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), &o, 1, &req),
            MXC_OK)
      << c.name << ": " << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_copy_to_host(o, out->b.data(), out->b.size()), MXC_OK);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(a[i], (*in)[i].b.data(),
                                       (*in)[i].b.size()),
              MXC_OK);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  mxc_ndarray_free(o);
}

// mp.cu's run on host arrays: the plan, then the rule per element.
void LambHost(const LambCase &c, const mxc__opt_ext_param *p,
              std::vector<Arr> *in, Arr *out, int req) {
  std::vector<mxc__gpu_array> gi;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  mxc__gpu_array go = GpuArr(out);
  mxc__gpu_call call;
  std::memset(&call, 0, sizeof call);
  call.param = p, call.in = gi.data(), call.n_in = (int)gi.size();
  call.out = &go, call.n_out = 1, call.req = &req;
  mxc__mp_lamb_step s = mxc__mp_lamb_plan(c.phase, p, &call);
  for (int64_t i = 0; i < s.n; ++i) {
    if (c.phase == 1) {
      mxc__mp_lamb1(&s, i);
    } else {
      mxc__mp_lamb2(&s, i);
    }
  }
}

bool LambAgree(const LambCase &c, const mxc__opt_ext_param *p,
               const std::vector<Arr> &in, int req, std::mt19937 *g) {
  int odt = c.phase == 1 ? MXC_DTYPE_FLOAT32 : c.dt;
  Arr out = RandArr(odt, in[0].n, -1, 1, g);
  std::vector<Arr> ci = in, hi = in;
  Arr co = out, ho = out;
  LambCpu(c, &ci, &co, req);
  LambHost(c, p, &hi, &ho, req);
  bool ok = co.b == ho.b;
  for (size_t i = 0; i < ci.size(); ++i) ok = ok && ci[i].b == hi[i].b;
  return ok;
}

TEST(CudaMpPlan, MpLambMatchesTheCpuBitwise) {
  std::mt19937 g(74);
  for (size_t k = 0; k < kLamb.size(); ++k) {
    const LambCase &c = kLamb[k];
    void *param = Parse(c.name, c.kv);
    const auto *p = (const mxc__opt_ext_param *)param;
    for (size_t n : {7, 1031}) {
      std::vector<Arr> in = LambInputs(c, n, n == 7, &g);
      std::vector<int> dts;
      for (const Arr &a : in) dts.push_back(a.dt);
      dts.push_back(c.phase == 1 ? MXC_DTYPE_FLOAT32 : c.dt);
      EXPECT_TRUE(mxc__mp_lamb_supports(c.phase, dts.data(), 5, 1)) << k;
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        EXPECT_TRUE(LambAgree(c, p, in, req, &g))
            << c.name << " case " << k << " size " << n << " req " << req;
      }
    }
    mxc__free(param);
  }
}

// The comparison can fail: phase 1's bias correction from t - 1, phase
// 2's bounds ignored.
TEST(CudaMpPlan, AWrongLambPlanFails) {
  std::mt19937 g(75);
  void *param = Parse(kLamb[0].name, kLamb[0].kv);
  mxc__opt_ext_param p = *(const mxc__opt_ext_param *)param;
  mxc__free(param);
  std::vector<Arr> in = LambInputs(kLamb[0], 1031, false, &g);
  ASSERT_TRUE(LambAgree(kLamb[0], &p, in, MXC_REQ_WRITE, &g));
  p.t -= 1;
  EXPECT_FALSE(LambAgree(kLamb[0], &p, in, MXC_REQ_WRITE, &g));
  param = Parse(kLamb[4].name, kLamb[4].kv);
  p = *(const mxc__opt_ext_param *)param;
  mxc__free(param);
  in = LambInputs(kLamb[4], 1031, false, &g);
  // r1 below the lower bound, so the clamp matters
  const float small = 0.1f;
  std::memcpy(in[2].b.data(), &small, 4);
  ASSERT_TRUE(LambAgree(kLamb[4], &p, in, MXC_REQ_WRITE, &g));
  p.lower_bound = -1;
  EXPECT_FALSE(LambAgree(kLamb[4], &p, in, MXC_REQ_WRITE, &g));
}

}  // namespace
