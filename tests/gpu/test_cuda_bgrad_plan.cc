// The broadcast gradients' plan (backends/cuda/bgrad_plan.h) run on the
// host the way bgrad.cu runs it (a thread's ordered sum per small group,
// 256 strided double partials and sum.cu's tree per large one), against
// the CPU's _backward_broadcast_add/sub/mul/div through the C API, on
// every machine: operands stretched along leading, trailing and middle
// axes, scalar-like and 0-d operands, equal shapes, an empty ograd,
// random broadcastable shapes; every pair of write modes.
//
// Tolerance: groups of one element bitwise (one float partial, rounded
// once, as the CPU's); larger groups 2 float ulps of max(|cpu|, |output
// before an add|): both sides sum the float partials in double, in
// different orders, so the floats differ only where the two double sums
// round differently (inputs in [0.5, 3] in magnitude: little
// cancellation).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "backends/cuda/bgrad_plan.h"
}
#include "backends/cuda/scalar_hd.h"
#include "mxc/mxc.h"
#include "tests/gpu/plan_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using mxct::Numel;
using mxct::Arr;
using mxct::Cpu;

struct Case {
  Dims a, b;
};

const Case kCases[] = {
    {{3, 4}, {4}},                 // rhs along a leading axis
    {{4}, {3, 4}},                 // lhs along a leading axis
    {{3, 1}, {3, 4}},              // lhs along the trailing axis
    {{2, 1, 5}, {2, 3, 5}},        // a middle axis
    {{1}, {2, 3}},                 // scalar-like
    {{}, {2, 2}},                  // 0-d
    {{}, {}},                      // both 0-d
    {{2, 3, 4}, {2, 3, 4}},        // equal shapes
    {{4, 1, 3, 1}, {1, 5, 1, 2}},  // both stretched
    {{2, 1, 1, 3, 1, 2}, {1, 4, 2, 1, 3, 2}},
    {{129, 1}, {1, 257}},  // groups of 257 and 129: blocks
    {{64, 40}, {40}},      // groups of 64: blocks
    {{3, 40}, {40}},       // groups of 3: threads
    {{1, 1}, {1000, 1}},   // one group of 1000
    {{0, 3}, {1, 3}},      // empty ograd: drhs is zeros
};

const char *const kOps[] = {
    "_backward_broadcast_add", "_backward_broadcast_sub",
    "_backward_broadcast_mul", "_backward_broadcast_div"};

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

Vec Random(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(0.5f, 3.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = (*g)() % 2 ? u(*g) : -u(*g);
  return v;
}

struct Inputs {
  Dims o;
  Vec og, a, b;
};

// The CPU operator's gradients, from base[] under req[].
std::vector<Vec> CpuOp(const char *name, const Case &c, const Inputs &x,
                       const std::vector<Vec> &base, const int *req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  mxc_ndarray in[3] = {Cpu(x.o, x.og), Cpu(c.a, x.a), Cpu(c.b, x.b)};
  mxc_ndarray out[2] = {Cpu(c.a, base[0]), Cpu(c.b, base[1])};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 3, out, 2, req), MXC_OK)
      << mxc_last_error();
  std::vector<Vec> r = base;
  for (int i = 0; i < 2; ++i) {
    if (!r[i].empty()) {
      EXPECT_EQ(mxc_ndarray_copy_to_host(out[i], r[i].data(), r[i].size() * 4),
                MXC_OK);
    }
    mxc_ndarray_free(out[i]);
  }
  for (mxc_ndarray h : in) mxc_ndarray_free(h);
  return r;
}

