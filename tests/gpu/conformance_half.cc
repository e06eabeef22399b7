// Conformance of the plug-in's float16 / bfloat16 kernels: every operator
// whose table row takes a half dtype (its `supports`) runs on the GPU and
// the CPU with the same inputs in float16 and in bfloat16, write and add
// modes, outputs poisoned first (a half NaN with a payload, which reads
// back as the float poison: half_test_util.h).
//
// Tolerances, per group (the CPU contract, docs/dtypes.md: a half result
// is the float32 or double result rounded once):
// - element-wise and broadcast operators: bitwise (the kernels compute
//   in float and round with half_hd.h, which rounds and treats NaN as
//   core/base/half.h); inputs span float16's subnormals to overflow, with
//   NaN, infinity and exact ties. A NaN matches any NaN: the sign of a
//   NaN an operation makes is the hardware's (x86's default NaN is
//   negative, the GPU's canonical NaN positive, and the GPU does not pass
//   an input NaN's sign through arithmetic); half_hd.h's own NaN rule is
//   host-tested (tests/gpu:test_cuda_bcast_plan);
// - sum and mean: bitwise too: both sides sum in double, and a double sum
//   of at most a few thousand half values is exact in any order (a half
//   has 11 significant bits over an exponent range the 53 bits cover);
//   max, min and nansum alike; prod, nanprod and norm one ulp (double
//   products, and sums of squares, may round, in another order than the
//   CPU's);
// - dot, batch_dot, FullyConnected and their gradients: one ulp of the
//   dtype (blas_cases.h's ExpectNear): cuBLAS accumulates in float32 in
//   another order than the CPU's GEMM, so a result near a rounding
//   boundary may round to the neighbouring half value.
//
// - Activation and _backward_Activation: relu bitwise, the others one ulp
//   of the dtype (the CPU's float32 sigmoid and tanh are approximations a
//   few float ulps from the device's); _backward_add/sub/mul/div bitwise;
// - the reductions' gradients: one ulp of the dtype;
// - _backward_broadcast_add/sub/mul/div: one ulp of the dtype (float
//   partials summed in double in another order than the CPU's);
// - Cast and _backward_Cast between float32, float64, float16 and
//   bfloat16 (cast.cu): their cases of their own (registered below, run by
//   test_gpu_conformance.cc's loop as the table's rows), every pair, write
//   and add, bitwise (a NaN matching any NaN).
//
// Without a GPU the test skips; with the fake plug-in (no half rows) it
// compares nothing and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/blas_cases.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/half_test_util.h"

namespace {

using mxct::BlasCase;
using mxct::Shape;

// The plug-in's row for op, or null.
const mxc__gpu_kernel *RowOf(const std::string &op) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  for (int i = 0; p && i < p->n_kernels; ++i) {
    if (op == p->kernels[i].op) return &p->kernels[i];
  }
  return nullptr;
}

// 1 when the row takes case c with every array of dtype dt.
bool TakesHalf(const BlasCase &c, int dt) {
  const mxc__gpu_kernel *k = RowOf(c.op);
  if (!k || !k->supports) return false;
  std::vector<int> dts(c.in.size() + c.out.size(), dt);
  return k->supports(dts.data(), (int)c.in.size(), (int)c.out.size()) == 1;
}

// Wide-ranging values: float16's subnormals to beyond its range (2^-26 to
// 2^17), both signs, with a NaN, an infinity and a float16 tie.
std::vector<float> Wide(int64_t n, std::mt19937 *g) {
  std::uniform_real_distribution<float> e(-26.f, 17.f);
  std::vector<float> v((size_t)n);
  for (auto &x : v) x = ((*g)() % 2 ? 1.f : -1.f) * std::exp2(e(*g));
  if (v.size() > 3) v[1] = NAN, v[2] = -INFINITY, v[3] = 1.f + 1.f / 2048;
  return v;
}

// Bitwise (bits of the widened values: widening is one-to-one), a NaN
// matching any NaN (above).
void ExpectSameBits(const std::string &what, const std::vector<float> &gpu,
                    const std::vector<float> &cpu) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (mxct::IsPoison(gpu[i])) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    bool both_nan = std::isnan(gpu[i]) && std::isnan(cpu[i]);
    if (std::memcmp(&gpu[i], &cpu[i], 4) != 0 && !both_nan) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i]
                    << " on the GPU, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// One case in dtype dt: every write-mode set, GPU against CPU. bitwise or
