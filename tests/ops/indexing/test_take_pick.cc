// take and pick against naive references (every index mode, several
// shapes, axes and dtypes), run-time errors of mode=raise, gradients by
// finite differences and with repeated indices, and bad input.
#include "tests/ops/indexing/indexing_test_util.h"

using namespace mxct;

namespace {

int norm_axis(int axis, size_t nd) { return axis < 0 ? axis + (int)nd : axis; }

// out = data.shape[:axis] + indices.shape + data.shape[axis+1:].
std::vector<double> ref_take(const Shape &ds, const std::vector<double> &d,
                             const Shape &is, const std::vector<double> &idx,
                             int axis, const std::string &mode, Shape *os) {
  axis = norm_axis(axis, ds.size());
  int64_t outer = 1, inner = 1, n = ds[axis];
  for (int i = 0; i < axis; ++i) outer *= ds[i];
  for (size_t i = axis + 1; i < ds.size(); ++i) inner *= ds[i];
  os->assign(ds.begin(), ds.begin() + axis);
  os->insert(os->end(), is.begin(), is.end());
  os->insert(os->end(), ds.begin() + axis + 1, ds.end());
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (double raw : idx) {
      int64_t k = fix_index(raw, n, mode);
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(d[(o * n + k) * inner + i]);
    }
  return out;
}

struct TakeCase {
  Shape data, indices;
  int axis;
};

const TakeCase kTakeCases[] = {
    {{5}, {3}, 0},          {{5}, {}, 0},          {{4, 3}, {2, 2}, 0},
    {{4, 3}, {2, 2}, 1},    {{4, 3}, {5}, -1},     {{2, 3, 4}, {3}, 1},
    {{2, 3, 4}, {2, 1}, -1}, {{2, 3, 4}, {2}, -3}, {{3, 0, 2}, {2}, 0},
};

// Index values around and beyond [-n, n), some fractional.
std::vector<double> raw_indices(int64_t count, int64_t n, bool non_negative,
                                unsigned seed) {
  auto v = uniform(count, non_negative ? 0 : -2.0 * n, 2.0 * n, seed);
  for (size_t i = 0; i < v.size(); ++i)
    if (i % 3 != 1) v[i] = std::trunc(v[i]);
  return v;
}

TEST(Take, MatchesReferenceAllModesShapesAndDtypes) {
  for (const auto &c : kTakeCases) {
    for (std::string mode : {"clip", "wrap"}) {
      for (int ddt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32,
                      MXC_DTYPE_FLOAT16}) {
        for (int idt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64, MXC_DTYPE_FLOAT32,
                        MXC_DTYPE_FLOAT64, MXC_DTYPE_UINT8}) {
          SCOPED_TRACE(mode + " axis " + std::to_string(c.axis) + " dt " +
                       std::to_string(ddt) + "/" + std::to_string(idt));
          int64_t n = c.data[norm_axis(c.axis, c.data.size())];
          auto dv = as_dtype(uniform(numel(c.data), -9, 9, 3), ddt);
          auto iv = as_dtype(raw_indices(numel(c.indices), n,
                                         idt == MXC_DTYPE_UINT8, 5),
                             idt);
          Arr d = make(c.data, dv, ddt), i = make(c.indices, iv, idt);
          auto out = invoke("take", {&d, &i},
                            {{"axis", std::to_string(c.axis)}, {"mode", mode}});
          ASSERT_EQ(out.size(), 1u) << err();
          Shape os;
          auto want = ref_take(c.data, dv, c.indices, iv, c.axis, mode, &os);
          EXPECT_EQ(out[0].shape(), os);
          EXPECT_EQ(out[0].dtype(), ddt);
          EXPECT_EQ(read(out[0]), want);
        }
      }
    }
  }
}

TEST(Take, DefaultsAreAxis0Clip) {
  Arr d = make({3, 2}, {1, 2, 3, 4, 5, 6});
  Arr i = make({3}, {-1, 9, 1.9}, MXC_DTYPE_FLOAT64);
  auto out = invoke("take", {&d, &i});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), Shape({3, 2}));
  EXPECT_EQ(read(out[0]), std::vector<double>({1, 2, 5, 6, 3, 4}));
}

