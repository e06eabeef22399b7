// "dist_sync" across the ranks of an MPI job (dist_test.sh runs this
// binary under mpirun with 2 and 3 ranks on loopback). Every rank runs the
// same tests in the same order, as the store requires. Checked:
//  - rank, size, barrier; init makes every rank hold rank 0's value;
//  - pushpull sums equal the sum over the ranks computed here, exactly
//    (integer-valued floats and the integer dtypes, several values per
//    key per rank, fused small keys and a key larger than the fusion
//    buffer) and within rounding for arbitrary floats;
//  - every rank holds the same bits after 40 Adam steps, which equal the
//    bits of adam_update called here on the exact summed gradients;
//  - the results of the ranks, written to files, compare equal bit for
//    bit (rank 0 reads the others' after a barrier);
//  - data-parallel SGD equals one process's SGD on the global batch
//    within floating-point reordering;
//  - a key whose shape or dtype differs between ranks (or other keys, or
//    another number of keys) is an error of init on every rank, naming
//    both descriptions, and the job goes on in step;
//  - a fusion buffer that cannot be allocated is an error of the push on
//    the calling rank that pushes nothing, leaks nothing, and lets the
//    job go on in step when the push is made again;
//  - a key pushed first is reduced while a key pushed after it is still
//    being computed (the overlap of communication with backward);
//  - GPU values (the fake GPU plug-in) sum as on the CPU, through NCCL or,
//    where it is off, staged through host memory; a required NCCL that is
//    off, and a failing NCCL allreduce, are errors naming why.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/kvstore/kv_test_util.h"
#include "tests/testutil/fault_walk.h"

#include <dlfcn.h>

extern "C" {
#include "core/base/alloc.h"
}

namespace {

using namespace kvtest;

struct Job {
  mxc_kvstore kv = nullptr;
  int rank = -1, size = -1;
};

Job &job() {
  static Job j;
  return j;
}

// Value i of rank r's device d for key k: integers, so sums are exact.
double value(int r, int d, int k, size_t i) {
  return (double)((int64_t)((r + 1) * 7 + d * 3 + k) * (int64_t)(i % 13) -
                  40 + r);
}

template <class T>
std::vector<T> values(int r, int d, int k, size_t n) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (T)value(r, d, k, i);
  return v;
}

TEST(Dist, RankSizeAndBarrier) {
  Job &j = job();
  const char *type = nullptr;
  ASSERT_EQ(mxc_kvstore_type(j.kv, &type), MXC_OK);
  EXPECT_STREQ(type, "dist_sync");
  const char *want = std::getenv("MXC_TEST_NP");
  ASSERT_NE(want, nullptr);
  EXPECT_EQ(j.size, std::atoi(want));
  EXPECT_GE(j.rank, 0);
  EXPECT_LT(j.rank, j.size);
  EXPECT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
}

TEST(Dist, InitTakesRankZerosValue) {
  Job &j = job();
  const char *k[] = {"init"};
  mxc_ndarray a = make_with<float>(MXC_DTYPE_FLOAT32,
                                   std::vector<float>(5, (float)j.rank + 1));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, nullptr, k, &a), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pull(j.kv, 1, nullptr, k, &a, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(a, 5), std::vector<float>(5, 1.0f));
  mxc_ndarray_free(a);
}

// Keys of every dtype and sizes on both sides of the fusion buffer
// (dist_test.sh sets MXC_KVSTORE_FUSION_BYTES=4096), nv values per key
// per rank (2: summed locally first; 1: a lone key's ring reads the value
// itself), pushed and pulled in place.
template <class T>
void check_sum(int dtype, int64_t key, size_t n, int nv = 2) {
  SCOPED_TRACE(n);
  SCOPED_TRACE(nv);
  Job &j = job();
  mxc_ndarray w = make_with<T>(dtype, std::vector<T>(n, T(0)));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &w), MXC_OK) << err();
  std::vector<mxc_ndarray> v;
  for (int d = 0; d < nv; ++d) {
    v.push_back(make_with<T>(dtype, values<T>(j.rank, d, (int)key, n)));
  }
  const int64_t keys[] = {key, key};
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, nv, keys, nullptr, v.data(), v.data(),
                                 (int)key),
            MXC_OK)
      << err();
  std::vector<T> want(n, T(0));
  for (int r = 0; r < j.size; ++r) {
    for (int d = 0; d < nv; ++d) {
      for (size_t i = 0; i < n; ++i) want[i] += (T)value(r, d, (int)key, i);
    }
  }
  for (mxc_ndarray a : v) {
    EXPECT_EQ(read<T>(a, n), want);
    mxc_ndarray_free(a);
  }
  mxc_ndarray_free(w);
}

