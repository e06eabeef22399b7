// The cases of the linalg kernels (backends/cuda/la.h), shared by the host
// test of their plans (test_cuda_la_plan.cc) and the conformance cases on
// a GPU (conformance_la.cc): every operator with every combination of its
// transpose / rightside / lower parameters, non-trivial alpha and beta,
// diagonal offsets of both signs, 1x1 and rectangular matrices, an empty
// contraction, batches of one and two leading axes; each forward case's
// backward case (inputs in the _backward_ operator's order). Inputs are
// drawn to suit the operator: symmetric positive-definite for potrf,
// triangles with a dominant diagonal (the other triangle random, which the
// operators must ignore) for trmm/trsm/potri, well-conditioned matrices
// for inverse/det, a positive diagonal for sumlogdiag.
#ifndef MXC_TESTS_GPU_LA_CASES_H_
#define MXC_TESTS_GPU_LA_CASES_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/op_case.h"

namespace mxct {

using LaShape = std::vector<int64_t>;
using LaVec = std::vector<double>;

// How an input is drawn.
enum LaGen { kUniform, kSpd, kTri, kWell, kPosDiag };

struct LaCase {
  std::string op;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<LaShape> in, out;
  std::vector<int> gen;  // per input

  std::string Name() const { return CaseName(*this); }
};

inline int64_t LaNumel(const LaShape &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline LaShape LaCat(const LaShape &batch, std::vector<int64_t> tail) {
  LaShape s = batch;
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

inline const char *LaBool(int v) { return v ? "true" : "false"; }

// One value per matrix: (1,) for a single one, as the CPU gives.
inline LaShape LaPerMatrix(const LaShape &batch) {
  return batch.empty() ? LaShape{1} : batch;
}

inline void LaProducts(std::vector<LaCase> *v) {
  const int64_t mkn[][3] = {{3, 4, 5}, {1, 2, 1}};
  const LaShape batches[] = {{}, {2}};
  for (const auto &d : mkn) {
    for (const auto &bp : batches) {
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          int64_t m = d[0], k = d[1], n = d[2];
          LaShape a = LaCat(bp, ta ? LaShape{k, m} : LaShape{m, k});
          LaShape b = LaCat(bp, tb ? LaShape{n, k} : LaShape{k, n});
          LaShape o = LaCat(bp, {m, n});
          v->push_back({"linalg_gemm",
                        {{"transpose_a", LaBool(ta)},
                         {"transpose_b", LaBool(tb)},
                         {"alpha", "0.75"},
                         {"beta", "-1.5"}},
                        {a, b, o},
                        {o},
                        {kUniform, kUniform, kUniform}});
          v->push_back({"linalg_gemm2",
                        {{"transpose_a", LaBool(ta)},
                         {"transpose_b", LaBool(tb)},
                         {"alpha", "-0.5"}},
                        {a, b},
                        {o},
                        {kUniform, kUniform}});
        }
      }
    }
  }
  // A product over an empty axis: alpha * 0 (+ beta C).
  v->push_back({"linalg_gemm2", {}, {{2, 0}, {0, 3}}, {{2, 3}}, {0, 0}});
  v->push_back({"linalg_gemm",
                {{"beta", "2"}},
                {{2, 0}, {0, 3}, {2, 3}},
                {{2, 3}},
                {0, 0, 0}});
  for (int t = 0; t < 2; ++t) {
    for (const LaShape &bp : {LaShape{}, LaShape{2, 3}}) {
      LaShape a = LaCat(bp, {3, 5});
      int64_t n = t ? 5 : 3;
      v->push_back({"linalg_syrk",
                    {{"transpose", LaBool(t)}, {"alpha", "1.25"}},
                    {a},
                    {LaCat(bp, {n, n})},
                    {kUniform}});
    }
  }
}

inline void LaTriangular(std::vector<LaCase> *v) {
  for (const char *op : {"linalg_trmm", "linalg_trsm"}) {
    for (int bits = 0; bits < 8; ++bits) {
      for (const LaShape &bp : {LaShape{}, LaShape{2}}) {
        int t = bits & 1, right = bits >> 1 & 1, lower = bits >> 2 & 1;
        LaShape b = LaCat(bp, right ? LaShape{3, 4} : LaShape{4, 3});
        v->push_back({op,
                      {{"transpose", LaBool(t)},
                       {"rightside", LaBool(right)},
                       {"lower", LaBool(lower)},
                       {"alpha", "0.5"}},
                      {LaCat(bp, {4, 4}), b},
                      {b},
                      {kTri, kUniform}});
      }
    }
  }
  for (int lower = 0; lower < 2; ++lower) {
    for (int64_t n : {1, 4}) {
      for (const LaShape &bp : {LaShape{}, LaShape{3}}) {
        LaShape a = LaCat(bp, {n, n});
        v->push_back({"linalg_potrf", {{"lower", LaBool(lower)}}, {a}, {a},
                      {kSpd}});
        v->push_back({"linalg_potri", {{"lower", LaBool(lower)}}, {a}, {a},
                      {kTri}});
      }
    }
  }
}

inline void LaDiagonals(std::vector<LaCase> *v) {
  for (const LaShape &bp : {LaShape{}, LaShape{2}}) {
    for (int64_t n : {1, 4}) {
      v->push_back({"linalg_sumlogdiag", {}, {LaCat(bp, {n, n})},
                    {LaPerMatrix(bp)}, {kPosDiag}});
    }
    for (int64_t off : {0, 1, -2}) {
      v->push_back({"linalg_extractdiag", {{"offset", std::to_string(off)}},
                    {LaCat(bp, {4, 4})}, {LaCat(bp, {4 - std::abs(off)})},
                    {kUniform}});
    }
    for (int64_t off : {0, 2, -1}) {
      int64_t n = 3 + std::abs(off);
      v->push_back({"linalg_makediag", {{"offset", std::to_string(off)}},
                    {LaCat(bp, {3})}, {LaCat(bp, {n, n})}, {kUniform}});
    }
    for (int64_t n : {1, 3, 6}) {
      LaShape a = LaCat(bp, {n, n});
      v->push_back({"linalg_inverse", {}, {a}, {a}, {kWell}});
      v->push_back({"linalg_det", {}, {a}, {LaPerMatrix(bp)}, {kWell}});
      v->push_back({"linalg_slogdet", {}, {a},
                    {LaPerMatrix(bp), LaPerMatrix(bp)}, {kWell}});
    }
  }
}

inline std::vector<LaCase> LaForwardCases() {
  std::vector<LaCase> v;
  LaProducts(&v);
  LaTriangular(&v);
  LaDiagonals(&v);
  return v;
}

// The _backward_ case of forward case f: the output gradients first, then
// what la_ops.c's backward reads (forward inputs and outputs, by name);
// outputs shaped like the forward inputs.
inline LaCase LaBackwardOf(const LaCase &f) {
  LaCase b = {"_backward_" + f.op, f.params, {}, f.in, {}};
  for (const auto &s : f.out) b.in.push_back(s), b.gen.push_back(kUniform);
  auto in = [&](size_t i) { b.in.push_back(f.in[i]), b.gen.push_back(f.gen[i]); };
  auto out = [&](int gen) { b.in.push_back(f.out[0]), b.gen.push_back(gen); };
  const std::string &op = f.op;
  if (op == "linalg_gemm" || op == "linalg_gemm2" || op == "linalg_trmm") {
    for (size_t i = 0; i < f.in.size(); ++i) in(i);
  } else if (op == "linalg_trsm") {
    in(0), in(1), out(kUniform);
  } else if (op == "linalg_potrf") {
    out(kTri);  // the factor: inverted by the gradient
  } else if (op == "linalg_potri" || op == "linalg_det") {
    in(0), out(kUniform);
  } else if (op == "linalg_inverse") {
    out(kUniform);
  } else if (op == "linalg_syrk" || op == "linalg_sumlogdiag" ||
             op == "linalg_slogdet") {
    in(0);
  }  // extractdiag, makediag: the gradient alone
  return b;
}

// Values for an input of shape s drawn as gen says (each matrix of the
// batch: the last two axes).
inline LaVec LaInput(const LaShape &s, int gen, std::mt19937 *g) {
  std::uniform_real_distribution<double> u(-1, 1);
  LaVec v((size_t)LaNumel(s));
  for (auto &x : v) x = u(*g);
  if (gen == kUniform || s.size() < 2) return v;
  int64_t n = s.back(), nn = n * n;
  for (size_t m = 0; m * nn < v.size(); ++m) {
    double *a = v.data() + m * nn;
    if (gen == kSpd) {  // M M^T + n I from the random M
      LaVec t(a, a + nn);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double s2 = i == j ? (double)n : 0;
          for (int64_t k = 0; k < n; ++k) s2 += t[i * n + k] * t[j * n + k];
          a[i * n + j] = s2;
        }
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        double &d = a[i * n + i];
        d = gen == kPosDiag ? 0.5 + std::fabs(d) : d + (d < 0 ? -1 : 1) * n;
      }
    }
  }
  return v;
}