// blas_cases.h's one-ulp tolerance. Returns false when the plug-in's row
// does not take the dtype (nothing run).
bool Compare(const BlasCase &c, int dt, bool bitwise, bool wide,
             std::mt19937 *g) {
  if (!TakesHalf(c, dt)) return false;
  SCOPED_TRACE(c.Name() + " " + mxct::DtypeName(dt));
  std::vector<std::vector<float>> x, base;
  for (const auto &s : c.in) {
    x.push_back(wide ? Wide(mxct::Numel(s), g)
                     : mxct::Uniform(mxct::Numel(s), g));
  }
  for (const auto &s : c.out) {
    base.push_back(wide ? Wide(mxct::Numel(s), g)
                        : mxct::Uniform(mxct::Numel(s), g));
  }
  for (const auto &req : mxct::ReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::InvokeOn(c, x, base, req, MXC_DEVICE_CPU, &rc, dt);
    EXPECT_EQ(rc, MXC_OK) << "CPU: " << mxc_last_error();
    if (rc != MXC_OK) return true;
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE) {
        std::fill(init[i].begin(), init[i].end(), mxct::Poison());
      }
    }
    auto gpu = mxct::InvokeOn(c, x, init, req, MXC_DEVICE_GPU, &rc, dt);
    EXPECT_EQ(rc, MXC_OK) << "GPU: " << mxc_last_error();
    if (rc != MXC_OK) return true;
    for (size_t i = 0; i < gpu.size(); ++i) {
      std::string what =
          "output " + std::to_string(i) + " req " + std::to_string(req[i]);
      if (bitwise) {
        ExpectSameBits(what, gpu[i], cpu[i]);
      } else {
        mxct::ExpectNear(what, gpu[i], cpu[i], dt);
      }
    }
  }
  return true;
}

BlasCase Same(const char *op, int n_in, const Shape &s) {
  return {op, {}, std::vector<Shape>((size_t)n_in, s), {s}};
}

BlasCase Red(const char *op, const char *axis, bool keep, const Shape &in,
             const Shape &out) {
  BlasCase c = {op, {{"keepdims", keep ? "true" : "false"}}, {in}, {out}};
  if (axis) c.params.push_back({"axis", axis});
  return c;
}

// The cases, each with its comparison: bitwise and wide-ranging inputs,
// or [-1, 1] inputs (products and sums) and bitwise or one ulp.
struct HalfCase {
  BlasCase c;
  bool bitwise, wide;
};

