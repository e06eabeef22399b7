// Conformance cases of the backward and reduction kernels of
// backends/cuda/bgrad.h (_backward_broadcast_add/sub/mul/div) and red.h
// (max, min, prod, nansum, nanprod, norm; _backward_sum, _mean, _max,
// _min, _nansum, _norm, _prod, _nanprod) and of the optimizer updates of
// optim.h (nag_mom_update, rmsprop_update, rmspropalex_update,
// adagrad_update, ftrl_update, signsgd_update, signum_update,
// ftml_update, lamb_update_phase1 and _phase2: the new weight and the
// states, write, add and in-place calls), on the GPU against the CPU
// operators with the same random inputs: GPU outputs poisoned before a
// write (an element never written fails), every pair of write modes,
// shapes stretched along leading, trailing and middle axes, a bias-like
// (N, C, H, W) + (1, C, 1, 1), 0-d and empty arrays.
//
// Tolerances, in float ulps of max(|cpu|, |output before an add|):
// - _backward_broadcast_*: 2 ulps. Both sides sum float partials (the
//   same float operations, -fmad=false) in double, in different orders
//   (the CPU by rows of up to 256, the GPU by thread or by 256 strided
//   partials and a tree), so the floats differ only where the two double
//   sums round differently; groups of one element are bitwise. Magnitudes
//   in [0.5, 3]: little cancellation.
// - max, min: bitwise (exact comparisons; NaN propagates on both sides).
// - prod, nansum, nanprod, norm: 2 ulps (double accumulations in different
//   orders, as sum and mean).
// - the reductions' gradients: bitwise (one double expression of ograd,
//   the element and the forward output, rounded once on both sides), but
//   prod's and nanprod's: 2 ulps (the group's product of the other
//   elements in another order).
// - the optimizer updates: 1 ulp (see OptCases: expected bitwise).
//
// The same cases run CPU against CPU on every machine
// (GpuConformanceBwd.CasesAreValidCallsOnTheCpu).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::Poison;

using mxct::LastError;
using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// Uniform in [lo, hi], each value negated with probability 1/2 when
// signed_.
Vec Random(const Dims &d, float lo, float hi, std::mt19937 *g,
           bool signed_ = false) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = signed_ && (*g)() % 2 ? -u(*g) : u(*g);
  return v;
}

// An array of shape d on dev holding v.
mxc_ndarray Filled(const Dims &d, int dev, const Vec &v) {
  mxc_ndarray a = mxct::Make(d, dev, 0);
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
        << LastError();
  }
  return a;
}

int ReadBack(mxc_ndarray a, Vec *v) {
  int rc = mxc_ndarray_wait_to_read(a);
  if (rc == MXC_OK && !v->empty()) {
    rc = mxc_ndarray_copy_to_host(a, v->data(), v->size() * 4);
  }
  return rc;
}

// One array of a call: its shape and values (read back after the call).
struct Arg {
  Dims d;
  Vec v;
};

// Runs op on dev: inputs and outputs (initial values in, results out;
// inputs read back too: the optimizers' states); inplace: output 0 is
// input 0's array.
int Run(const char *name, const Kv &kv, int dev, std::vector<Arg> *in,
        std::vector<Arg> *out, const std::vector<int> &req, bool inplace) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a, o;
  for (size_t i = 0; i < in->size(); ++i) {
    const Arg &x = inplace && i == 0 ? (*out)[0] : (*in)[i];
    a.push_back(Filled(x.d, dev, x.v));
  }
  for (size_t i = 0; i < out->size(); ++i) {
    o.push_back(inplace && i == 0 ? a[0]
                                  : Filled((*out)[i].d, dev, (*out)[i].v));
  }
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), o.data(), (int)o.size(), req.data());
  for (size_t i = 0; rc == MXC_OK && i < o.size(); ++i) {
    rc = ReadBack(o[i], &(*out)[i].v);
  }
  for (size_t i = 0; rc == MXC_OK && i < a.size(); ++i) {
    if (!(inplace && i == 0)) rc = ReadBack(a[i], &(*in)[i].v);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (size_t i = inplace ? 1 : 0; i < o.size(); ++i) mxc_ndarray_free(o[i]);
  return rc;
}

