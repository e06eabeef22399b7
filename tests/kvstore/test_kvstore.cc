// The "local" KVStore through the public API: push sums against naive
// loops in the same order (bit for bit) for every dtype the store holds
// and both key kinds; pull and pushpull; every optimizer of the registry
// the store runs against calling the update operator directly on a copy
// of the weight with the summed gradient and zero states; the updater
// callback; ordering with other engine work on the same arrays; failures
// of asynchronous work; bad input (each a clear error that changes
// nothing); concurrent pushes from several threads; no leaks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/kvstore/kv_test_util.h"
#include "tests/testutil/fault_walk.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

using namespace kvtest;

std::vector<float> randoms(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v) x = u(g);
  return v;
}

mxc_kvstore make_store() {
  mxc_kvstore kv = nullptr;
  EXPECT_EQ(mxc_kvstore_create("local", &kv), MXC_OK) << err();
  return kv;
}

void free_all(std::vector<mxc_ndarray> &v) {
  for (mxc_ndarray a : v) mxc_ndarray_free(a);
  v.clear();
}

class KVStore : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mxc_wait_all(), MXC_OK) << err();
    handles0_ = mxc__handle_live();
  }
  void TearDown() override {
    ASSERT_EQ(mxc_wait_all(), MXC_OK) << err();
    EXPECT_EQ(mxc__handle_live(), handles0_) << "a handle leaked";
  }
  int64_t handles0_ = 0;
};

TEST_F(KVStore, TypeRankWorkersBarrier) {
  mxc_kvstore kv = make_store();
  const char *type = nullptr;
  int rank = -1, n = -1;
  ASSERT_EQ(mxc_kvstore_type(kv, &type), MXC_OK) << err();
  EXPECT_STREQ(type, "local");
  ASSERT_EQ(mxc_kvstore_rank(kv, &rank), MXC_OK);
  ASSERT_EQ(mxc_kvstore_num_workers(kv, &n), MXC_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(mxc_kvstore_barrier(kv), MXC_OK);
  mxc_kvstore_free(kv);
  mxc_kvstore_free(nullptr);
}

TEST_F(KVStore, UnknownTypesAreRefused) {
  mxc_kvstore kv = nullptr;
  EXPECT_EQ(mxc_kvstore_create("device", &kv), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("\"local\" or \"dist_sync\""), std::string::npos)
      << err();
  EXPECT_EQ(mxc_kvstore_create(nullptr, &kv), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_kvstore_create("local", nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kv, nullptr);
}

// Several values per key, keys repeated in any order: each key's stored
// array is the sum of its values in list order, bit for bit.
template <class T>
void check_sums(int dtype) {
  SCOPED_TRACE(dtype);
  const std::vector<int64_t> shape = {3, 5};
  const size_t n = 15;
  mxc_kvstore kv = make_store();
  const int64_t keys[] = {7, -2};
  std::vector<mxc_ndarray> init = {
      make_with<T>(shape, dtype, std::vector<T>(n, T(1))),
      make_with<T>(shape, dtype, std::vector<T>(n, T(2)))};
  ASSERT_EQ(mxc_kvstore_init(kv, 2, keys, nullptr, init.data()), MXC_OK)
      << err();
  // Values: key 7 gets v0, v2, v3; key -2 gets v1, v4.
  const int64_t push_keys[] = {7, -2, 7, 7, -2};
  std::vector<std::vector<T>> host(5, std::vector<T>(n));
  std::vector<mxc_ndarray> vals;
  for (int k = 0; k < 5; ++k) {
    std::vector<float> r = randoms(n, 10 + k);
    for (size_t i = 0; i < n; ++i) host[k][i] = T(r[i] * 1000);
    vals.push_back(make_with<T>(shape, dtype, host[k]));
  }
  ASSERT_EQ(mxc_kvstore_push(kv, 5, push_keys, nullptr, vals.data(), 0),
            MXC_OK)
      << err();
  std::vector<mxc_ndarray> outs = {make(shape, dtype), make(shape, dtype)};
  ASSERT_EQ(mxc_kvstore_pull(kv, 2, keys, nullptr, outs.data(), 0), MXC_OK)
      << err();
  std::vector<T> want7(n), want2(n);
  for (size_t i = 0; i < n; ++i) {
    want7[i] = host[0][i];
    want7[i] += host[2][i];
    want7[i] += host[3][i];
    want2[i] = host[1][i];
    want2[i] += host[4][i];
  }
  std::vector<T> got7 = read<T>(outs[0], n), got2 = read<T>(outs[1], n);
  EXPECT_EQ(std::memcmp(got7.data(), want7.data(), n * sizeof(T)), 0);
  EXPECT_EQ(std::memcmp(got2.data(), want2.data(), n * sizeof(T)), 0);
  free_all(init);
  free_all(vals);
  free_all(outs);
  mxc_kvstore_free(kv);
}

TEST_F(KVStore, PushSumsInListOrderForEveryDtype) {
  check_sums<float>(MXC_DTYPE_FLOAT32);
  check_sums<double>(MXC_DTYPE_FLOAT64);
  check_sums<int32_t>(MXC_DTYPE_INT32);
  check_sums<int64_t>(MXC_DTYPE_INT64);
}

TEST_F(KVStore, StringKeysAndIntKeysAreSeparate) {
  mxc_kvstore kv = make_store();
  const std::vector<int64_t> shape = {4};
  mxc_ndarray a = make_with<float>(shape, MXC_DTYPE_FLOAT32, {1, 2, 3, 4});
  mxc_ndarray b = make_with<float>(shape, MXC_DTYPE_FLOAT32, {5, 6, 7, 8});
  const int64_t ik[] = {3};
  const char *sk[] = {"3"};
  ASSERT_EQ(mxc_kvstore_init(kv, 1, ik, nullptr, &a), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, sk, &b), MXC_OK) << err();
  mxc_ndarray out = make(shape, MXC_DTYPE_FLOAT32);
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, sk, &out, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(out, 4), (std::vector<float>{5, 6, 7, 8}));
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, ik, nullptr, &out, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(out, 4), (std::vector<float>{1, 2, 3, 4}));
  // init copied the value: changing the caller's array changes nothing.
  float z[4] = {0, 0, 0, 0};
  ASSERT_EQ(mxc_ndarray_copy_from_host(a, z, sizeof z), MXC_OK);
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, ik, nullptr, &out, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(out, 4), (std::vector<float>{1, 2, 3, 4}));
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(out);
  mxc_kvstore_free(kv);
}

