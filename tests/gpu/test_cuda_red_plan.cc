// The reductions' plans (backends/cuda/red_plan.h) run on the host the
// way red.cu runs them, against the CPU operators through the C API, on
// every machine: forward max, min, prod, nansum, nanprod, norm (ord 1 and
// 2) and the gradients _backward_sum, _mean, _max, _min, _nansum, _norm,
// _prod, _nanprod
// over one axis, several, negative ones, exclude, keepdims, every axis,
// extent-1 and empty axes, groups for a thread and for a block, NaNs,
// ties, a zero norm; write and add modes. The parameters reach the plans
// through the operators' own parser.
//
// Tolerances: max, min and the gradients bitwise (exact comparisons, or
// one double expression rounded once on both sides); sums, products,
// norms and the products' gradients 2 float ulps of max(|cpu|, |output before
// an add|) (double accumulations in different orders).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "backends/cuda/red_plan.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/plan_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using mxct::Numel;
using mxct::Arr;
using mxct::Cpu;
using Kv = std::vector<std::pair<std::string, std::string>>;

struct Case {
  Dims in, out;
  Kv kv;
};

const Case kCases[] = {
    {{2, 3, 4}, {1}, {}},
    {{2, 3, 4}, {2, 4}, {{"axis", "1"}}},
    {{2, 3, 4}, {2, 3, 1}, {{"axis", "-1"}, {"keepdims", "true"}}},
    {{2, 3, 4}, {3}, {{"axis", "(0,2)"}}},
    {{2, 3, 4}, {1, 3, 1}, {{"axis", "(0,-1)"}, {"keepdims", "true"}}},
    {{5, 1, 7}, {5, 7}, {{"axis", "1"}}},
    {{3, 0}, {0}, {{"axis", "0"}}},
    {{1031}, {1}, {{"axis", "0"}}},
    {{64, 130}, {64}, {{"axis", "1"}}},
    {{4, 513}, {513}, {{"axis", "0"}}},
    {{3, 4, 5, 6}, {4, 6}, {{"axis", "(0,2)"}}},
};
// Cases with exclude (norm has no such parameter) or an empty group (max
// and min refuse it).
const Case kExclude = {{2, 3, 4}, {3}, {{"axis", "1"}, {"exclude", "true"}}};
const Case kEmptyGroup = {{0, 3}, {3}, {{"axis", "0"}}};

// The CPU operator over inputs (shapes ds, values xs) into an output of
// shape dout from base.
Vec CpuOp(const std::string &name, const Kv &kv, const std::vector<Dims> &ds,
          const std::vector<Vec> &xs, const Dims &dout, const Vec &base,
          int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> in;
  for (size_t i = 0; i < ds.size(); ++i) in.push_back(Cpu(ds[i], xs[i]));
  mxc_ndarray out = Cpu(dout, base);
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                          (int)in.size(), &out, 1, &req),
            MXC_OK)
      << name << ": " << mxc_last_error();
  Vec r = base;
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  }
  for (mxc_ndarray h : in) mxc_ndarray_free(h);
  mxc_ndarray_free(out);
  return r;
}

// The operator's parsed parameters (freed by the caller with mxc__free).
void *Params(const std::string &name, const Kv &kv) {
  std::vector<const char *> k, v;
  for (const auto &q : kv) k.push_back(q.first.c_str());
  for (const auto &q : kv) v.push_back(q.second.c_str());
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(name.c_str()), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK)
      << name;
  return param;
}

