// GPU arrays in a KVStore, through the public API with the fake GPU
// plug-in (tests/gpu/fake_plugin.c: two devices whose memory the host
// cannot read, so any host access to a GPU value in the store's work
// crashes the test instead of passing). The store sums on the host
// (core/kvstore/stage.c); results are checked against naive loops. Last,
// a dist_sync store of one rank sums GPU values through NCCL (below).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
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

// The "local" cases need the fake plug-in's two GPUs (not built into the
// real plug-in's program, test_kvstore_nccl_cuda).
#ifndef MXCT_REAL_PLUGIN
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

#endif  // MXCT_REAL_PLUGIN

// ---- dist_sync in a job of one rank (the one-rank MPI plug-in,
// tests/kvstore/single_rank_mpi.c): GPU values summed through NCCL
// (core/kvstore/nccl.c) in one process. Built twice: against the fake
// GPU plug-in (its NCCL table counts its allreduces) and, with
// MXCT_REAL_PLUGIN (test_kvstore_nccl_cuda), against the real one for
// scripts/gpu_check.sh (a one-rank NCCL communicator on gpu(0); here it
// skips without a GPU).
// MXC_KVSTORE_NCCL=1 makes any push of GPU values that does not go
// through NCCL an error, so passing means NCCL ran. ----

// The fake NCCL's count of allreduces (-1: not the fake plug-in).
int fake_nccl_allreduces() {
  const char *path = std::getenv("MXC_CUDA_PLUGIN");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  void *sym = h ? dlsym(h, "mxc_fake_nccl_allreduces") : nullptr;
  int n = sym ? reinterpret_cast<int (*)()>(sym)() : -1;
  if (h) dlclose(h);
  return n;
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (float)(i % 1000) - 3.25f;
  return v;
}

// pushpull of keys 0..n-1 into GPU outputs (or in place), then pull into
// host arrays: one rank's sum is its value, bit for bit.
void one_rank_sums(mxc_kvstore kv, const std::vector<size_t> &sizes,
                   bool in_place, int first_key) {
  std::vector<int64_t> keys;
  std::vector<mxc_ndarray> w, v, out;
  for (size_t k = 0; k < sizes.size(); ++k) {
    keys.push_back(first_key + (int64_t)k);
    w.push_back(gpu(0, std::vector<float>(sizes[k], 0.0f)));
    v.push_back(gpu(0, ramp(sizes[k], 0.5f + (float)k)));
    out.push_back(in_place ? v[k] : gpu(0, std::vector<float>(sizes[k], -9)));
  }
  int n = (int)keys.size();
  ASSERT_EQ(mxc_kvstore_init(kv, n, keys.data(), nullptr, w.data()), MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_pushpull(kv, n, keys.data(), nullptr, v.data(),
                                 out.data(), 0),
            MXC_OK)
      << err();
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<float> want = ramp(sizes[k], 0.5f + (float)k);
    EXPECT_EQ(read<float>(out[k], sizes[k]), want) << "key " << keys[k];
    mxc_ndarray h = on(MXC_DEVICE_CPU, 0, std::vector<float>(sizes[k], -5));
    ASSERT_EQ(mxc_kvstore_pull(kv, 1, &keys[k], nullptr, &h, 0), MXC_OK)
        << err();
    EXPECT_EQ(read<float>(h, sizes[k]), want) << "key " << keys[k];
    mxc_ndarray_free(h);
    if (!in_place) mxc_ndarray_free(out[k]);
    mxc_ndarray_free(v[k]);
    mxc_ndarray_free(w[k]);
  }
}

// An optimizer takes NCCL's sum from the store's host copy.
void one_rank_sgd(mxc_kvstore kv) {
  const char *key[] = {"w"};
  const std::vector<float> w0{1, 2, 3}, g{0.5f, -1, 2};
  mxc_ndarray w = gpu(0, w0), grad = gpu(0, g);
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, key, &w), MXC_OK) << err();
  const char *names[] = {"lr"}, *values[] = {"0.5"};
  ASSERT_EQ(mxc_kvstore_set_optimizer(kv, "sgd_update", names, values, 1),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_pushpull(kv, 1, nullptr, key, &grad, &w, 0), MXC_OK)
      << err();
  std::vector<float> want(3);
  for (int i = 0; i < 3; ++i) want[i] = w0[i] - 0.5f * g[i];
  EXPECT_EQ(read<float>(w, 3), want);
  mxc_ndarray_free(w);
  mxc_ndarray_free(grad);
}

// Values on another GPU than the communicator's: refused while NCCL is
// required, staged otherwise.
void one_rank_other_gpu(mxc_kvstore kv, int first_key, int before) {
  const int64_t key = first_key;
  mxc_ndarray w = gpu(1, {1, 2});
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  EXPECT_EQ(mxc_kvstore_pushpull(kv, 1, &key, nullptr, &w, &w, 0),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("the values are on gpu(1), and NCCL's communicator "
                       "is on gpu(0)"),
            std::string::npos)
      << err();
  unsetenv("MXC_KVSTORE_NCCL");
  EXPECT_EQ(mxc_kvstore_pushpull(kv, 1, &key, nullptr, &w, &w, 0), MXC_OK)
      << err();
  EXPECT_EQ(read<float>(w, 2), (std::vector<float>{1, 2}));
  if (before >= 0) {
    EXPECT_EQ(fake_nccl_allreduces(), before);
  }
  mxc_ndarray_free(w);
}

TEST(KVStoreGpuNccl, OneRankJobSumsGpuValuesThroughNccl) {
  int n = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK) << err();
  if (n == 0) {
    EXPECT_NE(mxc_device_check(MXC_DEVICE_GPU, 0), MXC_OK);
    GTEST_SKIP() << "no GPU: " << err();
  }
  setenv("PMI_RANK", "0", 0);  // the store's launcher check
  setenv("MXC_MPI_PLUGIN", "libmxc_mpi_single.so", 0);  // gpu_check's lib/
  setenv("MXC_KVSTORE_NCCL", "1", 1);
  mxc_kvstore kv = nullptr;
  ASSERT_EQ(mxc_kvstore_create("dist_sync", &kv), MXC_OK) << err();
  int before = fake_nccl_allreduces();
  // Past the fake's 64 KiB chunks; several keys of one call (one NCCL
  // collective each); in place (NCCL's send == recv) and not.
  one_rank_sums(kv, {7, 100001}, false, 0);
  one_rank_sums(kv, {3, 40000, 1}, true, 10);
  if (n >= 2) one_rank_other_gpu(kv, 20, fake_nccl_allreduces());
  setenv("MXC_KVSTORE_NCCL", "1", 1);
  one_rank_sgd(kv);  // sets the store's optimizer: last
  if (before >= 0) {
    EXPECT_EQ(fake_nccl_allreduces() - before, 2 + 3 + 1);  // one per key
  }
  unsetenv("MXC_KVSTORE_NCCL");
  mxc_kvstore_free(kv);
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

}  // namespace