// pushpull in place (out = the value), one key pulled into two outputs.
TEST_F(KVStore, PushPullInPlaceAndSeveralOutputs) {
  mxc_kvstore kv = make_store();
  const std::vector<int64_t> shape = {2, 2};
  const char *k[] = {"w", "w"};
  mxc_ndarray w0 = make_with<float>(shape, MXC_DTYPE_FLOAT32, {0, 0, 0, 0});
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, k, &w0), MXC_OK) << err();
  std::vector<mxc_ndarray> g = {
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {1, 2, 3, 4}),
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {10, 20, 30, 40})};
  ASSERT_EQ(mxc_kvstore_pushpull(kv, 2, nullptr, k, g.data(), g.data(), 0),
            MXC_OK)
      << err();
  for (mxc_ndarray a : g) {
    EXPECT_EQ(read<float>(a, 4), (std::vector<float>{11, 22, 33, 44}));
  }
  free_all(g);
  mxc_ndarray_free(w0);
  mxc_kvstore_free(kv);
}

// ---- optimizers ----

struct OptCase {
  const char *name;
  int n_states;
  std::vector<const char *> keys, vals;
};

const std::vector<OptCase> &opt_cases() {
  static const std::vector<OptCase> k = {
      {"sgd_update", 0, {"lr", "wd"}, {"0.1", "0.01"}},
      {"sgd_mom_update", 1, {"lr", "momentum", "wd"}, {"0.1", "0.9", "0.01"}},
      {"nag_mom_update", 1, {"lr", "momentum"}, {"0.05", "0.8"}},
      {"adam_update", 2, {"lr", "beta1", "rescale_grad"}, {"0.01", "0.8", "0.5"}},
      {"rmsprop_update", 1, {"lr", "gamma1"}, {"0.01", "0.9"}},
      {"rmspropalex_update", 3, {"lr"}, {"0.01"}},
      {"adagrad_update", 1, {"lr", "clip_gradient"}, {"0.1", "1.5"}},
      {"ftrl_update", 2, {"lr", "lamda1"}, {"0.1", "0.01"}},
      {"signsgd_update", 0, {"lr"}, {"0.1"}},
      {"signum_update", 1, {"lr", "momentum"}, {"0.1", "0.7"}},
  };
  return k;
}

