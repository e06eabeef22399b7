// Large reductions are split over the kernel pool with a split fixed by
// the shape (ops/reduce/red_run.c): the results must be bitwise the same
// with 1, 2 or 3 engine workers (the pool's size follows them), and match
// a naive double-precision reference. Odd extents leave short last
// chunks; both splits are covered (outermost merged dimension kept: axis
// 1 of (70001, 3); reduced: full reductions, axis 0).
#include <cstring>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

struct Case {
  Shape shape;
  std::string axis;  // "" = every axis
  bool exclude;
};

const Case kCases[] = {
    {{1000003}, "", false},      {{3, 70001}, "0", false},
    {{3, 70001}, "1", false},    {{70001, 3}, "1", false},
    {{70001, 3}, "0", false},    {{301, 17, 29}, "0", false},
    {{301, 17, 29}, "1", false}, {{301, 17, 29}, "(0,2)", false},
    {{301, 17, 29}, "1", true},  {{7, 40009}, "", false},
};

// Output bits for 1, 2 and 3 workers; restores the worker count.
std::vector<std::vector<double>> run_threads(const std::string &op,
                                             const Arr &a, const Params &p) {
  int saved = 0;
  EXPECT_EQ(mxc_get_num_threads(&saved), MXC_OK);
  std::vector<std::vector<double>> r;
  for (int t : {1, 2, 3}) {
    EXPECT_EQ(mxc_set_num_threads(t), MXC_OK) << err();
    auto out = invoke(op, {&a}, p);
    EXPECT_EQ(out.size(), 1u) << op << ": " << err();
    if (out.size() != 1) break;
    r.push_back(read(out[0]));
  }
  EXPECT_EQ(mxc_set_num_threads(saved), MXC_OK);
  return r;
}

bool same_bits(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Reference: sum (or max, or sum of squares) of each output's group, by
// explicit index arithmetic.
std::vector<double> reference(const std::string &op, const Case &c,
                              const std::vector<double> &x) {
  int nd = (int)c.shape.size();
  std::vector<bool> red(nd, c.axis.empty());
  for (int a = 0; a < nd; ++a) {
    bool listed = c.axis.find(std::to_string(a)) != std::string::npos;
    if (!c.axis.empty()) red[a] = listed != c.exclude;
  }
  int64_t n_out = 1;
  for (int a = 0; a < nd; ++a) n_out *= red[a] ? 1 : c.shape[a];
  std::vector<double> acc((size_t)n_out, op == "max" ? -INFINITY : 0.0);
  std::vector<int64_t> cnt((size_t)n_out, 0);
  for (int64_t i = 0; i < (int64_t)x.size(); ++i) {
    int64_t rem = i, o = 0, mul = 1;
    for (int a = nd - 1; a >= 0; --a) {
      int64_t idx = rem % c.shape[a];
      rem /= c.shape[a];
      if (!red[a]) o += idx * mul, mul *= c.shape[a];
    }
    double v = x[(size_t)i];
    if (op == "max") acc[(size_t)o] = std::max(acc[(size_t)o], v);
    else acc[(size_t)o] += op == "norm" ? v * v : v;
    cnt[(size_t)o]++;
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    if (op == "norm") acc[o] = std::sqrt(acc[o]);
    if (op == "mean") acc[o] /= (double)cnt[o];
  }
  return acc;
}

void check_op(const std::string &op, int dtype, double tol) {
  for (const Case &c : kCases) {
    if (c.exclude && op == "norm") continue;  // norm has no exclude
    std::vector<double> x = uniform(numel(c.shape), -1, 1, 7);
    if (dtype == MXC_DTYPE_INT32) {
      for (double &v : x) v = std::floor(v * 100);
    }
    Arr a = make(c.shape, x, dtype);
    // Values as the array holds them (rounded to the dtype).
    std::vector<double> held = read(a);
    Params p;
    if (!c.axis.empty()) p.push_back({"axis", c.axis});
    if (c.exclude) p.push_back({"exclude", "true"});
    auto r = run_threads(op, a, p);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_TRUE(same_bits(r[0], r[1])) << op << " 1 vs 2 workers, axis "
                                       << c.axis;
    EXPECT_TRUE(same_bits(r[0], r[2])) << op << " 1 vs 3 workers, axis "
                                       << c.axis;
    std::vector<double> want = reference(op, c, held);
    ASSERT_EQ(r[0].size(), want.size()) << op;
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_NEAR(r[0][o], want[o], tol * (1 + std::fabs(want[o])))
          << op << " axis " << c.axis << " output " << o;
    }
  }
}

TEST(ReduceThreads, SumBitwiseSameOnAnyWorkerCount) {
  check_op("sum", MXC_DTYPE_FLOAT32, 1e-5);
  check_op("sum", MXC_DTYPE_FLOAT64, 1e-12);
  check_op("sum", MXC_DTYPE_INT32, 0);
}

TEST(ReduceThreads, MeanMaxNorm) {
  check_op("mean", MXC_DTYPE_FLOAT32, 1e-5);
  check_op("max", MXC_DTYPE_FLOAT32, 0);
  check_op("norm", MXC_DTYPE_FLOAT64, 1e-12);
  check_op("sum", MXC_DTYPE_FLOAT16, 2e-3);
}

}  // namespace
