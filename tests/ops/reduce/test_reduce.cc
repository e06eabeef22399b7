// Axis reductions (sum, mean, prod, max, min, nansum, nanprod, norm)
// against a naive reference that groups input elements by explicit index
// arithmetic, over many axis/keepdims/exclude combinations; integer and
// half types; NaN handling; gradients by finite differences; bad input.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Reference reduction: the input elements of each output element (in
// input order), and the output shape.
struct Groups {
  Shape shape;
  std::vector<std::vector<double>> g;
};

// axes: the reduced axes (already normalized, no duplicates).
Groups group(const Shape &s, const std::vector<double> &x,
             const std::set<int> &axes, bool keepdims) {
  Groups r;
  int nd = (int)s.size();
  for (int a = 0; a < nd; ++a) {
    if (!axes.count(a))
      r.shape.push_back(s[a]);
    else if (keepdims)
      r.shape.push_back(1);
  }
  r.g.resize((size_t)numel(r.shape));
  std::vector<int64_t> idx(nd, 0);
  for (int64_t i = 0; i < numel(s); ++i) {
    // unravel i
    int64_t rem = i;
    for (int a = nd - 1; a >= 0; --a) {
      idx[a] = rem % s[a];
      rem /= s[a];
    }
    int64_t o = 0;
    for (int a = 0; a < nd; ++a) {
      if (!axes.count(a)) o = o * s[a] + idx[a];
    }
    r.g[o].push_back(x[i]);
  }
  return r;
}

using RefFn = std::function<double(const std::vector<double> &)>;

double ref_sum(const std::vector<double> &v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double ref_prod(const std::vector<double> &v) {
  double s = 1;
  for (double x : v) s *= x;
  return s;
}
double ref_max(const std::vector<double> &v) {
  double m = -INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
double ref_min(const std::vector<double> &v) {
  double m = INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}

struct OpCase {
  const char *name;
  RefFn ref;
  Params extra;
};

const OpCase kOps[] = {
    {"sum", ref_sum, {}},
    {"mean",
     [](const std::vector<double> &v) { return ref_sum(v) / v.size(); },
     {}},
    {"prod", ref_prod, {}},
    {"max", ref_max, {}},
    {"min", ref_min, {}},
    {"nansum",
     [](const std::vector<double> &v) {
       double s = 0;
       for (double x : v)
         if (!std::isnan(x)) s += x;
       return s;
     },
     {}},
    {"nanprod",
     [](const std::vector<double> &v) {
       double s = 1;
       for (double x : v)
         if (!std::isnan(x)) s *= x;
       return s;
     },
     {}},
    {"norm",
     [](const std::vector<double> &v) {
       double s = 0;
       for (double x : v) s += x * x;
       return std::sqrt(s);
     },
     {}},
    {"norm",
     [](const std::vector<double> &v) {
       double s = 0;
       for (double x : v) s += std::fabs(x);
       return s;
     },
     {{"ord", "1"}}},
};

// An axis parameter and the axes it means for a given ndim.
struct AxisCase {
  const char *axis;  // nullptr: parameter omitted
  std::vector<int> axes;
  bool exclude;
};

std::set<int> resolve(const AxisCase &a, int nd) {
  std::set<int> s;
  if (a.axes.empty()) {  // None / (): all axes, exclude ignored
    for (int i = 0; i < nd; ++i) s.insert(i);
    return s;
  }
  for (int x : a.axes) s.insert(x < 0 ? x + nd : x);
  if (!a.exclude) return s;
  std::set<int> c;
  for (int i = 0; i < nd; ++i)
    if (!s.count(i)) c.insert(i);
  return c;
}

void check_case(const OpCase &op, const Shape &shape,
                const std::vector<double> &x, const AxisCase &ac, bool keepdims,
                int dtype) {
  if (ac.exclude && std::string(op.name) == "norm") return;  // no exclude
  Params p = op.extra;
  if (ac.axis) p.push_back({"axis", ac.axis});
  if (ac.exclude) p.push_back({"exclude", "true"});
  if (keepdims) p.push_back({"keepdims", "1"});
  std::string what =
      std::string(op.name) + " axis=" + (ac.axis ? ac.axis : "(omitted)") +
      (ac.exclude ? " exclude" : "") + (keepdims ? " keepdims" : "") +
      " dtype=" + std::to_string(dtype) +
      " ndim=" + std::to_string(shape.size());
  SCOPED_TRACE(what);
  // The values as stored in dtype.
  Arr a = make(shape, x, dtype);
  auto xs = read(a);
  Groups g = group(shape, xs, resolve(ac, (int)shape.size()), keepdims);
  auto out = invoke(op.name, {&a}, p);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), g.shape);
  EXPECT_EQ(out[0].dtype(), dtype);
  auto y = read(out[0]);
  ASSERT_EQ(y.size(), g.g.size());
  double tol = dtype == MXC_DTYPE_FLOAT64 ? 1e-12 : 1e-6;
  for (size_t o = 0; o < y.size(); ++o) {
    double want = op.ref(g.g[o]);
    if (dtype == MXC_DTYPE_FLOAT32) want = (float)want;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[o])) << "output " << o;
    } else {
      EXPECT_NEAR(y[o], want, tol * (1 + std::fabs(want))) << "output " << o;
    }
  }
}

