// Tests for core/base: errors, allocator accounting and fault injection,
// dtypes, shapes, devices, handles.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/device.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/base/shape.h"
}

TEST(Error, SetFormatsAndKeepsCode) {
  int rc = mxc__error_set(MXC_ERR_SHAPE, "bad %s %d", "thing", 7);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__error_code(), MXC_ERR_SHAPE);
  EXPECT_EQ(std::string(mxc__error_msg()).rfind("bad thing 7", 0), 0u);
  mxc__error_prefix("ctx");
  EXPECT_EQ(std::string(mxc__error_msg()).rfind("ctx: bad thing 7", 0), 0u);
}

TEST(Error, LongMessagesAreTruncatedNotOverflowed) {
  std::string big(5000, 'x');
  mxc__error_set(MXC_ERR_IO, "%s", big.c_str());
  EXPECT_EQ(strlen(mxc__error_msg()), (size_t)MXC__ERROR_MAX - 1);
  mxc__error_prefix(big.c_str());
  EXPECT_LT(strlen(mxc__error_msg()), (size_t)MXC__ERROR_MAX);
}

TEST(Alloc, LiveCountTracksBlocks) {
  int64_t before = mxc__alloc_live();
  void *a = mxc__malloc(10);
  void *b = mxc__aligned_alloc(64, 100);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(((uintptr_t)b) % 64, 0u);
  EXPECT_EQ(mxc__alloc_live(), before + 2);
  a = mxc__realloc(a, 1000);
  EXPECT_EQ(mxc__alloc_live(), before + 2);
  mxc__free(a);
  mxc__free(b);
  mxc__free(nullptr);
  EXPECT_EQ(mxc__alloc_live(), before);
}

TEST(Alloc, FaultInjectionFailsTheNthAttempt) {
  mxc__fault_alloc_arm(3, 0);
  void *a = mxc__malloc(8);
  void *b = mxc__malloc(8);
  void *c = mxc__malloc(8);
  void *d = mxc__malloc(8);
  EXPECT_TRUE(a != nullptr);
  EXPECT_TRUE(b != nullptr);
  EXPECT_TRUE(c == nullptr);
  EXPECT_TRUE(d != nullptr);  // one-shot
  EXPECT_TRUE(mxc__fault_alloc_fired());
  mxc__free(a);
  mxc__free(b);
  mxc__free(d);
  mxc__fault_alloc_arm(1, 1);
  EXPECT_TRUE(mxc__malloc(8) == nullptr);
  EXPECT_TRUE(mxc__calloc(2, 8) == nullptr);  // persistent
  mxc__fault_alloc_arm(0, 0);
  void *e = mxc__malloc(8);
  EXPECT_TRUE(e != nullptr);
  mxc__free(e);
}

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_FLOAT32), 4u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_FLOAT64), 8u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_FLOAT16), 2u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_BFLOAT16), 2u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_INT8), 1u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_UINT8), 1u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_INT32), 4u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_INT64), 8u);
  EXPECT_EQ(mxc__dtype_size(MXC_DTYPE_BOOL), 1u);
  EXPECT_EQ(mxc__dtype_size(8), 0u);  // int16: not supported
  EXPECT_EQ(mxc__dtype_size(-1), 0u);
  EXPECT_EQ(mxc__dtype_size(99), 0u);
  EXPECT_STREQ(mxc__dtype_name(MXC_DTYPE_BFLOAT16), "bfloat16");
  EXPECT_EQ(mxc__dtype_name(9), nullptr);
  EXPECT_EQ(mxc__dtype_check(42, "arg"), MXC_ERR_DTYPE);
  EXPECT_NE(std::string(mxc__error_msg()).find("unknown dtype 42"),
            std::string::npos);
  EXPECT_EQ(mxc__dtype_check(MXC_DTYPE_INT64, "arg"), MXC_OK);
}

TEST(Shape, ValidatesAndCounts) {
  mxc__shape s;
  int64_t d[3] = {2, 3, 4};
  ASSERT_EQ(mxc__shape_make(d, 3, 4, "shape", &s), MXC_OK);
  EXPECT_EQ(mxc__shape_size(&s), 24);
  char buf[64];
  EXPECT_STREQ(mxc__shape_str(&s, buf, sizeof buf), "(2,3,4)");
  ASSERT_EQ(mxc__shape_make(nullptr, 0, 4, "shape", &s), MXC_OK);
  EXPECT_EQ(mxc__shape_size(&s), 1);  // scalar
  EXPECT_STREQ(mxc__shape_str(&s, buf, sizeof buf), "()");
  int64_t z[2] = {0, 5};
  ASSERT_EQ(mxc__shape_make(z, 2, 4, "shape", &s), MXC_OK);
  EXPECT_EQ(mxc__shape_size(&s), 0);
}

