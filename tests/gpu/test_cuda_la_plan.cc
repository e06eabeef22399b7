// The linalg kernels' plans (backends/cuda/la_plan.h) on the host: each
// planned step runs through host routines with cuBLAS's and cuSOLVER's
// column-major argument semantics and la_hd.h's element formulas
// (la_host.h: it refuses a leading dimension below the stored rows and a
// matrix reaching past its slot), and the outputs must match the CPU
// operators of libmxc through the public API, in float32 and float64,
// every write mode, write-mode outputs NaN-poisoned. Parameters come from
// libmxc's own parser, so the plug-in's reading of mxc__la_param is
// checked too. This is what catches transpose, triangle and layout
// mistakes without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "backends/cuda/la_plan.h"
#include "tests/gpu/la_cases.h"
#include "tests/gpu/la_host.h"

namespace {

using mxct::LaCase;
using mxct::LaVec;

int OpOf(const std::string &name) {
  static const std::map<std::string, int> k = {
      {"linalg_gemm", MXC__LA_GEMM_OP},
      {"_backward_linalg_gemm", MXC__LA_GEMM_BWD},
      {"linalg_gemm2", MXC__LA_GEMM2},
      {"_backward_linalg_gemm2", MXC__LA_GEMM2_BWD},
      {"linalg_syrk", MXC__LA_SYRK},
      {"_backward_linalg_syrk", MXC__LA_SYRK_BWD},
      {"linalg_trmm", MXC__LA_TRMM},
      {"_backward_linalg_trmm", MXC__LA_TRMM_BWD},
      {"linalg_trsm", MXC__LA_TRSM},
      {"_backward_linalg_trsm", MXC__LA_TRSM_BWD},
      {"linalg_potrf", MXC__LA_POTRF_OP},
      {"_backward_linalg_potrf", MXC__LA_POTRF_BWD},
      {"linalg_potri", MXC__LA_POTRI},
      {"_backward_linalg_potri", MXC__LA_POTRI_BWD},
      {"linalg_sumlogdiag", MXC__LA_SUMLOGDIAG},
      {"_backward_linalg_sumlogdiag", MXC__LA_SUMLOGDIAG_BWD},
      {"linalg_extractdiag", MXC__LA_EXTRACTDIAG},
      {"_backward_linalg_extractdiag", MXC__LA_EXTRACTDIAG_BWD},
      {"linalg_makediag", MXC__LA_MAKEDIAG},
      {"_backward_linalg_makediag", MXC__LA_MAKEDIAG_BWD},
      {"linalg_inverse", MXC__LA_INVERSE},
      {"_backward_linalg_inverse", MXC__LA_INVERSE_BWD},
      {"linalg_det", MXC__LA_DET},
      {"_backward_linalg_det", MXC__LA_DET_BWD},
      {"linalg_slogdet", MXC__LA_SLOGDET},
      {"_backward_linalg_slogdet", MXC__LA_SLOGDET_BWD}};
  return k.at(name);
}

// Plans case c and runs the plan on host copies of x and init: the
// outputs, and the run's code in *rc (why: its message).
std::vector<LaVec> RunPlan(const LaCase &c, const std::vector<LaVec> &x,
                           const std::vector<LaVec> &init,
                           const std::vector<int> &req, int dt, int *rc,
                           std::string *why_out = nullptr) {
  void *param = mxct::ParseCase(c);
  std::vector<std::vector<uint8_t>> xb, ob;
  for (const auto &v : x) xb.push_back(mxct::LaBytes(dt, v));
  for (const auto &v : init) ob.push_back(mxct::LaBytes(dt, v));
  std::vector<mxc__gpu_array> in, out;
  for (size_t i = 0; i < c.in.size(); ++i)
    in.push_back(mxct::HostArray(c.in[i], &xb[i], dt));
  for (size_t i = 0; i < c.out.size(); ++i) {
    out.push_back(mxct::HostArray(c.out[i], &ob[i], dt));
  }
  mxc__gpu_call call = {0,          param,           in.data(),  (int)in.size(),
                        out.data(), (int)out.size(), req.data(), 0,
                        {}};
  mxc__la_plan p;
  char why[512] = "";
  *rc = mxc__la_plan_call(OpOf(c.op), &call, &p, why, sizeof why);
  EXPECT_EQ(*rc, MXC_OK) << why;
  if (*rc == MXC_OK) *rc = mxct_la_host_run(&p, &call, why, sizeof why);
  EXPECT_NE(*rc, MXC_ERR_INTERNAL) << why;
  if (why_out) *why_out = why;
  mxc__free(param);
  std::vector<LaVec> res;
  for (const auto &b : ob) res.push_back(mxct::LaValues(dt, b));
  return res;
}

void CheckCase(const LaCase &c, std::mt19937 *g, int dt) {
  SCOPED_TRACE(c.Name() + (dt == MXC_DTYPE_FLOAT64 ? " float64" : " float32"));
  std::vector<LaVec> x, base;
  for (size_t i = 0; i < c.in.size(); ++i) {
    x.push_back(mxct::LaInput(c.in[i], c.gen[i], g));
  }
  for (const auto &s : c.out)
    base.push_back(mxct::LaInput(s, mxct::kUniform, g));
  for (const auto &req : mxct::LaReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::LaInvoke(c, x, base, req, MXC_DEVICE_CPU, dt, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE) {
        std::fill(init[i].begin(), init[i].end(),
                  std::numeric_limits<double>::quiet_NaN());
      }
    }
    auto got = RunPlan(c, x, init, req, dt, &rc);
    ASSERT_EQ(rc, MXC_OK);
    for (size_t i = 0; i < got.size(); ++i) {
      mxct::LaExpectNear(
          "output " + std::to_string(i) + " req " + std::to_string(req[i]),
          got[i], cpu[i], dt);
    }
  }
}