TEST(Dist, PushPullSumsEqualTheSumOverRanks) {
  check_sum<float>(MXC_DTYPE_FLOAT32, 10, 7);
  check_sum<float>(MXC_DTYPE_FLOAT32, 11, 100000);  // past the fusion buffer
  check_sum<double>(MXC_DTYPE_FLOAT64, 12, 33);
  check_sum<int32_t>(MXC_DTYPE_INT32, 13, 1);
  check_sum<int64_t>(MXC_DTYPE_INT64, 14, 1001);
  // One value: the lone keys past the fusion buffer take the ring's
  // out-of-place path (the value in, the store's array out), with chunks
  // that split unevenly over 3 ranks.
  check_sum<float>(MXC_DTYPE_FLOAT32, 15, 100001, 1);
  check_sum<double>(MXC_DTYPE_FLOAT64, 16, 1001, 1);
  check_sum<int32_t>(MXC_DTYPE_INT32, 17, 20000, 1);
  check_sum<float>(MXC_DTYPE_FLOAT32, 18, 5, 1);
}

// The overlap that push order buys (docs/kvstore.md, "Priorities"): the
// last layer's gradient, pushed first, is summed over the ranks while the
// first layer's is still being computed. That gradient is written by an
// asynchronous engine function that finishes only once the first key's
// pulled sum is there; if the store waited for both gradients before its
// first collective (or ran them in another order), neither would finish
// and the watchdog would end the job (dist_test.sh's
// MXC_KVSTORE_TIMEOUT). Nothing here depends on timing.
struct Gate {
  mxc_opctx ctx = nullptr;
  std::mutex m;
  std::condition_variable cv;
};

void gate_start(void *user, mxc_opctx ctx) {
  Gate *g = static_cast<Gate *>(user);
  std::lock_guard<std::mutex> l(g->m);
  g->ctx = ctx;
  g->cv.notify_all();
}

TEST(Dist, AKeyPushedFirstIsReducedWhileALaterOneIsStillComputed) {
  Job &j = job();
  int naive = 0;
  ASSERT_EQ(mxc_engine_is_naive(&naive), MXC_OK);
  if (naive) {
    // Every push, the asynchronous one too, finishes before it returns:
    // nothing overlaps, by design (the same on every rank).
    GTEST_SKIP() << "MXC_ENGINE=naive runs each push to its end";
  }
  const size_t n = 3000;  // past dist_test.sh's 4096-byte fusion buffer
  const int64_t keys[] = {60, 61};  // the last layer's, the first layer's
  std::vector<mxc_ndarray> init = {
      make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n, 0.f)),
      make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n, 0.f))};
  ASSERT_EQ(mxc_kvstore_init(j.kv, 2, keys, nullptr, init.data()), MXC_OK)
      << err();
  mxc_ndarray last = make_with<float>(MXC_DTYPE_FLOAT32,
                                      std::vector<float>(n, j.rank + 1.f));
  mxc_ndarray first = make_with<float>(MXC_DTYPE_FLOAT32,
                                       std::vector<float>(n, 0.f));
  Gate gate;
  ASSERT_EQ(mxc_engine_push_async(gate_start, &gate, nullptr, nullptr, 0,
                                  &first, 1, 0, "first_layer_backward"),
            MXC_OK)
      << err();
  std::thread backward([&] {
    {
      std::unique_lock<std::mutex> l(gate.m);
      gate.cv.wait(l, [&] { return gate.ctx != nullptr; });
    }
    EXPECT_EQ(mxc_ndarray_wait_to_read(last), MXC_OK) << err();
    void *data = nullptr;
    EXPECT_EQ(mxc_opctx_data(gate.ctx, 0, &data, nullptr), MXC_OK) << err();
    for (size_t i = 0; i < n; ++i) static_cast<float *>(data)[i] = 10.f * (j.rank + 1);
    EXPECT_EQ(mxc_opctx_complete(gate.ctx, MXC_OK, nullptr), MXC_OK) << err();
  });
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 1, &keys[0], nullptr, &last, &last, 0),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 1, &keys[1], nullptr, &first, &first,
                                 0),
            MXC_OK)
      << err();
  backward.join();
  const float ranks = (float)(j.size * (j.size + 1) / 2);
  EXPECT_EQ(read<float>(last, n), std::vector<float>(n, ranks));
  EXPECT_EQ(read<float>(first, n), std::vector<float>(n, 10.f * ranks));
  for (mxc_ndarray a : {last, first, init[0], init[1]}) mxc_ndarray_free(a);
}