// red.cu's forward order on the host.
Vec HostFwd(const mxc__gred_fwd_plan &p, const Vec &x, const Vec &base,
            int req) {
  Vec r = base;
  const mxc__sum_plan &s = p.s;
  for (int64_t o = 0; o < s.n_out; ++o) {
    int64_t b = mxc__sum_base(&s, o);
    auto at = [&](int64_t k) {
      return (double)x[(size_t)(b + mxc__sum_step(&s, k))];
    };
    double acc = mxc__gred_init(p.kind);
    if (p.per_thread) {
      for (int64_t k = 0; k < s.n_red; ++k) {
        acc = mxc__gred_step(p.kind, acc, at(k));
      }
    } else {
      double part[256];
      for (int t = 0; t < 256; ++t) {
        part[t] = mxc__gred_init(p.kind);
        for (int64_t k = t; k < s.n_red; k += 256) {
          part[t] = mxc__gred_step(p.kind, part[t], at(k));
        }
      }
      for (int half = 128; half > 0; half /= 2) {
        for (int t = 0; t < half; ++t) {
          part[t] = mxc__gred_comb(p.kind, part[t], part[t + half]);
        }
      }
      acc = part[0];
    }
    float v = mxc__gred_final(p.kind, acc, s.n_red);
    r[(size_t)o] = req == MXC_REQ_ADD ? r[(size_t)o] + v : v;
  }
  return r;
}

// red.cu's gradient on the host.
Vec HostBwd(const mxc__gred_bwd_plan &p, const Vec &og, const Vec &x,
            const Vec &y, const Vec &base, int req) {
  Vec r = base;
  bool uses_y = mxc__gred_grad_uses_y(p.kind);
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t io, unused;
    mxc__bcast_offsets(&p.map, (int64_t)i, &io, &unused);
    float v = (float)mxc__gred_grad(&p, og[(size_t)io], x[i],
                                    uses_y ? y[(size_t)io] : 0.f);
    r[i] = req == MXC_REQ_ADD ? r[i] + v : v;
  }
  return r;
}

// red.cu's product gradient on the host: per group the statistics (by a
// thread in order, or 256 strided shares and the tree), then each
// element's gradient.
Vec HostProdBwd(const mxc__gred_prod_plan &p, const Vec &og, const Vec &x,
                const Vec &base, int req) {
  Vec r = base;
  const mxc__sum_plan &s = p.s;
  for (int64_t o = 0; o < s.n_out; ++o) {
    int64_t b = mxc__sum_base(&s, o);
    auto at = [&](int64_t k) { return (size_t)(b + mxc__sum_step(&s, k)); };
    mxc__gred_pstat st = mxc__gred_pstat_init();
    if (p.per_thread) {
      for (int64_t k = 0; k < s.n_red; ++k) {
        mxc__gred_pstat_step(p.kind, &st, x[at(k)]);
      }
    } else {
      mxc__gred_pstat part[256];
      for (int t = 0; t < 256; ++t) {
        part[t] = mxc__gred_pstat_init();
        for (int64_t k = t; k < s.n_red; k += 256) {
          mxc__gred_pstat_step(p.kind, &part[t], x[at(k)]);
        }
      }
      for (int half = 128; half > 0; half /= 2) {
        for (int t = 0; t < half; ++t) {
          mxc__gred_pstat_comb(&part[t], &part[t + half]);
        }
      }
      st = part[0];
    }
    for (int64_t k = 0; k < s.n_red; ++k) {
      size_t i = at(k);
      float v = (float)mxc__gred_prod_grad(p.kind, og[(size_t)o], x[i], &st);
      r[i] = req == MXC_REQ_ADD ? r[i] + v : v;
    }
  }
  return r;
}

long FirstDiff(const Vec &a, const Vec &b, const Vec &base, int ulps) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (ulps == 0) {
      if (std::memcmp(&a[i], &b[i], 4) != 0 && !(a[i] == 0 && b[i] == 0)) {
        return (long)i;
      }
      continue;
    }
    double scale = std::fmax(std::fabs(b[i]), std::fabs(base[i]));
    if (!(std::fabs((double)a[i] - b[i]) <= ulps * FLT_EPSILON * scale)) {
      return (long)i;
    }
  }
  return -1;
}

struct Op {
  const char *name;
  int kind;
  Kv extra;  // norm's ord
  int ulps;  // forward tolerance
};

