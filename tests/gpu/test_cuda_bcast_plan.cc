// The broadcast kernels' index plan (backends/cuda/bcast_plan.h) run on
// the host with the same offset and operation functions as bcast.cu,
// against the CPU's broadcast_add/sub/mul/div through the C API, on every
// machine: operands of fewer axes, extent-1 axes on either side, a
// scalar, an empty output, write and add modes, bitwise.
//
// Also the half-precision parts the element-wise, broadcast and sum
// kernels share (backends/cuda/half_hd.h, half_types.h): the conversions
// against core/base/half.h on every 16-bit pattern and on the rounding
// boundaries of every half value, and the broadcast kernels' per-element
// code in float16 / bfloat16 (MxcElem load, operation, store) against the
// CPU operators, bitwise.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "backends/cuda/bcast_plan.h"
#include "backends/cuda/copy_plan.h"
#include "backends/cuda/half_types.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "backends/cuda/half_hd.h"
#include "backends/cuda/index_hd.h"
#include "backends/cuda/scalar_hd.h"
#include "backends/cuda/unary_hd.h"
#include "mxc/mxc.h"
#include "tests/gpu/half_test_util.h"
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

// bcast.cu's kernel for the rest of binary_ops.h's list (broadcast_mod,
// _power, _maximum, ..., _logical_xor): the plan's offsets and
// scalar_hd.h's B_<name>::fwd, on the host.
template <class B>
Vec HostListed(const mxc__bcast_plan &p, const Vec &a, const Vec &b,
               const Vec &base, int req) {
  Vec r = base;
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p, (int64_t)i, &ia, &ib);
    float v = B::fwd(a[(size_t)ia], b[(size_t)ib]);
    r[i] = req == MXC_REQ_ADD ? r[i] + v : v;
  }
  return r;
}

typedef Vec (*listed_fn)(const mxc__bcast_plan &, const Vec &, const Vec &,
                         const Vec &, int);
struct Listed {
  const char *op;
  listed_fn host;
};
// backends/cuda/scalar.h's MXC__CUDA_SAME_FWD, spelled out (that header
// belongs to a CUDA-only target).
#define MXC__LISTED(name) {"broadcast_" #name, HostListed<mxc_bin::B_##name>}
const Listed kListed[] = {
    MXC__LISTED(mod),           MXC__LISTED(power),
    MXC__LISTED(maximum),       MXC__LISTED(minimum),
    MXC__LISTED(hypot),         MXC__LISTED(equal),
    MXC__LISTED(not_equal),     MXC__LISTED(greater),
    MXC__LISTED(greater_equal), MXC__LISTED(lesser),
    MXC__LISTED(lesser_equal),  MXC__LISTED(logical_and),
    MXC__LISTED(logical_or),    MXC__LISTED(logical_xor)};
#undef MXC__LISTED

// Bitwise on the host (the same libm); a third of rhs's elements are
// lhs's first (ties for the comparisons); power gets positive bases.
TEST(CudaBcastPlan, ListedOperatorsMatchTheCpuBitwise) {
  std::mt19937 g(24);
  for (const Case &c : kCases) {
    mxc__gpu_array a = Arr(c.a), b = Arr(c.b), o = Arr(c.out);
    mxc__bcast_plan p;
    char why[256] = "";
    ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK)
        << why;
    Vec x = Random(c.a, &g), y = Random(c.b, &g), base = Random(c.out, &g);
    for (size_t i = 0; !x.empty() && i < y.size(); i += 3) y[i] = x[0];
    for (const Listed &l : kListed) {
      Vec xx = x;
      if (std::strcmp(l.op, "broadcast_power") == 0) {
        for (float &v : xx) v = std::fabs(v);
      }
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        EXPECT_TRUE(Same(l.host(p, xx, y, base, req),
                         CpuOp(l.op, c, xx, y, base, req)))
            << l.op << " out of " << c.out.size() << " axes, "
            << Numel(c.out) << " elements, req " << req;
      }
    }
  }
}

// The comparison can fail: maximum's kernel body run for minimum.
TEST(CudaBcastPlan, AWrongListedOperatorFails) {
  std::mt19937 g(25);
  const Case &c = kCases[1];
  mxc__gpu_array a = Arr(c.a), b = Arr(c.b), o = Arr(c.out);
  mxc__bcast_plan p;
  char why[256] = "";
  ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK);
  Vec x = Random(c.a, &g), y = Random(c.b, &g), base((size_t)Numel(c.out));
  const int w = MXC_REQ_WRITE;
  ASSERT_TRUE(Same(HostListed<mxc_bin::B_minimum>(p, x, y, base, w),
                   CpuOp("broadcast_minimum", c, x, y, base, w)));
  EXPECT_FALSE(Same(HostListed<mxc_bin::B_maximum>(p, x, y, base, w),
                    CpuOp("broadcast_minimum", c, x, y, base, w)));
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

// ---- half precision (half_hd.h, half_types.h) ----

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Widening: every 16-bit pattern, NaN payloads and signs included.
TEST(CudaHalf, WideningMatchesTheCpuOnEveryPattern) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    uint16_t x = (uint16_t)h;
    ASSERT_EQ(Bits(mxc__hd_f16_to_f32(x)), Bits(mxc__f16_to_f32(x))) << h;
    ASSERT_EQ(Bits(mxc__hd_bf16_to_f32(x)), Bits(mxc__bf16_to_f32(x))) << h;
  }
}

// Floats around every rounding decision of a 16-bit type: each value of
// the type (exp_shift: bits below its last mantissa bit in a float,
// 13 for float16 normals, 16 for bfloat16), the midpoints to the next and
// one float ulp either side, plus special values and random patterns.
std::vector<uint32_t> NarrowingInputs(bool f16) {
  std::vector<uint32_t> v = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                             0x7f800001u, 0x7fbfffffu, 0x477ff000u, 0x477fefffu,
                             0x477ff001u, 0x33000000u, 0x33000001u, 0x32ffffffu,
                             0x38800000u, 0x387fffffu, 0x00000001u, 0x80000000u,
                             0x7f7fffffu};
  for (uint32_t h = 0; h <= 0x7fffu; ++h) {
    float lo =
        f16 ? mxc__f16_to_f32((uint16_t)h) : mxc__bf16_to_f32((uint16_t)h);
    float hi = f16 ? mxc__f16_to_f32((uint16_t)(h + 1))
                   : mxc__bf16_to_f32((uint16_t)(h + 1));
    if (!std::isfinite(lo)) continue;
    uint32_t mid = Bits((float)(((double)lo + (double)hi) / 2));
    for (uint32_t u : {Bits(lo), mid}) {
      for (uint32_t d : {0u, 1u, 0x80000000u}) v.push_back(u ^ d);
      v.push_back(u + 1), v.push_back(u - 1);
      v.push_back((u + 1) | 0x80000000u), v.push_back((u - 1) | 0x80000000u);
    }
  }
  std::mt19937 g(16);
  for (int i = 0; i < 200000; ++i) v.push_back((uint32_t)g());
  return v;
}

// Fails (tried once each) when the ties-to-even term of the normal path is
// dropped or the subnormal path adds 0.25 instead of 0.5.
TEST(CudaHalf, NarrowingMatchesTheCpu) {
  for (uint32_t u : NarrowingInputs(true)) {
    float f = FromBits(u);
    ASSERT_EQ(mxc__hd_f32_to_f16(f), mxc__f32_to_f16(f)) << std::hex << u;
  }
  for (uint32_t u : NarrowingInputs(false)) {
    float f = FromBits(u);
    ASSERT_EQ(mxc__hd_f32_to_bf16(f), mxc__f32_to_bf16(f)) << std::hex << u;
  }
}

TEST(CudaHalf, RowsTakeOneFloatOrHalfDtype) {
  const int f32 = MXC_DTYPE_FLOAT32, f16 = MXC_DTYPE_FLOAT16,
            bf16 = MXC_DTYPE_BFLOAT16;
  const int same16[] = {f16, f16, f16}, same_bf[] = {bf16, -1, bf16},
            mixed[] = {f16, f32, f16}, f64[] = {MXC_DTYPE_FLOAT64, -1, -1},
            undecided[] = {-1, -1, -1}, ints[] = {MXC_DTYPE_INT32, -1, -1};
  EXPECT_EQ(mxc__half_supports_same(same16, 2, 1), 1);
  EXPECT_EQ(mxc__half_supports_same(same_bf, 2, 1), 1);
  EXPECT_EQ(mxc__half_supports_same(undecided, 2, 1), 1);
  EXPECT_EQ(mxc__half_supports_same(mixed, 2, 1), 0);
  EXPECT_EQ(mxc__half_supports_same(f64, 2, 1), 0);
  EXPECT_EQ(mxc__half_supports_same(ints, 2, 1), 0);
  EXPECT_EQ(mxc__half_slot(f32), MXC__HALF_SLOT_F32);
  EXPECT_EQ(mxc__half_slot(bf16), MXC__HALF_SLOT_BF16);
  EXPECT_EQ(mxc__half_slot(MXC_DTYPE_INT8), -1);
}

// The CPU operator on arrays of dtype dt (values rounded to it).
Vec CpuOpOf(int dt, const char *name, const Case &c, const Vec &a, const Vec &b,
            const Vec &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  auto make = [dt](const Dims &d, const Vec &v) {
    mxc_ndarray h = nullptr;
    EXPECT_EQ(mxc_ndarray_create(d.data(), (int)d.size(), dt, MXC_DEVICE_CPU, 0,
                                 0, &h),
              MXC_OK);
    std::vector<uint8_t> bytes = mxct::ToBytes(dt, v);
    if (!bytes.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_from_host(h, bytes.data(), bytes.size()),
                MXC_OK);
    }
    return h;
  };
  mxc_ndarray in[2] = {make(c.a, a), make(c.b, b)}, out = make(c.out, base);
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &out, 1, &req),
            MXC_OK)
      << mxc_last_error();
  std::vector<uint8_t> r(base.size() * 2);
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size()), MXC_OK);
  }
  mxc_ndarray_free(in[0]), mxc_ndarray_free(in[1]), mxc_ndarray_free(out);
  return mxct::FromBytes(dt, r);
}

// bcast.cu's kernel body for dtype DT on the host: the same MxcElem loads,
// operation and store.
template <int DT>
Vec HostOpHalf(int op, const mxc__bcast_plan &p, const Vec &a, const Vec &b,
               const Vec &base, int req) {
  typedef MxcElem<DT> E;
  std::vector<uint16_t> ha, hb, hr;
  for (float x : a) ha.push_back(mxct::FloatToHalf(DT, x));
  for (float x : b) hb.push_back(mxct::FloatToHalf(DT, x));
  for (float x : base) hr.push_back(mxct::FloatToHalf(DT, x));
  for (size_t i = 0; i < hr.size(); ++i) {
    int64_t ia, ib;
    mxc__bcast_offsets(&p, (int64_t)i, &ia, &ib);
    float v =
        mxc__bcast_apply(op, E::load(ha[(size_t)ia]), E::load(hb[(size_t)ib]));
    hr[i] = E::store(req == MXC_REQ_ADD ? E::load(hr[i]) + v : v);
  }
  Vec r;
  for (uint16_t h : hr) r.push_back(mxct::HalfToFloat(DT, h));
  return r;
}

// Values that exercise half rounding: wide magnitudes (float16 overflow
// and subnormals), exact ties, a NaN and an infinity.
Vec HalfRandom(const Dims &d, std::mt19937 *g) {
  std::uniform_real_distribution<float> e(-26.f, 17.f);
  Vec v((size_t)Numel(d));
  for (auto &x : v) x = ((*g)() % 2 ? 1.f : -1.f) * std::exp2(e(*g));
  if (v.size() > 3) v[1] = NAN, v[2] = -INFINITY, v[3] = 1.f + 1.f / 2048;
  return v;
}

template <int DT>
void CheckBcastHalf() {
  std::mt19937 g(25);
  for (const Case &c : kCases) {
    mxc__gpu_array a = Arr(c.a), b = Arr(c.b), o = Arr(c.out);
    mxc__bcast_plan p;
    char why[256] = "";
    ASSERT_EQ(mxc__bcast_plan_make(&a, &b, &o, &p, why, sizeof why), MXC_OK);
    Vec x = HalfRandom(c.a, &g), y = HalfRandom(c.b, &g),
        base = HalfRandom(c.out, &g);
    for (int op = 0; op < 4; ++op) {
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        EXPECT_TRUE(Same(HostOpHalf<DT>(op, p, x, y, base, req),
                         CpuOpOf(DT, kOps[op], c, x, y, base, req)))
            << kOps[op] << " " << mxct::DtypeName(DT) << ", " << Numel(c.out)
            << " elements, req " << req;
      }
    }
  }
}

TEST(CudaHalf, BroadcastKernelBodyMatchesTheCpuBitwise) {
  CheckBcastHalf<MXC_DTYPE_FLOAT16>();
  CheckBcastHalf<MXC_DTYPE_BFLOAT16>();
}

