// Helpers shared by the GPU tests (fake and real plug-in).
#ifndef MXC_TESTS_GPU_GPU_TEST_UTIL_H_
#define MXC_TESTS_GPU_GPU_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace mxct {

inline std::string LastError() { return mxc_last_error(); }

inline mxc_ndarray Make(const std::vector<int64_t> &shape, int dev_type,
                        int id) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(),
                               MXC_DTYPE_FLOAT32, dev_type, id, 0, &a),
            MXC_OK)
      << LastError();
  return a;
}

// The bits every conformance test writes into an output before a kernel
// runs (a quiet NaN with a payload no computation makes): an element
// still holding them was never written.
constexpr uint32_t kPoisonBits = 0x7fc0dead;

inline float Poison() {
  float f;
  std::memcpy(&f, &kPoisonBits, 4);
  return f;
}

inline bool IsPoison(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits == kPoisonBits;
}

inline std::vector<float> ToHost(mxc_ndarray a, size_t n) {
  std::vector<float> v(n, -1.f);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), n * sizeof(float)), MXC_OK)
      << LastError();
  return v;
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_GPU_TEST_UTIL_H_
