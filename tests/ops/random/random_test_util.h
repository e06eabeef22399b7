// Helpers for the random and optimizer tests: invoking into given output
// handles (in-place updates), raw bytes of arrays (bitwise comparisons),
// and moment checks with bounds in standard errors.
#ifndef MXC_TESTS_OPS_RANDOM_RANDOM_TEST_UTIL_H_
#define MXC_TESTS_OPS_RANDOM_RANDOM_TEST_UTIL_H_

#include <cmath>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {

// Invokes `name` with the given output slots (nullptr: created, then
// stored back into the slot). reqs empty: all MXC_REQ_WRITE.
inline int invoke_into(const std::string &name,
                       const std::vector<mxc_ndarray> &in,
                       std::vector<mxc_ndarray> *out, const Params &p = {},
                       const std::vector<int> &reqs = {}) {
  mxc_op op = nullptr;
  int rc = mxc_op_find(name.c_str(), &op);
  if (rc != MXC_OK) return rc;
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  return mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                       (int)in.size(), out->data(), (int)out->size(),
                       reqs.empty() ? nullptr : reqs.data());
}

// The raw contents of an array (waits for pending writes).
inline std::vector<unsigned char> bytes(const Arr &a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK);
  std::vector<unsigned char> b((size_t)n * mxc_dtype_size(a.dtype()));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, b.data(), b.size()), MXC_OK) << err();
  return b;
}

// Draws from a sampler without inputs and returns the values.
inline std::vector<double> draw(const std::string &name, const Params &p) {
  auto out = invoke(name, {}, p);
  if (out.empty()) return {};
  return read(out[0]);
}

// Sample mean within 5 standard errors of `mean`, and sample variance
// within 5 standard errors of `var` (the standard error of a variance
// estimate is sqrt((mu4 - var^2) / n), mu4 the central fourth moment).
inline void check_moments(const std::vector<double> &x, double mean, double var,
                          double mu4, const std::string &what) {
  ASSERT_FALSE(x.empty()) << what;
  double n = (double)x.size(), m = 0, v = 0;
  for (double xi : x) m += xi;
  m /= n;
  for (double xi : x) v += (xi - m) * (xi - m);
  v /= n - 1;
  EXPECT_NEAR(m, mean, 5 * std::sqrt(var / n) + 1e-12) << what << " mean";
  EXPECT_NEAR(v, var, 5 * std::sqrt((mu4 - var * var) / n) + 1e-12)
      << what << " variance";
}

}  // namespace mxct

#endif  // MXC_TESTS_OPS_RANDOM_RANDOM_TEST_UTIL_H_
