// Initializers and metrics through the public API: exact constants;
// ranges, means and variances of the random methods against scales computed
// here from the shapes; determinism across seeds and thread counts; ordering
// of the asynchronous fill; accuracy and cross-entropy against naive loops
// (ties: first maximum wins); argument, shape, dtype and handle errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

std::string err() { return mxc_last_error(); }

mxc_ndarray make(const std::vector<int64_t> &shape, int dtype,
                 int delay_alloc = 0) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, delay_alloc, &a),
            MXC_OK)
      << err();
  return a;
}

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The array's values as doubles (float32 or float64).
std::vector<double> read(mxc_ndarray a, const std::vector<int64_t> &shape,
                         int dtype) {
  size_t n = (size_t)count(shape);
  std::vector<double> out(n);
  if (dtype == MXC_DTYPE_FLOAT32) {
    std::vector<float> f(n);
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, f.data(), n * sizeof(float)), MXC_OK)
        << err();
    for (size_t i = 0; i < n; ++i) out[i] = f[i];
  } else {
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, out.data(), n * sizeof(double)),
              MXC_OK)
        << err();
  }
  return out;
}

int init(mxc_ndarray a, const char *method,
         const std::vector<const char *> &kv = {}) {
  std::vector<const char *> keys, vals;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    keys.push_back(kv[i]);
    vals.push_back(kv[i + 1]);
  }
  return mxc_init_array(a, method, keys.data(), vals.data(), (int)keys.size());
}

// Fresh array of `shape`, initialized, read back.
std::vector<double> init_values(const std::vector<int64_t> &shape, int dtype,
                                const char *method,
                                const std::vector<const char *> &kv = {}) {
  mxc_ndarray a = make(shape, dtype);
  EXPECT_EQ(init(a, method, kv), MXC_OK) << err();
  std::vector<double> v = read(a, shape, dtype);
  mxc_ndarray_free(a);
  return v;
}

struct Stats {
  double mean = 0, var = 0, min = INFINITY, max = -INFINITY;
};

Stats stats(const std::vector<double> &v) {
  Stats s;
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= (double)v.size();
  for (double x : v) s.var += (x - s.mean) * (x - s.mean);
  s.var /= (double)v.size();
  return s;
}

// U(-s, s): inside the interval, reaching near both ends, mean ~0, var s^2/3.
void expect_uniform(const std::vector<double> &v, double s) {
  Stats st = stats(v);
  EXPECT_GE(st.min, -s);
  EXPECT_LT(st.max, s);
  EXPECT_LT(st.min, -0.99 * s);
  EXPECT_GT(st.max, 0.99 * s);
  EXPECT_LT(std::fabs(st.mean), 0.02 * s);
  EXPECT_NEAR(st.var, s * s / 3, 0.05 * s * s / 3);
}

// N(0, s^2): mean ~0, var s^2, nothing absurdly far out.
void expect_normal(const std::vector<double> &v, double s) {
  Stats st = stats(v);
  EXPECT_LT(std::fabs(st.mean), 0.02 * s);
  EXPECT_NEAR(st.var, s * s, 0.05 * s * s);
  EXPECT_LT(st.max, 7 * s);
  EXPECT_GT(st.min, -7 * s);
  EXPECT_GT(st.max, 3 * s);
}

// Xavier's scale, computed from MXNet's definition independently of mxc.
double xavier_scale(const std::vector<int64_t> &shape,
                    const std::string &factor, double magnitude) {
  double field = 1;
  for (size_t i = 2; i < shape.size(); ++i) field *= (double)shape[i];
  double fan_in = (double)shape[1] * field, fan_out = (double)shape[0] * field;
  double f = factor == "in"    ? fan_in
             : factor == "out" ? fan_out
                               : (fan_in + fan_out) / 2;
  return std::sqrt(magnitude / f);
}

const int kDtypes[] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64};

