// Reproducibility of every random operator: the same seed gives bitwise
// identical results, also with 1 worker thread versus 4 (where the
// pushed operators run concurrently on different threads), and different
// seeds give different results.
#include "tests/ops/random/random_test_util.h"

using namespace mxct;

namespace {

// One program pushing every random operator several times without waiting
// in between, so that a threaded engine overlaps them. Returns the raw
// bytes of all outputs in push order.
std::vector<std::vector<unsigned char>> program(uint64_t seed) {
  EXPECT_EQ(mxc_random_seed(seed), MXC_OK);
  Arr probs = make({4, 5}, uniform(20, 0.05, 1, 9), MXC_DTYPE_FLOAT64);
  std::vector<double> rows(600);
  for (int i = 0; i < 600; ++i) rows[i] = i;
  Arr data = make({200, 3}, rows, MXC_DTYPE_FLOAT32);
  std::vector<std::pair<std::string, Params>> steps = {
      {"_random_uniform", {{"shape", "(3000,)"}}},
      {"_random_normal", {{"shape", "(1001,)"}, {"dtype", "float64"}}},
      {"_random_gamma", {{"shape", "(2000,)"}, {"alpha", "0.4"}}},
      {"_random_gamma",
       {{"shape", "(2000,)"}, {"alpha", "5"}, {"dtype", "float64"}}},
      {"_random_exponential", {{"shape", "(999,)"}}},
      {"_random_poisson", {{"shape", "(2000,)"}, {"lam", "2.5"}}},
      {"_random_poisson", {{"shape", "(2000,)"}, {"lam", "75"}}},
      {"_random_randint",
       {{"shape", "(1500,)"}, {"low", "-9"}, {"high", "1000"}}},
      {"_sample_multinomial", {{"shape", "(300,)"}, {"get_prob", "true"}}},
      {"_shuffle", {}},
  };
  std::vector<Arr> outs;
  for (int round = 0; round < 3; ++round) {
    for (auto &s : steps) {
      std::vector<const Arr *> in;
      if (s.first == "_sample_multinomial") in = {&probs};
      if (s.first == "_shuffle") in = {&data};
      for (auto &o : invoke(s.first, in, s.second))
        outs.push_back(std::move(o));
    }
  }
  std::vector<std::vector<unsigned char>> res;
  for (auto &o : outs) res.push_back(bytes(o));
  return res;
}

int threads() {
  int n = 0;
  mxc_get_num_threads(&n);
  return n;
}

TEST(Determinism, SameSeedSameBits) {
  auto a = program(1234);
  auto b = program(1234);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "output " << i;
}

TEST(Determinism, IndependentOfThreadCount) {
  int saved = threads();
  ASSERT_EQ(mxc_set_num_threads(1), MXC_OK);
  auto one = program(99);
  ASSERT_EQ(mxc_set_num_threads(4), MXC_OK);
  auto four = program(99);
  auto four_again = program(99);
  ASSERT_EQ(mxc_set_num_threads(saved > 0 ? saved : 1), MXC_OK);
  ASSERT_EQ(one.size(), four.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i], four[i]) << "output " << i;
    EXPECT_EQ(four[i], four_again[i]) << "output " << i;
  }
}

TEST(Determinism, DifferentSeedsDiffer) {
  auto a = program(5);
  auto b = program(6);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NE(a[i], b[i]) << "output " << i;
}

// Successive calls under one seed draw fresh numbers (each push reserves
// its own counters).
TEST(Determinism, SuccessiveCallsDiffer) {
  mxc_random_seed(3);
  for (const char *name :
       {"_random_uniform", "_random_gamma", "_random_poisson"}) {
    auto a = invoke(name, {}, {{"shape", "(64,)"}});
    auto b = invoke(name, {}, {{"shape", "(64,)"}});
    EXPECT_NE(bytes(a[0]), bytes(b[0])) << name;
  }
}

}  // namespace
