// Training across the ranks of an MPI job (dist_test.sh runs this binary
// under mpirun with 2 and 3 ranks on loopback):
//  - an MLP trained data-parallel (each rank its part of a CSV file via
//    mxc_data_iter_set_parts, gradients summed by a dist_sync store, one
//    optimizer step per global batch) ends within floating-point
//    reordering of the same MLP trained in one process on the global
//    batches, and with the same bits on every rank;
//  - mxc_fit with the store (mxc_fit_set_kvstore): the training iterator
//    is sharded by rank, ranks whose parts hold different numbers of
//    batches still make the same steps, every rank ends with the same
//    parameters bit for bit (starting from other random values: rank 0's
//    are broadcast) and the accuracy goal is reached.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/kvstore/kv_test_util.h"

namespace {

using namespace kvtest;

#define OK(x) ASSERT_EQ((x), MXC_OK) << err()

struct Job {
  mxc_kvstore kv = nullptr;
  int rank = -1, size = -1;
};

Job &job() {
  static Job j;
  return j;
}

std::string tmp_path(const std::string &name) {
  const char *dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name + "_" +
         std::to_string(job().rank);
}

// Three classes in 4-d (class c has feature c large), rows in a fixed
// order; each rank writes its own copy.
void write_data(const std::string &data, const std::string &labels,
                int rows) {
  std::ofstream d(data), l(labels);
  for (int i = 0; i < rows; ++i) {
    int c = (i * 7) % 3;
    for (int j = 0; j < 4; ++j) {
      double v = (j == c ? 1.5 : -0.5) + 0.4 * std::sin(1.3 * i + 2.1 * j);
      d << (j ? "," : "") << v;
    }
    d << "\n";
    l << c << "\n";
  }
}

mxc_data_iter csv_iter(const std::string &data, const std::string &labels,
                       int64_t batch) {
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_csv_create(data.c_str(), labels.c_str(), 0, batch,
                                     0, -1, MXC_LAST_BATCH_DISCARD, &it),
            MXC_OK)
      << err();
  return it;
}

mxc_block make_block(const char *kind, const char *name,
                     std::vector<const char *> k = {},
                     std::vector<const char *> v = {}) {
  mxc_block b = nullptr;
  EXPECT_EQ(mxc_block_create(kind, name, k.data(), v.data(), (int)k.size(),
                             &b),
            MXC_OK)
      << err();
  return b;
}

// dense(16, relu) -> dense(3), softmax cross-entropy, SGD.
struct Mlp {
  mxc_block net = nullptr, loss = nullptr;
  mxc_optimizer opt = nullptr;
  Mlp() {
    net = make_block("sequential", "net");
    mxc_block h = make_block("dense", "h", {"units", "activation"},
                             {"16", "relu"});
    mxc_block o = make_block("dense", "o", {"units"}, {"3"});
    EXPECT_EQ(mxc_block_add(net, h), MXC_OK);
    EXPECT_EQ(mxc_block_add(net, o), MXC_OK);
    mxc_block_free(h);
    mxc_block_free(o);
    EXPECT_EQ(mxc_block_initialize(net, "xavier", nullptr, nullptr, 0, 0),
              MXC_OK);
    loss = make_block("softmax_cross_entropy_loss", "loss");
    const char *k[] = {"lr"}, *v[] = {"0.1"};
    EXPECT_EQ(mxc_optimizer_create(net, "sgd_update", k, v, 1, &opt), MXC_OK)
        << err();
  }
  ~Mlp() {
    mxc_optimizer_free(opt);
    mxc_block_free(net);
    mxc_block_free(loss);
  }
  int num_params() {
    int n = 0;
    EXPECT_EQ(mxc_block_num_params(net, &n), MXC_OK);
    return n;
  }
  mxc_ndarray param(int i, bool grad) {
    mxc_ndarray p = nullptr;
    EXPECT_EQ(grad ? mxc_block_param_grad(net, i, &p)
                   : mxc_block_param(net, i, &p),
              MXC_OK)
        << err();
    return p;
  }
  std::vector<float> params() {
    std::vector<float> out;
    for (int i = 0; i < num_params(); ++i) {
      mxc_ndarray p = param(i, false);
      int64_t size = 0;
      mxc_ndarray_size(p, &size);
      std::vector<float> v = read<float>(p, (size_t)size);
      out.insert(out.end(), v.begin(), v.end());
      mxc_ndarray_free(p);
    }
    return out;
  }
};