const Op kFwd[] = {
    {"max", MXC__GR_MAX, {}, 0},
    {"min", MXC__GR_MIN, {}, 0},
    {"prod", MXC__GR_PROD, {}, 2},
    {"nansum", MXC__GR_NANSUM, {}, 2},
    {"nanprod", MXC__GR_NANPROD, {}, 2},
    {"norm", MXC__GR_NORM, {}, 2},
    {"norm", MXC__GR_NORM, {{"ord", "1"}}, 2},
};
const Op kBwd[] = {
    {"sum", MXC__GR_SUM, {}, 0},
    {"mean", MXC__GR_MEAN, {}, 0},
    {"max", MXC__GR_MAX, {}, 0},
    {"min", MXC__GR_MIN, {}, 0},
    {"nansum", MXC__GR_NANSUM, {}, 0},
    {"norm", MXC__GR_NORM, {}, 0},
    {"norm", MXC__GR_NORM, {{"ord", "1"}}, 0},
};

bool IsNorm(const Op &op) { return std::string(op.name) == "norm"; }
bool IsMaxMin(const Op &op) {
  return op.kind == MXC__GR_MAX || op.kind == MXC__GR_MIN;
}

// Data for op: near 1 in magnitude for products (no overflow), small
// integers for max/min (ties), a NaN now and then for the nan* kinds, a
// run of zeros (a zero norm, zero products).
Vec Data(const Op &op, const Dims &d, std::mt19937 *g) {
  Vec v((size_t)Numel(d));
  std::uniform_real_distribution<float> u(-1.f, 1.f), near1(0.8f, 1.25f);
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsMaxMin(op)) {
      v[i] = (float)((int)((*g)() % 7) - 3);
    } else if (op.kind == MXC__GR_PROD || op.kind == MXC__GR_NANPROD) {
      v[i] = (*g)() % 2 ? near1(*g) : -near1(*g);
    } else {
      v[i] = u(*g);
    }
    if ((op.kind == MXC__GR_NANSUM || op.kind == MXC__GR_NANPROD) &&
        (*g)() % 5 == 0) {
      v[i] = NAN;
    }
  }
  for (size_t i = 0; i < v.size() && i < 4; ++i) v[i] = 0.f;
  return v;
}

// An output gradient: uniform in [-2, 2] (no zeros forced: a zero ograd
// would hide a wrong derivative).
Vec Ograd(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = u(*g);
  return v;
}

std::vector<Case> CasesOf(const Op &op) {
  std::vector<Case> cs(std::begin(kCases), std::end(kCases));
  if (!IsNorm(op)) cs.push_back(kExclude);
  if (!IsMaxMin(op)) cs.push_back(kEmptyGroup);
  for (Case &c : cs) c.kv.insert(c.kv.end(), op.extra.begin(), op.extra.end());
  return cs;
}

// The plans from a call of these shapes.
int FwdPlan(const Op &op, const Case &c, mxc__gred_fwd_plan *p) {
  void *param = Params(op.name, c.kv);
  mxc__gpu_array in = Arr(c.in), out = Arr(c.out);
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  int rc = mxc__gred_fwd_plan_make(op.kind, &call, p, why, sizeof why);
  EXPECT_EQ(rc, MXC_OK) << op.name << ": " << why;
  mxc__free(param);
  return rc;
}

int BwdPlan(const Op &op, const Case &c, mxc__gred_bwd_plan *p) {
  std::string name = std::string("_backward_") + op.name;
  void *param = Params(name, c.kv);
  mxc__gpu_array in[3] = {Arr(c.out), Arr(c.in), Arr(c.out)};
  mxc__gpu_array out = Arr(c.in);
  int req = MXC__GPU_REQ_WRITE;
  int n_in = mxc__gred_grad_uses_y(op.kind) || IsNorm(op) ? 3 : 2;
  mxc__gpu_call call = {0, param, in, n_in, &out, 1, &req, 0, {}};
  char why[256] = "";
  int rc = mxc__gred_bwd_plan_make(op.kind, &call, p, why, sizeof why);
  EXPECT_EQ(rc, MXC_OK) << name << ": " << why;
  mxc__free(param);
  return rc;
}