// Many small keys in one call: fused into a few collectives.
TEST(Dist, ManyKeysInOnePushAreFusedAndUnpacked) {
  Job &j = job();
  const int nk = 40;
  const size_t n = 50;
  std::vector<int64_t> keys;
  std::vector<mxc_ndarray> w, v;
  for (int k = 0; k < nk; ++k) {
    keys.push_back(1000 + k);
    w.push_back(make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n)));
    v.push_back(make_with<float>(MXC_DTYPE_FLOAT32,
                                 values<float>(j.rank, 0, k, n)));
  }
  ASSERT_EQ(mxc_kvstore_init(j.kv, nk, keys.data(), nullptr, w.data()),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_push(j.kv, nk, keys.data(), nullptr, v.data(), 0),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_pull(j.kv, nk, keys.data(), nullptr, w.data(), 0),
            MXC_OK)
      << err();
  for (int k = 0; k < nk; ++k) {
    std::vector<float> want(n, 0.0f);
    for (int r = 0; r < j.size; ++r) {
      for (size_t i = 0; i < n; ++i) want[i] += (float)value(r, 0, k, i);
    }
    EXPECT_EQ(read<float>(w[k], n), want) << "key " << k;
    mxc_ndarray_free(w[k]);
    mxc_ndarray_free(v[k]);
  }
}

// A pushpull writes a key's output from its collective when the key has
// one output in the call (docs/kvstore.md, "Pushpull"), and by a pull when
// it has several; either way the output and the stored value are the sum
// and the pushed values are left as they were. Odd ranks push and then
// pull instead: the ranks' collectives still pair up. Keys: one past
// dist_test.sh's 4096-byte fusion buffer, two fused, one with two values
// and two outputs.
TEST(Dist, PushPullOutputsMatchStoredSumsHoweverEachRankCalls) {
  Job &j = job();
  const int64_t keys[] = {70, 71, 72, 73, 73};
  const size_t sizes[] = {5000, 7, 9, 11, 11};
  const int n = 5;
  std::vector<mxc_ndarray> w, v, o;
  for (int i = 0; i < n; ++i) {
    w.push_back(make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(sizes[i])));
    v.push_back(make_with<float>(MXC_DTYPE_FLOAT32,
                                 values<float>(j.rank, i, (int)keys[i], sizes[i])));
    o.push_back(make_with<float>(MXC_DTYPE_FLOAT32,
                                 std::vector<float>(sizes[i], -1.0f)));
  }
  ASSERT_EQ(mxc_kvstore_init(j.kv, n - 1, keys, nullptr, w.data()), MXC_OK)
      << err();
  if (j.rank % 2 == 0) {
    ASSERT_EQ(mxc_kvstore_pushpull(j.kv, n, keys, nullptr, v.data(), o.data(), 0),
              MXC_OK)
        << err();
  } else {
    ASSERT_EQ(mxc_kvstore_push(j.kv, n, keys, nullptr, v.data(), 0), MXC_OK)
        << err();
    ASSERT_EQ(mxc_kvstore_pull(j.kv, n, keys, nullptr, o.data(), 0), MXC_OK)
        << err();
  }
  ASSERT_EQ(mxc_kvstore_pull(j.kv, n - 1, keys, nullptr, w.data(), 0), MXC_OK)
      << err();
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    std::vector<float> want(sizes[i], 0.0f);
    for (int r = 0; r < j.size; ++r) {
      for (int d = 0; d < n; ++d) {
        if (keys[d] != keys[i]) continue;
        for (size_t e = 0; e < sizes[i]; ++e) want[e] += (float)value(r, d, (int)keys[d], e);
      }
    }
    EXPECT_EQ(read<float>(o[i], sizes[i]), want);
    if (i < n - 1) {
      EXPECT_EQ(read<float>(w[i], sizes[i]), want);
    }
    EXPECT_EQ(read<float>(v[i], sizes[i]),
              values<float>(j.rank, i, (int)keys[i], sizes[i]));
  }
  for (auto *l : {&w, &v, &o}) {
    for (mxc_ndarray a : *l) mxc_ndarray_free(a);
  }
}

std::vector<float> rank_randoms(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) x = u(g);
  return v;
}

// The bytes every rank holds, compared by rank 0 after a barrier.
void expect_same_on_every_rank(const std::vector<float> &mine,
                               const std::string &tag) {
  Job &j = job();
  const char *dir = std::getenv("TEST_TMPDIR");
  std::string base = std::string(dir ? dir : "/tmp") + "/kv_" + tag + "_";
  {
    std::ofstream f(base + std::to_string(j.rank), std::ios::binary);
    f.write(reinterpret_cast<const char *>(mine.data()),
            (std::streamsize)(mine.size() * sizeof(float)));
  }
  ASSERT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
  if (j.rank == 0) {
    for (int r = 1; r < j.size; ++r) {
      std::ifstream f(base + std::to_string(r), std::ios::binary);
      std::vector<float> theirs(mine.size());
      f.read(reinterpret_cast<char *>(theirs.data()),
             (std::streamsize)(theirs.size() * sizeof(float)));
      ASSERT_TRUE(f.good()) << "rank " << r << "'s file";
      EXPECT_EQ(std::memcmp(theirs.data(), mine.data(),
                            mine.size() * sizeof(float)),
                0)
          << "rank " << r << " holds other bits than rank 0 (" << tag << ")";
    }
  }
  ASSERT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
}

