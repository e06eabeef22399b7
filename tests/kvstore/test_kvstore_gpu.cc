// GPU arrays in a KVStore, through the public API with the fake GPU
// plug-in (tests/gpu/fake_plugin.c: two devices whose memory the host
// cannot read, so any host access to a GPU value in the store's work
// crashes the test instead of passing). The store sums on the host
// (core/kvstore/stage.c); results are checked against naive loops.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mxc/mxc.h"
#include "tests/kvstore/kv_test_util.h"

namespace {

using namespace kvtest;

mxc_ndarray on(int dev_type, int id, const std::vector<float> &v) {
  int64_t shape[] = {(int64_t)v.size()};
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, dev_type, id, 0,
                               &a),
            MXC_OK)
      << err();
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(float)),
            MXC_OK)
      << err();
  return a;
}

mxc_ndarray gpu(int id, const std::vector<float> &v) {
  return on(MXC_DEVICE_GPU, id, v);
}

class KVStoreGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK) << err();
    ASSERT_EQ(n, 2) << "the fake plug-in (MXC_FAKE_GPU=ok) has two GPUs";
    ASSERT_EQ(mxc_kvstore_create("local", &kv_), MXC_OK) << err();
  }
  void TearDown() override {
    mxc_kvstore_free(kv_);
    EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
  }
  mxc_kvstore kv_ = nullptr;
};

TEST_F(KVStoreGpu, PushSumsValuesOfEveryDeviceAndPullsIntoEach) {
  const std::vector<float> a{1, 2, 3}, b{10, 20, 30}, c{0.5f, 0.25f, -1};
  const int64_t key[] = {7};
  mxc_ndarray init = gpu(1, {0, 0, 0});
  ASSERT_EQ(mxc_kvstore_init(kv_, 1, key, nullptr, &init), MXC_OK) << err();
  // Pushed at once after their copies: the engine orders the reads.
  mxc_ndarray vals[] = {gpu(0, a), gpu(1, b), on(MXC_DEVICE_CPU, 0, c)};
  const int64_t keys3[] = {7, 7, 7};
  ASSERT_EQ(mxc_kvstore_push(kv_, 3, keys3, nullptr, vals, 0), MXC_OK)
      << err();
  mxc_ndarray outs[] = {gpu(0, {-1, -1, -1}), gpu(1, {-1, -1, -1}),
                        on(MXC_DEVICE_CPU, 0, {-1, -1, -1})};
  ASSERT_EQ(mxc_kvstore_pull(kv_, 3, keys3, nullptr, outs, 0), MXC_OK)
      << err();
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) want[i] = (a[i] + b[i]) + c[i];
  for (mxc_ndarray o : outs) EXPECT_EQ(read<float>(o, 3), want);
  for (mxc_ndarray v : vals) mxc_ndarray_free(v);
  for (mxc_ndarray o : outs) mxc_ndarray_free(o);
  mxc_ndarray_free(init);
}

TEST_F(KVStoreGpu, InitCopiesTheGpuValueAndPushPullUpdatesInPlace) {
  const std::vector<float> w0{1, 2, 3}, g{0.5f, -1, 2};
  const char *key[] = {"w"};
  mxc_ndarray w = gpu(0, w0), grad = gpu(1, g);
  ASSERT_EQ(mxc_kvstore_init(kv_, 1, nullptr, key, &w), MXC_OK) << err();
  const char *names[] = {"lr"}, *values[] = {"0.5"};
  ASSERT_EQ(mxc_kvstore_set_optimizer(kv_, "sgd_update", names, values, 1),
            MXC_OK)
      << err();
  for (int step = 0; step < 3; ++step) {
    ASSERT_EQ(mxc_kvstore_pushpull(kv_, 1, nullptr, key, &grad, &w, 0),
              MXC_OK)
        << err();
  }
  std::vector<float> want = w0;  // w -= lr * g, three times
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 3; ++i) want[i] = want[i] - 0.5f * g[i];
  }
  EXPECT_EQ(read<float>(w, 3), want);
  mxc_ndarray_free(w);
  mxc_ndarray_free(grad);
}

TEST_F(KVStoreGpu, AGpuValueOfAnotherShapeIsTheUsualError) {
  const int64_t key[] = {1};
  mxc_ndarray init = gpu(0, {1, 2});
  ASSERT_EQ(mxc_kvstore_init(kv_, 1, key, nullptr, &init), MXC_OK) << err();
  mxc_ndarray bad = gpu(0, {1, 2, 3});
  EXPECT_EQ(mxc_kvstore_push(kv_, 1, key, nullptr, &bad, 0), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("push of key 1: the array is (3) of float32; the key holds (2)"), std::string::npos)
      << err();
  EXPECT_EQ(mxc_kvstore_pull(kv_, 1, key, nullptr, &bad, 0), MXC_ERR_SHAPE);
  mxc_ndarray_free(bad);
  mxc_ndarray_free(init);
}

}  // namespace
