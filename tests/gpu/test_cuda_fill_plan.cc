// The fills' and simple producers' per-element rules (backends/cuda/
// fill_plan.h, what fill.cu runs on the device) run on the host against
// the CPU operators through the C API, on every machine, bitwise: _zeros,
// _ones, _full, zeros_like, ones_like, _arange, _eye, add_n (1 to 70
// inputs: several launches), BlockGrad, MakeLoss, make_loss and
// _backward_MakeLoss (every normalization), in float32, float64, float16
// and bfloat16 where the operator takes them, write, add and in-place
// calls; and the loss heads' and softmax layers' rules (backends/cuda/
// loss2_plan.h, loss2.cu's): the regression outputs, smooth_l1, softmin,
// SoftmaxActivation, softmax_cross_entropy and their gradients, float32;
// and UpSampling's (backends/cuda/up_plan.h): nearest with one or several
// inputs, concat and sum, bilinear, and the gradients; and
// _contrib_BilinearResize2D's and _contrib_AdaptiveAvgPooling2D's
// (backends/cuda/resize_plan.h) with their gradients, shrinking and
// growing, align_corners on and off, mode like; and GroupNorm's and
// InstanceNorm's and LRN's (backends/cuda/gn_plan.h) with their hidden
// outputs and gradients.
// Parameters reach the rules through the operators' own parser
// (mxc__op_parse_params), so a drift between ops/'s structs and the
// rules' reading of them fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/fill_plan.h"  // C and C++ (half_hd.h's templates)
#include "backends/cuda/gn_plan.h"
#include "backends/cuda/loss2_plan.h"
#include "backends/cuda/resize_plan.h"
#include "backends/cuda/up_plan.h"
extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"

namespace {

using Bytes = std::vector<uint8_t>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

struct Arr {
  int dt;
  Dims d;
  Bytes b;
};

size_t Numel(const Dims &d) {
  size_t n = 1;
  for (int64_t v : d) n *= (size_t)v;
  return n;
}

size_t Esize(int dt) {
  return dt == MXC_DTYPE_FLOAT64 ? 8 : dt == MXC_DTYPE_FLOAT32 ? 4 : 2;
}

Arr RandArr(int dt, const Dims &d, double lo, double hi, std::mt19937 *g) {
  std::uniform_real_distribution<double> u(lo, hi);
  Arr a = {dt, d, Bytes(Numel(d) * Esize(dt))};
  for (size_t i = 0; i < Numel(d); ++i) {
    mxc__fill_st(a.b.data(), dt, (int64_t)i, u(*g));
  }
  return a;
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

mxc_ndarray HostArr(const Arr &a) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(a.d.data(), (int)a.d.size(), a.dt,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK)
      << mxc_last_error();
  if (!a.b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, a.b.data(), a.b.size()), MXC_OK);
  }
  return h;
}

// The CPU operator: out from its initial values (inplace: the output is
// input 0's array).
void Cpu(const char *name, const Kv &kv, const std::vector<Arr> &in, Arr *out,
         int req, bool inplace) {
  mxc_op h = nullptr;
  ASSERT_EQ(mxc_op_find(name, &h), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a;
  for (const Arr &x : in) a.push_back(HostArr(inplace && a.empty() ? *out : x));
  mxc_ndarray o = inplace ? a[0] : HostArr(*out);
  ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), &o, 1, &req),
            MXC_OK)
      << name << ": " << mxc_last_error();
  if (!out->b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(o, out->b.data(), out->b.size()),
              MXC_OK);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  if (!inplace) mxc_ndarray_free(o);
}

mxc__gpu_array GpuArr(Arr *a) {
  mxc__gpu_array g;
  std::memset(&g, 0, sizeof g);
  g.ptr = a->b.data();
  g.size = (int64_t)Numel(a->d);
  g.ndim = (int)a->d.size();
  for (int i = 0; i < g.ndim; ++i) g.dims[i] = a->d[i];
  g.dtype = a->dt;
  return g;
}

// fill.cu's dispatch on the host: the same plan functions and element
// rules, a loop in place of each launch.
void Host(const char *name, const void *param, std::vector<Arr> *in, Arr *out,
          int req, bool inplace) {
  if (inplace) (*in)[0] = *out;
  std::vector<mxc__gpu_array> gi;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  mxc__gpu_array go = inplace ? gi[0] : GpuArr(out);
  mxc__gpu_call c;
  std::memset(&c, 0, sizeof c);
  c.param = param, c.in = gi.data(), c.n_in = (int)gi.size();
  c.out = &go, c.n_out = 1, c.req = &req;
  int add = req == MXC_REQ_ADD, dt = go.dtype;
  int64_t n = go.size;
  std::string op = name;
  double v = op == "_ones" || op == "ones_like" ? 1 : 0;
  if (op == "_full") v = ((const mxc__fill_param *)param)->value;
  for (int64_t i = 0; op == "_arange" && i < n; ++i) {
    mxc__arange_plan q =
        mxc__arange_plan_make((const mxc__arange_param *)param, dt);
    mxc__fill_arange(&q, go.ptr, dt, add, i);
  }
  for (int64_t i = 0; op == "_eye" && i < n; ++i) {
    mxc__fill_eye(go.dims[1], ((const mxc__eye_param *)param)->k, go.ptr, dt,
                  add, i);
  }
  if (op == "_zeros" || op == "_ones" || op == "_full" || op == "zeros_like" ||
      op == "ones_like") {
    for (int64_t i = 0; i < n; ++i) mxc__fill_value(go.ptr, dt, add, v, i);
  }
  if (op == "add_n" || op == "BlockGrad" || op == "MakeLoss" ||
      op == "make_loss") {
    for (int j = 0; j < mxc__addn_launches(c.n_in); ++j) {
      mxc__addn_plan q = mxc__addn_plan_make(&c, j);
      for (int64_t i = 0; i < n; ++i) mxc__fill_addn(&q, go.ptr, i);
    }
  }
  if (op == "_backward_MakeLoss") {
    const auto *p = (const mxc__ml_param *)param;
    int64_t valid = 0;
    for (int64_t i = 0; i < n; ++i) {
      valid += mxc__ml_valid((const float *)gi[1].ptr, p->valid_thresh, i);
    }
    float g = (float)(p->grad_scale / mxc__ml_norm(p, &gi[1], valid));
    for (int64_t i = 0; i < n; ++i) mxc__ml_grad((float *)go.ptr, g, add, i);
  }
  if (inplace) *out = (*in)[0];
}