// gpu against cpu within `ulps` float ulps of max(|cpu|, |base|) (base:
// the values before an add-mode call, else empty).
void ExpectUlps(const std::string &what, const Vec &gpu, const Vec &cpu,
                const Vec &base, int ulps) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &gpu[i], 4);
    if (bits == mxct::kPoisonBits) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    if (std::isnan(gpu[i]) && std::isnan(cpu[i])) continue;
    double scale = std::fabs(cpu[i]);
    if (!base.empty()) scale = std::fmax(scale, std::fabs(base[i]));
    if (!(std::fabs((double)gpu[i] - cpu[i]) <= ulps * FLT_EPSILON * scale)) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i]
                    << " on the GPU, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// One call on the CPU and on dev from the same values; every output (and
// input) compared. Outputs in write mode are poisoned on dev.
void Compare(int dev, const std::string &what, const char *op, const Kv &kv,
             const std::vector<Arg> &in, const std::vector<Arg> &out,
             const std::vector<int> &req, bool inplace, int ulps) {
  std::vector<Arg> ci = in, gi = in, co = out, go = out;
  for (size_t i = 0; i < go.size(); ++i) {
    if (req[i] == MXC_REQ_WRITE && !inplace) {
      go[i].v.assign(go[i].v.size(), Poison());
    }
  }
  ASSERT_EQ(Run(op, kv, MXC_DEVICE_CPU, &ci, &co, req, inplace), MXC_OK)
      << what << " on the CPU: " << LastError();
  ASSERT_EQ(Run(op, kv, dev, &gi, &go, req, inplace), MXC_OK)
      << what << " on the GPU: " << LastError();
  for (size_t i = 0; i < co.size(); ++i) {
    Vec base = req[i] == MXC_REQ_ADD ? out[i].v : Vec();
    ExpectUlps(what + " output " + std::to_string(i), go[i].v, co[i].v, base,
               ulps);
  }
  for (size_t i = 0; i < ci.size(); ++i) {
    ExpectUlps(what + " input " + std::to_string(i) + " after", gi[i].v,
               ci[i].v, Vec(), ulps);
  }
}

const std::vector<std::vector<int>> kPairModes = {
    {MXC_REQ_WRITE, MXC_REQ_WRITE},
    {MXC_REQ_ADD, MXC_REQ_ADD},
    {MXC_REQ_WRITE, MXC_REQ_NULL},
    {MXC_REQ_NULL, MXC_REQ_ADD}};

// ---- _backward_broadcast_* ----

// (lhs, rhs) shapes; ograd has their broadcast shape.
const std::vector<std::pair<Dims, Dims>> kBgrad = {
    {{3, 4}, {4}},          {{3, 1}, {3, 4}},
    {{2, 1, 5}, {2, 3, 5}}, {{}, {2, 2}},
    {{2, 3, 4}, {2, 3, 4}}, {{4, 1, 3, 1}, {1, 5, 1, 2}},
    {{129, 1}, {1, 257}},   {{8, 64, 7, 7}, {1, 64, 1, 1}},
    {{3, 40}, {40}},        {{1, 1}, {1000, 1}},
    {{0, 3}, {1, 3}},
};

Dims Broadcast(const Dims &a, const Dims &b) {
  size_t nd = a.size() > b.size() ? a.size() : b.size();
  Dims o(nd);
  for (size_t i = 0; i < nd; ++i) {
    size_t ia = i + a.size(), ib = i + b.size();
    int64_t ea = ia >= nd ? a[ia - nd] : 1, eb = ib >= nd ? b[ib - nd] : 1;
    o[i] = ea == 1 ? eb : ea;
  }
  return o;
}

// Float ulps of the gradients: 2 (the double sums' orders) but power's
// and hypot's (CUDA's powf/hypotf against glibc's in the partials: the
// same-shape gradients' bound, conformance_math.cc).
int BgradUlps(const std::string &op) {
  return op == "_backward_broadcast_power" || op == "_backward_broadcast_hypot"
             ? 8
             : 2;
}

void BgradCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < kBgrad.size(); ++k) {
    const Dims &a = kBgrad[k].first, &b = kBgrad[k].second;
    Dims o = Broadcast(a, b);
    std::vector<Arg> in = {{o, Random(o, 0.5f, 3, g, true)},
                           {a, Random(a, 0.5f, 3, g, true)},
                           {b, Random(b, 0.5f, 3, g, true)}};
    std::vector<Arg> out = {{a, Random(a, -1, 1, g)}, {b, Random(b, -1, 1, g)}};
    // Positive bases for power (a real log); every third rhs element is
    // lhs's first (maximum's and minimum's ties).
    if (std::string(op) == "_backward_broadcast_power") {
      for (float &x : in[1].v) x = std::fabs(x);
    }
    for (size_t i = 0; !in[1].v.empty() && i < in[2].v.size(); i += 3) {
      in[2].v[i] = in[1].v[0];
    }
    for (const auto &req : kPairModes) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         " reqs " + std::to_string(req[0]) +
                         std::to_string(req[1]);
      Compare(dev, what, op, {}, in, out, req, false, BgradUlps(op));
    }
  }
}

const char *const kBgradOps[] = {
    "_backward_broadcast_add",     "_backward_broadcast_sub",
    "_backward_broadcast_mul",     "_backward_broadcast_div",
    "_backward_broadcast_mod",     "_backward_broadcast_power",
    "_backward_broadcast_maximum", "_backward_broadcast_minimum",
    "_backward_broadcast_hypot"};

// The operators after the first four (bgrad.h's binary_ops.h list).
std::vector<mxct::RegisterCase> RegisterMoreBgrad() {
  std::vector<mxct::RegisterCase> v;
  for (size_t i = 4; i < sizeof kBgradOps / sizeof kBgradOps[0]; ++i) {
    const char *op = kBgradOps[i];
    v.emplace_back(op, [op](std::mt19937 *g) {
      BgradCases(op, MXC_DEVICE_GPU, g);
    });
  }
  return v;
}
const std::vector<mxct::RegisterCase> kMoreBgradCases = RegisterMoreBgrad();

// ---- _backward_broadcast_to, _axis, _like: (ograd, data) -> ddata ----

struct ExpandCase {
  const char *op;
  Kv kv;
  Dims data, og;
};

const ExpandCase kExpand[] = {
    {"_backward_broadcast_to", {{"shape", "(3,4,5)"}}, {3, 1, 5}, {3, 4, 5}},
    {"_backward_broadcast_to", {{"shape", "(64,0,7,7)"}}, {1, 16, 1, 1},
     {64, 16, 7, 7}},
    {"_backward_broadcast_to", {{"shape", "(1000,3)"}}, {1, 3}, {1000, 3}},
    {"_backward_broadcast_to", {{"shape", "(4,3)"}}, {4, 3}, {4, 3}},
    {"_backward_broadcast_axis", {{"axis", "(0,2)"}, {"size", "(2,4)"}},
     {1, 3, 1}, {2, 3, 4}},
    {"_backward_broadcast_axis", {{"axis", "1"}, {"size", "300"}}, {5, 1},
     {5, 300}},
    {"_backward_broadcast_like", {}, {1, 4, 1}, {3, 4, 2}},
    {"_backward_broadcast_like", {{"lhs_axes", "(0,)"}, {"rhs_axes", "(1,)"}},
     {1, 5}, {7, 5}},
};

void ExpandCases(const char *op, int dev, std::mt19937 *g) {
  for (size_t k = 0; k < sizeof kExpand / sizeof kExpand[0]; ++k) {
    const ExpandCase &c = kExpand[k];
    if (std::string(c.op) != op) continue;
    std::vector<Arg> in = {{c.og, Random(c.og, -1, 1, g)},
                           {c.data, Random(c.data, -1, 1, g)}};
    std::vector<Arg> out = {{c.data, Random(c.data, -1, 1, g)}};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + " case " + std::to_string(k) +
                         " req " + std::to_string(req);
      Compare(dev, what, op, c.kv, in, out, {req}, false, 2);
    }
  }
}

const char *const kExpandOps[] = {"_backward_broadcast_to",
                                  "_backward_broadcast_axis",
                                  "_backward_broadcast_like"};
const mxct::RegisterCase kExpandCases[] = {
    {kExpandOps[0],
     [](std::mt19937 *g) { ExpandCases(kExpandOps[0], MXC_DEVICE_GPU, g); }},
    {kExpandOps[1],
     [](std::mt19937 *g) { ExpandCases(kExpandOps[1], MXC_DEVICE_GPU, g); }},
    {kExpandOps[2],
     [](std::mt19937 *g) { ExpandCases(kExpandOps[2], MXC_DEVICE_GPU, g); }},
};

