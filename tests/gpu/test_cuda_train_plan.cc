// The training-step kernels' per-element math (backends/cuda/train_plan.h,
// the functions train.cu runs on the device) run on the host against the
// CPU operators through the C API, on every machine: sgd_update,
// sgd_mom_update, adam_update (weight and mutated states; every write
// mode; with and without clipping, which switches the CPU between its
// float and double loops), Activation and _backward_Activation, and
// SoftmaxOutput and its gradient (backends/cuda/so_plan.h: every layout,
// class and probability labels, ignore_label, smoothing, normalizations).
//
// The parameters reach the plan through the operator's own parser
// (mxc__op_parse_params), so a drift between ops/*'s struct and the
// plan's reading of it fails here.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "backends/cuda/so_plan.h"
#include "backends/cuda/train_plan.h"
#include "core/base/alloc.h"
#include "core/base/gpu_plugin.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/plan_test_util.h"

namespace {

using Vec = std::vector<float>;
using Kv = std::vector<std::pair<std::string, std::string>>;

Vec Random(size_t n, float lo, float hi, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v(n);
  for (auto &x : v) x = u(*g);
  return v;
}

// Runs op on the CPU. ins are updated with the inputs after the call
// (the optimizers' states), outs hold the initial output and get the
// result. inplace: the output is input 0's array itself.
void Cpu(const char *name, const Kv &kv, std::vector<Vec> *ins, Vec *out,
         int req, bool inplace) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  int64_t n = (int64_t)out->size();
  std::vector<mxc_ndarray> a;
  for (Vec &x : *ins) {
    mxc_ndarray h = nullptr;
    ASSERT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                                 0, &h),
              MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_from_host(h, x.data(), x.size() * 4), MXC_OK);
    a.push_back(h);
  }
  mxc_ndarray o = a[0];
  if (!inplace) {
    ASSERT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                                 0, &o),
              MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_from_host(o, out->data(), out->size() * 4),
              MXC_OK);
  }
  ASSERT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), &o, 1, &req),
            MXC_OK)
      << mxc_last_error();
  ASSERT_EQ(mxc_ndarray_copy_to_host(o, out->data(), out->size() * 4),
            MXC_OK);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(mxc_ndarray_copy_to_host(a[i], (*ins)[i].data(),
                                       (*ins)[i].size() * 4),
              MXC_OK);
    mxc_ndarray_free(a[i]);
  }
  if (!inplace) mxc_ndarray_free(o);
}

// The operator's parsed parameter struct (mxc__free it).
void *Parse(const char *name, const Kv &kv) {
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(name), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK)
      << name;
  return param;
}

// Element index of the first difference beyond ulps float ulps of
// max(|b|, |base|) (base: an add-mode call's output before it, else
// empty; 0 ulps: bitwise, NaNs equal), or -1.
long FirstDiff(const Vec &a, const Vec &b, int ulps, const Vec &base = {}) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    double scale = std::fabs(b[i]);
    if (!base.empty()) scale = std::fmax(scale, std::fabs(base[i]));
    if (ulps == 0 ? std::memcmp(&a[i], &b[i], 4) != 0
                  : !(std::fabs(a[i] - b[i]) <= ulps * FLT_EPSILON * scale)) {
      return (long)i;
    }
  }
  return -1;
}

// The host run of a plan: w, g, states as the kernel sees them.
void RunPlan(const mxc__opt_plan &p, std::vector<Vec> *ins, Vec *out,
             bool inplace) {
  Vec &w = (*ins)[0];
  float *s0 = ins->size() > 2 ? (*ins)[2].data() : nullptr;
  float *s1 = ins->size() > 3 ? (*ins)[3].data() : nullptr;
  float *o = inplace ? w.data() : out->data();
  for (size_t i = 0; i < w.size(); ++i) {
    mxc__opt_elem(&p, w.data(), (*ins)[1].data(), s0, s1, o, (int64_t)i);
  }
  if (inplace) *out = w;
}

struct OptCase {
  const char *op;
  int n_states;
  Kv kv;
};

