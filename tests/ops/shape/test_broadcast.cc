// broadcast_to, broadcast_axis, broadcast_like, tile and repeat against
// index arithmetic written here, on every dtype (bitwise); gradients (sums
// over the copies) by finite differences and one by hand; bad input.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

// Broadcast reference: extent-1 input axes always read index 0.
IndexMap broadcast_map(const Shape &in) {
  return [in](const Index &o) {
    Index i = o;
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] == 1) i[k] = 0;
    return ravel(i, in);
  };
}

TEST(BroadcastTo, EveryDtype) {
  check_gather("broadcast_to", {{"shape", "(2,3)"}}, {1, 3}, {2, 3},
               broadcast_map({1, 3}));
  check_gather("broadcast_to", {{"shape", "(4,0,5)"}}, {1, 2, 1}, {4, 2, 5},
               broadcast_map({1, 2, 1}));
  check_gather("broadcast_to", {{"shape", "(0,0)"}}, {2, 3}, {2, 3},
               broadcast_map({2, 3}));
  check_gather("broadcast_to", {{"shape", "(3,0)"}}, {1, 1}, {3, 1},
               broadcast_map({1, 1}));
  check_gather("broadcast_to", {{"shape", "(2,0,2,1,2,1,2,3)"}},
               {1, 2, 1, 1, 1, 1, 1, 3}, {2, 2, 2, 1, 2, 1, 2, 3},
               broadcast_map({1, 2, 1, 1, 1, 1, 1, 3}));
  check_gather("broadcast_to", {{"shape", "(0,)"}}, {1}, {1},
               broadcast_map({1}));
  check_gather("broadcast_to", {{"shape", "(2,0)"}}, {1, 0}, {2, 0},
               broadcast_map({1, 0}));
}

TEST(BroadcastTo, Gradient) {
  check_grad("broadcast_to", {{1, 3, 1}}, {uniform(3, -1, 1)},
             {{"shape", "(2,3,4)"}});
  check_grad("broadcast_to", {{2, 1}}, {uniform(2, -1, 1)},
             {{"shape", "(0,5)"}});
}

// The gradient sums over the copies: check one by hand, in float32.
TEST(BroadcastTo, GradientSumsCopies) {
  Arr x = make({2, 1}, {1, 2});
  auto y = invoke("broadcast_to", {&x}, {{"shape", "(2,3)"}});
  Arr og = make({2, 3}, {1, 2, 3, 10, 20, 30});
  std::vector<const char *> k = {"shape"}, v = {"(2,3)"};
  mxc_ndarray g = nullptr;
  ASSERT_EQ(mxct_grad_eval("broadcast_to", k.data(), v.data(), 1, &x.h, 1,
                           &y[0].h, 1, &og.h, &g),
            MXC_OK)
      << err();
  Arr ga(g);
  EXPECT_EQ(ga.shape(), Shape({2, 1}));
  EXPECT_EQ(read(ga), std::vector<double>({6, 60}));
}

