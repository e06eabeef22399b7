// The cuDNN kernels from several threads at once, on a GPU (skips
// without one): each thread convolves its own shape (or runs RNNs of
// alternating shapes and modes, so the workers' cached RNN descriptors are
// set again between calls) (so the device's
// cached workspace is grown and shared under its mutex, and each engine
// worker creates its own cuDNN handle), many times, and every result must
// match the CPU's. A handle shared between threads or a workspace freed
// under a running convolution shows here as wrong values or a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::LastError;
using Vec = std::vector<float>;
using Dims = std::vector<int64_t>;

struct Job {
  Dims data, weight, out;
  std::string kernel, filters, pad;
};

// Shapes whose algorithms want different workspaces.
const std::vector<Job> kJobs = {
    {{8, 16, 28, 28}, {32, 16, 3, 3}, {8, 32, 28, 28}, "(3,3)", "32",
     "(1,1)"},
    {{4, 64, 14, 14}, {64, 64, 3, 3}, {4, 64, 14, 14}, "(3,3)", "64",
     "(1,1)"},
    {{16, 3, 32, 32}, {16, 3, 5, 5}, {16, 16, 28, 28}, "(5,5)", "16",
     "(0,0)"},
    {{2, 32, 9, 9}, {8, 32, 1, 1}, {2, 8, 9, 9}, "(1,1)", "8", "(0,0)"},
};