const OptCase kOpt[] = {
    {"sgd_update", 0, {{"lr", "0.1"}, {"wd", "0.01"}, {"rescale_grad", "0.5"}}},
    {"sgd_update", 0,
     {{"lr", "0.07"}, {"wd", "0.002"}, {"clip_gradient", "0.3"}}},
    {"sgd_mom_update", 1,
     {{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"},
      {"rescale_grad", "0.25"}}},
    {"sgd_mom_update", 1,
     {{"lr", "0.05"}, {"momentum", "0.8"}, {"clip_gradient", "0.2"}}},
    {"adam_update", 2,
     {{"lr", "0.01"}, {"wd", "0.001"}, {"beta1", "0.85"}, {"beta2", "0.99"},
      {"epsilon", "1e-6"}, {"rescale_grad", "2"}}},
    {"adam_update", 2, {{"lr", "0.003"}, {"clip_gradient", "0.5"}}},
};

enum Mode { kWrite, kAdd, kInplace };

// One case and mode: the plan against the CPU, bitwise (the same
// operations on the same floats and doubles); returns the CPU's weight.
void CheckOpt(const OptCase &c, Mode m, bool break_plan, std::mt19937 *g,
              bool *same) {
  const size_t n = 1000;
  std::vector<Vec> ins = {Random(n, -2, 2, g), Random(n, -3, 3, g)};
  for (int s = 0; s < c.n_states; ++s) {
    ins.push_back(s == 1 ? Random(n, 0, 1, g) : Random(n, -0.5, 0.5, g));
  }
  Vec out0 = Random(n, -1, 1, g);
  int req = m == kAdd ? MXC_REQ_ADD : MXC_REQ_WRITE;
  std::vector<Vec> cpu_in = ins, gpu_in = ins;
  Vec cpu_out = out0, gpu_out = out0;
  Cpu(c.op, c.kv, &cpu_in, &cpu_out, req, m == kInplace);
  void *param = Parse(c.op, c.kv);
  ASSERT_NE(param, nullptr);
  mxc__opt_plan p;
  // An in-place invoke (output = the weight's array) reaches the kernel
  // as a write (only the executor's in-place plans say INPLACE, and the
  // plan treats that as the CPU does: the double loop).
  int gpu_req = m == kAdd ? MXC__GPU_REQ_ADD : MXC__GPU_REQ_WRITE;
  mxc__opt_plan_make(mxc__opt_kind(c.op), (const mxc__opt_param *)param,
                     gpu_req, &p);
  mxc__free(param);
  if (break_plan) p.fast = !p.fast;
  RunPlan(p, &gpu_in, &gpu_out, m == kInplace);
  *same = FirstDiff(gpu_out, cpu_out, 0) < 0;
  for (size_t i = 2; i < ins.size(); ++i) {
    *same = *same && FirstDiff(gpu_in[i], cpu_in[i], 0) < 0;
  }
}

TEST(CudaTrainPlan, OptimizersMatchTheCpuBitwise) {
  std::mt19937 g(17);
  for (const OptCase &c : kOpt) {
    for (Mode m : {kWrite, kAdd, kInplace}) {
      bool same = false;
      CheckOpt(c, m, false, &g, &same);
      EXPECT_TRUE(same) << c.op << " " << c.kv[0].second << " mode " << m;
    }
  }
}

// The check can fail: the other loop (float where the CPU computes in
// double, or the reverse) rounds differently somewhere in 1000 elements.
TEST(CudaTrainPlan, AWrongLoopChoiceFails) {
  std::mt19937 g(18);
  for (int k : {0, 2}) {
    if (std::string(kOpt[k].op) == "adam_update") continue;
    bool same = true;
    CheckOpt(kOpt[k], kWrite, true, &g, &same);
    EXPECT_FALSE(same) << kOpt[k].op;
  }
}

TEST(CudaTrainPlan, OperatorNames) {
  EXPECT_EQ(mxc__opt_kind("sgd_update"), MXC__OPT_SGD);
  EXPECT_EQ(mxc__opt_kind("sgd_mom_update"), MXC__OPT_SGD_MOM);
  EXPECT_EQ(mxc__opt_kind("adam_update"), MXC__OPT_ADAM);
  EXPECT_EQ(mxc__opt_kind("nag_mom_update"), -1);
}

// The CPU's float loop runs for write mode WRITE without clipping only
// (ops/random/optimizer.c's fast_f32): INPLACE, as the executor's
// in-place plans pass it, takes the double loop there and here.
TEST(CudaTrainPlan, LoopChoiceFollowsTheCpu) {
  mxc__opt_param p = {};
  p.lr = 0.1, p.clip_gradient = -1;
  mxc__opt_plan plan;
  mxc__opt_plan_make(MXC__OPT_SGD, &p, MXC__GPU_REQ_WRITE, &plan);
  EXPECT_EQ(plan.fast, 1);
  mxc__opt_plan_make(MXC__OPT_SGD_MOM, &p, MXC__GPU_REQ_INPLACE, &plan);
  EXPECT_EQ(plan.fast, 0);
  mxc__opt_plan_make(MXC__OPT_SGD, &p, MXC__GPU_REQ_ADD, &plan);
  EXPECT_EQ(plan.fast, 0);
  EXPECT_EQ(plan.add, 1);
  mxc__opt_plan_make(MXC__OPT_ADAM, &p, MXC__GPU_REQ_WRITE, &plan);
  EXPECT_EQ(plan.fast, 0);
  p.clip_gradient = 0.5;
  mxc__opt_plan_make(MXC__OPT_SGD, &p, MXC__GPU_REQ_WRITE, &plan);
  EXPECT_EQ(plan.fast, 0);
}

const char *const kActs[] = {"relu", "sigmoid", "tanh", "softrelu",
                             "softsign"};

// The CPU's float32 sigmoid and tanh are vectorized approximations
// (core/op/vmath.h, within a few ulps); the others, and every gradient,
// are the same operations as the plan's.
int ActUlps(const std::string &t, bool backward) {
  return !backward && (t == "sigmoid" || t == "tanh") ? 4 : 0;
}

void CheckAct(const char *t, bool backward, int req, std::mt19937 *g) {
  const size_t n = 2000;
  Kv kv = {{"act_type", t}};
  Vec x = Random(n, -9, 9, g), dy = Random(n, -2, 2, g);
  x[0] = 0.f, x[1] = -0.f, x[2] = 40.f, x[3] = -40.f, x[4] = 1e-30f;
  Vec y(n);
  for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]) * 0.5f + 0.5f;
  Vec out0 = Random(n, -1, 1, g), cpu = out0;
  std::vector<Vec> ins = backward ? std::vector<Vec>{dy, x, y}
                                  : std::vector<Vec>{x};
  const char *op = backward ? "_backward_Activation" : "Activation";
  Cpu(op, kv, &ins, &cpu, req, false);
  void *param = Parse(op, kv);
  ASSERT_NE(param, nullptr);
  int type = ((const mxc__act_param *)param)->act_type;
  mxc__free(param);
  Vec host = out0;
  for (size_t i = 0; i < n; ++i) {
    float v = backward ? mxc__act_bwd(type, dy[i], x[i], y[i])
                       : mxc__act_fwd(type, x[i]);
    host[i] = req == MXC_REQ_ADD ? host[i] + v : v;
  }
  long at = FirstDiff(host, cpu, ActUlps(t, backward),
                      req == MXC_REQ_ADD ? out0 : Vec());
  EXPECT_LT(at, 0) << op << " " << t << " req " << req << ": element " << at
                   << " x " << x[at < 0 ? 0 : at] << " host "
                   << host[at < 0 ? 0 : at] << " cpu " << cpu[at < 0 ? 0 : at];
}