TEST(Init, ConstantsAreExact) {
  for (int dt : kDtypes) {
    std::vector<int64_t> shape = {3, 5, 7};
    for (double x : init_values(shape, dt, "zeros")) ASSERT_EQ(x, 0.0);
    for (double x : init_values(shape, dt, "ones")) ASSERT_EQ(x, 1.0);
    for (double x : init_values(shape, dt, "constant", {"value", "2.5"})) {
      ASSERT_EQ(x, 2.5);
    }
    for (double x : init_values(shape, dt, "constant", {"value", "-1e3"})) {
      ASSERT_EQ(x, -1000.0);
    }
  }
  // A 0-d array and an empty one.
  for (double x : init_values({}, MXC_DTYPE_FLOAT32, "ones")) ASSERT_EQ(x, 1.0);
  EXPECT_TRUE(init_values({0, 4}, MXC_DTYPE_FLOAT32, "xavier").empty());
}

TEST(Init, UniformAndNormal) {
  mxc_random_seed(1);
  for (int dt : kDtypes) {
    expect_uniform(init_values({100000}, dt, "uniform"), 0.07);
    expect_uniform(init_values({400, 250}, dt, "uniform", {"scale", "2"}), 2);
    expect_normal(init_values({100000}, dt, "normal"), 0.01);
    expect_normal(init_values({100, 1000}, dt, "normal", {"sigma", "0.5"}),
                  0.5);
  }
  // scale 0 and sigma 0 give exact zeros.
  for (double x : init_values({100}, MXC_DTYPE_FLOAT32, "uniform",
                              {"scale", "0"})) {
    ASSERT_EQ(x, 0.0);
  }
  for (double x : init_values({100}, MXC_DTYPE_FLOAT64, "normal",
                              {"sigma", "0"})) {
    ASSERT_EQ(x, 0.0);
  }
}

TEST(Init, XavierScalesFollowFans) {
  mxc_random_seed(2);
  const std::vector<std::vector<int64_t>> shapes = {
      {100, 1000}, {1000, 100}, {256, 128, 3, 3}, {20, 50, 10, 10}};
  for (int dt : kDtypes) {
    for (const auto &shape : shapes) {
      for (const char *f : {"avg", "in", "out"}) {
        SCOPED_TRACE(std::string(f) + " ndim " + std::to_string(shape.size()));
        double su = xavier_scale(shape, f, 3);
        expect_uniform(init_values(shape, dt, "xavier", {"factor_type", f}),
                       su);
        double sg = xavier_scale(shape, f, 1.5);
        expect_normal(init_values(shape, dt, "xavier",
                                  {"rnd_type", "gaussian", "factor_type", f,
                                   "magnitude", "1.5"}),
                      sg);
      }
    }
  }
  // The default is uniform, avg, magnitude 3.
  expect_uniform(init_values({300, 400}, MXC_DTYPE_FLOAT32, "xavier"),
                 xavier_scale({300, 400}, "avg", 3));
}

TEST(Init, MsraIsXavierGaussian) {
  mxc_random_seed(3);
  std::vector<int64_t> shape = {128, 64, 3, 3};
  expect_normal(init_values(shape, MXC_DTYPE_FLOAT32, "msra"),
                xavier_scale(shape, "avg", 2));
  expect_normal(init_values(shape, MXC_DTYPE_FLOAT64, "msra",
                            {"factor_type", "in"}),
                xavier_scale(shape, "in", 2));
  // MXNet's MSRAPrelu default slope: magnitude 2 / (1 + 0.25^2).
  expect_normal(init_values(shape, MXC_DTYPE_FLOAT32, "msra",
                            {"slope", "0.25", "factor_type", "out"}),
                xavier_scale(shape, "out", 2 / (1 + 0.0625)));
}

TEST(Init, DeterministicAcrossSeedsAndThreads) {
  for (int dt : kDtypes) {
    for (const char *m : {"uniform", "normal", "xavier", "msra"}) {
      SCOPED_TRACE(m);
      std::vector<int64_t> shape = {300, 200};
      ASSERT_EQ(mxc_set_num_threads(1), MXC_OK);
      mxc_random_seed(42);
      std::vector<double> a = init_values(shape, dt, m);
      std::vector<double> a2 = init_values(shape, dt, m);
      ASSERT_EQ(mxc_set_num_threads(4), MXC_OK);
      mxc_random_seed(42);
      std::vector<double> b = init_values(shape, dt, m);
      std::vector<double> b2 = init_values(shape, dt, m);
      mxc_random_seed(43);
      std::vector<double> c = init_values(shape, dt, m);
      EXPECT_EQ(a, b);
      EXPECT_EQ(a2, b2);
      EXPECT_NE(a, a2);  // the stream moves on between calls
      EXPECT_NE(a, c);
    }
  }
}