std::vector<HalfCase> Cases() {
  std::vector<HalfCase> v;
  const Shape shapes[] = {{7}, {3, 5, 2}, {1031}, {0}};
  for (const char *op : {"_copy", "relu", "negative", "abs", "square"}) {
    for (const auto &s : shapes) v.push_back({Same(op, 1, s), true, true});
  }
  for (const char *op : {"add", "sub", "mul", "div"}) {
    for (const auto &s : shapes) v.push_back({Same(op, 2, s), true, true});
  }
  const Shape bc[][3] = {{{3, 4}, {4}, {3, 4}},
                         {{2, 1, 5}, {3, 1}, {2, 3, 5}},
                         {{1}, {2, 3}, {2, 3}},
                         {{4, 1, 3, 1}, {1, 5, 1, 2}, {4, 5, 3, 2}},
                         {{0, 3}, {1, 3}, {0, 3}}};
  for (const char *op :
       {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div"}) {
    for (const auto &s : bc)
      v.push_back({{op, {}, {s[0], s[1]}, {s[2]}}, true, true});
  }
  for (const char *op : {"sum", "mean"}) {
    v.push_back({Red(op, nullptr, false, {3, 4, 5}, {1}), true, false});
    v.push_back({Red(op, "1", false, {3, 40, 5}, {3, 5}), true, false});
    v.push_back({Red(op, "(0, 2)", true, {6, 7, 300}, {1, 7, 1}), true, false});
    v.push_back({Red(op, "-1", false, {2, 2000}, {2}), true, false});
    v.push_back({Red(op, "1", false, {4, 0}, {4}), true, false});
  }
  // The other reductions: max, min and nansum (exact double sums of half
  // values) bitwise; products and norm's sums of squares may round in
  // double, in another order than the CPU's: one ulp.
  for (const char *op : {"max", "min", "prod", "nansum", "nanprod", "norm"}) {
    std::string o = op;
    bool exact = o == "max" || o == "min" || o == "nansum";
    v.push_back({Red(op, nullptr, false, {3, 4, 5}, {1}), exact, false});
    v.push_back({Red(op, "1", false, {3, 40, 5}, {3, 5}), exact, false});
    v.push_back({Red(op, "(0, 2)", true, {6, 7, 30}, {1, 7, 1}), exact, false});
    if (o != "max" && o != "min") {  // no identity for an empty group
      v.push_back({Red(op, "1", false, {4, 0}, {4}), exact, false});
    }
    if (o == "norm") {
      HalfCase l1 = {Red(op, "1", false, {3, 40, 5}, {3, 5}), false, false};
      l1.c.params.push_back({"ord", "1"});
      v.push_back(l1);
    }
  }
  // Activation: relu bitwise; the others within one ulp (the CPU's float32
  // sigmoid and tanh are vectorized approximations, core/op/vmath.h, a few
  // float ulps from the device's; rounded to half they may differ by one).
  for (int bwd = 0; bwd < 2; ++bwd) {
    for (const char *t : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
      bool relu = std::string(t) == "relu";
      for (const auto &s : {Shape{7}, Shape{3, 5, 2}, Shape{1031}, Shape{0}}) {
        BlasCase c = {bwd ? "_backward_Activation" : "Activation",
                      {{"act_type", t}},
                      std::vector<Shape>(bwd ? 3 : 1, s),
                      {s}};
        v.push_back({c, relu, relu});
      }
    }
  }
  // The same-shape binary gradients (ograd, lhs, rhs -> dlhs, drhs):
  // bitwise (float operations in the CPU's order, one rounding each).
  for (const char *op :
       {"_backward_add", "_backward_sub", "_backward_mul", "_backward_div"}) {
    for (const auto &s : {Shape{7}, Shape{1031}, Shape{0}}) {
      v.push_back({{op, {}, {s, s, s}, {s, s}}, true, true});
    }
  }
  // The reductions' gradients (ograd, data[, output] -> d data): double
  // gradients rounded once (one ulp: the same double operations, the
  // slack for prod's statistics combined in another order).
  for (const char *op : {"sum", "mean", "max", "min", "nansum", "norm",
                         "prod", "nanprod"}) {
    std::string o = op;
    bool uses_out = o == "max" || o == "min" || o == "norm";
    for (const char *axis : {"1", "(0, 2)"}) {
      bool one = std::string(axis) == "1";
      Shape data = one ? Shape{3, 40, 5} : Shape{6, 7, 30};
      Shape red = one ? Shape{3, 5} : Shape{7};
      BlasCase c = {"_backward_" + o, {{"axis", axis}}, {red, data}, {data}};
      if (uses_out) c.in.push_back(red);
      v.push_back({c, false, false});
    }
  }
  // The broadcast gradients (ograd, lhs, rhs -> dlhs, drhs in the
  // operands' shapes): float partials summed in double in another order
  // than the CPU's, rounded once: one ulp of the dtype.
  for (const char *op : {"_backward_broadcast_add", "_backward_broadcast_sub",
                         "_backward_broadcast_mul",
                         "_backward_broadcast_div"}) {
    for (const auto &s : bc) {
      v.push_back({{op, {}, {s[2], s[0], s[1]}, {s[0], s[1]}}, false, false});
    }
    Shape big = {8, 64, 7, 7}, bias = {1, 64, 1, 1};
    v.push_back({{op, {}, {big, big, bias}, {big, bias}}, false, false});
  }
  for (const auto &f : mxct::ForwardBlasCases()) {
    v.push_back({f, false, false});
    v.push_back({mxct::BackwardOf(f), false, false});
  }
  return v;
}

// Every case is a valid call on the CPU in both dtypes (every machine), so
// that a GPU run does not spend its minutes on a malformed case (the
// cuBLAS cases: tests/gpu:test_cuda_blas_plan runs them in half).
TEST(GpuConformanceHalf, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(1618);
  const std::string blas_ops = " dot _backward_dot batch_dot "
                               "_backward_batch_dot FullyConnected "
                               "_backward_FullyConnected ";
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    for (const HalfCase &h : Cases()) {
      if (blas_ops.find(" " + h.c.op + " ") != std::string::npos) continue;
      SCOPED_TRACE(h.c.Name() + " " + mxct::DtypeName(dt));
      std::vector<std::vector<float>> x, base;
      for (const auto &s : h.c.in) x.push_back(Wide(mxct::Numel(s), &g));
      for (const auto &s : h.c.out) base.push_back(Wide(mxct::Numel(s), &g));
      for (const auto &req : mxct::ReqSets((int)h.c.out.size())) {
        int rc = 0;
        mxct::InvokeOn(h.c, x, base, req, MXC_DEVICE_CPU, &rc, dt);
        ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
      }
    }
  }
}