TEST(CudaTrainPlan, ActivationMatchesTheCpu) {
  std::mt19937 g(19);
  for (const char *t : kActs) {
    for (bool backward : {false, true}) {
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        CheckAct(t, backward, req, &g);
      }
    }
  }
}

// The activation check can fail: sigmoid's gradient is not tanh's.
TEST(CudaTrainPlan, AWrongActivationFails) {
  std::vector<Vec> ins = {{1.f, 2.f}, {0.3f, -0.2f}, {0.4f, 0.7f}};
  Vec cpu = {0, 0};
  Cpu("_backward_Activation", {{"act_type", "sigmoid"}}, &ins, &cpu,
      MXC_REQ_WRITE, false);
  Vec host = {mxc__act_bwd(MXC__ACT_TANH, 1.f, 0.3f, 0.4f),
              mxc__act_bwd(MXC__ACT_TANH, 2.f, -0.2f, 0.7f)};
  EXPECT_GE(FirstDiff(host, cpu, 0), 0);
}

// _backward_add/_sub/_mul/_div: both gradients, each write mode pair,
// bitwise (the CPU's float rows, the same operations).
TEST(CudaTrainPlan, BinaryGradientsMatchTheCpuBitwise) {
  const char *ops[] = {"_backward_add", "_backward_sub", "_backward_mul",
                       "_backward_div"};
  std::mt19937 g(31);
  const size_t n = 777;
  for (int op = 0; op < 4; ++op) {
    Vec og = Random(n, -2, 2, &g), a = Random(n, -3, 3, &g);
    Vec b = Random(n, 0.5f, 3, &g), base_a = Random(n, -1, 1, &g),
        base_b = Random(n, -1, 1, &g);
    for (size_t i = 0; i < n; i += 2) b[i] = -b[i];
    for (int ra : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      for (int rb : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        mxc_op h = nullptr;
        ASSERT_EQ(mxc_op_find(ops[op], &h), MXC_OK);
        int64_t len = (int64_t)n;
        std::vector<mxc_ndarray> in, out;
        for (const Vec *v : {&og, &a, &b, &base_a, &base_b}) {
          mxc_ndarray x = nullptr;
          ASSERT_EQ(mxc_ndarray_create(&len, 1, MXC_DTYPE_FLOAT32,
                                       MXC_DEVICE_CPU, 0, 0, &x),
                    MXC_OK);
          ASSERT_EQ(mxc_ndarray_copy_from_host(x, v->data(), n * 4), MXC_OK);
          (in.size() < 3 ? in : out).push_back(x);
        }
        int req[2] = {ra, rb};
        ASSERT_EQ(mxc_op_invoke(h, nullptr, nullptr, 0, in.data(), 3,
                                out.data(), 2, req),
                  MXC_OK)
            << mxc_last_error();
        Vec cpu_a(n), cpu_b(n), host_a = base_a, host_b = base_b;
        ASSERT_EQ(mxc_ndarray_copy_to_host(out[0], cpu_a.data(), n * 4),
                  MXC_OK);
        ASSERT_EQ(mxc_ndarray_copy_to_host(out[1], cpu_b.data(), n * 4),
                  MXC_OK);
        for (mxc_ndarray x : in) mxc_ndarray_free(x);
        for (mxc_ndarray x : out) mxc_ndarray_free(x);
        for (size_t i = 0; i < n; ++i) {
          float va = mxc__bin_grad_a(op, og[i], a[i], b[i]);
          float vb = mxc__bin_grad_b(op, og[i], a[i], b[i]);
          host_a[i] = ra == MXC_REQ_ADD ? host_a[i] + va : va;
          host_b[i] = rb == MXC_REQ_ADD ? host_b[i] + vb : vb;
        }
        EXPECT_LT(FirstDiff(host_a, cpu_a, 0), 0) << ops[op] << " dlhs";
        EXPECT_LT(FirstDiff(host_b, cpu_b, 0), 0) << ops[op] << " drhs";
      }
    }
  }
}