TEST(BroadcastTo, BadShapes) {
  Arr a = make({2, 3}, iota(6));
  int rc = 0;
  invoke("broadcast_to", {&a}, {{"shape", "(2,4)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,4)"), std::string::npos) << err();
  EXPECT_NE(err().find("neither 1 nor 4"), std::string::npos) << err();
  invoke("broadcast_to", {&a}, {{"shape", "(1,2,3)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("number of axes"), std::string::npos) << err();
  invoke("broadcast_to", {&a}, {{"shape", "(2,-3)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// ---- broadcast_axis ----

TEST(BroadcastAxis, EveryDtypeAndGradient) {
  check_gather("broadcast_axis", {{"axis", "(0,2)"}, {"size", "(3,4)"}},
               {1, 2, 1}, {3, 2, 4}, broadcast_map({1, 2, 1}));
  check_gather("broadcast_axes", {{"axis", "(-1,)"}, {"size", "(5,)"}}, {2, 1},
               {2, 5}, broadcast_map({2, 1}));
  check_gather("broadcast_axis", {}, {2, 1}, {2, 1}, broadcast_map({2, 1}));
  check_grad("broadcast_axis", {{1, 2, 1}}, {uniform(2, -1, 1)},
             {{"axis", "(0,2)"}, {"size", "(2,3)"}});
  Arr a = make({2, 1}, {1, 2});
  int rc = 0;
  invoke("broadcast_axis", {&a}, {{"axis", "(0,)"}, {"size", "(3,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("extent 2"), std::string::npos) << err();
  invoke("broadcast_axis", {&a}, {{"axis", "(1,)"}, {"size", "(3,4)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("same length"), std::string::npos) << err();
  invoke("broadcast_axis", {&a}, {{"axis", "(1,1)"}, {"size", "(3,4)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("twice"), std::string::npos) << err();
}

// ---- broadcast_like ----

TEST(BroadcastLike, WholeShapeOrAxes) {
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("dtype " + std::to_string(dt));
    Bytes ib = random_bytes(3, dt, 4);
    Arr x = make_raw({1, 3}, dt, ib);
    Arr like = make_raw({4, 3}, dt, random_bytes(12, dt, 5));
    auto r = invoke("broadcast_like", {&x, &like});
    ASSERT_EQ(r[0].shape(), Shape({4, 3}));
    Bytes ob = raw(r[0]);
    size_t es = esize(dt);
    for (int64_t f = 0; f < 12; ++f)
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], &ib[(size_t)(f % 3) * es], es), 0);
  }
  Arr x = make({1, 2, 1}, {1, 2});
  Arr like = make({5, 3}, iota(15));
  auto r = invoke("broadcast_like", {&x, &like},
                  {{"lhs_axes", "(0,-1)"}, {"rhs_axes", "(-1,0)"}});
  EXPECT_EQ(r[0].shape(), Shape({3, 2, 5}));
  EXPECT_EQ(read(r[0])[4], 1);  // (0,0,4)
  EXPECT_EQ(read(r[0])[29], 2);
  check_grad("broadcast_like", {{2, 1}, {2, 3}},
             {uniform(2, -1, 1), uniform(6, -1, 1)}, {}, {1});
  check_grad("broadcast_like", {{1, 2}, {4, 1}},
             {uniform(2, -1, 1), uniform(4, -1, 1)},
             {{"lhs_axes", "(0,)"}, {"rhs_axes", "(0,)"}}, {1});
}

TEST(BroadcastLike, BadInput) {
  Arr a = make({2, 3}, iota(6)), b = make({4, 3}, iota(12));
  int rc = 0;
  invoke("broadcast_like", {&a, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("rhs of shape (4,3)"), std::string::npos) << err();
  invoke("broadcast_like", {&a, &b}, {{"lhs_axes", "(0,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("both be None"), std::string::npos) << err();
  invoke("broadcast_like", {&a, &b},
         {{"lhs_axes", "(0,)"}, {"rhs_axes", "(2,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'rhs_axes'"), std::string::npos) << err();
}

// ---- tile ----

// numpy.tile: reps and shape right-aligned, padded with leading 1s.
void check_tile(const Shape &in, const std::vector<int64_t> &reps) {
  size_t n = std::max(in.size(), reps.size());
  Shape d(n, 1), r(n, 1), out(n);
  for (size_t k = 0; k < in.size(); ++k) d[n - in.size() + k] = in[k];
  for (size_t k = 0; k < reps.size(); ++k) r[n - reps.size() + k] = reps[k];
  for (size_t k = 0; k < n; ++k) out[k] = d[k] * r[k];
  std::string rs = "(";
  for (auto v : reps) rs += std::to_string(v) + ",";
  rs += ")";
  check_gather("tile", {{"reps", rs}}, in, out, [&](const Index &o) {
    Index i(n);
    for (size_t k = 0; k < n; ++k) i[k] = o[k] % d[k];
    return ravel(i, d);
  });
}

TEST(Tile, EveryDtypeAndAlignment) {
  check_tile({2, 3}, {2, 2});
  check_tile({2, 3}, {3});
  check_tile({3}, {2, 1, 2});
  check_tile({2, 1, 3}, {1, 4, 1});
  check_tile({2, 3}, {});
  check_tile({2, 3}, {0, 2});
  check_tile({}, {3});
  check_tile({2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2});
}

TEST(Tile, GradientAndBadReps) {
  check_grad("tile", {{2, 3}}, {uniform(6, -1, 1)}, {{"reps", "(2,1,2)"}});
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("tile", {&a}, {{"reps", "(2,-1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'reps'"), std::string::npos) << err();
  invoke("tile", {&a}, {{"reps", "(1,1,1,1,1,1,1,1,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("tile", {&a}, {{"reps", "(4611686018427387904,4)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("int64"), std::string::npos) << err();
}

// ---- repeat ----

TEST(Repeat, AlongAxisOrFlattened) {
  check_gather("repeat", {{"repeats", "2"}, {"axis", "1"}}, {2, 3}, {2, 6},
               [](const Index &o) { return o[0] * 3 + o[1] / 2; });
  check_gather("repeat", {{"repeats", "3"}, {"axis", "-2"}}, {2, 2}, {6, 2},
               [](const Index &o) { return (o[0] / 3) * 2 + o[1]; });
  check_gather("repeat", {{"repeats", "2"}}, {2, 3}, {12},
               [](const Index &o) { return o[0] / 2; });
  check_gather("repeat", {{"repeats", "0"}, {"axis", "0"}}, {2, 3}, {0, 3},
               [](const Index &) { return 0; });
  check_gather("repeat", {{"repeats", "4"}}, {}, {4},
               [](const Index &) { return 0; });
  check_grad("repeat", {{2, 3}}, {uniform(6, -1, 1)},
             {{"repeats", "3"}, {"axis", "0"}});
  check_grad("repeat", {{2, 2}}, {uniform(4, -1, 1)}, {{"repeats", "2"}});
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("repeat", {&a}, {{"repeats", "-1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("repeat", {&a}, {{"repeats", "2"}, {"axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'axis'"), std::string::npos) << err();
}

// Gradients of integer and half arrays sum in double and round once.
TEST(Repeat, GradientInHalfPrecisionRoundsOnce) {
  Arr x = make({1}, {0}, MXC_DTYPE_FLOAT16);
  auto y = invoke("repeat", {&x}, {{"repeats", "3000"}});
  Arr og = make({3000}, std::vector<double>(3000, 1.0), MXC_DTYPE_FLOAT16);
  std::vector<const char *> k = {"repeats"}, v = {"3000"};
  mxc_ndarray g = nullptr;
  ASSERT_EQ(mxct_grad_eval("repeat", k.data(), v.data(), 1, &x.h, 1, &y[0].h, 1,
                           &og.h, &g),
            MXC_OK)
      << err();
  Arr ga(g);
  EXPECT_EQ(read(ga), std::vector<double>({3000}));  // not stuck at 2048
}

}  // namespace