TEST(GpuConformanceHalf, HalfKernelsMatchTheCpu) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << mxct::LastError();
  }
  std::mt19937 g(1617);
  const testing::TestResult *r =
      testing::UnitTest::GetInstance()->current_test_info()->result();
  int compared = 0;
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    std::string last;
    int before = r->total_part_count();
    bool ran = false;
    auto report = [&]() {
      if (last.empty() || !ran) return;
      // one line per operator and dtype, for gpu_check's summary
      std::printf("gpu_conformance: %s/%s: %s\n", last.c_str(),
                  mxct::DtypeName(dt),
                  r->total_part_count() == before ? "ok" : "FAILED");
      ++compared;
    };
    for (const HalfCase &h : Cases()) {
      if (h.c.op != last) {
        report();
        last = h.c.op, before = r->total_part_count(), ran = false;
      }
      ran |= Compare(h.c, dt, h.bitwise, h.wide, &g);
    }
    report();
  }
  std::printf(
      "gpu_conformance: %d operator/dtype pairs compared in half "
      "precision\n",
      compared);
  // The real plug-in's rows take half types: comparing none would be a
  // silent pass (the fake plug-in's rows are float32 only).
  const mxc__gpu_kernel *relu = RowOf("relu");
  if (relu && relu->supports) {
    EXPECT_GT(compared, 0);
  }
}

// Cast (or _backward_Cast) between every pair of the floating dtypes,
// GPU against CPU.
void CompareCast(const std::string &op, std::mt19937 *g) {
  for (size_t n : {7, 1031, 0}) {
    std::vector<double> v = mxct::CastValues(n, g),
                        base = mxct::CastValues(n, g);
    for (int src : mxct::FloatDtypes()) {
      for (int dst : mxct::FloatDtypes()) {
        std::vector<uint8_t> x = mxct::CastBytes(src, v);
        std::vector<uint8_t> init = mxct::CastBytes(dst, base);
        for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
          std::string what = op + " " + mxct::DtypeName(src) + " to " +
                             mxct::DtypeName(dst) + " of " +
                             std::to_string(n) + " req " +
                             std::to_string(req);
          int rc = 0;
          auto cpu = mxct::RunCastOn(op, src, dst, x, init, req,
                                     MXC_DEVICE_CPU, &rc);
          ASSERT_EQ(rc, MXC_OK) << what << " CPU: " << mxc_last_error();
          auto start = req == MXC_REQ_ADD ? init : mxct::PoisonBytes(dst, n);
          auto gpu = mxct::RunCastOn(op, src, dst, x, start, req,
                                     MXC_DEVICE_GPU, &rc);
          ASSERT_EQ(rc, MXC_OK) << what << " GPU: " << mxc_last_error();
          mxct::ExpectSameElems(what, dst, gpu, cpu);
        }
      }
    }
  }
}

const mxct::RegisterCase kCastCases[] = {
    {"Cast", [](std::mt19937 *g) { CompareCast("Cast", g); }},
    {"_backward_Cast",
     [](std::mt19937 *g) { CompareCast("_backward_Cast", g); }},
};

}  // namespace
