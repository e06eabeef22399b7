// Every GPU kernel against the CPU's kernel, in the manner of ggml's
// test-backend-ops: the operators come from the plug-in's own table (so a
// new kernel is compared without editing this file), each runs on the same
// random inputs on both devices, GPU outputs are poisoned with a NaN
// pattern first (an element the kernel forgets to write fails), and the
// results must agree within the operator's tolerance (bitwise for the
// element-wise operators, whose kernels must compute what the CPU does).
//
// Cases: same-shape element-wise calls without parameters, over several
// shapes (a scalar-like one, odd sizes, an empty array), with write and
// add modes. An operator the generic case cannot call (parameters, other
// shapes) fails here until it gets a case of its own: no kernel goes
// unchecked.
//
// With the fake plug-in (tests/gpu:test_gpu_conformance_fake) this checks
// the harness; with the real one it runs on a GPU (scripts/gpu_check.sh)
// and skips without.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"

namespace mxct {
std::map<std::string, ConformanceCase> &CaseRunners() {
  static std::map<std::string, ConformanceCase> cases;
  return cases;
}
}  // namespace mxct

namespace {

using mxct::Poison;

using mxct::LastError;
using mxct::Make;
using mxct::ToHost;

const std::vector<std::vector<int64_t>> kShapes = {{1}, {7}, {3, 5, 2}, {1031},
                                                   {0}};

std::vector<float> Random(size_t n, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<float> v(n);
  for (auto &x : v) x = u(*g);
  return v;
}

int64_t Numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

mxc_ndarray Filled(const std::vector<int64_t> &shape, int dev, int id,
                   const std::vector<float> &v) {
  mxc_ndarray a = Make(shape, dev, id);
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 4), MXC_OK)
        << LastError();
  }
  return a;
}

// Runs op on one device with inputs x and the output pre-filled with
// `init` under write mode `req`; returns the output's values, or sets *rc.
std::vector<float> RunOn(mxc_op op, int n_in,
                         const std::vector<std::vector<float>> &x,
                         const std::vector<int64_t> &shape,
                         const std::vector<float> &init, int req, int dev,
                         int *rc) {
  std::vector<mxc_ndarray> in;
  for (int i = 0; i < n_in; ++i) in.push_back(Filled(shape, dev, 0, x[i]));
  mxc_ndarray out = Filled(shape, dev, 0, init);
  *rc = mxc_op_invoke(op, nullptr, nullptr, 0, in.data(), n_in, &out, 1,
                      &req);
  if (*rc == MXC_OK) *rc = mxc_ndarray_wait_to_read(out);
  std::vector<float> v;
  if (*rc == MXC_OK) v = ToHost(out, init.size());
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  mxc_ndarray_free(out);
  return v;
}

// NaN with a payload no arithmetic produces: the poison.
void ExpectSame(const std::string &what, const std::vector<float> &gpu,
                const std::vector<float> &cpu) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &gpu[i], 4);
    std::memcpy(&b, &cpu[i], 4);
    if (a == mxct::kPoisonBits) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
      return;
    }
    bool both_nan = std::isnan(gpu[i]) && std::isnan(cpu[i]);
    if (a != b && !both_nan) {
      ADD_FAILURE() << what << ": element " << i << " is " << gpu[i]
                    << " on the GPU, " << cpu[i] << " on the CPU";
      return;
    }
  }
}

// The generic case for one operator: every shape, write and add.
void CompareElementwise(const char *name, std::mt19937 *g) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << name;
  const mxc__op *d = mxc__op_find(name);
  ASSERT_NE(d, nullptr);
  int n_in = d->n_inputs;
  ASSERT_GT(n_in, 0) << name << ": no generic case for a variadic operator";
  for (const auto &shape : kShapes) {
    size_t n = (size_t)Numel(shape);
    std::vector<std::vector<float>> x;
    for (int i = 0; i < n_in; ++i) x.push_back(Random(n, g));
    std::vector<float> base = Random(n, g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      std::string what = std::string(name) + " shape of " +
                         std::to_string(n) + (req == MXC_REQ_ADD ? " add" : "");
      int rc_cpu = 0, rc_gpu = 0;
      std::vector<float> cpu =
          RunOn(op, n_in, x, shape, base, req, MXC_DEVICE_CPU, &rc_cpu);
      ASSERT_EQ(rc_cpu, MXC_OK) << what << ": no generic case ("
                                << LastError() << ")";
      std::vector<float> init =
          req == MXC_REQ_ADD ? base : std::vector<float>(n, Poison());
      std::vector<float> gpu =
          RunOn(op, n_in, x, shape, init, req, MXC_DEVICE_GPU, &rc_gpu);
      ASSERT_EQ(rc_gpu, MXC_OK) << what << ": " << LastError();
      ExpectSame(what, gpu, cpu);
    }
  }
}

TEST(GpuConformance, EveryKernelMatchesTheCpu) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << LastError();
  }
  const mxc__gpu_plugin *p = mxc__gpu_table();
  ASSERT_NE(p, nullptr);
  std::mt19937 g(20261127);
  int compared = 0;
  for (int i = 0; i < p->n_kernels; ++i) {
    SCOPED_TRACE(p->kernels[i].op);
    const testing::TestResult *r =
        testing::UnitTest::GetInstance()->current_test_info()->result();
    int before = r->total_part_count();
    auto own = mxct::CaseRunners().find(p->kernels[i].op);
    if (own != mxct::CaseRunners().end()) {
      own->second(&g);
    } else {
      CompareElementwise(p->kernels[i].op, &g);
    }
    // One line per kernel, for gpu_check's summary: which ones failed.
    std::printf("gpu_conformance: %s: %s\n", p->kernels[i].op,
                r->total_part_count() == before ? "ok" : "FAILED");
    ++compared;
  }
  std::printf("gpu_conformance: %d of %d kernels compared with the CPU "
              "(%zu with a case of their own)\n",
              compared, p->n_kernels, mxct::CaseRunners().size());
}

}  // namespace
