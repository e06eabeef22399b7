// Conformance cases of the random kernels (backends/cuda/rng.h): for each
// sampler, dtype and parameter set of tests/gpu/rng_cases.h, seed, push a
// prefix draw, draw on the GPU; again on the CPU; compare. The promise
// (docs/gpu.md): the same seed and push order give the same numbers on
// either device.
//
// - _random_uniform and _random_randint: bitwise (integer operations,
//   then correctly rounded IEEE add, multiply and conversion, no FMA).
// - _random_normal and _random_exponential: their double log, sqrt,
//   cos, sin and log1p are the device's (within 1-2 ulps of double) on
//   the GPU and glibc's on the CPU, so each value may differ in its last
//   bits of double: |gpu - cpu| <= 16 eps_double * M, M the magnitude the
//   value is computed at (|loc| + 9 scale for a normal: |z| < 8.6; 40 /
//   lam for an exponential, whose tail ends at 36.7 / lam; plus the
//   output's values), and for float32 outputs one float ulp more (the
//   double rounds to the other neighbour when it lies near a tie). Most
//   values come out bitwise equal: the suite prints how many did not.
//
// Outputs are poisoned before a write (an element never written fails),
// add mode starts from small values; the sizes cover a partial last
// block (2 and 4 values per Philox block) and an empty output.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/rng_cases.h"

namespace {

using mxct::RngCase;
using Bytes = std::vector<uint8_t>;

// Parameters as doubles (the defaults of sample.c where absent).
double Param(const RngCase &c, const char *key, double def) {
  for (const auto &p : c.kv) {
    if (p.first == key) return std::strtod(p.second.c_str(), nullptr);
  }
  return def;
}

bool Exact(const RngCase &c) {
  std::string op = c.op;
  return op == "_random_uniform" || op == "_random_randint";
}

// The magnitude a normal or exponential value is computed at.
double Magnitude(const RngCase &c) {
  if (std::string(c.op) == "_random_normal") {
    return std::fabs(Param(c, "loc", 0)) + 9 * Param(c, "scale", 1);
  }
  return 40 / Param(c, "lam", 1);
}

// Element i as a double (integers for messages only).
double ValueAt(const Bytes &b, int dtype, size_t i) {
  if (dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_INT32) {
    float f;
    int32_t k;
    std::memcpy(&f, &b[i * 4], 4);
    std::memcpy(&k, &b[i * 4], 4);
    return dtype == MXC_DTYPE_INT32 ? k : f;
  }
  double d;
  int64_t k;
  std::memcpy(&d, &b[i * 8], 8);
  std::memcpy(&k, &b[i * 8], 8);
  return dtype == MXC_DTYPE_INT64 ? (double)k : d;
}

// Per operator: values compared and values not bitwise equal (printed at
// the end of a GPU run, for docs/gpu.md's record).
std::map<std::string, std::pair<long, long>> &Tally() {
  static std::map<std::string, std::pair<long, long>> t;
  return t;
}

// Element i of a float output against the CPU's, within the bound above.
bool WithinBound(const RngCase &c, double g, double v, double base) {
  if (std::isnan(g)) return false;
  double tol = 16 * DBL_EPSILON * (Magnitude(c) + std::fabs(v) +
                                   std::fabs(base));
  if (c.dtype == MXC_DTYPE_FLOAT32) {
    tol += FLT_EPSILON * (std::fabs(v) + std::fabs(base));
  }
  return std::fabs(g - v) <= tol;
}

void Expect(const RngCase &c, const std::string &what, const Bytes &gpu,
            const Bytes &cpu, const Bytes &base) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  size_t es = mxct::RngElemSize(c.dtype), n = gpu.size() / es;
  auto &tally = Tally()[c.op];
  for (size_t i = 0; i < n; ++i) {
    uint32_t head;
    std::memcpy(&head, &gpu[i * es], 4);
    if (base.empty() && head == 0x7fc0dead) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    ++tally.first;
    if (std::memcmp(&gpu[i * es], &cpu[i * es], es) == 0) continue;
    ++tally.second;
    double b = base.empty() ? 0 : ValueAt(base, c.dtype, i);
    if (Exact(c) || !WithinBound(c, ValueAt(gpu, c.dtype, i),
                                 ValueAt(cpu, c.dtype, i), b)) {
      ADD_FAILURE() << what << ": element " << i << " differs: "
                    << ValueAt(gpu, c.dtype, i) << " on device, "
                    << ValueAt(cpu, c.dtype, i) << " on the CPU"
                    << (Exact(c) ? " (expected bitwise)" : "");
      return;
    }
  }
}

// A poisoned output of n elements (NaN with a payload no sampler makes in
// float32; its 4-byte pattern repeated for 8-byte types).
Bytes Poisoned(int dtype, int64_t n) {
  Bytes b((size_t)n * mxct::RngElemSize(dtype));
  const uint32_t poison = 0x7fc0dead;
  for (size_t i = 0; i + 4 <= b.size(); i += 4) std::memcpy(&b[i], &poison, 4);
  return b;
}