const mxct::RegisterCase kBgradCases[] = {
    {kBgradOps[0],
     [](std::mt19937 *g) { BgradCases(kBgradOps[0], MXC_DEVICE_GPU, g); }},
    {kBgradOps[1],
     [](std::mt19937 *g) { BgradCases(kBgradOps[1], MXC_DEVICE_GPU, g); }},
    {kBgradOps[2],
     [](std::mt19937 *g) { BgradCases(kBgradOps[2], MXC_DEVICE_GPU, g); }},
    {kBgradOps[3],
     [](std::mt19937 *g) { BgradCases(kBgradOps[3], MXC_DEVICE_GPU, g); }},
};

// ---- reductions and their gradients ----

struct RedCase {
  Dims in, out;
  Kv kv;
};

// Shapes and axes; kExcludeCase only for the operators with exclude (not
// norm), kEmptyGroupCase not for max and min (no identity).
const std::vector<RedCase> kRed = {
    {{2, 3, 4}, {1}, {}},
    {{2, 3, 4}, {2, 4}, {{"axis", "1"}}},
    {{2, 3, 4}, {2, 3, 1}, {{"axis", "-1"}, {"keepdims", "true"}}},
    {{2, 3, 4}, {3}, {{"axis", "(0,2)"}}},
    {{5, 1, 7}, {5, 7}, {{"axis", "1"}}},
    {{3, 0}, {0}, {{"axis", "0"}}},
    {{100003}, {1}, {{"axis", "0"}}},
    {{64, 1030}, {64}, {{"axis", "1"}}},
    {{1000, 33}, {33}, {{"axis", "0"}}},
    {{3, 4, 5, 6}, {4, 6}, {{"axis", "(0,2)"}}},
};
const RedCase kExcludeCase = {
    {2, 3, 4}, {3}, {{"axis", "1"}, {"exclude", "true"}}};
const RedCase kEmptyGroupCase = {{0, 3}, {3}, {{"axis", "0"}}};

bool Is(const char *a, const char *b) { return std::string(a) == b; }

std::vector<RedCase> RedCasesOf(const char *op, const Kv &extra) {
  std::vector<RedCase> cs = kRed;
  if (!Is(op, "norm")) cs.push_back(kExcludeCase);
  if (!Is(op, "max") && !Is(op, "min")) cs.push_back(kEmptyGroupCase);
  for (RedCase &c : cs) c.kv.insert(c.kv.end(), extra.begin(), extra.end());
  return cs;
}

// Data for a reduction: small integers for max/min (ties), magnitudes
// near 1 for products (no overflow over 100003 elements: the long cases
// hold mostly 1s), NaNs now and then for the nan* kinds, zeros first (a
// zero norm, zero products).
Vec RedData(const char *op, const Dims &d, std::mt19937 *g) {
  bool prod = Is(op, "prod") || Is(op, "nanprod");
  Vec v = Random(d, -1, 1, g);
  for (size_t i = 0; i < v.size(); ++i) {
    if (Is(op, "max") || Is(op, "min")) v[i] = (float)((int)((*g)() % 7) - 3);
    if (prod) v[i] = (*g)() % 64 ? 1.f : ((*g)() % 2 ? 1.125f : -0.875f);
    if (Is(op, "nansum") || Is(op, "nanprod")) {
      if ((*g)() % 5 == 0) v[i] = NAN;
    }
    if (i < 4) v[i] = 0.f;
  }
  return v;
}

// Forward: max/min bitwise (exact); prod, nansum, nanprod, norm 2 ulps
// (double accumulations in different orders).
void RedFwdCases(const char *op, const Kv &extra, int dev, std::mt19937 *g) {
  std::vector<RedCase> cs = RedCasesOf(op, extra);
  int ulps = Is(op, "max") || Is(op, "min") ? 0 : 2;
  for (size_t k = 0; k < cs.size(); ++k) {
    const RedCase &c = cs[k];
    std::vector<Arg> in = {{c.in, RedData(op, c.in, g)}};
    std::vector<Arg> out = {{c.out, Random(c.out, -1, 1, g)}};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(op) + (extra.empty() ? "" : " ord 1") +
                         " case " + std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, op, c.kv, in, out, {req}, false, ulps);
    }
  }
}

