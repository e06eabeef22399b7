// slice, slice_axis and slice_like: the selected indices of each axis are
// written out by hand in each case (Python's slicing rules), and the
// operators are checked on every dtype (bitwise), with gradients and bad
// parameters.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

using Picks = std::vector<std::vector<int64_t>>;  // input index per output
                                                  // index, per axis

// Output element o is input element (picks[0][o0], picks[1][o1], ...).
void check_picks(const std::string &name, const Params &p, const Shape &in,
                 const Picks &picks) {
  Shape out;
  for (auto &v : picks) out.push_back((int64_t)v.size());
  check_gather(name, p, in, out, [&](const Index &o) {
    Index i(in.size());
    for (size_t k = 0; k < in.size(); ++k) i[k] = picks[k][(size_t)o[k]];
    return ravel(i, in);
  });
}

std::vector<int64_t> range(int64_t a, int64_t b, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = a; step > 0 ? i < b : i > b; i += step) v.push_back(i);
  return v;
}

TEST(Slice, PythonRulesOnEveryDtype) {
  // (4,5,6)[1:3, 4:-6:-2] (axis 2 whole)
  check_picks("slice",
              {{"begin", "(1,-1)"}, {"end", "(3,-6)"}, {"step", "(1,-2)"}},
              {4, 5, 6}, {{1, 2}, {4, 2, 0}, range(0, 6)});
  // negative begin/end, default step
  check_picks("slice", {{"begin", "(-3,0,1)"}, {"end", "(-1,5,-1)"}}, {4, 5, 6},
              {{1, 2}, range(0, 5), {1, 2, 3, 4}});
  // clamping past both ends, step 2 and 3
  check_picks("slice",
              {{"begin", "(-10,1)"}, {"end", "(10,100)"}, {"step", "(2,3)"}},
              {5, 7}, {{0, 2, 4}, {1, 4}});
  // negative step from past the end to before the start
  check_picks("slice",
              {{"begin", "(10,)"}, {"end", "(-10,)"}, {"step", "(-1,)"}},
              {4, 2}, {{3, 2, 1, 0}, {0, 1}});
  // empty selections
  check_picks("slice", {{"begin", "(3,)"}, {"end", "(1,)"}}, {4, 2},
              {{}, {0, 1}});
  check_picks("slice", {{"begin", "(1,)"}, {"end", "(3,)"}, {"step", "(-1,)"}},
              {4, 2}, {{}, {0, 1}});
  // nothing given: the whole array
  check_picks("slice", {{"begin", "()"}, {"end", "()"}}, {2, 3},
              {{0, 1}, {0, 1, 2}});
  // 1-d with a large step
  check_picks("slice", {{"begin", "(1,)"}, {"end", "(100,)"}, {"step", "(7,)"}},
              {20}, {{1, 8, 15}});
}

TEST(Slice, Gradient) {
  check_grad("slice", {{4, 3, 2}}, {uniform(24, -1, 1)},
             {{"begin", "(3,0)"}, {"end", "(0,-1)"}, {"step", "(-2,1)"}});
  check_grad("slice", {{5, 2}}, {uniform(10, -1, 1)},
             {{"begin", "(1,)"}, {"end", "(5,)"}, {"step", "(3,)"}});
}

// The gradient of slice is the output gradient in the box, zero elsewhere.
TEST(Slice, GradientIsZeroOutsideTheBox) {
  Arr x = make({3, 3}, iota(9), MXC_DTYPE_FLOAT64);
  Params p = {{"begin", "(1,1)"}, {"end", "(3,3)"}};
  auto y = invoke("slice", {&x}, p);
  ASSERT_EQ(read(y[0]), std::vector<double>({4, 5, 7, 8}));
  Arr og = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  std::vector<const char *> k = {"begin", "end"}, v = {"(1,1)", "(3,3)"};
  mxc_ndarray g = nullptr;
  ASSERT_EQ(mxct_grad_eval("slice", k.data(), v.data(), 2, &x.h, 1, &y[0].h, 1,
                           &og.h, &g),
            MXC_OK)
      << err();
  Arr ga(g);
  EXPECT_EQ(read(ga), std::vector<double>({0, 0, 0, 0, 1, 2, 0, 3, 4}));
}

