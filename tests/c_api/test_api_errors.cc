// Bad input through every public entry point: each returns the right code,
// leaves out-parameters untouched and says what was wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "mxc/mxc.h"

namespace {

std::string err() { return mxc_last_error(); }

#define EXPECT_ERR(call, code, needle)                              \
  do {                                                              \
    EXPECT_EQ((call), (code)) << #call;                             \
    EXPECT_EQ(mxc_last_error_code(), (code));                       \
    EXPECT_NE(err().find(needle), std::string::npos)                \
        << #call << " message: " << err();                          \
  } while (0)

mxc_ndarray make(int64_t n) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               &a),
            MXC_OK);
  return a;
}

TEST(Version, MatchesHeader) {
  EXPECT_EQ(mxc_version(), MXC_VERSION_NUMBER);
  char buf[32];
  snprintf(buf, sizeof buf, "%d.%d.%d", MXC_VERSION_MAJOR, MXC_VERSION_MINOR,
           MXC_VERSION_PATCH);
  EXPECT_STREQ(mxc_version_string(), buf);
}

TEST(Features, ListAndQuery) {
  int n = mxc_feature_count();
  ASSERT_GT(n, 0);
  bool saw_cuda = false;
  for (int i = 0; i < n; ++i) {
    const char *name = mxc_feature_name(i);
    ASSERT_NE(name, nullptr);
    int on = -1;
    ASSERT_EQ(mxc_feature_enabled(name, &on), MXC_OK);
    EXPECT_TRUE(on == 0 || on == 1);
    if (!strcmp(name, "CUDA")) saw_cuda = true;
  }
  EXPECT_TRUE(saw_cuda);
  // The full library (this test links every operator family) uses OpenBLAS.
  int blas = 0;
  ASSERT_EQ(mxc_feature_enabled("OPENBLAS", &blas), MXC_OK);
  EXPECT_EQ(blas, 1);
  EXPECT_EQ(mxc_feature_name(n), nullptr);
  EXPECT_EQ(mxc_feature_name(-1), nullptr);
  int on = 7;
  EXPECT_ERR(mxc_feature_enabled("WARP_DRIVE", &on), MXC_ERR_NOT_FOUND,
             "WARP_DRIVE");
  EXPECT_EQ(on, 7);
  EXPECT_ERR(mxc_feature_enabled(nullptr, &on), MXC_ERR_INVALID_ARGUMENT,
             "name is NULL");
  EXPECT_ERR(mxc_feature_enabled("CPU", nullptr), MXC_ERR_INVALID_ARGUMENT,
             "out_enabled");
}

// The GPU count agrees with the CUDA feature; a GPU array is refused
// exactly when no GPU is counted.
TEST(Devices, CountMatchesFeatures) {
  int n = -1;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_CPU, &n), MXC_OK);
  EXPECT_EQ(n, 1);
  int cuda = -1, gpus = -1;
  ASSERT_EQ(mxc_feature_enabled("CUDA", &cuda), MXC_OK);
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &gpus), MXC_OK);
  if (!cuda) {
    EXPECT_EQ(gpus, 0);
  }
  const int64_t shape[] = {2};
  mxc_ndarray a = nullptr;
  int rc = mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU, 0,
                              0, &a);
  EXPECT_EQ(rc == MXC_OK, gpus > 0) << mxc_last_error();
  if (a) mxc_ndarray_free(a);
  n = 7;
  EXPECT_ERR(mxc_device_count(3, &n), MXC_ERR_INVALID_ARGUMENT,
             "unknown device type 3");
  EXPECT_EQ(n, 7);
  EXPECT_ERR(mxc_device_count(MXC_DEVICE_CPU, nullptr),
             MXC_ERR_INVALID_ARGUMENT, "out_count");
}

TEST(Errors, NamesAndDtypes) {
  EXPECT_STREQ(mxc_error_name(MXC_ERR_SHAPE), "MXC_ERR_SHAPE");
  EXPECT_STREQ(mxc_error_name(MXC_OK), "MXC_OK");
  EXPECT_STREQ(mxc_error_name(999), "MXC_ERR_UNKNOWN");
  EXPECT_STREQ(mxc_error_name(-3), "MXC_ERR_UNKNOWN");
  EXPECT_EQ(mxc_dtype_size(MXC_DTYPE_INT64), 8);
  EXPECT_EQ(mxc_dtype_size(77), 0);
  EXPECT_STREQ(mxc_dtype_name(MXC_DTYPE_FLOAT16), "float16");
  EXPECT_EQ(mxc_dtype_name(77), nullptr);
}

