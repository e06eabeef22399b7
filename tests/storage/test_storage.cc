// Tests for core/storage: size classes, alignment, statistics, caching and
// its MXC_STORAGE_POOL=0 switch, bad input, huge requests, allocation fault
// injection and concurrent use.
//
// The same source runs as test_storage (pool on, unless a --config sets
// MXC_STORAGE_POOL=0) and test_storage_nopool (pool off); every test asks
// mxc__storage_pool_enabled() and checks the behaviour of the mode it runs
// in.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/storage/storage.h"
}

namespace {

const mxc__device kCpu = {MXC_DEVICE_CPU, 0};

// The size class of a request, computed from the definition rather than
// the library's bit arithmetic: 64, then p * 5/4, 6/4, 7/4, 8/4 for each
// power of two p >= 64.
size_t ClassOf(size_t n) {
  if (n <= 64) return 64;
  for (size_t p = 64;; p *= 2) {
    for (size_t q = 5; q <= 8; q++) {
      if (p / 4 * q >= n) return p / 4 * q;
    }
  }
}

// Bytes a request reserves in the mode this test runs in: the class with
// the pool on, the request itself (at least one byte) with it off.
size_t Reserved(size_t n) {
  if (mxc__storage_pool_enabled()) return ClassOf(n);
  return n ? n : 1;
}

int64_t Stat(int stat) {
  int64_t v = -1;
  EXPECT_EQ(mxc__storage_stat(kCpu, stat, &v), MXC_OK) << mxc__error_msg();
  return v;
}

struct Stats {
  int64_t in_use, cached, peak, allocs, hits;
};

Stats AllStats() {
  return {Stat(MXC_STORAGE_BYTES_IN_USE), Stat(MXC_STORAGE_BYTES_CACHED),
          Stat(MXC_STORAGE_PEAK_IN_USE), Stat(MXC_STORAGE_ALLOC_COUNT),
          Stat(MXC_STORAGE_POOL_HITS)};
}

bool Contains(const char *haystack, const std::string &needle) {
  return std::string(haystack).find(needle) != std::string::npos;
}

mxc__storage_block Alloc(size_t n) {
  mxc__storage_block b;
  EXPECT_EQ(mxc__storage_alloc(kCpu, n, &b), MXC_OK) << mxc__error_msg();
  return b;
}

}  // namespace

TEST(StorageClasses, ReferenceClassesBoundWaste) {
  // The test's own reference obeys the promised bound: < 25% waste.
  for (size_t n = 65; n < 200000; n++) {
    size_t c = ClassOf(n);
    ASSERT_GE(c, n);
    ASSERT_LT(c - n, n / 4 + (n % 4 != 0)) << n;
  }
  EXPECT_EQ(ClassOf(0), 64u);
  EXPECT_EQ(ClassOf(65), 80u);
  EXPECT_EQ(ClassOf(129), 160u);
  EXPECT_EQ(ClassOf(1000), 1024u);
  EXPECT_EQ(ClassOf(1025), 1280u);
}

TEST(StorageClasses, BlocksHaveTheExpectedClassAndAlignment) {
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 4200; n++) sizes.push_back(n);
  // Around each class edge up to 32 MiB.
  for (size_t p = 64; p <= (size_t(1) << 24); p *= 2) {
    for (size_t q = 4; q <= 8; q++) {
      size_t edge = p / 4 * q;
      sizes.insert(sizes.end(), {edge - 1, edge, edge + 1});
    }
  }
  for (size_t n : sizes) {
    mxc__storage_block b = Alloc(n);
    ASSERT_TRUE(b.ptr != nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.ptr) % 64, 0u) << n;
    EXPECT_EQ(b.size, n);
    EXPECT_EQ(b.class_size, Reserved(n)) << n;
    EXPECT_EQ(b.dev.type, MXC_DEVICE_CPU);
    // Touch both ends: ASan (pool off) checks the block really is that big.
    static_cast<unsigned char *>(b.ptr)[0] = 1;
    static_cast<unsigned char *>(b.ptr)[b.class_size - 1] = 2;
    mxc__storage_free(&b);
    EXPECT_TRUE(b.ptr == nullptr);
  }
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
}

TEST(Storage, ZeroBytesGivesUniqueNonNullPointers) {
  std::vector<mxc__storage_block> blocks(50);
  std::set<void *> seen;
  for (auto &b : blocks) {
    b = Alloc(0);
    ASSERT_TRUE(b.ptr != nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.ptr) % 64, 0u);
    EXPECT_EQ(b.size, 0u);
    EXPECT_TRUE(seen.insert(b.ptr).second) << "pointer handed out twice";
  }
  for (auto &b : blocks) mxc__storage_free(&b);
}