// elementwise.cu computes relu, negative, abs and square of half arrays
// in float, the CPU in double (ops/elemwise/unary.c): the same results,
// bit for bit, write and add (the reasoning is elementwise.cu's). Every
// 16-bit pattern as the input, against the CPU operators.
template <int DT>
void CheckUnaryInFloat() {
  typedef MxcElem<DT> E;
  std::mt19937 g(26);
  Vec x, base = HalfRandom({65536}, &g);
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    x.push_back(mxct::HalfToFloat(DT, (uint16_t)h));
  }
  x[(size_t)mxct::HalfPoison(DT)] = 0.f;  // the tests' poison, not data
  const char *names[] = {"relu", "negative", "abs", "square"};
  for (int u = 0; u < 4; ++u) {
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Vec host;
      for (size_t i = 0; i < x.size(); ++i) {
        float a = E::load(mxct::FloatToHalf(DT, x[i]));
        float v = u == 0   ? (a > 0.f || a != a ? a : 0.f)
                  : u == 1 ? -a
                  : u == 2 ? std::fabs(a)
                           : a * a;
        float o = E::load(mxct::FloatToHalf(DT, base[i]));
        host.push_back(
            mxct::HalfToFloat(DT, E::store(req == MXC_REQ_ADD ? o + v : v)));
      }
      mxc_op op = nullptr;
      ASSERT_EQ(mxc_op_find(names[u], &op), MXC_OK);
      Case c = {{65536}, {65536}, {65536}};
      Vec cpu;
      {
        mxc_ndarray in = nullptr, out = nullptr;
        std::vector<uint8_t> bx = mxct::ToBytes(DT, x),
                             bo = mxct::ToBytes(DT, base);
        ASSERT_EQ(
            mxc_ndarray_create(c.a.data(), 1, DT, MXC_DEVICE_CPU, 0, 0, &in),
            MXC_OK);
        ASSERT_EQ(
            mxc_ndarray_create(c.a.data(), 1, DT, MXC_DEVICE_CPU, 0, 0, &out),
            MXC_OK);
        ASSERT_EQ(mxc_ndarray_copy_from_host(in, bx.data(), bx.size()), MXC_OK);
        ASSERT_EQ(mxc_ndarray_copy_from_host(out, bo.data(), bo.size()),
                  MXC_OK);
        ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &in, 1, &out, 1, &req),
                  MXC_OK)
            << mxc_last_error();
        ASSERT_EQ(mxc_ndarray_copy_to_host(out, bo.data(), bo.size()), MXC_OK);
        cpu = mxct::FromBytes(DT, bo);
        mxc_ndarray_free(in), mxc_ndarray_free(out);
      }
      EXPECT_TRUE(Same(host, cpu))
          << names[u] << " " << mxct::DtypeName(DT) << " req " << req;
    }
  }
}

TEST(CudaHalf, UnaryInFloatMatchesTheCpuBitwise) {
  CheckUnaryInFloat<MXC_DTYPE_FLOAT16>();
  CheckUnaryInFloat<MXC_DTYPE_BFLOAT16>();
}

// cast.cu's per-element conversion (mxc__hd_cast_elem) on the host for
// the (SRC, DST) pair, over arrays' bytes.
template <int SRC, int DST>
std::vector<uint8_t> HostCast(const std::vector<uint8_t> &x,
                              const std::vector<uint8_t> &init, int add) {
  typedef typename MxcCastT<SRC>::T S;
  typedef typename MxcCastT<DST>::T D;
  std::vector<uint8_t> r = init;
  for (size_t i = 0; i < x.size() / sizeof(S); ++i) {
    S s;
    D d;
    std::memcpy(&s, &x[i * sizeof(S)], sizeof(S));
    std::memcpy(&d, &r[i * sizeof(D)], sizeof(D));
    d = mxc__hd_cast_elem<SRC, DST>(s, d, add);
    std::memcpy(&r[i * sizeof(D)], &d, sizeof(D));
  }
  return r;
}

typedef std::vector<uint8_t> (*host_cast_fn)(const std::vector<uint8_t> &,
                                             const std::vector<uint8_t> &,
                                             int);

// Indexed by mxc__cast_slot of source and target, as cast.cu's table.
#define HOST_CAST_ROW(src)                                                \
  {HostCast<src, MXC_DTYPE_FLOAT32>, HostCast<src, MXC_DTYPE_FLOAT16>,   \
   HostCast<src, MXC_DTYPE_BFLOAT16>, HostCast<src, MXC_DTYPE_FLOAT64>}
const host_cast_fn kHostCast[4][4] = {
    HOST_CAST_ROW(MXC_DTYPE_FLOAT32), HOST_CAST_ROW(MXC_DTYPE_FLOAT16),
    HOST_CAST_ROW(MXC_DTYPE_BFLOAT16), HOST_CAST_ROW(MXC_DTYPE_FLOAT64)};
#undef HOST_CAST_ROW

// One pair, write and add: the host's conversion against the CPU's op.
void CheckCastPair(const char *op, int src, int dst,
                   const std::vector<double> &v,
                   const std::vector<double> &base) {
  std::vector<uint8_t> x = mxct::CastBytes(src, v);
  std::vector<uint8_t> init = mxct::CastBytes(dst, base);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::string what = std::string(op) + " " + mxct::DtypeName(src) +
                       " to " + mxct::DtypeName(dst) + " req " +
                       std::to_string(req);
    int rc = 0;
    std::vector<uint8_t> cpu =
        mxct::RunCastOn(op, src, dst, x, init, req, MXC_DEVICE_CPU, &rc);
    ASSERT_EQ(rc, MXC_OK) << what << ": " << mxc_last_error();
    std::vector<uint8_t> host =
        kHostCast[mxc__cast_slot(src)][mxc__cast_slot(dst)](
            x, init, req == MXC_REQ_ADD);
    mxct::ExpectSameElems(what, dst, host, cpu);
  }
}

// Every pair of the four floating dtypes, write and add, against the
// CPU's Cast and _backward_Cast bitwise (a NaN matching any NaN).
TEST(CudaHalf, CastElemMatchesTheCpu) {
  std::mt19937 g(27);
  std::vector<double> v = mxct::CastValues(4096, &g);
  std::vector<double> base = mxct::CastValues(4096, &g);
  for (const char *op : {"Cast", "_backward_Cast"}) {
    for (int src : mxct::FloatDtypes()) {
      for (int dst : mxct::FloatDtypes()) CheckCastPair(op, src, dst, v, base);
    }
  }
}

// Rounding float64 to float32 to nearest first (instead of to odd) rounds
// some of those values twice: the comparison above would fail.
TEST(CudaHalf, CastRoundsFloat64ToHalfOnce) {
  double d = 1. + 0x1p-11 + 0x1p-40;  // just above a float16 tie
  EXPECT_EQ(mxc__hd_f32_to_f16(mxc__hd_f64_to_f32_odd(d)), 0x3c01);
  EXPECT_EQ(mxc__hd_f32_to_f16((float)d), 0x3c00);  // the tie, to even
}

TEST(CudaHalf, CastRowsTakeTheFloatingDtypes) {
  const int f64_to_f16[] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16},
            bwd[] = {MXC_DTYPE_BFLOAT16, MXC_DTYPE_INT32, MXC_DTYPE_INT32},
            i32_to_f16[] = {MXC_DTYPE_INT32, MXC_DTYPE_FLOAT16},
            undecided[] = {MXC_DTYPE_FLOAT32, -1},
            bwd_ok[] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32,
                        MXC_DTYPE_FLOAT32};
  EXPECT_EQ(mxc__half_supports_cast(f64_to_f16, 1, 1), 1);
  EXPECT_EQ(mxc__half_supports_cast(undecided, 1, 1), 1);
  EXPECT_EQ(mxc__half_supports_cast(bwd_ok, 2, 1), 1);
  EXPECT_EQ(mxc__half_supports_cast(bwd, 2, 1), 0);  // int32 output
  EXPECT_EQ(mxc__half_supports_cast(i32_to_f16, 1, 1), 0);
  EXPECT_EQ(mxc__cast_slot(MXC_DTYPE_FLOAT64), 3);
}

}  // namespace

// ---- unary.cu's element functions (backends/cuda/unary_hd.h) ----
//
// Every unary math operator of the GPU's list and its gradient, run on
// the host with unary_hd.h's fwd_elem / bwd_elem (the kernels' bodies)
// against the CPU operators through the C API, float32, float16 and
// bfloat16, write and add: bitwise (a NaN matching any NaN), since host
// and CPU share glibc, except the CPU's float32 tanh, sigmoid and exp,
// which are core/op/vmath.h's approximations (8 ulps forward, 3 for their
// gradients, whose products vmath orders differently). This checks the
// C++ reading of ops/elemwise/unary_ops.h (overloads, conversions, the
// half types' double path and its roundings) against the C one.

namespace {
namespace unary_host {

using Bytes = std::vector<uint8_t>;

// 4096 values of dt: the domain of most operators, multiples of 0.5
// (ties of the rounding operators), zeros, NaN, infinities, and the
// edges of the inverse functions' domains.
Vec Values(int dt, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-6.f, 6.f);
  Vec v(4096);
  for (size_t i = 0; i < v.size(); ++i) {
    float x = u(*g);
    v[i] = i % 4 == 0 ? std::round(x * 2) / 2 : i % 4 == 1 ? x / 8 : x;
  }
  const float special[] = {0.f, -0.f, NAN, INFINITY, -INFINITY, 1e-3f, 100.f,
                           30.f, -30.f, 0.99f, 1.01f, 20.f, 21.f, -1.f, 1.f};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) {
    v[i * 7] = special[i];
  }
  return mxct::RoundTo(dt, v);
}

// The CPU operator over ins (dtype dt), the output starting as base.
Bytes CpuRun(const std::string &name, int dt, const std::vector<Bytes> &ins,
             const Bytes &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  int64_t n = (int64_t)(base.size() / mxct::ElemSize(dt));
  std::vector<mxc_ndarray> a;
  for (size_t i = 0; i <= ins.size(); ++i) {
    mxc_ndarray x = nullptr;
    EXPECT_EQ(mxc_ndarray_create(&n, 1, dt, MXC_DEVICE_CPU, 0, 0, &x), MXC_OK);
    const Bytes &b = i < ins.size() ? ins[i] : base;
    EXPECT_EQ(mxc_ndarray_copy_from_host(x, b.data(), b.size()), MXC_OK);
    a.push_back(x);
  }
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, a.data(), (int)ins.size(),
                          &a.back(), 1, &req),
            MXC_OK)
      << name << ": " << mxc_last_error();
  Bytes r = base;
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.back(), r.data(), r.size()), MXC_OK);
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return r;
}

// host against cpu: bitwise (NaN matching NaN) or within ulps of float32.
void Expect(const std::string &what, int dt, const Bytes &host,
            const Bytes &cpu, const Bytes &base, int ulps) {
  if (ulps == 0) {
    mxct::ExpectSameElems(what, dt, host, cpu);
    return;
  }
  Vec h = mxct::FromBytes(dt, host), c = mxct::FromBytes(dt, cpu),
      b = mxct::FromBytes(dt, base);
  for (size_t i = 0; i < h.size(); ++i) {
    if ((std::isnan(h[i]) && std::isnan(c[i])) || h[i] == c[i]) continue;
    float scale = std::fmax(std::fabs(c[i]), std::fabs(b[i]));
    if (std::fabs(h[i] - c[i]) > ulps * FLT_EPSILON * scale) {
      ADD_FAILURE() << what << ": element " << i << " is " << h[i]
                    << " on the host, " << c[i] << " on the CPU";
      return;
    }
  }
}

template <class T>
std::vector<T> As(const Bytes &b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

template <class T>
Bytes Of(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class U, int DT>
void CheckOp(const std::string &name, bool vmath) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(28);
  Bytes x = mxct::ToBytes(DT, Values(DT, &g));
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  Vec bv(4096), ov(4096);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = u(g), ov[i] = u(g);
  Bytes base = mxct::ToBytes(DT, bv), og = mxct::ToBytes(DT, ov);
  Bytes y = CpuRun(name, DT, {x}, base, MXC_REQ_WRITE);
  std::vector<T> tx = As<T>(x), ty = As<T>(y), tg = As<T>(og);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::string what = name + " " + mxct::DtypeName(DT) + " req " +
                       std::to_string(req);
    int add = req == MXC_REQ_ADD;
    std::vector<T> f = As<T>(base), b = As<T>(base);
    for (size_t i = 0; i < f.size(); ++i) {
      f[i] = mxc_unary::fwd_elem<U, DT>(tx[i], f[i], add);
      b[i] = mxc_unary::bwd_elem<U, DT>(tg[i], tx[i], ty[i], b[i], add);
    }
    bool approx = vmath && DT == MXC_DTYPE_FLOAT32;
    Expect(what, DT, Of(f), CpuRun(name, DT, {x}, base, req), base,
           approx ? 8 : 0);
    Expect("_backward_" + what, DT, Of(b),
           CpuRun("_backward_" + name, DT, {og, x, y}, base, req), base,
           approx ? 3 : 0);
  }
}

