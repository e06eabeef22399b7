// The cases of the cuBLAS kernels (backends/cuda/blas.h), shared by the
// host test of their plans (test_cuda_blas_plan.cc) and the conformance
// case on a GPU (test_gpu_conformance_blas.cc): operator, parameters and
// input shapes, with 1-row and 1-column matrices, every transpose, 1-D
// and N-D dot, an empty contraction and an empty output. The backward
// cases are derived from the forward ones (inputs: the output gradient,
// then the forward inputs; outputs shaped like the forward inputs).
#ifndef MXC_TESTS_GPU_BLAS_CASES_H_
#define MXC_TESTS_GPU_BLAS_CASES_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/half_test_util.h"
#include "tests/gpu/op_case.h"

namespace mxct {

using Shape = std::vector<int64_t>;

struct BlasCase {
  std::string op;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<Shape> in, out;

  std::string Name() const { return CaseName(*this); }
};

inline int64_t Numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline BlasCase Dot(const char *op, int ta, int tb, Shape a, Shape b,
                    Shape out) {
  return {op,
          {{"transpose_a", ta ? "true" : "false"},
           {"transpose_b", tb ? "true" : "false"}},
          {a, b},
          {out}};
}

inline BlasCase Fc(int64_t h, int bias, int flatten, Shape x, Shape out) {
  int64_t feat = flatten ? Numel(Shape(x.begin() + 1, x.end())) : x.back();
  BlasCase c = {"FullyConnected",
                {{"num_hidden", std::to_string(h)},
                 {"no_bias", bias ? "false" : "true"},
                 {"flatten", flatten ? "true" : "false"}},
                {x, {h, feat}},
                {out}};
  if (bias) c.in.push_back({h});
  return c;
}

// Forward cases: (m, k) x (k, n) stored as the transposes ask.
inline std::vector<BlasCase> ForwardBlasCases() {
  std::vector<BlasCase> v;
  const int64_t mkn[][3] = {{3, 4, 5},  {1, 4, 5}, {3, 4, 1},    {1, 1, 1},
                            {7, 33, 9}, {2, 0, 3}, {65, 257, 33}};
  for (const auto &d : mkn) {
    int64_t m = d[0], k = d[1], n = d[2];
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        Shape a = ta ? Shape{k, m} : Shape{m, k};
        Shape b = tb ? Shape{n, k} : Shape{k, n};
        v.push_back(Dot("dot", ta, tb, a, b, {m, n}));
        v.push_back(Dot("batch_dot", ta, tb, {3, a[0], a[1]}, {3, b[0], b[1]},
                        {3, m, n}));
      }
    }
  }
  // 1-D and N-D dot (ops/linalg/dot.c: a tensordot over one axis).
  v.push_back(Dot("dot", 0, 0, {6}, {6}, {1}));
  v.push_back(Dot("dot", 0, 0, {6}, {6, 4}, {4}));
  v.push_back(Dot("dot", 0, 0, {3, 6}, {6}, {3}));
  v.push_back(Dot("dot", 1, 0, {6}, {6, 4}, {4}));
  v.push_back(Dot("dot", 0, 1, {3, 6}, {6}, {3}));
  v.push_back(Dot("dot", 0, 0, {2, 3, 4}, {4, 5}, {2, 3, 5}));
  v.push_back(Dot("dot", 0, 0, {2, 3, 4}, {4, 2, 5}, {2, 3, 2, 5}));
  v.push_back(Dot("dot", 1, 0, {4, 2, 3}, {4, 5}, {2, 3, 5}));
  v.push_back(Dot("dot", 0, 1, {3, 4}, {5, 2, 4}, {3, 5, 2}));
  v.push_back(Dot("dot", 1, 1, {4, 3, 2}, {2, 5, 4}, {3, 2, 2, 5}));
  v.push_back(Dot("dot", 0, 0, {0, 4}, {4, 5}, {0, 5}));
  v.push_back(Dot("batch_dot", 0, 0, {2, 2, 3, 4}, {2, 2, 4, 5}, {2, 2, 3, 5}));
  v.push_back(Dot("batch_dot", 1, 1, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}));
  v.push_back(Dot("batch_dot", 0, 0, {0, 3, 4}, {0, 4, 5}, {0, 3, 5}));
  for (int bias = 0; bias < 2; ++bias) {
    v.push_back(Fc(5, bias, 1, {3, 4}, {3, 5}));
    v.push_back(Fc(5, bias, 1, {2, 3, 4}, {2, 5}));
    v.push_back(Fc(5, bias, 0, {2, 3, 4}, {2, 3, 5}));
    v.push_back(Fc(1, bias, 1, {1, 7}, {1, 1}));
    v.push_back(Fc(6, bias, 1, {9, 1}, {9, 6}));
    v.push_back(Fc(17, bias, 1, {33, 40}, {33, 17}));
    v.push_back(Fc(4, bias, 1, {0, 3}, {0, 4}));
  }
  return v;
}