TEST(Take, WrapCountsNegativeIndicesFromTheEnd) {
  Arr d = make({4}, {10, 11, 12, 13});
  Arr i = make({5}, {-1, -4, -5, 4, 9}, MXC_DTYPE_INT32);
  auto out = invoke("take", {&d, &i}, {{"mode", "wrap"}});
  EXPECT_EQ(read(out[0]), std::vector<double>({13, 10, 13, 10, 11}));
}

TEST(Take, RaiseAcceptsInRangeAndReportsOutOfRangeAtWait) {
  Arr d = make({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Arr good = make({3}, {0, -4, 3}, MXC_DTYPE_INT64);
  auto out = invoke("take", {&d, &good}, {{"mode", "raise"}});
  EXPECT_EQ(read(out[0]), std::vector<double>({0, 1, 0, 1, 6, 7}));

  for (double bad : {4.0, -5.0}) {
    Arr i = make({2}, {1, bad}, MXC_DTYPE_FLOAT32);
    int rc = -1;
    // Index values are not known at invoke time: the call succeeds and the
    // failure surfaces at the next wait on the output.
    auto o = invoke("take", {&d, &i}, {{"mode", "raise"}}, &rc);
    ASSERT_EQ(rc, MXC_OK) << err();
    std::string idx = "index " + std::to_string((int)bad);
    expect_async_error(o[0], {"take", idx, "axis 0", "extent 4"});
  }
  // Along axis 1 the message names that axis.
  Arr i = make({1}, {2}, MXC_DTYPE_INT32);
  auto o = invoke("take", {&d, &i}, {{"mode", "raise"}, {"axis", "1"}});
  expect_async_error(o[0], {"take", "index 2", "axis 1", "extent 2"});

  // The library stays usable afterwards.
  auto again = invoke("take", {&d, &good}, {{"mode", "raise"}});
  EXPECT_EQ(read(again[0]), std::vector<double>({0, 1, 0, 1, 6, 7}));
  EXPECT_EQ(mxc_wait_all(), MXC_OK) << err();
}

TEST(Take, GradientMatchesFiniteDifferences) {
  grad_check_except("take", {{4, 3}, {5}},
             {uniform(12, -1, 1, 2), {0, 3, 3, -1, 1.5}}, {{"axis", "0"}}, {1});
  grad_check_except("take", {{4, 3}, {2, 2}}, {uniform(12, -1, 1, 3), {2, -1, 5, 2}},
             {{"axis", "1"}, {"mode", "wrap"}}, {1});
  grad_check_except("take", {{2, 3, 4}, {2, 2}},
             {uniform(24, -1, 1, 4), {3, 0, 0, 1}},
             {{"axis", "-1"}, {"mode", "raise"}}, {1});
}

TEST(Take, RepeatedIndicesAccumulateInGradient) {
  auto g = grads_of("take", {{3}, {4}}, {{5, 6, 7}, {0, 0, 2, 0}}, {},
                    {{1, 2, 3, 4}});
  ASSERT_EQ(g.has.size(), 2u);
  EXPECT_TRUE(g.has[0]);
  EXPECT_FALSE(g.has[1]);  // no gradient w.r.t. indices
  EXPECT_EQ(g.g[0], std::vector<double>({7, 0, 3}));
  // Along axis 1 of a (2, 3): each row accumulates separately.
  g = grads_of("take", {{2, 3}, {3}}, {uniform(6, 0, 1), {1, 1, -1}},
               {{"axis", "1"}, {"mode", "wrap"}}, {{1, 2, 3, 4, 5, 6}});
  EXPECT_EQ(g.g[0], std::vector<double>({0, 3, 3, 0, 9, 6}));
}

// Invokes `name` on existing outputs with the given write modes.
void invoke_into(const char *name, const std::vector<const Arr *> &in,
                 const std::vector<Arr *> &out, std::vector<int> req,
                 const Params &p = {}) {
  mxc_op op;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK) << err();
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  std::vector<mxc_ndarray> ins, outs;
  for (auto *a : in) ins.push_back(a->h);
  for (auto *a : out) outs.push_back(a->h);
  ASSERT_EQ(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), ins.data(),
                          (int)ins.size(), outs.data(), (int)outs.size(),
                          req.data()),
            MXC_OK)
      << err();
}

