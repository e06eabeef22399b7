// gather_nd and scatter_nd against naive references (several ranks of
// data and indices, negative and fractional indices, duplicates summing in
// scatter_nd), run-time range errors, gradients, and bad shapes.
#include "tests/ops/indexing/indexing_test_util.h"

using namespace mxct;

namespace {

// Positions of indices (M, Y...) into the leading M axes of `full`, as
// element offsets of the run each one selects; inner = the run length.
std::vector<int64_t> ref_offsets(const Shape &full, const Shape &is,
                                 const std::vector<double> &idx,
                                 int64_t *inner) {
  int64_t m = is[0], k = numel(is) / m;
  *inner = 1;
  for (size_t d = m; d < full.size(); ++d) *inner *= full[d];
  std::vector<int64_t> offs;
  for (int64_t y = 0; y < k; ++y) {
    int64_t lin = 0;
    for (int64_t d = 0; d < m; ++d) {
      int64_t v = fix_index(idx[d * k + y], full[d], "raise");
      EXPECT_GE(v, 0) << "test bug: index out of range";
      lin = lin * full[d] + v;
    }
    offs.push_back(lin * *inner);
  }
  return offs;
}

Shape nd_shape(const Shape &full, const Shape &is) {
  Shape s(is.begin() + 1, is.end());
  s.insert(s.end(), full.begin() + is[0], full.end());
  return s;
}

std::vector<double> ref_gather(const Shape &ds, const std::vector<double> &d,
                               const Shape &is,
                               const std::vector<double> &idx) {
  int64_t inner = 0;
  std::vector<double> out;
  for (int64_t off : ref_offsets(ds, is, idx, &inner))
    for (int64_t i = 0; i < inner; ++i) out.push_back(d[off + i]);
  return out;
}

std::vector<double> ref_scatter(const Shape &full, const std::vector<double> &d,
                                const Shape &is,
                                const std::vector<double> &idx) {
  int64_t inner = 0;
  std::vector<double> out(numel(full), 0.0);
  auto offs = ref_offsets(full, is, idx, &inner);
  for (size_t y = 0; y < offs.size(); ++y)
    for (int64_t i = 0; i < inner; ++i) out[offs[y] + i] += d[y * inner + i];
  return out;
}

std::string tuple_str(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

// Valid indices (M, Y...) for `full`: negative and fractional ones too.
std::vector<double> nd_indices(const Shape &full, const Shape &is,
                               unsigned seed) {
  int64_t m = is[0], k = numel(is) / m;
  std::vector<double> v;
  auto u = uniform(numel(is), 0, 1, seed);
  for (int64_t d = 0; d < m; ++d)
    for (int64_t y = 0; y < k; ++y) {
      double r = u[d * k + y] * 2 * full[d] - full[d];  // [-X, X)
      v.push_back(y % 2 ? std::trunc(r) : std::trunc(r) + 0.5 * (r > 0));
    }
  return v;
}

struct NdCase {
  Shape full, indices;
};

const NdCase kCases[] = {
    {{3, 4, 2}, {2, 5}}, {{3, 4}, {1, 2, 2}}, {{3, 4, 2}, {3, 2}},
    {{5}, {1}},          {{2, 3}, {2, 0}},    {{2, 3, 2, 2}, {2, 2, 3}},
};

TEST(GatherNd, MatchesReference) {
  for (const auto &c : kCases) {
    for (int ddt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32}) {
      for (int idt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64, MXC_DTYPE_FLOAT64}) {
        SCOPED_TRACE(tuple_str(c.full) + " " + tuple_str(c.indices));
        auto dv = as_dtype(uniform(numel(c.full), -9, 9, 2), ddt);
        auto iv = as_dtype(nd_indices(c.full, c.indices, 4), idt);
        Arr d = make(c.full, dv, ddt), i = make(c.indices, iv, idt);
        auto out = invoke("gather_nd", {&d, &i});
        ASSERT_EQ(out.size(), 1u) << err();
        EXPECT_EQ(out[0].shape(), nd_shape(c.full, c.indices));
        EXPECT_EQ(out[0].dtype(), ddt);
        EXPECT_EQ(read(out[0]), ref_gather(c.full, dv, c.indices, iv));
      }
    }
  }
}

