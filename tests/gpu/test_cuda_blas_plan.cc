// The cuBLAS kernels' plans (backends/cuda/blas_plan.h) on the host: each
// planned step runs through a host GEMM/GEMV that follows cuBLAS's
// column-major argument semantics (blas_host.h: it refuses what cuBLAS
// would refuse, a leading dimension below the stored rows, and a matrix
// reaching past its array), and the outputs must match the CPU operators of
// libmxc through the public API. Parameters come from libmxc's own parser, so
// the plug-in's mirrors of the parameter structs are checked too. This is what
// catches transpose and layout mistakes without a GPU. float16 and bfloat16
// run the same cases: the half plans (bias first, the bias gradient as a
// GEMM) with a host stand-in for cublasGemmEx (one rounding per output).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "backends/cuda/blas_plan.h"
#include "tests/gpu/blas_cases.h"
#include "tests/gpu/blas_host.h"

namespace {

using mxct::BlasCase;

int OpOf(const std::string &name) {
  static const std::map<std::string, int> k = {
      {"dot", MXC__BLAS_DOT},
      {"_backward_dot", MXC__BLAS_DOT_BWD},
      {"batch_dot", MXC__BLAS_BATCH_DOT},
      {"_backward_batch_dot", MXC__BLAS_BATCH_DOT_BWD},
      {"FullyConnected", MXC__BLAS_FC},
      {"_backward_FullyConnected", MXC__BLAS_FC_BWD}};
  return k.at(name);
}

// Plans case c and runs the plan on host copies of x and init, as arrays
// of dtype.
std::vector<std::vector<float>> RunPlan(
    const BlasCase &c, const std::vector<std::vector<float>> &xf,
    const std::vector<std::vector<float>> &of, const std::vector<int> &req,
    int dtype) {
  void *param = mxct::ParseCase(c);
  std::vector<std::vector<uint8_t>> x, out;
  for (const auto &v : xf) x.push_back(mxct::ToBytes(dtype, v));
  for (const auto &v : of) out.push_back(mxct::ToBytes(dtype, v));
  std::vector<mxc__gpu_array> in_a, out_a;
  for (size_t i = 0; i < c.in.size(); ++i)
    in_a.push_back(mxct::HostArray(c.in[i], &x[i], dtype));
  for (size_t i = 0; i < c.out.size(); ++i) {
    out_a.push_back(mxct::HostArray(c.out[i], &out[i], dtype));
  }
  mxc__gpu_call call = {0,
                        param,
                        in_a.data(),
                        (int)in_a.size(),
                        out_a.data(),
                        (int)out_a.size(),
                        req.data(),
                        0,
                        {}};
  mxc__blas_plan p;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(OpOf(c.op), &call, &p, why, sizeof why), MXC_OK)
      << why;
  const char *bad = mxct_blas_host_run(&p, &call, nullptr);
  EXPECT_TRUE(bad == nullptr) << "cuBLAS would refuse a step: " << bad;
  mxc__free(param);
  std::vector<std::vector<float>> res;
  for (const auto &b : out) res.push_back(mxct::FromBytes(dtype, b));
  return res;
}

float Poison() {
  uint32_t bits = 0x7fc0dead;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void CheckCase(const BlasCase &c, std::mt19937 *g,
               int dtype = MXC_DTYPE_FLOAT32) {
  SCOPED_TRACE(c.Name() + " " + mxct::DtypeName(dtype));
  std::vector<std::vector<float>> x, base;
  for (const auto &s : c.in) x.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &s : c.out) base.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &req : mxct::ReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::InvokeOn(c, x, base, req, MXC_DEVICE_CPU, &rc, dtype);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE)
        std::fill(init[i].begin(), init[i].end(), Poison());
    }
    auto got = RunPlan(c, x, init, req, dtype);
    for (size_t i = 0; i < got.size(); ++i) {
      mxct::ExpectNear(
          "output " + std::to_string(i) + " req " + std::to_string(req[i]),
          got[i], cpu[i], dtype);
    }
  }
}