TEST(CudaLaPlan, ForwardMatchesTheCpu) {
  std::mt19937 g(17);
  for (const auto &c : mxct::LaForwardCases()) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) CheckCase(c, &g, dt);
  }
}

TEST(CudaLaPlan, BackwardMatchesTheCpu) {
  std::mt19937 g(1717);
  for (const auto &c : mxct::LaForwardCases()) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
      CheckCase(mxct::LaBackwardOf(c), &g, dt);
    }
  }
}

// A matrix that is not positive definite: the CPU's error code, and a
// message naming the operator, the batch item and the pivot.
TEST(CudaLaPlan, PotrfOfANonPositiveDefiniteMatrixFailsAsTheCpu) {
  for (int lower = 0; lower < 2; ++lower) {
    LaCase c = {"linalg_potrf",
                {{"lower", mxct::LaBool(lower)}},
                {{2, 2, 2}},
                {{2, 2, 2}},
                {mxct::kUniform}};
    // item 0 positive definite, item 1 with a negative second pivot
    std::vector<LaVec> x = {{4, 1, 1, 3, 1, 2, 2, 1}};
    std::vector<LaVec> init = {LaVec(8, 0)};
    int rc_cpu = 0, rc = 0;
    (void)mxct::LaInvoke(c, x, init, {MXC_REQ_WRITE}, MXC_DEVICE_CPU,
                         MXC_DTYPE_FLOAT32, &rc_cpu);
    EXPECT_EQ(rc_cpu, MXC_ERR_INVALID_ARGUMENT);
    (void)mxc_wait_all();  // the failure, reported: cleared
    std::string why;
    (void)RunPlan(c, x, init, {MXC_REQ_WRITE}, MXC_DTYPE_FLOAT32, &rc, &why);
    EXPECT_EQ(rc, rc_cpu);
    EXPECT_NE(why.find("linalg_potrf"), std::string::npos) << why;
    EXPECT_NE(why.find("not positive definite"), std::string::npos) << why;
    EXPECT_NE(why.find("pivot 1 of matrix 1"), std::string::npos) << why;
  }
}