// Host against CPU for one call; whether the outputs agree bitwise.
bool Agree(const char *name, const Kv &kv, const std::vector<Arr> &in,
           const Arr &base, int req, bool inplace) {
  void *param = mxc__op_find(name)->param_size ? Parse(name, kv) : nullptr;
  std::vector<Arr> hi = in;
  Arr co = base, ho = base;
  Cpu(name, kv, in, &co, req, inplace);
  Host(name, param, &hi, &ho, req, inplace);
  mxc__free(param);
  return co.b == ho.b;
}

const int kDts[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
                    MXC_DTYPE_BFLOAT16};

std::string DtName(int dt) {
  return dt == MXC_DTYPE_FLOAT32   ? "float32"
         : dt == MXC_DTYPE_FLOAT64 ? "float64"
         : dt == MXC_DTYPE_FLOAT16 ? "float16"
                                   : "bfloat16";
}

TEST(CudaFillPlan, FillsMatchTheCpuBitwise) {
  std::mt19937 g(81);
  const Dims d = {3, 5, 2};
  for (int dt : kDts) {
    Kv shape = {{"shape", "(3,5,2)"}, {"dtype", DtName(dt)}};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Arr base = RandArr(dt, d, -3, 3, &g);
      for (const char *op : {"_zeros", "_ones"}) {
        EXPECT_TRUE(Agree(op, shape, {}, base, req, false)) << op << dt;
      }
      for (const char *value : {"0.3", "-70000.5", "1e-9"}) {
        Kv kv = shape;
        kv.push_back({"value", value});
        EXPECT_TRUE(Agree("_full", kv, {}, base, req, false)) << value << dt;
      }
      std::vector<Arr> like = {RandArr(dt, d, -1, 1, &g)};
      for (const char *op : {"zeros_like", "ones_like"}) {
        EXPECT_TRUE(Agree(op, {}, like, base, req, false)) << op << dt;
      }
    }
  }
}

struct ArangeCase {
  Kv kv;
  double start, stop, step;
  int repeat;
};

TEST(CudaFillPlan, ArangeAndEyeMatchTheCpuBitwise) {
  std::mt19937 g(82);
  const std::vector<ArangeCase> ar = {
      {{{"start", "0.1"}, {"stop", "7.3"}, {"step", "0.7"}, {"repeat", "2"}},
       0.1,
       7.3,
       0.7,
       2},
      {{{"start", "5"}}, 0, 5, 1, 1},
      {{{"start", "-3"}, {"stop", "3"}, {"step", "0.3"}}, -3, 3, 0.3, 1},
      {{{"start", "1000.5"}, {"stop", "900"}, {"step", "-0.37"}},
       1000.5,
       900,
       -0.37,
       1},
  };
  for (int dt : kDts) {
    for (size_t k = 0; k < ar.size(); ++k) {
      const ArangeCase &c = ar[k];
      Kv kv = c.kv;
      kv.push_back({"dtype", DtName(dt)});
      double len = std::ceil((c.stop - c.start) / c.step);
      Dims d = {(int64_t)len * c.repeat};
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Arr base = RandArr(dt, d, -3, 3, &g);
        EXPECT_TRUE(Agree("_arange", kv, {}, base, req, false))
            << "arange case " << k << " " << DtName(dt) << " req " << req;
      }
    }
    const std::vector<std::pair<Kv, Dims>> eye = {
        {{{"N", "4"}, {"M", "6"}, {"k", "1"}}, {4, 6}},
        {{{"N", "5"}, {"k", "-2"}}, {5, 5}},
        {{{"N", "3"}, {"M", "3"}, {"k", "5"}}, {3, 3}},
        {{{"N", "7"}, {"M", "2"}}, {7, 2}},
    };
    for (size_t k = 0; k < eye.size(); ++k) {
      Kv kv = eye[k].first;
      kv.push_back({"dtype", DtName(dt)});
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Arr base = RandArr(dt, eye[k].second, -3, 3, &g);
        EXPECT_TRUE(Agree("_eye", kv, {}, base, req, false))
            << "eye case " << k << " " << DtName(dt) << " req " << req;
      }
    }
  }
}

TEST(CudaFillPlan, SumsAndCopiesMatchTheCpuBitwise) {
  std::mt19937 g(83);
  const Dims d = {7, 11};
  for (int dt : kDts) {
    for (int n_args : {1, 2, 3, 70}) {
      std::vector<Arr> in;
      for (int i = 0; i < n_args; ++i) in.push_back(RandArr(dt, d, -2, 2, &g));
      Kv kv = {{"num_args", std::to_string(n_args)}};
      for (int mode = 0; mode < 3; ++mode) {
        Arr base = RandArr(dt, d, -2, 2, &g);
        int req = mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE;
        EXPECT_TRUE(Agree("add_n", kv, in, base, req, mode == 2))
            << "add_n of " << n_args << " " << DtName(dt) << " mode " << mode;
      }
    }
    std::vector<Arr> one = {RandArr(dt, d, -2, 2, &g)};
    const char *const copies[] = {"BlockGrad", "MakeLoss", "make_loss"};
    for (const char *op : copies) {
      // MakeLoss and make_loss take float32 and float64 only.
      if (op != copies[0] && dt != MXC_DTYPE_FLOAT32 &&
          dt != MXC_DTYPE_FLOAT64) {
        continue;
      }
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Arr base = RandArr(dt, d, -2, 2, &g);
        EXPECT_TRUE(Agree(op, {}, one, base, req, false)) << op << dt;
      }
    }
  }
}

