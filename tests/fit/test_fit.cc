// Training through the public C API, with the model code of
// examples/train_fashion_mnist (examples/fmnist.c):
//  - on synthetic, linearly separable 10-class data (always available) the
//    MLP's loss falls well below its starting value (about ln 10) and
//    held-out examples are classified almost perfectly;
//  - on a few hundred batches of Fashion-MNIST (skipped when the Debian
//    dataset is absent) the MLP and LeNet reduce the loss and beat chance
//    (10%) by far on test images;
//  - resume: k steps, checkpoint, a fresh network loaded from it, k more
//    steps equal 2k uninterrupted steps bit for bit (the engine is
//    deterministic for a given seed), and checkpoints of the wrong model
//    or missing files are reported without changing the network.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "examples/fmnist.h"
#include "mxc/mxc.h"

namespace {

const char kDataDir[] = "/usr/share/datasets/fashion-mnist";

bool have_dataset() {
  return access((std::string(kDataDir) + "/train-images-idx3-ubyte.gz").c_str(),
                R_OK) == 0 &&
         access((std::string(kDataDir) + "/t10k-images-idx3-ubyte.gz").c_str(),
                R_OK) == 0;
}

std::string tmp_path(const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

mxc_ndarray host_array(const std::vector<int64_t> &shape,
                       const std::vector<float> &v) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(),
                               MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(float)),
            MXC_OK)
      << mxc_last_error();
  return a;
}

std::vector<float> to_host(mxc_ndarray a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  std::vector<float> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * sizeof(float)),
            MXC_OK)
      << mxc_last_error();
  return v;
}