// The reference: the same operator called directly on a copy of the
// weight, with grad = the values summed here and zero states.
void reference_step(const OptCase &c, mxc_ndarray w, mxc_ndarray grad,
                    std::vector<mxc_ndarray> &states) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(c.name, &op), MXC_OK) << err();
  std::vector<mxc_ndarray> in = {w, grad};
  in.insert(in.end(), states.begin(), states.end());
  mxc_ndarray out = w;
  ASSERT_EQ(mxc_op_invoke(op, c.keys.data(), c.vals.data(), (int)c.keys.size(),
                          in.data(), (int)in.size(), &out, 1, nullptr),
            MXC_OK)
      << c.name << ": " << err();
}

void check_optimizer(const OptCase &c) {
  SCOPED_TRACE(c.name);
  const std::vector<int64_t> shape = {6, 7};
  const size_t n = 42;
  mxc_kvstore kv = make_store();
  ASSERT_EQ(mxc_kvstore_set_optimizer(kv, c.name, c.keys.data(),
                                      c.vals.data(), (int)c.keys.size()),
            MXC_OK)
      << err();
  std::vector<float> w0 = randoms(n, 1);
  mxc_ndarray w = make_with<float>(shape, MXC_DTYPE_FLOAT32, w0);
  mxc_ndarray ref = make_with<float>(shape, MXC_DTYPE_FLOAT32, w0);
  std::vector<mxc_ndarray> states;
  for (int i = 0; i < c.n_states; ++i) {
    states.push_back(make_with<float>(shape, MXC_DTYPE_FLOAT32,
                                      std::vector<float>(n, 0.0f)));
  }
  const int64_t key = 1;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  const int64_t keys2[] = {1, 1};
  for (int step = 0; step < 5; ++step) {
    std::vector<float> a = randoms(n, 100 + step), b = randoms(n, 200 + step);
    std::vector<float> sum(n);
    for (size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
    std::vector<mxc_ndarray> g = {make_with<float>(shape, MXC_DTYPE_FLOAT32, a),
                                  make_with<float>(shape, MXC_DTYPE_FLOAT32, b)};
    mxc_ndarray gs = make_with<float>(shape, MXC_DTYPE_FLOAT32, sum);
    ASSERT_EQ(mxc_kvstore_push(kv, 2, keys2, nullptr, g.data(), 0), MXC_OK)
        << err();
    reference_step(c, ref, gs, states);
    free_all(g);
    mxc_ndarray_free(gs);
  }
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, &key, nullptr, &w, 0), MXC_OK) << err();
  std::vector<float> got = read<float>(w, n), want = read<float>(ref, n);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(got.data(), w0.data(), n * sizeof(float)), 0)
      << "the optimizer changed nothing";
  free_all(states);
  mxc_ndarray_free(w);
  mxc_ndarray_free(ref);
  mxc_kvstore_free(kv);
}

TEST_F(KVStore, EveryOptimizerMatchesItsOperator) {
  for (const OptCase &c : opt_cases()) check_optimizer(c);
}

// States made at set_optimizer for keys initialised before, and replaced
// (zeros again) when the optimizer is set anew.
TEST_F(KVStore, OptimizerSetAfterInitAndReplaced) {
  mxc_kvstore kv = make_store();
  const std::vector<int64_t> shape = {3};
  mxc_ndarray w = make_with<float>(shape, MXC_DTYPE_FLOAT32, {1, 1, 1});
  mxc_ndarray g = make_with<float>(shape, MXC_DTYPE_FLOAT32, {1, 2, 3});
  const char *k[] = {"w"};
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, k, &w), MXC_OK) << err();
  const char *keys[] = {"lr", "momentum"}, *vals[] = {"1", "0.5"};
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(mxc_kvstore_set_optimizer(kv, "sgd_mom_update", keys, vals, 2),
              MXC_OK)
        << err();
    // mom = -g; w += mom; then mom = 0.5*mom - g; w += mom.
    ASSERT_EQ(mxc_kvstore_push(kv, 1, nullptr, k, &g, 0), MXC_OK) << err();
    ASSERT_EQ(mxc_kvstore_push(kv, 1, nullptr, k, &g, 0), MXC_OK) << err();
  }
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, k, &w, 0), MXC_OK) << err();
  // Each round: w -= g + 1.5 g (the momentum restarts at zero).
  EXPECT_EQ(read<float>(w, 3), (std::vector<float>{1 - 5.0f, 1 - 10.0f,
                                                   1 - 15.0f}));
  mxc_ndarray_free(w);
  mxc_ndarray_free(g);
  mxc_kvstore_free(kv);
}