TEST(CudaFillPlan, MakeLossGradientMatchesTheCpuBitwise) {
  std::mt19937 g(84);
  const Dims d = {6, 9};
  std::vector<Arr> in = {RandArr(MXC_DTYPE_FLOAT32, d, -1, 1, &g),
                         RandArr(MXC_DTYPE_FLOAT32, d, -1, 1, &g)};
  std::vector<Arr> below = {in[0], RandArr(MXC_DTYPE_FLOAT32, d, -2, 0, &g)};
  const std::vector<Kv> kvs = {
      {},
      {{"grad_scale", "3"}, {"normalization", "batch"}},
      {{"grad_scale", "0.7"},
       {"normalization", "valid"},
       {"valid_thresh", "0.2"}},
  };
  for (size_t k = 0; k < kvs.size(); ++k) {
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Arr base = RandArr(MXC_DTYPE_FLOAT32, d, -2, 2, &g);
      EXPECT_TRUE(Agree("_backward_MakeLoss", kvs[k], in, base, req, false))
          << "case " << k << " req " << req;
      // no valid element: the normalizer is 1
      EXPECT_TRUE(Agree("_backward_MakeLoss", kvs[k], below, base, req, false))
          << "case " << k << " req " << req << ", none valid";
    }
  }
}

// The comparison can fail: a wrong value, add_n's first ADD step rounded
// to float16 before the old value is added, a wrong eye diagonal.
TEST(CudaFillPlan, AWrongRuleFails) {
  std::mt19937 g(85);
  Arr base = RandArr(MXC_DTYPE_FLOAT16, {40}, -2, 2, &g);
  void *param = Parse(
      "_full", {{"shape", "(40,)"}, {"value", "0.3"}, {"dtype", "float16"}});
  ((mxc__fill_param *)param)->value = 0.30001;
  std::vector<Arr> none;
  Arr co = base, ho = base;
  Cpu("_full", {{"shape", "(40,)"}, {"value", "0.3"}, {"dtype", "float16"}},
      none, &co, MXC_REQ_ADD, false);
  Host("_full", param, &none, &ho, MXC_REQ_ADD, false);
  mxc__free(param);
  EXPECT_NE(co.b, ho.b);
  // add_n: (a + b) rounded to float16 first, then added to the output.
  std::vector<Arr> in = {RandArr(MXC_DTYPE_FLOAT16, {40}, -2, 2, &g),
                         RandArr(MXC_DTYPE_FLOAT16, {40}, -2, 2, &g)};
  co = base;
  Cpu("add_n", {{"num_args", "2"}}, in, &co, MXC_REQ_ADD, false);
  Arr wrong = base;
  for (int64_t i = 0; i < 40; ++i) {
    double s = mxc__fill_round(
        MXC_DTYPE_FLOAT16,
        mxc__fill_sum(MXC_DTYPE_FLOAT16,
                      mxc__fill_ld(in[0].b.data(), MXC_DTYPE_FLOAT16, i),
                      mxc__fill_ld(in[1].b.data(), MXC_DTYPE_FLOAT16, i)));
    mxc__fill_value(wrong.b.data(), MXC_DTYPE_FLOAT16, 1, s, i);
  }
  EXPECT_NE(co.b, wrong.b);
  ho = base;
  std::vector<Arr> hi = in;
  Host("add_n", nullptr, &hi, &ho, MXC_REQ_ADD, false);
  EXPECT_EQ(co.b, ho.b);
  // _eye with k off by one
  param = Parse("_eye", {{"N", "4"}, {"k", "1"}});
  ((mxc__eye_param *)param)->k = 0;
  Arr e = {MXC_DTYPE_FLOAT32, {4, 4}, Bytes(64, 0)}, ce = e;
  Cpu("_eye", {{"N", "4"}, {"k", "1"}}, none, &ce, MXC_REQ_WRITE, false);
  Host("_eye", param, &none, &e, MXC_REQ_WRITE, false);
  mxc__free(param);
  EXPECT_NE(ce.b, e.b);
}

// ---- loss2_plan.h ----

// loss2.cu's dispatch on the host over float32 arrays.
void HostLoss(const std::string &op, const void *param, std::vector<Arr> *in,
              Arr *out, int req) {
  std::vector<mxc__gpu_array> gi;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  auto f = [&](size_t k) { return (const float *)(*in)[k].b.data(); };
  float *y = (float *)out->b.data();
  int add = req == MXC_REQ_ADD;
  int64_t n = (int64_t)Numel(out->d);
  bool bwd = op.rfind("_backward_", 0) == 0;
  if (op.find("RegressionOutput") != std::string::npos) {
    double scale = mxc__l2_reg_scale((const mxc__reg_param *)param, &gi[1]);
    for (int64_t i = 0; i < n; ++i) {
      if (bwd) {
        mxc__l2_reg_bwd(op.find("MAE") != std::string::npos, scale, f(0), f(1),
                        y, add, i);
      } else {
        mxc__l2_reg_fwd(op.find("Logistic") != std::string::npos, f(0), y, add,
                        i);
      }
    }
  } else if (op.find("smooth_l1") != std::string::npos) {
    double sigma = ((const mxc__sl1_param *)param)->scalar;
    for (int64_t i = 0; i < n; ++i) {
      mxc__l2_sl1(sigma, bwd ? f(0) : nullptr, f(bwd), y, add, i);
    }
  } else if (op.find("softmin") != std::string::npos ||
             op.find("SoftmaxActivation") != std::string::npos) {
    bool sm = op.find("softmin") != std::string::npos;
    const auto *p = (const mxc__softmin_param *)param;
    mxc__l2_groups l =
        sm ? mxc__l2_split(&gi.back(), p->axis)
           : mxc__l2_sa_groups((const mxc__sa_param *)param, &gi.back());
    double t = sm && !std::isnan(p->temperature) ? p->temperature : 1;
    for (int64_t gr = 0; gr < l.outer * l.inner; ++gr) {
      if (sm && bwd) mxc__l2_softmin_bwd(l, t, f(0), f(1), y, add, gr);
      if (sm && !bwd) mxc__l2_softmin_fwd(l, t, f(0), y, add, gr);
      if (!sm && bwd) mxc__l2_sa_bwd(l, f(0), f(1), y, add, gr);
      if (!sm && !bwd) mxc__l2_sa_fwd(l, f(0), y, add, gr);
    }
  } else {  // softmax_cross_entropy
    const mxc__gpu_array &x = gi[bwd];
    int64_t rows = x.dims[0], c = x.dims[1];
    double loss = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (bwd) {
        mxc__l2_ce_bwd_row(f(1), f(2), c, f(0)[0], y, add, r);
        continue;
      }
      int valid = 0;
      double term = mxc__l2_ce_term(f(0), f(1), c, r, &valid);
      if (valid) loss += term;
    }
    if (!bwd) mxc__l2_put(y, 0, (float)loss, add);
  }
}

