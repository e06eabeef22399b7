// sort / argsort / topk against a reference built from std::stable_sort of
// (value, position) pairs per row (explicit index math), for every axis and
// axis None, both directions, all topk return types; ties give valid
// permutations; NaN ordering; integers; gradients; bad input.
#include <algorithm>
#include <limits>
#include <numeric>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Rows {
  int64_t outer, len, inner;
};

Rows rows_of(const Shape &s, int axis) {  // axis < 0 after normalizing: None
  if (axis < 0) return {1, numel(s), 1};
  Rows r{1, s[axis], 1};
  for (int a = 0; a < axis; ++a) r.outer *= s[a];
  for (size_t a = axis + 1; a < s.size(); ++a) r.inner *= s[a];
  return r;
}

// NaN is the largest value.
bool less_nan(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// Stable order of each row: result[row][j] = position along the axis.
std::vector<std::vector<int64_t>> ref_order(const Shape &s,
                                            const std::vector<double> &x,
                                            int axis, bool asc) {
  Rows r = rows_of(s, axis);
  std::vector<std::vector<int64_t>> res;
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      std::vector<int64_t> p(r.len);
      std::iota(p.begin(), p.end(), 0);
      auto val = [&](int64_t k) { return x[(o * r.len + k) * r.inner + i]; };
      std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
        return asc ? less_nan(val(a), val(b)) : less_nan(val(b), val(a));
      });
      res.push_back(p);
    }
  }
  return res;
}

// Expected values / indices outputs (first k of each row) in output layout.
void ref_topk(const Shape &s, const std::vector<double> &x, int axis, bool asc,
              int64_t k, std::vector<double> *vals, std::vector<double> *idx,
              std::vector<double> *mask) {
  Rows r = rows_of(s, axis);
  auto ord = ref_order(s, x, axis, asc);
  vals->assign(r.outer * k * r.inner, 0);
  idx->assign(r.outer * k * r.inner, 0);
  mask->assign(x.size(), 0);
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      const auto &p = ord[o * r.inner + i];
      for (int64_t j = 0; j < k; ++j) {
        int64_t src = (o * r.len + p[j]) * r.inner + i;
        (*vals)[(o * k + j) * r.inner + i] = x[src];
        (*idx)[(o * k + j) * r.inner + i] = (double)p[j];
        (*mask)[src] = 1;
      }
    }
  }
}

Shape values_shape(const Shape &s, int axis, int64_t k) {
  if (axis < 0) return {k};
  Shape r = s;
  r[axis] = k;
  return r;
}

struct AxisParam {
  const char *str;  // nullptr: default (-1)
  int norm;         // normalized for shape (2,3,4); -1: None
};
const AxisParam kAxes[] = {{nullptr, 2}, {"0", 0},  {"1", 1},
                           {"-1", 2},    {"-3", 0}, {"None", -1}};

TEST(Sort, SortAndArgsortEveryAxisBothDirections) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, -5, 5, 41);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr a = make(s, x, dt);
    auto xs = read(a);
    for (const auto &ax : kAxes) {
      for (bool asc : {true, false}) {
        SCOPED_TRACE(std::string("axis ") + (ax.str ? ax.str : "default") +
                     (asc ? " asc" : " desc"));
        Params p;
        if (ax.str) p.push_back({"axis", ax.str});
        if (!asc) p.push_back({"is_ascend", "false"});
        int64_t len = rows_of(s, ax.norm).len;
        std::vector<double> v, i, m;
        ref_topk(s, xs, ax.norm, asc, len, &v, &i, &m);
        auto so = invoke("sort", {&a}, p);
        EXPECT_EQ(so[0].shape(), values_shape(s, ax.norm, len));
        EXPECT_EQ(so[0].dtype(), dt);
        EXPECT_EQ(read(so[0]), v);
        auto ao = invoke("argsort", {&a}, p);
        EXPECT_EQ(ao[0].dtype(), MXC_DTYPE_FLOAT32);
        EXPECT_EQ(read(ao[0]), i);
      }
    }
  }
}

