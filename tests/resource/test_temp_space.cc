// Tests for core/resource/temp_space: growth, alignment, OOM keeping the old
// buffer, bad input, fault injection over a create/request/destroy
// scenario, and independent spaces used from several threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/resource/temp_space.h"
#include "core/storage/storage.h"
}

namespace {

const mxc__device kCpu = {MXC_DEVICE_CPU, 0};

// Bytes the storage pool reserves for a request (see tests/storage): the
// size class with pooling, the request itself (at least 1) without.
size_t Reserved(size_t n) {
  if (!mxc__storage_pool_enabled()) return n ? n : 1;
  if (n <= 64) return 64;
  for (size_t p = 64;; p *= 2) {
    for (size_t q = 5; q <= 8; q++) {
      if (p / 4 * q >= n) return p / 4 * q;
    }
  }
}

bool Aligned(void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

bool Contains(const char *haystack, const std::string &needle) {
  return std::string(haystack).find(needle) != std::string::npos;
}

}  // namespace

TEST(TempSpace, GrowsOnlyWhenNeeded) {
  const int64_t live0 = mxc__alloc_live();
  mxc__temp_space *t = nullptr;
  ASSERT_EQ(mxc__temp_space_create(kCpu, &t), MXC_OK);
  EXPECT_EQ(mxc__temp_space_capacity(t), 0u);

  void *p = nullptr;
  ASSERT_EQ(mxc__temp_space_request(t, 0, &p), MXC_OK);  // still a buffer
  EXPECT_TRUE(p != nullptr && Aligned(p));
  EXPECT_EQ(mxc__temp_space_capacity(t), Reserved(0));

  ASSERT_EQ(mxc__temp_space_request(t, 1000, &p), MXC_OK);
  EXPECT_TRUE(Aligned(p));
  EXPECT_EQ(mxc__temp_space_capacity(t), Reserved(1000));
  memset(p, 0x11, 1000);

  // Smaller or equal requests reuse the buffer.
  void *q = nullptr;
  ASSERT_EQ(mxc__temp_space_request(t, 10, &q), MXC_OK);
  EXPECT_EQ(q, p);
  ASSERT_EQ(mxc__temp_space_request(t, Reserved(1000), &q), MXC_OK);
  EXPECT_EQ(q, p);

  ASSERT_EQ(mxc__temp_space_request(t, 300000, &q), MXC_OK);
  EXPECT_TRUE(Aligned(q));
  EXPECT_EQ(mxc__temp_space_capacity(t), Reserved(300000));
  memset(q, 0x22, 300000);  // the whole request is writable (ASan checks)

  int64_t in_use = 0;
  ASSERT_EQ(mxc__storage_stat(kCpu, MXC_STORAGE_BYTES_IN_USE, &in_use),
            MXC_OK);
  EXPECT_GE(in_use, static_cast<int64_t>(Reserved(300000)));

  mxc__temp_space_destroy(t);
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

TEST(TempSpace, OutOfMemoryKeepsTheOldBuffer) {
  const int64_t live0 = mxc__alloc_live();
  mxc__temp_space *t = nullptr;
  ASSERT_EQ(mxc__temp_space_create(kCpu, &t), MXC_OK);
  void *p = nullptr, *q = nullptr;
  ASSERT_EQ(mxc__temp_space_request(t, 5000, &p), MXC_OK);
  memset(p, 0x5A, 5000);
  const size_t cap = mxc__temp_space_capacity(t);

  mxc__fault_alloc_arm(1, 1);  // the system refuses everything
  q = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(mxc__temp_space_request(t, 1 << 20, &q), MXC_ERR_OOM);
  mxc__fault_alloc_arm(0, 0);
  EXPECT_TRUE(Contains(mxc__error_msg(), std::to_string(1 << 20)))
      << mxc__error_msg();
  EXPECT_EQ(q, reinterpret_cast<void *>(0x1));  // untouched
  EXPECT_EQ(mxc__temp_space_capacity(t), cap);

  // Too large to ever fit: the same, without touching the system.
  EXPECT_EQ(mxc__temp_space_request(t, SIZE_MAX, &q), MXC_ERR_OOM);
  EXPECT_EQ(mxc__temp_space_capacity(t), cap);

  // The old buffer is still there, with its contents.
  ASSERT_EQ(mxc__temp_space_request(t, 5000, &q), MXC_OK);
  EXPECT_EQ(q, p);
  for (int i = 0; i < 5000; i++) {
    ASSERT_EQ(static_cast<unsigned char *>(q)[i], 0x5A);
  }
  mxc__temp_space_destroy(t);
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

TEST(TempSpace, BadInput) {
  EXPECT_EQ(mxc__temp_space_create(kCpu, nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc__temp_space *t = nullptr;
  mxc__device gpu = {MXC_DEVICE_GPU, 0};
  EXPECT_EQ(mxc__temp_space_create(gpu, &t), MXC_ERR_UNSUPPORTED);
  EXPECT_TRUE(t == nullptr);
  mxc__device unknown = {42, 0};
  EXPECT_EQ(mxc__temp_space_create(unknown, &t), MXC_ERR_INVALID_ARGUMENT);

  void *p = nullptr;
  EXPECT_EQ(mxc__temp_space_request(nullptr, 10, &p),
            MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc__temp_space_create(kCpu, &t), MXC_OK);
  EXPECT_EQ(mxc__temp_space_request(t, 10, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(mxc__error_msg(), "out is NULL")) << mxc__error_msg();
  EXPECT_EQ(mxc__temp_space_capacity(nullptr), 0u);
  mxc__temp_space_destroy(t);
  mxc__temp_space_destroy(nullptr);
}

namespace {

// Creates two spaces, grows them, reuses, destroys; frees everything on
// failure.
int TempSpaceScenario() {
  mxc__temp_space *a = nullptr, *b = nullptr;
  mxc__storage_block blk = {};
  void *p = nullptr;
  int rc = MXC_OK;
  if ((rc = mxc__temp_space_create(kCpu, &a)) != MXC_OK) goto out;
  if ((rc = mxc__temp_space_request(a, 1000, &p)) != MXC_OK) goto out;
  if ((rc = mxc__storage_alloc(kCpu, 3000, &blk)) != MXC_OK) goto out;
  if ((rc = mxc__temp_space_create(kCpu, &b)) != MXC_OK) goto out;
  if ((rc = mxc__temp_space_request(a, 100000, &p)) != MXC_OK) goto out;
  mxc__storage_free(&blk);
  if ((rc = mxc__temp_space_request(b, 900, &p)) != MXC_OK) goto out;
  if ((rc = mxc__temp_space_request(a, 50, &p)) != MXC_OK) goto out;
  if ((rc = mxc__temp_space_request(b, 2500, &p)) != MXC_OK) goto out;
out:
  mxc__storage_free(&blk);
  mxc__temp_space_destroy(a);
  mxc__temp_space_destroy(b);
  return rc;
}

// See FaultWalk in tests/storage/test_storage.cc.
void FaultWalk(int persist) {
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  const int64_t live0 = mxc__alloc_live();
  int oom_runs = 0;
  bool finished = false;
  for (int64_t n = 1; n <= 200 && !finished; n++) {
    mxc__fault_alloc_arm(n, persist);
    int rc = TempSpaceScenario();
    bool fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
    ASSERT_EQ(mxc__alloc_live(), live0) << "leak with failure at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << mxc__error_msg();
      finished = true;
    } else if (rc != MXC_OK) {
      ASSERT_EQ(rc, MXC_ERR_OOM) << n << ": " << mxc__error_msg();
      EXPECT_TRUE(Contains(mxc__error_msg(), "out of memory"))
          << mxc__error_msg();
      oom_runs++;
    }
  }
  EXPECT_TRUE(finished);
  EXPECT_GE(oom_runs, 3);
}

}  // namespace

TEST(TempSpaceFaults, EveryAllocationFailureIsCleanOneShot) { FaultWalk(0); }

TEST(TempSpaceFaults, EveryAllocationFailureIsCleanPersistent) {
  FaultWalk(1);
}

// One space per thread (the engine serializes users of one space); the
// spaces share the storage pool.
TEST(TempSpaceThreads, IndependentSpacesInParallel) {
  const int64_t live0 = mxc__alloc_live();
  const int kThreads = 6;
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([t, &errors] {
      mxc__temp_space *s = nullptr;
      if (mxc__temp_space_create(kCpu, &s) != MXC_OK) {
        errors[t]++;
        return;
      }
      for (int i = 0; i < 2000; i++) {
        size_t n = static_cast<size_t>(64 + (i * 131 + t * 977) % 20000);
        void *p = nullptr;
        if (mxc__temp_space_request(s, n, &p) != MXC_OK || !Aligned(p) ||
            mxc__temp_space_capacity(s) < n) {
          errors[t]++;
          continue;
        }
        memset(p, t, n);
        if (static_cast<unsigned char *>(p)[n - 1] != t) errors[t]++;
        if (i % 500 == 499) {  // start small again
          mxc__temp_space_destroy(s);
          if (mxc__temp_space_create(kCpu, &s) != MXC_OK) {
            errors[t]++;
            return;
          }
        }
      }
      mxc__temp_space_destroy(s);
    });
  }
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; t++) EXPECT_EQ(errors[t], 0) << t;
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live0);
}