bool LossAgree(const char *name, const Kv &kv, const std::vector<Arr> &in,
               const Arr &base, int req) {
  void *param = mxc__op_find(name)->param_size ? Parse(name, kv) : nullptr;
  std::vector<Arr> hi = in;
  Arr co = base, ho = base;
  Cpu(name, kv, in, &co, req, false);
  HostLoss(name, param, &hi, &ho, req);
  mxc__free(param);
  return co.b == ho.b;
}

struct LossCase {
  const char *op;
  Kv kv;
  std::vector<Dims> in;  // the last input is the label where there is one
  Dims out;
};

const int kF32 = MXC_DTYPE_FLOAT32;

const std::vector<LossCase> kLoss = {
    {"LinearRegressionOutput", {}, {{8, 3}, {8, 3}}, {8, 3}},
    {"LogisticRegressionOutput", {}, {{8, 1}, {8}}, {8, 1}},
    {"MAERegressionOutput", {}, {{5, 4}, {5, 4}}, {5, 4}},
    {"_backward_LinearRegressionOutput",
     {{"grad_scale", "0.5"}},
     {{8, 3}, {8, 3}},
     {8, 3}},
    {"_backward_LogisticRegressionOutput", {}, {{8, 1}, {8}}, {8, 1}},
    {"_backward_MAERegressionOutput",
     {{"grad_scale", "3"}},
     {{5, 4}, {5, 4}},
     {5, 4}},
    {"smooth_l1", {}, {{7, 9}}, {7, 9}},
    {"smooth_l1", {{"scalar", "2.5"}}, {{7, 9}}, {7, 9}},
    {"_backward_smooth_l1", {{"scalar", "0.7"}}, {{7, 9}, {7, 9}}, {7, 9}},
    {"softmin", {}, {{4, 5, 6}}, {4, 5, 6}},
    {"softmin",
     {{"axis", "1"}, {"temperature", "0.7"}},
     {{4, 5, 6}},
     {4, 5, 6}},
    {"_backward_softmin",
     {{"axis", "0"}, {"temperature", "2"}},
     {{4, 5, 6}, {4, 5, 6}},
     {4, 5, 6}},
    {"SoftmaxActivation", {}, {{3, 4, 5}}, {3, 4, 5}},
    {"SoftmaxActivation", {{"mode", "channel"}}, {{3, 4, 5}}, {3, 4, 5}},
    {"_backward_SoftmaxActivation",
     {{"mode", "channel"}},
     {{3, 4, 5}, {3, 4, 5}},
     {3, 4, 5}},
    {"_backward_SoftmaxActivation", {}, {{3, 4, 5}, {3, 4, 5}}, {3, 4, 5}},
    {"softmax_cross_entropy", {}, {{9, 7}, {9}}, {1}},
    {"_backward_softmax_cross_entropy", {}, {{1}, {9, 7}, {9}}, {9, 7}},
};

// Inputs of a case: values in [-3, 3]; a softmax output in (0, 1);
// softmax_cross_entropy's labels classes and labels that are none.
std::vector<Arr> LossInputs(const LossCase &c, std::mt19937 *g) {
  std::vector<Arr> in;
  for (const Dims &d : c.in) in.push_back(RandArr(kF32, d, -3, 3, g));
  std::string op = c.op;
  if (op.find("cross_entropy") != std::string::npos) {
    float *label = (float *)in.back().b.data();
    const float labels[] = {0, 6, 3, 7, -1, 2.5f, 1, NAN, 5};
    for (int r = 0; r < 9; ++r) label[r] = labels[r];
  } else if (op.find("_backward_soft") == 0 || op.find("_backward_Soft") == 0) {
    in[1] = RandArr(kF32, c.in[1], 0.01, 0.99, g);
  }
  return in;
}

TEST(CudaLossPlan, LossesMatchTheCpuBitwise) {
  std::mt19937 g(86);
  for (size_t k = 0; k < kLoss.size(); ++k) {
    const LossCase &c = kLoss[k];
    std::vector<Arr> in = LossInputs(c, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Arr base = RandArr(kF32, c.out, -1, 1, &g);
      EXPECT_TRUE(LossAgree(c.op, c.kv, in, base, req))
          << c.op << " case " << k << " req " << req;
    }
  }
}

// The comparison can fail: the regression scale without num_output,
// softmin's groups along another axis, SoftmaxActivation's instance
// groups for channel.
TEST(CudaLossPlan, AWrongPlanFails) {
  std::mt19937 g(87);
  const LossCase &reg = kLoss[3];
  std::vector<Arr> in = LossInputs(reg, &g);
  Arr base = RandArr(kF32, reg.out, -1, 1, &g), co = base, ho = base;
  Cpu(reg.op, reg.kv, in, &co, MXC_REQ_WRITE, false);
  mxc__reg_param rp = {0.5 * 3};  // scale times num_output: wrong
  std::vector<Arr> hi = in;
  HostLoss(reg.op, &rp, &hi, &ho, MXC_REQ_WRITE);
  EXPECT_NE(co.b, ho.b);
  const LossCase &sm = kLoss[10];
  in = LossInputs(sm, &g);
  co = ho = RandArr(kF32, sm.out, -1, 1, &g);
  Cpu(sm.op, sm.kv, in, &co, MXC_REQ_WRITE, false);
  void *p = Parse(sm.op, sm.kv);
  ((mxc__softmin_param *)p)->axis = 2;
  hi = in;
  HostLoss(sm.op, p, &hi, &ho, MXC_REQ_WRITE);
  mxc__free(p);
  EXPECT_NE(co.b, ho.b);
  const LossCase &sa = kLoss[13];
  in = LossInputs(sa, &g);
  co = ho = RandArr(kF32, sa.out, -1, 1, &g);
  Cpu(sa.op, sa.kv, in, &co, MXC_REQ_WRITE, false);
  mxc__sa_param inst = {MXC__SA_INSTANCE};
  hi = in;
  HostLoss(sa.op, &inst, &hi, &ho, MXC_REQ_WRITE);
  EXPECT_NE(co.b, ho.b);
}