// ---- the updater callback ----

struct Seen {
  std::vector<std::string> keys;
  mxc_op scale = nullptr;
};

// local = local - recv, by an operator call the engine orders after the
// sum; records the keys it sees.
int subtract_updater(const char *sk, int64_t ik, mxc_ndarray recv,
                     mxc_ndarray local, void *ud) {
  Seen *s = static_cast<Seen *>(ud);
  s->keys.push_back(sk ? std::string(sk) : std::to_string(ik));
  mxc_ndarray in[2] = {local, recv};
  return mxc_op_invoke(s->scale, nullptr, nullptr, 0, in, 2, &local, 1,
                       nullptr);
}

TEST_F(KVStore, UpdaterCallbackSeesTheSumAndUpdatesTheStore) {
  mxc_kvstore kv = make_store();
  Seen seen;
  ASSERT_EQ(mxc_op_find("elemwise_sub", &seen.scale), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_set_updater(kv, subtract_updater, &seen), MXC_OK);
  const std::vector<int64_t> shape = {2};
  const char *k[] = {"a", "b", "a"};
  std::vector<mxc_ndarray> w = {
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {10, 20}),
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {30, 40})};
  ASSERT_EQ(mxc_kvstore_init(kv, 2, nullptr, k, w.data()), MXC_OK) << err();
  std::vector<mxc_ndarray> g = {
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {1, 2}),
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {3, 4}),
      make_with<float>(shape, MXC_DTYPE_FLOAT32, {5, 6})};
  ASSERT_EQ(mxc_kvstore_push(kv, 3, nullptr, k, g.data(), 0), MXC_OK) << err();
  EXPECT_EQ(seen.keys, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(mxc_kvstore_pull(kv, 2, nullptr, k, w.data(), 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(w[0], 2), (std::vector<float>{10 - 6, 20 - 8}));
  EXPECT_EQ(read<float>(w[1], 2), (std::vector<float>{30 - 3, 40 - 4}));
  // Removing the updater: pushes store the sum again.
  ASSERT_EQ(mxc_kvstore_set_updater(kv, nullptr, nullptr), MXC_OK);
  ASSERT_EQ(mxc_kvstore_push(kv, 1, nullptr, k, g.data(), 0), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, k, w.data(), 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(w[0], 2), (std::vector<float>{1, 2}));
  EXPECT_EQ(seen.keys.size(), 2u);
  free_all(w);
  free_all(g);
  mxc_kvstore_free(kv);
}

int failing_updater(const char *, int64_t, mxc_ndarray, mxc_ndarray, void *) {
  return MXC_ERR_INVALID_ARGUMENT;
}

TEST_F(KVStore, UpdaterFailureNamesTheKey) {
  mxc_kvstore kv = make_store();
  ASSERT_EQ(mxc_kvstore_set_updater(kv, failing_updater, nullptr), MXC_OK);
  mxc_ndarray w = make_with<float>({1}, MXC_DTYPE_FLOAT32, {1});
  const int64_t key = 42;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  EXPECT_EQ(mxc_kvstore_push(kv, 1, &key, nullptr, &w, 0),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("key 42"), std::string::npos) << err();
  EXPECT_NE(err().find("updater returned"), std::string::npos) << err();
  mxc_ndarray_free(w);
  mxc_kvstore_free(kv);
}

// A failure with the updater's own reason (mxc_set_last_error).
int reasoned_updater(const char *, int64_t, mxc_ndarray, mxc_ndarray,
                     void *) {
  return mxc_set_last_error(MXC_ERR_SHAPE, "width 3 is not a multiple of 2");
}

TEST_F(KVStore, UpdaterFailureCarriesTheUpdatersOwnMessage) {
  mxc_kvstore kv = make_store();
  ASSERT_EQ(mxc_kvstore_set_updater(kv, reasoned_updater, nullptr), MXC_OK);
  mxc_ndarray w = make_with<float>({1}, MXC_DTYPE_FLOAT32, {1});
  const int64_t key = 7;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  EXPECT_EQ(mxc_kvstore_push(kv, 1, &key, nullptr, &w, 0), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("key 7"), std::string::npos) << err();
  EXPECT_NE(err().find("width 3 is not a multiple of 2"), std::string::npos)
      << err();
  EXPECT_EQ(err().find("updater returned"), std::string::npos) << err();
  mxc_ndarray_free(w);
  mxc_kvstore_free(kv);
}

// ---- the updater's user data owned by the store (set_updater_ex) ----

struct Owned {
  std::atomic<int> calls{0};
  std::atomic<int> *freed;
};

int counting_updater(const char *, int64_t, mxc_ndarray, mxc_ndarray,
                     void *ud) {
  static_cast<Owned *>(ud)->calls++;
  return MXC_OK;
}

void free_owned(void *ud) {
  Owned *o = static_cast<Owned *>(ud);
  (*o->freed)++;
  delete o;
}

// Runs pending deferred destruction: the free function runs on a thread
// leaving an mxc call once no call can be using the updater.
void settle() {
  for (int i = 0; i < 3; ++i) (void)mxc_wait_all();
}

TEST_F(KVStore, UpdaterExFreesItsDataWhenReplacedRemovedOrFreed) {
  std::atomic<int> freed{0};
  mxc_kvstore kv = make_store();
  mxc_ndarray w = make_with<float>({1}, MXC_DTYPE_FLOAT32, {1});
  const int64_t key = 1;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  Owned *a = new Owned{0, &freed};
  ASSERT_EQ(mxc_kvstore_set_updater_ex(kv, counting_updater, a, free_owned),
            MXC_OK);
  ASSERT_EQ(mxc_kvstore_push(kv, 1, &key, nullptr, &w, 0), MXC_OK) << err();
  EXPECT_EQ(a->calls.load(), 1);
  // Replaced: a is freed, b is not.
  Owned *b = new Owned{0, &freed};
  ASSERT_EQ(mxc_kvstore_set_updater_ex(kv, counting_updater, b, free_owned),
            MXC_OK);
  settle();
  EXPECT_EQ(freed.load(), 1);
  // Removed with fn NULL: b is freed, and so is the data given with it.
  Owned *c = new Owned{0, &freed};
  ASSERT_EQ(mxc_kvstore_set_updater_ex(kv, nullptr, c, free_owned), MXC_OK);
  settle();
  EXPECT_EQ(freed.load(), 3);
  // Freed with the store.
  Owned *d = new Owned{0, &freed};
  ASSERT_EQ(mxc_kvstore_set_updater_ex(kv, counting_updater, d, free_owned),
            MXC_OK);
  mxc_kvstore_free(kv);
  settle();
  EXPECT_EQ(freed.load(), 4);
  mxc_ndarray_free(w);
}

TEST_F(KVStore, UpdaterExFreesItsDataWhenTheCallFails) {
  std::atomic<int> freed{0};
  Owned *a = new Owned{0, &freed};
  EXPECT_EQ(mxc_kvstore_set_updater_ex(nullptr, counting_updater, a,
                                       free_owned),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(freed.load(), 1);
}

// Touches its data before and after a pause, so that a replacement in
// another thread lands while it runs.
int slow_updater(const char *, int64_t, mxc_ndarray, mxc_ndarray, void *ud) {
  Owned *o = static_cast<Owned *>(ud);
  o->calls++;
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  o->calls++;
  return MXC_OK;
}

// Pushes from several threads while another replaces the updater: each
// free must come after the last call of its updater (under ASan a free
// while slow_updater sleeps is a use after free; without the retirement
// it failed 10 runs of 10).
TEST_F(KVStore, UpdaterExIsNeverFreedUnderARunningPush) {
  std::atomic<int> freed{0}, made{0};
  mxc_kvstore kv = make_store();
  mxc_ndarray w = make_with<float>({4}, MXC_DTYPE_FLOAT32, {1, 2, 3, 4});
  const int64_t key = 5;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &key, nullptr, &w), MXC_OK) << err();
  std::atomic<bool> stop{false};
  std::vector<std::thread> pushers;
  for (int t = 0; t < 3; ++t) {
    pushers.emplace_back([&] {
      mxc_ndarray g = make_with<float>({4}, MXC_DTYPE_FLOAT32, {1, 1, 1, 1});
      while (!stop) {
        EXPECT_EQ(mxc_kvstore_push(kv, 1, &key, nullptr, &g, 0), MXC_OK);
      }
      mxc_ndarray_free(g);
    });
  }
  for (int i = 0; i < 200; ++i) {
    made++;
    ASSERT_EQ(mxc_kvstore_set_updater_ex(kv, slow_updater,
                                         new Owned{0, &freed}, free_owned),
              MXC_OK);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  stop = true;
  for (auto &t : pushers) t.join();
  mxc_kvstore_free(kv);
  mxc_ndarray_free(w);
  settle();
  EXPECT_EQ(freed.load(), made.load());
}

// ---- ordering and failures of asynchronous work ----

// Writes `value` into its write array after a pause: work the store's
// push must wait for.
int slow_fill(void *ud, mxc_opctx ctx) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  void *p = nullptr;
  size_t nbytes = 0;
  if (mxc_opctx_data(ctx, 0, &p, &nbytes) != MXC_OK) return MXC_ERR_INTERNAL;
  float v = *static_cast<float *>(ud);
  for (size_t i = 0; i < nbytes / sizeof(float); ++i) {
    static_cast<float *>(p)[i] = v;
  }
  return MXC_OK;
}

