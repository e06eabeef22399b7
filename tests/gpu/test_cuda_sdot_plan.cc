// The cuSPARSE kernel's plan (backends/cuda/sdot_plan.h) on the host: each
// planned call runs through a host SpMM that follows cuSPARSE's argument
// semantics (sdot_host.h: it refuses dimensions that do not chain, a
// leading dimension below the columns and matrices reaching past their
// arrays) and must match the CPU's sparse dot through the public API, in
// write mode (outputs poisoned) and add mode. Parameters come from
// libmxc's parser. This catches transpose, dimension and beta mistakes
// without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "backends/cuda/sdot_plan.h"
#include "tests/gpu/sdot_cases.h"
#include "tests/gpu/sdot_host.h"

namespace {

using mxct::SdotCase;

void *ParseDot(int ta, int tb) {
  const char *keys[] = {"transpose_a", "transpose_b"};
  const char *vals[] = {ta ? "true" : "false", tb ? "true" : "false"};
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find("dot"), keys, vals, 2, &param),
            MXC_OK)
      << mxc_last_error();
  return param;
}

mxc__gpu_array Dense(const std::vector<int64_t> &s, int dtype, void *p) {
  mxc__gpu_array a = {};
  a.ptr = p;
  a.ndim = (int)s.size();
  a.size = 1;
  for (size_t i = 0; i < s.size(); ++i) a.size *= a.dims[i] = s[i];
  a.dtype = dtype;
  return a;
}

mxc__gpu_array Csr(const SdotCase &c, mxct::CsrData *d) {
  mxc__gpu_array a = Dense({c.rows, c.cols}, c.dtype, d->vals.data());
  a.stype = MXC_STYPE_CSR;
  a.index_dtype = c.index_dtype;
  a.nnz = d->nnz;
  a.aux[0] = d->indptr.data();
  a.aux[1] = d->indices.data();
  return a;
}

// Plans the call and runs the plan on host copies; *out holds C after.
void RunPlan(const SdotCase &c, mxct::CsrData d, std::vector<char> rhs,
             std::vector<char> *out, int req) {
  void *param = ParseDot(c.ta, 0);
  mxc__gpu_array in[2] = {Csr(c, &d), Dense(c.RhsShape(), c.dtype, rhs.data())};
  mxc__gpu_array o = Dense(c.OutShape(), c.dtype, out->data());
  mxc__gpu_call call = {0, param, in, 2, &o, 1, &req, 0, {}};
  mxc__sdot_plan p;
  char why[256] = "";
  ASSERT_EQ(mxc__sdot_plan_make(&call, &p, why, sizeof why), MXC_OK) << why;
  const char *bad = mxct_sdot_host_run(&p, d.indptr.data(), d.indices.data(),
                                       d.vals.data(), rhs.data(), in[1].size,
                                       out->data(), o.size);
  EXPECT_TRUE(bad == nullptr) << "cuSPARSE would refuse: " << bad;
  mxc__free(param);
}

TEST(CudaSdotPlan, MatchesTheCpu) {
  std::mt19937 g(1717);
  for (const SdotCase &c : mxct::SdotCases()) {
    SCOPED_TRACE(c.Name());
    mxct::CsrData d = mxct::RandomCsr(c, &g);
    int64_t n_out = c.M() * c.N();
    auto rhs = mxct::RandomValues(c.K() * c.N(), c.dtype, &g);
    auto base = mxct::RandomValues(n_out, c.dtype, &g);
    for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
      int rc = 0;
      auto cpu = mxct::InvokeSdot(c, d, rhs, base, req, MXC_DEVICE_CPU, 0, &rc);
      ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
      auto got = req == MXC_REQ_WRITE ? mxct::PoisonValues(n_out, c.dtype)
                                      : base;
      RunPlan(c, d, rhs, &got, req);
      double tol = c.dtype == MXC_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
      mxct::ExpectSdotClose("req " + std::to_string(req), got, cpu, c.dtype,
                            tol);
    }
  }
}