TEST(Errors, SetLastErrorRecordsCodeAndCopiedMessage) {
  std::string msg = "the callback's reason";
  EXPECT_EQ(mxc_set_last_error(MXC_ERR_IO, msg.c_str()), MXC_ERR_IO);
  msg = "changed";
  EXPECT_EQ(mxc_last_error_code(), MXC_ERR_IO);
  EXPECT_STREQ(mxc_last_error(), "the callback's reason");
  // Its own buffer as the message (a callback passing a failure on).
  EXPECT_EQ(mxc_set_last_error(MXC_ERR_SHAPE, mxc_last_error()),
            MXC_ERR_SHAPE);
  EXPECT_STREQ(mxc_last_error(), "the callback's reason");
  EXPECT_EQ(mxc_set_last_error(MXC_ERR_OOM, nullptr), MXC_ERR_OOM);
  EXPECT_STREQ(mxc_last_error(), "");
  std::string huge(5000, 'x');
  EXPECT_EQ(mxc_set_last_error(MXC_ERR_IO, huge.c_str()), MXC_ERR_IO);
  EXPECT_EQ(std::string(mxc_last_error()).size(), 1023u);
  EXPECT_EQ(mxc_set_last_error(MXC_OK, "ignored"), MXC_OK);
  EXPECT_EQ(mxc_last_error_code(), MXC_OK);
  EXPECT_STREQ(mxc_last_error(), "");
  EXPECT_ERR(mxc_set_last_error(-2, "x"), MXC_ERR_INVALID_ARGUMENT,
             "code -2 is not an error code");
}

TEST(Errors, LastErrorIsPerThread) {
  mxc_ndarray out = nullptr;
  int64_t neg = -4;
  ASSERT_NE(mxc_ndarray_create(&neg, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &out),
            MXC_OK);
  std::string mine = err();
  std::string theirs = "unset";
  std::thread t([&] { theirs = mxc_last_error(); });
  t.join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(err(), mine);
}

TEST(Create, RejectsBadArguments) {
  mxc_ndarray out = (mxc_ndarray)0x7;
  int64_t shape[2] = {2, 3};
  EXPECT_ERR(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                                0, nullptr),
             MXC_ERR_INVALID_ARGUMENT, "'out' is NULL");
  EXPECT_ERR(mxc_ndarray_create(nullptr, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU,
                                0, 0, &out),
             MXC_ERR_INVALID_ARGUMENT, "shape is NULL");
  int64_t neg[2] = {2, -3};
  EXPECT_ERR(mxc_ndarray_create(neg, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                                0, &out),
             MXC_ERR_SHAPE, "extent 1 is -3");
  int64_t huge[3] = {1LL << 40, 1LL << 40, 1LL << 40};
  EXPECT_ERR(mxc_ndarray_create(huge, 3, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                                0, &out),
             MXC_ERR_SHAPE, "overflow");
  int64_t many[MXC_MAX_NDIM + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_ERR(mxc_ndarray_create(many, MXC_MAX_NDIM + 1, MXC_DTYPE_FLOAT32,
                                MXC_DEVICE_CPU, 0, 0, &out),
             MXC_ERR_SHAPE, "ndim 9");
  EXPECT_ERR(mxc_ndarray_create(shape, -1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU,
                                0, 0, &out),
             MXC_ERR_SHAPE, "ndim -1");
  EXPECT_ERR(mxc_ndarray_create(shape, 2, 42, MXC_DEVICE_CPU, 0, 0, &out),
             MXC_ERR_DTYPE, "unknown dtype 42");
  EXPECT_ERR(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, 9, 0, 0, &out),
             MXC_ERR_INVALID_ARGUMENT, "unknown device type 9");
  EXPECT_ERR(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU,
                                -2, 0, &out),
             MXC_ERR_INVALID_ARGUMENT, "device id -2");
  int cuda = 0;
  ASSERT_EQ(mxc_feature_enabled("CUDA", &cuda), MXC_OK);
  if (!cuda) {
    EXPECT_ERR(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU,
                                  0, 0, &out),
               MXC_ERR_UNSUPPORTED, "no GPU can be used");
  }
  EXPECT_EQ(out, (mxc_ndarray)0x7);  // untouched through every failure
}

TEST(Handles, NullFreedAndForeign) {
  int ndim = 5;
  int64_t n = 5;
  EXPECT_ERR(mxc_ndarray_shape(nullptr, &ndim, nullptr),
             MXC_ERR_INVALID_ARGUMENT, "handle is NULL");
  mxc_ndarray a = make(3);
  mxc_ndarray_free(a);
  EXPECT_ERR(mxc_ndarray_shape(a, &ndim, nullptr), MXC_ERR_INVALID_HANDLE,
             "already freed");
  EXPECT_ERR(mxc_ndarray_size(a, &n), MXC_ERR_INVALID_HANDLE, "already freed");
  EXPECT_EQ(ndim, 5);
  EXPECT_EQ(n, 5);
  mxc_ndarray_free(a);  // double free: reported, no crash
  EXPECT_NE(err().find("already freed"), std::string::npos);
  mxc_ndarray_free(nullptr);  // accepted
  // A made-up value.
  EXPECT_ERR(mxc_ndarray_size((mxc_ndarray)(uintptr_t)0x123456789abcull, &n),
             MXC_ERR_INVALID_HANDLE, "");
  // Wrong kind: a list handle where an array is expected.
  mxc_ndarray_list list = nullptr;
  mxc_ndarray b = make(2);
  const char *path = "handles_test.mxc";
  std::string full = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR")
                                                      : "/tmp") +
                     "/" + path;
  ASSERT_EQ(mxc_ndarray_save(full.c_str(), &b, nullptr, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_ndarray_load(full.c_str(), &list), MXC_OK) << err();
  EXPECT_ERR(mxc_ndarray_size((mxc_ndarray)list, &n), MXC_ERR_INVALID_HANDLE,
             "is a mxc_ndarray_list; expected a mxc_ndarray");
  int sz = -1;
  EXPECT_ERR(mxc_ndarray_list_size((mxc_ndarray_list)b, &sz),
             MXC_ERR_INVALID_HANDLE, "expected a mxc_ndarray_list");
  mxc_ndarray_free((mxc_ndarray)list);  // wrong kind: refused, list intact
  ASSERT_EQ(mxc_ndarray_list_size(list, &sz), MXC_OK);
  EXPECT_EQ(sz, 1);
  mxc_ndarray_list_free(list);
  mxc_ndarray_free(b);
}