TEST(Storage, StatisticsMatchTheClassSizes) {
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  const bool pool = mxc__storage_pool_enabled();
  const std::vector<size_t> sizes = {0, 1, 64, 65, 100, 1000, 1025,
                                     4096, 70000, 1000000, 3};
  Stats s0 = AllStats();
  EXPECT_EQ(s0.cached, 0);
  int64_t total = 0;
  std::vector<mxc__storage_block> blocks;
  for (size_t n : sizes) {
    blocks.push_back(Alloc(n));
    total += static_cast<int64_t>(Reserved(n));
  }
  Stats s1 = AllStats();
  EXPECT_EQ(s1.in_use - s0.in_use, total);
  EXPECT_EQ(s1.allocs - s0.allocs, static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(s1.hits, s0.hits);
  EXPECT_EQ(s1.peak, std::max(s0.peak, s0.in_use + total));
  EXPECT_EQ(s1.cached, 0);

  for (auto &b : blocks) mxc__storage_free(&b);
  Stats s2 = AllStats();
  EXPECT_EQ(s2.in_use, s0.in_use);
  EXPECT_EQ(s2.peak, s1.peak);  // a high-water mark never drops
  EXPECT_EQ(s2.cached, pool ? total : 0);

  // The same sizes again: all from the cache when pooling.
  blocks.clear();
  for (size_t n : sizes) blocks.push_back(Alloc(n));
  Stats s3 = AllStats();
  EXPECT_EQ(s3.hits - s2.hits,
            pool ? static_cast<int64_t>(sizes.size()) : 0);
  EXPECT_EQ(s3.allocs - s2.allocs, static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(s3.cached, 0);
  EXPECT_EQ(s3.in_use - s0.in_use, total);
  for (auto &b : blocks) mxc__storage_free(&b);
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
}

TEST(Storage, CachedBlocksAreReusedOrReturnedAtOnce) {
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  int64_t live0 = mxc__alloc_live();
  mxc__storage_block a = Alloc(3000);
  void *first = a.ptr;
  EXPECT_EQ(mxc__alloc_live(), live0 + 1);
  mxc__storage_free(&a);
  if (mxc__storage_pool_enabled()) {
    // Cached: still live (plus the class stack's array), and handed out
    // again for any request of the same class.
    EXPECT_GT(mxc__alloc_live(), live0);
    mxc__storage_block b = Alloc(ClassOf(3000));
    EXPECT_EQ(b.ptr, first);
    mxc__storage_free(&b);
  } else {
    // Pool off: back to the system at once.
    EXPECT_EQ(mxc__alloc_live(), live0);
    EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
  }
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live0);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
}

TEST(Storage, OtherCpuIdsShareThePool) {
  mxc__device cpu3 = {MXC_DEVICE_CPU, 3};
  int64_t in_use0 = Stat(MXC_STORAGE_BYTES_IN_USE);
  mxc__storage_block b;
  ASSERT_EQ(mxc__storage_alloc(cpu3, 100, &b), MXC_OK);
  EXPECT_EQ(b.dev.id, 3);
  int64_t v = 0;
  ASSERT_EQ(mxc__storage_stat(cpu3, MXC_STORAGE_BYTES_IN_USE, &v), MXC_OK);
  EXPECT_EQ(v, in_use0 + static_cast<int64_t>(Reserved(100)));
  mxc__storage_free(&b);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_IN_USE), in_use0);
}