TEST(CudaBlasPlan, ForwardMatchesTheCpu) {
  std::mt19937 g(17);
  for (const auto &c : mxct::ForwardBlasCases()) CheckCase(c, &g);
}

TEST(CudaBlasPlan, BackwardMatchesTheCpu) {
  std::mt19937 g(1717);
  for (const auto &c : mxct::ForwardBlasCases()) {
    CheckCase(mxct::BackwardOf(c), &g);
  }
}

// float16 and bfloat16: the CPU widens, multiplies in float32 and rounds
// once; the plan's steps (cublasGemmEx's semantics) must give the same
// within one ulp of the dtype (blas_cases.h's ExpectNear). The cases with
// an operand of more than 4096 elements are left to float32 (their plans
// do not depend on the dtype, and the host GEMM under ASan is slow).
TEST(CudaBlasPlan, HalfForwardAndBackwardMatchTheCpu) {
  std::mt19937 g(1716);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    for (const auto &c : mxct::ForwardBlasCases()) {
      int64_t most = 0;
      for (const auto &s : c.in) most = std::max(most, mxct::Numel(s));
      if (most > 4096) continue;
      CheckCase(c, &g, dt);
      CheckCase(mxct::BackwardOf(c), &g, dt);
    }
  }
}

// A half plan has one product step per output (one rounding, as the CPU)
// and no GEMV (cuBLAS has no half GEMV); float32 keeps its GEMV.
TEST(CudaBlasPlan, HalfPlansRoundEachOutputOnce) {
  BlasCase f = mxct::BackwardOf(mxct::Fc(5, 1, 1, {3, 4}, {3, 5}));
  BlasCase fwd = mxct::Fc(5, 1, 1, {3, 4}, {3, 5});
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    SCOPED_TRACE(mxct::DtypeName(dt));
    for (const BlasCase *c : {&fwd, &f}) {
      void *param = mxct::ParseCase(*c);
      std::vector<std::vector<uint8_t>> bufs;
      std::vector<mxc__gpu_array> in, out;
      for (const auto &s : c->in) {
        bufs.emplace_back(mxct::Numel(s) * 4);
        in.push_back(mxct::HostArray(s, &bufs.back(), dt));
      }
      for (const auto &s : c->out) {
        bufs.emplace_back(mxct::Numel(s) * 4);
        out.push_back(mxct::HostArray(s, &bufs.back(), dt));
      }
      std::vector<int> req(out.size(), MXC__GPU_REQ_WRITE);
      mxc__gpu_call call = {
          0,          param,           in.data(),  (int)in.size(),
          out.data(), (int)out.size(), req.data(), 0,
          {}};
      mxc__blas_plan p;
      char why[256] = "";
      ASSERT_EQ(mxc__blas_plan_call(OpOf(c->op), &call, &p, why, sizeof why),
                MXC_OK)
          << why;
      EXPECT_EQ(p.dtype, dt);
      int gemv = 0, writes = 0, bias_written = 0;
      for (int i = 0; i < p.n; ++i) {
        const mxc__blas_step &st = p.step[i];
        gemv += st.kind == MXC__BLAS_GEMV;
        if (c != &fwd || st.c != 0 || st.beta != 0.f) continue;
        ++writes;  // the one step that writes the output, the rest add
        bias_written = st.a == MXC__BLAS_ONES || st.b == MXC__BLAS_ONES;
      }
      bool half = dt != MXC_DTYPE_FLOAT32;
      // backward: the bias gradient is a GEMV for float32 only
      EXPECT_EQ(gemv, !half && c == &f ? 1 : 0);
      if (c == &fwd) {
        EXPECT_EQ(writes, 1);
        // half: the exact bias is written first, the product added once
        EXPECT_EQ(bias_written, half ? 1 : 0);
      }
      mxc__free(param);
    }
  }
}