// v as the bytes of a float32 or float64 array.
inline std::vector<uint8_t> LaBytes(int dt, const LaVec &v) {
  std::vector<uint8_t> b(v.size() * (dt == MXC_DTYPE_FLOAT64 ? 8 : 4));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == MXC_DTYPE_FLOAT64) {
      std::memcpy(&b[i * 8], &v[i], 8);
    } else {
      float f = (float)v[i];
      std::memcpy(&b[i * 4], &f, 4);
    }
  }
  return b;
}

inline LaVec LaValues(int dt, const std::vector<uint8_t> &b) {
  size_t es = dt == MXC_DTYPE_FLOAT64 ? 8 : 4;
  LaVec v(b.size() / es);
  for (size_t i = 0; i < v.size(); ++i) {
    if (es == 8) {
      std::memcpy(&v[i], &b[i * 8], 8);
    } else {
      float f;
      std::memcpy(&f, &b[i * 4], 4);
      v[i] = f;
    }
  }
  return v;
}

// Runs c on device dev through the public API: inputs x, outputs
// pre-filled with init, write modes req, arrays of dtype dt. The outputs'
// values, or *rc (and the thread's error).
inline std::vector<LaVec> LaInvoke(const LaCase &c, const std::vector<LaVec> &x,
                                   const std::vector<LaVec> &init,
                                   const std::vector<int> &req, int dev,
                                   int dt, int *rc) {
  std::vector<mxc_ndarray> in, out;
  auto make = [dev, dt](const LaShape &s, const LaVec &v) {
    mxc_ndarray a = nullptr;
    EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), dt, dev, 0, 0, &a),
              MXC_OK)
        << mxc_last_error();
    std::vector<uint8_t> b = LaBytes(dt, v);
    if (!b.empty()) {
      EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK)
          << mxc_last_error();
    }
    return a;
  };
  for (size_t i = 0; i < c.in.size(); ++i) in.push_back(make(c.in[i], x[i]));
  for (size_t i = 0; i < c.out.size(); ++i) out.push_back(make(c.out[i], init[i]));
  std::vector<const char *> keys, vals;
  for (const auto &p : c.params) {
    keys.push_back(p.first.c_str());
    vals.push_back(p.second.c_str());
  }
  mxc_op op = nullptr;
  *rc = mxc_op_find(c.op.c_str(), &op);
  if (*rc == MXC_OK) {
    *rc = mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(),
                        in.data(), (int)in.size(), out.data(), (int)out.size(),
                        req.data());
  }
  std::vector<LaVec> res;
  for (size_t i = 0; *rc == MXC_OK && i < out.size(); ++i) {
    *rc = mxc_ndarray_wait_to_read(out[i]);
    std::vector<uint8_t> b = LaBytes(dt, init[i]);
    if (*rc == MXC_OK && !b.empty()) {
      *rc = mxc_ndarray_copy_to_host(out[i], b.data(), b.size());
    }
    res.push_back(LaValues(dt, b));
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  for (mxc_ndarray a : out) mxc_ndarray_free(a);
  return res;
}

