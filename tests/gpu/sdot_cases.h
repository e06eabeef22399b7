// Sparse dot cases (csr x dense and transpose(csr) x dense) shared by the
// plan's host test (test_cuda_sdot_plan.cc) and the conformance suite
// (conformance_sdot.cc): random CSR matrices of ~10% density with odd
// shapes, an empty row, nnz 0, zero rows, 1-D and 3-D right-hand sides,
// float32 and float64 values, int32 and int64 indices.
#ifndef MXC_TESTS_GPU_SDOT_CASES_H_
#define MXC_TESTS_GPU_SDOT_CASES_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace mxct {

struct SdotCase {
  int64_t rows, cols;
  std::vector<int64_t> tail;  // the rhs's axes after its first
  int ta;                     // transpose_a
  double density;
  int dtype, index_dtype;
  std::string Name() const {
    std::string s = "csr(" + std::to_string(rows) + "," +
                    std::to_string(cols) + ")" + (ta ? "^T" : "") + " x (k";
    for (int64_t d : tail) s += "," + std::to_string(d);
    return s + ") density " + std::to_string(density) +
           (dtype == MXC_DTYPE_FLOAT64 ? " f64" : " f32") +
           (index_dtype == MXC_DTYPE_INT64 ? " i64" : " i32");
  }
  int64_t K() const { return ta ? rows : cols; }
  int64_t M() const { return ta ? cols : rows; }
  int64_t N() const {
    int64_t n = 1;
    for (int64_t d : tail) n *= d;
    return n;
  }
  std::vector<int64_t> RhsShape() const {
    std::vector<int64_t> s = {K()};
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  }
  std::vector<int64_t> OutShape() const {
    std::vector<int64_t> s = {M()};
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  }
};

inline std::vector<SdotCase> SdotCases() {
  std::vector<SdotCase> v;
  const int f32 = MXC_DTYPE_FLOAT32, f64 = MXC_DTYPE_FLOAT64;
  const int i32 = MXC_DTYPE_INT32, i64 = MXC_DTYPE_INT64;
  for (int ta = 0; ta < 2; ++ta) {
    v.push_back({1, 1, {1}, ta, 1.0, f32, i64});
    v.push_back({7, 13, {5}, ta, 0.1, f32, i64});
    v.push_back({33, 17, {9}, ta, 0.1, f32, i32});
    v.push_back({29, 31, {}, ta, 0.1, f32, i64});        // 1-D rhs
    v.push_back({19, 23, {2, 3}, ta, 0.15, f32, i32});   // 3-D rhs
    v.push_back({17, 11, {6}, ta, 0.0, f32, i64});       // nnz 0
    v.push_back({0, 9, {4}, ta, 0.1, f32, i64});         // zero rows
    v.push_back({9, 0, {4}, ta, 0.1, f32, i32});         // zero columns
    v.push_back({12, 8, {0}, ta, 0.3, f32, i64});        // empty output
    v.push_back({301, 257, {65}, ta, 0.1, f32, i64});
    v.push_back({41, 37, {7}, ta, 0.1, f64, i64});
    v.push_back({40, 21, {3}, ta, 0.2, f64, i32});
  }
  return v;
}

// A CSR matrix as host buffers of its dtypes (row 1 is always empty when
// there are at least 3 rows, to have an empty row in the middle).
struct CsrData {
  std::vector<char> vals, indptr, indices;
  int64_t nnz = 0;
};

inline void PutValue(std::vector<char> *b, int dtype, double v) {
  if (dtype == MXC_DTYPE_FLOAT64) {
    b->insert(b->end(), (char *)&v, (char *)&v + 8);
  } else {
    float f = (float)v;
    b->insert(b->end(), (char *)&f, (char *)&f + 4);
  }
}

inline void PutIndex(std::vector<char> *b, int index_dtype, int64_t v) {
  if (index_dtype == MXC_DTYPE_INT64) {
    b->insert(b->end(), (char *)&v, (char *)&v + 8);
  } else {
    int32_t i = (int32_t)v;
    b->insert(b->end(), (char *)&i, (char *)&i + 4);
  }
}

