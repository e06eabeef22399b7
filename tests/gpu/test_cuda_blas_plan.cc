// The cuBLAS kernels' plans (backends/cuda/blas_plan.h) on the host: each
// planned step runs through a host GEMM/GEMV that follows cuBLAS's
// column-major argument semantics (and refuses what cuBLAS would refuse:
// a leading dimension below the stored rows, a matrix reaching past its
// array), and the outputs must match the CPU operators of libmxc through
// the public API. Parameters come from libmxc's own parser, so the
// plug-in's mirrors of the parameter structs are checked too. This is
// what catches transpose and layout mistakes without a GPU.
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

namespace {

using mxct::BlasCase;

struct Buf {
  float *p;
  int64_t size;
};

int64_t Extent(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

// What cuBLAS checks (CUBLAS_STATUS_INVALID_VALUE), plus every matrix of
// every batch inside its array. "" when the step is valid.
std::string CheckGemm(const mxc__blas_step &s, Buf a, Buf b, Buf c) {
  int64_t ra = s.trans_a ? s.k : s.m, ca = s.trans_a ? s.m : s.k;
  int64_t rb = s.trans_b ? s.n : s.k, cb = s.trans_b ? s.k : s.n;
  if (s.m < 0 || s.n < 0 || s.k < 0 || s.batch < 1) return "sizes";
  if (s.lda < std::max<int64_t>(1, ra)) return "lda < rows of A";
  if (s.ldb < std::max<int64_t>(1, rb)) return "ldb < rows of B";
  if (s.ldc < std::max<int64_t>(1, s.m)) return "ldc < m";
  int64_t last = s.batch - 1;
  if (s.stride_a * last + Extent(ra, ca, s.lda) > a.size) return "A overrun";
  if (s.stride_b * last + Extent(rb, cb, s.ldb) > b.size) return "B overrun";
  if (s.stride_c * last + Extent(s.m, s.n, s.ldc) > c.size) return "C overrun";
  return "";
}

// cublasSgemm(StridedBatched) with alpha = 1: C = op(A) op(B) + beta C,
// column-major; beta = 0 never reads C (cuBLAS's rule: C may hold NaN).
void HostGemm(const mxc__blas_step &s, const float *A, const float *B,
              float *C) {
  for (int64_t t = 0; t < s.batch; ++t) {
    const float *a = A + t * s.stride_a, *b = B + t * s.stride_b;
    float *c = C + t * s.stride_c;
    for (int64_t j = 0; j < s.n; ++j) {
      for (int64_t i = 0; i < s.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < s.k; ++l) {
          double x = s.trans_a ? a[l + i * s.lda] : a[i + l * s.lda];
          double y = s.trans_b ? b[j + l * s.ldb] : b[l + j * s.ldb];
          acc += x * y;
        }
        float &o = c[i + j * s.ldc];
        o = s.beta == 0.f ? (float)acc : (float)(acc + s.beta * o);
      }
    }
  }
}

// cublasSgemv with alpha = 1, incx = incy = 1: y = op(A) x + beta y.
std::string HostGemv(const mxc__blas_step &s, Buf a, Buf x, Buf y) {
  int64_t nx = s.trans_a ? s.m : s.n, ny = s.trans_a ? s.n : s.m;
  if (s.lda < std::max<int64_t>(1, s.m)) return "lda < m";
  if (Extent(s.m, s.n, s.lda) > a.size || nx > x.size || ny > y.size) {
    return "overrun";
  }
  for (int64_t r = 0; r < ny; ++r) {
    double acc = 0;
    for (int64_t l = 0; l < nx; ++l) {
      acc += (double)(s.trans_a ? a.p[l + r * s.lda] : a.p[r + l * s.lda]) *
             x.p[l];
    }
    y.p[r] = s.beta == 0.f ? (float)acc : (float)(acc + s.beta * y.p[r]);
  }
  return "";
}

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

// The parameters as libmxc parses them for the plug-in (mxc__free).
void *Parse(const BlasCase &c) {
  std::vector<const char *> keys, vals;
  for (const auto &p : c.params) {
    keys.push_back(p.first.c_str());
    vals.push_back(p.second.c_str());
  }
  const mxc__op *op = mxc__op_find(c.op.c_str());
  void *param = nullptr;
  EXPECT_NE(op, nullptr) << c.op;
  EXPECT_EQ(mxc__op_parse_params(op, keys.data(), vals.data(),
                                 (int)keys.size(), &param),
            MXC_OK)
      << mxc_last_error();
  return param;
}

mxc__gpu_array Array(const mxct::Shape &s, std::vector<float> *v) {
  mxc__gpu_array a = {};
  a.ptr = v->data();
  a.size = mxct::Numel(s);
  a.ndim = (int)s.size();
  for (size_t i = 0; i < s.size(); ++i) a.dims[i] = s[i];
  a.dtype = MXC_DTYPE_FLOAT32;
  return a;
}

void RunStep(const mxc__blas_step &s, const mxc__gpu_call &call,
             std::vector<float> *ones) {
  auto buf = [&](int i) {
    if (i == MXC__BLAS_ONES) return Buf{ones->data(), (int64_t)ones->size()};
    return Buf{(float *)call.in[i].ptr, call.in[i].size};
  };
  Buf c = {(float *)call.out[s.c].ptr, call.out[s.c].size};
  if (s.kind == MXC__BLAS_ZERO) {
    std::fill(c.p, c.p + c.size, 0.f);
  } else if (s.kind == MXC__BLAS_GEMV) {
    EXPECT_EQ(HostGemv(s, buf(s.a), buf(s.b), c), "");
  } else {
    std::string bad = CheckGemm(s, buf(s.a), buf(s.b), c);
    EXPECT_EQ(bad, "") << "cuBLAS would refuse this step";
    if (bad.empty()) HostGemm(s, buf(s.a).p, buf(s.b).p, c.p);
  }
}

// Plans case c and runs the plan on host copies of x and init.
std::vector<std::vector<float>> RunPlan(const BlasCase &c,
                                        std::vector<std::vector<float>> x,
                                        std::vector<std::vector<float>> out,
                                        const std::vector<int> &req) {
  void *param = Parse(c);
  std::vector<mxc__gpu_array> in_a, out_a;
  for (size_t i = 0; i < c.in.size(); ++i) in_a.push_back(Array(c.in[i], &x[i]));
  for (size_t i = 0; i < c.out.size(); ++i) {
    out_a.push_back(Array(c.out[i], &out[i]));
  }
  mxc__gpu_call call = {0,           param,          in_a.data(), (int)in_a.size(),
                        out_a.data(), (int)out_a.size(), req.data()};
  mxc__blas_plan p;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(OpOf(c.op), &call, &p, why, sizeof why),
            MXC_OK)
      << why;
  std::vector<float> ones((size_t)p.ones, 1.f);
  for (int i = 0; i < p.n; ++i) RunStep(p.step[i], call, &ones);
  mxc__free(param);
  return out;
}

