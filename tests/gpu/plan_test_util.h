// Helpers of the host tests of the GPU kernels' plans (test_cuda_*_plan.cc):
// shapes, the descriptor a plan reads, and CPU arrays for the reference
// operator calls.
#ifndef MXC_TESTS_GPU_PLAN_TEST_UTIL_H_
#define MXC_TESTS_GPU_PLAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "core/base/gpu_plugin.h"
}
#include "mxc/mxc.h"

namespace mxct {

inline int64_t Numel(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// A float32 array descriptor of shape d without memory (plans read shapes).
inline mxc__gpu_array Arr(const std::vector<int64_t> &d) {
  mxc__gpu_array a = {};
  a.ndim = (int)d.size();
  for (size_t i = 0; i < d.size(); ++i) a.dims[i] = d[i];
  a.size = Numel(d);
  a.dtype = MXC_DTYPE_FLOAT32;
  return a;
}

// A float32 CPU array of shape d holding v (left uninitialised when v is
// empty); owned by the caller.
inline mxc_ndarray Cpu(const std::vector<int64_t> &d,
                       const std::vector<float> &v) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(d.data(), (int)d.size(), MXC_DTYPE_FLOAT32,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK)
      << mxc_last_error();
  if (!v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, v.data(), v.size() * 4), MXC_OK);
  }
  return h;
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_PLAN_TEST_UTIL_H_
