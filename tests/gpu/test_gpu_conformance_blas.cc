// Conformance of the cuBLAS kernels (backends/cuda/blas.h): every case of
// blas_cases.h (dot, batch_dot, FullyConnected and their backward
// operators, every write mode) on the GPU and the CPU with the same random
// inputs. GPU outputs written in write mode are poisoned first (an element
// never written fails), outputs left alone (write mode NULL) must keep
// their values. Tolerance: relative 1e-4 (blas_cases.h's ExpectNear: the
// kernels use cuBLAS's default math, no TF32, so only the summation order
// differs from the CPU's float32 GEMM).
//
// Each operator's cases are its case in the conformance suite's registry
// (conformance.h), which test_gpu_conformance.cc's loop runs for the
// operators of the loaded plug-in's table (the fake plug-in has none of
// these; the real one has all).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/blas_cases.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::Poison;

// 1 when the loaded plug-in's table has a kernel for op.
bool InTable(const char *op) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  for (int i = 0; p && i < p->n_kernels; ++i) {
    if (std::strcmp(p->kernels[i].op, op) == 0) return true;
  }
  return false;
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

// Every case of op (forward and backward forms), one operator's entry in
// the suite's registry.
void CompareOp(const std::string &op, std::mt19937 *g) {
  for (const auto &f : mxct::ForwardBlasCases()) {
    for (const auto &c : {f, mxct::BackwardOf(f)}) {
      if (c.op == op) Compare(c, g);
    }
  }
}

#define BLAS_CASE(op) \
  {op, [](std::mt19937 *g) { CompareOp(op, g); }}
const mxct::RegisterCase kBlasCases[] = {
    BLAS_CASE("dot"),
    BLAS_CASE("_backward_dot"),
    BLAS_CASE("batch_dot"),
    BLAS_CASE("_backward_batch_dot"),
    BLAS_CASE("FullyConnected"),
    BLAS_CASE("_backward_FullyConnected"),
};
#undef BLAS_CASE

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
  if (!InTable("dot")) return;  // a plug-in without cuBLAS rows
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