int failing_fn(void *, mxc_opctx ctx) {
  mxc_opctx_set_error(ctx, "gradient producer broke");
  return MXC_ERR_INVALID_ARGUMENT;
}

TEST_F(KVStore, PushWaitsForTheWriterOfItsValueAndPullOrdersReaders) {
  mxc_kvstore kv = make_store();
  const std::vector<int64_t> shape = {1000};
  mxc_ndarray g = make_with<float>(shape, MXC_DTYPE_FLOAT32,
                                   std::vector<float>(1000, 0.0f));
  const char *k[] = {"g"};
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, k, &g), MXC_OK) << err();
  for (int round = 1; round <= 3; ++round) {
    static float values[4] = {0, 1.5f, 2.5f, 3.5f};
    // The writer is still sleeping when push and pull are called.
    ASSERT_EQ(mxc_engine_push(slow_fill, &values[round], nullptr, nullptr, 0,
                              &g, 1, 0, "slow_fill"),
              MXC_OK);
    ASSERT_EQ(mxc_kvstore_pushpull(kv, 1, nullptr, k, &g, &g, 0), MXC_OK)
        << err();
    // The pull into g came after the slow fill: g holds the fill.
    std::vector<float> got = read<float>(g, 1000);
    for (float x : got) ASSERT_EQ(x, values[round]);
  }
  mxc_ndarray_free(g);
  mxc_kvstore_free(kv);
}