inline CsrData RandomCsr(const SdotCase &c, std::mt19937 *g) {
  CsrData d;
  std::uniform_real_distribution<double> u(-1.0, 1.0), coin(0.0, 1.0);
  PutIndex(&d.indptr, c.index_dtype, 0);
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t q = 0; q < c.cols; ++q) {
      if (coin(*g) >= c.density || (r == 1 && c.rows >= 3)) continue;
      PutIndex(&d.indices, c.index_dtype, q);
      PutValue(&d.vals, c.dtype, u(*g));
      ++d.nnz;
    }
    PutIndex(&d.indptr, c.index_dtype, d.nnz);
  }
  return d;
}

inline std::vector<char> RandomValues(int64_t n, int dtype, std::mt19937 *g) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<char> b;
  for (int64_t i = 0; i < n; ++i) PutValue(&b, dtype, u(*g));
  return b;
}

inline std::vector<char> PoisonValues(int64_t n, int dtype) {
  std::vector<char> b;
  for (int64_t i = 0; i < n; ++i) PutValue(&b, dtype, std::nan("0xdead"));
  return b;
}

inline double ValueAt(const std::vector<char> &b, int dtype, int64_t i) {
  if (dtype == MXC_DTYPE_FLOAT64) {
    double v;
    std::memcpy(&v, b.data() + i * 8, 8);
    return v;
  }
  float f;
  std::memcpy(&f, b.data() + i * 4, 4);
  return f;
}

// A CSR array of case c holding d on (dev, id); owned by the caller.
inline mxc_ndarray MakeCsr(const SdotCase &c, const CsrData &d, int dev,
                           int id) {
  const int64_t shape[2] = {c.rows, c.cols};
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create_csr(shape, c.dtype, c.index_dtype,
                                   d.vals.data(), d.indptr.data(),
                                   d.indices.data(), d.nnz, dev, id, &a),
            MXC_OK)
      << mxc_last_error();
  return a;
}

inline mxc_ndarray MakeDense(const std::vector<int64_t> &s, int dtype,
                             const std::vector<char> &v, int dev, int id) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), dtype, dev, id, 0, &a),
            MXC_OK)
      << mxc_last_error();
  if (a && !v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size()), MXC_OK)
        << mxc_last_error();
  }
  return a;
}

// dot(csr, rhs) with the case's transpose_a into an output holding init,
// in write mode req, on (dev, id); the output's bytes, *rc the first
// failure.
inline std::vector<char> InvokeSdot(const SdotCase &c, const CsrData &d,
                                    const std::vector<char> &rhs,
                                    const std::vector<char> &init, int req,
                                    int dev, int id, int *rc) {
  mxc_ndarray in[2] = {MakeCsr(c, d, dev, id),
                       MakeDense(c.RhsShape(), c.dtype, rhs, dev, id)};
  mxc_ndarray out = MakeDense(c.OutShape(), c.dtype, init, dev, id);
  const char *keys[] = {"transpose_a"};
  const char *vals[] = {c.ta ? "true" : "false"};
  mxc_op op = nullptr;
  *rc = mxc_op_find("dot", &op);
  if (*rc == MXC_OK) *rc = mxc_op_invoke(op, keys, vals, 1, in, 2, &out, 1, &req);
  if (*rc == MXC_OK) *rc = mxc_ndarray_wait_to_read(out);
  std::vector<char> res(init.size());
  if (*rc == MXC_OK && !res.empty()) {
    *rc = mxc_ndarray_copy_to_host(out, res.data(), res.size());
  }
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  mxc_ndarray_free(out);
  return res;
}

// got against want elementwise within tol * max(1, |want|): both sides
// sum the same products in different orders (the CPU in the value type,
// cuSPARSE and the host stand-in in their own order or in double).
inline void ExpectSdotClose(const std::string &what, const std::vector<char> &got,
                            const std::vector<char> &want, int dtype,
                            double tol) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int64_t n = (int64_t)want.size() / (dtype == MXC_DTYPE_FLOAT64 ? 8 : 4);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i) {
    double g = ValueAt(got, dtype, i), w = ValueAt(want, dtype, i);
    double lim = tol * std::fmax(1.0, std::fabs(w));
    if (!(std::fabs(g - w) <= lim)) {
      ADD_FAILURE() << what << ": element " << i << " is " << g
                    << ", expected " << w;
      ++bad;
    }
  }
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_SDOT_CASES_H_