// Every parameter of net, concatenated.
std::vector<float> params_of(fm_net *net) {
  int n = 0;
  const char *const *names = nullptr;
  const mxc_ndarray *arrays = nullptr;
  fm_net_params(net, &n, &names, &arrays);
  std::vector<float> all;
  for (int i = 0; i < n; ++i) {
    std::vector<float> v = to_host(arrays[i]);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

fm_net *make_net(fm_model model, int64_t batch, uint64_t seed) {
  fm_net *net = nullptr;
  EXPECT_EQ(fm_net_create(model, batch, &net), MXC_OK) << fm_last_error();
  if (net != nullptr) {
    EXPECT_EQ(fm_net_init(net, seed), MXC_OK) << fm_last_error();
  }
  return net;
}

// ---- synthetic data --------------------------------------------------------

// 10 classes, each a fixed random prototype in [0, 1]^784 plus uniform
// noise of amplitude 0.3: separable by a linear classifier.
struct Synthetic {
  std::vector<float> protos;
  uint32_t state = 12345;
  float uniform() {
    state = state * 1664525u + 1013904223u;
    return (float)(state >> 8) / 16777216.0f;
  }
  Synthetic() {
    protos.resize(10 * 784);
    for (float &p : protos) p = uniform() < 0.5f ? 0.0f : 1.0f;
  }
  // A batch: data (batch, 784) and labels (batch).
  void batch(int64_t b, mxc_ndarray *data, mxc_ndarray *label) {
    std::vector<float> x((size_t)(b * 784)), y((size_t)b);
    for (int64_t i = 0; i < b; ++i) {
      int c = (int)(uniform() * 10) % 10;
      y[(size_t)i] = (float)c;
      for (int j = 0; j < 784; ++j) {
        x[(size_t)(i * 784 + j)] =
            protos[(size_t)(c * 784 + j)] + 0.3f * (uniform() - 0.5f);
      }
    }
    *data = host_array({b, 784}, x);
    *label = host_array({b}, y);
  }
};

TEST(Fit, SyntheticMlpLearnsSeparableClasses) {
  const int64_t kBatch = 32;
  fm_net *net = make_net(FM_MLP, kBatch, 7);
  ASSERT_NE(net, nullptr);
  Synthetic syn;
  fm_opt opt = {0.05, 0.9, 0, -1};
  std::vector<double> losses;
  for (int s = 0; s < 60; ++s) {
    mxc_ndarray x = nullptr, y = nullptr;
    syn.batch(kBatch, &x, &y);
    fm_stats st = {0, 0, 0};
    ASSERT_EQ(fm_net_step(net, x, y, &opt, &st), MXC_OK) << fm_last_error();
    ASSERT_EQ(st.count, kBatch);
    losses.push_back(st.loss_sum / (double)st.count);
    mxc_ndarray_free(x);
    mxc_ndarray_free(y);
  }
  // Starts near ln 10 (small random weights: nearly uniform softmax).
  EXPECT_NEAR(losses[0], std::log(10.0), 0.5);
  double tail = 0;
  for (size_t i = losses.size() - 10; i < losses.size(); ++i) tail += losses[i];
  EXPECT_LT(tail / 10, 0.1 * losses[0]);
  // Held-out batches, with the last 5 rows of one declared padding.
  int64_t correct = 0;
  for (int b = 0; b < 4; ++b) {
    mxc_ndarray x = nullptr, y = nullptr;
    syn.batch(kBatch, &x, &y);
    ASSERT_EQ(fm_net_eval(net, x, y, b == 3 ? kBatch - 5 : kBatch, &correct),
              MXC_OK)
        << fm_last_error();
    mxc_ndarray_free(x);
    mxc_ndarray_free(y);
  }
  EXPECT_GE(correct, (int64_t)(0.95 * (4 * kBatch - 5)));
  EXPECT_LE(correct, 4 * kBatch - 5);
  fm_net_free(net);
}

// ---- Fashion-MNIST ---------------------------------------------------------

mxc_data_iter open_iter(const char *prefix, int64_t batch, int shuffle,
                        int flat, int last_batch) {
  std::string img = std::string(kDataDir) + "/" + prefix + "-images-idx3-ubyte.gz";
  std::string lab = std::string(kDataDir) + "/" + prefix + "-labels-idx1-ubyte.gz";
  mxc_data_iter it = nullptr;
  EXPECT_EQ(mxc_data_iter_idx_create(img.c_str(), lab.c_str(), batch, shuffle,
                                     3, flat, 1, last_batch, &it),
            MXC_OK)
      << mxc_last_error();
  return it;
}

// n training steps on the iterator's next batches; the per-step mean
// losses are appended to losses when it is not NULL.
void train(fm_net *net, mxc_data_iter it, int n, const fm_opt &opt,
           std::vector<double> *losses) {
  for (int s = 0; s < n; ++s) {
    int has = 0;
    ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK) << mxc_last_error();
    ASSERT_EQ(has, 1);
    mxc_ndarray x = nullptr, y = nullptr;
    ASSERT_EQ(mxc_data_iter_data(it, &x), MXC_OK);
    ASSERT_EQ(mxc_data_iter_label(it, &y), MXC_OK);
    fm_stats st = {0, 0, 0};
    ASSERT_EQ(fm_net_step(net, x, y, &opt, losses ? &st : nullptr), MXC_OK)
        << fm_last_error();
    if (losses) losses->push_back(st.loss_sum / (double)st.count);
    mxc_ndarray_free(x);
    mxc_ndarray_free(y);
  }
}

// Accuracy on the first `batches` test batches.
double test_accuracy(fm_net *net, int64_t batch, int flat, int batches) {
  mxc_data_iter it = open_iter("t10k", batch, 0, flat, MXC_LAST_BATCH_PAD);
  int64_t correct = 0, n = 0;
  for (int b = 0; b < batches; ++b) {
    int has = 0;
    EXPECT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
    if (!has) break;
    mxc_ndarray x = nullptr, y = nullptr;
    int64_t pad = 0;
    EXPECT_EQ(mxc_data_iter_pad(it, &pad), MXC_OK);
    EXPECT_EQ(mxc_data_iter_data(it, &x), MXC_OK);
    EXPECT_EQ(mxc_data_iter_label(it, &y), MXC_OK);
    EXPECT_EQ(fm_net_eval(net, x, y, batch - pad, &correct), MXC_OK)
        << fm_last_error();
    n += batch - pad;
    mxc_ndarray_free(x);
    mxc_ndarray_free(y);
  }
  mxc_data_iter_free(it);
  return n > 0 ? (double)correct / (double)n : 0;
}

double mean(const std::vector<double> &v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return s / (double)(to - from);
}

// steps of SGD from a fresh initialization: the mean loss of the last 20
// steps must be below max_ratio times that of the first 5 (which is near
// ln 10), and test accuracy at least min_acc (chance: 0.1).
void fit_fashion(fm_model model, int64_t batch, int steps, double lr,
                 double max_ratio, double min_acc) {
  const int64_t kBatch = batch;
  int flat = model == FM_MLP;
  fm_net *net = make_net(model, kBatch, 11);
  ASSERT_NE(net, nullptr);
  mxc_data_iter it = open_iter("train", kBatch, 1, flat, MXC_LAST_BATCH_DISCARD);
  ASSERT_NE(it, nullptr);
  fm_opt opt = {lr, 0.9, 0, -1};
  std::vector<double> losses;
  train(net, it, steps, opt, &losses);
  ASSERT_EQ((int)losses.size(), steps);
  double first = mean(losses, 0, 5), last = mean(losses, steps - 20, steps);
  EXPECT_NEAR(first, std::log(10.0), 0.7);
  EXPECT_LT(last, max_ratio * first) << "first " << first << " last " << last;
  double acc = test_accuracy(net, kBatch, flat, (int)(1024 / kBatch));
  std::printf("%s: mean loss of the first 5 steps %.3f, of the last 20 %.3f; "
              "accuracy on 1024 test images %.3f\n",
              fm_model_name(model), first, last, acc);
  EXPECT_GE(acc, min_acc);
  mxc_data_iter_free(it);
  fm_net_free(net);
}

// Training to an accuracy takes hundreds of steps: about 130 s of the
// TSan pass (2026-11-29, a loaded machine). The same training loop, its
// iterator and the engine's threads run under TSan in the resume cases
// below (fewer steps), so under TSan only those run; the default and
// ASan+UBSan passes check the accuracy.
#ifdef MXC_SANITIZER_TSAN
#define SKIP_LONG_TRAINING_UNDER_TSAN() \
  GTEST_SKIP() << "training to an accuracy is checked outside TSan"
#else
#define SKIP_LONG_TRAINING_UNDER_TSAN() (void)0
#endif

TEST(Fit, FashionMnistMlp) {
  if (!have_dataset()) GTEST_SKIP() << kDataDir << " is not installed";
  SKIP_LONG_TRAINING_UNDER_TSAN();
  fit_fashion(FM_MLP, 64, 300, 0.1, 0.4, 0.7);
}

TEST(Fit, FashionMnistLenet) {
  if (!have_dataset()) GTEST_SKIP() << kDataDir << " is not installed";
  SKIP_LONG_TRAINING_UNDER_TSAN();
  // tanh and max pooling start slower than ReLU.
  fit_fashion(FM_LENET, 32, 120, 0.05, 0.75, 0.5);
}

// ---- resume ----------------------------------------------------------------

// Steps [0, 2k) in one go, or [0, k), save, load into a new network (and a
// new iterator advanced by k batches, as the example does), [k, 2k).
void check_resume(fm_model model, int k) {
  const int64_t kBatch = 32;
  int flat = model == FM_MLP;
  fm_opt opt = {model == FM_MLP ? 0.1 : 0.05, 0.9, 1e-4, -1};

  fm_net *a = make_net(model, kBatch, 5);
  ASSERT_NE(a, nullptr);
  mxc_data_iter it = open_iter("train", kBatch, 1, flat, MXC_LAST_BATCH_DISCARD);
  train(a, it, 2 * k, opt, nullptr);
  std::vector<float> want = params_of(a);
  fm_net_free(a);
  mxc_data_iter_free(it);

  std::string path = tmp_path("fit_resume.mxc");
  fm_net *b = make_net(model, kBatch, 5);
  ASSERT_NE(b, nullptr);
  it = open_iter("train", kBatch, 1, flat, MXC_LAST_BATCH_DISCARD);
  train(b, it, k, opt, nullptr);
  int64_t progress[2] = {0, k};
  ASSERT_EQ(fm_net_save(b, path.c_str(), progress, 2), MXC_OK)
      << fm_last_error();
  std::vector<float> at_save = params_of(b);
  fm_net_free(b);
  mxc_data_iter_free(it);

  // A fresh network, initialized with another seed so that only the
  // checkpoint can make it match.
  fm_net *c = make_net(model, kBatch, 99);
  ASSERT_NE(c, nullptr);
  int64_t got[2] = {-1, -1};
  ASSERT_EQ(fm_net_load(c, path.c_str(), got, 2), MXC_OK) << fm_last_error();
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], k);
  EXPECT_EQ(params_of(c), at_save);
  it = open_iter("train", kBatch, 1, flat, MXC_LAST_BATCH_DISCARD);
  for (int s = 0; s < k; ++s) {
    int has = 0;
    ASSERT_EQ(mxc_data_iter_next(it, &has), MXC_OK);
  }
  train(c, it, k, opt, nullptr);
  std::vector<float> got_params = params_of(c);
  ASSERT_EQ(got_params.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got_params.data(), want.data(),
                           want.size() * sizeof(float)))
      << "resumed parameters differ from an uninterrupted run";
  fm_net_free(c);
  mxc_data_iter_free(it);
  std::remove(path.c_str());
}