template <class U>
void CheckAllDtypes(const char *name) {
  std::string n = name;
  bool vmath = n == "tanh" || n == "sigmoid" || n == "exp";
  CheckOp<U, MXC_DTYPE_FLOAT32>(n, vmath);
  CheckOp<U, MXC_DTYPE_FLOAT16>(n, vmath);
  CheckOp<U, MXC_DTYPE_BFLOAT16>(n, vmath);
}

}  // namespace unary_host
}  // namespace

TEST(CudaUnary, ElementFunctionsMatchTheCpu) {
#define CHECK_UNARY(name, fwd, grad, int_ok, doc) \
  unary_host::CheckAllDtypes<mxc_unary::U_##name>(#name);
  MXC__UNARY_OPS_MAIN(CHECK_UNARY)
  MXC__UNARY_OPS_SPECIAL(CHECK_UNARY)
  MXC__UNARY_OPS_LAST(CHECK_UNARY)
#undef CHECK_UNARY
}

// ---- scalar.cu's element functions (backends/cuda/scalar_hd.h) ----
//
// Every binary operator of ops/binary/binary_ops.h in its scalar forms
// (_<stem>_scalar, _r<stem>_scalar where not commutative, their
// gradients) and same-shape forms (forward, _backward_ with both outputs),
// run on the host with scalar_hd.h's functions (the kernels' bodies)
// against the CPU operators, float32, float16 and bfloat16, write and
// add, bitwise (host and CPU share glibc's powf and hypotf).

namespace {
namespace bin_host {

using Bytes = std::vector<uint8_t>;

// The CPU operator with parameters kv over ins (dtype dt, n elements
// each); outputs start as base and are written in mode req (NULL for
// outputs past n_out_req); returns their bytes.
std::vector<Bytes> CpuRun(const std::string &name, int dt,
                          const std::vector<std::string> &kv,
                          const std::vector<Bytes> &ins, const Bytes &base,
                          const std::vector<int> &reqs) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  int64_t n = (int64_t)(base.size() / mxct::ElemSize(dt));
  std::vector<mxc_ndarray> a;
  for (size_t i = 0; i < ins.size() + reqs.size(); ++i) {
    mxc_ndarray x = nullptr;
    EXPECT_EQ(mxc_ndarray_create(&n, 1, dt, MXC_DEVICE_CPU, 0, 0, &x), MXC_OK);
    const Bytes &b = i < ins.size() ? ins[i] : base;
    EXPECT_EQ(mxc_ndarray_copy_from_host(x, b.data(), b.size()), MXC_OK);
    a.push_back(x);
  }
  const char *k[1] = {"scalar"}, *v[1] = {kv.empty() ? "" : kv[0].c_str()};
  std::vector<int> r = reqs;
  EXPECT_EQ(mxc_op_invoke(op, k, v, (int)kv.size(), a.data(), (int)ins.size(),
                          a.data() + ins.size(), (int)reqs.size(), r.data()),
            MXC_OK)
      << name << ": " << mxc_last_error();
  std::vector<Bytes> out;
  for (size_t i = ins.size(); i < a.size(); ++i) {
    Bytes o = base;
    EXPECT_EQ(mxc_ndarray_copy_to_host(a[i], o.data(), o.size()), MXC_OK);
    out.push_back(o);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return out;
}

// Operands: wide values, multiples of 0.5, zeros (the divisors of div
// and mod), equal pairs (ties of the comparisons, maximum and minimum),
// NaN and infinities.
Vec Operand(int dt, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  Vec v(2048);
  for (size_t i = 0; i < v.size(); ++i) {
    float x = u(*g);
    v[i] = i % 5 == 0 ? std::round(x * 2) / 2 : i % 5 == 1 ? std::round(x) : x;
  }
  const float special[] = {0.f, -0.f, NAN, INFINITY, -INFINITY, 1.f, -1.f};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) {
    v[i * 11] = special[i];
  }
  return mxct::RoundTo(dt, v);
}

template <class T>
std::vector<T> As(const Bytes &b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

template <class T>
Bytes Of(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Scalar forms with scalar s: forward (rev: f(s, x)) and, when grad,
// the backward (ograd, data).
template <class B, int DT>
void CheckScalar(const std::string &op, bool rev, bool grad, double s) {
  typedef MxcElem<DT> E;
  typedef typename E::T T;
  std::mt19937 g(29);
  Bytes x = mxct::ToBytes(DT, Operand(DT, &g));
  Bytes og = mxct::ToBytes(DT, Operand(DT, &g));
  Bytes base = mxct::ToBytes(DT, Operand(DT, &g));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", s);
  float sv = mxc_bin::scalar_of<DT>(s);
  std::vector<T> tx = As<T>(x), tg = As<T>(og);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    int add = req == MXC_REQ_ADD;
    std::vector<T> f = As<T>(base), b = As<T>(base);
    for (size_t i = 0; i < f.size(); ++i) {
      float a = E::load(tx[i]), o = E::load(tg[i]);
      f[i] = rev ? mxc_bin::fwd_elem<B, DT>(sv, a, f[i], add)
                 : mxc_bin::fwd_elem<B, DT>(a, sv, f[i], add);
      b[i] = rev ? mxc_bin::grad_b<B, DT>(o, sv, a, b[i], add)
                 : mxc_bin::grad_a<B, DT>(o, a, sv, b[i], add);
    }
    std::string what = op + " scalar " + buf + " " + mxct::DtypeName(DT) +
                       " req " + std::to_string(req);
    mxct::ExpectSameElems(what, DT, Of(f),
                          CpuRun(op, DT, {buf}, {x}, base, {req})[0]);
    if (!grad) continue;
    mxct::ExpectSameElems(
        "_backward_" + what, DT, Of(b),
        CpuRun("_backward_" + op, DT, {buf}, {og, x}, base, {req})[0]);
  }
}

// Same-shape forms: forward and, when grad, both gradients in every pair
// of write modes (WRITE/ADD, and one of them NULL).
template <class B, int DT>
void CheckSame(const std::string &op, bool fwd, bool grad) {
  typedef MxcElem<DT> E;
  typedef typename E::T T;
  std::mt19937 g(30);
  Bytes x = mxct::ToBytes(DT, Operand(DT, &g));
  Vec yv = Operand(DT, &g);
  for (size_t i = 3; i < yv.size(); i += 9) yv[i] = mxct::FromBytes(DT, x)[i];
  Bytes y = mxct::ToBytes(DT, yv);
  Bytes og = mxct::ToBytes(DT, Operand(DT, &g));
  Bytes base = mxct::ToBytes(DT, Operand(DT, &g));
  std::vector<T> tx = As<T>(x), ty = As<T>(y), tg = As<T>(og);
  const int kPairs[][2] = {{MXC_REQ_WRITE, MXC_REQ_ADD},
                           {MXC_REQ_ADD, MXC_REQ_WRITE},
                           {MXC_REQ_NULL, MXC_REQ_WRITE},
                           {MXC_REQ_ADD, MXC_REQ_NULL}};
  for (const auto &p : kPairs) {
    std::vector<T> f = As<T>(base), ga = As<T>(base), gb = As<T>(base);
    for (size_t i = 0; i < f.size(); ++i) {
      float a = E::load(tx[i]), b = E::load(ty[i]), o = E::load(tg[i]);
      f[i] = mxc_bin::fwd_elem<B, DT>(a, b, f[i], p[0] == MXC_REQ_ADD);
      if (p[0]) ga[i] = mxc_bin::grad_a<B, DT>(o, a, b, ga[i], p[0] == 3);
      if (p[1]) gb[i] = mxc_bin::grad_b<B, DT>(o, a, b, gb[i], p[1] == 3);
    }
    std::string what = op + " " + mxct::DtypeName(DT) + " reqs " +
                       std::to_string(p[0]) + "," + std::to_string(p[1]);
    if (fwd && p[0] != MXC_REQ_NULL) {
      mxct::ExpectSameElems(what, DT, Of(f),
                            CpuRun(op, DT, {}, {x, y}, base, {p[0]})[0]);
    }
    if (!grad) continue;
    std::vector<Bytes> cpu = CpuRun("_backward_" + op, DT, {}, {og, x, y},
                                    base, {p[0], p[1]});
    mxct::ExpectSameElems("_backward_" + what + " dlhs", DT, Of(ga), cpu[0]);
    mxct::ExpectSameElems("_backward_" + what + " drhs", DT, Of(gb), cpu[1]);
  }
}

template <class B>
void CheckOp(const char *name, const char *stem, int flags) {
  bool grad = flags & MXC__BIN_GRAD, rev = flags & MXC__BIN_REV;
  std::string sc = std::string("_") + stem + "_scalar";
  std::string rsc = std::string("_r") + stem + "_scalar";
  for (double s : {2.5, -1.5, 0.0, 0.3, 3.0}) {
    CheckScalar<B, MXC_DTYPE_FLOAT32>(sc, false, grad, s);
    CheckScalar<B, MXC_DTYPE_FLOAT16>(sc, false, grad, s);
    CheckScalar<B, MXC_DTYPE_BFLOAT16>(sc, false, grad, s);
    if (!rev) continue;
    CheckScalar<B, MXC_DTYPE_FLOAT32>(rsc, true, grad, s);
    CheckScalar<B, MXC_DTYPE_FLOAT16>(rsc, true, grad, s);
    CheckScalar<B, MXC_DTYPE_BFLOAT16>(rsc, true, grad, s);
  }
  CheckSame<B, MXC_DTYPE_FLOAT32>(name, true, grad);
  CheckSame<B, MXC_DTYPE_FLOAT16>(name, true, grad);
  CheckSame<B, MXC_DTYPE_BFLOAT16>(name, true, grad);
}

// clip and _backward_clip with bounds (lo, hi): the parameters from the
// operator's parser read through scalar_hd.h's mirror.
template <int DT>
void CheckClip(const char *lo, const char *hi) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(32);
  Vec xv = Operand(DT, &g);
  xv[5] = (float)std::atof(lo), xv[6] = (float)std::atof(hi);  // bounds hit
  Bytes x = mxct::ToBytes(DT, xv);
  Bytes og = mxct::ToBytes(DT, Operand(DT, &g));
  Bytes base = mxct::ToBytes(DT, Operand(DT, &g));
  const char *k[2] = {"a_min", "a_max"}, *v[2] = {lo, hi};
  void *param = nullptr;
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("clip"), k, v, 2, &param),
            MXC_OK);
  mxc_bin::ClipParam p = *(const mxc_bin::ClipParam *)param;
  mxc__free(param);
  std::vector<T> tx = As<T>(x), tg = As<T>(og);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    int add = req == MXC_REQ_ADD;
    std::vector<T> f = As<T>(base), b = As<T>(base);
    for (size_t i = 0; i < f.size(); ++i) {
      f[i] = mxc_bin::clip_elem<DT>(tx[i], f[i], (float)p.a_min,
                                    (float)p.a_max, add);
      b[i] = mxc_bin::clip_grad_elem<DT>(tg[i], tx[i], b[i], p.a_min, p.a_max,
                                         add);
    }
    std::string what = std::string("clip ") + lo + " " + hi + " " +
                       mxct::DtypeName(DT) + " req " + std::to_string(req);
    std::vector<std::string> kv;  // CpuRun passes one "scalar" key: not here
    mxc_op op = nullptr, bop = nullptr;
    ASSERT_EQ(mxc_op_find("clip", &op), MXC_OK);
    ASSERT_EQ(mxc_op_find("_backward_clip", &bop), MXC_OK);
    int64_t n = (int64_t)tx.size();
    auto run = [&](mxc_op o, const std::vector<Bytes> &ins) {
      std::vector<mxc_ndarray> a;
      for (size_t i = 0; i <= ins.size(); ++i) {
        mxc_ndarray h = nullptr;
        EXPECT_EQ(mxc_ndarray_create(&n, 1, DT, MXC_DEVICE_CPU, 0, 0, &h),
                  MXC_OK);
        const Bytes &bb = i < ins.size() ? ins[i] : base;
        EXPECT_EQ(mxc_ndarray_copy_from_host(h, bb.data(), bb.size()),
                  MXC_OK);
        a.push_back(h);
      }
      int r = req;
      EXPECT_EQ(mxc_op_invoke(o, k, v, 2, a.data(), (int)ins.size(),
                              &a.back(), 1, &r),
                MXC_OK)
          << mxc_last_error();
      Bytes out = base;
      EXPECT_EQ(mxc_ndarray_copy_to_host(a.back(), out.data(), out.size()),
                MXC_OK);
      for (mxc_ndarray h : a) mxc_ndarray_free(h);
      return out;
    };
    mxct::ExpectSameElems(what, DT, Of(f), run(op, {x}));
    mxct::ExpectSameElems("_backward_" + what, DT, Of(b), run(bop, {og, x}));
  }
}

}  // namespace bin_host
}  // namespace