const AxisCase kAxes3[] = {
    {nullptr, {}, false},
    {"None", {}, false},
    {"()", {}, false},
    {"()", {}, true},
    {"0", {0}, false},
    {"1", {1}, false},
    {"2", {2}, false},
    {"-1", {-1}, false},
    {"(0,2)", {0, 2}, false},
    {"(-1,0)", {-1, 0}, false},
    {"(1,2)", {1, 2}, false},
    {"[0, 1]", {0, 1}, false},
    {"1", {1}, true},
    {"(0,2)", {0, 2}, true},
    {"(0,1,2)", {0, 1, 2}, false},
    {"(0,1,2)", {0, 1, 2}, true},
};

TEST(Reduce, AllOpsAxesKeepdimsExcludeFloat64AndFloat32) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, 0.5, 1.5, 3);
  for (int i = 0; i < 24; i += 5) x[i] = -x[i];
  for (const auto &op : kOps)
    for (const auto &ac : kAxes3)
      for (bool kd : {false, true})
        for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32})
          check_case(op, s, x, ac, kd, dt);
}

TEST(Reduce, HigherRankNonContiguousGroupsAndUnitExtents) {
  // 4-D with reduced axes separated by kept ones (general iteration), and
  // shapes with extents of 1 that the plan drops.
  Shape s4 = {2, 3, 2, 3};
  auto x4 = uniform(36, -2, 2, 5);
  const AxisCase cases4[] = {{"(0,2)", {0, 2}, false},
                             {"(1,3)", {1, 3}, false},
                             {"(0,3)", {0, 3}, false},
                             {"(1,3)", {1, 3}, true},
                             {"(-4,-2)", {-4, -2}, false}};
  Shape s1 = {3, 1, 4, 1};
  auto x1 = uniform(12, -2, 2, 6);
  const AxisCase cases1[] = {{"1", {1}, false},
                             {"(0,1)", {0, 1}, false},
                             {"(1,2)", {1, 2}, false},
                             {"3", {3}, true}};
  for (const auto &op : kOps) {
    for (const auto &ac : cases4)
      for (bool kd : {false, true})
        check_case(op, s4, x4, ac, kd, MXC_DTYPE_FLOAT64);
    for (const auto &ac : cases1)
      for (bool kd : {false, true})
        check_case(op, s1, x1, ac, kd, MXC_DTYPE_FLOAT64);
  }
}

TEST(Reduce, ScalarAndOneDimensionalInputs) {
  for (const auto &op : kOps) {
    check_case(op, {}, {2.5}, {nullptr, {}, false}, false, MXC_DTYPE_FLOAT64);
    check_case(op, {}, {2.5}, {"()", {}, false}, true, MXC_DTYPE_FLOAT32);
    check_case(op, {5}, {1, -2, 3, 0.5, 4}, {"0", {0}, false}, false,
               MXC_DTYPE_FLOAT64);
    check_case(op, {5}, {1, -2, 3, 0.5, 4}, {"-1", {-1}, false}, true,
               MXC_DTYPE_FLOAT32);
    // exclude of the only axis reduces nothing
    check_case(op, {5}, {1, -2, 3, 0.5, 4}, {"0", {0}, true}, false,
               MXC_DTYPE_FLOAT64);
  }
}

TEST(Reduce, FullReductionGivesZeroDimensionalResult) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = invoke("sum", {&a});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_EQ(read(out[0]), std::vector<double>{21});
  out = invoke("sum", {&a}, {{"keepdims", "true"}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1}));
}