TEST(Properties, NullOutParameters) {
  mxc_ndarray a = make(3);
  EXPECT_ERR(mxc_ndarray_size(a, nullptr), MXC_ERR_INVALID_ARGUMENT, "out");
  EXPECT_ERR(mxc_ndarray_dtype(a, nullptr), MXC_ERR_INVALID_ARGUMENT,
             "out_dtype");
  EXPECT_ERR(mxc_ndarray_stype(a, nullptr), MXC_ERR_INVALID_ARGUMENT,
             "out_stype");
  int t;
  EXPECT_ERR(mxc_ndarray_device(a, &t, nullptr), MXC_ERR_INVALID_ARGUMENT,
             "out_dev_id");
  EXPECT_EQ(mxc_ndarray_shape(a, nullptr, nullptr), MXC_OK);  // both optional
  EXPECT_ERR(mxc_ndarray_slice(a, 0, 1, nullptr), MXC_ERR_INVALID_ARGUMENT,
             "out");
  EXPECT_ERR(mxc_ndarray_at(a, 0, nullptr), MXC_ERR_INVALID_ARGUMENT, "out");
  EXPECT_ERR(mxc_ndarray_reshape(a, nullptr, 0, nullptr),
             MXC_ERR_INVALID_ARGUMENT, "out");
  EXPECT_ERR(mxc_get_num_threads(nullptr), MXC_ERR_INVALID_ARGUMENT, "out");
  EXPECT_ERR(mxc_engine_is_naive(nullptr), MXC_ERR_INVALID_ARGUMENT, "out");
  mxc_ndarray_free(a);
}

TEST(Settings, ThreadsAndSeed) {
  EXPECT_ERR(mxc_set_num_threads(0), MXC_ERR_INVALID_ARGUMENT, "1..1024");
  EXPECT_ERR(mxc_set_num_threads(5000), MXC_ERR_INVALID_ARGUMENT, "5000");
  int n = 0, naive = -1;
  ASSERT_EQ(mxc_get_num_threads(&n), MXC_OK);
  EXPECT_GE(n, 1);
  ASSERT_EQ(mxc_set_num_threads(3), MXC_OK) << err();
  ASSERT_EQ(mxc_get_num_threads(&n), MXC_OK);
  EXPECT_EQ(n, 3);
  ASSERT_EQ(mxc_engine_is_naive(&naive), MXC_OK);
  const char *env = getenv("MXC_ENGINE");
  EXPECT_EQ(naive, env && !strcmp(env, "naive") ? 1 : 0);
  EXPECT_EQ(mxc_random_seed(1234), MXC_OK);
}

TEST(Storage, StatsAndErrors) {
  int64_t v = -1;
  EXPECT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_BYTES_IN_USE, &v),
            MXC_OK);
  EXPECT_GE(v, 0);
  EXPECT_ERR(mxc_storage_stat(MXC_DEVICE_CPU, 0, 99, &v),
             MXC_ERR_INVALID_ARGUMENT, "99");
  EXPECT_ERR(mxc_storage_stat(MXC_DEVICE_CPU, 0, 0, nullptr),
             MXC_ERR_INVALID_ARGUMENT, "out");
  EXPECT_ERR(mxc_storage_stat(17, 0, 0, &v), MXC_ERR_INVALID_ARGUMENT,
             "device type 17");
  EXPECT_EQ(mxc_storage_release_cached(MXC_DEVICE_CPU, 0), MXC_OK);
  int64_t cached = -1;
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_BYTES_CACHED,
                             &cached),
            MXC_OK);
  EXPECT_EQ(cached, 0);
}

TEST(Storage, InUseTracksArrays) {
  int64_t before, during, after;
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_BYTES_IN_USE,
                             &before),
            MXC_OK);
  mxc_ndarray a = make(1 << 16);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_BYTES_IN_USE,
                             &during),
            MXC_OK);
  EXPECT_GE(during - before, (int64_t)(4 << 16));
  mxc_ndarray_free(a);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);  // deletion runs after pending work
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_CPU, 0, MXC_STORAGE_BYTES_IN_USE,
                             &after),
            MXC_OK);
  EXPECT_EQ(after, before);
}

}  // namespace