// bgrad.cu's order on the host for gradient x, with the float partial
// of ograd element j given by part(j).
template <class Part>
Vec HostGroups(int x, const mxc__bgrad_plan &p, const Vec &base, int req,
               Part part) {
  Vec r = base;
  const mxc__sum_plan &s = p.red[x];
  if (req == MXC_REQ_NULL) return r;
  for (int64_t o = 0; o < s.n_out; ++o) {
    int64_t b0 = mxc__sum_base(&s, o);
    auto partial = [&](int64_t k) {
      return (double)part(b0 + mxc__sum_step(&s, k));
    };
    double acc = 0;
    if (p.per_thread[x]) {
      for (int64_t k = 0; k < s.n_red; ++k) acc += partial(k);
    } else {
      double parts[256];
      for (int t = 0; t < 256; ++t) {
        parts[t] = 0;
        for (int64_t k = t; k < s.n_red; k += 256) parts[t] += partial(k);
      }
      for (int half = 128; half > 0; half /= 2) {
        for (int t = 0; t < half; ++t) parts[t] += parts[t + half];
      }
      acc = parts[0];
    }
    int add = req == MXC_REQ_ADD;
    r[(size_t)o] = mxc__bgrad_final(acc, add, add ? r[(size_t)o] : 0.f);
  }
  return r;
}

Vec HostGrad(int op, int x, const mxc__bgrad_plan &p, const Inputs &in,
             const Vec &base, int req) {
  return HostGroups(x, p, base, req, [&](int64_t j) {
    return mxc__bgrad_partial(&p, op, x, in.og.data(), in.a.data(),
                              in.b.data(), j);
  });
}

// The same for an operator of binary_ops.h's list (bgrad.cu's Listed<B>:
// og * df/da or og * df/db in float, scalar_hd.h).
template <class B>
Vec HostListed(int x, const mxc__bgrad_plan &p, const Inputs &in,
               const Vec &base, int req) {
  return HostGroups(x, p, base, req, [&](int64_t j) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p.map, j, &ia, &ib);
    float a = in.a[(size_t)ia], b = in.b[(size_t)ib], og = in.og[(size_t)j];
    return x ? og * B::db(a, b) : og * B::da(a, b);
  });
}

// First element off by more than ulps float ulps of max(|cpu|, |base|),
// or -1.
long FirstDiff(const Vec &a, const Vec &b, const Vec &base, int ulps) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    double scale = std::fmax(std::fabs(b[i]), std::fabs(base[i]));
    if (!(std::fabs((double)a[i] - b[i]) <= ulps * FLT_EPSILON * scale)) {
      return (long)i;
    }
  }
  return -1;
}

int Plan(const Case &c, const Dims &o, mxc__bgrad_plan *p) {
  mxc__gpu_array in[3] = {Arr(o), Arr(c.a), Arr(c.b)};
  mxc__gpu_array out[2] = {Arr(c.a), Arr(c.b)};
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {0, nullptr, in, 3, out, 2, req, 0, {}};
  char why[256] = "";
  int rc = mxc__bgrad_plan_make(&call, p, why, sizeof why);
  EXPECT_EQ(rc, MXC_OK) << why;
  return rc;
}

// Every operator, every pair of write modes; the failures counted.
int CheckCase(const Case &c, std::mt19937 *g, bool quiet) {
  Inputs in;
  in.o = Broadcast(c.a, c.b);
  in.og = Random(in.o, g), in.a = Random(c.a, g), in.b = Random(c.b, g);
  mxc__bgrad_plan p;
  if (Plan(c, in.o, &p) != MXC_OK) return 1;
  std::vector<Vec> base = {Random(c.a, g), Random(c.b, g)};
  const int reqs[][2] = {{MXC_REQ_WRITE, MXC_REQ_WRITE},
                         {MXC_REQ_ADD, MXC_REQ_ADD},
                         {MXC_REQ_WRITE, MXC_REQ_NULL},
                         {MXC_REQ_NULL, MXC_REQ_ADD}};
  int bad = 0;
  for (int op = 0; op < 4; ++op) {
    for (const auto &req : reqs) {
      std::vector<Vec> cpu = CpuOp(kOps[op], c, in, base, req);
      for (int x = 0; x < 2; ++x) {
        Vec host = HostGrad(op, x, p, in, base[x], req[x]);
        int ulps = p.red[x].n_red <= 1 ? 0 : 2;
        long at = FirstDiff(host, cpu[x], base[x], ulps);
        bad += at >= 0;
        if (!quiet) {
          EXPECT_LT(at, 0) << kOps[op] << " gradient " << x << " reqs "
                           << req[0] << req[1] << " element " << at << " of "
                           << host.size();
        }
      }
    }
  }
  return bad;
}