TEST(Fit, ResumeMatchesUninterruptedMlp) {
  if (!have_dataset()) GTEST_SKIP() << kDataDir << " is not installed";
  check_resume(FM_MLP, 15);
}

TEST(Fit, ResumeMatchesUninterruptedLenet) {
  if (!have_dataset()) GTEST_SKIP() << kDataDir << " is not installed";
  check_resume(FM_LENET, 8);
}

// The network is left as it was, the error names the file.
TEST(Fit, CheckpointOfAnotherModelOrMissingFileIsAnError) {
  std::string path = tmp_path("fit_wrong_model.mxc");
  fm_net *mlp = make_net(FM_MLP, 8, 1);
  fm_net *lenet = make_net(FM_LENET, 8, 1);
  ASSERT_NE(mlp, nullptr);
  ASSERT_NE(lenet, nullptr);
  int64_t progress[2] = {3, 0};
  ASSERT_EQ(fm_net_save(mlp, path.c_str(), progress, 2), MXC_OK)
      << fm_last_error();
  std::vector<float> before = params_of(lenet);
  int64_t got[2] = {-1, -1};
  EXPECT_NE(fm_net_load(lenet, path.c_str(), got, 2), MXC_OK);
  EXPECT_NE(std::string(fm_last_error()).find(path), std::string::npos)
      << fm_last_error();
  EXPECT_EQ(got[0], -1);
  EXPECT_EQ(params_of(lenet), before);
  // Wrong number of progress counters.
  EXPECT_NE(fm_net_load(mlp, path.c_str(), got, 3), MXC_OK);
  // A missing file.
  EXPECT_EQ(fm_net_load(mlp, tmp_path("no_such_checkpoint.mxc").c_str(), got,
                        2),
            MXC_ERR_IO);
  EXPECT_EQ(got[0], -1);
  // The right one.
  EXPECT_EQ(fm_net_load(mlp, path.c_str(), got, 2), MXC_OK) << fm_last_error();
  EXPECT_EQ(got[0], 3);
  fm_net_free(mlp);
  fm_net_free(lenet);
  std::remove(path.c_str());
}

}  // namespace