// Forward (recorded, training mode) and backward on the iterator's batch;
// returns the batch's loss sum.
double forward_backward(Mlp &m, mxc_data_iter it) {
  mxc_ndarray x = nullptr, y = nullptr, out = nullptr, l = nullptr;
  EXPECT_EQ(mxc_data_iter_data(it, &x), MXC_OK);
  EXPECT_EQ(mxc_data_iter_label(it, &y), MXC_OK);
  mxc_set_training(1, nullptr);
  mxc_autograd_set_recording(1, nullptr);
  EXPECT_EQ(mxc_block_forward(m.net, 1, &x, &out), MXC_OK) << err();
  mxc_ndarray pair[2] = {out, y};
  EXPECT_EQ(mxc_block_forward(m.loss, 2, pair, &l), MXC_OK) << err();
  mxc_autograd_set_recording(0, nullptr);
  mxc_set_training(0, nullptr);
  EXPECT_EQ(mxc_autograd_backward(1, &l, nullptr, 0), MXC_OK) << err();
  int64_t n = 0;
  mxc_ndarray_size(l, &n);
  double sum = 0;
  for (float v : read<float>(l, (size_t)n)) sum += v;
  for (mxc_ndarray a : {x, y, out, l}) mxc_ndarray_free(a);
  return sum;
}

// Makes the parameters (a forward pass, not recorded) from seed.
void make_params(Mlp &m, mxc_data_iter it, uint64_t seed) {
  mxc_random_seed(seed);
  int has = 0;
  ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  ASSERT_TRUE(has);
  mxc_ndarray x = nullptr, out = nullptr;
  OK(mxc_data_iter_data(it, &x));
  OK(mxc_block_forward(m.net, 1, &x, &out));
  mxc_ndarray_free(x);
  mxc_ndarray_free(out);
  OK(mxc_data_iter_reset(it));
}

// The gradients of every parameter, summed over the ranks in place.
void sum_gradients(Mlp &m, bool init) {
  Job &j = job();
  int n = m.num_params();
  std::vector<const char *> keys;
  std::vector<mxc_ndarray> g;
  for (int i = 0; i < n; ++i) {
    const char *name = nullptr;
    ASSERT_EQ(mxc_block_param_name(m.net, i, &name), MXC_OK);
    keys.push_back(name);
    g.push_back(m.param(i, true));
  }
  if (init) {
    OK(mxc_kvstore_init(j.kv, n, nullptr, keys.data(), g.data()));
  }
  OK(mxc_kvstore_pushpull(j.kv, n, nullptr, keys.data(), g.data(), g.data(),
                          0));
  for (mxc_ndarray a : g) mxc_ndarray_free(a);
}

// Writes this rank's bytes; rank 0 compares every rank's with its own.
void expect_same_on_every_rank(const std::vector<float> &mine) {
  Job &j = job();
  const char *dir = std::getenv("TEST_TMPDIR");
  std::string base = std::string(dir ? dir : "/tmp") + "/train_params_";
  {
    std::ofstream f(base + std::to_string(j.rank), std::ios::binary);
    f.write(reinterpret_cast<const char *>(mine.data()),
            (std::streamsize)(mine.size() * sizeof(float)));
  }
  ASSERT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
  for (int r = 1; r < j.size && j.rank == 0; ++r) {
    std::ifstream f(base + std::to_string(r), std::ios::binary);
    std::vector<float> theirs(mine.size());
    f.read(reinterpret_cast<char *>(theirs.data()),
           (std::streamsize)(theirs.size() * sizeof(float)));
    ASSERT_TRUE(f.good()) << "rank " << r << "'s file";
    EXPECT_EQ(std::memcmp(theirs.data(), mine.data(),
                          mine.size() * sizeof(float)),
              0)
        << "rank " << r << " holds other parameters than rank 0";
  }
  ASSERT_EQ(mxc_kvstore_barrier(j.kv), MXC_OK) << err();
}

// The tolerance, and which reordering. Each gradient element is a sum
// over the m examples of a global batch of per-example terms
// t_i = dL_i/dz * a_i (a_i an input or a hidden activation). One process
// sums all m in its GEMM's order; the job sums each rank's m/n examples in
// that rank's GEMM, then the n partial sums in the ring's fixed order.
// Same terms, other order: two float32 orders of m terms differ by at
// most 2(m-1) u sum|t_i| (u = 2^-24), and |dL/dz| <= 1 for softmax
// cross-entropy, so after the 1/m rescale a gradient differs by at most
// 2(m-1) u A, with A the largest activation (inputs below 2, hidden
// activations below 10 here). One SGD step (lr 0.1) then moves a
// parameter differently by at most 0.1 * 2 * 23 * 6e-8 * 10 = 2.8e-6 for
// m = 24 (3 ranks), and 18 steps add up to 5e-5 when the differences do
// not grow, which gradient descent with lr * curvature < 1 on this nearly
// convex loss ensures up to a small factor: 1e-4. The observed difference
// is ~3e-8 (the bound is for the worst case); a real error (a part lost,
// a wrong rescale, a stale gradient) moves parameters by far more than
// 1e-4: training moves them by 0.3.
constexpr float kTolerance = 1e-4f;

