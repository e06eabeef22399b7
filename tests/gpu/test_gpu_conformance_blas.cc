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

// Many independent products pushed at once: the engine's workers run them
// concurrently, each thread with its own cuBLAS handle (backends/cuda/
// blas.c); every result must still be the CPU's.
TEST(GpuConformanceBlas, ConcurrentCallsAgree) {
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << mxct::LastError();
  }
  if (!TableOps().count("dot")) return;  // a plug-in without cuBLAS rows
  const int kCalls = 24;
  const int64_t a_shape[2] = {37, 29}, b_shape[2] = {29, 41};
  std::mt19937 g(17);
  mxc_op dot = nullptr;
  ASSERT_EQ(mxc_op_find("dot", &dot), MXC_OK);
  std::vector<std::vector<float>> xa, xb;
  std::vector<mxc_ndarray> outs;
  std::vector<mxc_ndarray> keep;
  for (int i = 0; i < kCalls; ++i) {
    xa.push_back(mxct::Uniform(37 * 29, &g));
    xb.push_back(mxct::Uniform(29 * 41, &g));
    mxc_ndarray in[2] = {mxct::Make({37, 29}, MXC_DEVICE_GPU, 0),
                         mxct::Make({29, 41}, MXC_DEVICE_GPU, 0)};
    ASSERT_EQ(mxc_ndarray_copy_from_host(in[0], xa[i].data(), 37 * 29 * 4),
              MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_from_host(in[1], xb[i].data(), 29 * 41 * 4),
              MXC_OK);
    mxc_ndarray out = mxct::Make({37, 41}, MXC_DEVICE_GPU, 0);
    ASSERT_EQ(mxc_op_invoke(dot, nullptr, nullptr, 0, in, 2, &out, 1, nullptr),
              MXC_OK)
        << mxct::LastError();
    outs.push_back(out);
    keep.insert(keep.end(), in, in + 2);
  }
  ASSERT_EQ(mxc_wait_all(), MXC_OK) << mxct::LastError();
  for (int i = 0; i < kCalls; ++i) {
    mxct::BlasCase c = mxct::Dot("dot", 0, 0, {a_shape[0], a_shape[1]},
                                 {b_shape[0], b_shape[1]}, {37, 41});
    int rc = 0;
    auto cpu = mxct::InvokeOn(c, {xa[i], xb[i]}, {std::vector<float>(37 * 41)},
                              {MXC_REQ_WRITE}, MXC_DEVICE_CPU, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxct::LastError();
    mxct::ExpectNear("call " + std::to_string(i),
                     mxct::ToHost(outs[i], 37 * 41), cpu[0]);
  }
  for (mxc_ndarray a : outs) mxc_ndarray_free(a);
  for (mxc_ndarray a : keep) mxc_ndarray_free(a);
}

}  // namespace