TEST(GatherNd, OutOfRangeIndexIsAnErrorAtWait) {
  Arr d = make({3, 4}, uniform(12, 0, 1));
  Arr i = make({2, 2}, {0, 2, 1, 4}, MXC_DTYPE_INT32);
  int rc = -1;
  auto out = invoke("gather_nd", {&d, &i}, {}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  expect_async_error(out[0], {"gather_nd", "index 4", "axis 1", "extent 4"});
  Arr j = make({1, 1}, {-4}, MXC_DTYPE_INT64);
  out = invoke("gather_nd", {&d, &j});
  expect_async_error(out[0], {"gather_nd", "index -4", "axis 0"});
  // Still usable.
  Arr k = make({1, 1}, {-1}, MXC_DTYPE_INT64);
  out = invoke("gather_nd", {&d, &k});
  EXPECT_EQ(out[0].shape(), Shape({1, 4}));
}

TEST(GatherNd, Gradient) {
  grad_check_except("gather_nd", {{3, 4, 2}, {2, 5}},
             {uniform(24, -1, 1, 3), {0, 2, 2, -1, 1, 3, 1, 1, 0, 2}}, {}, {1});
  grad_check_except("gather_nd", {{3, 4}, {1, 3}}, {uniform(12, -1, 1, 4), {2, 0, 2}}, {}, {1});
  // Repeated positions accumulate; indices get no gradient.
  auto g = grads_of("gather_nd", {{2, 2}, {2, 3}},
                    {{1, 2, 3, 4}, {1, 1, 0, 0, 0, 1}}, {}, {{1, 2, 4}});
  EXPECT_EQ(g.g[0], std::vector<double>({0, 4, 3, 0}));
  EXPECT_FALSE(g.has[1]);
}

TEST(GatherNd, BadIndicesRank) {
  Arr d = make({3, 4}, uniform(12, 0, 1));
  Arr deep = make({3, 2}, {0, 0, 0, 0, 0, 0});
  expect_error("gather_nd", {&d, &deep}, {}, MXC_ERR_SHAPE,
               {"gather_nd", "indices has shape (3,2)", "data has shape (3,4)",
                "1 <= M <= 2"});
  Arr scalar = make({}, {0});
  expect_error("gather_nd", {&d, &scalar}, {}, MXC_ERR_SHAPE,
               {"gather_nd", "indices has shape ()"});
  Arr empty_m = make({0, 2}, {});
  expect_error("gather_nd", {&d, &empty_m}, {}, MXC_ERR_SHAPE,
               {"gather_nd", "(0,2)"});
  expect_error("gather_nd", {&d}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"got 1 inputs; expected 2"});
}

TEST(ScatterNd, MatchesReferenceAndDuplicatesSum) {
  for (const auto &c : kCases) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32}) {
      SCOPED_TRACE(tuple_str(c.full) + " " + tuple_str(c.indices));
      Shape ds = nd_shape(c.full, c.indices);
      auto dv = as_dtype(uniform(numel(ds), -9, 9, 6), dt);
      auto iv = nd_indices(c.full, c.indices, 7);
      Arr d = make(ds, dv, dt), i = make(c.indices, iv, MXC_DTYPE_FLOAT32);
      auto out = invoke("scatter_nd", {&d, &i}, {{"shape", tuple_str(c.full)}});
      ASSERT_EQ(out.size(), 1u) << err();
      EXPECT_EQ(out[0].shape(), c.full);
      EXPECT_EQ(out[0].dtype(), dt);
      auto want = ref_scatter(c.full, dv, c.indices,
                              as_dtype(iv, MXC_DTYPE_FLOAT32));
      auto got = read(out[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k)
        EXPECT_NEAR(got[k], want[k], 1e-5 * (1 + std::fabs(want[k])));
    }
  }
  // Explicit duplicates: (0,1) twice and (2,2) three times.
  Arr d = make({5}, {1, 2, 3, 4, 5});
  Arr i = make({2, 5}, {0, 2, 0, 2, 2, 1, 2, 1, 2, 2}, MXC_DTYPE_INT32);
  auto out = invoke("scatter_nd", {&d, &i}, {{"shape", "(3,3)"}});
  EXPECT_EQ(read(out[0]), std::vector<double>({0, 4, 0, 0, 0, 0, 0, 0, 11}));
}

TEST(ScatterNd, GradientIsGatherOfOutputGradient) {
  grad_check_except("scatter_nd", {{4}, {2, 4}},
             {uniform(4, -1, 1, 8), {0, 2, 0, 1, 1, 2, 1, 0}},
             {{"shape", "(3,3)"}}, {1});
  grad_check_except("scatter_nd", {{3, 2}, {1, 3}}, {uniform(6, -1, 1, 9), {2, 0, 2}},
             {{"shape", "(4,2)"}}, {1});
  auto g = grads_of("scatter_nd", {{3}, {1, 3}}, {{1, 2, 3}, {2, 0, 2}},
                    {{"shape", "(4)"}}, {{10, 20, 30, 40}});
  EXPECT_EQ(g.g[0], std::vector<double>({30, 10, 30}));
  EXPECT_FALSE(g.has[1]);
}

TEST(ScatterNd, BadInput) {
  Arr d = make({4}, {1, 2, 3, 4});
  Arr i = make({2, 4}, {0, 1, 2, 0, 1, 1, 0, 2});
  expect_error("scatter_nd", {&d, &i}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"scatter_nd", "required parameter 'shape' is missing"});
  expect_error("scatter_nd", {&d, &i}, {{"shape", "None"}},
               MXC_ERR_INVALID_ARGUMENT, {"scatter_nd", "'shape'", "None"});
  expect_error("scatter_nd", {&d, &i}, {{"shape", "(3,-1)"}}, MXC_ERR_SHAPE,
               {"scatter_nd", "'shape'", "-1"});
  Arr d5 = make({5}, {1, 2, 3, 4, 5});
  expect_error("scatter_nd", {&d5, &i}, {{"shape", "(3,3)"}}, MXC_ERR_SHAPE,
               {"scatter_nd", "data has shape (5)", "indices of shape (2,4)",
                "(3,3)", "need data of shape (4)"});
  expect_error("scatter_nd", {&d, &i}, {{"shape", "(3)"}}, MXC_ERR_SHAPE,
               {"scatter_nd", "(2,4)", "1 <= M <= 1"});
  Arr far = make({2, 4}, {0, 1, 2, 3, 0, 0, 0, 0});
  int rc = -1;
  auto out = invoke("scatter_nd", {&d, &far}, {{"shape", "(3,3)"}}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  expect_async_error(out[0], {"scatter_nd", "index 3", "axis 0", "extent 3"});
}

}  // namespace