TEST(Sort, TopkAllReturnTypes) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, -5, 5, 43);
  Arr a = make(s, x, MXC_DTYPE_FLOAT64);
  for (const auto &ax : kAxes) {
    int64_t len = rows_of(s, ax.norm).len;
    for (int64_t k : {(int64_t)1, (int64_t)2, len, (int64_t)0, (int64_t)-1}) {
      for (bool asc : {false, true}) {
        int64_t kk = k < 1 ? len : k;
        SCOPED_TRACE(std::string("axis ") + (ax.str ? ax.str : "default") +
                     " k " + std::to_string(k) + (asc ? " asc" : " desc"));
        Params p = {{"k", std::to_string(k)}};
        if (ax.str) p.push_back({"axis", ax.str});
        if (asc) p.push_back({"is_ascend", "true"});
        std::vector<double> v, i, m;
        ref_topk(s, x, ax.norm, asc, kk, &v, &i, &m);
        Shape vs = values_shape(s, ax.norm, kk);
        auto pv = p;
        pv.push_back({"ret_typ", "value"});
        auto ov = invoke("topk", {&a}, pv);
        ASSERT_EQ(ov.size(), 1u);
        EXPECT_EQ(ov[0].shape(), vs);
        EXPECT_EQ(read(ov[0]), v);
        auto oi = invoke("topk", {&a}, p);  // default ret_typ: indices
        EXPECT_EQ(oi[0].dtype(), MXC_DTYPE_FLOAT32);
        EXPECT_EQ(read(oi[0]), i);
        auto pm = p;
        pm.push_back({"ret_typ", "mask"});
        auto om = invoke("topk", {&a}, pm);
        EXPECT_EQ(om[0].shape(), s);
        EXPECT_EQ(om[0].dtype(), MXC_DTYPE_FLOAT64);
        EXPECT_EQ(read(om[0]), m);
        auto pb = p;
        pb.push_back({"ret_typ", "both"});
        pb.push_back({"dtype", "int32"});
        auto ob = invoke("topk", {&a}, pb);
        ASSERT_EQ(ob.size(), 2u);
        EXPECT_EQ(read(ob[0]), v);
        EXPECT_EQ(ob[1].dtype(), MXC_DTYPE_INT32);
        EXPECT_EQ(ob[1].shape(), vs);
        EXPECT_EQ(read(ob[1]), i);
      }
    }
  }
}

// Each row of `idx` (positions along axis 1 of a (rows, len) input) is a
// permutation that orders x.
void expect_valid_order(const std::vector<double> &x,
                        const std::vector<double> &idx, int64_t rows,
                        int64_t len, int64_t k, bool asc) {
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<bool> seen(len, false);
    for (int64_t j = 0; j < k; ++j) {
      double p = idx[r * k + j];
      ASSERT_TRUE(p >= 0 && p < len && p == (int64_t)p) << p;
      EXPECT_FALSE(seen[(int64_t)p]) << "position " << p << " twice";
      seen[(int64_t)p] = true;
      if (j > 0) {
        double prev = x[r * len + (int64_t)idx[r * k + j - 1]];
        double cur = x[r * len + (int64_t)p];
        EXPECT_TRUE(asc ? !less_nan(cur, prev) : !less_nan(prev, cur));
      }
    }
  }
}

TEST(Sort, TiesGiveValidStablePermutations) {
  std::vector<double> x(60);
  for (int i = 0; i < 60; ++i) x[i] = (i * 7) % 3;  // many ties
  Arr a = make({3, 20}, x);
  for (bool asc : {true, false}) {
    Params p = {{"is_ascend", asc ? "1" : "0"}};
    auto idx = read(invoke("argsort", {&a}, p)[0]);
    expect_valid_order(x, idx, 3, 20, 20, asc);
    std::vector<double> v, i, m;
    ref_topk({3, 20}, x, 1, asc, 20, &v, &i, &m);
    EXPECT_EQ(idx, i);  // stable, as documented
    p.push_back({"k", "7"});
    auto tk = read(invoke("topk", {&a}, p)[0]);
    expect_valid_order(x, tk, 3, 20, 7, asc);
  }
}