// Singular matrices: det 0 and slogdet (0, -inf) on both; the inverse
// non-finite where the CPU's is (the plan's NaN, not getri's undefined
// output: the host stand-in fills that with 12345).
TEST(CudaLaPlan, SingularMatricesGiveTheCpuValues) {
  std::vector<LaVec> x = {{1, 2, 2, 4}};
  for (const char *op : {"linalg_det", "linalg_slogdet", "linalg_inverse"}) {
    SCOPED_TRACE(op);
    std::string name = op;
    LaCase c = {op, {}, {{2, 2}}, {{1}}, {mxct::kUniform}};
    if (name == "linalg_slogdet") c.out = {{1}, {1}};
    if (name == "linalg_inverse") c.out = {{2, 2}};
    std::vector<LaVec> init;
    for (const auto &s : c.out) init.push_back(LaVec(mxct::LaNumel(s), 7));
    std::vector<int> req(c.out.size(), MXC_REQ_WRITE);
    int rc = 0;
    auto cpu =
        mxct::LaInvoke(c, x, init, req, MXC_DEVICE_CPU, MXC_DTYPE_FLOAT64, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    auto got = RunPlan(c, x, init, req, MXC_DTYPE_FLOAT64, &rc);
    ASSERT_EQ(rc, MXC_OK);
    if (name == "linalg_inverse") {
      bool cpu_bad = false, got_bad = false;
      for (double v : cpu[0]) cpu_bad = cpu_bad || !std::isfinite(v);
      for (double v : got[0]) got_bad = got_bad || !std::isfinite(v);
      EXPECT_TRUE(cpu_bad);
      EXPECT_TRUE(got_bad);
      continue;
    }
    EXPECT_EQ(cpu[0][0], 0.0);
    for (size_t i = 0; i < got.size(); ++i) {
      mxct::LaExpectNear("output " + std::to_string(i), got[i], cpu[i],
                         MXC_DTYPE_FLOAT64);
    }
  }
}

mxc__gpu_array Mat(int64_t r, int64_t c, int dt = MXC_DTYPE_FLOAT32) {
  mxc__gpu_array a = {};
  a.size = r * c;
  a.ndim = 2;
  a.dims[0] = r;
  a.dims[1] = c;
  a.dtype = dt;
  return a;
}

// What reaches a library: only what the plan's steps use (diagonals none,
// potrf cuSOLVER alone), never a call whose arrays disagree.
TEST(CudaLaPlan, PlansNameTheirLibrariesAndRefuseBadCalls) {
  mxc__la_param q = {};
  q.alpha = 1;
  q.lower = 1;
  int req[3] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_array in[2] = {Mat(3, 3), Mat(3, 3)};
  mxc__gpu_array out[1] = {Mat(3, 3)};
  mxc__gpu_call c = {0, &q, in, 1, out, 1, req, 0, {}};
  mxc__la_plan p;
  char why[512] = "";
  ASSERT_EQ(mxc__la_plan_call(MXC__LA_POTRF_OP, &c, &p, why, sizeof why),
            MXC_OK)
      << why;
  EXPECT_TRUE(p.needs_solver);
  EXPECT_FALSE(p.needs_blas);
  out[0] = Mat(1, 3);
  ASSERT_EQ(mxc__la_plan_call(MXC__LA_EXTRACTDIAG, &c, &p, why, sizeof why),
            MXC_OK)
      << why;
  EXPECT_FALSE(p.needs_solver || p.needs_blas);
  out[0] = Mat(3, 3);
  ASSERT_EQ(mxc__la_plan_call(MXC__LA_INVERSE, &c, &p, why, sizeof why),
            MXC_OK);
  EXPECT_TRUE(p.needs_blas);
  // an output of another shape, another dtype, a wrong array count
  out[0] = Mat(3, 2);
  EXPECT_EQ(mxc__la_plan_call(MXC__LA_INVERSE, &c, &p, why, sizeof why),
            MXC_ERR_SHAPE);
  out[0] = Mat(3, 3, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(mxc__la_plan_call(MXC__LA_INVERSE, &c, &p, why, sizeof why),
            MXC_ERR_DTYPE);
  out[0] = Mat(3, 3);
  c.n_in = 2;
  EXPECT_EQ(mxc__la_plan_call(MXC__LA_INVERSE, &c, &p, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  // gemm2 whose B does not chain with A
  in[1] = Mat(2, 3);
  EXPECT_EQ(mxc__la_plan_call(MXC__LA_GEMM2, &c, &p, why, sizeof why),
            MXC_ERR_SHAPE)
      << why;
  // an empty batch: nothing to compute, no library
  in[0] = Mat(0, 3);
  in[0].ndim = 3, in[0].dims[0] = 0, in[0].dims[1] = 3, in[0].dims[2] = 3;
  out[0] = in[0];
  c.n_in = 1;
  ASSERT_EQ(mxc__la_plan_call(MXC__LA_INVERSE, &c, &p, why, sizeof why),
            MXC_OK);
  EXPECT_EQ(p.n_steps, 0);
}

}  // namespace