TEST(Reduce, AliasesAreTheSameOperators) {
  Arr a = make({2, 3}, {1, 5, 3, 4, 2, 6});
  EXPECT_EQ(read(invoke("sum_axis", {&a}, {{"axis", "1"}})[0]),
            std::vector<double>({9, 12}));
  EXPECT_EQ(read(invoke("max_axis", {&a}, {{"axis", "0"}})[0]),
            std::vector<double>({4, 5, 6}));
  EXPECT_EQ(read(invoke("min_axis", {&a}, {{"axis", "0"}})[0]),
            std::vector<double>({1, 2, 3}));
}

TEST(Reduce, ZeroSizeInputs) {
  Arr a = make({2, 0, 3}, {});
  auto s = invoke("sum", {&a}, {{"axis", "1"}});
  EXPECT_EQ(s[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(read(s[0]), std::vector<double>(6, 0.0));
  auto p = invoke("prod", {&a}, {{"axis", "1"}});
  EXPECT_EQ(read(p[0]), std::vector<double>(6, 1.0));
  auto m = invoke("mean", {&a}, {{"axis", "1"}});
  for (double v : read(m[0])) EXPECT_TRUE(std::isnan(v));
  auto e = invoke("sum", {&a}, {{"axis", "0"}});
  EXPECT_EQ(e[0].shape(), (Shape{0, 3}));
  // Reducing an empty array over axes that keep it empty is fine for max.
  auto mx = invoke("max", {&a}, {{"axis", "2"}});
  EXPECT_EQ(mx[0].shape(), (Shape{2, 0}));
  int rc = 0;
  auto bad = invoke("max", {&a}, {{"axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("zero-size"), std::string::npos) << err();
}

TEST(Reduce, NaNHandling) {
  Shape s = {2, 3};
  std::vector<double> x = {1, kNaN, 2, 3, 4, 5};
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr a = make(s, x, dt);
    auto r = [&](const char *op) {
      return read(invoke(op, {&a}, {{"axis", "1"}})[0]);
    };
    auto sum = r("sum");
    EXPECT_TRUE(std::isnan(sum[0]));
    EXPECT_EQ(sum[1], 12);
    EXPECT_EQ(r("nansum"), std::vector<double>({3, 12}));
    EXPECT_EQ(r("nanprod"), std::vector<double>({2, 60}));
    auto mx = r("max"), mn = r("min");
    EXPECT_TRUE(std::isnan(mx[0]));
    EXPECT_TRUE(std::isnan(mn[0]));
    EXPECT_EQ(mx[1], 5);
    EXPECT_EQ(mn[1], 3);
    // All-NaN groups.
    Arr b = make({2}, {kNaN, kNaN}, dt);
    EXPECT_EQ(read(invoke("nansum", {&b})[0]), std::vector<double>({0}));
    EXPECT_EQ(read(invoke("nanprod", {&b})[0]), std::vector<double>({1}));
  }
}

TEST(Reduce, Float32SumsAccumulateInDouble) {
  // 2^24 + many ones: a float accumulator would stop growing at 2^24.
  int n = 1 << 20;
  std::vector<double> x(n, 1.0);
  x[0] = 16777216.0;
  Arr a = make({n}, x);
  EXPECT_EQ(read(invoke("sum", {&a})[0])[0],
            (double)(float)(16777216.0 + n - 1));
  auto m = read(invoke("mean", {&a})[0])[0];
  EXPECT_NEAR(m, (16777216.0 + n - 1) / n, 1e-5);
}

TEST(Reduce, HalfTypes) {
  // Computed in float or double and rounded once to the half type.
  auto x = uniform(12, -2, 2, 9);
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    Arr a = make({3, 4}, x, dt);
    Groups g = group({3, 4}, read(a), {1}, false);
    for (const auto &op : kOps) {
      Params p = op.extra;
      p.push_back({"axis", "1"});
      auto out = invoke(op.name, {&a}, p);
      EXPECT_EQ(out[0].dtype(), dt);
      auto y = read(out[0]);
      double tol = dt == MXC_DTYPE_FLOAT16 ? 1e-3 : 8e-3;
      for (size_t o = 0; o < 3; ++o) {
        double want = op.ref(g.g[o]);
        EXPECT_NEAR(y[o], want, tol * (1 + std::fabs(want))) << op.name;
      }
    }
  }
}

// int64 results read exactly (read() goes through double).
std::vector<int64_t> read_i64(const Arr &a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK);
  std::vector<int64_t> v((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, v.data(), v.size() * 8), MXC_OK);
  return v;
}

Arr make_i64(const Shape &s, const std::vector<int64_t> &v) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), MXC_DTYPE_INT64,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, v.data(), v.size() * 8), MXC_OK);
  return Arr(h);
}