std::string Name(const Op &op) {
  return op.name + (op.extra.empty() ? std::string() : " ord 1");
}

TEST(CudaRedPlan, ForwardMatchesTheCpu) {
  std::mt19937 g(51);
  for (const Op &op : kFwd) {
    std::vector<Case> cs = CasesOf(op);
    for (size_t k = 0; k < cs.size(); ++k) {
      const Case &c = cs[k];
      mxc__gred_fwd_plan p;
      ASSERT_EQ(FwdPlan(op, c, &p), MXC_OK);
      Vec x = Data(op, c.in, &g), base((size_t)Numel(c.out), 0.5f);
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Vec host = HostFwd(p, x, base, req);
        Vec cpu = CpuOp(op.name, c.kv, {c.in}, {x}, c.out, base, req);
        long at = FirstDiff(host, cpu, base, op.ulps);
        EXPECT_LT(at, 0) << Name(op) << " case " << k << " req " << req
                         << " element " << at << ": " << host[(size_t)at]
                         << " vs " << cpu[(size_t)at];
      }
    }
  }
}

TEST(CudaRedPlan, GradientsMatchTheCpuBitwise) {
  std::mt19937 g(52);
  for (const Op &op : kBwd) {
    std::vector<Case> cs = CasesOf(op);
    std::string name = std::string("_backward_") + op.name;
    for (size_t k = 0; k < cs.size(); ++k) {
      const Case &c = cs[k];
      mxc__gred_bwd_plan p;
      ASSERT_EQ(BwdPlan(op, c, &p), MXC_OK);
      Vec x = Data(op, c.in, &g), og = Ograd(c.out, &g);
      // The forward output, as the executor would pass it.
      Vec y = CpuOp(op.name, c.kv, {c.in}, {x}, c.out,
                    Vec((size_t)Numel(c.out)), MXC_REQ_WRITE);
      std::vector<Dims> ds = {c.out, c.in};
      std::vector<Vec> xs = {og, x};
      if (mxc__gred_grad_uses_y(p.kind) || IsNorm(op)) {
        ds.push_back(c.out), xs.push_back(y);
      }
      Vec base((size_t)Numel(c.in), 0.25f);
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Vec host = HostBwd(p, og, x, y, base, req);
        Vec cpu = CpuOp(name, c.kv, ds, xs, c.in, base, req);
        long at = FirstDiff(host, cpu, base, 0);
        EXPECT_LT(at, 0) << name << (op.extra.empty() ? "" : " ord 1")
                         << " case " << k << " req " << req << " element "
                         << at;
      }
    }
  }
}

// prod and nanprod's gradients: 2 ulps (the group products in another
// order than the CPU's); groups with no zero, one and several.
TEST(CudaRedPlan, ProductGradientsMatchTheCpu) {
  std::mt19937 g(54);
  for (const Op &op : {kFwd[2], kFwd[4]}) {
    std::vector<Case> cs = CasesOf(op);
    std::string name = std::string("_backward_") + op.name;
    for (size_t k = 0; k < cs.size(); ++k) {
      const Case &c = cs[k];
      void *param = Params(name, c.kv);
      mxc__gpu_array in[2] = {Arr(c.out), Arr(c.in)};
      mxc__gpu_array out = Arr(c.in);
      int req = MXC__GPU_REQ_WRITE;
      mxc__gpu_call call = {0, param, in, 2, &out, 1, &req, 0, {}};
      char why[256] = "";
      mxc__gred_prod_plan p;
      ASSERT_EQ(mxc__gred_prod_plan_make(op.kind, &call, &p, why, sizeof why),
                MXC_OK)
          << why;
      mxc__free(param);
      Vec x = Data(op, c.in, &g), og = Ograd(c.out, &g);
      Vec base((size_t)Numel(c.in), 0.25f);
      for (int r : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Vec host = HostProdBwd(p, og, x, base, r);
        Vec cpu = CpuOp(name, c.kv, {c.out, c.in}, {og, x}, c.in, base, r);
        long at = FirstDiff(host, cpu, base, 2);
        EXPECT_LT(at, 0) << name << " case " << k << " req " << r << " element "
                         << at;
      }
    }
  }
}

