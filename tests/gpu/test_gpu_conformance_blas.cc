// Conformance of the cuBLAS kernels (backends/cuda/blas.h): every case of
// blas_cases.h (dot, batch_dot, FullyConnected and their backward
// operators, every write mode) on the GPU and the CPU with the same random
// inputs. GPU outputs written in write mode are poisoned first (an element
// never written fails), outputs left alone (write mode NULL) must keep
// their values. Tolerance: relative 1e-4 (blas_cases.h's ExpectNear: the
// kernels use cuBLAS's default math, no TF32, so only the summation order
// differs from the CPU's float32 GEMM).
//
// The generic same-shape case of test_gpu_conformance.cc skips these
// operators (OwnCase). Operators missing from the loaded plug-in's table
// (the fake plug-in's) are not compared; with the real one they all are.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/blas_cases.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

const mxct::OwnCase kOwn({"dot", "_backward_dot", "batch_dot",
                          "_backward_batch_dot", "FullyConnected",
                          "_backward_FullyConnected"});

std::set<std::string> TableOps() {
  std::set<std::string> s;
  const mxc__gpu_plugin *p = mxc__gpu_table();
  for (int i = 0; p && i < p->n_kernels; ++i) s.insert(p->kernels[i].op);
  return s;
}

int FailureCount() {
  const testing::TestResult *r =
      testing::UnitTest::GetInstance()->current_test_info()->result();
  int n = 0;
  for (int i = 0; i < r->total_part_count(); ++i) {
    n += r->GetTestPartResult(i).failed();
  }
  return n;
}

float Poison() {
  uint32_t bits = 0x7fc0dead;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void Compare(const mxct::BlasCase &c, std::mt19937 *g) {
  SCOPED_TRACE(c.Name());
  std::vector<std::vector<float>> x, base;
  for (const auto &s : c.in) x.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &s : c.out) base.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &req : mxct::ReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::InvokeOn(c, x, base, req, MXC_DEVICE_CPU, &rc);
    ASSERT_EQ(rc, MXC_OK) << "CPU: " << mxc_last_error();
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE) {
        std::fill(init[i].begin(), init[i].end(), Poison());
      }
    }
    auto gpu = mxct::InvokeOn(c, x, init, req, MXC_DEVICE_GPU, &rc);
    ASSERT_EQ(rc, MXC_OK) << "GPU: " << mxc_last_error();
    for (size_t i = 0; i < gpu.size(); ++i) {
      mxct::ExpectNear(
          "output " + std::to_string(i) + " req " + std::to_string(req[i]),
          gpu[i], cpu[i]);
    }
  }
}

TEST(GpuConformanceBlas, EveryCaseMatchesTheCpu) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << mxct::LastError();
  }
  std::set<std::string> ops = TableOps();
  std::mt19937 g(20261129);
  // Per operator: cases compared, cases failed (the summary of
  // scripts/gpu_check.sh lists these lines).
  std::map<std::string, std::pair<int, int>> per_op;
  int compared = 0, cases = 0;
  for (const auto &f : mxct::ForwardBlasCases()) {
    for (const auto &c : {f, mxct::BackwardOf(f)}) {
      ++cases;
      if (!ops.count(c.op)) continue;
      int before = FailureCount();
      Compare(c, &g);
      per_op[c.op].first++;
      per_op[c.op].second += FailureCount() > before;
      ++compared;
    }
  }
  for (const auto &o : per_op) {
    std::printf("gpu_conformance: %s: %d cases, %d failed\n", o.first.c_str(),
                o.second.first, o.second.second);
  }
  std::printf("gpu_conformance_blas: %d of %d cases compared with the CPU\n",
              compared, cases);
}

}  // namespace