TEST_F(KVStore, AFailedProducerReachesThePulledArray) {
  mxc_kvstore kv = make_store();
  mxc_ndarray g = make_with<float>({4}, MXC_DTYPE_FLOAT32, {1, 2, 3, 4});
  mxc_ndarray out = make({4}, MXC_DTYPE_FLOAT32);
  const char *k[] = {"grad"};
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, k, &g), MXC_OK) << err();
  ASSERT_EQ(mxc_engine_push(failing_fn, nullptr, nullptr, nullptr, 0, &g, 1,
                            0, "producer"),
            MXC_OK);
  ASSERT_EQ(mxc_kvstore_push(kv, 1, nullptr, k, &g, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, k, &out, 0), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_wait_to_read(out), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("gradient producer broke"), std::string::npos)
      << err();
  EXPECT_NE(mxc_wait_all(), MXC_OK);  // clears the remaining poison
  mxc_ndarray_free(g);
  mxc_ndarray_free(out);
  mxc_kvstore_free(kv);
}

// ---- bad input ----

TEST_F(KVStore, InvalidUseIsAClearErrorThatChangesNothing) {
  mxc_kvstore kv = make_store();
  mxc_ndarray w = make_with<float>({2, 3}, MXC_DTYPE_FLOAT32,
                                   {1, 2, 3, 4, 5, 6});
  mxc_ndarray other_shape = make({3, 2}, MXC_DTYPE_FLOAT32);
  mxc_ndarray other_dtype = make({2, 3}, MXC_DTYPE_FLOAT64);
  mxc_ndarray f16 = make({2}, MXC_DTYPE_FLOAT16);
  const char *k[] = {"w"}, *unknown[] = {"nope"}, *null_key[] = {nullptr};
  const int64_t ik = 5;
  auto expect = [](int rc, int code, const char *text) {
    EXPECT_EQ(rc, code) << err();
    EXPECT_NE(err().find(text), std::string::npos) << err();
  };
  expect(mxc_kvstore_push(kv, 1, nullptr, k, &w, 0), MXC_ERR_NOT_FOUND,
         "never initialised");
  expect(mxc_kvstore_pull(kv, 1, &ik, nullptr, &w, 0), MXC_ERR_NOT_FOUND,
         "key 5");
  ASSERT_EQ(mxc_kvstore_init(kv, 1, nullptr, k, &w), MXC_OK) << err();
  expect(mxc_kvstore_init(kv, 1, nullptr, k, &w), MXC_ERR_INVALID_ARGUMENT,
         "already initialised");
  const char *twice[] = {"x", "x"};
  mxc_ndarray two[] = {w, w};
  expect(mxc_kvstore_init(kv, 2, nullptr, twice, two),
         MXC_ERR_INVALID_ARGUMENT, "given twice");
  expect(mxc_kvstore_init(kv, 1, nullptr, unknown, &f16), MXC_ERR_UNSUPPORTED,
         "float16");
  expect(mxc_kvstore_push(kv, 1, nullptr, k, &other_shape, 0), MXC_ERR_SHAPE,
         "mxc_kvstore_push: push of key 'w': the array is (3,2)");
  expect(mxc_kvstore_push(kv, 1, nullptr, k, &other_dtype, 0), MXC_ERR_DTYPE,
         "float64");
  expect(mxc_kvstore_pull(kv, 1, nullptr, k, &other_shape, 0), MXC_ERR_SHAPE,
         "the key holds (2,3)");
  expect(mxc_kvstore_push(kv, 1, nullptr, null_key, &w, 0),
         MXC_ERR_INVALID_ARGUMENT, "keys[0] is NULL");
  expect(mxc_kvstore_push(kv, 1, &ik, k, &w, 0), MXC_ERR_INVALID_ARGUMENT,
         "exactly one");
  expect(mxc_kvstore_push(kv, 1, nullptr, nullptr, &w, 0),
         MXC_ERR_INVALID_ARGUMENT, "exactly one");
  expect(mxc_kvstore_push(kv, -1, nullptr, k, &w, 0),
         MXC_ERR_INVALID_ARGUMENT, "n is -1");
  expect(mxc_kvstore_push(kv, 1, nullptr, k, nullptr, 0),
         MXC_ERR_INVALID_ARGUMENT, "arrays are NULL");
  // A pushpull whose pull half is wrong pushes nothing.
  mxc_ndarray g = make_with<float>({2, 3}, MXC_DTYPE_FLOAT32,
                                   {9, 9, 9, 9, 9, 9});
  expect(mxc_kvstore_pushpull(kv, 1, nullptr, k, &g, &other_shape, 0),
         MXC_ERR_SHAPE, "pull of key 'w'");
  // A push of a good and a bad key pushes neither.
  const char *both[] = {"w", "nope"};
  mxc_ndarray gg[] = {g, g};
  expect(mxc_kvstore_push(kv, 2, nullptr, both, gg, 0), MXC_ERR_NOT_FOUND,
         "key 'nope'");
  mxc_ndarray out = make({2, 3}, MXC_DTYPE_FLOAT32);
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, k, &out, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(out, 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Optimizers.
  const char *lr[] = {"lr"}, *one[] = {"1"}, *bad[] = {"fast"};
  expect(mxc_kvstore_set_optimizer(kv, "no_such_update", lr, one, 1),
         MXC_ERR_NOT_FOUND, "not an operator of the registry");
  expect(mxc_kvstore_set_optimizer(kv, "relu", nullptr, nullptr, 0),
         MXC_ERR_INVALID_ARGUMENT, "not an update operator");
  expect(mxc_kvstore_set_optimizer(kv, "mp_sgd_update", lr, one, 1),
         MXC_ERR_INVALID_ARGUMENT, "not an update operator");
  expect(mxc_kvstore_set_optimizer(kv, "sgd_update", lr, bad, 1),
         MXC_ERR_INVALID_ARGUMENT, "lr");
  expect(mxc_kvstore_set_optimizer(kv, "sgd_update", nullptr, nullptr, 0),
         MXC_ERR_INVALID_ARGUMENT, "lr");
  expect(mxc_kvstore_set_optimizer(kv, "sgd_update", lr, nullptr, 1),
         MXC_ERR_INVALID_ARGUMENT, "vals NULL");
  expect(mxc_kvstore_set_optimizer(kv, nullptr, nullptr, nullptr, 0),
         MXC_ERR_INVALID_ARGUMENT, "name is NULL");
  // None of the failed calls set an optimizer: a push stores the sum.
  ASSERT_EQ(mxc_kvstore_push(kv, 1, nullptr, k, &g, 0), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, nullptr, k, &out, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(out, 6), (std::vector<float>(6, 9.0f)));
  for (mxc_ndarray a : {w, other_shape, other_dtype, f16, g, out}) {
    mxc_ndarray_free(a);
  }
  mxc_kvstore_free(kv);
}

// ---- allocation failures ----

// Every call of the store with the n-th allocation failing: MXC_ERR_OOM
// and nothing leaked (core objects, arrays, handles, pushed work).
int fault_scenario() {
  mxc_kvstore kv = nullptr;
  int rc = mxc_kvstore_create("local", &kv);
  if (rc != MXC_OK) return rc;
  int64_t shape[1] = {3};
  mxc_ndarray w = nullptr, out = nullptr;
  rc = mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                          &w);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &out);
  }
  const char *k[] = {"a", "b", "a"}, *lr[] = {"lr", "momentum"},
             *v[] = {"0.5", "0.9"};
  mxc_ndarray three[] = {w, w, w};
  if (rc == MXC_OK) rc = mxc_kvstore_init(kv, 1, nullptr, k, three);
  if (rc == MXC_OK) {
    rc = mxc_kvstore_set_optimizer(kv, "sgd_mom_update", lr, v, 2);
  }
  if (rc == MXC_OK) rc = mxc_kvstore_init(kv, 1, nullptr, k + 1, three);
  if (rc == MXC_OK) rc = mxc_kvstore_push(kv, 3, nullptr, k, three, 0);
  if (rc == MXC_OK) rc = mxc_kvstore_pushpull(kv, 2, nullptr, k, three, three, 1);
  if (rc == MXC_OK) rc = mxc_kvstore_pull(kv, 1, nullptr, k, &out, 0);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  mxc_ndarray_free(w);
  mxc_ndarray_free(out);
  mxc_kvstore_free(kv);
  return rc;
}

