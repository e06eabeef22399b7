// The sum/mean kernels' plan (backends/cuda/sum_plan.h) run on the host
// the way sum.cu runs it (256 strided double partial sums per output, then
// a fixed tree), against the CPU's sum and mean through the C API, on
// every machine: one axis, several, negative, exclude, keepdims, every
// axis, extent-1 and empty axes, write and add modes. The parameters reach
// the plan through the operator's own parser, so a drift between
// ops/reduce's struct and the plan's reading of it fails here.
//
// Tolerance: 2 float ulps of max(|cpu|, |output before an add|): both
// sides sum in double in different orders, so the float results differ
// only where the two double sums round to different floats.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "backends/cuda/sum_plan.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/plan_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using mxct::Numel;
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
    {{2, 3, 4}, {3}, {{"axis", "1"}, {"exclude", "true"}}},
    {{5, 1, 7}, {5, 7}, {{"axis", "1"}}},
    {{0, 3}, {3}, {{"axis", "0"}}},
    {{3, 0}, {0}, {{"axis", "0"}}},
    {{1031}, {1}, {{"axis", "0"}}},
    {{64, 130}, {64}, {{"axis", "1"}}},
    {{4, 513}, {513}, {{"axis", "0"}}},
    {{3, 4, 5, 6}, {4, 6}, {{"axis", "(0,2)"}}},
};

Vec Random(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = u(*g);
  return v;
}

Vec CpuOp(const char *name, const Case &c, const Vec &x, const Vec &base,
          int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  mxc_ndarray in = Cpu(c.in, x), out = Cpu(c.out, base);
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), &in, 1,
                          &out, 1, &req),
            MXC_OK)
      << mxc_last_error();
  Vec r = base;
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  }
  mxc_ndarray_free(in), mxc_ndarray_free(out);
  return r;
}

// The plan from the operator's parsed parameters.
int Plan(const char *name, const Case &c, mxc__sum_plan *p) {
  std::vector<const char *> k, v;
  for (const auto &q : c.kv) k.push_back(q.first.c_str());
  for (const auto &q : c.kv) v.push_back(q.second.c_str());
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(name), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK);
  mxc__gpu_array in = {};
  in.ndim = (int)c.in.size();
  for (size_t i = 0; i < c.in.size(); ++i) in.dims[i] = c.in[i];
  in.size = Numel(c.in);
  char why[256] = "";
  int rc = mxc__sum_plan_from_param(param, &in, std::string(name) == "mean",
                                    p, why, sizeof why);
  mxc__free(param);
  return rc;
}

// sum.cu's order on the host: 256 strided partials, then the tree.
Vec HostOp(const mxc__sum_plan &p, const Vec &x, const Vec &base, int req) {
  Vec r = base;
  for (int64_t o = 0; o < p.n_out; ++o) {
    double part[256];
    int64_t b = mxc__sum_base(&p, o);
    for (int t = 0; t < 256; ++t) {
      part[t] = 0;
      for (int64_t k = t; k < p.n_red; k += 256) {
        part[t] += x[(size_t)(b + mxc__sum_step(&p, k))];
      }
    }
    for (int half = 128; half > 0; half /= 2) {
      for (int t = 0; t < half; ++t) part[t] += part[t + half];
    }
    float v = mxc__sum_final(&p, part[0]);
    r[(size_t)o] = req == MXC_REQ_ADD ? r[(size_t)o] + v : v;
  }
  return r;
}

long FirstDiff(const Vec &a, const Vec &b, const Vec &base) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    double scale = std::fabs(b[i]);
    if (!base.empty()) scale = std::fmax(scale, std::fabs(base[i]));
    if (!(std::fabs(a[i] - b[i]) <= 2 * FLT_EPSILON * scale)) return (long)i;
  }
  return -1;
}

TEST(CudaSumPlan, MatchesTheCpu) {
  std::mt19937 g(29);
  for (const char *op : {"sum", "mean"}) {
    for (size_t k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
      const Case &c = kCases[k];
      mxc__sum_plan p;
      ASSERT_EQ(Plan(op, c, &p), MXC_OK) << op << " case " << k;
      ASSERT_EQ(p.n_out, Numel(c.out)) << op << " case " << k;
      Vec x = Random(c.in, &g), base = Random(c.out, &g);
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        Vec host = HostOp(p, x, base, req);
        Vec cpu = CpuOp(op, c, x, base, req);
        long at = FirstDiff(host, cpu, req == MXC_REQ_ADD ? base : Vec());
        EXPECT_LT(at, 0) << op << " case " << k << " req " << req
                         << " element " << at;
      }
    }
  }
}

// The comparison can fail: exclude ignored.
TEST(CudaSumPlan, AWrongPlanFails) {
  std::mt19937 g(30);
  const Case &c = kCases[4];
  mxc__sum_plan p;
  ASSERT_EQ(Plan("sum", c, &p), MXC_OK);
  Vec x = Random(c.in, &g), base(3, 0.f);
  Vec cpu = CpuOp("sum", c, x, base, MXC_REQ_WRITE);
  ASSERT_LT(FirstDiff(HostOp(p, x, base, MXC_REQ_WRITE), cpu, Vec()), 0);
  mxc__gpu_array in = {};
  in.ndim = 3, in.dims[0] = 2, in.dims[1] = 3, in.dims[2] = 4, in.size = 24;
  int64_t axis[1] = {1};
  char why[256] = "";
  ASSERT_EQ(mxc__sum_plan_make(&in, 1, axis, 0, 0, &p, why, sizeof why),
            MXC_OK);
  Vec wrong = HostOp(p, x, Vec(8, 0.f), MXC_REQ_WRITE);
  wrong.resize(3);
  EXPECT_GE(FirstDiff(wrong, cpu, Vec()), 0);
}

TEST(CudaSumPlan, RefusesBadAxes) {
  mxc__gpu_array in = {};
  in.ndim = 2, in.dims[0] = 2, in.dims[1] = 3, in.size = 6;
  mxc__sum_plan p;
  char why[256] = "";
  int64_t bad[2] = {2, 0}, twice[2] = {1, -1};
  EXPECT_EQ(mxc__sum_plan_make(&in, 1, bad, 0, 0, &p, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("axis 2"), std::string::npos) << why;
  EXPECT_EQ(mxc__sum_plan_make(&in, 2, twice, 0, 0, &p, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