// Calls pushed back to back from several arrays, read only at the end: the
// values depend on call order alone, not on when the engine ran them.
TEST(Init, ReservedAtCallTime) {
  std::vector<int64_t> shape = {50000};
  mxc_random_seed(7);
  std::vector<double> first = init_values(shape, MXC_DTYPE_FLOAT32, "uniform");
  std::vector<double> second = init_values(shape, MXC_DTYPE_FLOAT32, "normal");
  mxc_random_seed(7);
  mxc_ndarray x = make(shape, MXC_DTYPE_FLOAT32);
  mxc_ndarray y = make(shape, MXC_DTYPE_FLOAT32);
  ASSERT_EQ(init(x, "uniform"), MXC_OK);
  ASSERT_EQ(init(y, "normal"), MXC_OK);
  EXPECT_EQ(read(y, shape, MXC_DTYPE_FLOAT32), second);
  EXPECT_EQ(read(x, shape, MXC_DTYPE_FLOAT32), first);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
}

TEST(Init, AsyncWritesAreOrdered) {
  std::vector<int64_t> shape = {1000, 1000};
  for (int delay : {0, 1}) {
    mxc_ndarray a = make(shape, MXC_DTYPE_FLOAT32, delay);
    ASSERT_EQ(init(a, "uniform", {"scale", "3"}), MXC_OK);
    ASSERT_EQ(init(a, "constant", {"value", "4"}), MXC_OK);
    for (double x : read(a, shape, MXC_DTYPE_FLOAT32)) ASSERT_EQ(x, 4.0);
    ASSERT_EQ(init(a, "normal", {"sigma", "1"}), MXC_OK);
    expect_normal(read(a, shape, MXC_DTYPE_FLOAT32), 1);
    // A write right before free: the storage outlives the pending fill.
    ASSERT_EQ(init(a, "xavier"), MXC_OK);
    mxc_ndarray_free(a);
  }
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

// A slice view is written in place and only within its rows.
TEST(Init, ViewsWriteTheirOwnRows) {
  mxc_ndarray a = make({4, 3}, MXC_DTYPE_FLOAT64);
  ASSERT_EQ(init(a, "zeros"), MXC_OK);
  mxc_ndarray s = nullptr;
  ASSERT_EQ(mxc_ndarray_slice(a, 1, 3, &s), MXC_OK) << err();
  ASSERT_EQ(init(s, "ones"), MXC_OK);
  std::vector<double> v = read(a, {4, 3}, MXC_DTYPE_FLOAT64);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(v[i], (i >= 3 && i < 9) ? 1.0 : 0.0);
  mxc_ndarray_free(s);
  mxc_ndarray_free(a);
}

TEST(Init, Errors) {
  mxc_ndarray a = make({4, 5}, MXC_DTYPE_FLOAT32);
  mxc_ndarray v = make({5}, MXC_DTYPE_FLOAT32);
  mxc_ndarray i32 = make({4, 5}, MXC_DTYPE_INT32);
  EXPECT_EQ(init(a, "glorot"), MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("'glorot'"), std::string::npos) << err();
  EXPECT_NE(err().find("mxc_init_array"), std::string::npos) << err();
  EXPECT_EQ(mxc_init_array(a, nullptr, nullptr, nullptr, 0),
            MXC_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(init(a, "xavier", {"sigma", "1"}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'xavier'"), std::string::npos) << err();
  EXPECT_NE(err().find("'sigma'"), std::string::npos) << err();
  EXPECT_NE(err().find("rnd_type, factor_type, magnitude"), std::string::npos)
      << err();
  EXPECT_EQ(init(a, "zeros", {"value", "1"}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("accepted: none"), std::string::npos) << err();

  struct Bad {
    const char *method;
    std::vector<const char *> kv;
    const char *needle;
  };
  const Bad bad[] = {
      {"uniform", {"scale", "abc"}, "'abc'"},
      {"uniform", {"scale", "1x"}, "'1x'"},
      {"uniform", {"scale", ""}, "not a finite number"},
      {"uniform", {"scale", "-1"}, ">= 0"},
      {"normal", {"sigma", "nan"}, "not a finite number"},
      {"normal", {"sigma", "inf"}, "not a finite number"},
      {"xavier", {"magnitude", "0"}, "> 0"},
      {"xavier", {"rnd_type", "normal"}, "'uniform', 'gaussian'"},
      {"msra", {"factor_type", "sum"}, "'avg', 'in', 'out'"},
      {"uniform", {"scale", "1", "scale", "2"}, "twice"},
      {"constant", {}, "'value' is required"},
  };
  for (const Bad &b : bad) {
    SCOPED_TRACE(b.needle);
    EXPECT_EQ(init(a, b.method, b.kv), MXC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(err().find(b.needle), std::string::npos) << err();
    EXPECT_NE(err().find(b.method), std::string::npos) << err();
  }
  const char *k[] = {"scale"};
  const char *nv[] = {nullptr};
  EXPECT_EQ(mxc_init_array(a, "uniform", k, nullptr, 1),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_init_array(a, "uniform", k, nv, 1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_init_array(a, "uniform", nullptr, nullptr, -1),
            MXC_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(init(i32, "ones"), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("int32"), std::string::npos) << err();
  for (const char *m : {"xavier", "msra"}) {
    EXPECT_EQ(init(v, m), MXC_ERR_SHAPE);
    EXPECT_NE(err().find("at least 2 dimensions"), std::string::npos) << err();
    EXPECT_NE(err().find(m), std::string::npos) << err();
  }
  EXPECT_EQ(init(nullptr, "ones"), MXC_ERR_INVALID_ARGUMENT);

  mxc_ndarray freed = make({2, 2}, MXC_DTYPE_FLOAT32);
  mxc_ndarray_free(freed);
  EXPECT_EQ(init(freed, "ones"), MXC_ERR_INVALID_HANDLE);

  // Failed calls consume no random numbers.
  mxc_random_seed(9);
  std::vector<double> want = init_values({1000}, MXC_DTYPE_FLOAT32, "uniform");
  mxc_random_seed(9);
  EXPECT_NE(init(v, "xavier"), MXC_OK);
  EXPECT_NE(init(a, "uniform", {"scale", "-2"}), MXC_OK);
  EXPECT_EQ(init_values({1000}, MXC_DTYPE_FLOAT32, "uniform"), want);

  mxc_ndarray_free(a);
  mxc_ndarray_free(v);
  mxc_ndarray_free(i32);
}

// ---- metrics ----

mxc_ndarray from(const std::vector<int64_t> &shape,
                 const std::vector<float> &v) {
  mxc_ndarray a = make(shape, MXC_DTYPE_FLOAT32);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, v.data(), v.size() * sizeof(float)),
            MXC_OK)
      << err();
  return a;
}

// Deterministic pseudo-random integers for test data.
uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

TEST(Metric, AccuracyMatchesNaiveWithTies) {
  const int64_t n = 2000, k = 7;
  uint32_t s = 1;
  std::vector<float> pred(n * k), label(n);
  // Scores from {0, 1, 2, 3}: most rows have tied maxima.
  for (float &x : pred) x = (float)((lcg(&s) >> 16) % 4);
  for (float &x : label) x = (float)((lcg(&s) >> 16) % k);
  int64_t want = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;  // the first maximum
    for (int64_t j = 1; j < k; ++j) {
      if (pred[i * k + j] > pred[i * k + best]) best = j;
    }
    want += best == (int64_t)label[i];
  }
  mxc_ndarray p = from({n, k}, pred), l = from({n}, label);
  int64_t correct = -1, cnt = -1;
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, want);
  EXPECT_EQ(cnt, n);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);

  // Explicit ties: rows (1, 1, 0) and (0, 2, 2) predict classes 0 and 1.
  p = from({2, 3}, {1, 1, 0, 0, 2, 2});
  l = from({2}, {0, 1});
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 2);
  mxc_ndarray_free(l);
  l = from({2}, {1, 2});
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 0);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
}

TEST(Metric, AccuracyClassIdsAndDtypes) {
  // 1-D predictions and labels are rounded: 2.4 -> 2, 2.6 -> 3.
  mxc_ndarray p = from({5}, {2.4f, 2.6f, 0.0f, 1.0000001f, 4.0f});
  mxc_ndarray l = from({5}, {2.0f, 2.0f, 0.0f, 0.9999999f, 3.0f});
  int64_t correct = -1, cnt = -1;
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 3);
  EXPECT_EQ(cnt, 5);
  mxc_ndarray_free(l);
  // int32 labels.
  int64_t n5 = 5;
  l = make({n5}, MXC_DTYPE_INT32);
  const int32_t li[] = {2, 3, 1, 1, 4};
  ASSERT_EQ(mxc_ndarray_copy_from_host(l, li, sizeof li), MXC_OK);
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 4);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
  // Empty batch.
  p = make({0, 3}, MXC_DTYPE_FLOAT32);
  l = make({0}, MXC_DTYPE_FLOAT32);
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 0);
  EXPECT_EQ(cnt, 0);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
}

