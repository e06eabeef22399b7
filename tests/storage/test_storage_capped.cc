// MXC_STORAGE_POOL_MAX_CACHED (set to "1K" for this target): the pool
// caches at most that many bytes and returns the rest to the system.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/storage/storage.h"
}

namespace {
const mxc__device kCpu = {MXC_DEVICE_CPU, 0};

int64_t Stat(int stat) {
  int64_t v = -1;
  EXPECT_EQ(mxc__storage_stat(kCpu, stat, &v), MXC_OK) << mxc__error_msg();
  return v;
}
}  // namespace

TEST(StorageCap, CachedBytesStayUnderTheCap) {
  const int64_t live0 = mxc__alloc_live();
  std::vector<mxc__storage_block> blocks(10);
  for (auto &b : blocks) {
    ASSERT_EQ(mxc__storage_alloc(kCpu, 200, &b), MXC_OK);  // class 224
  }
  for (auto &b : blocks) mxc__storage_free(&b);
  // 4 * 224 = 896 <= 1024 < 5 * 224: four cached, six returned.
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED),
            mxc__storage_pool_enabled() ? 4 * 224 : 0);
  // A block larger than the cap is never cached.
  mxc__storage_block big;
  ASSERT_EQ(mxc__storage_alloc(kCpu, 2000, &big), MXC_OK);
  mxc__storage_free(&big);
  EXPECT_LE(Stat(MXC_STORAGE_BYTES_CACHED), 1024);
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
  EXPECT_EQ(mxc__alloc_live(), live0);
}