TEST(Sort, LongRowsAndSmallKSelection) {
  // Long rows: merges of many runs; small k against long rows: topk's
  // selection path. Values with ties and NaNs, checked against the stable
  // reference.
  const int64_t len = 300;
  std::vector<double> x(2 * len);
  auto u = uniform(2 * len, 0, 40, 77);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::floor(u[i]);
  x[17] = x[401] = kNaN;
  Arr a = make({2, len}, x, MXC_DTYPE_FLOAT64);
  for (bool asc : {true, false}) {
    for (int64_t k : {(int64_t)1, (int64_t)5, (int64_t)18, len}) {
      SCOPED_TRACE("k " + std::to_string(k) + (asc ? " asc" : " desc"));
      std::vector<double> v, i, m;
      ref_topk({2, len}, x, 1, asc, k, &v, &i, &m);
      Params p = {{"k", std::to_string(k)}, {"is_ascend", asc ? "1" : "0"}};
      EXPECT_EQ(read(invoke("topk", {&a}, p)[0]), i);
      p.push_back({"ret_typ", "mask"});
      EXPECT_EQ(read(invoke("topk", {&a}, p)[0]), m);
    }
    auto idx =
        read(invoke("argsort", {&a}, {{"is_ascend", asc ? "1" : "0"}})[0]);
    std::vector<double> v, i, m;
    ref_topk({2, len}, x, 1, asc, len, &v, &i, &m);
    EXPECT_EQ(idx, i);
  }
  grad_check("topk", {{1, 40}}, {uniform(40, -1, 1, 5)},
             {{"k", "2"}, {"ret_typ", "value"}});
}

TEST(Sort, NaNSortsAsTheLargestValue) {
  Arr a = make({4}, {3, kNaN, 1, 2}, MXC_DTYPE_FLOAT64);
  auto up = read(invoke("sort", {&a})[0]);
  EXPECT_EQ(std::vector<double>(up.begin(), up.begin() + 3),
            std::vector<double>({1, 2, 3}));
  EXPECT_TRUE(std::isnan(up[3]));
  auto down = read(invoke("sort", {&a}, {{"is_ascend", "false"}})[0]);
  EXPECT_TRUE(std::isnan(down[0]));
  EXPECT_EQ(read(invoke("topk", {&a}, {{"k", "2"}})[0]),
            std::vector<double>({1, 0}));
  // -0 equals +0 (ties keep their order); infinities order below NaN.
  Arr z = make({5}, {0.0, -0.0, INFINITY, kNaN, -INFINITY}, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("argsort", {&z})[0]),
            std::vector<double>({4, 0, 1, 2, 3}));
  EXPECT_EQ(read(invoke("argsort", {&z}, {{"is_ascend", "0"}})[0]),
            std::vector<double>({3, 2, 0, 1, 4}));
}

TEST(Sort, IntegerAndHalfInputs) {
  Arr a = make({2, 3}, {5, -2, 9, 0, 0, -7}, MXC_DTYPE_INT32);
  auto so = invoke("sort", {&a}, {{"is_ascend", "false"}});
  EXPECT_EQ(so[0].dtype(), MXC_DTYPE_INT32);
  EXPECT_EQ(read(so[0]), std::vector<double>({9, 5, -2, 0, 0, -7}));
  EXPECT_EQ(read(invoke("argsort", {&a}, {{"dtype", "int64"}})[0]),
            std::vector<double>({1, 0, 2, 2, 0, 1}));
  // int64 keys beyond 2^53 compare exactly.
  int64_t big = (int64_t)1 << 60;
  std::vector<int64_t> raw = {big + 3, big + 1, big + 2};
  mxc_ndarray h = nullptr;
  int64_t n3 = 3;
  ASSERT_EQ(
      mxc_ndarray_create(&n3, 1, MXC_DTYPE_INT64, MXC_DEVICE_CPU, 0, 0, &h),
      MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_from_host(h, raw.data(), 24), MXC_OK);
  Arr b(h);
  EXPECT_EQ(read(invoke("argsort", {&b})[0]), std::vector<double>({1, 2, 0}));
  auto sb = invoke("sort", {&b});
  std::vector<int64_t> got(3);
  ASSERT_EQ(mxc_ndarray_copy_to_host(sb[0].h, got.data(), 24), MXC_OK);
  EXPECT_EQ(got, std::vector<int64_t>({big + 1, big + 2, big + 3}));
  Arr f = make({3}, {0.5, -1, 2}, MXC_DTYPE_BFLOAT16);
  EXPECT_EQ(read(invoke("sort", {&f})[0]), std::vector<double>({-1, 0.5, 2}));
}