float Poison() {
  uint32_t bits = 0x7fc0dead;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void CheckCase(const BlasCase &c, std::mt19937 *g) {
  SCOPED_TRACE(c.Name());
  std::vector<std::vector<float>> x, base;
  for (const auto &s : c.in) x.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &s : c.out) base.push_back(mxct::Uniform(mxct::Numel(s), g));
  for (const auto &req : mxct::ReqSets((int)c.out.size())) {
    int rc = 0;
    auto cpu = mxct::InvokeOn(c, x, base, req, MXC_DEVICE_CPU, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    auto init = base;
    for (size_t i = 0; i < req.size(); ++i) {
      if (req[i] == MXC_REQ_WRITE) std::fill(init[i].begin(), init[i].end(), Poison());
    }
    auto got = RunPlan(c, x, init, req);
    for (size_t i = 0; i < got.size(); ++i) {
      mxct::ExpectNear("output " + std::to_string(i) + " req " +
                           std::to_string(req[i]),
                       got[i], cpu[i]);
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

// The plug-in reads libmxc's parameter structs through its mirrors.
TEST(CudaBlasPlan, ParameterMirrorsMatchTheParser) {
  BlasCase d = mxct::Dot("dot", 1, 0, {2, 3}, {2, 4}, {3, 4});
  auto *dp = static_cast<mxc__cuda_dot_param *>(Parse(d));
  EXPECT_EQ(mxc__op_find("dot")->param_size, sizeof *dp);
  EXPECT_EQ(dp->transpose_a, 1);
  EXPECT_EQ(dp->transpose_b, 0);
  mxc__free(dp);
  BlasCase f = mxct::Fc(7, 0, 0, {2, 3}, {2, 7});
  auto *fp = static_cast<mxc__cuda_fc_param *>(Parse(f));
  EXPECT_EQ(mxc__op_find("FullyConnected")->param_size, sizeof *fp);
  EXPECT_EQ(fp->num_hidden, 7);
  EXPECT_EQ(fp->no_bias, 1);
  EXPECT_EQ(fp->flatten, 0);
  mxc__free(fp);
}

// cuBLAS's interface takes int sizes: larger ones are refused by name.
TEST(CudaBlasPlan, SizesBeyondIntAreRefused) {
  mxc__cuda_dot_param p = {0, 0};
  int64_t big = (int64_t)INT_MAX + 1;
  mxc__gpu_array a = {nullptr, big, 2, {1, big}, MXC_DTYPE_FLOAT32};
  mxc__gpu_array b = {nullptr, big, 2, {big, 1}, MXC_DTYPE_FLOAT32};
  mxc__gpu_array in[2] = {a, b};
  mxc__gpu_array out = {nullptr, 1, 2, {1, 1}, MXC_DTYPE_FLOAT32};
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &p, in, 2, &out, 1, &req};
  mxc__blas_plan plan;
  char why[256] = "";
  EXPECT_EQ(mxc__blas_plan_call(MXC__BLAS_DOT, &c, &plan, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("32-bit"), std::string::npos) << why;
}

}  // namespace