TEST(Shape, RejectsBadInputWithoutTouchingOut) {
  mxc__shape s;
  memset(&s, 0x5a, sizeof s);
  mxc__shape copy = s;
  int64_t neg[2] = {2, -1};
  EXPECT_EQ(mxc__shape_make(neg, 2, 4, "shape", &s), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc__error_msg()).find("extent 1 is -1"),
            std::string::npos);
  EXPECT_EQ(mxc__shape_make(neg, MXC_MAX_NDIM + 1, 4, "shape", &s),
            MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__shape_make(neg, -1, 4, "shape", &s), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc__shape_make(nullptr, 2, 4, "shape", &s),
            MXC_ERR_INVALID_ARGUMENT);
  int64_t big[3] = {1LL << 31, 1LL << 31, 1LL << 2};  // 2^64 elements
  EXPECT_EQ(mxc__shape_make(big, 3, 1, "shape", &s), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(mxc__error_msg()).find("overflow"), std::string::npos);
  int64_t bytes[1] = {1LL << 62};  // count fits, bytes (x4) do not
  EXPECT_EQ(mxc__shape_make(bytes, 1, 4, "shape", &s), MXC_ERR_SHAPE);
  EXPECT_EQ(memcmp(&s, &copy, sizeof s), 0);
}

TEST(Device, CpuOkGpuUnsupportedWithoutCuda) {
  EXPECT_EQ(mxc__device_check(MXC_DEVICE_CPU, 0, "dev"), MXC_OK);
  EXPECT_EQ(mxc__device_check(7, 0, "dev"), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__device_check(MXC_DEVICE_CPU, -1, "dev"),
            MXC_ERR_INVALID_ARGUMENT);
  if (!mxc__have_cuda()) {
    EXPECT_EQ(mxc__device_check(MXC_DEVICE_GPU, 0, "dev"),
              MXC_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(mxc__error_msg()).find("no GPU can be used"),
              std::string::npos);
  }
}

TEST(Handle, LifecycleAndStaleDetection) {
  int obj1 = 1, obj2 = 2;
  int64_t live = mxc__handle_live();
  uintptr_t h1, h2;
  ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY, &obj1, &h1), MXC_OK);
  ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY_LIST, &obj2, &h2), MXC_OK);
  EXPECT_NE(h1, 0u);
  EXPECT_EQ(mxc__handle_live(), live + 2);
  void *p = nullptr;
  ASSERT_EQ(mxc__handle_get(h1, MXC__HANDLE_NDARRAY, "a", &p), MXC_OK);
  EXPECT_EQ(p, &obj1);
  // Wrong kind.
  EXPECT_EQ(mxc__handle_get(h2, MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(mxc__error_msg()).find("is a mxc_ndarray_list"),
            std::string::npos);
  ASSERT_EQ(mxc__handle_release(h1, MXC__HANDLE_NDARRAY, "a", &p), MXC_OK);
  EXPECT_EQ(p, &obj1);
  // Freed, also after the slot is reused.
  EXPECT_EQ(mxc__handle_get(h1, MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(mxc__error_msg()).find("already freed"),
            std::string::npos);
  uintptr_t h3;
  ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY, &obj2, &h3), MXC_OK);
  EXPECT_NE(h3, h1);
  EXPECT_EQ(mxc__handle_get(h1, MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc__handle_release(h1, MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_HANDLE);
  // Garbage and NULL.
  EXPECT_EQ(mxc__handle_get(0, MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc__handle_get((uintptr_t)0xdeadbeef12345678ull,
                            MXC__HANDLE_NDARRAY, "a", &p),
            MXC_ERR_INVALID_HANDLE);
  ASSERT_EQ(mxc__handle_release(h2, MXC__HANDLE_NDARRAY_LIST, "b", &p), MXC_OK);
  ASSERT_EQ(mxc__handle_release(h3, MXC__HANDLE_NDARRAY, "c", &p), MXC_OK);
  EXPECT_EQ(mxc__handle_live(), live);
}

// Releasing a handle gives back its own object even when another thread
// takes the freed slot at once (the hook runs where that can happen): the
// object used to be read after the slot went back on the free list, and a
// user block's caller got another thread's new array now and then (found
// through Go's TestUserBlockFromManyGoroutines, 2026-11-29).
static int g_other;
static uintptr_t g_taken;
static void take_freed_slot() {
  ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY, &g_other, &g_taken), MXC_OK);
}

TEST(Handle, ReleaseReturnsItsObjectWhenTheSlotIsTakenAtOnce) {
  int mine;
  uintptr_t h;
  void *p = nullptr;
  ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY, &mine, &h), MXC_OK);
  mxc__handle_release_hook = take_freed_slot;
  int rc = mxc__handle_release(h, MXC__HANDLE_NDARRAY, "h", &p);
  mxc__handle_release_hook = nullptr;
  ASSERT_EQ(rc, MXC_OK);
  EXPECT_EQ(g_taken & 0xffffffffu, h & 0xffffffffu) << "the slot was not reused";
  EXPECT_EQ(p, &mine);
  ASSERT_EQ(mxc__handle_release(g_taken, MXC__HANDLE_NDARRAY, "h", &p), MXC_OK);
  EXPECT_EQ(p, &g_other);
}

TEST(Handle, ManyHandlesGrowTheTable) {
  const int n = 10000;
  std::vector<uintptr_t> hs(n);
  static int dummy;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(mxc__handle_new(MXC__HANDLE_NDARRAY, &dummy, &hs[i]), MXC_OK);
  }
  void *p;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(mxc__handle_release(hs[i], MXC__HANDLE_NDARRAY, "h", &p), MXC_OK);
  }
}