TEST(CudaBgradPlan, MatchesTheCpu) {
  std::mt19937 g(41);
  for (size_t k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    CheckCase(kCases[k], &g, false);
  }
}

// Random broadcastable pairs: up to 5 axes of extents 1 to 6, each
// operand keeping an axis, setting it to 1 or (leading axes) lacking it.
TEST(CudaBgradPlan, MatchesTheCpuOnRandomShapes) {
  std::mt19937 g(42);
  for (int t = 0; t < 60; ++t) {
    int nd = 1 + (int)(g() % 5);
    Case c;
    for (int i = 0; i < nd; ++i) {
      int64_t e = 1 + (int64_t)(g() % 6);
      int pick = (int)(g() % 3);  // 0: both e, 1: lhs 1, 2: rhs 1
      c.a.push_back(pick == 1 ? 1 : e);
      c.b.push_back(pick == 2 ? 1 : e);
    }
    int drop = (int)(g() % 3);  // leading axes one operand lacks
    Dims &d = g() % 2 ? c.a : c.b;
    for (int i = 0; i < drop && !d.empty(); ++i) d.erase(d.begin());
    SCOPED_TRACE("random case " + std::to_string(t));
    CheckCase(c, &g, false);
  }
}

// The plan's groups: stretched axes reduced, an operand's own kept, and
// the thread/block choice.
TEST(CudaBgradPlan, GroupsFollowTheStretchedAxes) {
  mxc__bgrad_plan p;
  ASSERT_EQ(Plan({{64, 40}, {40}}, {64, 40}, &p), MXC_OK);
  EXPECT_EQ(p.red[0].n_red, 1);
  EXPECT_EQ(p.red[0].n_out, 64 * 40);
  EXPECT_EQ(p.per_thread[0], 1);
  EXPECT_EQ(p.red[1].n_red, 64);
  EXPECT_EQ(p.red[1].n_out, 40);
  EXPECT_EQ(p.per_thread[1], 0);
}

