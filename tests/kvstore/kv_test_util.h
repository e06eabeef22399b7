// Array helpers shared by the KVStore tests (test_kvstore.cc, one
// process; test_dist.cc, under mpirun): dense CPU arrays made, filled and
// read back through the public API, failures reported with mxc's message.
#ifndef MXC_TESTS_KVSTORE_KV_TEST_UTIL_H_
#define MXC_TESTS_KVSTORE_KV_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace kvtest {

inline std::string err() { return mxc_last_error(); }

inline mxc_ndarray make(const std::vector<int64_t> &shape, int dtype) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << err();
  return a;
}

template <class T>
mxc_ndarray make_with(const std::vector<int64_t> &shape, int dtype,
                      const std::vector<T> &v) {
  mxc_ndarray a = make(shape, dtype);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(T)),
            MXC_OK)
      << err();
  return a;
}

// A 1-D array holding v.
template <class T>
mxc_ndarray make_with(int dtype, const std::vector<T> &v) {
  return make_with<T>({(int64_t)v.size()}, dtype, v);
}

template <class T>
std::vector<T> read(mxc_ndarray a, size_t n) {
  std::vector<T> out(n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, out.data(), n * sizeof(T)), MXC_OK)
      << err();
  return out;
}

}  // namespace kvtest

#endif  // MXC_TESTS_KVSTORE_KV_TEST_UTIL_H_