inline BlasCase BackwardOf(const BlasCase &f) {
  BlasCase b = {"_backward_" + f.op, f.params, {f.out[0]}, f.in};
  for (const auto &x : f.in) b.in.push_back(x);
  return b;
}

// Write modes tried per case: every output written, every output added
// to, and each output alone (the other left alone).
inline std::vector<std::vector<int>> ReqSets(int n_out) {
  std::vector<std::vector<int>> v = {std::vector<int>(n_out, MXC_REQ_WRITE),
                                     std::vector<int>(n_out, MXC_REQ_ADD)};
  for (int i = 0; n_out > 1 && i < n_out; ++i) {
    std::vector<int> r(n_out, MXC_REQ_NULL);
    r[i] = i % 2 ? MXC_REQ_ADD : MXC_REQ_WRITE;
    v.push_back(r);
  }
  return v;
}

inline std::vector<float> Uniform(int64_t n, std::mt19937 *g) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v((size_t)n);
  for (auto &x : v) x = u(*g);
  return v;
}

// float32 products summed in another order (cuBLAS's blocking and FMA,
// or a double-precision host reference) against the CPU's GEMM: with
// inputs in [-1, 1] and at most 300 terms the difference is ~1e-5 at worst, so
// a relative (or, near 0, absolute) 1e-4 catches any wrong term while allowing
// any summation order.
// float16 / bfloat16 (dtype): both sides round a float32 result to half
// once, from float32 sums in different orders, so a result near a
// rounding boundary may land on the neighbouring half value: one ulp of
// the dtype at the result (no finer than at 1, see UlpAtLeast1). That
// also covers FullyConnected's add mode, where the GPU rounds the old
// value plus the bias before the product (blas_plan.h). A wrong term
// moves a result by far more.
inline void ExpectNear(const std::string &what, const std::vector<float> &got,
                       const std::vector<float> &cpu,
                       int dtype = MXC_DTYPE_FLOAT32) {
  ASSERT_EQ(got.size(), cpu.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    float tol = IsHalf(dtype) ? UlpAtLeast1(dtype, cpu[i])
                              : 1e-4f * std::fmax(1.f, std::fabs(cpu[i]));
    if (!(std::fabs(got[i] - cpu[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                    << ", the CPU's " << cpu[i];
      return;
    }
  }
}

// Runs c on device dev: inputs x, outputs pre-filled with init, write
// modes req, every array of `dtype` (half types: the values rounded to it
// on the way in, half_test_util.h). The outputs' values, or *rc (and the
// thread's error).
inline std::vector<std::vector<float>> InvokeOn(
    const BlasCase &c, const std::vector<std::vector<float>> &x,
    const std::vector<std::vector<float>> &init, const std::vector<int> &req,
    int dev, int *rc, int dtype = MXC_DTYPE_FLOAT32) {
  std::vector<mxc_ndarray> in, out;
  auto make = [dev, dtype](const Shape &s, const std::vector<float> &v) {
    mxc_ndarray a = nullptr;
    EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), dtype, dev, 0, 0, &a),
              MXC_OK)
        << mxc_last_error();
    if (!v.empty()) {
      std::vector<uint8_t> b = ToBytes(dtype, v);
      EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK)
          << mxc_last_error();
    }
    return a;
  };
  for (size_t i = 0; i < c.in.size(); ++i) in.push_back(make(c.in[i], x[i]));
  for (size_t i = 0; i < c.out.size(); ++i) {
    out.push_back(make(c.out[i], init[i]));
  }
  std::vector<const char *> keys, vals;
  for (const auto &p : c.params) {
    keys.push_back(p.first.c_str());
    vals.push_back(p.second.c_str());
  }
  mxc_op op = nullptr;
  *rc = mxc_op_find(c.op.c_str(), &op);
  if (*rc == MXC_OK) {
    *rc =
        mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(), in.data(),
                      (int)in.size(), out.data(), (int)out.size(), req.data());
  }
  std::vector<std::vector<float>> res;
  for (size_t i = 0; *rc == MXC_OK && i < out.size(); ++i) {
    *rc = mxc_ndarray_wait_to_read(out[i]);
    std::vector<uint8_t> b(init[i].size() * ElemSize(dtype));
    if (*rc == MXC_OK && !b.empty()) {
      *rc = mxc_ndarray_copy_to_host(out[i], b.data(), b.size());
    }
    res.push_back(FromBytes(dtype, b));
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  for (mxc_ndarray a : out) mxc_ndarray_free(a);
  return res;
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_BLAS_CASES_H_