// Arbitrary floats: the sum within rounding of the naive one, and the
// same bits on every rank.
TEST(Dist, FloatSumsAreIdenticalOnEveryRank) {
  Job &j = job();
  const size_t n = 9999;
  const int64_t key = 20;
  mxc_ndarray a = make_with<float>(MXC_DTYPE_FLOAT32,
                                   rank_randoms(n, 500 + j.rank));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &a), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 1, &key, nullptr, &a, &a, 0), MXC_OK)
      << err();
  std::vector<float> got = read<float>(a, n);
  for (size_t i = 0; i < n; ++i) {
    double want = 0;
    for (int r = 0; r < j.size; ++r) want += rank_randoms(n, 500 + r)[i];
    ASSERT_NEAR(got[i], want, 1e-5) << i;
    if (i > 20) break;  // the naive reference is slow: spot-check a prefix
  }
  expect_same_on_every_rank(got, "float_sum");
  mxc_ndarray_free(a);
}

// 40 Adam steps from rank-specific starting values (init broadcasts rank
// 0's) with rank-specific integer gradients: the weights are the same
// bits on every rank and equal adam_update's on the exact sum.
TEST(Dist, ParametersStayBitIdenticalOverManyOptimizerSteps) {
  Job &j = job();
  const size_t n = 3000;
  const int64_t key = 30;
  const char *pk[] = {"lr", "wd", "rescale_grad"};
  const char *pv[] = {"0.01", "0.001", "0.125"};
  ASSERT_EQ(mxc_kvstore_set_optimizer(j.kv, "adam_update", pk, pv, 3),
            MXC_OK)
      << err();
  std::vector<float> w0 = rank_randoms(n, 7);  // rank 0's start
  mxc_ndarray w = make_with<float>(MXC_DTYPE_FLOAT32,
                                   rank_randoms(n, 7 + j.rank));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &w), MXC_OK) << err();
  mxc_ndarray ref = make_with<float>(MXC_DTYPE_FLOAT32, w0);
  mxc_ndarray mean = make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n));
  mxc_ndarray var = make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n));
  mxc_op adam = nullptr;
  ASSERT_EQ(mxc_op_find("adam_update", &adam), MXC_OK);
  for (int step = 0; step < 40; ++step) {
    mxc_ndarray g = make_with<float>(MXC_DTYPE_FLOAT32,
                                     values<float>(j.rank, step, 0, n));
    ASSERT_EQ(mxc_kvstore_push(j.kv, 1, &key, nullptr, &g, 0), MXC_OK)
        << err();
    std::vector<float> sum(n, 0.0f);
    for (int r = 0; r < j.size; ++r) {
      for (size_t i = 0; i < n; ++i) sum[i] += (float)value(r, step, 0, i);
    }
    mxc_ndarray gs = make_with<float>(MXC_DTYPE_FLOAT32, sum);
    mxc_ndarray in[4] = {ref, gs, mean, var};
    ASSERT_EQ(mxc_op_invoke(adam, pk, pv, 3, in, 4, &ref, 1, nullptr),
              MXC_OK)
        << err();
    mxc_ndarray_free(g);
    mxc_ndarray_free(gs);
  }
  ASSERT_EQ(mxc_kvstore_pull(j.kv, 1, &key, nullptr, &w, 0), MXC_OK) << err();
  std::vector<float> got = read<float>(w, n), want = read<float>(ref, n);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
  expect_same_on_every_rank(got, "adam");
  ASSERT_EQ(mxc_kvstore_set_updater(j.kv, nullptr, nullptr), MXC_OK);
  for (mxc_ndarray a : {w, ref, mean, var}) mxc_ndarray_free(a);
}

// Data-parallel SGD through the store equals SGD on the whole batch in
// one process, within floating-point reordering: a linear least-squares
// model, the global batch of 12 rows split over the ranks (rows r, r+n,
// ...), each rank's gradient X_r^T (X_r w - y_r) pushed and summed by
// the store (sgd_update, rescale_grad 1/12); the reference computes the
// gradient of all 12 rows here and calls sgd_update itself.
std::vector<float> lsq_grad(const std::vector<float> &w, int first, int step,
                            int stride) {
  const int rows = 12, dim = 5;
  std::vector<float> g(dim, 0.0f);
  for (int r = first; r < rows; r += stride) {
    float x[dim], pred = 0.0f, y = (float)(r % 3) - 1.0f;
    for (int d = 0; d < dim; ++d) {
      x[d] = (float)(((r * 7 + d * 3 + step) % 11) - 5) / 5.0f;
      pred += x[d] * w[d];
    }
    for (int d = 0; d < dim; ++d) g[d] += (pred - y) * x[d];
  }
  return g;
}