// The metric waits for pending writes: an init pushed right before counts.
TEST(Metric, SeesPendingWrites) {
  mxc_ndarray p = make({100, 4}, MXC_DTYPE_FLOAT32, 1);
  mxc_ndarray l = make({100}, MXC_DTYPE_FLOAT32, 1);
  ASSERT_EQ(init(p, "ones"), MXC_OK);
  ASSERT_EQ(init(l, "zeros"), MXC_OK);
  int64_t correct = -1, cnt = -1;
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 100);  // all ties: class 0
  ASSERT_EQ(init(l, "ones"), MXC_OK);
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &cnt), MXC_OK) << err();
  EXPECT_EQ(correct, 0);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
}

TEST(Metric, CrossEntropyMatchesNaive) {
  const int64_t n = 500, k = 6;
  uint32_t s = 5;
  std::vector<float> prob(n * k), label(n);
  for (float &x : prob) x = (float)((lcg(&s) >> 8) % 1000) / 1000.0f;
  prob[0 * k + 0] = 0.0f;  // clamped to eps
  for (float &x : label) x = (float)((lcg(&s) >> 16) % k);
  label[0] = 0;
  const double eps = 1e-6;
  double want = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = prob[i * k + (int64_t)label[i]];
    want += -std::log(v < eps ? eps : v);
  }
  mxc_ndarray p = from({n, k}, prob), l = from({n}, label);
  double sum = -1;
  int64_t cnt = -1;
  ASSERT_EQ(mxc_metric_cross_entropy(p, l, eps, &sum, &cnt), MXC_OK) << err();
  EXPECT_NEAR(sum, want, 1e-9 * std::fabs(want));
  EXPECT_EQ(cnt, n);
  // eps 0 with a zero probability: infinite loss, reported as such.
  ASSERT_EQ(mxc_metric_cross_entropy(p, l, 0.0, &sum, &cnt), MXC_OK) << err();
  EXPECT_TRUE(std::isinf(sum));
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);

  // float64 probabilities, exact small case.
  mxc_ndarray p64 = make({2, 2}, MXC_DTYPE_FLOAT64);
  const double pv[] = {0.25, 0.75, 0.5, 0.5};
  ASSERT_EQ(mxc_ndarray_copy_from_host(p64, pv, sizeof pv), MXC_OK);
  l = from({2}, {1, 0});
  ASSERT_EQ(mxc_metric_cross_entropy(p64, l, 1e-12, &sum, &cnt), MXC_OK)
      << err();
  EXPECT_DOUBLE_EQ(sum, -std::log(0.75) - std::log(0.5));
  mxc_ndarray_free(p64);
  mxc_ndarray_free(l);
}