TEST(DistTrain, MlpMatchesOneProcessWithTheSameGlobalBatch) {
  Job &j = job();
  const int local = 8, global = local * j.size, rows = 96 * j.size / 2;
  const std::string data = tmp_path("mlp.csv"), labels = tmp_path("y.csv");
  write_data(data, labels, rows);
  // Round robin: rank r reads rows e with e % n == r, so its batch k is
  // rows n*(local*k + i) + r, and the ranks' batches k together are rows
  // [global*k, global*(k+1)): batch k of the one-process iterator.
  mxc_data_iter part = csv_iter(data, labels, local);
  OK(mxc_data_iter_set_parts(part, j.size, j.rank));
  mxc_data_iter whole = csv_iter(data, labels, global);
  Mlp dist, one;
  make_params(dist, part, 11);
  make_params(one, whole, 11);
  std::vector<float> start = one.params();
  ASSERT_EQ(dist.params(), start) << "the same seed makes the same values";
  int steps = 0;
  double first_loss = 0, last_loss = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    OK(mxc_data_iter_reset(part));
    OK(mxc_data_iter_reset(whole));
    for (int has_p = 1, has_w = 1;;) {
      OK(mxc_data_iter_next(part, &has_p));
      OK(mxc_data_iter_next(whole, &has_w));
      ASSERT_EQ(has_p, has_w) << "the parts hold the global batches";
      if (!has_p) break;
      forward_backward(dist, part);
      sum_gradients(dist, steps == 0);
      OK(mxc_optimizer_step(dist.opt, global));
      double l = forward_backward(one, whole) / global;
      OK(mxc_optimizer_step(one.opt, global));
      if (steps++ == 0) first_loss = l;
      last_loss = l;
    }
  }
  EXPECT_EQ(steps, 3 * rows / global);
  std::vector<float> got = dist.params(), want = one.params();
  ASSERT_EQ(got.size(), want.size());
  float moved = 0, diff = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    moved = std::max(moved, std::fabs(want[i] - start[i]));
    diff = std::max(diff, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(diff, kTolerance) << "data-parallel vs one process";
  EXPECT_GT(moved, 0.1f) << "the parameters hardly trained";
  EXPECT_LT(last_loss, 0.8 * first_loss) << "the loss did not go down";
  std::printf("rank %d: %d steps, max |data-parallel - one process| = %g, "
              "max move %g, loss %g -> %g\n",
              j.rank, steps, diff, moved, first_loss, last_loss);
  expect_same_on_every_rank(got);
  mxc_data_iter_free(part);
  mxc_data_iter_free(whole);
}

TEST(DistTrain, FitThroughTheStoreShardsAndKeepsRanksIdentical) {
  Job &j = job();
  // Round robin parts of 56 rows on rank 0 and 55 on the others: 7 and 6
  // batches of 8 (the last partial one discarded), so the ranks must agree
  // to stop after 6.
  const int rows = 56 * j.size - (j.size - 1);
  const std::string data = tmp_path("fit.csv"), labels = tmp_path("fy.csv");
  write_data(data, labels, rows);
  mxc_data_iter train = csv_iter(data, labels, 8);
  mxc_data_iter val = csv_iter(data, labels, 16);
  Mlp m;
  mxc_random_seed(100 + (uint64_t)j.rank);  // other values on every rank
  const char *k[] = {"epochs", "progress"}, *v[] = {"8", "0"};
  mxc_fit fit = nullptr;
  OK(mxc_fit_create(m.net, m.loss, m.opt, k, v, 2, &fit));
  OK(mxc_fit_set_kvstore(fit, j.kv));
  OK(mxc_fit_run(fit, train, val));
  double workers = 0, rank = -1, updates = 0, acc = 0;
  OK(mxc_fit_value(fit, "num_workers", &workers));
  OK(mxc_fit_value(fit, "rank", &rank));
  OK(mxc_fit_value(fit, "num_update", &updates));
  OK(mxc_fit_value(fit, "val_accuracy", &acc));
  EXPECT_EQ(workers, j.size);
  EXPECT_EQ(rank, j.rank);
  EXPECT_EQ(updates, 8 * 6) << "6 batches per epoch on every rank";
  EXPECT_GE(acc, 0.9) << "the accuracy goal";
  std::printf("rank %d: fit with %d workers: %g updates, val accuracy %g\n",
              j.rank, j.size, updates, acc);
  expect_same_on_every_rank(m.params());
  mxc_fit_free(fit);
  mxc_data_iter_free(train);
  mxc_data_iter_free(val);
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
    EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
    mxc_kvstore_free(job().kv);
  }
};

const auto *g_env = ::testing::AddGlobalTestEnvironment(new DistEnv);

}  // namespace
