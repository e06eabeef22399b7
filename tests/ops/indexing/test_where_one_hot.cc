// where (element-wise and row-wise conditions) and one_hot against naive
// references, where's masked gradients, and bad input.
#include "tests/ops/indexing/indexing_test_util.h"

using namespace mxct;

namespace {

std::vector<double> ref_where(const std::vector<double> &c,
                              const std::vector<double> &x,
                              const std::vector<double> &y) {
  size_t inner = x.size() / (c.empty() ? 1 : c.size());
  std::vector<double> out;
  for (size_t i = 0; i < x.size(); ++i)
    out.push_back(c[i / inner] != 0 ? x[i] : y[i]);
  return out;
}

// Conditions with zeros, ones and other nonzero values (negative, tiny).
std::vector<double> conditions(int64_t n, unsigned seed) {
  auto u = uniform(n, 0, 1, seed);
  std::vector<double> c;
  for (double v : u) c.push_back(v < 0.4 ? 0 : (v < 0.7 ? 1 : -3));
  return c;
}

TEST(Where, MatchesReferenceSameShapeAndRows) {
  const std::pair<Shape, Shape> cases[] = {
      {{7}, {7}},       {{2, 3}, {2, 3}}, {{2, 3}, {2}},   {{4, 2, 3}, {4}},
      {{4, 2, 3}, {4, 2, 3}}, {{}, {}},  {{0, 3}, {0}}, {{3, 0}, {3}}};
  for (const auto &c : cases) {
    for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32,
                   MXC_DTYPE_FLOAT16}) {
      for (int cdt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_UINT8, MXC_DTYPE_INT64,
                      MXC_DTYPE_BOOL}) {
        auto cv = as_dtype(conditions(numel(c.second), 3), cdt);
        auto xv = as_dtype(uniform(numel(c.first), -5, 5, 4), dt);
        auto yv = as_dtype(uniform(numel(c.first), -5, 5, 5), dt);
        Arr cond = make(c.second, cv, cdt), x = make(c.first, xv, dt),
            y = make(c.first, yv, dt);
        auto out = invoke("where", {&cond, &x, &y});
        ASSERT_EQ(out.size(), 1u) << err();
        EXPECT_EQ(out[0].shape(), c.first);
        EXPECT_EQ(out[0].dtype(), dt);
        EXPECT_EQ(read(out[0]), ref_where(cv, xv, yv));
      }
    }
  }
}

TEST(Where, NanConditionIsTrue) {
  Arr c = make({2}, {NAN, 0}, MXC_DTYPE_FLOAT64);
  Arr x = make({2}, {1, 2}), y = make({2}, {3, 4});
  EXPECT_EQ(read(invoke("where", {&c, &x, &y})[0]),
            std::vector<double>({1, 4}));
}

TEST(Where, GradientIsMaskedOutputGradient) {
  grad_check_except("where", {{2, 3}, {2, 3}, {2, 3}},
             {{1, 0, -2, 0, 0, 1}, uniform(6, -1, 1, 1), uniform(6, -1, 1, 2)}, {}, {0});
  grad_check_except("where", {{3}, {3, 2}, {3, 2}},
             {{0, 1, 1}, uniform(6, -1, 1, 3), uniform(6, -1, 1, 4)}, {}, {0});
  auto g = grads_of("where", {{2, 2}, {2, 2}, {2, 2}},
                    {{1, 0, 0, 5}, {0, 0, 0, 0}, {0, 0, 0, 0}}, {},
                    {{1, 2, 3, 4}});
  ASSERT_EQ(g.has.size(), 3u);
  EXPECT_FALSE(g.has[0]);  // none for the condition
  EXPECT_EQ(g.g[1], std::vector<double>({1, 0, 0, 4}));
  EXPECT_EQ(g.g[2], std::vector<double>({0, 2, 3, 0}));
  g = grads_of("where", {{2}, {2, 2}, {2, 2}},
               {{0, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}}, {}, {{1, 2, 3, 4}});
  EXPECT_EQ(g.g[1], std::vector<double>({0, 0, 3, 4}));
  EXPECT_EQ(g.g[2], std::vector<double>({1, 2, 0, 0}));
}