// Backward (inputs ograd, data[, the forward's output computed on the
// CPU]): bitwise, one double expression rounded once on both sides;
// prod's and nanprod's 2 ulps (the group's product in another order).
void RedBwdCases(const char *fwd, const Kv &extra, int dev, std::mt19937 *g) {
  int ulps = Is(fwd, "prod") || Is(fwd, "nanprod") ? 2 : 0;
  std::string op = std::string("_backward_") + fwd;
  bool uses_y = Is(fwd, "max") || Is(fwd, "min") || Is(fwd, "norm");
  std::vector<RedCase> cs = RedCasesOf(fwd, extra);
  for (size_t k = 0; k < cs.size(); ++k) {
    const RedCase &c = cs[k];
    std::vector<Arg> in = {{c.out, Random(c.out, -2, 2, g)},
                           {c.in, RedData(fwd, c.in, g)}};
    if (uses_y) {
      std::vector<Arg> fi = {in[1]}, fo = {{c.out, Vec(in[0].v.size())}};
      ASSERT_EQ(
          Run(fwd, c.kv, MXC_DEVICE_CPU, &fi, &fo, {MXC_REQ_WRITE}, false),
          MXC_OK)
          << fwd << ": " << LastError();
      in.push_back(fo[0]);
    }
    std::vector<Arg> out = {{c.in, Random(c.in, -1, 1, g)}};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = op + (extra.empty() ? "" : " ord 1") + " case " +
                         std::to_string(k) +
                         (req == MXC_REQ_ADD ? " add" : " write");
      Compare(dev, what, op.c_str(), c.kv, in, out, {req}, false, ulps);
    }
  }
}

const Kv kOrd1 = {{"ord", "1"}};

void NormCases(bool backward, int dev, std::mt19937 *g) {
  for (const Kv &extra : {Kv(), kOrd1}) {
    if (backward) {
      RedBwdCases("norm", extra, dev, g);
    } else {
      RedFwdCases("norm", extra, dev, g);
    }
  }
}

const char *const kRedFwdOps[] = {"max", "min", "prod", "nansum", "nanprod"};
const char *const kRedBwdOps[] = {"sum",    "mean", "max",    "min",
                                  "nansum", "prod", "nanprod"};

#define RED_FWD_CASE(op)                                                \
  {                                                                     \
    op, [](std::mt19937 *g) { RedFwdCases(op, {}, MXC_DEVICE_GPU, g); } \
  }
#define RED_BWD_CASE(op)                                                \
  {                                                                     \
    "_backward_" op,                                                    \
        [](std::mt19937 *g) { RedBwdCases(op, {}, MXC_DEVICE_GPU, g); } \
  }

const mxct::RegisterCase kRedCases[] = {
    RED_FWD_CASE("max"),
    RED_FWD_CASE("min"),
    RED_FWD_CASE("prod"),
    RED_FWD_CASE("nansum"),
    RED_FWD_CASE("nanprod"),
    {"norm", [](std::mt19937 *g) { NormCases(false, MXC_DEVICE_GPU, g); }},
    RED_BWD_CASE("sum"),
    RED_BWD_CASE("mean"),
    RED_BWD_CASE("max"),
    RED_BWD_CASE("min"),
    RED_BWD_CASE("nansum"),
    RED_BWD_CASE("prod"),
    RED_BWD_CASE("nanprod"),
    {"_backward_norm",
     [](std::mt19937 *g) { NormCases(true, MXC_DEVICE_GPU, g); }},
};

// ---- the other optimizer updates ----

struct OptCase {
  int n_states;
  std::vector<Kv> params;  // plain, then with clipping
};

