// Helpers shared by the layer API's tests (test_nn.cc, test_rnn_layers.cc):
// arrays to and from host doubles, and blocks made from key/value lists.
// Failures are reported through GoogleTest's EXPECT_* where they happen.
#ifndef MXC_TESTS_NN_NN_TEST_UTIL_H_
#define MXC_TESTS_NN_NN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "mxc/mxc.h"

#define OK(x) ASSERT_EQ((x), MXC_OK) << mxc_last_error()

namespace nn_test {

inline std::string tmp_path(const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// A new array of `shape` holding v (float32 or float64); the caller frees it.
inline mxc_ndarray make(const std::vector<int64_t> &shape,
                        const std::vector<double> &v,
                        int dtype = MXC_DTYPE_FLOAT32) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << mxc_last_error();
  if (dtype == MXC_DTYPE_FLOAT64) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * 8), MXC_OK);
  } else {
    std::vector<float> f(v.begin(), v.end());
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, f.data(), f.size() * 4), MXC_OK);
  }
  return a;
}

// The values of a float32 or float64 array, as doubles.
inline std::vector<double> host(mxc_ndarray a) {
  int64_t n = 0;
  int dt = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  EXPECT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  std::vector<double> out((size_t)n);
  if (dt == MXC_DTYPE_FLOAT64) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, out.data(), out.size() * 8), MXC_OK)
        << mxc_last_error();
  } else {
    std::vector<float> f((size_t)n);
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, f.data(), f.size() * 4), MXC_OK)
        << mxc_last_error();
    out.assign(f.begin(), f.end());
  }
  return out;
}

inline std::vector<int64_t> shape_of(mxc_ndarray a) {
  int nd = 0;
  const int64_t *d = nullptr;
  EXPECT_EQ(mxc_ndarray_shape(a, &nd, &d), MXC_OK);
  return std::vector<int64_t>(d, d + nd);
}

// A block of `kind` configured by kv = {key, value, key, value, ...}.
inline mxc_block block(const char *kind, std::vector<const char *> kv,
                       const char *name = nullptr) {
  std::vector<const char *> k, v;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    k.push_back(kv[i]);
    v.push_back(kv[i + 1]);
  }
  mxc_block b = nullptr;
  EXPECT_EQ(mxc_block_create(kind, name, k.data(), v.data(), (int)k.size(), &b),
            MXC_OK)
      << mxc_last_error();
  return b;
}

}  // namespace nn_test

#endif  // MXC_TESTS_NN_NN_TEST_UTIL_H_