TEST(Dist, DataParallelSgdMatchesOneProcessWithTheGlobalBatch) {
  Job &j = job();
  const char *pk[] = {"lr", "rescale_grad"}, *pv[] = {"0.5", "0.0833333333"};
  ASSERT_EQ(mxc_kvstore_set_optimizer(j.kv, "sgd_update", pk, pv, 2), MXC_OK)
      << err();
  const int64_t key = 40;
  mxc_ndarray w = make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(5));
  mxc_ndarray ref = make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(5));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &w), MXC_OK) << err();
  mxc_op sgd = nullptr;
  ASSERT_EQ(mxc_op_find("sgd_update", &sgd), MXC_OK);
  for (int step = 0; step < 30; ++step) {
    mxc_ndarray g = make_with<float>(
        MXC_DTYPE_FLOAT32, lsq_grad(read<float>(w, 5), j.rank, step, j.size));
    ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 1, &key, nullptr, &g, &w, 0), MXC_OK)
        << err();
    mxc_ndarray gall = make_with<float>(
        MXC_DTYPE_FLOAT32, lsq_grad(read<float>(ref, 5), 0, step, 1));
    mxc_ndarray in[2] = {ref, gall};
    ASSERT_EQ(mxc_op_invoke(sgd, pk, pv, 2, in, 2, &ref, 1, nullptr), MXC_OK)
        << err();
    mxc_ndarray_free(g);
    mxc_ndarray_free(gall);
  }
  std::vector<float> got = read<float>(w, 5), want = read<float>(ref, 5);
  for (int d = 0; d < 5; ++d) {
    EXPECT_NEAR(got[d], want[d], 1e-5f * (1.0f + std::fabs(want[d]))) << d;
  }
  EXPECT_GT(std::fabs(want[0]) + std::fabs(want[1]), 0.01f) << "no training";
  ASSERT_EQ(mxc_kvstore_set_updater(j.kv, nullptr, nullptr), MXC_OK);
  mxc_ndarray_free(w);
  mxc_ndarray_free(ref);
}

TEST(Dist, InvalidUseIsAnErrorOnTheCallingRank) {
  Job &j = job();
  const char *k[] = {"never"};
  mxc_ndarray a = make({3}, MXC_DTYPE_FLOAT32);
  EXPECT_EQ(mxc_kvstore_push(j.kv, 1, nullptr, k, &a, 0), MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("key 'never'"), std::string::npos) << err();
  mxc_ndarray_free(a);
}

// Every worker must init a key with the same shape and dtype. A
// difference is found at init on every rank (the ranks exchange their
// keys' descriptions), named with both descriptions, before anything is
// broadcast; nothing is initialised, and the job stays in step. Rank 0
// differs from the others here, so rank 0 names rank 1 and the others
// name rank 0. The broadcast alone would not notice a difference of the
// same byte count (the first two cases).
void expect_init_disagrees(const char *key, mxc_ndarray a, int code,
                           const std::string &mine,
                           const std::string &rank0s,
                           const std::string &others) {
  Job &j = job();
  const char *k[] = {key};
  EXPECT_EQ(mxc_kvstore_init(j.kv, 1, nullptr, k, &a), code) << err();
  std::string want = std::string("key '") + key + "' is " + mine +
                     " on this rank and " +
                     (j.rank == 0 ? others + " on rank 1"
                                  : rank0s + " on rank 0");
  EXPECT_NE(err().find(want), std::string::npos)
      << "want \"" << want << "\" in: " << err();
  // Not initialised anywhere.
  EXPECT_EQ(mxc_kvstore_pull(j.kv, 1, nullptr, k, &a, 0), MXC_ERR_NOT_FOUND);
  mxc_ndarray_free(a);
}

TEST(Dist, InitOfAKeyThatDiffersBetweenRanksFailsOnEveryRank) {
  Job &j = job();
  const bool r0 = j.rank == 0;
  // The same 24 bytes: 2x3 against 3x2.
  expect_init_disagrees("same bytes, other shape",
                        make(r0 ? std::vector<int64_t>{2, 3}
                                : std::vector<int64_t>{3, 2},
                             MXC_DTYPE_FLOAT32),
                        MXC_ERR_SHAPE, r0 ? "(2,3) float32" : "(3,2) float32",
                        "(2,3) float32", "(3,2) float32");
  // The same 24 bytes: float32 against int32.
  expect_init_disagrees(
      "same bytes, other dtype",
      make({6}, r0 ? MXC_DTYPE_FLOAT32 : MXC_DTYPE_INT32), MXC_ERR_DTYPE,
      r0 ? "(6) float32" : "(6) int32", "(6) float32", "(6) int32");
  // 24 bytes against 28.
  expect_init_disagrees("other bytes", make({r0 ? 6 : 7}, MXC_DTYPE_FLOAT32),
                        MXC_ERR_SHAPE, r0 ? "(6) float32" : "(7) float32",
                        "(6) float32", "(7) float32");
  // The job is still in step: the same key, agreed, holds rank 0's value.
  const char *k[] = {"other bytes"};
  mxc_ndarray a = make_with<float>(MXC_DTYPE_FLOAT32,
                                   std::vector<float>(6, (float)j.rank + 2));
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, nullptr, k, &a), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pull(j.kv, 1, nullptr, k, &a, 0), MXC_OK) << err();
  EXPECT_EQ(read<float>(a, 6), std::vector<float>(6, 2.0f));
  mxc_ndarray_free(a);
}