TEST(Slice, BadParameters) {
  Arr a = make({2, 3}, iota(6));
  int rc = 0;
  invoke("slice", {&a}, {{"begin", "(0,0)"}, {"end", "(1,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("same length"), std::string::npos) << err();
  invoke("slice", {&a}, {{"begin", "(0,)"}, {"end", "(1,)"}, {"step", "(0,)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("zero step"), std::string::npos) << err();
  invoke("slice", {&a}, {{"begin", "(0,)"}, {"end", "(1,)"}, {"step", "(1,1)"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("slice", {&a}, {{"begin", "(0,0,0)"}, {"end", "(1,1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
}

TEST(Slice, NoneEntriesTakeTheWholeRange) {
  Arr a = make({2, 3}, {0, 1, 2, 3, 4, 5});
  auto out = invoke("slice", {&a}, {{"begin", "(None,1)"}, {"end", "(None,3)"}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), Shape({2, 2}));
  EXPECT_EQ(read(out[0]), std::vector<double>({1, 2, 4, 5}));
}

// ---- slice_axis ----

TEST(SliceAxis, RangesOnEveryDtype) {
  check_picks("slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}},
              {2, 4, 3}, {{0, 1}, {1, 2}, {0, 1, 2}});
  check_picks("slice_axis", {{"axis", "-1"}, {"begin", "-2"}, {"end", "None"}},
              {2, 4, 3}, {{0, 1}, range(0, 4), {1, 2}});
  check_picks("slice_axis", {{"axis", "0"}, {"begin", "0"}, {"end", "-1"}},
              {3, 2}, {{0, 1}, {0, 1}});
  check_picks("slice_axis", {{"axis", "0"}, {"begin", "2"}, {"end", "2"}},
              {3, 2}, {{}, {0, 1}});
  check_grad("slice_axis", {{3, 4}}, {uniform(12, -1, 1)},
             {{"axis", "1"}, {"begin", "-3"}, {"end", "3"}});
}

TEST(SliceAxis, BadRanges) {
  Arr a = make({2, 3}, iota(6));
  for (auto be : std::vector<std::pair<const char *, const char *>>{
           {"2", "1"}, {"0", "4"}, {"-4", "2"}}) {
    int rc = 0;
    invoke("slice_axis", {&a},
           {{"axis", "1"}, {"begin", be.first}, {"end", be.second}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << be.first << ":" << be.second;
    EXPECT_NE(err().find("begin <= end"), std::string::npos) << err();
  }
  int rc = 0;
  invoke("slice_axis", {&a}, {{"axis", "2"}, {"begin", "0"}, {"end", "1"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("slice_axis", {&a}, {{"axis", "0"}, {"begin", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'end'"), std::string::npos) << err();
}

// ---- slice_like ----

void check_slice_like(const Shape &in, const Shape &like, const Params &p,
                      const Shape &out) {
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("slice_like dtype " + std::to_string(dt));
    Bytes ib = random_bytes(numel(in), dt, 9);
    Arr a = make_raw(in, dt, ib);
    Arr l = make_raw(like, dt, random_bytes(numel(like), dt, 10));
    auto r = invoke("slice_like", {&a, &l}, p);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].shape(), out);
    Bytes ob = raw(r[0]);
    size_t es = esize(dt);
    for (int64_t f = 0; f < numel(out); ++f) {
      int64_t src = ravel(unravel(f, out), in);  // box from the origin
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], &ib[(size_t)src * es], es), 0);
    }
  }
}

TEST(SliceLike, AllAxesOrListed) {
  check_slice_like({4, 5}, {2, 3}, {}, {2, 3});
  check_slice_like({4, 5, 6}, {1, 5, 2}, {}, {1, 5, 2});
  check_slice_like({4, 5, 6}, {2, 2}, {{"axes", "(0,)"}}, {2, 5, 6});
  check_slice_like({4, 5, 6}, {9, 3, 9}, {{"axes", "(-2,)"}}, {4, 3, 6});
  check_slice_like({4, 5}, {4, 0}, {}, {4, 0});
  check_grad("slice_like", {{3, 4}, {2, 3}},
             {uniform(12, -1, 1), uniform(6, -1, 1)}, {}, {1});
  check_grad("slice_like", {{3, 4}, {1, 2}},
             {uniform(12, -1, 1), uniform(2, -1, 1)}, {{"axes", "(1,)"}}, {1});
}

TEST(SliceLike, ShapeLikeGetsNoGradient) {
  Arr x = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  Arr l = make({1, 2}, {0, 0}, MXC_DTYPE_FLOAT64);
  auto y = invoke("slice_like", {&x, &l});
  Arr og = make({1, 2}, {5, 6}, MXC_DTYPE_FLOAT64);
  mxc_ndarray ins[2] = {x.h, l.h}, g[2] = {nullptr, nullptr};
  ASSERT_EQ(mxct_grad_eval("slice_like", nullptr, nullptr, 0, ins, 2, &y[0].h,
                           1, &og.h, g),
            MXC_OK)
      << err();
  Arr g0(g[0]), g1(g[1]);
  EXPECT_EQ(read(g0), std::vector<double>({5, 6, 0, 0}));
  EXPECT_EQ(g1.h, nullptr);
}

TEST(SliceLike, BadShapes) {
  Arr a = make({2, 3}, iota(6)), big = make({3, 3}, iota(9)),
      flat = make({6}, iota(6));
  int rc = 0;
  invoke("slice_like", {&a, &big}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("longer"), std::string::npos) << err();
  invoke("slice_like", {&a, &flat}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("same number of axes"), std::string::npos) << err();
  invoke("slice_like", {&a, &flat}, {{"axes", "(1,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("does not exist in shape_like"), std::string::npos)
      << err();
  invoke("slice_like", {&a, &a}, {{"axes", "(2,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