// Both devices compute in float64 and round once (backends/cuda/
// la_plan.h), differing only in summation order and LU against the CPU's
// Gauss-Jordan (~1e-13 relative with these well-conditioned inputs): a
// float32 result may land on the neighbouring float, a float64 one a few
// hundred ulps away at most. Relative (absolute below 1) 2e-6 for
// float32 (~16 ulps) and 1e-9 for float64 catch any wrong term or
// transpose. Non-finite values must agree in kind (NaN for NaN).
inline void LaExpectNear(const std::string &what, const LaVec &got,
                         const LaVec &cpu, int dt) {
  ASSERT_EQ(got.size(), cpu.size()) << what;
  double rel = dt == MXC_DTYPE_FLOAT64 ? 1e-9 : 2e-6;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = std::isnan(cpu[i]) ? std::isnan(got[i])
              : std::isinf(cpu[i])
                  ? got[i] == cpu[i]
                  : std::fabs(got[i] - cpu[i]) <=
                        rel * std::fmax(1.0, std::fabs(cpu[i]));
    if (!ok) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                    << ", the CPU's " << cpu[i];
      return;
    }
  }
}

// Write modes tried per case: all written, all added, and with several
// outputs each alone (the others left alone).
inline std::vector<std::vector<int>> LaReqSets(int n_out) {
  std::vector<std::vector<int>> v = {std::vector<int>(n_out, MXC_REQ_WRITE),
                                     std::vector<int>(n_out, MXC_REQ_ADD)};
  for (int i = 0; n_out > 1 && i < n_out; ++i) {
    std::vector<int> r(n_out, MXC_REQ_NULL);
    r[i] = i % 2 ? MXC_REQ_ADD : MXC_REQ_WRITE;
    v.push_back(r);
  }
  return v;
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_LA_CASES_H_