// LeakyReLU and its gradient for leaky, elu, selu and gelu (float32, the
// only dtype of the operator), write and add, bitwise: scalar_hd.h's
// functions on the host against the CPU, parameters through the mirror.
TEST(CudaBinary, LeakyReluMatchesTheCpu) {
  std::mt19937 g(37);
  Dims d = {4096};
  Vec x = Random(d, &g), og = Random(d, &g), base = Random(d, &g);
  for (size_t i = 0; i < 40; ++i) x[i] = (float)i * 0.25f - 5.f;
  x[40] = 0.f, x[41] = -0.f, x[42] = NAN, x[43] = -30.f;
  for (const char *t : {"leaky", "elu", "selu", "gelu"}) {
    const char *k[2] = {"act_type", "slope"}, *v[2] = {t, "0.3"};
    void *param = nullptr;
    ASSERT_EQ(mxc__op_parse_params(mxc__op_find("LeakyReLU"), k, v, 2,
                                   &param),
              MXC_OK);
    mxc_bin::LeakyParam p = *(const mxc_bin::LeakyParam *)param;
    mxc__free(param);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      int add = req == MXC_REQ_ADD;
      mxc_op op = nullptr, bop = nullptr;
      ASSERT_EQ(mxc_op_find("LeakyReLU", &op), MXC_OK);
      ASSERT_EQ(mxc_op_find("_backward_LeakyReLU", &bop), MXC_OK);
      mxc_ndarray in[3] = {mxct::Cpu(d, x), nullptr, nullptr};
      mxc_ndarray out = mxct::Cpu(d, base);
      int r = req;
      ASSERT_EQ(mxc_op_invoke(op, k, v, 2, in, 1, &out, 1, &r), MXC_OK)
          << mxc_last_error();
      Vec y(x.size()), host = base, cpu(x.size());
      ASSERT_EQ(mxc_ndarray_copy_to_host(out, cpu.data(), cpu.size() * 4),
                MXC_OK);
      for (size_t i = 0; i < x.size(); ++i) {
        host[i] = mxc_bin::leaky_elem(p.act_type, p.slope, x[i], host[i], add);
        y[i] = mxc_bin::leaky_elem(p.act_type, p.slope, x[i], 0.f, 0);
      }
      EXPECT_TRUE(Same(host, cpu)) << "LeakyReLU " << t << " req " << req;
      mxc_ndarray bin[3] = {mxct::Cpu(d, og), in[0], mxct::Cpu(d, y)};
      mxc_ndarray bout = mxct::Cpu(d, base);
      ASSERT_EQ(mxc_op_invoke(bop, k, v, 2, bin, 3, &bout, 1, &r), MXC_OK)
          << mxc_last_error();
      ASSERT_EQ(mxc_ndarray_copy_to_host(bout, cpu.data(), cpu.size() * 4),
                MXC_OK);
      host = base;
      for (size_t i = 0; i < x.size(); ++i) {
        host[i] = mxc_bin::leaky_grad_elem(p.act_type, p.slope, og[i], x[i],
                                           host[i], add);
      }
      EXPECT_TRUE(Same(host, cpu)) << "_backward_LeakyReLU " << t << " req "
                                   << req;
      for (mxc_ndarray a : {in[0], out, bin[0], bin[2], bout}) {
        mxc_ndarray_free(a);
      }
    }
  }
}

namespace {

// One forward operator with parameters kv (1 input) or its _backward_
// (ograd, data) on the CPU, float32, from base in mode req.
Vec RunParamOp(const std::string &name, const std::vector<const char *> &k,
               const std::vector<const char *> &v, const std::vector<Vec> &ins,
               const Vec &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << name;
  Dims d = {(int64_t)base.size()};
  std::vector<mxc_ndarray> in;
  for (const Vec &x : ins) in.push_back(mxct::Cpu(d, x));
  mxc_ndarray out = mxct::Cpu(d, base);
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                          (int)in.size(), &out, 1, &req),
            MXC_OK)
      << name << ": " << mxc_last_error();
  Vec r(base.size());
  EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  mxc_ndarray_free(out);
  return r;
}

// The operator's parsed parameters as the mirror struct P.
template <class P>
P ParsedParams(const char *op, const std::vector<const char *> &k,
               const std::vector<const char *> &v) {
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(op), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK);
  P p = *(const P *)param;
  mxc__free(param);
  return p;
}

}  // namespace

// hard_sigmoid and quadratic with their gradients (float32), write and
// add, bitwise: scalar_hd.h's element functions on the host against the
// CPU operators, parameters through the mirrors.
TEST(CudaBinary, HardSigmoidAndQuadraticMatchTheCpu) {
  std::mt19937 g(38);
  Dims d = {4096};
  Vec x = Random(d, &g), og = Random(d, &g), base = Random(d, &g);
  for (size_t i = 0; i < 40; ++i) x[i] = (float)i * 0.25f - 5.f;  // knees
  for (auto ab : {std::make_pair("0.2", "0.5"), std::make_pair("-1.5", "0.25")}) {
    std::vector<const char *> k = {"alpha", "beta"}, v = {ab.first, ab.second};
    auto p = ParsedParams<mxc_bin::HsParam>("hard_sigmoid", k, v);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      Vec f = base, b = base;
      for (size_t i = 0; i < x.size(); ++i) {
        f[i] = mxc_bin::hs_elem(p.alpha, p.beta, x[i], f[i], req == MXC_REQ_ADD);
        b[i] = mxc_bin::hs_grad_elem(p.alpha, p.beta, og[i], x[i], b[i],
                                     req == MXC_REQ_ADD);
      }
      EXPECT_TRUE(Same(f, RunParamOp("hard_sigmoid", k, v, {x}, base, req)))
          << "hard_sigmoid " << ab.first << " req " << req;
      EXPECT_TRUE(Same(b, RunParamOp("_backward_hard_sigmoid", k, v, {og, x},
                                     base, req)))
          << "_backward_hard_sigmoid " << ab.first << " req " << req;
    }
  }
  std::vector<const char *> k = {"a", "b", "c"}, v = {"0.3", "-1.7", "2.1"};
  auto q = ParsedParams<mxc_bin::QuadParam>("quadratic", k, v);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    Vec f = base, b = base;
    for (size_t i = 0; i < x.size(); ++i) {
      f[i] = mxc_bin::quad_elem(q, x[i], f[i], req == MXC_REQ_ADD);
      b[i] = mxc_bin::quad_grad_elem(q, og[i], x[i], b[i], req == MXC_REQ_ADD);
    }
    EXPECT_TRUE(Same(f, RunParamOp("quadratic", k, v, {x}, base, req)))
        << "quadratic req " << req;
    EXPECT_TRUE(
        Same(b, RunParamOp("_backward_quadratic", k, v, {og, x}, base, req)))
        << "_backward_quadratic req " << req;
  }
  // The comparison can fail: the coefficients' order swapped.
  mxc_bin::QuadParam w = {q.b, q.a, q.c};
  Vec f = base;
  for (size_t i = 0; i < x.size(); ++i) f[i] = mxc_bin::quad_elem(w, x[i], 0, 0);
  EXPECT_FALSE(Same(f, RunParamOp("quadratic", k, v, {x}, base, MXC_REQ_WRITE)));
}

TEST(CudaBinary, ClipMatchesTheCpu) {
  for (auto b : {std::make_pair("-1.5", "2.5"), std::make_pair("0.1", "0.3"),
                 std::make_pair("-inf", "0"), std::make_pair("1", "1")}) {
    bin_host::CheckClip<MXC_DTYPE_FLOAT32>(b.first, b.second);
    bin_host::CheckClip<MXC_DTYPE_FLOAT16>(b.first, b.second);
    bin_host::CheckClip<MXC_DTYPE_BFLOAT16>(b.first, b.second);
  }
}

TEST(CudaBinary, ElementFunctionsMatchTheCpu) {
#define CHECK_BIN(name, stem, f, da, db, flags, doc, ...) \
  bin_host::CheckOp<mxc_bin::B_##name>(#name, #stem, flags);
  MXC__BINARY_OPS(CHECK_BIN)
#undef CHECK_BIN
}

// ---- copy.cu's plan (backends/cuda/copy_plan.h) ----
//
// transpose, swapaxes and flip: the plan made from the parameters as the
// operators' own parser fills them (read through copy_plan.h's mirrors),
// run on the host (out[i] = in[mxc__copy_src(i)], add in float), against
// the CPU operators bitwise, write and add, over 0-d to 4-d shapes, an
// empty one and every axis form (negative, default).

namespace {
namespace copy_host {

struct CopyCase {
  const char *op;
  int kind;
  const char *key, *val;  // key NULL: no parameter
  Dims in, out;
  Dims rhs = {};  // broadcast_like's second input; empty: none
  const char *key2 = nullptr, *val2 = nullptr;
};

const CopyCase kCopyCases[] = {
    {"transpose", MXC__CP_TRANSPOSE, nullptr, nullptr, {3, 5}, {5, 3}},
    {"transpose", MXC__CP_TRANSPOSE, nullptr, nullptr, {2, 3, 4}, {4, 3, 2}},
    {"transpose", MXC__CP_TRANSPOSE, "axes", "(1,0,2)", {2, 3, 4}, {3, 2, 4}},
    {"transpose", MXC__CP_TRANSPOSE, "axes", "(-1,0,1)", {2, 3, 4}, {4, 2, 3}},
    {"transpose", MXC__CP_TRANSPOSE, "axes", "(2,0,3,1)", {2, 3, 4, 5},
     {4, 2, 5, 3}},
    {"transpose", MXC__CP_TRANSPOSE, "axes", "(1,0)", {0, 3}, {3, 0}},
    {"transpose", MXC__CP_TRANSPOSE, nullptr, nullptr, {7}, {7}},
    {"transpose", MXC__CP_TRANSPOSE, nullptr, nullptr, {}, {}},
    {"swapaxes", MXC__CP_SWAPAXES, "dim1", "0", {2, 3, 4}, {2, 3, 4}},
    {"swapaxes", MXC__CP_SWAPAXES, "dim2", "2", {2, 3, 4}, {4, 3, 2}},
    {"SwapAxis", MXC__CP_SWAPAXES, "dim1", "-1", {2, 3, 4}, {4, 3, 2}},
    {"flip", MXC__CP_FLIP, "axis", "(0)", {3, 5}, {3, 5}},
    {"flip", MXC__CP_FLIP, "axis", "(1,2)", {2, 3, 4}, {2, 3, 4}},
    {"flip", MXC__CP_FLIP, "axis", "(-1,0)", {2, 3, 4}, {2, 3, 4}},
    {"reverse", MXC__CP_FLIP, "axis", "(0)", {0, 4}, {0, 4}},
    {"broadcast_to", MXC__CP_BROADCAST, "shape", "(3,4,5)", {3, 1, 5},
     {3, 4, 5}},
    {"broadcast_to", MXC__CP_BROADCAST, "shape", "(2,0,6)", {1, 3, 1},
     {2, 3, 6}},
    {"broadcast_to", MXC__CP_BROADCAST, "shape", "(4,0)", {1, 0}, {4, 0}},
    {"broadcast_axis", MXC__CP_BROADCAST, "axis", "(0,-1)", {1, 3, 1},
     {2, 3, 4}, {}, "size", "(2,4)"},
    {"broadcast_like", MXC__CP_BROADCAST, nullptr, nullptr, {1, 4, 1},
     {3, 4, 2}, {3, 4, 2}},
};

// The CPU operator.
Vec CpuCopy(const CopyCase &c, const Vec &x, const Vec &base, int req) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(c.op, &op), MXC_OK) << c.op;
  mxc_ndarray in[2] = {mxct::Cpu(c.in, x), nullptr};
  mxc_ndarray out = mxct::Cpu(c.out, base);
  int n_in = 1;
  if (!c.rhs.empty()) in[n_in++] = mxct::Cpu(c.rhs, Vec((size_t)Numel(c.rhs)));
  const char *k[2] = {c.key, c.key2}, *v[2] = {c.val, c.val2};
  int nk = c.key2 ? 2 : c.key ? 1 : 0;
  EXPECT_EQ(mxc_op_invoke(op, k, v, nk, in, n_in, &out, 1, &req),
            MXC_OK)
      << c.op << ": " << mxc_last_error();
  Vec r = base;
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(out, r.data(), r.size() * 4), MXC_OK);
  }
  for (int i = 0; i < n_in; ++i) mxc_ndarray_free(in[i]);
  mxc_ndarray_free(out);
  return r;
}