TEST(Where, BadInput) {
  Arr c = make({2, 3}, {1, 0, 1, 0, 1, 0});
  Arr x = make({2, 3}, uniform(6, 0, 1)), y = make({2, 3}, uniform(6, 0, 1));
  Arr y2 = make({3, 2}, uniform(6, 0, 1));
  expect_error("where", {&c, &x, &y2}, {}, MXC_ERR_SHAPE,
               {"where", "x has shape (2,3)", "y has shape (3,2)"});
  Arr c3 = make({3}, {1, 0, 1});
  expect_error("where", {&c3, &x, &y}, {}, MXC_ERR_SHAPE,
               {"where", "condition has shape (3)", "x has shape (2,3)"});
  Arr ct = make({3, 2}, {1, 0, 1, 0, 1, 0});
  expect_error("where", {&ct, &x, &y}, {}, MXC_ERR_SHAPE,
               {"where", "condition has shape (3,2)"});
  Arr yd = make({2, 3}, uniform(6, 0, 1), MXC_DTYPE_FLOAT64);
  expect_error("where", {&c, &x, &yd}, {}, MXC_ERR_DTYPE,
               {"where", "float64", "float32"});
  expect_error("where", {&c, &x}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"got 2 inputs; expected 3"});
}

// ---- one_hot ----

TEST(OneHot, MatchesReference) {
  const Shape shapes[] = {{5}, {2, 3}, {}, {0}, {2, 0, 2}};
  for (const auto &s : shapes) {
    for (int idt : {MXC_DTYPE_INT32, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64}) {
      for (int odt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32,
                      MXC_DTYPE_FLOAT16, MXC_DTYPE_UINT8}) {
        const int64_t depth = 4;
        // In range, beyond depth, negative and fractional.
        auto iv = as_dtype(uniform(numel(s), -2, 6, 9), idt);
        Arr i = make(s, iv, idt);
        auto out = invoke("one_hot", {&i},
                          {{"depth", "4"}, {"on_value", "7"},
                           {"off_value", "2"},
                           {"dtype", mxc_dtype_name(odt)}});
        ASSERT_EQ(out.size(), 1u) << err();
        Shape os = s;
        os.push_back(depth);
        EXPECT_EQ(out[0].shape(), os);
        EXPECT_EQ(out[0].dtype(), odt);
        std::vector<double> want;
        for (double v : iv)
          for (int64_t j = 0; j < depth; ++j)
            want.push_back(trunc_index(v) == j ? 7 : 2);
        EXPECT_EQ(read(out[0]), want);
      }
    }
  }
}

TEST(OneHot, DefaultsAndTruncation) {
  Arr i = make({4}, {1, -0.5, 3, -1}, MXC_DTYPE_FLOAT64);
  auto out = invoke("one_hot", {&i}, {{"depth", "3"}});
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
  // -0.5 truncates to 0 (as in MXNet); 3 and -1 are out of range.
  EXPECT_EQ(read(out[0]), std::vector<double>({0, 1, 0, 1, 0, 0, 0, 0, 0, 0,
                                               0, 0}));
  // No gradient w.r.t. indices.
  auto g = grads_of("one_hot", {{2}}, {{0, 1}}, {{"depth", "2"}},
                    {{1, 1, 1, 1}});
  EXPECT_FALSE(g.has[0]);
}

TEST(OneHot, BadInput) {
  Arr i = make({2}, {0, 1}, MXC_DTYPE_INT32);
  for (const char *d : {"0", "-3"})
    expect_error("one_hot", {&i}, {{"depth", d}}, MXC_ERR_INVALID_ARGUMENT,
                 {"one_hot", "'depth'", "out of range"});
  expect_error("one_hot", {&i}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"one_hot", "required parameter 'depth' is missing"});
  expect_error("one_hot", {&i}, {{"depth", "2"}, {"dtype", "complex"}},
               MXC_ERR_INVALID_ARGUMENT, {"one_hot", "'dtype'", "complex"});
  expect_error("one_hot", {&i, &i}, {{"depth", "2"}}, MXC_ERR_INVALID_ARGUMENT,
               {"got 2 inputs; expected 1"});
}

}  // namespace