TEST(Dist, InitOfOtherKeysOrCountsFailsOnEveryRank) {
  Job &j = job();
  const bool r0 = j.rank == 0;
  mxc_ndarray a[2] = {make({4}, MXC_DTYPE_FLOAT32),
                      make({4}, MXC_DTYPE_FLOAT32)};
  const int64_t other[] = {r0 ? 900 : 901};
  EXPECT_EQ(mxc_kvstore_init(j.kv, 1, other, nullptr, a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find(std::string("argument 0 is key ") +
                       (r0 ? "900" : "901") + " on this rank and another key"),
            std::string::npos)
      << err();
  const int64_t two[] = {902, 903};
  EXPECT_EQ(mxc_kvstore_init(j.kv, r0 ? 2 : 1, two, nullptr, a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find(r0 ? "n = 2 on this rank (0) and n = 1 on rank 1"
                          : "n = 1 on this rank"),
            std::string::npos)
      << err();
  // Rank 0's own checks fail (a key given twice): rank 0 says why, the
  // others that rank 0's init failed; none waits for the others.
  const int64_t twice[] = {904, r0 ? 904 : 905};
  EXPECT_EQ(mxc_kvstore_init(j.kv, 2, twice, nullptr, a),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find(r0 ? "given twice" : "rank 0's init failed"),
            std::string::npos)
      << err();
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  EXPECT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
}

// Rank 0 makes the n-th allocation of a fused pushpull fail, n = 1, 2,
// ... until the fusion buffer's does (the last allocation before the
// collective is pushed, all of them in this thread: the engine is idle).
// Each failing call must return MXC_ERR_OOM, leak nothing and push
// nothing: the pull that follows still sees the init values, which a
// collective pushed by the failed call would have replaced with the sum
// once the other ranks' collective met it. The other ranks push once and
// wait meanwhile; then rank 0 pushes again and every rank gets the sum.
int failing_pushpulls(const std::vector<int64_t> &keys,
                      std::vector<mxc_ndarray> &v, size_t n) {
  mxct::settle();
  const int64_t live0 = mxc__alloc_live();
  int failures = 0;
  for (int64_t at = 1; at < 1000; ++at) {
    mxc__fault_alloc_arm(at, 0);
    int rc = mxc_kvstore_pushpull(job().kv, (int)keys.size(), keys.data(),
                                  nullptr, v.data(), v.data(), 0);
    mxc__fault_alloc_arm(0, 0);
    EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << at << ": " << err();
    if (rc != MXC_ERR_OOM) return failures;
    ++failures;
    mxc_ndarray out = make({(int64_t)n}, MXC_DTYPE_FLOAT32);
    EXPECT_EQ(mxc_kvstore_pull(job().kv, 1, keys.data(), nullptr, &out, 0),
              MXC_OK);
    EXPECT_EQ(read<float>(out, n), std::vector<float>(n, 0.0f))
        << "allocation " << at << ": the failed push changed the store";
    mxc_ndarray_free(out);
    mxct::settle();
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after allocation " << at;
    if (err().find("fusion buffer") != std::string::npos) return failures;
  }
  ADD_FAILURE() << "no failure reached the fusion buffer";
  return failures;
}

TEST(Dist, FusionBufferOutOfMemoryIsAnErrorOnTheCallingRank) {
  Job &j = job();
  const size_t n = 100;  // 3 keys of 400 bytes: one fused collective
  std::vector<int64_t> keys = {50, 51, 52};
  std::vector<mxc_ndarray> w, v;
  for (int k = 0; k < 3; ++k) {
    w.push_back(make_with<float>(MXC_DTYPE_FLOAT32, std::vector<float>(n)));
    v.push_back(make_with<float>(MXC_DTYPE_FLOAT32,
                                 values<float>(j.rank, 0, k, n)));
  }
  ASSERT_EQ(mxc_kvstore_init(j.kv, 3, keys.data(), nullptr, w.data()),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_wait_all(), MXC_OK) << err();
  if (j.rank == 0) {
    EXPECT_GE(failing_pushpulls(keys, v, n), 2);
    EXPECT_NE(err().find("out of memory for a fusion buffer of 1200 bytes"),
              std::string::npos)
        << err();
  }
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 3, keys.data(), nullptr, v.data(),
                                 v.data(), 0),
            MXC_OK)
      << err();
  for (int k = 0; k < 3; ++k) {
    std::vector<float> want(n, 0.0f);
    for (int r = 0; r < j.size; ++r) {
      for (size_t i = 0; i < n; ++i) want[i] += (float)value(r, 0, k, i);
    }
    EXPECT_EQ(read<float>(v[k], n), want) << "key " << k;
    mxc_ndarray_free(w[k]);
    mxc_ndarray_free(v[k]);
  }
}