// The plan from the operator's parsed parameters, run on the host.
Vec HostCopy(const CopyCase &c, const Vec &x, const Vec &base, int req) {
  void *param = nullptr;
  const char *k[2] = {c.key, c.key2}, *v[2] = {c.val, c.val2};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(c.op), k, v,
                                 c.key2 ? 2 : c.key ? 1 : 0, &param),
            MXC_OK);
  mxc__gpu_array in = mxct::Arr(c.in), out = mxct::Arr(c.out);
  mxc__copy_plan p;
  char why[256] = "";
  EXPECT_EQ(mxc__copy_plan_make(c.kind, param, &in, &out, &p, why, sizeof why),
            MXC_OK)
      << c.op << ": " << why;
  mxc__free(param);
  Vec r = base;
  for (size_t i = 0; i < r.size(); ++i) {
    float s = x[(size_t)mxc__copy_src(&p, (int64_t)i)];
    r[i] = req == MXC_REQ_ADD ? r[i] + s : s;
  }
  return r;
}

}  // namespace copy_host
}  // namespace

TEST(CudaCopyPlan, MatchesTheCpuBitwise) {
  std::mt19937 g(31);
  for (const copy_host::CopyCase &c : copy_host::kCopyCases) {
    Vec x = Random(c.in, &g), base = Random(c.out, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      EXPECT_TRUE(Same(copy_host::HostCopy(c, x, base, req),
                       copy_host::CpuCopy(c, x, base, req)))
          << c.op << " " << (c.key ? c.key : "") << "=" << (c.val ? c.val : "")
          << " req " << req;
    }
  }
}

// Parameters the CPU refuses, and an output of another shape, are refused
// by the plan with a reason (the kernel then never touches the device).
TEST(CudaCopyPlan, RefusesWhatTheCpuRefuses) {
  mxc__cp_transpose_param t = {};
  t.axes.ndim = 2, t.axes.d[0] = 0, t.axes.d[1] = 0;
  mxc__gpu_array in = mxct::Arr({2, 3}), out = mxct::Arr({3, 2});
  mxc__copy_plan p;
  char why[256] = "";
  EXPECT_EQ(mxc__copy_plan_make(MXC__CP_TRANSPOSE, &t, &in, &out, &p, why,
                                sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("twice"), std::string::npos) << why;
  mxc__cp_swap_param s = {0, 5};
  EXPECT_EQ(mxc__copy_plan_make(MXC__CP_SWAPAXES, &s, &in, &out, &p, why,
                                sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  t.axes.ndim = 0;
  mxc__gpu_array wrong = mxct::Arr({2, 3});
  EXPECT_EQ(mxc__copy_plan_make(MXC__CP_TRANSPOSE, &t, &in, &wrong, &p, why,
                                sizeof why),
            MXC_ERR_SHAPE);
}

// The slices' plan (mxc__copy_plan_slice): forward gathered and backward
// scattered on the host (zeros outside the box unless add), against the
// CPU's slice, slice_axis, slice_like and their _backward_, bitwise:
// None entries, negative indices and steps, clamping, an empty box.

namespace {
namespace slice_host {

using Kv = std::vector<std::pair<std::string, std::string>>;

struct SliceCase {
  const char *op;
  int kind;
  Kv kv;
  Dims data, box;
  Dims like = {};  // slice_like's shape_like
};

const SliceCase kSlices[] = {
    {"slice", MXC__CP_SLICE, {{"begin", "(1,None)"}, {"end", "(3,None)"}},
     {4, 5}, {2, 5}},
    {"slice", MXC__CP_SLICE,
     {{"begin", "(None,4)"}, {"end", "(None,0)"}, {"step", "(1,-2)"}},
     {3, 6}, {3, 2}},
    {"slice", MXC__CP_SLICE,
     {{"begin", "(-3,)"}, {"end", "(None,)"}, {"step", "(2,)"}}, {7, 3},
     {2, 3}},
    {"slice", MXC__CP_SLICE, {{"begin", "(0,0,1)"}, {"end", "(2,3,40)"}},
     {2, 3, 4}, {2, 3, 3}},
    {"slice", MXC__CP_SLICE, {{"begin", "(2,)"}, {"end", "(2,)"}}, {4, 3},
     {0, 3}},
    {"slice_axis", MXC__CP_SLICE_AXIS,
     {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, {3, 5, 2}, {3, 2, 2}},
    {"slice_axis", MXC__CP_SLICE_AXIS,
     {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}}, {4, 6}, {4, 2}},
    {"slice_like", MXC__CP_SLICE_LIKE, {}, {4, 5}, {2, 3}, {2, 3}},
    {"slice_like", MXC__CP_SLICE_LIKE, {{"axes", "(1,)"}}, {4, 5}, {4, 3},
     {9, 3}},
};

// op on the CPU over ins of shapes dims; the output (shape out) starts as
// base.
Vec Cpu(const SliceCase &c, const std::string &op,
        const std::vector<std::pair<Dims, Vec>> &ins, const Dims &out,
        const Vec &base, int req) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(op.c_str(), &h), MXC_OK) << op;
  std::vector<mxc_ndarray> a;
  for (const auto &in : ins) a.push_back(mxct::Cpu(in.first, in.second));
  a.push_back(mxct::Cpu(out, base));
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  EXPECT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)ins.size(), &a.back(), 1, &req),
            MXC_OK)
      << op << ": " << mxc_last_error();
  Vec r = base;
  if (!r.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(a.back(), r.data(), r.size() * 4),
              MXC_OK);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return r;
}

mxc__copy_plan Plan(const SliceCase &c) {
  void *param = nullptr;
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(c.op), k.data(), v.data(),
                                 (int)k.size(), &param),
            MXC_OK);
  mxc__gpu_array data = mxct::Arr(c.data), box = mxct::Arr(c.box);
  mxc__copy_plan p = {};
  char why[256] = "";
  EXPECT_EQ(mxc__copy_plan_slice(c.kind, param, &data, &box, &p, why,
                                 sizeof why),
            MXC_OK)
      << c.op << ": " << why;
  mxc__free(param);
  return p;
}

}  // namespace slice_host
}  // namespace

TEST(CudaCopyPlan, SlicesMatchTheCpuBitwise) {
  std::mt19937 g(33);
  for (const slice_host::SliceCase &c : slice_host::kSlices) {
    mxc__copy_plan p = slice_host::Plan(c);
    Vec x = Random(c.data, &g), og = Random(c.box, &g);
    Vec fbase = Random(c.box, &g), bbase = Random(c.data, &g);
    std::vector<std::pair<Dims, Vec>> fin = {{c.data, x}};
    if (!c.like.empty()) fin.push_back({c.like, Vec((size_t)Numel(c.like))});
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      Vec f = fbase, b = add ? bbase : Vec(bbase.size(), 0.f);
      for (size_t i = 0; i < f.size(); ++i) {
        float s = x[(size_t)mxc__copy_src(&p, (int64_t)i)];
        f[i] = add ? f[i] + s : s;
        float &d = b[(size_t)mxc__copy_src(&p, (int64_t)i)];
        d = add ? d + og[i] : og[i];
      }
      std::string what = std::string(c.op) + " req " + std::to_string(req);
      for (const auto &kv : c.kv) what += " " + kv.first + "=" + kv.second;
      EXPECT_TRUE(Same(f, slice_host::Cpu(c, c.op, fin, c.box, fbase, req)))
          << what;
      EXPECT_TRUE(Same(b, slice_host::Cpu(c, std::string("_backward_") + c.op,
                                          {{c.box, og}, {c.data, x}}, c.data,
                                          bbase, req)))
          << "_backward_" << what;
    }
  }
}

// The joins' and splits' part plans (mxc__copy_plan_part) against the
// CPU's Concat, split and their _backward_, bitwise, write and add: the
// whole assembled from (or cut into) its parts on the host.

namespace {
namespace part_host {

// Runs op on the CPU: inputs ins, outputs of shapes outs starting as
// bases, every output in mode req; the outputs' values.
std::vector<Vec> Cpu(const char *op, const std::vector<const char *> &k,
                     const std::vector<const char *> &v,
                     const std::vector<std::pair<Dims, Vec>> &ins,
                     const std::vector<std::pair<Dims, Vec>> &outs, int req) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(op, &h), MXC_OK) << op;
  std::vector<mxc_ndarray> a;
  for (const auto &x : ins) a.push_back(mxct::Cpu(x.first, x.second));
  for (const auto &x : outs) a.push_back(mxct::Cpu(x.first, x.second));
  std::vector<int> reqs(outs.size(), req);
  EXPECT_EQ(mxc_op_invoke(h, k.data(), v.data(), (int)k.size(), a.data(),
                          (int)ins.size(), a.data() + ins.size(),
                          (int)outs.size(), reqs.data()),
            MXC_OK)
      << op << ": " << mxc_last_error();
  std::vector<Vec> r;
  for (size_t i = 0; i < outs.size(); ++i) {
    Vec o = outs[i].second;
    if (!o.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_to_host(a[ins.size() + i], o.data(),
                                         o.size() * 4),
                MXC_OK);
    }
    r.push_back(o);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return r;
}

// Whole <-> parts along ax on the host: to_whole scatters the parts into
// whole, else gathers each part; add accumulates.
void Host(const Dims &whole_d, int ax, const std::vector<int64_t> &ext,
          Vec *whole, std::vector<Vec> *parts, bool to_whole, bool add) {
  mxc__gpu_array w = mxct::Arr(whole_d);
  int64_t start = 0;
  for (size_t i = 0; i < ext.size(); ++i) {
    mxc__copy_plan p;
    mxc__copy_plan_part(&w, ax, start, ext[i], &p);
    Vec &part = (*parts)[i];
    for (size_t j = 0; j < part.size(); ++j) {
      float &dst = to_whole ? (*whole)[(size_t)mxc__copy_src(&p, (int64_t)j)]
                            : part[j];
      float src = to_whole ? part[j]
                           : (*whole)[(size_t)mxc__copy_src(&p, (int64_t)j)];
      dst = add ? dst + src : src;
    }
    start += ext[i];
  }
}

struct JoinCase {
  int dim;
  std::vector<Dims> parts;
  Dims whole;
};

const JoinCase kJoins[] = {
    {1, {{2, 3}, {2, 1}, {2, 4}}, {2, 8}},
    {0, {{1, 3}, {0, 3}, {2, 3}}, {3, 3}},
    {-1, {{2, 3, 2}, {2, 3, 5}}, {2, 3, 7}},
    {1, {{3, 4, 5}}, {3, 4, 5}},
};

}  // namespace part_host
}  // namespace

TEST(CudaCopyPlan, ConcatMatchesTheCpuBitwise) {
  std::mt19937 g(34);
  for (const part_host::JoinCase &c : part_host::kJoins) {
    int nd = (int)c.whole.size(), ax = c.dim < 0 ? c.dim + nd : c.dim;
    std::string n = std::to_string(c.parts.size()), d = std::to_string(c.dim);
    std::vector<const char *> k = {"num_args", "dim"}, v = {n.c_str(),
                                                            d.c_str()};
    std::vector<Vec> parts;
    std::vector<int64_t> ext;
    std::vector<std::pair<Dims, Vec>> ins, pouts;
    for (const Dims &p : c.parts) {
      parts.push_back(Random(p, &g));
      ext.push_back(p[(size_t)ax]);
      ins.push_back({p, parts.back()});
      pouts.push_back({p, Random(p, &g)});
    }
    Vec wbase = Random(c.whole, &g), og = Random(c.whole, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      Vec w = wbase;
      part_host::Host(c.whole, ax, ext, &w, &parts, true, add);
      EXPECT_TRUE(Same(w, part_host::Cpu("Concat", k, v, ins,
                                         {{c.whole, wbase}}, req)[0]))
          << "Concat dim " << c.dim << " req " << req;
      std::vector<Vec> grads;
      for (const auto &p : pouts) grads.push_back(p.second);
      part_host::Host(c.whole, ax, ext, &og, &grads, false, add);
      std::vector<std::pair<Dims, Vec>> bins = {{c.whole, og}};
      bins.insert(bins.end(), ins.begin(), ins.end());
      std::vector<Vec> cpu =
          part_host::Cpu("_backward_Concat", k, v, bins, pouts, req);
      for (size_t i = 0; i < grads.size(); ++i) {
        EXPECT_TRUE(Same(grads[i], cpu[i]))
            << "_backward_Concat dim " << c.dim << " part " << i << " req "
            << req;
      }
    }
  }
}