TEST(Take, WriteModesAddAndNull) {
  const int f64 = MXC_DTYPE_FLOAT64;
  Arr d = make({3}, {1, 2, 3}, f64), i = make({2}, {2, 2}, f64);
  Arr o = make({2}, {10, 20}, f64);
  invoke_into("take", {&d, &i}, {&o}, {MXC_REQ_ADD});
  EXPECT_EQ(read(o), std::vector<double>({13, 23}));
  invoke_into("take", {&d, &i}, {&o}, {MXC_REQ_NULL});
  EXPECT_EQ(read(o), std::vector<double>({13, 23}));
  // The gradient accumulates into an existing gradient with ADD.
  Arr og = make({2}, {1, 2}, f64), g = make({3}, {100, 100, 100}, f64);
  invoke_into("_backward_take", {&og, &d, &i}, {&g}, {MXC_REQ_ADD});
  EXPECT_EQ(read(g), std::vector<double>({100, 100, 103}));
  invoke_into("_backward_take", {&og, &d, &i}, {&g}, {MXC_REQ_WRITE});
  EXPECT_EQ(read(g), std::vector<double>({0, 0, 3}));
  // Same for where's two gradients, one of them skipped.
  Arr c = make({3}, {1, 0, 1}, f64), og3 = make({3}, {1, 2, 3}, f64);
  Arr gx = make({3}, {5, 5, 5}, f64), gy = make({3}, {7, 7, 7}, f64);
  invoke_into("_backward_where", {&og3, &c}, {&gx, &gy},
              {MXC_REQ_ADD, MXC_REQ_NULL});
  EXPECT_EQ(read(gx), std::vector<double>({6, 5, 8}));
  EXPECT_EQ(read(gy), std::vector<double>({7, 7, 7}));
}

TEST(Take, BadInput) {
  Arr d = make({2, 3}, uniform(6, 0, 1));
  Arr i = make({2}, {0, 1});
  expect_error("take", {&d, &i}, {{"axis", "2"}}, MXC_ERR_INVALID_ARGUMENT,
               {"take", "axis 2", "-2..1"});
  expect_error("take", {&d, &i}, {{"mode", "nearest"}},
               MXC_ERR_INVALID_ARGUMENT, {"take", "mode", "'raise'"});
  expect_error("take", {&d}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"got 1 inputs; expected 2"});
  Arr s = make({}, {1});
  expect_error("take", {&s, &i}, {}, MXC_ERR_SHAPE, {"take", "shape ()"});
  Arr e = make({0, 3}, {});
  expect_error("take", {&e, &i}, {}, MXC_ERR_SHAPE,
               {"take", "(0,3)", "extent 0"});
  // Empty indices from an empty axis are fine.
  Arr none = make({0}, {});
  auto out = invoke("take", {&e, &none});
  EXPECT_EQ(out[0].shape(), Shape({0, 3}));
  Arr big = make({1, 1, 1, 1, 1, 1, 1, 1}, {1});
  Arr i2 = make({1, 1}, {0});
  expect_error("take", {&big, &i2}, {}, MXC_ERR_SHAPE,
               {"take", "9 dimensions"});
}

// ---- pick ----

std::vector<double> ref_pick(const Shape &ds, const std::vector<double> &d,
                             const std::vector<double> &idx, int axis,
                             const std::string &mode) {
  axis = norm_axis(axis, ds.size());
  int64_t outer = 1, inner = 1, n = ds[axis];
  for (int i = 0; i < axis; ++i) outer *= ds[i];
  for (size_t i = axis + 1; i < ds.size(); ++i) inner *= ds[i];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      out.push_back(
          d[(o * n + fix_index(idx[o * inner + i], n, mode)) * inner + i]);
  return out;
}