TEST(Storage, BadInput) {
  mxc__storage_block b;
  EXPECT_EQ(mxc__storage_alloc(kCpu, 10, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__storage_stat(kCpu, MXC_STORAGE_BYTES_IN_USE, nullptr),
            MXC_ERR_INVALID_ARGUMENT);

  int64_t v = 123;
  for (int bad : {-1, 5, 1000}) {
    EXPECT_EQ(mxc__storage_stat(kCpu, bad, &v), MXC_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(Contains(mxc__error_msg(),
                         "unknown storage statistic " + std::to_string(bad)))
        << mxc__error_msg();
    EXPECT_EQ(v, 123);
  }

  // No CUDA in this build (and no GPU allocator in any build yet).
  mxc__device gpu = {MXC_DEVICE_GPU, 0};
  memset(&b, 0xAB, sizeof b);
  mxc__storage_block untouched = b;
  EXPECT_EQ(mxc__storage_alloc(gpu, 10, &b), MXC_ERR_UNSUPPORTED);
  EXPECT_TRUE(Contains(mxc__error_msg(), "gpu(0)")) << mxc__error_msg();
  EXPECT_EQ(memcmp(&b, &untouched, sizeof b), 0);
  EXPECT_EQ(mxc__storage_stat(gpu, MXC_STORAGE_BYTES_IN_USE, &v),
            MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(mxc__storage_release_cached(gpu), MXC_ERR_UNSUPPORTED);

  mxc__device unknown = {7, 0};
  EXPECT_EQ(mxc__storage_alloc(unknown, 10, &b), MXC_ERR_INVALID_ARGUMENT);
  mxc__device negative = {MXC_DEVICE_CPU, -1};
  EXPECT_EQ(mxc__storage_alloc(negative, 10, &b), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__storage_release_cached(unknown), MXC_ERR_INVALID_ARGUMENT);

  // Freeing nothing is fine.
  mxc__storage_free(nullptr);
  mxc__storage_block empty;
  memset(&empty, 0, sizeof empty);
  mxc__storage_free(&empty);
}

TEST(Storage, HugeRequestsAreOutOfMemoryNamingTheSize) {
  int64_t in_use0 = Stat(MXC_STORAGE_BYTES_IN_USE);
  int64_t allocs0 = Stat(MXC_STORAGE_ALLOC_COUNT);
  std::vector<size_t> huge = {SIZE_MAX, SIZE_MAX - 63, SIZE_MAX / 2,
                              (SIZE_MAX >> 2) + 2};
#if !defined(MXC_SANITIZER_ASAN) && !defined(MXC_SANITIZER_TSAN)
  // Within the class range but far beyond any machine: the system says no.
  // (Sanitizer allocators abort on such sizes instead of returning NULL.)
  huge.push_back(size_t(1) << 52);
  huge.push_back((size_t(1) << 52) + 12345);
#endif
  for (size_t n : huge) {
    mxc__storage_block b;
    memset(&b, 0x5A, sizeof b);
    mxc__storage_block untouched = b;
    EXPECT_EQ(mxc__storage_alloc(kCpu, n, &b), MXC_ERR_OOM) << n;
    EXPECT_TRUE(Contains(mxc__error_msg(), std::to_string(n)))
        << mxc__error_msg();
    EXPECT_TRUE(Contains(mxc__error_msg(), "out of memory"));
    EXPECT_EQ(memcmp(&b, &untouched, sizeof b), 0);
  }
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_IN_USE), in_use0);
  EXPECT_EQ(Stat(MXC_STORAGE_ALLOC_COUNT), allocs0);
}

// With the system out of memory, cached blocks of other classes are given
// back and the request retried once.
TEST(Storage, OutOfMemoryReleasesTheCacheAndRetries) {
  if (!mxc__storage_pool_enabled()) GTEST_SKIP() << "nothing is cached";
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  int64_t live0 = mxc__alloc_live();
  mxc__storage_block a = Alloc(5000);
  mxc__storage_free(&a);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), int64_t(ClassOf(5000)));

  mxc__fault_alloc_arm(1, 0);  // the first attempt fails, the retry works
  mxc__storage_block b;
  ASSERT_EQ(mxc__storage_alloc(kCpu, 100, &b), MXC_OK);
  EXPECT_TRUE(mxc__fault_alloc_fired());
  mxc__fault_alloc_arm(0, 0);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
  mxc__storage_free(&b);

  mxc__fault_alloc_arm(1, 1);  // every attempt fails
  mxc__storage_block c;
  EXPECT_EQ(mxc__storage_alloc(kCpu, 7000, &c), MXC_ERR_OOM);
  EXPECT_TRUE(Contains(mxc__error_msg(), "7000")) << mxc__error_msg();
  mxc__fault_alloc_arm(0, 0);
  EXPECT_EQ(Stat(MXC_STORAGE_BYTES_CACHED), 0);
  EXPECT_EQ(mxc__alloc_live(), live0);
}