// ---- GPU values (docs/kvstore.md, "NCCL") ----
// With the fake GPU plug-in (MXC_CUDA_PLUGIN; its device memory faults on
// any host access), whose NCCL table sums across the ranks through shared
// memory. MXC_TEST_NCCL says what this run expects: "on" (default): every
// push of GPU values alone goes through NCCL; "off": none does
// (MXC_FAKE_NCCL=missing or init_fail, or MXC_KVSTORE_NCCL=0), and
// MXC_TEST_NCCL_WHY is part of the reason; "error": NCCL's allreduce
// fails (MXC_FAKE_NCCL=async_error). Sums are the same either way.

std::string nccl_mode() {
  const char *m = std::getenv("MXC_TEST_NCCL");
  return m ? m : "on";
}

// The fake NCCL's count of allreduces in this process (-1: no fake).
int fake_nccl_allreduces() {
  const char *path = std::getenv("MXC_CUDA_PLUGIN");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  void *sym = h ? dlsym(h, "mxc_fake_nccl_allreduces") : nullptr;
  int n = sym ? reinterpret_cast<int (*)()>(sym)() : -1;
  if (h) dlclose(h);
  return n;
}

bool have_gpu() {
  int n = 0;
  return mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0;
}

template <class T>
mxc_ndarray gpu_with(int dtype, const std::vector<T> &v) {
  int64_t shape[] = {(int64_t)v.size()};
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape, 1, dtype, MXC_DEVICE_GPU, 0, 0, &a),
            MXC_OK)
      << err();
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(T)),
            MXC_OK)
      << err();
  return a;
}

// The sum over the ranks of value(r, 0, key, i), as the CPU run has it.
template <class T>
std::vector<T> rank_sum(int64_t key, size_t n) {
  std::vector<T> want(n, T(0));
  for (int r = 0; r < job().size; ++r) {
    for (size_t i = 0; i < n; ++i) want[i] += (T)value(r, 0, (int)key, i);
  }
  return want;
}

// Keys of one dtype, GPU values, pushpulled into GPU outputs (or in
// place), then pulled into host arrays (the stored arrays' copy).
template <class T>
void check_gpu_sums(int dtype, const std::vector<int64_t> &keys,
                    const std::vector<size_t> &sizes, bool in_place) {
  Job &j = job();
  std::vector<mxc_ndarray> w, v, out;
  for (size_t k = 0; k < keys.size(); ++k) {
    w.push_back(gpu_with<T>(dtype, std::vector<T>(sizes[k], T(0))));
    v.push_back(gpu_with<T>(dtype, values<T>(j.rank, 0, (int)keys[k],
                                             sizes[k])));
    out.push_back(in_place ? v[k]
                           : gpu_with<T>(dtype, std::vector<T>(sizes[k],
                                                               T(-77))));
  }
  int n = (int)keys.size();
  ASSERT_EQ(mxc_kvstore_init(j.kv, n, keys.data(), nullptr, w.data()),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, n, keys.data(), nullptr, v.data(),
                                 out.data(), 0),
            MXC_OK)
      << err();
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<T> want = rank_sum<T>(keys[k], sizes[k]);
    EXPECT_EQ(read<T>(out[k], sizes[k]), want) << "key " << keys[k];
    mxc_ndarray h = make_with<T>(dtype, std::vector<T>(sizes[k], T(-5)));
    ASSERT_EQ(mxc_kvstore_pull(j.kv, 1, &keys[k], nullptr, &h, 0), MXC_OK)
        << err();
    EXPECT_EQ(read<T>(h, sizes[k]), want) << "key " << keys[k];
    mxc_ndarray_free(h);
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!in_place) mxc_ndarray_free(out[k]);
    mxc_ndarray_free(v[k]);
    mxc_ndarray_free(w[k]);
  }
}