TEST(CudaCopyPlan, SplitMatchesTheCpuBitwise) {
  std::mt19937 g(35);
  struct SplitCase {
    int n, axis, squeeze;
    Dims whole, part;
  };
  const SplitCase cases[] = {{3, 1, 0, {2, 6, 2}, {2, 2, 2}},
                             {4, 0, 1, {4, 3}, {3}},
                             {2, -1, 0, {3, 4}, {3, 2}},
                             {1, 0, 0, {5}, {5}}};
  for (const SplitCase &c : cases) {
    int nd = (int)c.whole.size(), ax = c.axis < 0 ? c.axis + nd : c.axis;
    std::string n = std::to_string(c.n), a = std::to_string(c.axis),
                sq = c.squeeze ? "true" : "false";
    std::vector<const char *> k = {"num_outputs", "axis", "squeeze_axis"},
                              v = {n.c_str(), a.c_str(), sq.c_str()};
    std::vector<int64_t> ext((size_t)c.n, c.whole[(size_t)ax] / c.n);
    Vec x = Random(c.whole, &g), wbase = Random(c.whole, &g);
    std::vector<std::pair<Dims, Vec>> outs, ogs;
    for (int i = 0; i < c.n; ++i) {
      outs.push_back({c.part, Random(c.part, &g)});
      ogs.push_back({c.part, Random(c.part, &g)});
    }
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      std::vector<Vec> parts;
      for (const auto &o : outs) parts.push_back(o.second);
      part_host::Host(c.whole, ax, ext, &x, &parts, false, add);
      std::vector<Vec> cpu =
          part_host::Cpu("split", k, v, {{c.whole, x}}, outs, req);
      for (size_t i = 0; i < parts.size(); ++i) {
        EXPECT_TRUE(Same(parts[i], cpu[i]))
            << "split axis " << c.axis << " part " << i << " req " << req;
      }
      std::vector<Vec> og;
      for (const auto &o : ogs) og.push_back(o.second);
      Vec w = wbase;
      part_host::Host(c.whole, ax, ext, &w, &og, true, add);
      EXPECT_TRUE(Same(w, part_host::Cpu("_backward_split", k, v, ogs,
                                         {{c.whole, wbase}}, req)[0]))
          << "_backward_split axis " << c.axis << " req " << req;
    }
  }
}

// stack and _backward_stack: the part plans with extent-1 parts along the
// new axis (copy.cu's run_parts in stack mode), against the CPU bitwise.
TEST(CudaCopyPlan, StackMatchesTheCpuBitwise) {
  std::mt19937 g(36);
  struct StackCase {
    int n, axis;
    Dims part, whole;
  };
  const StackCase cases[] = {{3, 0, {2, 4}, {3, 2, 4}},
                             {2, 1, {2, 4}, {2, 2, 4}},
                             {4, -1, {3, 2}, {3, 2, 4}},
                             {2, 0, {0, 3}, {2, 0, 3}}};
  for (const StackCase &c : cases) {
    int nd = (int)c.whole.size(), ax = c.axis < 0 ? c.axis + nd : c.axis;
    std::string n = std::to_string(c.n), a = std::to_string(c.axis);
    std::vector<const char *> k = {"num_args", "axis"}, v = {n.c_str(),
                                                             a.c_str()};
    std::vector<int64_t> ext((size_t)c.n, 1);
    std::vector<Vec> parts, gbase;
    std::vector<std::pair<Dims, Vec>> ins, gouts;
    for (int i = 0; i < c.n; ++i) {
      parts.push_back(Random(c.part, &g));
      ins.push_back({c.part, parts.back()});
      gbase.push_back(Random(c.part, &g));
      gouts.push_back({c.part, gbase.back()});
    }
    Vec wbase = Random(c.whole, &g), og = Random(c.whole, &g);
    std::vector<const char *> bk = {"num_args", "axis"};
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      Vec w = wbase;
      part_host::Host(c.whole, ax, ext, &w, &parts, true, add);
      EXPECT_TRUE(Same(w, part_host::Cpu("stack", k, v, ins,
                                         {{c.whole, wbase}}, req)[0]))
          << "stack axis " << c.axis << " req " << req;
      std::vector<Vec> grads = gbase;
      part_host::Host(c.whole, ax, ext, &og, &grads, false, add);
      std::vector<Vec> cpu = part_host::Cpu("_backward_stack", bk, v,
                                            {{c.whole, og}}, gouts, req);
      for (size_t i = 0; i < grads.size(); ++i) {
        EXPECT_TRUE(Same(grads[i], cpu[i]))
            << "_backward_stack axis " << c.axis << " part " << i << " req "
            << req;
      }
    }
  }
}

// tile, repeat and their gradients: the plan (mxc__copy_plan_rep over
// ops/shape/rep_box.h's box) made from the operators' parsed parameters
// and run on the host as copy.cu runs it (every (element, copy) written
// once; the gradient's copies summed in double in r order, rounded once),
// against the CPU operators bitwise, write and add.

namespace {
namespace rep_host {

struct RepCase {
  const char *op;
  int kind;
  const char *key, *val, *key2, *val2;  // NULL: no parameter
  Dims data, big;
};

const RepCase kRepCases[] = {
    {"tile", MXC__CP_TILE, "reps", "(2,3)", nullptr, nullptr, {3, 4}, {6, 12}},
    {"tile", MXC__CP_TILE, "reps", "(2,1,3)", nullptr, nullptr, {3, 4},
     {2, 3, 12}},
    {"tile", MXC__CP_TILE, "reps", "(3,)", nullptr, nullptr, {2, 3, 2},
     {2, 3, 6}},
    {"tile", MXC__CP_TILE, "reps", "(2,0)", nullptr, nullptr, {3, 4}, {6, 0}},
    {"tile", MXC__CP_TILE, "reps", "()", nullptr, nullptr, {5}, {5}},
    {"repeat", MXC__CP_REPEAT, "repeats", "3", nullptr, nullptr, {2, 3},
     {18}},
    {"repeat", MXC__CP_REPEAT, "repeats", "2", "axis", "1", {2, 3, 2},
     {2, 6, 2}},
    {"repeat", MXC__CP_REPEAT, "repeats", "4", "axis", "-1", {3, 2}, {3, 8}},
    {"repeat", MXC__CP_REPEAT, "repeats", "0", "axis", "0", {3, 2}, {0, 2}},
};

mxc__rep_plan Plan(const RepCase &c) {
  void *param = nullptr;
  const char *k[2] = {c.key, c.key2}, *v[2] = {c.val, c.val2};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(c.op), k, v, c.key2 ? 2 : 1,
                                 &param),
            MXC_OK);
  mxc__gpu_array data = mxct::Arr(c.data), big = mxct::Arr(c.big);
  mxc__rep_plan p = {};
  char why[256] = "";
  EXPECT_EQ(mxc__copy_plan_rep(c.kind, param, &data, &big, &p, why,
                               sizeof why),
            MXC_OK)
      << c.op << ": " << why;
  mxc__free(param);
  return p;
}

// copy.cu's rep_fwd on the host.
Vec Forward(const mxc__rep_plan &p, const Vec &x, Vec out, bool add) {
  for (int64_t t = 0; t < p.n_data * p.n_rep; ++t) {
    int64_t j = t % p.n_data;
    float &o = out[(size_t)mxc__rep_out(&p, j, t / p.n_data)];
    o = add ? o + x[(size_t)j] : x[(size_t)j];
  }
  return out;
}

// copy.cu's rep_bwd on the host (float32).
Vec Backward(const mxc__rep_plan &p, const Vec &og, Vec grad, bool add) {
  for (int64_t j = 0; j < p.n_data; ++j) {
    double acc = 0;
    for (int64_t r = 0; r < p.n_rep; ++r) {
      acc += og[(size_t)mxc__rep_out(&p, j, r)];
    }
    grad[(size_t)j] = add ? grad[(size_t)j] + (float)acc : (float)acc;
  }
  return grad;
}

}  // namespace rep_host
}  // namespace

TEST(CudaCopyPlan, TileAndRepeatMatchTheCpuBitwise) {
  std::mt19937 g(37);
  for (const rep_host::RepCase &c : rep_host::kRepCases) {
    mxc__rep_plan p = rep_host::Plan(c);
    std::vector<const char *> k = {c.key}, v = {c.val};
    if (c.key2) k.push_back(c.key2), v.push_back(c.val2);
    Vec x = Random(c.data, &g), og = Random(c.big, &g);
    Vec obase = Random(c.big, &g), gbase = Random(c.data, &g);
    std::string bwd = std::string("_backward_") + c.op;
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      EXPECT_TRUE(Same(rep_host::Forward(p, x, obase, add),
                       part_host::Cpu(c.op, k, v, {{c.data, x}},
                                      {{c.big, obase}}, req)[0]))
          << c.op << " " << c.val << " req " << req;
      EXPECT_TRUE(Same(rep_host::Backward(p, og, gbase, add),
                       part_host::Cpu(bwd.c_str(), k, v,
                                      {{c.big, og}, {c.data, x}},
                                      {{c.data, gbase}}, req)[0]))
          << bwd << " " << c.val << " req " << req;
    }
  }
}

// Parameters the CPU refuses and an expanded array of another shape are
// refused with a reason before any device call.
TEST(CudaCopyPlan, TileAndRepeatRefuseWhatTheCpuRefuses) {
  mxc__gpu_array data = mxct::Arr({3, 4}), big = mxct::Arr({6, 12});
  mxc__rep_plan p;
  char why[256] = "";
  mxc__cp_tile_param t = {};
  t.reps.ndim = 2, t.reps.d[0] = 2, t.reps.d[1] = -1;
  EXPECT_EQ(mxc__copy_plan_rep(MXC__CP_TILE, &t, &data, &big, &p, why,
                               sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("negative"), std::string::npos) << why;
  t.reps.d[1] = 2;  // (6, 8), not (6, 12)
  EXPECT_EQ(mxc__copy_plan_rep(MXC__CP_TILE, &t, &data, &big, &p, why,
                               sizeof why),
            MXC_ERR_SHAPE);
  mxc__cp_repeat_param r = {};
  r.repeats = 2, r.axis.has = 1, r.axis.v = 2;
  EXPECT_EQ(mxc__copy_plan_rep(MXC__CP_REPEAT, &r, &data, &big, &p, why,
                               sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("axis"), std::string::npos) << why;
}

// depth_to_space, space_to_depth, diag and their gradients: the plans
// (mxc__copy_plan_ds / _diag over ops/shape/rearrange_map.h) run on the
// host as copy.cu runs them (gather into the output, or scatter into it,
// cleared first unless add where only part of it is written), against the
// CPU operators bitwise, write and add.

namespace {
namespace rearr_host {

// out[i] = src[plan(i)] (gather) or out[plan(i)] = src[i] (scatter, the
// output cleared first when clear), add accumulating.
Vec Move(const mxc__copy_plan &p, const Vec &src, Vec out, bool scatter,
         bool clear, bool add) {
  if (clear && !add) out.assign(out.size(), 0.f);
  size_t n = scatter ? src.size() : out.size();
  for (size_t i = 0; i < n; ++i) {
    size_t o = scatter ? (size_t)mxc__copy_src(&p, (int64_t)i) : i;
    float x = scatter ? src[i] : src[(size_t)mxc__copy_src(&p, (int64_t)i)];
    out[o] = add ? out[o] + x : x;
  }
  return out;
}

struct Case {
  const char *op;
  std::vector<const char *> k, v;
  std::vector<Dims> ins;  // the CPU's inputs (the backward: ograd, data)
  Dims out;
};

// The plan of c and whether the output is scattered into.
mxc__copy_plan Plan(const Case &c, bool *scatter, bool *clear) {
  std::string op = c.op;
  bool bwd = op.rfind("_backward_", 0) == 0;
  std::string fwd = bwd ? op.substr(10) : op;
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(c.op), c.k.data(), c.v.data(),
                                 (int)c.k.size(), &param),
            MXC_OK);
  mxc__gpu_array in = mxct::Arr(c.ins[0]), out = mxct::Arr(c.out);
  mxc__copy_plan p = {};
  char why[256] = "";
  int rc;
  *clear = false;
  if (fwd == "diag") {
    bool one_d = c.ins.back().size() == 1;
    *scatter = *clear = bwd != one_d;
    rc = mxc__copy_plan_diag(param, *scatter ? &out : &in,
                             *scatter ? &in : &out, one_d, &p, why,
                             sizeof why);
  } else {
    bool space_out = (fwd == "depth_to_space") != bwd;
    *scatter = !space_out;
    rc = mxc__copy_plan_ds(((mxc__cp_ds_param *)param)->block_size,
                           space_out ? &out : &in, space_out ? &in : &out,
                           &p, why, sizeof why);
  }
  EXPECT_EQ(rc, MXC_OK) << c.op << ": " << why;
  mxc__free(param);
  return p;
}

const Case kCases[] = {
    {"depth_to_space", {"block_size"}, {"2"}, {{2, 8, 3, 5}}, {2, 2, 6, 10}},
    {"_backward_depth_to_space", {"block_size"}, {"2"}, {{2, 2, 6, 10}},
     {2, 8, 3, 5}},
    {"space_to_depth", {"block_size"}, {"3"}, {{1, 2, 6, 9}}, {1, 18, 2, 3}},
    {"_backward_space_to_depth", {"block_size"}, {"3"}, {{1, 18, 2, 3}},
     {1, 2, 6, 9}},
    {"diag", {"k"}, {"0"}, {{4}}, {4, 4}},
    {"diag", {"k"}, {"-2"}, {{3}}, {5, 5}},
    {"diag", {"k"}, {"1"}, {{3, 5}}, {3}},
    {"diag", {"k", "axis1", "axis2"}, {"-1", "2", "0"}, {{3, 2, 4}}, {2, 3}},
    {"_backward_diag", {"k"}, {"2"}, {{5, 5}, {3}}, {3}},
    {"_backward_diag", {"k", "axis1", "axis2"}, {"-1", "2", "0"},
     {{2, 3}, {3, 2, 4}}, {3, 2, 4}},
    {"_backward_diag", {"k"}, {"1"}, {{3}, {3, 5}}, {3, 5}},
};

}  // namespace rearr_host
}  // namespace