// What the plan makes of empty products: no device work, or a memset.
TEST(CudaSdotPlan, EmptyProducts) {
  struct {
    SdotCase c;
    int req, kind;
  } k[] = {
      {{17, 11, {6}, 0, 0.0, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64},
       MXC_REQ_WRITE, MXC__SDOT_ZERO},
      {{17, 11, {6}, 0, 0.0, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64},
       MXC_REQ_ADD, MXC__SDOT_NOTHING},
      {{12, 8, {0}, 1, 0.3, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64},
       MXC_REQ_WRITE, MXC__SDOT_NOTHING},
      {{12, 8, {3}, 1, 0.3, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64},
       MXC_REQ_NULL, MXC__SDOT_NOTHING},
  };
  std::mt19937 g(3);
  for (auto &t : k) {
    SCOPED_TRACE(t.c.Name());
    mxct::CsrData d = mxct::RandomCsr(t.c, &g);
    std::vector<char> rhs(8), out(8);
    void *param = ParseDot(t.c.ta, 0);
    mxc__gpu_array in[2] = {Csr(t.c, &d),
                            Dense(t.c.RhsShape(), t.c.dtype, rhs.data())};
    mxc__gpu_array o = Dense(t.c.OutShape(), t.c.dtype, out.data());
    mxc__gpu_call call = {0, param, in, 2, &o, 1, &t.req, 0, {}};
    mxc__sdot_plan p;
    char why[256] = "";
    ASSERT_EQ(mxc__sdot_plan_make(&call, &p, why, sizeof why), MXC_OK) << why;
    EXPECT_EQ(p.kind, t.kind);
    mxc__free(param);
  }
}

// Calls the CPU operator would not take never reach cuSPARSE.
TEST(CudaSdotPlan, RefusesWhatTheCpuRefuses) {
  SdotCase c = {5, 4, {3}, 0, 0.5, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32};
  std::mt19937 g(5);
  mxct::CsrData d = mxct::RandomCsr(c, &g);
  std::vector<char> buf(1024);
  auto plan = [&](mxc__gpu_array a, mxc__gpu_array b, mxc__gpu_array o,
                  int tb) {
    void *param = ParseDot(0, tb);
    mxc__gpu_array in[2] = {a, b};
    int req = MXC_REQ_WRITE;
    mxc__gpu_call call = {0, param, in, 2, &o, 1, &req, 0, {}};
    mxc__sdot_plan p;
    char why[256] = "";
    int rc = mxc__sdot_plan_make(&call, &p, why, sizeof why);
    EXPECT_NE(std::string(why), "");
    mxc__free(param);
    return rc;
  };
  mxc__gpu_array a = Csr(c, &d);
  mxc__gpu_array b = Dense({4, 3}, MXC_DTYPE_FLOAT32, buf.data());
  mxc__gpu_array o = Dense({5, 3}, MXC_DTYPE_FLOAT32, buf.data());
  EXPECT_EQ(plan(a, Dense({5, 3}, MXC_DTYPE_FLOAT32, buf.data()), o, 0),
            MXC_ERR_SHAPE);
  EXPECT_EQ(plan(a, b, Dense({5, 4}, MXC_DTYPE_FLOAT32, buf.data()), 0),
            MXC_ERR_SHAPE);
  EXPECT_EQ(plan(a, b, o, 1), MXC_ERR_STYPE);
  EXPECT_EQ(plan(Dense({5, 4}, MXC_DTYPE_FLOAT32, buf.data()), b, o, 0),
            MXC_ERR_STYPE);
  EXPECT_EQ(plan(a, Dense({4, 3}, MXC_DTYPE_FLOAT64, buf.data()), o, 0),
            MXC_ERR_DTYPE);
  const int ok[] = {MXC_STYPE_CSR, MXC_STYPE_DEFAULT, -1};
  const int dense_lhs[] = {MXC_STYPE_DEFAULT, MXC_STYPE_CSR, -1};
  const int rsp_out[] = {MXC_STYPE_CSR, MXC_STYPE_DEFAULT,
                         MXC_STYPE_ROW_SPARSE};
  EXPECT_TRUE(mxc__sdot_stypes(ok, 2, 1));
  EXPECT_FALSE(mxc__sdot_stypes(dense_lhs, 2, 1));
  EXPECT_FALSE(mxc__sdot_stypes(rsp_out, 2, 1));
  const int f16[] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT16, -1};
  const int f64[] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64};
  EXPECT_FALSE(mxc__sdot_dtypes(f16, 2, 1));
  EXPECT_TRUE(mxc__sdot_dtypes(f64, 2, 1));
}

}  // namespace
