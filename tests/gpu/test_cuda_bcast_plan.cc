// The broadcast kernels' index plan (backends/cuda/bcast_plan.h) run on
// the host with the same offset and operation functions as bcast.cu,
// against the CPU's broadcast_add/sub/mul/div through the C API, on every
// machine: operands of fewer axes, extent-1 axes on either side, a
// scalar, an empty output, write and add modes, bitwise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "backends/cuda/bcast_plan.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/plan_test_util.h"

namespace {

using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;
using mxct::Numel;
using mxct::Arr;
using mxct::Cpu;

struct Case {
  Dims a, b, out;
};

const Case kCases[] = {
    {{3, 4}, {4}, {3, 4}},
    {{2, 1, 5}, {3, 1}, {2, 3, 5}},
    {{1}, {2, 3}, {2, 3}},
    {{}, {2, 2}, {2, 2}},
    {{4, 1, 3, 1}, {1, 5, 1, 2}, {4, 5, 3, 2}},
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
    {{5, 1}, {1, 1}, {5, 1}},
    {{2, 1, 1, 3, 1, 2}, {1, 4, 2, 1, 3, 2}, {2, 4, 2, 3, 3, 2}},
    {{0, 3}, {1, 3}, {0, 3}},
};

const char *const kOps[] = {"broadcast_add", "broadcast_sub",
                            "broadcast_mul", "broadcast_div"};

// The CPU operator's result.
Vec CpuOp(const char *name, const Case &c, const Vec &a, const Vec &b,
          const Vec &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  mxc_ndarray in[2] = {Cpu(c.a, a), Cpu(c.b, b)}, out = Cpu(c.out, base);
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &out, 1, &req),
            MXC_OK)
      << mxc_last_error();
  Vec r = base;
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  }
  mxc_ndarray_free(in[0]), mxc_ndarray_free(in[1]), mxc_ndarray_free(out);
  return r;
}

// What bcast.cu computes, on the host.
Vec HostOp(int op, const mxc__bcast_plan &p, const Vec &a, const Vec &b,
           const Vec &base, int req) {
  Vec r = base;
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p, (int64_t)i, &ia, &ib);
    float v = mxc__bcast_apply(op, a[(size_t)ia], b[(size_t)ib]);
    r[i] = req == MXC_REQ_ADD ? r[i] + v : v;
  }
  return r;
}

Vec Random(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(0.5f, 3.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = g->operator()() % 2 ? u(*g) : -u(*g);
  return v;
}

bool Same(const Vec &x, const Vec &y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * 4) == 0);
}

TEST(CudaBcastPlan, MatchesTheCpuBitwise) {
  std::mt19937 g(23);
  for (const Case &c : kCases) {
    mxc__gpu_array a = Arr(c.a), b = Arr(c.b), o = Arr(c.out);
    mxc__bcast_plan p;
    char why[256] = "";
    ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK)
        << why;
    Vec x = Random(c.a, &g), y = Random(c.b, &g), base = Random(c.out, &g);
    for (int op = 0; op < 4; ++op) {
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        EXPECT_TRUE(Same(HostOp(op, p, x, y, base, req),
                         CpuOp(kOps[op], c, x, y, base, req)))
            << kOps[op] << " out of " << c.out.size() << " axes, "
            << Numel(c.out) << " elements, req " << req;
      }
    }
  }
}

// Axes contiguous for both operands are merged; extent-1 axes dropped.
TEST(CudaBcastPlan, MergesAxes) {
  mxc__gpu_array a = Arr({2, 3, 4}), b = Arr({2, 3, 4}), o = Arr({2, 3, 4});
  mxc__bcast_plan p;
  char why[256] = "";
  ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK);
  EXPECT_EQ(p.nd, 1);
  EXPECT_EQ(p.ext[0], 24);
  a = Arr({3, 1, 4}), b = Arr({4}), o = Arr({3, 1, 4});
  ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK);
  EXPECT_EQ(p.nd, 2);
  EXPECT_EQ(p.sb[0], 0);
  EXPECT_EQ(p.sa[0], 4);
}

TEST(CudaBcastPlan, RefusesShapesThatDoNotBroadcast) {
  mxc__bcast_plan p;
  char why[256] = "";
  mxc__gpu_array a = Arr({3, 4}), b = Arr({5}), o = Arr({3, 4});
  EXPECT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("output axis 1"), std::string::npos)
      << why;
  a = Arr({2, 3, 4}), o = Arr({3, 4}), b = Arr({4});
  EXPECT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why),
            MXC_ERR_SHAPE);
}

// The comparison can fail: the operands' strides swapped.
TEST(CudaBcastPlan, AWrongPlanFails) {
  std::mt19937 g(24);
  const Case &c = kCases[1];
  mxc__gpu_array a = Arr(c.a), b = Arr(c.b), o = Arr(c.out);
  mxc__bcast_plan p;
  char why[256] = "";
  ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK);
  Vec x = Random(c.a, &g), y = Random(c.b, &g), base(30, 0.f);
  Vec cpu = CpuOp("broadcast_sub", c, x, y, base, MXC_REQ_WRITE);
  ASSERT_TRUE(Same(HostOp(MXC__BC_SUB, p, x, y, base, MXC_REQ_WRITE), cpu));
  p.sa[p.nd - 1] = 0;  // the lhs repeated along the innermost axis
  EXPECT_FALSE(Same(HostOp(MXC__BC_SUB, p, x, y, base, MXC_REQ_WRITE), cpu));
}

}  // namespace