// ---- UpSampling: up_plan.h ----

// The CPU operator with several outputs (initial values, then results).
void CpuMulti(const char *name, const Kv &kv, const std::vector<Arr> &in,
              std::vector<Arr> *outs, const std::vector<int> &req) {
  mxc_op h = nullptr;
  ASSERT_EQ(mxc_op_find(name, &h), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a, o;
  for (const Arr &x : in) a.push_back(HostArr(x));
  for (const Arr &x : *outs) o.push_back(HostArr(x));
  ASSERT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)a.size(), o.data(), (int)o.size(), req.data()),
            MXC_OK)
      << name << ": " << mxc_last_error();
  for (size_t w = 0; w < o.size(); ++w) {
    Arr &y = (*outs)[w];
    if (!y.b.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_to_host(o[w], y.b.data(), y.b.size()), MXC_OK);
    }
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (mxc_ndarray x : o) mxc_ndarray_free(x);
}

// up.cu's dispatch on the host.
void HostUp(bool bwd, const mxc__up_param *p, std::vector<Arr> *in,
            std::vector<Arr> *outs, const std::vector<int> &req) {
  std::vector<mxc__gpu_array> gi, go;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  for (Arr &x : *outs) go.push_back(GpuArr(&x));
  auto f = [&](size_t k) { return (const float *)(*in)[k].b.data(); };
  auto o = [&](size_t k) { return (float *)(*outs)[k].b.data(); };
  bool sum = p->multi_input_mode == MXC__UP_SUM;
  if (p->sample_type == MXC__UP_BILINEAR) {
    const mxc__gpu_array &x = gi[bwd ? 1 : 0];
    for (size_t k = 0; k < (bwd ? 2u : 1u); ++k) {
      if (req[k] == MXC_REQ_NULL) continue;
      mxc__up_bil b = mxc__up_bil_make(p, &x, req[k] == MXC_REQ_ADD);
      for (int64_t i = 0; i < go[k].size; ++i) {
        if (!bwd) mxc__up_bil_fwd(&b, f(0), f(1), o(0), i);
        if (bwd && k == 0) mxc__up_bil_dx(&b, f(0), f(2), o(0), i);
        if (bwd && k == 1) mxc__up_bil_dw(&b, f(1), f(0), o(1), i);
      }
    }
    return;
  }
  int64_t c0 = 0;
  size_t parts = bwd ? go.size() : gi.size();
  for (size_t k = 0; k < parts; ++k) {
    const mxc__gpu_array &x = bwd ? go[k] : gi[k];
    const mxc__gpu_array &y = bwd ? gi[0] : go[0];
    int r = req[bwd ? k : 0];
    int add = bwd ? r == MXC_REQ_ADD : (sum && k > 0) || r == MXC_REQ_ADD;
    mxc__up_part q = mxc__up_part_make(&x, &y, sum ? 0 : c0, add);
    if (r != MXC_REQ_NULL && !bwd) {
      for (int64_t i = 0; i < q.n * q.c * q.oh * q.ow; ++i) {
        mxc__up_near_fwd(&q, f(k), o(0), i);
      }
    }
    if (r != MXC_REQ_NULL && bwd) {
      for (int64_t i = 0; i < x.size; ++i) mxc__up_near_bwd(&q, f(0), o(k), i);
    }
    c0 += q.c;
  }
}

struct UpCase {
  Kv kv;
  std::vector<Dims> in;  // the forward's inputs
  Dims out;
};

const std::vector<UpCase> kUp = {
    {{{"scale", "2"}}, {{2, 3, 4, 5}}, {2, 3, 8, 10}},
    {{{"scale", "2"}, {"num_args", "2"}},
     {{2, 3, 4, 5}, {2, 2, 2, 5}},
     {2, 5, 8, 10}},
    {{{"scale", "3"}, {"num_args", "2"}, {"multi_input_mode", "sum"}},
     {{1, 3, 4, 4}, {1, 3, 2, 2}},
     {1, 3, 12, 12}},
    {{{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "3"}},
     {{2, 3, 5, 4}, {3, 1, 4, 4}},
     {2, 3, 10, 8}},
    {{{"scale", "3"}, {"sample_type", "bilinear"}},
     {{1, 2, 3, 4}, {2, 1, 5, 5}},
     {1, 2, 9, 12}},
};

// Forward and backward of a case in the given modes, host against CPU.
bool UpAgree(const UpCase &c, bool bwd, const std::vector<int> &req,
             std::mt19937 *g) {
  const char *name = bwd ? "_backward_UpSampling" : "UpSampling";
  void *param = Parse(name, c.kv);
  std::vector<Arr> in, outs;
  if (bwd) in.push_back(RandArr(kF32, c.out, -2, 2, g));
  for (const Dims &d : c.in) in.push_back(RandArr(kF32, d, -2, 2, g));
  if (bwd) {
    for (const Dims &d : c.in) outs.push_back(RandArr(kF32, d, -1, 1, g));
  } else {
    outs.push_back(RandArr(kF32, c.out, -1, 1, g));
  }
  std::vector<Arr> co = outs, ho = outs, hi = in;
  CpuMulti(name, c.kv, in, &co, req);
  HostUp(bwd, (const mxc__up_param *)param, &hi, &ho, req);
  mxc__free(param);
  bool ok = true;
  for (size_t k = 0; k < co.size(); ++k) ok = ok && co[k].b == ho[k].b;
  return ok;
}

