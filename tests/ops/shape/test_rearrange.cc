// reshape_like, shape_array, size_array, depth_to_space, space_to_depth,
// diag and _slice_assign(_scalar) against index loops written here from
// MXNet's documented definitions; gradients by finite differences.
#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

std::vector<double> iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = (double)i;
  return v;
}

TEST(ReshapeLike, WholeAndPartialRanges) {
  Arr x = make({2, 3, 4}, iota(24)), y = make({6, 4}, iota(24));
  auto out = invoke("reshape_like", {&x, &y});
  EXPECT_EQ(out[0].shape(), Shape({6, 4}));
  EXPECT_EQ(read(out[0]), iota(24));
  // lhs axes [0, 2) (2, 3) replaced by rhs axes [1, 2) of (5, 6, 7).
  Arr r = make({5, 6, 7}, iota(210));
  auto part = invoke("reshape_like", {&x, &r},
                     {{"lhs_begin", "0"}, {"lhs_end", "2"},
                      {"rhs_begin", "1"}, {"rhs_end", "2"}});
  EXPECT_EQ(part[0].shape(), Shape({6, 4}));
  // negative indices: lhs axes [-1, None) -> rhs (2, 2)
  Arr q = make({2, 2}, iota(4));
  auto neg = invoke("reshape_like", {&x, &q}, {{"lhs_begin", "-1"}});
  EXPECT_EQ(neg[0].shape(), Shape({2, 3, 2, 2}));
  // integer rhs only lends its shape
  Arr yi = make({6, 4}, iota(24), MXC_DTYPE_INT32);
  auto mixed = invoke("reshape_like", {&x, &yi});
  EXPECT_EQ(mixed[0].dtype(), MXC_DTYPE_FLOAT32);
  grad_check("reshape_like", {{2, 3}, {3, 2}}, {iota(6), iota(6)}, {}, 1e-6,
             1e-4, 1e-6, {1});
  int rc = 0;
  Arr bad = make({5}, iota(5));
  invoke("reshape_like", {&x, &bad}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("reshape_like", {&x, &y}, {{"lhs_begin", "2"}, {"lhs_end", "1"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

TEST(ShapeArray, ShapeAndSize) {
  Arr x = make({2, 3, 4}, iota(24), MXC_DTYPE_INT32);
  auto s = invoke("shape_array", {&x});
  EXPECT_EQ(s[0].dtype(), MXC_DTYPE_INT64);
  EXPECT_EQ(read(s[0]), std::vector<double>({2, 3, 4}));
  auto n = invoke("size_array", {&x});
  EXPECT_EQ(n[0].shape(), Shape({1}));
  EXPECT_EQ(read(n[0]), std::vector<double>({24}));
}

// MXNet's depth_to_space: reshape (N, b, b, C', H, W), transpose
// (0, 3, 4, 1, 5, 2), reshape (N, C', H*b, W*b).
std::vector<double> d2s_ref(const std::vector<double> &x, int64_t n,
                            int64_t c, int64_t h, int64_t w, int64_t b) {
  int64_t co = c / (b * b);
  std::vector<double> y(x.size());
  for (int64_t in = 0; in < n; ++in)
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j)
        for (int64_t cc = 0; cc < co; ++cc)
          for (int64_t hh = 0; hh < h; ++hh)
            for (int64_t ww = 0; ww < w; ++ww) {
              int64_t src = ((((in * b + i) * b + j) * co + cc) * h + hh) * w + ww;
              int64_t dst = ((in * co + cc) * h * b + hh * b + i) * w * b + ww * b + j;
              y[dst] = x[src];
            }
  return y;
}

TEST(DepthToSpace, MxnetOrderAndInverse) {
  auto xv = iota(2 * 8 * 2 * 3);
  Arr x = make({2, 8, 2, 3}, xv, MXC_DTYPE_FLOAT64);
  auto y = invoke("depth_to_space", {&x}, {{"block_size", "2"}});
  EXPECT_EQ(y[0].shape(), Shape({2, 2, 4, 6}));
  EXPECT_EQ(read(y[0]), d2s_ref(xv, 2, 8, 2, 3, 2));
  auto back = invoke("space_to_depth", {&y[0]}, {{"block_size", "2"}});
  EXPECT_EQ(back[0].shape(), Shape({2, 8, 2, 3}));
  EXPECT_EQ(read(back[0]), xv);
  Arr xi = make({1, 9, 1, 2}, iota(18), MXC_DTYPE_INT8);
  auto yi = invoke("depth_to_space", {&xi}, {{"block_size", "3"}});
  EXPECT_EQ(read(yi[0]), d2s_ref(iota(18), 1, 9, 1, 2, 3));
  grad_check("depth_to_space", {{1, 4, 2, 1}}, {uniform(8, -1, 1, 601)},
             {{"block_size", "2"}});
  grad_check("space_to_depth", {{1, 1, 2, 4}}, {uniform(8, -1, 1, 602)},
             {{"block_size", "2"}});
  int rc = 0;
  invoke("depth_to_space", {&x}, {{"block_size", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("space_to_depth", {&x}, {{"block_size", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);  // height 2 fine, width 3 not a multiple
  invoke("depth_to_space", {&x}, {{"block_size", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

TEST(Diag, OneDimensional) {
  std::vector<double> v = {1, 2, 3};
  Arr x = make({3}, v, MXC_DTYPE_FLOAT64);
  for (int k : {0, 2, -1}) {
    auto m = invoke("diag", {&x}, {{"k", std::to_string(k)}});
    int64_t s = 3 + std::abs(k);
    EXPECT_EQ(m[0].shape(), Shape({s, s}));
    std::vector<double> want(s * s, 0);
    for (int64_t i = 0; i < 3; ++i) {
      int64_t r = k >= 0 ? i : i - k, c = k >= 0 ? i + k : i;
      want[r * s + c] = v[i];
    }
    EXPECT_EQ(read(m[0]), want) << "k " << k;
  }
  grad_check("diag", {{3}}, {v}, {{"k", "-1"}});
}

TEST(Diag, PlanesOfNdArrays) {
  auto xv = iota(2 * 3 * 4);
  Arr x = make({2, 3, 4}, xv, MXC_DTYPE_FLOAT64);
  // axes (1, 2), k = 1: for each of the 2 planes, x[p, t, t + 1], t < 3.
  auto d = invoke("diag", {&x}, {{"k", "1"}, {"axis1", "1"}, {"axis2", "2"}});
  EXPECT_EQ(d[0].shape(), Shape({2, 3}));
  std::vector<double> want;
  for (int p = 0; p < 2; ++p)
    for (int t = 0; t < 3; ++t) want.push_back(xv[p * 12 + t * 4 + t + 1]);
  EXPECT_EQ(read(d[0]), want);
  // axes (2, 0), k = -1: rows along axis 2, columns along axis 0.
  auto e = invoke("diag", {&x}, {{"k", "-1"}, {"axis1", "2"}, {"axis2", "0"}});
  EXPECT_EQ(e[0].shape(), Shape({3, 2}));
  want.clear();
  for (int m = 0; m < 3; ++m)
    for (int t = 0; t < 2; ++t) want.push_back(xv[t * 12 + m * 4 + (t + 1)]);
  EXPECT_EQ(read(e[0]), want);
  grad_check("diag", {{2, 3, 4}}, {uniform(24, -1, 1, 611)},
             {{"k", "1"}, {"axis1", "2"}, {"axis2", "1"}});
  int rc = 0;
  invoke("diag", {&x}, {{"k", "4"}, {"axis1", "1"}, {"axis2", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("diag", {&x}, {{"axis1", "1"}, {"axis2", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("diag", {&x}, {{"axis1", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("diag", {&x}, {{"k", "-9223372036854775808"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

TEST(SliceAssign, BoxWithStepsAndScalar) {
  auto lv = iota(4 * 5);
  Arr lhs = make({4, 5}, lv, MXC_DTYPE_FLOAT64);
  // rows 3, 1 (step -2 from 3), columns 1..3
  Arr rhs = make({2, 3}, {-1, -2, -3, -4, -5, -6}, MXC_DTYPE_FLOAT64);
  auto out = invoke("_slice_assign", {&lhs, &rhs},
                    {{"begin", "(3,1)"}, {"end", "(0,4)"}, {"step", "(-2,1)"}});
  auto want = lv;
  int rows[2] = {3, 1};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) want[rows[i] * 5 + 1 + j] = -(i * 3 + j + 1);
  EXPECT_EQ(read(out[0]), want);
  EXPECT_EQ(read(lhs), lv) << "lhs unchanged";
  auto sc = invoke("_crop_assign_scalar", {&lhs},
                   {{"begin", "(1,)"}, {"end", "(3,)"}, {"scalar", "7.5"}});
  want = lv;
  for (int i = 5; i < 15; ++i) want[i] = 7.5;
  EXPECT_EQ(read(sc[0]), want);
  int rc = 0;
  Arr wrong = make({3, 3}, iota(9), MXC_DTYPE_FLOAT64);
  invoke("_slice_assign", {&lhs, &wrong},
         {{"begin", "(3,1)"}, {"end", "(0,4)"}, {"step", "(-2,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("rhs"), std::string::npos) << err();
  invoke("_slice_assign_scalar", {&lhs},
         {{"begin", "(0,)"}, {"end", "(1,)"}, {"step", "(0,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("_slice_assign_scalar", {&lhs}, {{"begin", "(0,0,0)"}, {"end", "(1,1,1)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