TEST(CudaBgradPlan, RefusesBadShapes) {
  mxc__gpu_array in[3] = {Arr({3, 4}), Arr({3, 4}), Arr({5})};
  mxc__gpu_array out[2] = {Arr({3, 4}), Arr({5})};
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_call c = {0, nullptr, in, 3, out, 2, req, 0, {}};
  mxc__bgrad_plan p;
  char why[256] = "";
  EXPECT_EQ(mxc__bgrad_plan_make(&c, &p, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("do not broadcast"), std::string::npos)
      << why;
  in[2] = Arr({4}), out[1] = Arr({3, 4});
  EXPECT_EQ(mxc__bgrad_plan_make(&c, &p, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("output 1 has 12 elements"),
            std::string::npos)
      << why;
}

// The comparison can fail: the gradients' groups swapped, or the rhs
// offset map wrong.
TEST(CudaBgradPlan, AWrongPlanFails) {
  std::mt19937 g(43);
  const Case c = {{2, 1, 5}, {2, 3, 5}};
  Inputs in;
  in.o = Broadcast(c.a, c.b);
  in.og = Random(in.o, &g), in.a = Random(c.a, &g), in.b = Random(c.b, &g);
  mxc__bgrad_plan p;
  ASSERT_EQ(Plan(c, in.o, &p), MXC_OK);
  std::vector<Vec> base = {Vec(10, 0.f), Vec(30, 0.f)};
  const int req[2] = {MXC_REQ_WRITE, MXC_REQ_WRITE};
  std::vector<Vec> cpu = CpuOp(kOps[MXC__BG_MUL], c, in, base, req);
  ASSERT_LT(FirstDiff(HostGrad(MXC__BG_MUL, 0, p, in, base[0], req[0]), cpu[0],
                      base[0], 2),
            0);
  mxc__bgrad_plan wrong = p;
  wrong.map.sb[wrong.map.nd - 1] = 0;  // rhs repeated along the last axis
  EXPECT_GE(FirstDiff(HostGrad(MXC__BG_MUL, 0, wrong, in, base[0], req[0]),
                      cpu[0], base[0], 2),
            0);
  wrong = p;
  wrong.red[0].rext[0] = 1, wrong.red[0].n_red = 1;  // one of 3 summed
  EXPECT_GE(FirstDiff(HostGrad(MXC__BG_MUL, 0, wrong, in, base[0], req[0]),
                      cpu[0], base[0], 2),
            0);
}



// ---- the rest of binary_ops.h's differentiable operators ----

typedef Vec (*listed_fn)(int, const mxc__bgrad_plan &, const Inputs &,
                         const Vec &, int);
struct ListedOp {
  const char *op;
  listed_fn host;
};
const ListedOp kListed[] = {
    {"_backward_broadcast_mod", HostListed<mxc_bin::B_mod>},
    {"_backward_broadcast_power", HostListed<mxc_bin::B_power>},
    {"_backward_broadcast_maximum", HostListed<mxc_bin::B_maximum>},
    {"_backward_broadcast_minimum", HostListed<mxc_bin::B_minimum>},
    {"_backward_broadcast_hypot", HostListed<mxc_bin::B_hypot>},
};

// Every case, every pair of write modes, the tolerance of CheckCase;
// positive operands for power (a real log), every third rhs element equal
// to lhs's first (maximum's and minimum's ties).
int CheckListed(const ListedOp &l, const Case &c, std::mt19937 *g) {
  Inputs in;
  in.o = Broadcast(c.a, c.b);
  in.og = Random(in.o, g), in.a = Random(c.a, g), in.b = Random(c.b, g);
  for (size_t i = 0; !in.a.empty() && i < in.b.size(); i += 3) {
    in.b[i] = in.a[0];
  }
  if (std::strcmp(l.op, "_backward_broadcast_power") == 0) {
    for (float &v : in.a) v = std::fabs(v);
  }
  mxc__bgrad_plan p;
  if (Plan(c, in.o, &p) != MXC_OK) return 1;
  std::vector<Vec> base = {Random(c.a, g), Random(c.b, g)};
  const int reqs[][2] = {{MXC_REQ_WRITE, MXC_REQ_WRITE},
                         {MXC_REQ_ADD, MXC_REQ_ADD},
                         {MXC_REQ_NULL, MXC_REQ_ADD}};
  int bad = 0;
  for (const auto &req : reqs) {
    std::vector<Vec> cpu = CpuOp(l.op, c, in, base, req);
    for (int x = 0; x < 2; ++x) {
      Vec host = l.host(x, p, in, base[x], req[x]);
      long at = FirstDiff(host, cpu[x], base[x], p.red[x].n_red <= 1 ? 0 : 2);
      bad += at >= 0;
      EXPECT_LT(at, 0) << l.op << " gradient " << x << " reqs " << req[0]
                       << req[1] << " element " << at << " of "
                       << host.size();
    }
  }
  return bad;
}

TEST(CudaBgradPlan, ListedOperatorsMatchTheCpu) {
  std::mt19937 g(44);
  for (const ListedOp &l : kListed) {
    for (size_t k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
      SCOPED_TRACE("case " + std::to_string(k));
      CheckListed(l, kCases[k], &g);
    }
  }
}

// ---- _backward_broadcast_to, _axis, _like (mxc__bgrad_expand_plan) ----

struct ExpandCase {
  const char *op;
  std::vector<std::pair<const char *, const char *>> kv;
  Dims data, og;
};

const ExpandCase kExpand[] = {
    {"_backward_broadcast_to", {{"shape", "(3,4,5)"}}, {3, 1, 5}, {3, 4, 5}},
    {"_backward_broadcast_to", {{"shape", "(6,7)"}}, {1, 1}, {6, 7}},
    {"_backward_broadcast_to", {{"shape", "(2,300)"}}, {2, 1}, {2, 300}},
    {"_backward_broadcast_to", {{"shape", "(4,3)"}}, {4, 3}, {4, 3}},
    {"_backward_broadcast_axis",
     {{"axis", "(0,2)"}, {"size", "(2,4)"}},
     {1, 3, 1},
     {2, 3, 4}},
    {"_backward_broadcast_like", {}, {1, 4, 1}, {3, 4, 2}},
    {"_backward_broadcast_like",
     {{"lhs_axes", "(0,)"}, {"rhs_axes", "(1,)"}},
     {1, 5},
     {7, 5}},
};

// The CPU operator's gradient, from base under req.
Vec CpuExpand(const ExpandCase &c, const Vec &og, const Vec &data,
              const Vec &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(c.op, &op), MXC_OK) << c.op;
  std::vector<const char *> keys, vals;
  for (const auto &kv : c.kv) keys.push_back(kv.first), vals.push_back(kv.second);
  mxc_ndarray in[2] = {Cpu(c.og, og), Cpu(c.data, data)};
  mxc_ndarray out = Cpu(c.data, base);
  EXPECT_EQ(mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(), in,
                          2, &out, 1, &req),
            MXC_OK)
      << c.op << ": " << mxc_last_error();
  Vec r = base;
  EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  mxc_ndarray_free(in[0]), mxc_ndarray_free(in[1]), mxc_ndarray_free(out);
  return r;
}

