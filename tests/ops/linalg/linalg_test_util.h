// Shared helpers of the linalg tests: tolerant comparison against
// references and shape inference from the data shape alone.
#ifndef MXC_TESTS_OPS_LINALG_LINALG_TEST_UTIL_H_
#define MXC_TESTS_OPS_LINALG_LINALG_TEST_UTIL_H_

#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/linalg/infer_shim.h"
#include "tests/ops/op_test_util.h"

namespace mxct {

// Element-wise comparison; float32 results are checked against a float64
// reference computed from the float32-rounded inputs.
inline void expect_close(const std::vector<double> &got,
                         const std::vector<double> &want, int dtype,
                         const std::string &what, double scale = 1.0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double tol = (dtype == MXC_DTYPE_FLOAT32 ? 2e-5 : 1e-11) * scale;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])))
        << what << " element " << i;
  }
}

inline double inner(const std::vector<double> &a,
                    const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

struct InferResult {
  int rc = 0;
  std::string msg;
  std::vector<Shape> in;  // empty Shape with known=false when unknown
  std::vector<bool> known;
  std::vector<Shape> out;
};

inline InferResult infer_from_data(const std::string &op, const Params &p,
                                   int n_in, const Shape &data) {
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  std::vector<int> in_nd(n_in, -1);
  std::vector<int64_t> in_d((size_t)n_in * MXC_MAX_NDIM, 0);
  int out_nd = -1;
  int64_t out_d[MXC_MAX_NDIM] = {0};
  InferResult r;
  r.rc = mxct_infer_from_data(op.c_str(), k.data(), v.data(), (int)k.size(),
                              n_in, data.data(), (int)data.size(), in_nd.data(),
                              in_d.data(), &out_nd, out_d);
  if (r.rc != MXC_OK) r.msg = err();
  for (int i = 0; i < n_in; ++i) {
    r.known.push_back(in_nd[i] >= 0);
    Shape s;
    for (int j = 0; j < in_nd[i]; ++j) s.push_back(in_d[i * MXC_MAX_NDIM + j]);
    r.in.push_back(s);
  }
  Shape o;
  for (int j = 0; j < out_nd; ++j) o.push_back(out_d[j]);
  r.out.push_back(o);
  return r;
}

}  // namespace mxct

#endif  // MXC_TESTS_OPS_LINALG_LINALG_TEST_UTIL_H_