TEST(KVStoreFaults, EveryAllocationFailureIsCleanAndLeaksNothing) {
  mxct::alloc_failure_walk(fault_scenario, 10, 2);
}

// ---- threads ----

// Threads push to one key with sgd_update (lr 1): w -= sum of every push,
// whatever the interleaving; and to keys of their own.
TEST_F(KVStore, ConcurrentPushesFromSeveralThreads) {
  mxc_kvstore kv = make_store();
  const char *lr[] = {"lr"}, *one[] = {"1"};
  ASSERT_EQ(mxc_kvstore_set_optimizer(kv, "sgd_update", lr, one, 1), MXC_OK);
  const int threads = 4, pushes = 50;
  const std::vector<int64_t> shape = {16};
  mxc_ndarray z = make_with<float>(shape, MXC_DTYPE_FLOAT32,
                                   std::vector<float>(16, 0.0f));
  const int64_t shared = 0;
  ASSERT_EQ(mxc_kvstore_init(kv, 1, &shared, nullptr, &z), MXC_OK) << err();
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      mxc_ndarray g = make_with<float>(shape, MXC_DTYPE_FLOAT32,
                                       std::vector<float>(16, 1.0f));
      const int64_t own = 100 + t;
      if (mxc_kvstore_init(kv, 1, &own, nullptr, &g) != MXC_OK) ++failures;
      for (int i = 0; i < pushes; ++i) {
        if (mxc_kvstore_push(kv, 1, &shared, nullptr, &g, t) != MXC_OK ||
            mxc_kvstore_push(kv, 1, &own, nullptr, &g, t) != MXC_OK) {
          ++failures;
        }
      }
      mxc_ndarray_free(g);
    });
  }
  for (std::thread &t : ts) t.join();
  EXPECT_EQ(failures.load(), 0) << err();
  ASSERT_EQ(mxc_kvstore_pull(kv, 1, &shared, nullptr, &z, 0), MXC_OK);
  EXPECT_EQ(read<float>(z, 16),
            std::vector<float>(16, -(float)(threads * pushes)));
  for (int t = 0; t < threads; ++t) {
    const int64_t own = 100 + t;
    ASSERT_EQ(mxc_kvstore_pull(kv, 1, &own, nullptr, &z, 0), MXC_OK);
    EXPECT_EQ(read<float>(z, 16), std::vector<float>(16, 1.0f - pushes));
  }
  mxc_ndarray_free(z);
  mxc_kvstore_free(kv);
}

}  // namespace
