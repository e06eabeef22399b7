// Conformance of the linalg kernels (backends/cuda/la.h): every case of
// la_cases.h (the linalg_* operators and their _backward_ operators,
// every parameter combination, every write mode) on the GPU and the CPU
// with the same inputs, in float32 and float64, plus a few larger
// matrices (cuBLAS's batched LU takes another path above 32 x 32) and the
// error and singular cases. GPU outputs written in write mode are
// poisoned with NaN first. Tolerance: la_cases.h's LaExpectNear (both
// devices compute in float64 and round once: relative 2e-6 for float32,
// 1e-9 for float64).
//
// Each operator's cases are its entry in the suite's registry
// (conformance.h), run by test_gpu_conformance.cc's loop for the
// operators of the loaded plug-in's table.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/la_cases.h"

namespace {

using mxct::LaCase;
using mxct::LaVec;

void Compare(const LaCase &c, std::mt19937 *g, int dt) {
  SCOPED_TRACE(c.Name() + (dt == MXC_DTYPE_FLOAT64 ? " float64" : " float32"));
  std::vector<LaVec> x, base;
  for (size_t i = 0; i < c.in.size(); ++i) {
    x.push_back(mxct::LaInput(c.in[i], c.gen[i], g));
  }
  for (const auto &s : c.out) base.push_back(mxct::LaInput(s, mxct::kUniform, g));
  for (const auto &req : mxct::LaReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::LaInvoke(c, x, base, req, MXC_DEVICE_CPU, dt, &rc);
    ASSERT_EQ(rc, MXC_OK) << "CPU: " << mxc_last_error();
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE) {
        std::fill(init[i].begin(), init[i].end(),
                  std::numeric_limits<double>::quiet_NaN());
      }
    }
    auto gpu = mxct::LaInvoke(c, x, init, req, MXC_DEVICE_GPU, dt, &rc);
    ASSERT_EQ(rc, MXC_OK) << "GPU: " << mxc_last_error();
    for (size_t i = 0; i < gpu.size(); ++i) {
      mxct::LaExpectNear(
          "output " + std::to_string(i) + " req " + std::to_string(req[i]),
          gpu[i], cpu[i], dt);
    }
  }
}

// Larger matrices than the host test's (the GPU libraries' other paths).
std::vector<LaCase> LargeCases() {
  mxct::LaShape a = {3, 40, 40};
  return {
      {"linalg_gemm2", {{"transpose_b", "true"}}, {{64, 48}, {33, 48}},
       {{64, 33}}, {mxct::kUniform, mxct::kUniform}},
      {"linalg_inverse", {}, {a}, {a}, {mxct::kWell}},
      {"linalg_potrf", {}, {a}, {a}, {mxct::kSpd}},
      {"linalg_potrf", {{"lower", "false"}}, {a}, {a}, {mxct::kSpd}},
      {"linalg_slogdet", {}, {a}, {{3}, {3}}, {mxct::kWell}},
      {"linalg_trsm", {{"rightside", "true"}}, {a, {3, 17, 40}}, {{3, 17, 40}},
       {mxct::kTri, mxct::kUniform}},
  };
}

// A matrix that is not positive definite fails on both devices alike.
void PotrfNotPositiveDefinite() {
  LaCase c = {"linalg_potrf", {}, {{2, 2, 2}}, {{2, 2, 2}}, {mxct::kUniform}};
  std::vector<LaVec> x = {{4, 1, 1, 3, 1, 2, 2, 1}};
  int rc_cpu = 0, rc_gpu = 0;
  (void)mxct::LaInvoke(c, x, {LaVec(8, 0)}, {MXC_REQ_WRITE}, MXC_DEVICE_CPU,
                       MXC_DTYPE_FLOAT32, &rc_cpu);
  EXPECT_EQ(rc_cpu, MXC_ERR_INVALID_ARGUMENT);
  (void)mxc_wait_all();  // the failure, reported: cleared for what follows
  (void)mxct::LaInvoke(c, x, {LaVec(8, 0)}, {MXC_REQ_WRITE}, MXC_DEVICE_GPU,
                       MXC_DTYPE_FLOAT32, &rc_gpu);
  std::string why = mxc_last_error();
  (void)mxc_wait_all();
  EXPECT_EQ(rc_gpu, rc_cpu) << why;
  EXPECT_NE(why.find("not positive definite"), std::string::npos) << why;
}

// A singular matrix: det 0 and slogdet (0, -inf) on both devices.
void Singular(const char *op) {
  LaCase c = {op, {}, {{2, 2}}, {{1}}, {mxct::kUniform}};
  if (std::string(op) == "linalg_slogdet") c.out = {{1}, {1}};
  std::vector<LaVec> x = {{1, 2, 2, 4}}, init;
  for (size_t i = 0; i < c.out.size(); ++i) init.push_back({7});
  std::vector<int> req(c.out.size(), MXC_REQ_WRITE);
  int rc = 0;
  auto cpu = mxct::LaInvoke(c, x, init, req, MXC_DEVICE_CPU, MXC_DTYPE_FLOAT32,
                            &rc);
  ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
  auto gpu = mxct::LaInvoke(c, x, init, req, MXC_DEVICE_GPU, MXC_DTYPE_FLOAT32,
                            &rc);
  ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
  for (size_t i = 0; i < gpu.size(); ++i) {
    mxct::LaExpectNear(std::string(op) + " singular", gpu[i], cpu[i],
                       MXC_DTYPE_FLOAT32);
  }
}

// With the fake plug-in (whose kernels run the same plans on the host,
// already compared in both dtypes by test_cuda_la_plan) float64 goes
// through the dispatch for every third case only: the run under ASan
// stays short. A GPU gets every case in both dtypes.
bool Float64Too(size_t i) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  return i % 3 == 0 || !p || std::string(p->name) != "fake";
}

// Every case of op (forward cases and the backward cases derived from
// them), both dtypes: one operator's entry in the suite's registry.
void CompareOp(const std::string &op, std::mt19937 *g) {
  std::vector<LaCase> fwd = mxct::LaForwardCases(), big = LargeCases();
  fwd.insert(fwd.end(), big.begin(), big.end());
  size_t i = 0;
  for (const auto &f : fwd) {
    for (const auto &c : {f, mxct::LaBackwardOf(f)}) {
      if (c.op != op) continue;
      Compare(c, g, MXC_DTYPE_FLOAT32);
      if (Float64Too(i++)) Compare(c, g, MXC_DTYPE_FLOAT64);
    }
  }
  if (op == "linalg_potrf") PotrfNotPositiveDefinite();
  if (op == "linalg_det" || op == "linalg_slogdet") Singular(op.c_str());
}

#define LA_CASE(name) \
  {name, [](std::mt19937 *g) { CompareOp(name, g); }}, \
      {"_backward_" name, [](std::mt19937 *g) { CompareOp("_backward_" name, g); }}
const mxct::RegisterCase kLaCases[] = {
    LA_CASE("linalg_gemm"),       LA_CASE("linalg_gemm2"),
    LA_CASE("linalg_syrk"),       LA_CASE("linalg_trmm"),
    LA_CASE("linalg_trsm"),       LA_CASE("linalg_potrf"),
    LA_CASE("linalg_potri"),      LA_CASE("linalg_sumlogdiag"),
    LA_CASE("linalg_extractdiag"), LA_CASE("linalg_makediag"),
    LA_CASE("linalg_inverse"),    LA_CASE("linalg_det"),
    LA_CASE("linalg_slogdet"),
};
#undef LA_CASE

}  // namespace
