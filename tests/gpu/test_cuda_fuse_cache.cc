// The fused-kernel cache (backends/cuda/fuse_cache.h) with a counting
// compile function: one compilation per (text, device), failures not
// kept, least recently used idle entries evicted at the bound, entries in
// use never freed, and concurrent lookups (run under TSan too) compiling
// each key once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/fuse_cache.h"
#include "mxc/mxc.h"

namespace {

struct Counts {
  std::atomic<int> compiled{0}, freed{0};
  int sleep_us = 0;
};

// A value naming what it was compiled from: "text@dev".
int Compile(void *ctx, const char *text, int dev, void **value, char *why,
            size_t len) {
  Counts *c = static_cast<Counts *>(ctx);
  ++c->compiled;
  if (c->sleep_us) {
    std::this_thread::sleep_for(std::chrono::microseconds(c->sleep_us));
  }
  if (!std::strcmp(text, "bad")) {
    std::snprintf(why, len, "text 'bad' does not compile");
    return MXC_ERR_INTERNAL;
  }
  *value = new std::string(std::string(text) + "@" + std::to_string(dev));
  return MXC_OK;
}

void Free(void *ctx, void *value) {
  ++static_cast<Counts *>(ctx)->freed;
  delete static_cast<std::string *>(value);
}

struct Cache {
  Counts counts;
  mxc__fuse_cache c;
  explicit Cache(int cap) {
    std::memset(&c, 0, sizeof c);
    c.compile = Compile;
    c.free_value = Free;
    c.ctx = &counts;
    c.cap = cap;
    pthread_mutex_init(&c.mu, nullptr);
    pthread_cond_init(&c.cv, nullptr);
  }
  ~Cache() {
    mxc__fuse_cache_clear(&c);
    pthread_mutex_destroy(&c.mu);
    pthread_cond_destroy(&c.cv);
  }
  // Looks up and releases; the value's text, or "error: <why>".
  std::string Get(const char *text, int dev) {
    mxc__fuse_entry *e = nullptr;
    char why[256] = "";
    if (mxc__fuse_cache_get(&c, text, dev, &e, why, sizeof why) != MXC_OK) {
      return std::string("error: ") + why;
    }
    std::string v = *static_cast<std::string *>(mxc__fuse_cache_value(e));
    mxc__fuse_cache_release(&c, e);
    return v;
  }
};

TEST(FuseCache, SameTextAndDeviceCompileOnceAnotherDeviceAgain) {
  Cache k(8);
  EXPECT_EQ(k.Get("a", 0), "a@0");
  EXPECT_EQ(k.Get("a", 0), "a@0");
  EXPECT_EQ(k.counts.compiled, 1);
  EXPECT_EQ(k.Get("a", 1), "a@1");
  EXPECT_EQ(k.counts.compiled, 2);
  EXPECT_EQ(k.Get("b", 0), "b@0");
  EXPECT_EQ(k.counts.compiled, 3);
  EXPECT_EQ(mxc__fuse_cache_compiles(&k.c), 3);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 3);
}

TEST(FuseCache, FailuresAreReportedAndNotKept) {
  Cache k(8);
  EXPECT_EQ(k.Get("bad", 0), "error: text 'bad' does not compile");
  EXPECT_EQ(k.Get("bad", 0), "error: text 'bad' does not compile");
  EXPECT_EQ(k.counts.compiled, 2);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 0);
}

TEST(FuseCache, LeastRecentlyUsedIdleEntryIsEvicted) {
  Cache k(2);
  k.Get("a", 0);
  k.Get("b", 0);
  k.Get("a", 0);  // b is now the least recently used
  k.Get("c", 0);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 2);
  EXPECT_EQ(k.counts.freed, 1);
  EXPECT_EQ(k.Get("a", 0), "a@0");
  EXPECT_EQ(k.counts.compiled, 3);  // a stayed
  k.Get("b", 0);
  EXPECT_EQ(k.counts.compiled, 4);  // b was dropped
}

TEST(FuseCache, EntriesInUseAreNeverFreed) {
  Cache k(1);
  mxc__fuse_entry *a = nullptr, *b = nullptr;
  char why[64];
  ASSERT_EQ(mxc__fuse_cache_get(&k.c, "a", 0, &a, why, sizeof why), MXC_OK);
  ASSERT_EQ(mxc__fuse_cache_get(&k.c, "b", 0, &b, why, sizeof why), MXC_OK);
  // Both held: the cache grows past its bound instead of freeing one.
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 2);
  EXPECT_EQ(k.counts.freed, 0);
  EXPECT_EQ(*static_cast<std::string *>(mxc__fuse_cache_value(a)), "a@0");
  mxc__fuse_cache_release(&k.c, a);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 1);  // back to the bound when idle
  EXPECT_EQ(k.counts.freed, 1);
  EXPECT_EQ(*static_cast<std::string *>(mxc__fuse_cache_value(b)), "b@0");
  mxc__fuse_cache_release(&k.c, b);
}

TEST(FuseCache, ConcurrentLookupsCompileEachKeyOnce) {
  Cache k(64);
  k.counts.sleep_us = 2000;  // compilations overlap with lookups
  const char *texts[] = {"p0", "p1", "p2", "p3"};
  std::atomic<int> wrong{0};
  std::vector<std::thread> th;
  for (int t = 0; t < 8; ++t) {
    th.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        int key = (i * 5 + t) % 8;  // every (text, device) pair
        int dev = key / 4;
        const char *text = texts[key % 4];
        std::string want = std::string(text) + "@" + std::to_string(dev);
        if (k.Get(text, dev) != want) ++wrong;
      }
    });
  }
  for (auto &x : th) x.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(k.counts.compiled, 8);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 8);
}

TEST(FuseCache, ConcurrentFailuresReachEveryWaiter) {
  Cache k(4);
  k.counts.sleep_us = 2000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> th;
  for (int t = 0; t < 6; ++t) {
    th.emplace_back([&] {
      if (k.Get("bad", 0) != "error: text 'bad' does not compile") ++wrong;
    });
  }
  for (auto &x : th) x.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_GE(k.counts.compiled, 1);
  EXPECT_EQ(mxc__fuse_cache_size(&k.c), 0);
}

}  // namespace
