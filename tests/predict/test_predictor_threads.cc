// Several threads, each with its own predictor over one shared set of
// weights (clones and reshapes of one predictor), give exactly the
// outputs of a single-threaded run, which match the script's numpy
// forward. Run under --config=tsan as well.
#include <gtest/gtest.h>

#include <thread>

#include "tests/predict/predict_util.h"

using namespace pred_test;

namespace {

const int kThreads = 4, kRounds = 25;

TEST(PredictorThreads, SharedWeightsGiveTheSingleThreadedResults) {
  Model m = load_model();
  ASSERT_EQ(m.batch, 4) << "model files missing";
  mxc_predictor base = nullptr;
  ASSERT_EQ(create(m, 1, &base), MXC_OK) << err();
  // The single-threaded reference: each image alone.
  std::vector<std::vector<float>> ref;
  for (int i = 0; i < m.batch; ++i) {
    ref.push_back(run(base, m, i, 1));
    ASSERT_LT(max_diff(ref[i].data(), m.expected.data() + i * m.classes,
                       m.classes),
              2e-5);
  }
  std::vector<mxc_predictor> preds(kThreads);
  for (auto &p : preds) ASSERT_EQ(mxc_predictor_clone(base, &p), MXC_OK);
  mxc_predictor_free(base);  // the clones keep the weights alive
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        int img = (t + r) % m.batch;
        std::vector<float> y = run(preds[t], m, img, 1);
        if (y != ref[img]) ++mismatches[t];  // bitwise equal
      }
      mxc_predictor_free(preds[t]);  // frees race with others' forwards
    });
  }
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << t;
}

// Reshapes of one predictor (batches of two) share its weights and run
// on threads of their own, while the base predictor stays alive.
TEST(PredictorThreads, ReshapesRunOnThreadsOfTheirOwn) {
  Model m = load_model();
  ASSERT_EQ(m.batch, 4) << "model files missing";
  mxc_predictor base = nullptr;
  ASSERT_EQ(create(m, m.batch, &base), MXC_OK) << err();
  std::vector<float> ref = run(base, m, 0, m.batch);
  ASSERT_FALSE(ref.empty()) << err();
  // Reshapes read base, so they are made one at a time (a predictor
  // serves one thread at a time), then used concurrently.
  std::vector<mxc_predictor> preds(kThreads);
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {2, m.c, m.h, m.w};
  for (auto &p : preds) {
    ASSERT_EQ(mxc_predictor_reshape(base, 1, names, ndims, dims, &p), MXC_OK)
        << err();
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        int first = 2 * ((t + r) % 2);
        std::vector<float> y = run(preds[t], m, first, 2);
        std::vector<float> want(ref.begin() + first * m.classes,
                                ref.begin() + (first + 2) * m.classes);
        if (y.size() != want.size() ||
            max_diff(y.data(), want.data(), y.size()) > 1e-6) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << t;
  for (auto p : preds) mxc_predictor_free(p);
  mxc_predictor_free(base);
}

}  // namespace