TEST(CudaCopyPlan, RearrangesMatchTheCpuBitwise) {
  std::mt19937 g(38);
  for (const rearr_host::Case &c : rearr_host::kCases) {
    bool scatter = false, clear = false;
    mxc__copy_plan p = rearr_host::Plan(c, &scatter, &clear);
    std::vector<std::pair<Dims, Vec>> ins;
    for (const Dims &d : c.ins) ins.push_back({d, Random(d, &g)});
    Vec base = Random(c.out, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      bool add = req == MXC_REQ_ADD;
      EXPECT_TRUE(Same(rearr_host::Move(p, ins[0].second, base, scatter,
                                        clear, add),
                       part_host::Cpu(c.op, c.k, c.v, ins, {{c.out, base}},
                                      req)[0]))
          << c.op << " " << c.v[0] << " req " << req;
    }
  }
}

// Shapes and parameters the CPU refuses are refused with a reason.
TEST(CudaCopyPlan, RearrangesRefuseWhatTheCpuRefuses) {
  mxc__copy_plan p;
  char why[256] = "";
  mxc__gpu_array space = mxct::Arr({1, 2, 6, 9}), depth = mxct::Arr({1, 8, 3, 4});
  EXPECT_EQ(mxc__copy_plan_ds(4, &space, &depth, &p, why, sizeof why),
            MXC_ERR_SHAPE);  // 9 is no multiple of 4
  EXPECT_EQ(mxc__copy_plan_ds(3, &space, &depth, &p, why, sizeof why),
            MXC_ERR_SHAPE);  // (1, 18, 2, 3) expected
  EXPECT_NE(std::string(why).find("(1, 18, 2, 3)"), std::string::npos) << why;
  mxc__cp_diag_param d = {7, 0, 1};
  mxc__gpu_array m = mxct::Arr({3, 5}), v = mxct::Arr({3});
  EXPECT_EQ(mxc__copy_plan_diag(&d, &m, &v, 0, &p, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("outside"), std::string::npos) << why;
  d.k = 0, d.axis2 = -2;  // the same axis twice
  EXPECT_EQ(mxc__copy_plan_diag(&d, &m, &v, 0, &p, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  d.axis2 = 1;  // the diagonal has 3 elements, not 4
  mxc__gpu_array v4 = mxct::Arr({4});
  EXPECT_EQ(mxc__copy_plan_diag(&d, &m, &v4, 0, &p, why, sizeof why),
            MXC_ERR_SHAPE);
}

// where and _backward_where's element functions (index_hd.h) on the host
// against the CPU, bitwise, in the three dtypes (condition float32 or of
// the data's dtype), the condition of x's shape and 1-D over rows, with
// zeros of both signs and NaN in the condition and -0 in the gradient.

namespace {
namespace where_host {

using Bytes = std::vector<uint8_t>;

// CPU op over byte arrays (dtypes per array); outputs start as outs.
std::vector<Bytes> Cpu(const char *op,
                       const std::vector<std::pair<Dims, int>> &in_d,
                       const std::vector<Bytes> &ins,
                       const std::vector<std::pair<Dims, int>> &out_d,
                       const std::vector<Bytes> &outs,
                       const std::vector<int> &reqs,
                       const std::vector<const char *> &keys = {},
                       const std::vector<const char *> &vals = {}) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(op, &h), MXC_OK);
  std::vector<mxc_ndarray> a;
  auto make = [&a](const std::pair<Dims, int> &d, const Bytes &b) {
    mxc_ndarray x = nullptr;
    EXPECT_EQ(mxc_ndarray_create(d.first.data(), (int)d.first.size(),
                                 d.second, MXC_DEVICE_CPU, 0, 0, &x),
              MXC_OK);
    if (!b.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_from_host(x, b.data(), b.size()), MXC_OK);
    }
    a.push_back(x);
  };
  for (size_t i = 0; i < ins.size(); ++i) make(in_d[i], ins[i]);
  for (size_t i = 0; i < outs.size(); ++i) make(out_d[i], outs[i]);
  std::vector<int> r = reqs;
  EXPECT_EQ(mxc_op_invoke(h, keys.data(), vals.data(), (int)keys.size(),
                          a.data(), (int)ins.size(), a.data() + ins.size(),
                          (int)outs.size(), r.data()),
            MXC_OK)
      << op << ": " << mxc_last_error();
  std::vector<Bytes> res = outs;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (res[i].empty()) continue;
    EXPECT_EQ(mxc_ndarray_copy_to_host(a[ins.size() + i], res[i].data(),
                                       res[i].size()),
              MXC_OK);
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  return res;
}

template <class T>
std::vector<T> As(const Bytes &b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

template <class T>
Bytes Of(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <int DT, int CT>
void Check(const Dims &xd, const Dims &cd) {
  typedef typename MxcElem<DT>::T T;
  typedef MxcElem<CT> C;
  std::mt19937 g(36);
  int64_t n = Numel(xd), nc = Numel(cd), inner = nc ? n / nc : 1;
  Vec cv = Random(cd, &g);
  const float special[] = {0.f, -0.f, NAN, 0.f};
  for (size_t i = 0; i < cv.size(); i += 3) cv[i] = special[(i / 3) % 4];
  Bytes cond = mxct::ToBytes(CT, cv);
  Vec ogv = Random(xd, &g);
  for (size_t i = 1; i < ogv.size(); i += 5) ogv[i] = -0.f;
  Bytes x = mxct::ToBytes(DT, Random(xd, &g));
  Bytes y = mxct::ToBytes(DT, Random(xd, &g));
  Bytes og = mxct::ToBytes(DT, ogv);
  Bytes base = mxct::ToBytes(DT, Random(xd, &g));
  std::vector<typename C::T> tc = As<typename C::T>(cond);
  std::vector<T> tx = As<T>(x), ty = As<T>(y), tg = As<T>(og);
  const int W = MXC_REQ_WRITE, A = MXC_REQ_ADD, N = MXC_REQ_NULL;
  for (const auto &m : {std::make_pair(W, A), std::make_pair(A, W),
                        std::make_pair(N, A)}) {
    std::vector<T> f = As<T>(base), dx = As<T>(base), dy = As<T>(base);
    for (int64_t i = 0; i < n; ++i) {
      bool c = C::load(tc[(size_t)(i / inner)]) != 0.f;
      f[i] = mxc_idx::where_elem<DT>(c, tx[i], ty[i], f[i], m.first == A);
      if (m.first) {
        dx[i] = mxc_idx::where_grad_elem<DT>(c, tg[i], dx[i], m.first == A);
      }
      if (m.second) {
        dy[i] = mxc_idx::where_grad_elem<DT>(!c, tg[i], dy[i], m.second == A);
      }
    }
    std::string what = std::string(mxct::DtypeName(DT)) + " cond " +
                       mxct::DtypeName(CT) + " " + std::to_string(nc) +
                       " modes " + std::to_string(m.first) + "," +
                       std::to_string(m.second);
    if (m.first) {
      mxct::ExpectSameElems(
          "where " + what, DT, Of(f),
          Cpu("where", {{cd, CT}, {xd, DT}, {xd, DT}}, {cond, x, y},
              {{xd, DT}}, {base}, {m.first})[0]);
    }
    std::vector<Bytes> cpu =
        Cpu("_backward_where", {{xd, DT}, {cd, CT}}, {og, cond},
            {{xd, DT}, {xd, DT}}, {base, base}, {m.first, m.second});
    if (m.first) mxct::ExpectSameElems("dx " + what, DT, Of(dx), cpu[0]);
    if (m.second) mxct::ExpectSameElems("dy " + what, DT, Of(dy), cpu[1]);
  }
}

}  // namespace where_host
}  // namespace

// The fills' element (index_hd.h's fill_elem) against the CPU's _full,
// zeros_like and ones_like, write and add, in the three dtypes, values
// that round differently to float and to the half types.
template <int DT>
void CheckFill() {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(38);
  Dims d = {1000};
  Vec bv = mxct::RoundTo(DT, Random(d, &g));
  bv[0] = -0.f, bv[1] = NAN, bv[2] = 65504.f;
  where_host::Bytes base = mxct::ToBytes(DT, bv);
  std::vector<T> tb = where_host::As<T>(base);
  for (const char *val : {"0.1", "1", "0", "-2.5", "1e6", "3.00000001"}) {
    std::string shape = "(1000,)", dt = mxct::DtypeName(DT);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::vector<T> host = tb;
      for (T &h : host) h = mxc_idx::fill_elem<DT>(std::atof(val), h,
                                                     req == MXC_REQ_ADD);
      mxc_op op = nullptr;
      ASSERT_EQ(mxc_op_find("_full", &op), MXC_OK);
      const char *k[3] = {"shape", "dtype", "value"},
                 *v[3] = {shape.c_str(), dt.c_str(), val};
      int64_t n = 1000;
      mxc_ndarray out = nullptr;
      ASSERT_EQ(mxc_ndarray_create(&n, 1, DT, MXC_DEVICE_CPU, 0, 0, &out),
                MXC_OK);
      ASSERT_EQ(mxc_ndarray_copy_from_host(out, base.data(), base.size()),
                MXC_OK);
      int r = req;
      ASSERT_EQ(mxc_op_invoke(op, k, v, 3, nullptr, 0, &out, 1, &r), MXC_OK)
          << mxc_last_error();
      where_host::Bytes cpu = base;
      ASSERT_EQ(mxc_ndarray_copy_to_host(out, cpu.data(), cpu.size()),
                MXC_OK);
      mxc_ndarray_free(out);
      mxct::ExpectSameElems(std::string("_full ") + val + " " + dt + " req " +
                                std::to_string(req),
                            DT, where_host::Of(host), cpu);
    }
  }
}

// Embedding's element functions (index_hd.h) against the CPU: indices
// out of range, negative, fractional and NaN (float32) and int32 ones;
// float32 and float16 weights forward, float32 backward; write and add.
template <int DT>
void CheckEmbedding(int idx_dt) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(39);
  const int64_t n = 7, d = 5;
  Vec iv = {0, 3, 6, 9, -2, 2.7f, NAN, 1, 1, 6.5f, 4};
  if (idx_dt == MXC_DTYPE_INT32) iv[6] = 5;  // no NaN among integers
  Dims id = {(int64_t)iv.size()}, wd = {n, d}, od = {id[0], d};
  where_host::Bytes idx;
  if (idx_dt == MXC_DTYPE_INT32) {
    std::vector<int32_t> ii;
    for (float f : iv) ii.push_back((int32_t)f);
    idx = where_host::Of(ii);
  } else {
    idx = mxct::ToBytes(MXC_DTYPE_FLOAT32, iv);
  }
  where_host::Bytes w = mxct::ToBytes(DT, Random(wd, &g));
  where_host::Bytes base = mxct::ToBytes(DT, Random(od, &g));
  std::vector<T> tw = where_host::As<T>(w);
  std::string nn = std::to_string(n), dd = std::to_string(d),
              dts = mxct::DtypeName(DT);
  std::vector<const char *> k = {"input_dim", "output_dim", "dtype"},
                            v = {nn.c_str(), dd.c_str(), dts.c_str()};
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::vector<T> host = where_host::As<T>(base);
    for (int64_t i = 0; i < (int64_t)host.size(); ++i) {
      int64_t kk = mxc_idx::clip_index(
          mxc_idx::index_at(idx.data(), idx_dt, i / d), n);
      host[i] = mxc_idx::emb_elem<DT>(tw[kk * d + i % d], host[i],
                                      req == MXC_REQ_ADD);
    }
    std::vector<where_host::Bytes> cpu =
        where_host::Cpu("Embedding", {{id, idx_dt}, {wd, DT}}, {idx, w},
                        {{od, DT}}, {base}, {req}, k, v);
    mxct::ExpectSameElems("Embedding " + dts + " req " + std::to_string(req),
                          DT, where_host::Of(host), cpu[0]);
    if (DT != MXC_DTYPE_FLOAT32) continue;
    Vec og = Random(od, &g), dw = Random(wd, &g);
    Vec dwb = dw;
    for (int64_t j = 0; j < d; ++j) {
      mxc_idx::emb_grad_column(og.data(), idx.data(), idx_dt, id[0], d, n,
                               dw.data(), j, req == MXC_REQ_ADD);
    }
    std::vector<where_host::Bytes> bcpu = where_host::Cpu(
        "_backward_Embedding", {{od, DT}, {id, idx_dt}},
        {mxct::ToBytes(DT, og), idx}, {{wd, DT}}, {mxct::ToBytes(DT, dwb)},
        {req}, k, v);
    mxct::ExpectSameElems("_backward_Embedding req " + std::to_string(req),
                          DT, mxct::ToBytes(DT, dw), bcpu[0]);
  }
}