// And it can fail: div's rhs gradient as -a/b^2 computed as -(a/b)/b
// rounds differently somewhere.
TEST(CudaTrainPlan, AWrongBinaryGradientFails) {
  std::mt19937 g(32);
  Vec a = Random(500, -3, 3, &g), b = Random(500, 0.5f, 3, &g);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    float right = mxc__bin_grad_b(MXC__BG_DIV, 1.f, a[i], b[i]);
    float wrong = 1.f * (-(a[i] / b[i]) / b[i]);
    differs |= std::memcmp(&right, &wrong, 4) != 0;
  }
  EXPECT_TRUE(differs);
}

// ---- SoftmaxOutput (so_plan.h) ----

struct SoCase {
  Kv kv;
  std::vector<int64_t> data, label;  // label == data: probabilities
};

const SoCase kSo[] = {
    {{}, {5, 7}, {5}},
    {{{"normalization", "batch"}, {"grad_scale", "1.5"}}, {4, 3, 2}, {4}},
    {{{"multi_output", "true"}, {"normalization", "batch"}},
     {3, 4, 2, 3},
     {3, 2, 3}},
    {{{"preserve_shape", "true"}, {"use_ignore", "true"},
      {"ignore_label", "2"}, {"smooth_alpha", "0.1"}},
     {2, 3, 6},
     {2, 3}},
    {{{"multi_output", "true"}, {"normalization", "null"}}, {2, 5, 4}, {2, 4}},
    {{{"grad_scale", "0.5"}}, {3, 6}, {3, 6}},
};

// Labels: classes in range, and some that are not classes (fractional,
// negative, too large, NaN: target 0 on both sides); ignore_label 2 among
// them. Probabilities for a label shaped like the data.
Vec SoLabels(const SoCase &c, int64_t n_classes, std::mt19937 *g) {
  int64_t n = mxct::Numel(c.label);
  if (c.label == c.data) return Random((size_t)n, 0, 1, g);
  Vec v((size_t)n);
  const float odd[] = {1.5f, -1.f, 1000.f, NAN, 2.f};
  for (int64_t i = 0; i < n; ++i) {
    v[(size_t)i] = i % 3 == 2 ? odd[(i / 3) % 5]
                              : (float)((i * 7 + 3) % n_classes);
  }
  return v;
}