namespace {

// Runs `scenario` with the N-th allocation failing, for N = 1, 2, ... until
// a run sees no injected failure. A run that fails must fail cleanly with
// MXC_ERR_OOM; every run, failed or not, must leave no block behind once
// the cache is released. A failure may also be absorbed (a free whose
// cache array cannot grow returns the block to the system instead).
void FaultWalk(const std::function<int()> &scenario, int persist) {
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  const int64_t live0 = mxc__alloc_live();
  const int64_t in_use0 = Stat(MXC_STORAGE_BYTES_IN_USE);
  int oom_runs = 0;
  bool finished = false;
  for (int64_t n = 1; n <= 200 && !finished; n++) {
    mxc__fault_alloc_arm(n, persist);
    int rc = scenario();
    bool fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
    ASSERT_EQ(mxc__alloc_live(), live0) << "leak with failure at " << n;
    ASSERT_EQ(Stat(MXC_STORAGE_BYTES_IN_USE), in_use0) << n;
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
  EXPECT_GE(oom_runs, 2);
}

// Allocates and frees a few blocks, reusing cached ones; frees everything
// it got on any failure.
int AllocFreeScenario() {
  mxc__storage_block a = {}, b = {}, c = {}, d = {};
  int rc = MXC_OK;
  if ((rc = mxc__storage_alloc(kCpu, 100, &a)) != MXC_OK) goto out;
  if ((rc = mxc__storage_alloc(kCpu, 5000, &b)) != MXC_OK) goto out;
  mxc__storage_free(&a);
  if ((rc = mxc__storage_alloc(kCpu, 90, &c)) != MXC_OK) goto out;
  mxc__storage_free(&b);
  if ((rc = mxc__storage_alloc(kCpu, 0, &d)) != MXC_OK) goto out;
  if ((rc = mxc__storage_alloc(kCpu, 4500, &a)) != MXC_OK) goto out;
  if ((rc = mxc__storage_alloc(kCpu, 1 << 20, &b)) != MXC_OK) goto out;
out:
  mxc__storage_free(&a);
  mxc__storage_free(&b);
  mxc__storage_free(&c);
  mxc__storage_free(&d);
  return rc;
}

}  // namespace

TEST(StorageFaults, EveryAllocationFailureIsCleanOneShot) {
  FaultWalk(AllocFreeScenario, 0);
}

TEST(StorageFaults, EveryAllocationFailureIsCleanPersistent) {
  FaultWalk(AllocFreeScenario, 1);
}

// Threads allocate, write a signature, hold, verify and free. A block
// handed to two holders at once would break a signature.
TEST(StorageThreads, ConcurrentAllocAndFree) {
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  const int64_t live0 = mxc__alloc_live();
  const Stats s0 = AllStats();
  const int kThreads = 8, kIters = 4000, kHold = 16;
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([t, &errors] {
      std::mt19937 rng(1234 + t);
      const size_t sizes[] = {0, 8, 64, 100, 1000, 4096, 5000, 65536};
      std::vector<mxc__storage_block> held(kHold);
      std::vector<uint32_t> sig(kHold, 0);
      for (int i = 0; i < kIters; i++) {
        int slot = static_cast<int>(rng() % kHold);
        mxc__storage_block &b = held[slot];
        if (b.ptr) {
          uint32_t got = sig[slot];
          if (b.class_size >= sizeof got) memcpy(&got, b.ptr, sizeof got);
          if (got != sig[slot]) errors[t]++;
          mxc__storage_free(&b);
        }
        size_t n = sizes[rng() % (sizeof sizes / sizeof sizes[0])];
        if (mxc__storage_alloc(kCpu, n, &b) != MXC_OK) {
          errors[t]++;
          continue;
        }
        sig[slot] = static_cast<uint32_t>(t << 24 | i);
        if (b.class_size >= sizeof sig[slot]) {
          memcpy(b.ptr, &sig[slot], sizeof sig[slot]);
        }
      }
      for (auto &b : held) mxc__storage_free(&b);
    });
  }
  // Meanwhile, read statistics and drop the cache.
  for (int i = 0; i < 200; i++) {
    int64_t v;
    ASSERT_EQ(mxc__storage_stat(kCpu, i % 5, &v), MXC_OK);
    if (i % 20 == 0) {
      ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
    }
  }
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; t++) EXPECT_EQ(errors[t], 0) << t;
  Stats s1 = AllStats();
  EXPECT_EQ(s1.in_use, s0.in_use);
  EXPECT_EQ(s1.allocs - s0.allocs, int64_t(kThreads) * kIters);
  EXPECT_GE(s1.peak, s0.peak);
  if (!mxc__storage_pool_enabled()) {
    EXPECT_EQ(s1.hits, s0.hits);
  }
  ASSERT_EQ(mxc__storage_release_cached(kCpu), MXC_OK);
  EXPECT_EQ(mxc__alloc_live(), live0);
}