TEST(DistGpu, GpuValuesSumAsOnTheCpuThroughNcclOrStaging) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU plug-in in this run";
  if (nccl_mode() == "error") GTEST_SKIP() << "NCCL fails in this run";
  int before = fake_nccl_allreduces();
  ASSERT_GE(before, 0) << "the fake GPU plug-in is expected";
  // Sizes past the fake's 64 KiB chunks, every dtype, several keys in
  // one call (never fused on the NCCL path), in place and not.
  check_gpu_sums<float>(MXC_DTYPE_FLOAT32, {100}, {7}, false);
  check_gpu_sums<float>(MXC_DTYPE_FLOAT32, {101}, {100001}, true);
  check_gpu_sums<double>(MXC_DTYPE_FLOAT64, {102, 103}, {33, 20000}, false);
  check_gpu_sums<int32_t>(MXC_DTYPE_INT32, {104}, {1001}, true);
  check_gpu_sums<int64_t>(MXC_DTYPE_INT64, {105, 106, 107}, {3, 1, 5000},
                          false);
  int used = fake_nccl_allreduces() - before;
  EXPECT_EQ(used, nccl_mode() == "on" ? 8 : 0);  // one per key
  // A key given twice is summed on the host first: staged, never NCCL.
  Job &j = job();
  const int64_t keys[] = {108, 108};
  mxc_ndarray w = gpu_with<float>(MXC_DTYPE_FLOAT32, {0, 0, 0});
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, keys, nullptr, &w), MXC_OK) << err();
  mxc_ndarray v[] = {
      gpu_with<float>(MXC_DTYPE_FLOAT32, values<float>(j.rank, 0, 108, 3)),
      gpu_with<float>(MXC_DTYPE_FLOAT32, values<float>(j.rank, 1, 108, 3))};
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 2, keys, nullptr, v, v, 0), MXC_OK)
      << err();
  std::vector<float> want(3, 0.0f);
  for (int r = 0; r < j.size; ++r) {
    for (size_t i = 0; i < 3; ++i) {
      want[i] += (float)value(r, 0, 108, i) + (float)value(r, 1, 108, i);
    }
  }
  EXPECT_EQ(read<float>(v[0], 3), want);
  EXPECT_EQ(fake_nccl_allreduces() - before, used);
  for (mxc_ndarray a : v) mxc_ndarray_free(a);
  mxc_ndarray_free(w);
}

// Where NCCL is off, MXC_KVSTORE_NCCL=1 makes a push of GPU values an
// error on every rank (nothing pushed: the job stays in step), naming
// the reason NCCL was turned off.
TEST(DistGpu, RequiredNcclThatIsOffIsAnErrorNamingWhy) {
  if (!have_gpu() || nccl_mode() != "off") GTEST_SKIP() << "NCCL is on";
  Job &j = job();
  const char *old = std::getenv("MXC_KVSTORE_NCCL");
  std::string keep = old ? old : "";
  setenv("MXC_KVSTORE_NCCL", "1", 1);
  const int64_t key = 109;
  mxc_ndarray w = gpu_with<float>(MXC_DTYPE_FLOAT32, {1, 2});
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &w), MXC_OK) << err();
  EXPECT_EQ(mxc_kvstore_pushpull(j.kv, 1, &key, nullptr, &w, &w, 0),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(err().find("NCCL cannot be used"), std::string::npos) << err();
  const char *why = std::getenv("MXC_TEST_NCCL_WHY");
  EXPECT_NE(err().find(why ? why : "?"), std::string::npos) << err();
  if (old) {
    setenv("MXC_KVSTORE_NCCL", keep.c_str(), 1);
  } else {
    unsetenv("MXC_KVSTORE_NCCL");
  }
  EXPECT_EQ(read<float>(w, 2), (std::vector<float>{1, 2}));
  mxc_ndarray_free(w);
}

// An NCCL failure fails the work of that key on every rank; the wait
// names the key and NCCL's reason.
TEST(DistGpu, AFailingNcclAllreduceNamesTheKeyAtTheWait) {
  if (!have_gpu() || nccl_mode() != "error") GTEST_SKIP() << "no failure";
  Job &j = job();
  const int64_t key = 110;
  mxc_ndarray w = gpu_with<float>(MXC_DTYPE_FLOAT32, {1, 2, 3});
  ASSERT_EQ(mxc_kvstore_init(j.kv, 1, &key, nullptr, &w), MXC_OK) << err();
  ASSERT_EQ(mxc_kvstore_pushpull(j.kv, 1, &key, nullptr, &w, &w, 0), MXC_OK)
      << err();
  std::vector<float> out(3);
  EXPECT_NE(mxc_ndarray_copy_to_host(w, out.data(), sizeof(float) * 3),
            MXC_OK);
  EXPECT_NE(err().find("kvstore NCCL allreduce key 110"), std::string::npos)
      << err();
  EXPECT_NE(err().find("remote process exited"), std::string::npos) << err();
  mxc_ndarray_free(w);
  (void)mxc_wait_all();  // reports the failure once more, if at all
}

class DistEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    Job &j = job();
    ASSERT_EQ(mxc_kvstore_create("dist_sync", &j.kv), MXC_OK) << err();
    ASSERT_EQ(mxc_kvstore_rank(j.kv, &j.rank), MXC_OK);
    ASSERT_EQ(mxc_kvstore_num_workers(j.kv, &j.size), MXC_OK);
  }
  void TearDown() override {
    int rc = mxc_wait_all();
    if (nccl_mode() != "error") {
      EXPECT_EQ(rc, MXC_OK) << err();
    }
    mxc_kvstore_free(job().kv);
  }
};

const auto *g_env = ::testing::AddGlobalTestEnvironment(new DistEnv);

}  // namespace