Shape picked_shape(const Shape &ds, int axis, bool keepdims) {
  axis = norm_axis(axis, ds.size());
  Shape s = ds;
  if (keepdims) s[axis] = 1;
  else s.erase(s.begin() + axis);
  return s;
}

TEST(Pick, MatchesReferenceAxesModesKeepdims) {
  const std::pair<Shape, int> cases[] = {
      {{5}, 0}, {{3, 4}, -1}, {{3, 4}, 0}, {{2, 3, 4}, 1}, {{2, 3, 4}, -3}};
  for (const auto &c : cases) {
    for (std::string mode : {"clip", "wrap"}) {
      for (bool keep : {false, true}) {
        for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_INT64}) {
          SCOPED_TRACE(mode + " axis " + std::to_string(c.second));
          Shape os = picked_shape(c.first, c.second, keep);
          int64_t n = c.first[norm_axis(c.second, c.first.size())];
          auto dv = as_dtype(uniform(numel(c.first), -5, 5, 8), dt);
          auto iv = raw_indices(numel(os), n, false, 9);
          Arr d = make(c.first, dv, dt);
          Arr i = make(os, iv, MXC_DTYPE_FLOAT64);
          auto out = invoke("pick", {&d, &i},
                            {{"axis", std::to_string(c.second)},
                             {"mode", mode},
                             {"keepdims", keep ? "true" : "false"}});
          ASSERT_EQ(out.size(), 1u) << err();
          EXPECT_EQ(out[0].shape(), os);
          EXPECT_EQ(out[0].dtype(), dt);
          EXPECT_EQ(read(out[0]), ref_pick(c.first, dv, iv, c.second, mode));
        }
      }
    }
  }
}

TEST(Pick, IndexMayKeepTheAxisAsExtentOne) {
  Arr d = make({2, 3}, {1, 2, 3, 4, 5, 6});
  Arr i = make({2, 1}, {2, 0}, MXC_DTYPE_INT32);
  auto out = invoke("pick", {&d, &i});
  EXPECT_EQ(out[0].shape(), Shape({2}));
  EXPECT_EQ(read(out[0]), std::vector<double>({3, 4}));
}

TEST(Pick, Gradient) {
  grad_check_except("pick", {{3, 4}, {3}}, {uniform(12, -1, 1, 5), {0, 3, 7}}, {}, {1});
  grad_check_except("pick", {{2, 3, 2}, {2, 2}},
             {uniform(12, -1, 1, 6), {-1, 1, 2, 4}},
             {{"axis", "1"}, {"mode", "wrap"}, {"keepdims", "false"}}, {1});
  grad_check_except("pick", {{3, 2}, {1, 2}}, {uniform(6, -1, 1, 7), {2, 0}},
             {{"axis", "0"}, {"keepdims", "true"}}, {1});
  auto g = grads_of("pick", {{2, 3}, {2}}, {uniform(6, 0, 1), {1, 5}}, {},
                    {{10, 20}});
  EXPECT_EQ(g.g[0], std::vector<double>({0, 10, 0, 0, 0, 20}));
  EXPECT_FALSE(g.has[1]);
}

TEST(Pick, BadInput) {
  Arr d = make({3, 5}, uniform(15, 0, 1));
  Arr i = make({5}, {0, 1, 2, 3, 4});
  expect_error("pick", {&d, &i}, {}, MXC_ERR_SHAPE,
               {"pick", "index has shape (5)", "(3,5)", "must have shape (3)"});
  expect_error("pick", {&d, &i}, {{"mode", "raise"}},
               MXC_ERR_INVALID_ARGUMENT, {"pick", "mode"});
  expect_error("pick", {&d, &i}, {{"axis", "-3"}}, MXC_ERR_INVALID_ARGUMENT,
               {"pick", "axis -3"});
  expect_error("pick", {&d, &i, &i}, {}, MXC_ERR_INVALID_ARGUMENT,
               {"got 3 inputs; expected 2"});
}

}  // namespace