TEST(CudaUpPlan, UpSamplingMatchesTheCpuBitwise) {
  std::mt19937 g(88);
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  for (size_t k = 0; k < kUp.size(); ++k) {
    for (int req : {W, A}) {
      EXPECT_TRUE(UpAgree(kUp[k], false, {req}, &g))
          << "case " << k << " req " << req;
    }
    size_t n = kUp[k].in.size();
    for (const std::vector<int> &req :
         {std::vector<int>(n, W), std::vector<int>(n, A),
          n == 2 ? std::vector<int>{N, A} : std::vector<int>{A}}) {
      EXPECT_TRUE(UpAgree(kUp[k], true, req, &g))
          << "gradient case " << k << " req " << req[0];
    }
  }
}

// The comparison can fail: bilinear with the padding off by one, nearest
// concat without the channel offset.
TEST(CudaUpPlan, AWrongPlanFails) {
  std::mt19937 g(89);
  for (size_t k : {1, 3}) {
    const UpCase &c = kUp[k];
    void *param = Parse("UpSampling", c.kv);
    std::vector<Arr> in, co = {RandArr(kF32, c.out, -1, 1, &g)}, ho = co;
    for (const Dims &d : c.in) in.push_back(RandArr(kF32, d, -2, 2, &g));
    CpuMulti("UpSampling", c.kv, in, &co, {MXC_REQ_WRITE});
    auto *p = (mxc__up_param *)param;
    std::vector<mxc__gpu_array> gi;
    for (Arr &x : in) gi.push_back(GpuArr(&x));
    mxc__gpu_array go = GpuArr(&ho[0]);
    float *y = (float *)ho[0].b.data();
    if (k == 3) {
      mxc__up_bil b = mxc__up_bil_make(p, &gi[0], 0);
      b.pad += 1;
      for (int64_t i = 0; i < go.size; ++i) {
        mxc__up_bil_fwd(&b, (const float *)gi[0].ptr, (const float *)gi[1].ptr,
                        y, i);
      }
    } else {
      for (size_t j = 0; j < 2; ++j) {
        mxc__up_part q = mxc__up_part_make(&gi[j], &go, 0, 0);
        for (int64_t i = 0; i < q.n * q.c * q.oh * q.ow; ++i) {
          mxc__up_near_fwd(&q, (const float *)gi[j].ptr, y, i);
        }
      }
    }
    mxc__free(param);
    EXPECT_NE(co[0].b, ho[0].b) << "case " << k;
  }
}

// ---- resize_plan.h ----

struct RsCase {
  const char *op;
  Kv kv;
  std::vector<Dims> in;  // data[, like]
  Dims out;
};

const char kRs[] = "_contrib_BilinearResize2D";
const char kAp[] = "_contrib_AdaptiveAvgPooling2D";

const std::vector<RsCase> kRsCases = {
    {kRs, {{"height", "11"}, {"width", "4"}}, {{2, 3, 5, 7}}, {2, 3, 11, 4}},
    {kRs,
     {{"height", "11"}, {"width", "4"}, {"align_corners", "false"}},
     {{2, 3, 5, 7}},
     {2, 3, 11, 4}},
    {kRs,
     {{"height", "31"}, {"width", "45"}, {"align_corners", "false"}},
     {{1, 2, 3, 4}},
     {1, 2, 31, 45}},
    {kRs, {{"height", "7"}, {"width", "3"}}, {{1, 1, 1, 5}}, {1, 1, 7, 3}},
    {kRs,
     {{"mode", "like"}, {"align_corners", "false"}},
     {{2, 2, 4, 4}, {1, 1, 6, 9}},
     {2, 2, 6, 9}},
    {kAp, {{"output_size", "(3,4)"}}, {{2, 3, 7, 9}}, {2, 3, 3, 4}},
    {kAp, {{"output_size", "7"}}, {{1, 2, 5, 5}}, {1, 2, 7, 7}},
    {kAp, {}, {{1, 1, 10, 3}}, {1, 1, 1, 1}},
};

// resize.cu's dispatch on the host.
void HostRs(const RsCase &c, bool bwd, const void *param, std::vector<Arr> *in,
            std::vector<Arr> *outs, const std::vector<int> &req) {
  bool rs = std::string(c.op) == kRs;
  int align = rs ? ((const mxc__rs_param *)param)->align_corners : 0;
  Arr &o0 = (*outs)[0];
  if (bwd && outs->size() > 1 && req[1] == MXC_REQ_WRITE) {
    std::fill((*outs)[1].b.begin(), (*outs)[1].b.end(), 0);
  }
  if (req[0] == MXC_REQ_NULL) return;
  mxc__gpu_array x = bwd ? GpuArr(&o0) : GpuArr(&(*in)[0]);
  mxc__gpu_array y = bwd ? GpuArr(&(*in)[0]) : GpuArr(&o0);
  mxc__rs_plan q = mxc__rs_plan_make(&x, &y, align, req[0] == MXC_REQ_ADD);
  const float *a = (const float *)(*in)[0].b.data();
  float *b = (float *)o0.b.data();
  for (int64_t e = 0; e < (int64_t)Numel(o0.d); ++e) {
    if (rs && !bwd) mxc__rs_fwd(&q, a, b, e);
    if (rs && bwd) mxc__rs_bwd(&q, a, b, e);
    if (!rs && !bwd) mxc__ap_fwd(&q, a, b, e);
    if (!rs && bwd) mxc__ap_bwd(&q, a, b, e);
  }
}

