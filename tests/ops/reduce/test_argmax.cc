// argmax / argmin against a reference that scans each group with explicit
// index arithmetic (first position on ties, NaN wins), for every axis,
// axis None, keepdims, several dtypes; and bad input.
#include <limits>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Position along `axis` (or in the flattened input for axis < 0) of the
// extreme element of each output group.
std::vector<double> ref_arg(const Shape &s, const std::vector<double> &x,
                            int axis, bool is_max) {
  int64_t outer = 1, len = numel(s), inner = 1;
  if (axis >= 0) {
    outer = inner = 1;
    for (int a = 0; a < axis; ++a) outer *= s[a];
    len = s[axis];
    for (size_t a = axis + 1; a < s.size(); ++a) inner *= s[a];
  }
  std::vector<double> r;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        double v = x[(o * len + k) * inner + i];
        double b = x[(o * len + best) * inner + i];
        if (std::isnan(b)) break;
        if (std::isnan(v) || (is_max ? v > b : v < b)) best = k;
      }
      r.push_back((double)best);
    }
  }
  return r;
}

Shape out_shape(const Shape &s, int axis, bool keepdims) {
  Shape r;
  for (int a = 0; a < (int)s.size(); ++a) {
    bool red = axis < 0 || a == axis;
    if (!red)
      r.push_back(s[a]);
    else if (keepdims)
      r.push_back(1);
  }
  return r;
}

TEST(ArgMax, EveryAxisAndNoneWithKeepdims) {
  Shape s = {3, 4, 5};
  auto x = uniform(60, -5, 5, 17);
  x[7] = x[12] = 9;  // a tie for the maximum of a group along axis 1
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Arr a = make(s, x, dt);
    auto xs = read(a);
    for (const char *op : {"argmax", "argmin"}) {
      bool is_max = std::string(op) == "argmax";
      for (int axis : {-1, 0, 1, 2, 3}) {  // -1 here: None; 3: axis -1
        for (bool kd : {false, true}) {
          Params p;
          int norm = axis == 3 ? 2 : axis;
          if (axis >= 0)
            p.push_back({"axis", axis == 3 ? "-1" : std::to_string(axis)});
          if (kd) p.push_back({"keepdims", "true"});
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
          auto out = invoke(op, {&a}, p);
          ASSERT_EQ(out.size(), 1u);
          EXPECT_EQ(out[0].dtype(), dt);
          EXPECT_EQ(out[0].shape(), out_shape(s, norm, kd));
          EXPECT_EQ(read(out[0]), ref_arg(s, xs, norm, is_max));
        }
      }
    }
  }
}

TEST(ArgMax, TiesGiveTheFirstPositionAndNaNWins) {
  Arr a = make({2, 4}, {1, 3, 3, 0, 2, kNaN, 5, kNaN}, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("argmax", {&a}, {{"axis", "1"}})[0]),
            std::vector<double>({1, 1}));
  EXPECT_EQ(read(invoke("argmin", {&a}, {{"axis", "1"}})[0]),
            std::vector<double>({3, 1}));
  EXPECT_EQ(read(invoke("argmax", {&a})[0]), std::vector<double>({5}));
}

TEST(ArgMax, IntegerAndHalfInputsKeepTheirDtype) {
  Arr a = make({2, 3}, {4, -1, 9, 9, 2, -5}, MXC_DTYPE_INT32);
  auto out = invoke("argmax", {&a}, {{"axis", "0"}});
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_INT32);
  EXPECT_EQ(read(out[0]), std::vector<double>({1, 1, 0}));
  EXPECT_EQ(read(invoke("argmin", {&a})[0]), std::vector<double>({5}));
  Arr b = make({2, 3}, {4, -1, 9, 9, 2, -5}, MXC_DTYPE_INT64);
  EXPECT_EQ(read(invoke("argmin", {&b}, {{"axis", "1"}})[0]),
            std::vector<double>({1, 2}));
  Arr h = make({4}, {0.5, 2.5, -1, 2}, MXC_DTYPE_FLOAT16);
  auto r = invoke("argmax", {&h});
  EXPECT_EQ(r[0].dtype(), MXC_DTYPE_FLOAT16);
  EXPECT_EQ(read(r[0]), std::vector<double>({1}));
}

TEST(ArgMax, ScalarInput) {
  Arr a = make({}, {3});
  auto out = invoke("argmax", {&a});
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_EQ(read(out[0]), std::vector<double>({0}));
}

TEST(ArgMax, NotDifferentiable) {
  Arr a = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  auto out = invoke("argmax", {&a});
  Arr g = make({}, {1}, MXC_DTYPE_FLOAT64);
  mxc_ndarray ig = reinterpret_cast<mxc_ndarray>(1);
  ASSERT_EQ(mxct_grad_eval("argmax", nullptr, nullptr, 0, &a.h, 1, &out[0].h, 1,
                           &g.h, &ig),
            MXC_OK)
      << err();
  EXPECT_EQ(ig, nullptr);
}

TEST(ArgMaxErrors, BadAxisEmptyAxisDtypeArity) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  int rc = 0;
  auto out = invoke("argmax", {&a}, {{"axis", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("axis 2"), std::string::npos) << err();
  EXPECT_NE(err().find("2 dimensions"), std::string::npos) << err();
  invoke("argmin", {&a}, {{"axis", "(0,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr e = make({2, 0}, {});
  invoke("argmax", {&e}, {{"axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("zero-size"), std::string::npos) << err();
  auto ok = invoke("argmax", {&e}, {{"axis", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_OK);
  Arr u = make({2}, {1, 0}, MXC_DTYPE_BOOL);
  invoke("argmax", {&u}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("argmax", &op), MXC_OK);
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(
      mxc_op_invoke(op, nullptr, nullptr, 0, nullptr, 0, outs, 1, nullptr),
      MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 0 inputs; expected 1"), std::string::npos) << err();
}

}  // namespace