TEST(Metric, Errors) {
  mxc_ndarray p = from({4, 3}, std::vector<float>(12, 0.5f));
  mxc_ndarray l5 = from({5}, std::vector<float>(5, 0));
  mxc_ndarray l4 = from({4}, {0, 1, 2, 3});
  mxc_ndarray l2d = from({4, 1}, std::vector<float>(4, 0));
  int64_t c = 77, n = 88;
  double sum = 99;

  EXPECT_EQ(mxc_metric_accuracy(p, l5, &c, &n), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(4,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(5)"), std::string::npos) << err();
  EXPECT_NE(err().find("mxc_metric_accuracy"), std::string::npos) << err();
  EXPECT_EQ(mxc_metric_accuracy(p, l2d, &c, &n), MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_metric_cross_entropy(p, l5, 1e-8, &sum, &n), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(4,3)"), std::string::npos) << err();
  // 1-D class ids are fine for accuracy, not for cross-entropy.
  EXPECT_EQ(mxc_metric_cross_entropy(l4, l4, 1e-8, &sum, &n), MXC_ERR_SHAPE);
  // Label 3 is out of range for K = 3.
  EXPECT_EQ(mxc_metric_cross_entropy(p, l4, 1e-8, &sum, &n),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("label[3]"), std::string::npos) << err();
  EXPECT_EQ(mxc_metric_cross_entropy(p, l4, -1, &sum, &n),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_metric_cross_entropy(p, l4, NAN, &sum, &n),
            MXC_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(mxc_metric_accuracy(p, l4, nullptr, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("out_correct"), std::string::npos) << err();
  EXPECT_EQ(mxc_metric_accuracy(p, l4, &c, nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_metric_cross_entropy(p, l4, 0, nullptr, &n),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_metric_cross_entropy(p, l4, 0, &sum, nullptr),
            MXC_ERR_INVALID_ARGUMENT);

  mxc_ndarray f16 = make({4}, MXC_DTYPE_FLOAT16);
  EXPECT_EQ(mxc_metric_accuracy(p, f16, &c, &n), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float16"), std::string::npos) << err();
  mxc_ndarray_free(f16);

  mxc_ndarray freed = from({4}, {0, 0, 0, 0});
  mxc_ndarray_free(freed);
  EXPECT_EQ(mxc_metric_accuracy(p, freed, &c, &n), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_metric_cross_entropy(freed, l4, 0, &sum, &n),
            MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_metric_accuracy(nullptr, l4, &c, &n),
            MXC_ERR_INVALID_ARGUMENT);

  // Outputs untouched by every failure above.
  EXPECT_EQ(c, 77);
  EXPECT_EQ(n, 88);
  EXPECT_EQ(sum, 99);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l5);
  mxc_ndarray_free(l4);
  mxc_ndarray_free(l2d);
}

// Every allocation of an init + metrics sequence fails in turn: each call
// then reports MXC_ERR_OOM or succeeds, and nothing leaks.
void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

int scenario() {
  const int64_t ps[] = {3, 4}, ls[] = {3};
  mxc_ndarray p = nullptr, l = nullptr;
  int rc = mxc_ndarray_create(ps, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 1,
                              &p);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(ls, 1, MXC_DTYPE_FLOAT64, MXC_DEVICE_CPU, 0, 1, &l);
  }
  const char *k[] = {"rnd_type"}, *v[] = {"gaussian"};
  if (rc == MXC_OK) rc = mxc_init_array(p, "xavier", k, v, 1);
  if (rc == MXC_OK) rc = mxc_init_array(l, "ones", nullptr, nullptr, 0);
  int64_t c = 0, n = 0;
  double sum = 0;
  if (rc == MXC_OK) rc = mxc_metric_accuracy(p, l, &c, &n);
  if (rc == MXC_OK) rc = mxc_metric_cross_entropy(p, l, 1e-8, &sum, &n);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
  return rc;
}

TEST(Faults, EveryAllocationFails) {
  ASSERT_EQ(scenario(), MXC_OK) << err();  // warm-up
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = scenario();
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    if (fired && rc != MXC_OK) {
      EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
    }
    settle();
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after failing allocation " << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    ++failures;
  }
  EXPECT_GT(failures, 5);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
