// A failure inside an operator that uses temp space must stay with that
// operator's outputs. Temp spaces are shared by every operator (a few per
// process, handed out round robin) and guarded by engine variables; if a
// failed operator poisoned its temp space's variable, every later operator
// drawing that space would be skipped and fail with the old message until
// the next mxc_wait_all. The walk makes each allocation of a convolution
// (which takes im2col scratch from temp space inside its kernel) fail in
// turn, waits for the failure on its output only, and then checks that
// enough further convolutions to cycle through every temp space succeed.
// Temp spaces only grow, so each round uses a larger image than any
// before, and the storage pool is emptied first: its kernel must then
// allocate.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
}

namespace {

mxc_ndarray filled(std::vector<int64_t> shape, float v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(),
                               MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> buf((size_t)n, v);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, buf.data(), buf.size() * 4), MXC_OK);
  return a;
}

// One convolution; returns the invoke status; *out gets the new output.
int conv(mxc_ndarray x, mxc_ndarray w, mxc_ndarray b, mxc_ndarray *out) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find("Convolution", &op), MXC_OK);
  const char *keys[] = {"kernel", "num_filter"};
  const char *vals[] = {"(3,3)", "4"};
  mxc_ndarray ins[] = {x, w, b};
  *out = nullptr;
  return mxc_op_invoke(op, keys, vals, 2, ins, 3, out, 1, nullptr);
}

TEST(TempSpaceFaults, AFailedKernelDoesNotPoisonLaterUsersOfItsTempSpace) {
  mxc_ndarray w = filled({4, 3, 3, 3}, 0.5f);
  mxc_ndarray b = filled({4}, 0.25f);
  mxc_ndarray small = filled({2, 3, 8, 8}, 1.0f);
  const float want = 3 * 3 * 3 * 0.5f + 0.25f;  // every output element
  int kernel_failures = 0;
  for (int64_t n = 1; n < 400; ++n) {
    mxc_ndarray x = filled({2, 3, 16 + n, 16 + n}, 1.0f);
    mxc_ndarray y = nullptr;
    // An empty pool: the kernel's temp growth must reach the allocator.
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
    ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_CPU, 0), MXC_OK);
    mxc__fault_alloc_arm(n, 0);
    int rc = conv(x, w, b, &y);
    const bool pushed = rc == MXC_OK;
    if (pushed) rc = mxc_ndarray_wait_to_read(y);
    const bool fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    mxc_ndarray_free(y);
    mxc_ndarray_free(x);
    if (!fired) break;  // the scenario ran without an injected failure
    if (rc == MXC_OK) continue;  // the failed allocation was recovered
    ASSERT_EQ(rc, MXC_ERR_OOM) << mxc_last_error();
    if (pushed) kernel_failures++;  // failed inside the kernel
    // Later convolutions draw every temp space in turn: all succeed.
    for (int k = 0; k < 8; ++k) {
      mxc_ndarray z = nullptr;
      ASSERT_EQ(conv(small, w, b, &z), MXC_OK) << mxc_last_error();
      std::vector<float> got(2 * 4 * 6 * 6);
      ASSERT_EQ(mxc_ndarray_copy_to_host(z, got.data(), got.size() * 4),
                MXC_OK)
          << "after an injected failure at allocation " << n
          << ", convolution " << k << " failed: " << mxc_last_error();
      for (float g : got) ASSERT_FLOAT_EQ(g, want);
      mxc_ndarray_free(z);
    }
    mxc_wait_all();  // drop the epoch's record of the injected failure
  }
  EXPECT_GT(kernel_failures, 0)
      << "no injected failure happened inside the kernel: the test no "
         "longer exercises the temp space";
  mxc_ndarray_free(small);
  mxc_ndarray_free(w);
  mxc_ndarray_free(b);
}

}  // namespace