// op on the CPU over (in0, label) into an output starting as out.
Vec SoCpu(const char *op_name, const SoCase &c, const Vec &in0,
          const Vec &label, Vec out, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(op_name, &op), MXC_OK);
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  mxc_ndarray a[2] = {mxct::Cpu(c.data, in0), mxct::Cpu(c.label, label)};
  mxc_ndarray o = mxct::Cpu(c.data, out);
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a, 2, &o, 1,
                          &req),
            MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_copy_to_host(o, out.data(), out.size() * 4), MXC_OK);
  for (mxc_ndarray x : {a[0], a[1], o}) mxc_ndarray_free(x);
  return out;
}

// The plan of case c on the host, as loss.cu runs it (every group, or
// every element backward); break_plan swaps the class and inner axes.
Vec SoPlan(const SoCase &c, int backward, const Vec &in0, const Vec &label,
           Vec out, int req, bool break_plan, int *rc) {
  mxc__gpu_array arr[3] = {mxct::Arr(c.data), mxct::Arr(c.label),
                           mxct::Arr(c.data)};
  int gpu_req = req == MXC_REQ_ADD ? MXC__GPU_REQ_ADD : MXC__GPU_REQ_WRITE;
  void *param = Parse(backward ? "_backward_SoftmaxOutput" : "SoftmaxOutput",
                      c.kv);
  mxc__gpu_call call = {};
  call.param = param;
  call.in = arr;
  call.n_in = 2;
  call.out = &arr[2];
  call.n_out = 1;
  call.req = &gpu_req;
  mxc__so_plan p;
  char why[256];
  *rc = mxc__so_plan_make(&call, backward, &p, why, sizeof why);
  mxc__free(param);
  if (*rc != MXC_OK) return out;
  if (break_plan) std::swap(p.n, p.inner);
  int64_t n = (int64_t)out.size();
  for (int64_t i = 0; i < (backward ? n : p.outer * p.inner); ++i) {
    if (backward) {
      mxc__so_backward(&p, in0.data(), label.data(), out.data(), i);
    } else {
      mxc__so_forward(&p, in0.data(), out.data(), i);
    }
  }
  return out;
}

// Forward then backward of case c, write and add, the plan against the
// CPU bitwise (the same double operations, the host's exp on both);
// *same false at the first difference.
void CheckSo(const SoCase &c, bool break_plan, bool *same) {
  std::mt19937 g(41);
  int64_t n = mxct::Numel(c.data);
  Vec x = Random((size_t)n, -4, 4, &g), base = Random((size_t)n, -1, 1, &g);
  int64_t classes = n / (c.label == c.data ? 1 : mxct::Numel(c.label));
  Vec label = SoLabels(c, classes, &g);
  *same = true;
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    int rc = 0;
    Vec y = SoCpu("SoftmaxOutput", c, x, label, base, req);
    Vec py = SoPlan(c, 0, x, label, base, req, break_plan, &rc);
    EXPECT_EQ(rc, MXC_OK);
    *same = *same && FirstDiff(py, y, 0) < 0;
    Vec dx = SoCpu("_backward_SoftmaxOutput", c, y, label, base, req);
    Vec pdx = SoPlan(c, 1, y, label, base, req, break_plan, &rc);
    EXPECT_EQ(rc, MXC_OK);
    *same = *same && FirstDiff(pdx, dx, 0) < 0;
  }
}

TEST(CudaSoPlan, SoftmaxOutputMatchesTheCpuBitwise) {
  for (const SoCase &c : kSo) {
    bool same = false;
    CheckSo(c, false, &same);
    EXPECT_TRUE(same) << "case with " << c.kv.size() << " parameters, data of "
                      << mxct::Numel(c.data) << " values";
  }
}

// The check can fail: the class axis taken as the inner one.
TEST(CudaSoPlan, AWrongLayoutFails) {
  bool same = true;
  CheckSo(kSo[2], true, &same);
  EXPECT_FALSE(same);
}

// normalization 'valid' is refused backward (a count over the labels),
// accepted forward; a label that fits no layout is a shape error.
TEST(CudaSoPlan, RefusesWhatItDoesNotCompute) {
  SoCase valid = {{{"normalization", "valid"}}, {4, 3}, {4}};
  Vec x(12, 0.5f), label(4, 1.f), out(12, 0.f);
  int rc = 0;
  SoPlan(valid, 1, x, label, out, MXC_REQ_WRITE, false, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  SoPlan(valid, 0, x, label, out, MXC_REQ_WRITE, false, &rc);
  EXPECT_EQ(rc, MXC_OK);
  SoCase bad = {{}, {4, 3}, {3}};
  SoPlan(bad, 1, x, Vec(3, 1.f), out, MXC_REQ_WRITE, false, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
}

}  // namespace