TEST(CudaRedPlan, RefusesBadCalls) {
  const Op &max = kFwd[0];
  mxc__gred_fwd_plan p;
  void *param = Params("max", kEmptyGroup.kv);
  mxc__gpu_array in = Arr(kEmptyGroup.in), out = Arr(kEmptyGroup.out);
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__gred_fwd_plan_make(max.kind, &call, &p, why, sizeof why),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("zero-size"), std::string::npos) << why;
  out = Arr({4});
  EXPECT_EQ(mxc__gred_fwd_plan_make(MXC__GR_PROD, &call, &p, why, sizeof why),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("the output has 4 elements"),
            std::string::npos)
      << why;
  mxc__free(param);
  // A gradient whose ograd is not the reduction's size.
  param = Params("_backward_sum", kCases[1].kv);
  mxc__gpu_array bin[2] = {Arr({2, 3}), Arr({2, 3, 4})};
  mxc__gpu_array bout = Arr({2, 3, 4});
  mxc__gpu_call bc = {0, param, bin, 2, &bout, 1, &req, 0, {}};
  mxc__gred_bwd_plan bp;
  EXPECT_EQ(mxc__gred_bwd_plan_make(MXC__GR_SUM, &bc, &bp, why, sizeof why),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("input 0 (ograd) has 6 elements"),
            std::string::npos)
      << why;
  mxc__free(param);
}

// The comparisons can fail: a forward plan reducing the wrong axis, a
// gradient map repeating ograd along a kept axis.
TEST(CudaRedPlan, AWrongPlanFails) {
  std::mt19937 g(53);
  const Op &op = kFwd[0];  // max
  const Case &c = kCases[1];
  mxc__gred_fwd_plan p;
  ASSERT_EQ(FwdPlan(op, c, &p), MXC_OK);
  Vec x = Data(op, c.in, &g), base(8, 0.f);
  Vec cpu = CpuOp("max", c.kv, {c.in}, {x}, c.out, base, MXC_REQ_WRITE);
  ASSERT_LT(FirstDiff(HostFwd(p, x, base, MXC_REQ_WRITE), cpu, base, 0), 0);
  mxc__gred_fwd_plan wrong = p;
  std::swap(wrong.s.kstr[1], wrong.s.rstr[0]);  // axis 2 reduced, not 1
  std::swap(wrong.s.kext[1], wrong.s.rext[0]);
  wrong.s.n_red = 4;
  EXPECT_GE(FirstDiff(HostFwd(wrong, x, base, MXC_REQ_WRITE), cpu, base, 0), 0);

  const Op &mean = kBwd[1];
  mxc__gred_bwd_plan bp;
  ASSERT_EQ(BwdPlan(mean, c, &bp), MXC_OK);
  Vec og = Ograd(c.out, &g), bbase(24, 0.f);
  Vec bcpu = CpuOp("_backward_mean", c.kv, {c.out, c.in}, {og, x}, c.in, bbase,
                   MXC_REQ_WRITE);
  ASSERT_LT(
      FirstDiff(HostBwd(bp, og, x, og, bbase, MXC_REQ_WRITE), bcpu, bbase, 0),
      0);
  mxc__gred_bwd_plan bw = bp;
  bw.map.sa[0] = 0;  // ograd repeated along the kept axis 0
  EXPECT_GE(
      FirstDiff(HostBwd(bw, og, x, og, bbase, MXC_REQ_WRITE), bcpu, bbase, 0),
      0);
}

}  // namespace