// sum.cu's reduction of the plan on the host: a double sum per group,
// rounded once, added in float in add mode.
Vec HostExpand(const mxc__sum_plan &s, const Vec &og, const Vec &base,
               int req) {
  Vec r = base;
  for (int64_t o = 0; o < s.n_out; ++o) {
    double acc = 0;
    int64_t b0 = mxc__sum_base(&s, o);
    for (int64_t k = 0; k < s.n_red; ++k) {
      acc += og[(size_t)(b0 + mxc__sum_step(&s, k))];
    }
    float v = mxc__sum_final(&s, acc);
    r[(size_t)o] = req == MXC_REQ_ADD ? r[(size_t)o] + v : v;
  }
  return r;
}

int ExpandPlan(const Dims &og, const Dims &data, mxc__sum_plan *s,
               std::string *why_out) {
  mxc__gpu_array in[2] = {Arr(og), Arr(data)};
  mxc__gpu_array out[1] = {Arr(data)};
  int req[1] = {MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {0, nullptr, in, 2, out, 1, req, 0, {}};
  char why[256] = "";
  int rc = mxc__bgrad_expand_plan(&call, s, why, sizeof why);
  *why_out = why;
  return rc;
}

TEST(CudaBgradPlan, ExpandGradientsMatchTheCpu) {
  std::mt19937 g(45);
  for (const ExpandCase &c : kExpand) {
    mxc__sum_plan s;
    std::string why;
    ASSERT_EQ(ExpandPlan(c.og, c.data, &s, &why), MXC_OK) << why;
    Vec og = Random(c.og, &g), data = Random(c.data, &g);
    Vec base = Random(c.data, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Vec cpu = CpuExpand(c, og, data, base, req);
      EXPECT_LT(FirstDiff(HostExpand(s, og, base, req), cpu, base, 2), 0)
          << c.op << " data of " << c.data.size() << " axes, req " << req;
    }
  }
}

TEST(CudaBgradPlan, ExpandRefusesShapesThatDoNotRepeat) {
  mxc__sum_plan s;
  std::string why;
  EXPECT_EQ(ExpandPlan({3, 4}, {2, 4}, &s, &why), MXC_ERR_SHAPE);
  EXPECT_NE(why.find("does not repeat"), std::string::npos) << why;
  EXPECT_EQ(ExpandPlan({4}, {1, 4}, &s, &why), MXC_ERR_SHAPE);
}

// The comparison can fail: a plan that reduces one axis too few.
TEST(CudaBgradPlan, AWrongExpandPlanFails) {
  std::mt19937 g(46);
  const ExpandCase &c = kExpand[0];
  mxc__sum_plan s;
  std::string why;
  ASSERT_EQ(ExpandPlan(c.og, c.data, &s, &why), MXC_OK) << why;
  Vec og = Random(c.og, &g), data = Random(c.data, &g);
  Vec base((size_t)Numel(c.data), 0.f);
  Vec cpu = CpuExpand(c, og, data, base, MXC_REQ_WRITE);
  ASSERT_LT(FirstDiff(HostExpand(s, og, base, MXC_REQ_WRITE), cpu, base, 2),
            0);
  s.n_red = 1, s.nr = 0;  // only the first of each group's 4 elements
  EXPECT_GE(FirstDiff(HostExpand(s, og, base, MXC_REQ_WRITE), cpu, base, 2),
            0);
}

}  // namespace