TEST(Reduce, IntegerTypes) {
  Arr a = make({2, 3}, {3, -7, 2, 10, 0, -4}, MXC_DTYPE_INT32);
  auto r = [&](const char *op, const char *axis) {
    auto out = invoke(op, {&a}, {{"axis", axis}});
    EXPECT_EQ(out[0].dtype(), MXC_DTYPE_INT32);
    return read(out[0]);
  };
  EXPECT_EQ(r("sum", "1"), std::vector<double>({-2, 6}));
  EXPECT_EQ(r("prod", "0"), std::vector<double>({30, 0, -8}));
  EXPECT_EQ(r("max", "1"), std::vector<double>({3, 10}));
  EXPECT_EQ(r("min", "()"), std::vector<double>({-7}));
  // int64 beyond 2^53 stays exact.
  int64_t big = (int64_t)1 << 60;
  Arr b = make_i64({3}, {big, 1, 1});
  EXPECT_EQ(read_i64(invoke("sum", {&b})[0]), std::vector<int64_t>({big + 2}));
  Arr c = make_i64({3}, {big + 1, big + 3, big + 2});
  EXPECT_EQ(read_i64(invoke("max", {&c})[0]), std::vector<int64_t>({big + 3}));
  EXPECT_EQ(read_i64(invoke("min", {&c})[0]), std::vector<int64_t>({big + 1}));
  // int32 overflow wraps (as NumPy with an int32 accumulator).
  Arr d = make({2}, {2147483647, 1}, MXC_DTYPE_INT32);
  EXPECT_EQ(read(invoke("sum", {&d})[0]), std::vector<double>({-2147483648.0}));
  // Float-only reductions reject integers at invoke time (integer mean:
  // tests/ops/test_int_dtypes.cc).
  for (const char *op : {"nansum", "nanprod", "norm"}) {
    int rc = 0;
    auto out = invoke(op, {&a}, {}, &rc);
    EXPECT_EQ(rc, MXC_ERR_DTYPE) << op;
    EXPECT_NE(err().find("floating-point"), std::string::npos) << err();
  }
  Arr u = make({2}, {1, 0}, MXC_DTYPE_BOOL);
  int rc = 0;
  auto out = invoke("sum", {&u}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("bool"), std::string::npos) << err();
}

TEST(Reduce, WriteModeAdd) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_FLOAT64);
  Arr o = make({2}, {10, 20}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("sum", &op), MXC_OK);
  const char *k[1] = {"axis"}, *v[1] = {"1"};
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &a.h, 1, outs, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({16, 35}));
}

// ---- gradients ----

TEST(ReduceGrad, SumMeanNansumProdNanprodNorm) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, 0.5, 2, 21);
  for (int i = 0; i < 24; i += 3) x[i] = -x[i];
  const Params axes[] = {{},
                         {{"axis", "1"}},
                         {{"axis", "(0,2)"}, {"keepdims", "1"}},
                         {{"axis", "-1"}, {"exclude", "1"}}};
  for (const auto &p : axes) {
    for (const char *op : {"sum", "mean", "nansum", "prod", "nanprod"})
      grad_check(op, {s}, {x}, p);
    Params p1 = p, p2 = p;
    bool has_exclude = false;
    for (auto &kv : p) has_exclude |= kv.first == "exclude";
    if (has_exclude) continue;  // norm has no exclude
    p1.push_back({"ord", "1"});
    grad_check("norm", {s}, {x}, p1);
    grad_check("norm", {s}, {x}, p2);
  }
}

TEST(ReduceGrad, MaxMinWithoutTies) {
  auto x = uniform(24, -3, 3, 33);  // distinct with probability 1
  for (const Params &p : {Params{}, Params{{"axis", "1"}},
                          Params{{"axis", "(0,2)"}, {"keepdims", "true"}},
                          Params{{"axis", "1"}, {"exclude", "true"}}}) {
    grad_check("max", {{2, 3, 4}}, {x}, p);
    grad_check("min", {{2, 3, 4}}, {x}, p);
  }
}

TEST(ReduceGrad, ProdWithZeros) {
  // prod is a polynomial, smooth at zeros: finite differences hold there.
  grad_check("prod", {{2, 4}}, {{0, 2, 3, 4, 0, 0, 5, 6}}, {{"axis", "1"}});
  grad_check("prod", {{3}}, {{0, 0, 0}});
  grad_check("nanprod", {{2, 3}}, {{1.5, kNaN, 2, 0, kNaN, 3}},
             {{"axis", "1"}});
}

TEST(ReduceGrad, NansumIsZeroAtNaN) {
  grad_check("nansum", {{2, 3}}, {{1, kNaN, 2, 3, 4, kNaN}}, {{"axis", "0"}});
}