bool RsAgree(const RsCase &c, bool bwd, const std::vector<int> &req,
             std::mt19937 *g) {
  std::string name = bwd ? std::string("_backward_") + c.op : c.op;
  void *param = Parse(name.c_str(), c.kv);
  std::vector<Arr> in, outs;
  if (bwd) in.push_back(RandArr(kF32, c.out, -2, 2, g));
  for (const Dims &d : c.in) in.push_back(RandArr(kF32, d, -2, 2, g));
  if (bwd) {
    for (const Dims &d : c.in) outs.push_back(RandArr(kF32, d, -1, 1, g));
  } else {
    outs.push_back(RandArr(kF32, c.out, -1, 1, g));
  }
  std::vector<Arr> co = outs, ho = outs, hi = in;
  CpuMulti(name.c_str(), c.kv, in, &co, req);
  HostRs(c, bwd, param, &hi, &ho, req);
  mxc__free(param);
  bool ok = true;
  for (size_t k = 0; k < co.size(); ++k) ok = ok && co[k].b == ho[k].b;
  return ok;
}

TEST(CudaResizePlan, ResizeAndAdaptivePoolMatchTheCpuBitwise) {
  std::mt19937 g(90);
  for (size_t k = 0; k < kRsCases.size(); ++k) {
    size_t n = kRsCases[k].in.size();
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      EXPECT_TRUE(RsAgree(kRsCases[k], false, {req}, &g))
          << kRsCases[k].op << " case " << k << " req " << req;
      EXPECT_TRUE(RsAgree(kRsCases[k], true, std::vector<int>(n, req), &g))
          << "gradient of " << kRsCases[k].op << " case " << k << " req "
          << req;
    }
  }
}

// The gradients' windows hold every output pixel reading an input pixel
// (all extents of the cases and more, both coordinate maps, the bins).
TEST(CudaResizePlan, WindowsHoldEveryReader) {
  for (int64_t in : {1, 2, 3, 5, 7, 10}) {
    for (int64_t n : {1, 3, 4, 7, 11, 31, 45}) {
      for (int64_t i = 0; i < in; ++i) {
        for (int align : {0, 1}) {
          int64_t lo, hi;
          mxc__rs_window(i, in, n, align, &lo, &hi);
          for (int64_t o = 0; o < n; ++o) {
            mxc__rs_tap t = mxc__rs_tap_of(o, in, n, align);
            EXPECT_TRUE(!(t.i0 == i || t.i1 == i) || (o >= lo && o < hi))
                << "in " << in << " out " << n << " align " << align
                << " pixel " << i << " position " << o;
          }
        }
        int64_t lo, hi;
        mxc__ap_window(i, in, n, &lo, &hi);
        for (int64_t o = 0; o < n; ++o) {
          int64_t b0, b1;
          mxc__ap_bin(o, in, n, &b0, &b1);
          EXPECT_TRUE(!(i >= b0 && i < b1) || (o >= lo && o < hi))
              << "bins: in " << in << " out " << n << " pixel " << i
              << " position " << o;
        }
      }
    }
  }
}

// The comparison can fail: align_corners misread.
TEST(CudaResizePlan, AWrongPlanFails) {
  std::mt19937 g(91);
  const RsCase &c = kRsCases[0];
  std::vector<Arr> in = {RandArr(kF32, c.in[0], -2, 2, &g)};
  std::vector<Arr> co = {RandArr(kF32, c.out, -1, 1, &g)}, ho = co;
  CpuMulti(c.op, c.kv, in, &co, {MXC_REQ_WRITE});
  void *param = Parse(c.op, c.kv);
  ((mxc__rs_param *)param)->align_corners = 0;
  HostRs(c, false, param, &in, &ho, {MXC_REQ_WRITE});
  mxc__free(param);
  EXPECT_NE(co[0].b, ho[0].b);
}

// ---- gn_plan.h ----

// gn.cu's dispatch on the host.
void HostGn(bool inst, bool bwd, const void *param, std::vector<Arr> *in,
            std::vector<Arr> *outs, const std::vector<int> &req) {
  std::vector<mxc__gpu_array> gi;
  for (Arr &x : *in) gi.push_back(GpuArr(&x));
  auto f = [&](size_t k) { return (const float *)(*in)[k].b.data(); };
  auto o = [&](size_t k) {
    return k < outs->size() ? (float *)(*outs)[k].b.data() : nullptr;
  };
  mxc__gn_plan q = mxc__gn_plan_make(inst, param, &gi[bwd ? 1 : 0], req.data(),
                                     (int)outs->size());
  if (!bwd) {
    for (int64_t qi = 0; qi < q.groups; ++qi) {
      mxc__gn_fwd(&q, f(0), f(1), f(2), o(0), o(1), o(2), qi);
    }
    return;
  }
  for (int64_t qi = 0; q.on[0] && qi < q.groups; ++qi) {
    mxc__gn_dx(&q, f(0), f(1), f(2), f(5), f(6), o(0), qi);
  }
  for (int k = 1; k < 3; ++k) {
    for (int64_t c = 0; q.on[k] && c < gi[1].dims[1]; ++c) {
      mxc__gn_dgb(&q, k, f(0), f(1), f(5), f(6), o(k), c);
    }
  }
}

struct GnCase {
  const char *op;
  Kv kv;
  Dims data;
  int64_t groups;
};

const std::vector<GnCase> kGn = {
    {"GroupNorm", {{"num_groups", "2"}}, {2, 4, 3, 5}, 2},
    {"GroupNorm", {{"num_groups", "3"}, {"eps", "0.01"}}, {3, 6, 7}, 3},
    {"InstanceNorm", {}, {3, 2, 7}, 2},
    {"InstanceNorm", {{"eps", "1e-5"}}, {2, 3, 4, 4}, 3},
};