// Arrays of two dtypes, or of a dtype cuBLAS is not asked for, are
// refused before any cuBLAS call.
TEST(CudaBlasPlan, MixedOrOtherDtypesAreRefused) {
  mxc__dot_param p = {0, 0};
  mxc__gpu_array in[2] = {
      {nullptr, 6, 2, {2, 3}, MXC_DTYPE_FLOAT16, 0, 0, 0, {}},
      {nullptr, 12, 2, {3, 4}, MXC_DTYPE_FLOAT32, 0, 0, 0, {}}};
  mxc__gpu_array out = {nullptr, 8, 2, {2, 4}, MXC_DTYPE_FLOAT16, 0, 0, 0, {}};
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &p, in, 2, &out, 1, &req, 0, {}};
  mxc__blas_plan plan;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_ERR_DTYPE);
  EXPECT_NE(std::string(why).find("one dtype"), std::string::npos) << why;
  in[1].dtype = MXC_DTYPE_FLOAT16;
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_OK)
      << why;
  for (auto &a : in) a.dtype = MXC_DTYPE_FLOAT64;
  out.dtype = MXC_DTYPE_FLOAT64;
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_ERR_DTYPE);
}

// The plug-in reads libmxc's parameter structs through its mirrors.
TEST(CudaBlasPlan, ParameterMirrorsMatchTheParser) {
  BlasCase d = mxct::Dot("dot", 1, 0, {2, 3}, {2, 4}, {3, 4});
  auto *dp = static_cast<mxc__dot_param *>(mxct::ParseCase(d));
  EXPECT_EQ(mxc__op_find("dot")->param_size, sizeof *dp);
  EXPECT_EQ(dp->transpose_a, 1);
  EXPECT_EQ(dp->transpose_b, 0);
  mxc__free(dp);
  BlasCase f = mxct::Fc(7, 0, 0, {2, 3}, {2, 7});
  auto *fp = static_cast<mxc__fc_param *>(mxct::ParseCase(f));
  EXPECT_EQ(mxc__op_find("FullyConnected")->param_size, sizeof *fp);
  EXPECT_EQ(fp->num_hidden, 7);
  EXPECT_EQ(fp->no_bias, 1);
  EXPECT_EQ(fp->flatten, 0);
  mxc__free(fp);
}

// cuBLAS's interface takes int sizes: larger ones are refused by name.
TEST(CudaBlasPlan, SizesBeyondIntAreRefused) {
  mxc__dot_param p = {0, 0};
  int64_t big = (int64_t)INT_MAX + 1;
  mxc__gpu_array a = {nullptr, big, 2, {1, big}, MXC_DTYPE_FLOAT32,
                      0,       0,   0, {}};
  mxc__gpu_array b = {nullptr, big, 2, {big, 1}, MXC_DTYPE_FLOAT32,
                      0,       0,   0, {}};
  mxc__gpu_array in[2] = {a, b};
  mxc__gpu_array out = {nullptr, 1, 2, {1, 1}, MXC_DTYPE_FLOAT32, 0, 0, 0, {}};
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &p, in, 2, &out, 1, &req, 0, {}};
  mxc__blas_plan plan;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("32-bit"), std::string::npos) << why;
}

// An array smaller than the shapes say is caught before any cuBLAS call.
TEST(CudaBlasPlan, StepsReachingPastAnArrayAreRefused) {
  mxc__dot_param p = {0, 0};
  mxc__gpu_array in[2] = {
      {nullptr, 6, 2, {2, 3}, MXC_DTYPE_FLOAT32, 0, 0, 0, {}},
      {nullptr, 12, 2, {3, 4}, MXC_DTYPE_FLOAT32, 0, 0, 0, {}}};
  mxc__gpu_array out = {nullptr, 4, 2, {2, 4}, MXC_DTYPE_FLOAT32, 0, 0, 0, {}};
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &p, in, 2, &out, 1, &req, 0, {}};
  mxc__blas_plan plan;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_ERR_INTERNAL);
  EXPECT_NE(std::string(why).find("reach past"), std::string::npos) << why;
  out.size = 8;
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_OK)
      << why;
}

}  // namespace