// Runs the gradient of `op` on x (float64) with ograd og; returns dx.
std::vector<double> grad_of(const char *op, const Shape &s,
                            const std::vector<double> &x,
                            const std::vector<double> &og, const Params &p) {
  Arr a = make(s, x, MXC_DTYPE_FLOAT64);
  auto out = invoke(op, {&a}, p);
  Arr g = make(out[0].shape(), og, MXC_DTYPE_FLOAT64);
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  mxc_ndarray ig = nullptr;
  EXPECT_EQ(mxct_grad_eval(op, k.data(), v.data(), (int)k.size(), &a.h, 1,
                           &out[0].h, 1, &g.h, &ig),
            MXC_OK)
      << err();
  Arr res(ig);
  return read(res);
}

TEST(ReduceGrad, TiesSplitTheGradientEvenly) {
  // Row 0 has its max 3 twice, row 1 three times 1 (also its min).
  std::vector<double> x = {3, 1, 3, 1, 1, 1};
  EXPECT_EQ(grad_of("max", {2, 3}, x, {2, 6}, {{"axis", "1"}}),
            std::vector<double>({1, 0, 1, 2, 2, 2}));
  EXPECT_EQ(grad_of("min", {2, 3}, x, {4, 3}, {{"axis", "1"}}),
            std::vector<double>({0, 4, 0, 1, 1, 1}));
}

TEST(ReduceGrad, NormAtZeroAndNansumNaN) {
  EXPECT_EQ(grad_of("norm", {3}, {0, 0, 0}, {1}, {}),
            std::vector<double>({0, 0, 0}));
  EXPECT_EQ(grad_of("norm", {3}, {0, -2, 2}, {1}, {{"ord", "1"}}),
            std::vector<double>({0, -1, 1}));
  EXPECT_EQ(grad_of("nansum", {3}, {1, kNaN, 2}, {5}, {}),
            std::vector<double>({5, 0, 5}));
  EXPECT_EQ(grad_of("prod", {4}, {2, 0, 3, 0}, {1}, {}),
            std::vector<double>({0, 0, 0, 0}));
  EXPECT_EQ(grad_of("prod", {3}, {2, 0, 3}, {1}, {}),
            std::vector<double>({0, 6, 0}));
}

// ---- bad input ----

TEST(ReduceErrors, AxisOutOfRangeNamesAxisAndNdim) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char *op :
       {"sum", "mean", "prod", "max", "min", "nansum", "nanprod", "norm"}) {
    int rc = 0;
    auto out = invoke(op, {&a}, {{"axis", "(0,2)"}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << op;
    EXPECT_TRUE(out.empty());
    EXPECT_NE(err().find(op), std::string::npos) << err();
    EXPECT_NE(err().find("axis 2"), std::string::npos) << err();
    EXPECT_NE(err().find("2 dimensions"), std::string::npos) << err();
  }
  int rc = 0;
  invoke("sum", {&a}, {{"axis", "-3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("axis -3"), std::string::npos) << err();
  Arr s = make({}, {1});
  invoke("sum", {&s}, {{"axis", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("0 dimensions"), std::string::npos) << err();
}

TEST(ReduceErrors, DuplicateAxes) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  int rc = 0;
  invoke("sum", {&a}, {{"axis", "(1,-1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("repeats axis 1"), std::string::npos) << err();
  invoke("max", {&a}, {{"axis", "(0,0)"}, {"exclude", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

TEST(ReduceErrors, BadParametersAndArity) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  int rc = 0;
  invoke("norm", {&a}, {{"ord", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("ord"), std::string::npos) << err();
  invoke("norm", {&a}, {{"exclude", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("unknown parameter 'exclude'"), std::string::npos)
      << err();
  invoke("sum", {&a}, {{"axis", "x"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("sum", {&a}, {{"keepdims", "maybe"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);

  mxc_op op;
  ASSERT_EQ(mxc_op_find("sum", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, a.h};
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 2 inputs; expected 1"), std::string::npos) << err();
  EXPECT_EQ(outs[0], nullptr);
  // A given output of the wrong shape is rejected and left alone.
  Arr wrong = make({3}, {7, 8, 9});
  outs[0] = wrong.h;
  const char *k[1] = {"axis"}, *v[1] = {"1"};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, ins, 1, outs, 1, nullptr),
            MXC_ERR_SHAPE);
  EXPECT_EQ(read(wrong), std::vector<double>({7, 8, 9}));
}

}  // namespace