void CompareOp(const char *op, int dev, std::mt19937 *g) {
  for (const RngCase &c : mxct::RngCases()) {
    if (std::string(c.op) != op) continue;
    auto shapes = mxct::RngShapes();
    shapes.push_back({257, 1031});  // hundreds of CUDA blocks
    for (const auto &shape : shapes) {
      int64_t n = mxct::RngNumel(shape);
      for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
        std::string what = mxct::RngWhat(c, (size_t)n, req);
        Bytes base = req == MXC_REQ_ADD ? mxct::RngBase(c.dtype, n, g)
                                        : Bytes();
        Bytes cpu = req == MXC_REQ_ADD ? base : Poisoned(c.dtype, n);
        Bytes gpu = cpu;
        ASSERT_EQ(mxct::RngDraw(c, MXC_DEVICE_CPU, shape, req, &cpu), MXC_OK)
            << what << " on the CPU: " << mxc_last_error();
        ASSERT_EQ(mxct::RngDraw(c, dev, shape, req, &gpu), MXC_OK)
            << what << " on the device: " << mxc_last_error();
        Expect(c, what, gpu, cpu, base);
      }
    }
  }
}

void PrintTally() {
  for (const auto &t : Tally()) {
    // "gpu_conformance: OP: ..." lines go into gpu_check's summary.
    std::printf("gpu_conformance: %s: %ld values compared, %ld not bitwise "
                "equal\n",
                t.first.c_str(), t.second.first, t.second.second);
  }
}

const char *const kOps[] = {"_random_uniform", "_random_normal",
                            "_random_exponential", "_random_randint"};

const mxct::RegisterCase kRngCases[] = {
    {kOps[0], [](std::mt19937 *g) { CompareOp(kOps[0], MXC_DEVICE_GPU, g); }},
    {kOps[1], [](std::mt19937 *g) { CompareOp(kOps[1], MXC_DEVICE_GPU, g); }},
    {kOps[2], [](std::mt19937 *g) { CompareOp(kOps[2], MXC_DEVICE_GPU, g); }},
    {kOps[3], [](std::mt19937 *g) {
       CompareOp(kOps[3], MXC_DEVICE_GPU, g);
       PrintTally();
     }},
};

// On every machine: the cases are valid calls, CPU against CPU (bitwise
// there), so a GPU run does not spend its minutes on a broken case.
TEST(GpuConformanceRng, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(11);
  for (const char *op : kOps) CompareOp(op, MXC_DEVICE_CPU, &g);
  for (const auto &t : Tally()) EXPECT_EQ(t.second.second, 0) << t.first;
  Tally().clear();
}

// One draw of case c on dev into a new output of n elements, with no seed
// of its own: the stream continues from the calls before.
Bytes DrawNext(const RngCase &c, int dev, int64_t n) {
  Bytes b = Poisoned(c.dtype, n);
  mxc_op op = nullptr;
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_find(c.op, &op), MXC_OK);
  EXPECT_EQ(mxc_ndarray_create(&n, 1, c.dtype, dev, 0, 0, &out), MXC_OK)
      << mxc_last_error();
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  EXPECT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), nullptr, 0,
                          &out, 1, nullptr),
            MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_copy_to_host(out, b.data(), b.size()), MXC_OK)
      << mxc_last_error();
  mxc_ndarray_free(out);
  return b;
}

// The promise across devices: one seed, then calls alternating between
// the GPU and the CPU draw what the same calls all on the CPU draw.
TEST(GpuConformanceRng, InterleavedDevicesDrawOneStream) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) GTEST_SKIP() << "no usable GPU";
  const std::vector<RngCase> calls = {
      {"_random_uniform", MXC_DTYPE_FLOAT32, {}},
      {"_random_normal", MXC_DTYPE_FLOAT64, {}},
      {"_random_randint", MXC_DTYPE_INT64, {{"low", "-7"}, {"high", "99"}}},
      {"_random_exponential", MXC_DTYPE_FLOAT32, {{"lam", "2"}}},
      {"_random_uniform", MXC_DTYPE_FLOAT64, {{"high", "3"}}},
  };
  const int64_t sizes[] = {5, 7, 9, 4, 1000};
  std::vector<Bytes> cpu, mixed[2];
  ASSERT_EQ(mxc_random_seed(99), MXC_OK);
  for (size_t i = 0; i < calls.size(); ++i) {
    cpu.push_back(DrawNext(calls[i], MXC_DEVICE_CPU, sizes[i]));
  }
  for (int first = 0; first < 2; ++first) {
    ASSERT_EQ(mxc_random_seed(99), MXC_OK);
    for (size_t i = 0; i < calls.size(); ++i) {
      int dev = (i + first) % 2 ? MXC_DEVICE_CPU : MXC_DEVICE_GPU;
      mixed[first].push_back(DrawNext(calls[i], dev, sizes[i]));
    }
    for (size_t i = 0; i < calls.size(); ++i) {
      Expect(calls[i], "interleaved call " + std::to_string(i),
             mixed[first][i], cpu[i], Bytes());
    }
  }
  Tally().clear();
}

// The bound itself: tight enough that a value from another slot of the
// stream fails, loose enough for last-bit differences.
TEST(GpuConformanceRng, TheBoundIsTight) {
  RngCase normal = {"_random_normal", MXC_DTYPE_FLOAT64, {}};
  EXPECT_TRUE(WithinBound(normal, std::nextafter(0.75, 1.0), 0.75, 0));
  EXPECT_FALSE(WithinBound(normal, 0.75 + 1e-12, 0.75, 0));
  RngCase f32 = {"_random_normal", MXC_DTYPE_FLOAT32, {}};
  EXPECT_TRUE(WithinBound(f32, std::nextafter(0.75f, 1.f), 0.75, 0));
  EXPECT_FALSE(WithinBound(f32, 0.7500005, 0.75, 0));
  RngCase expo = {"_random_exponential", MXC_DTYPE_FLOAT64, {{"lam", "3"}}};
  EXPECT_FALSE(WithinBound(expo, 0.2 + 1e-12, 0.2, 0));
  EXPECT_FALSE(WithinBound(expo, NAN, 0.2, 0));
}

}  // namespace