int64_t Numel(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// Convolution of job j on one device; rc != MXC_OK on failure.
Vec Convolve(const Job &j, const Vec &x, const Vec &w, int dev, int *rc) {
  mxc_op op = nullptr;
  *rc = mxc_op_find("Convolution", &op);
  const char *keys[] = {"kernel", "num_filter", "pad", "no_bias"};
  const char *vals[] = {j.kernel.c_str(), j.filters.c_str(), j.pad.c_str(),
                        "true"};
  mxc_ndarray in[2] = {mxct::Make(j.data, dev, 0),
                       mxct::Make(j.weight, dev, 0)};
  mxc_ndarray out = mxct::Make(j.out, dev, 0);
  Vec y((size_t)Numel(j.out));
  int req = MXC_REQ_WRITE;
  if (*rc == MXC_OK) {
    *rc = mxc_ndarray_copy_from_host(in[0], x.data(), x.size() * 4);
  }
  if (*rc == MXC_OK) {
    *rc = mxc_ndarray_copy_from_host(in[1], w.data(), w.size() * 4);
  }
  if (*rc == MXC_OK) {
    *rc = mxc_op_invoke(op, keys, vals, 4, in, 2, &out, 1, &req);
  }
  if (*rc == MXC_OK) {
    *rc = mxc_ndarray_copy_to_host(out, y.data(), y.size() * 4);
  }
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  mxc_ndarray_free(out);
  return y;
}

double RelErr(const Vec &a, const Vec &b) {
  double worst = 0, scale = 1;
  for (float v : b) scale = std::fmax(scale, std::fabs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::fmax(worst, std::fabs((double)a[i] - b[i]));
  }
  return worst / scale;
}

// The CPU references are computed first, also without a GPU: the jobs
// are valid calls wherever the test runs.
TEST(CudaDnnThreads, ConcurrentConvolutionsMatchTheCpu) {
  std::mt19937 g(17);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<Vec> xs, ws, refs;
  for (const Job &j : kJobs) {
    Vec x((size_t)Numel(j.data)), w((size_t)Numel(j.weight));
    for (auto &v : x) v = u(g);
    for (auto &v : w) v = u(g);
    int rc = 0;
    refs.push_back(Convolve(j, x, w, MXC_DEVICE_CPU, &rc));
    ASSERT_EQ(rc, MXC_OK) << LastError();
    xs.push_back(x), ws.push_back(w);
  }
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << LastError();
  }
  const int kRounds = 20;
  std::vector<std::string> errors(kJobs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kJobs.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds && errors[t].empty(); ++r) {
        int rc = 0;
        Vec y = Convolve(kJobs[t], xs[t], ws[t], MXC_DEVICE_GPU, &rc);
        if (rc != MXC_OK) {
          errors[t] = "round " + std::to_string(r) + ": " + LastError();
        } else if (!(RelErr(y, refs[t]) <= 1e-4)) {
          errors[t] = "round " + std::to_string(r) + ": relative error " +
                      std::to_string(RelErr(y, refs[t]));
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  for (size_t t = 0; t < kJobs.size(); ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
  }
}

// ---- RNN ----

struct RnnJob {
  const char *mode;
  int64_t T, N, I, H, L, np;  // np: the packed parameters (ops/linalg/rnn.c)
  bool bi;
};

// Two per thread, alternated.
const std::vector<RnnJob> kRnnJobs = {
    {"lstm", 6, 4, 8, 16, 2, 2 * 4 * 16 * (8 + 16 + 2) +
                                 2 * 4 * 16 * (32 + 16 + 2), true},
    {"gru", 5, 3, 4, 8, 1, 3 * 8 * (4 + 8 + 2), false},
    {"rnn_tanh", 7, 2, 5, 6, 2, 6 * (5 + 6 + 2) + 6 * (6 + 6 + 2), false},
    {"lstm", 3, 8, 16, 4, 1, 4 * 4 * (16 + 4 + 2), false},
};

// out of RNN job j (states zero: inputs data and parameters only, plus
// the states as zeros) on one device.
Vec RunRnn(const RnnJob &j, const Vec &x, const Vec &w, int dev, int *rc) {
  mxc_op op = nullptr;
  *rc = mxc_op_find("RNN", &op);
  std::string h = std::to_string(j.H), l = std::to_string(j.L);
  const char *keys[] = {"mode", "state_size", "num_layers", "bidirectional"};
  const char *vals[] = {j.mode, h.c_str(), l.c_str(), j.bi ? "true" : "false"};
  int64_t D = j.bi ? 2 : 1;
  bool lstm = std::string(j.mode) == "lstm";
  Dims st = {j.L * D, j.N, j.H};
  std::vector<mxc_ndarray> in = {mxct::Make({j.T, j.N, j.I}, dev, 0),
                                 mxct::Make({j.np}, dev, 0),
                                 mxct::Make(st, dev, 0)};
  if (lstm) in.push_back(mxct::Make(st, dev, 0));
  mxc_ndarray out = mxct::Make({j.T, j.N, D * j.H}, dev, 0);
  Vec y((size_t)(j.T * j.N * D * j.H)), zeros((size_t)Numel(st), 0.f);
  const Vec *src[4] = {&x, &w, &zeros, &zeros};
  for (size_t i = 0; *rc == MXC_OK && i < in.size(); ++i) {
    *rc = mxc_ndarray_copy_from_host(in[i], src[i]->data(),
                                     src[i]->size() * 4);
  }
  int req = MXC_REQ_WRITE;
  if (*rc == MXC_OK) {
    *rc = mxc_op_invoke(op, keys, vals, 4, in.data(), (int)in.size(), &out, 1,
                        &req);
  }
  if (*rc == MXC_OK) {
    *rc = mxc_ndarray_copy_to_host(out, y.data(), y.size() * 4);
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  mxc_ndarray_free(out);
  return y;
}

TEST(CudaDnnThreads, ConcurrentRnnsOfAlternatingShapesMatchTheCpu) {
  std::mt19937 g(23);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<Vec> xs, ws, refs;
  for (const RnnJob &j : kRnnJobs) {
    Vec x((size_t)(j.T * j.N * j.I)), w((size_t)j.np);
    for (auto &v : x) v = u(g);
    for (auto &v : w) v = u(g);
    int rc = 0;
    refs.push_back(RunRnn(j, x, w, MXC_DEVICE_CPU, &rc));
    ASSERT_EQ(rc, MXC_OK) << j.mode << ": " << LastError();
    xs.push_back(x), ws.push_back(w);
  }
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  if (n_gpu == 0) {
    mxc_device_check(MXC_DEVICE_GPU, 0);
    GTEST_SKIP() << "no usable GPU: " << LastError();
  }
  const size_t kThreads = 3;
  const int kRounds = 10;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds && errors[t].empty(); ++r) {
        size_t k = (t + (size_t)r) % kRnnJobs.size();
        int rc = 0;
        Vec y = RunRnn(kRnnJobs[k], xs[k], ws[k], MXC_DEVICE_GPU, &rc);
        std::string at = "round " + std::to_string(r) + " job " +
                         std::to_string(k) + ": ";
        if (rc != MXC_OK) {
          errors[t] = at + LastError();
        } else if (!(RelErr(y, refs[k]) <= 1e-4)) {
          errors[t] =
              at + "relative error " + std::to_string(RelErr(y, refs[k]));
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  for (size_t t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "thread " << t << ": " << errors[t];
  }
}

}  // namespace