const std::vector<std::pair<const char *, OptCase>> kOpt = {
    {"nag_mom_update",
     {1,
      {{{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
       {{"lr", "0.05"}, {"momentum", "0.8"}, {"clip_gradient", "0.3"}}}}},
    {"rmsprop_update",
     {1,
      {{{"lr", "0.01"}, {"wd", "0.001"}, {"gamma1", "0.9"}},
       {{"lr", "0.02"}, {"clip_gradient", "0.5"}, {"clip_weights", "1.5"}}}}},
    {"rmspropalex_update",
     {3,
      {{{"lr", "0.01"}, {"gamma1", "0.9"}, {"gamma2", "0.8"}},
       {{"lr", "0.03"}, {"clip_gradient", "0.4"}, {"clip_weights", "1.2"}}}}},
    {"adagrad_update",
     {1,
      {{{"lr", "0.1"}, {"wd", "0.01"}},
       {{"lr", "0.05"}, {"clip_gradient", "0.2"}}}}},
    {"ftrl_update",
     {2,
      {{{"lr", "0.1"}, {"lamda1", "0.05"}},
       {{"lr", "0.2"},
        {"wd", "0.1"},
        {"lamda1", "0.5"},
        {"clip_gradient", "0.7"}}}}},
    {"signsgd_update",
     {0, {{{"lr", "0.1"}, {"wd", "0.01"}}, {{"lr", "0.05"}}}}},
    {"signum_update",
     {1,
      {{{"lr", "0.1"}, {"wd", "0.01"}, {"momentum", "0.9"}},
       {{"lr", "0.05"}, {"wd_lh", "0.1"}, {"clip_gradient", "0.1"}}}}},
};

const std::vector<Dims> kOptShapes = {{1}, {7}, {3, 5, 2}, {1031}, {0}};

// States in the ranges the rules are defined on: squared averages in
// [1, 2] (above rmspropalex's squared mean, its second state in
// [-0.5, 0.5]), momenta and FTRL's z in [-0.5, 0.5], FTRL's n in [1, 2].
bool PositiveState(const char *op, int s) {
  if (Is(op, "nag_mom_update") || Is(op, "signum_update")) return false;
  if (Is(op, "rmspropalex_update")) return s == 0;
  if (Is(op, "ftrl_update")) return s == 1;
  return true;
}

// Weight and states compared: 1 ulp (the CPU's double rule in its order,
// rounded once, double sqrt and division correctly rounded on both:
// expected bitwise; the ulp is slack, not a known difference).
void OptCases(const char *op, int dev, std::mt19937 *g) {
  for (const auto &entry : kOpt) {
    if (!Is(entry.first, op)) continue;
    const OptCase &c = entry.second;
    for (size_t k = 0; k < c.params.size(); ++k) {
      for (const Dims &d : kOptShapes) {
        std::vector<Arg> in = {{d, Random(d, -2, 2, g)},
                               {d, Random(d, -3, 3, g)}};
        for (int s = 0; s < c.n_states; ++s) {
          in.push_back({d, PositiveState(op, s) ? Random(d, 1, 2, g)
                                                : Random(d, -.5f, .5f, g)});
        }
        std::vector<Arg> out = {{d, Random(d, -1, 1, g)}};
        for (int mode = 0; mode < 3; ++mode) {
          std::string what = std::string(op) + " parameters " +
                             std::to_string(k) + " size " +
                             std::to_string(Numel(d)) +
                             (mode == 0   ? " write"
                              : mode == 1 ? " add"
                                          : " in place");
          std::vector<Arg> o = out;
          if (mode == 2) o[0] = in[0];
          Compare(dev, what, op, c.params[k], in, o,
                  {mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE}, mode == 2, 1);
        }
      }
    }
  }
}

// ftml_update, lamb_update_phase1, lamb_update_phase2: parameters, then
// the inputs' ranges as in test_cuda_optim_plan (FTML's d > 0 and v >= 0,
// LAMB's var >= 0; phase 2's norms one element each, r2 = 0 for one
// shape); 1 ulp as the others (these add in double in add mode, on both
// sides).
const std::vector<std::pair<const char *, std::vector<Kv>>> kExtOpt = {
    {"ftml_update",
     {{{"lr", "0.05"}, {"t", "3"}},
      {{"lr", "0.1"}, {"t", "1"}, {"wd", "0.01"}, {"clip_grad", "0.4"}}}},
    {"lamb_update_phase1",
     {{{"wd", "0.01"}, {"t", "5"}},
      {{"wd", "0"},
       {"t", "2"},
       {"bias_correction", "false"},
       {"clip_gradient", "0.3"}}}},
    {"lamb_update_phase2",
     {{{"lr", "0.01"}},
      {{"lr", "0.02"}, {"lower_bound", "0.5"}, {"upper_bound", "1.5"}}}},
};

std::vector<Arg> ExtOptInputs(const char *op, const Dims &d, std::mt19937 *g) {
  std::vector<Arg> in = {{d, Random(d, -2, 2, g)}, {d, Random(d, -3, 3, g)}};
  if (Is(op, "ftml_update")) {
    in.push_back({d, Random(d, 1, 2, g)});
    in.push_back({d, Random(d, 0, 1, g)});
    in.push_back({d, Random(d, -.5f, .5f, g)});
  } else if (Is(op, "lamb_update_phase1")) {
    in.push_back({d, Random(d, -.5f, .5f, g)});
    in.push_back({d, Random(d, 0, 1, g)});
  } else {
    in.push_back({{1}, Random({1}, 0.2f, 2, g)});
    in.push_back({{1}, Numel(d) == 7 ? Vec{0.f} : Random({1}, 0.5f, 3, g)});
  }
  return in;
}

void ExtOptCases(const char *op, int dev, std::mt19937 *g) {
  for (const auto &entry : kExtOpt) {
    if (!Is(entry.first, op)) continue;
    for (size_t k = 0; k < entry.second.size(); ++k) {
      for (const Dims &d : kOptShapes) {
        std::vector<Arg> in = ExtOptInputs(op, d, g);
        std::vector<Arg> out = {{d, Random(d, -1, 1, g)}};
        for (int mode = 0; mode < 3; ++mode) {
          std::string what = std::string(op) + " parameters " +
                             std::to_string(k) + " size " +
                             std::to_string(Numel(d)) +
                             (mode == 0   ? " write"
                              : mode == 1 ? " add"
                                          : " in place");
          std::vector<Arg> o = out;
          if (mode == 2) o[0] = in[0];
          Compare(dev, what, op, entry.second[k], in, o,
                  {mode == 1 ? MXC_REQ_ADD : MXC_REQ_WRITE}, mode == 2, 1);
        }
      }
    }
  }
}

#define EXT_OPT_CASE(op)                                            \
  {                                                                 \
    op, [](std::mt19937 *g) { ExtOptCases(op, MXC_DEVICE_GPU, g); } \
  }

const mxct::RegisterCase kExtOptCases[] = {
    EXT_OPT_CASE("ftml_update"),
    EXT_OPT_CASE("lamb_update_phase1"),
    EXT_OPT_CASE("lamb_update_phase2"),
};

#define OPT_CASE(op)                                             \
  {                                                              \
    op, [](std::mt19937 *g) { OptCases(op, MXC_DEVICE_GPU, g); } \
  }

const mxct::RegisterCase kOptCases[] = {
    OPT_CASE("nag_mom_update"),     OPT_CASE("rmsprop_update"),
    OPT_CASE("rmspropalex_update"), OPT_CASE("adagrad_update"),
    OPT_CASE("ftrl_update"),        OPT_CASE("signsgd_update"),
    OPT_CASE("signum_update"),
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// equal there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceBwd, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(17);
  for (const char *op : kBgradOps) BgradCases(op, MXC_DEVICE_CPU, &g);
  for (const char *op : kExpandOps) ExpandCases(op, MXC_DEVICE_CPU, &g);
  for (const char *op : kRedFwdOps) RedFwdCases(op, {}, MXC_DEVICE_CPU, &g);
  for (const char *op : kRedBwdOps) RedBwdCases(op, {}, MXC_DEVICE_CPU, &g);
  NormCases(false, MXC_DEVICE_CPU, &g);
  NormCases(true, MXC_DEVICE_CPU, &g);
  for (const auto &entry : kOpt) OptCases(entry.first, MXC_DEVICE_CPU, &g);
  for (const auto &entry : kExtOpt) {
    ExtOptCases(entry.first, MXC_DEVICE_CPU, &g);
  }
}

TEST(GpuConformanceBwd, TheComparisonCanFail) {
  Vec cpu = {1.f, -2.f, 3.f};
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, Poison(), 3.f}, cpu, {}, 4),
                          "never written");
  float up = std::nextafter(std::nextafter(3.f, 4.f), 4.f);
  EXPECT_NONFATAL_FAILURE(ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 1),
                          "on the GPU");
  ExpectUlps("x", {1.f, -2.f, up}, cpu, {}, 2);
}

}  // namespace