TEST(CudaGnPlan, NormsMatchTheCpuBitwise) {
  std::mt19937 g(92);
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  for (size_t k = 0; k < kGn.size(); ++k) {
    const GnCase &c = kGn[k];
    bool inst = std::string(c.op) == "InstanceNorm";
    void *param = Parse(c.op, c.kv);
    Dims ch = {c.data[1]}, st = {c.data[0], c.groups};
    std::vector<Arr> in = {RandArr(kF32, c.data, -2, 2, &g),
                           RandArr(kF32, ch, 0.5, 1.5, &g),
                           RandArr(kF32, ch, -1, 1, &g)};
    for (const std::vector<int> &req :
         {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
          std::vector<int>{W, N, A}, std::vector<int>{W}}) {
      std::vector<Arr> outs = {RandArr(kF32, c.data, -1, 1, &g),
                               RandArr(kF32, st, -1, 1, &g),
                               RandArr(kF32, st, -1, 1, &g)};
      outs.resize(req.size());
      std::vector<Arr> co = outs, ho = outs, hi = in;
      CpuMulti(c.op, c.kv, in, &co, req);
      HostGn(inst, false, param, &hi, &ho, req);
      for (size_t j = 0; j < co.size(); ++j) {
        EXPECT_EQ(co[j].b, ho[j].b)
            << c.op << " case " << k << " output " << j << " req " << req[0];
      }
    }
    // The gradient from the CPU's forward results (out, mean, std|var).
    std::vector<Arr> fw = {RandArr(kF32, c.data, -1, 1, &g),
                           RandArr(kF32, st, -1, 1, &g),
                           RandArr(kF32, st, -1, 1, &g)};
    CpuMulti(c.op, c.kv, in, &fw, {W, W, W});
    std::vector<Arr> bin = {RandArr(kF32, c.data, -1, 1, &g),
                            in[0],
                            in[1],
                            in[2],
                            fw[0],
                            fw[1],
                            fw[2]};
    std::string bname = std::string("_backward_") + c.op;
    for (const std::vector<int> &req :
         {std::vector<int>{W, W, W}, std::vector<int>{A, A, A},
          std::vector<int>{N, W, A}}) {
      std::vector<Arr> outs = {RandArr(kF32, c.data, -1, 1, &g),
                               RandArr(kF32, ch, -1, 1, &g),
                               RandArr(kF32, ch, -1, 1, &g)};
      std::vector<Arr> co = outs, ho = outs, hi = bin;
      CpuMulti(bname.c_str(), c.kv, bin, &co, req);
      HostGn(inst, true, param, &hi, &ho, req);
      for (size_t j = 0; j < co.size(); ++j) {
        EXPECT_EQ(co[j].b, ho[j].b)
            << bname << " case " << k << " output " << j << " req " << req[0];
      }
    }
    // The comparison can fail: GroupNorm's groups as InstanceNorm's.
    if (k == 0) {
      std::vector<Arr> co = {RandArr(kF32, c.data, -1, 1, &g)}, ho = co;
      std::vector<Arr> hi = in;
      CpuMulti(c.op, c.kv, in, &co, {W});
      ((mxc__gn_param *)param)->num_groups = 4;
      HostGn(false, false, param, &hi, &ho, {W});
      EXPECT_NE(co[0].b, ho[0].b);
    }
    mxc__free(param);
  }
}

TEST(CudaGnPlan, LrnMatchesTheCpuBitwise) {
  std::mt19937 g(93);
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  const Dims d = {2, 7, 3, 4};
  for (const Kv &kv : {Kv{{"nsize", "3"}, {"alpha", "0.1"}, {"knorm", "1"}},
                       Kv{{"nsize", "5"}, {"alpha", "0.3"}, {"beta", "0.5"}},
                       Kv{{"nsize", "8"}}}) {
    void *param = Parse("LRN", kv);
    std::vector<Arr> in = {RandArr(kF32, d, -2, 2, &g)};
    auto host = [&](std::vector<Arr> *hi, std::vector<Arr> *ho,
                    const std::vector<int> &req, bool bwd) {
      std::vector<mxc__gpu_array> gi;
      for (Arr &x : *hi) gi.push_back(GpuArr(&x));
      auto f = [&](size_t k) { return (const float *)(*hi)[k].b.data(); };
      float *o0 = (float *)(*ho)[0].b.data();
      float *o1 = ho->size() > 1 ? (float *)(*ho)[1].b.data() : nullptr;
      mxc__lrn_plan q =
          mxc__lrn_plan_make((const mxc__lrn_param *)param, &gi[bwd ? 1 : 0],
                             req.data(), (int)ho->size());
      for (int64_t i = 0; i < gi[bwd ? 1 : 0].size; ++i) {
        if (bwd && q.on[0]) mxc__lrn_bwd(&q, f(0), f(1), f(2), f(3), o0, i);
        if (!bwd) mxc__lrn_fwd(&q, f(0), o0, o1, i);
      }
    };
    for (const std::vector<int> &req :
         {std::vector<int>{W, W}, std::vector<int>{A, A},
          std::vector<int>{W, N}, std::vector<int>{A}}) {
      std::vector<Arr> outs = {RandArr(kF32, d, -1, 1, &g),
                               RandArr(kF32, d, -1, 1, &g)};
      outs.resize(req.size());
      std::vector<Arr> co = outs, ho = outs, hi = in;
      CpuMulti("LRN", kv, in, &co, req);
      host(&hi, &ho, req, false);
      for (size_t j = 0; j < co.size(); ++j) {
        EXPECT_EQ(co[j].b, ho[j].b) << "LRN output " << j << " req " << req[0];
      }
    }
    std::vector<Arr> fw = {RandArr(kF32, d, -1, 1, &g),
                           RandArr(kF32, d, -1, 1, &g)};
    CpuMulti("LRN", kv, in, &fw, {W, W});
    std::vector<Arr> bin = {RandArr(kF32, d, -1, 1, &g), in[0], fw[0], fw[1]};
    for (int req : {W, A}) {
      std::vector<Arr> co = {RandArr(kF32, d, -1, 1, &g)}, ho = co, hi = bin;
      CpuMulti("_backward_LRN", kv, bin, &co, {req});
      host(&hi, &ho, {req}, true);
      EXPECT_EQ(co[0].b, ho[0].b) << "_backward_LRN req " << req;
    }
    // The comparison can fail: the window one channel narrower.
    std::vector<Arr> co = {fw[0]}, ho = co, hi = in;
    CpuMulti("LRN", kv, in, &co, {W});
    ((mxc__lrn_param *)param)->nsize -= 1;
    host(&hi, &ho, {W}, false);
    EXPECT_NE(co[0].b, ho[0].b);
    mxc__free(param);
  }
}

}  // namespace