// take and _backward_take (index_hd.h's take_geom, take_src,
// take_grad_column) against the CPU: every axis, clip and wrap with
// out-of-range, negative and fractional indices, float32 and int32
// indices, write and add, bitwise.
template <int DT>
void CheckTake(int idx_dt, const char *mode, int64_t axis) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(47);
  Vec iv = {0, 2, 7, -1, -6, 3.9f};
  Dims dd = {3, 4, 5}, id = {2, 3};
  where_host::Bytes idx;
  if (idx_dt == MXC_DTYPE_INT32) {
    std::vector<int32_t> ii;
    for (float f : iv) ii.push_back((int32_t)f);
    idx = where_host::Of(ii);
  } else {
    idx = mxct::ToBytes(MXC_DTYPE_FLOAT32, iv);
  }
  int ax = (int)(axis < 0 ? axis + 3 : axis);
  Dims od;
  for (int i = 0; i < ax; ++i) od.push_back(dd[i]);
  od.insert(od.end(), id.begin(), id.end());
  for (int i = ax + 1; i < 3; ++i) od.push_back(dd[i]);
  std::string as = std::to_string(axis), what = std::string("take ") + mode +
                                                  " axis " + as + " " +
                                                  mxct::DtypeName(DT);
  std::vector<const char *> k = {"axis", "mode"}, v = {as.c_str(), mode};
  mxc_idx::TakeParam p = {axis, std::string(mode) == "wrap" ? 1 : 0};
  mxc_idx::TakeGeom geo;
  ASSERT_EQ(mxc_idx::take_geom(dd.data(), 3, (int64_t)iv.size(), p, &geo), 0);
  where_host::Bytes data = mxct::ToBytes(DT, Random(dd, &g));
  where_host::Bytes base = mxct::ToBytes(DT, Random(od, &g));
  std::vector<T> td = where_host::As<T>(data);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::vector<T> host = where_host::As<T>(base);
    for (int64_t i = 0; i < (int64_t)host.size(); ++i) {
      T x = td[mxc_idx::take_src(geo, idx.data(), idx_dt, i)];
      host[i] = req == MXC_REQ_ADD ? mxc_idx::add<DT>(host[i], x) : x;
    }
    std::vector<where_host::Bytes> cpu =
        where_host::Cpu("take", {{dd, DT}, {id, idx_dt}}, {data, idx},
                        {{od, DT}}, {base}, {req}, k, v);
    mxct::ExpectSameElems(what + " req " + std::to_string(req), DT,
                          where_host::Of(host), cpu[0]);
    if (DT != MXC_DTYPE_FLOAT32) continue;
    Vec og = Random(od, &g), dx = Random(dd, &g), dxb = dx;
    for (int64_t c = 0; c < geo.outer * geo.inner; ++c) {
      mxc_idx::take_grad_column(geo, og.data(), idx.data(), idx_dt, dx.data(),
                                c, req == MXC_REQ_ADD);
    }
    std::vector<where_host::Bytes> bcpu = where_host::Cpu(
        "_backward_take", {{od, DT}, {dd, DT}, {id, idx_dt}},
        {mxct::ToBytes(DT, og), data, idx}, {{dd, DT}},
        {mxct::ToBytes(DT, dxb)}, {req}, k, v);
    mxct::ExpectSameElems("_backward_" + what + " req " + std::to_string(req),
                          DT, mxct::ToBytes(DT, dx), bcpu[0]);
  }
}

TEST(CudaWhere, TakeMatchesTheCpu) {
  for (int64_t axis : {0, 1, -1}) {
    for (const char *mode : {"clip", "wrap"}) {
      CheckTake<MXC_DTYPE_FLOAT32>(MXC_DTYPE_FLOAT32, mode, axis);
      CheckTake<MXC_DTYPE_FLOAT32>(MXC_DTYPE_INT32, mode, axis);
    }
  }
  CheckTake<MXC_DTYPE_FLOAT16>(MXC_DTYPE_INT32, "wrap", 1);
  CheckTake<MXC_DTYPE_BFLOAT16>(MXC_DTYPE_FLOAT32, "clip", 2);
}

// raise: the mapping refuses what the CPU refuses (-n..n-1 accepted).
TEST(CudaWhere, TakeModesAreTheCpus) {
  EXPECT_EQ(mxc__idx_fix(-4, 4, MXC__IDX_RAISE), 0);
  EXPECT_EQ(mxc__idx_fix(-5, 4, MXC__IDX_RAISE), -1);
  EXPECT_EQ(mxc__idx_fix(4, 4, MXC__IDX_RAISE), -1);
  EXPECT_EQ(mxc__idx_fix(-5, 4, MXC__IDX_WRAP), 3);
  EXPECT_EQ(mxc__idx_fix(-5, 4, MXC__IDX_CLIP), 0);
  // take_src follows the mode it is given: -1 is the last element under
  // wrap, the first under clip.
  mxc_idx::TakeGeom geo;
  Dims d = {3};
  Vec idx = {-1};
  for (int mode : {MXC__IDX_CLIP, MXC__IDX_WRAP}) {
    mxc_idx::TakeParam p = {0, mode};
    ASSERT_EQ(mxc_idx::take_geom(d.data(), 1, 1, p, &geo), 0);
    EXPECT_EQ(mxc_idx::take_src(geo, idx.data(), MXC_DTYPE_FLOAT32, 0),
              mode == MXC__IDX_WRAP ? 2 : 0);
  }
}

// pick and _backward_pick (index_hd.h's pick_src, pick_grad_column)
// against the CPU: every axis, keepdims, clip and wrap with out-of-range,
// negative and fractional indices, write and add, bitwise.
template <int DT>
void CheckPick(const char *mode, int64_t axis, bool keep) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(48);
  Dims dd = {3, 4, 5};
  int ax = (int)(axis < 0 ? axis + 3 : axis);
  Dims id = dd;
  if (keep) {
    id[ax] = 1;
  } else {
    id.erase(id.begin() + ax);
  }
  Vec iv((size_t)Numel(id));
  std::uniform_real_distribution<float> u(-9.f, 9.f);
  for (size_t i = 0; i < iv.size(); ++i) iv[i] = i % 2 ? u(g) : std::trunc(u(g));
  where_host::Bytes idx = mxct::ToBytes(MXC_DTYPE_FLOAT32, iv);
  std::string as = std::to_string(axis), what = std::string("pick ") + mode +
                                                  " axis " + as + " " +
                                                  mxct::DtypeName(DT);
  std::vector<const char *> k = {"axis", "mode", "keepdims"},
                            v = {as.c_str(), mode, keep ? "true" : "false"};
  mxc_idx::TakeParam p = {axis, std::string(mode) == "wrap" ? 1 : 0};
  mxc_idx::TakeGeom geo;
  ASSERT_EQ(mxc_idx::take_geom(dd.data(), 3, 1, p, &geo), 0);
  where_host::Bytes data = mxct::ToBytes(DT, Random(dd, &g));
  where_host::Bytes base = mxct::ToBytes(DT, Random(id, &g));
  std::vector<T> td = where_host::As<T>(data);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::vector<T> host = where_host::As<T>(base);
    for (int64_t i = 0; i < (int64_t)host.size(); ++i) {
      T x = td[mxc_idx::pick_src(geo, idx.data(), MXC_DTYPE_FLOAT32, i)];
      host[i] = req == MXC_REQ_ADD ? mxc_idx::add<DT>(host[i], x) : x;
    }
    std::vector<where_host::Bytes> cpu = where_host::Cpu(
        "pick", {{dd, DT}, {id, MXC_DTYPE_FLOAT32}}, {data, idx}, {{id, DT}},
        {base}, {req}, k, v);
    mxct::ExpectSameElems(what + " req " + std::to_string(req), DT,
                          where_host::Of(host), cpu[0]);
    if (DT != MXC_DTYPE_FLOAT32) continue;
    Vec og = Random(id, &g), dx = Random(dd, &g), dxb = dx;
    for (int64_t c = 0; c < (int64_t)iv.size(); ++c) {
      mxc_idx::pick_grad_column(geo, og.data(), idx.data(), MXC_DTYPE_FLOAT32,
                                dx.data(), c, req == MXC_REQ_ADD);
    }
    std::vector<where_host::Bytes> bcpu = where_host::Cpu(
        "_backward_pick", {{id, DT}, {dd, DT}, {id, MXC_DTYPE_FLOAT32}},
        {mxct::ToBytes(DT, og), data, idx}, {{dd, DT}},
        {mxct::ToBytes(DT, dxb)}, {req}, k, v);
    mxct::ExpectSameElems("_backward_" + what + " req " + std::to_string(req),
                          DT, mxct::ToBytes(DT, dx), bcpu[0]);
  }
}

TEST(CudaWhere, PickMatchesTheCpu) {
  for (int64_t axis : {0, 1, -1}) {
    for (const char *mode : {"clip", "wrap"}) {
      CheckPick<MXC_DTYPE_FLOAT32>(mode, axis, false);
      CheckPick<MXC_DTYPE_FLOAT32>(mode, axis, true);
    }
  }
  CheckPick<MXC_DTYPE_FLOAT16>("wrap", 1, false);
  CheckPick<MXC_DTYPE_BFLOAT16>("clip", 2, true);
}

TEST(CudaWhere, EmbeddingMatchesTheCpu) {
  CheckEmbedding<MXC_DTYPE_FLOAT32>(MXC_DTYPE_FLOAT32);
  CheckEmbedding<MXC_DTYPE_FLOAT32>(MXC_DTYPE_INT32);
  CheckEmbedding<MXC_DTYPE_FLOAT16>(MXC_DTYPE_FLOAT32);
  CheckEmbedding<MXC_DTYPE_BFLOAT16>(MXC_DTYPE_INT32);
}

// one_hot's element (index_int, fill_elem) against the CPU: truncated,
// out-of-range, NaN and huge float indices, int32 ones; write and add.
template <int DT>
void CheckOneHot(int idx_dt) {
  typedef typename MxcElem<DT>::T T;
  std::mt19937 g(40);
  const int64_t depth = 4;
  Vec iv = {0, 2, 5, -1, -0.5f, 2.9f, NAN, 1e30f, 3, 1};
  if (idx_dt == MXC_DTYPE_INT32) iv[6] = 7, iv[7] = -9;
  Dims id = {(int64_t)iv.size()}, od = {id[0], depth};
  where_host::Bytes idx;
  if (idx_dt == MXC_DTYPE_INT32) {
    std::vector<int32_t> ii;
    for (float f : iv) ii.push_back((int32_t)f);
    idx = where_host::Of(ii);
  } else {
    idx = mxct::ToBytes(MXC_DTYPE_FLOAT32, iv);
  }
  where_host::Bytes base = mxct::ToBytes(DT, Random(od, &g));
  std::string dts = mxct::DtypeName(DT);
  std::vector<const char *> k = {"depth", "on_value", "off_value", "dtype"},
                            v = {"4", "2.5", "-0.1", dts.c_str()};
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    std::vector<T> host = where_host::As<T>(base);
    for (int64_t i = 0; i < (int64_t)host.size(); ++i) {
      bool hit = mxc_idx::index_int(idx.data(), idx_dt, i / depth) ==
                 i % depth;
      host[i] = mxc_idx::fill_elem<DT>(hit ? 2.5 : -0.1, host[i],
                                       req == MXC_REQ_ADD);
    }
    std::vector<where_host::Bytes> cpu = where_host::Cpu(
        "one_hot", {{id, idx_dt}}, {idx}, {{od, DT}}, {base}, {req}, k, v);
    mxct::ExpectSameElems("one_hot " + dts + " req " + std::to_string(req),
                          DT, where_host::Of(host), cpu[0]);
  }
}

TEST(CudaWhere, OneHotMatchesTheCpu) {
  CheckOneHot<MXC_DTYPE_FLOAT32>(MXC_DTYPE_FLOAT32);
  CheckOneHot<MXC_DTYPE_FLOAT16>(MXC_DTYPE_FLOAT32);
  CheckOneHot<MXC_DTYPE_BFLOAT16>(MXC_DTYPE_INT32);
}

TEST(CudaWhere, FillsMatchTheCpu) {
  CheckFill<MXC_DTYPE_FLOAT32>();
  CheckFill<MXC_DTYPE_FLOAT16>();
  CheckFill<MXC_DTYPE_BFLOAT16>();
}

TEST(CudaWhere, ElementFunctionsMatchTheCpu) {
  using where_host::Check;
  for (const auto &s : {std::make_pair(Dims{6, 7}, Dims{6, 7}),
                        std::make_pair(Dims{6, 7}, Dims{6}),
                        std::make_pair(Dims{5, 2, 3}, Dims{5}),
                        std::make_pair(Dims{0, 3}, Dims{0})}) {
    Check<MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32>(s.first, s.second);
    Check<MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32>(s.first, s.second);
    Check<MXC_DTYPE_BFLOAT16, MXC_DTYPE_BFLOAT16>(s.first, s.second);
    Check<MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16>(s.first, s.second);
  }
}