TEST(Sort, WriteModeAddForValuesAndIndices) {
  Arr a = make({3}, {2, 0, 1}, MXC_DTYPE_FLOAT64);
  Arr v = make({2}, {10, 10}, MXC_DTYPE_FLOAT64);
  Arr i = make({2}, {100, 100}, MXC_DTYPE_FLOAT32);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("topk", &op), MXC_OK);
  const char *k[2] = {"k", "ret_typ"}, *val[2] = {"2", "both"};
  mxc_ndarray outs[2] = {v.h, i.h};
  int req[2] = {MXC_REQ_ADD, MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, val, 2, &a.h, 1, outs, 2, req), MXC_OK)
      << err();
  EXPECT_EQ(read(v), std::vector<double>({12, 11}));
  EXPECT_EQ(read(i), std::vector<double>({100, 102}));
}

// ---- gradients ----

TEST(SortGrad, SortAndTopkValuesScatterBack) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, -3, 3, 51);
  for (const Params &p :
       {Params{}, Params{{"axis", "1"}, {"is_ascend", "false"}},
        Params{{"axis", "None"}}}) {
    grad_check("sort", {s}, {x}, p);
  }
  for (const Params &p :
       {Params{{"k", "2"}, {"ret_typ", "value"}},
        Params{{"k", "2"}, {"ret_typ", "both"}, {"axis", "0"}},
        Params{{"k", "5"},
               {"ret_typ", "value"},
               {"axis", "None"},
               {"is_ascend", "true"}}}) {
    grad_check("topk", {s}, {x}, p);
  }
}

TEST(SortGrad, IndicesAndMasksHaveNoGradient) {
  Arr a = make({3}, {1, 3, 2}, MXC_DTYPE_FLOAT64);
  for (auto p : {Params{{"ret_typ", "indices"}}, Params{{"ret_typ", "mask"}}}) {
    auto out = invoke("topk", {&a}, p);
    Arr g = make(out[0].shape(), std::vector<double>(numel(out[0].shape()), 1),
                 out[0].dtype());
    std::vector<const char *> k, v;
    for (auto &kv : p) {
      k.push_back(kv.first.c_str());
      v.push_back(kv.second.c_str());
    }
    mxc_ndarray ig = reinterpret_cast<mxc_ndarray>(1);
    ASSERT_EQ(mxct_grad_eval("topk", k.data(), v.data(), 1, &a.h, 1, &out[0].h,
                             1, &g.h, &ig),
              MXC_OK)
        << err();
    EXPECT_EQ(ig, nullptr);
  }
}

// ---- bad input ----

TEST(SortErrors, BadParametersShapesAndArity) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  int rc = 0;
  invoke("topk", {&a}, {{"k", "4"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("k = 4"), std::string::npos) << err();
  EXPECT_NE(err().find("3 elements along axis 1"), std::string::npos) << err();
  invoke("topk", {&a}, {{"k", "7"}, {"axis", "None"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("topk", {&a}, {{"ret_typ", "values"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("ret_typ"), std::string::npos) << err();
  EXPECT_NE(err().find("'both'"), std::string::npos) << err();
  for (const char *op : {"sort", "argsort", "topk"}) {
    invoke(op, {&a}, {{"axis", "2"}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << op;
    EXPECT_NE(err().find("axis 2"), std::string::npos) << err();
    EXPECT_NE(err().find("2 dimensions"), std::string::npos) << err();
  }
  invoke("argsort", {&a}, {{"dtype", "bfloat16"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("dtype"), std::string::npos) << err();
  invoke("topk", {&a}, {{"dtype", "None"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr b = make({3}, {1, 0, 1}, MXC_DTYPE_BOOL);
  invoke("sort", {&b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("topk", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, a.h};
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outs[0], nullptr);
}

}  // namespace
