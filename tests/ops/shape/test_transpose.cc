// transpose, swapaxes and flip against index arithmetic written here, on
// every dtype (bitwise), with gradients and bad parameters.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

// Reference transpose: output axis k is input axis perm[k].
void check_transpose(const Shape &in, const std::vector<int> &perm,
                     const Params &p) {
  Shape out(in.size());
  for (size_t k = 0; k < in.size(); ++k) out[k] = in[(size_t)perm[k]];
  check_gather("transpose", p, in, out, [&](const Index &o) {
    Index i(in.size());
    for (size_t k = 0; k < in.size(); ++k) i[(size_t)perm[k]] = o[k];
    return ravel(i, in);
  });
}

TEST(Transpose, PermutationsOnEveryDtype) {
  check_transpose({2, 3}, {1, 0}, {{"axes", "(1,0)"}});
  check_transpose({2, 3, 4}, {2, 0, 1}, {{"axes", "(2,0,1)"}});
  check_transpose({2, 3, 4}, {0, 2, 1}, {{"axes", "(0,-1,1)"}});
  check_transpose({2, 3, 4}, {1, 0, 2}, {{"axes", "(-2,-3,-1)"}});
  check_transpose({2, 3, 4, 5}, {3, 1, 0, 2}, {{"axes", "(3,1,0,2)"}});
  check_transpose({2, 1, 3, 1, 2}, {4, 2, 0, 3, 1}, {{"axes", "(4,2,0,3,1)"}});
  check_transpose({3, 0, 2}, {2, 1, 0}, {{"axes", "(2,1,0)"}});
  // no axes: reversed
  check_transpose({2, 3, 4}, {2, 1, 0}, {});
  check_transpose({5}, {0}, {});
  check_transpose({}, {}, {});
}

TEST(Transpose, LargeInnerRunsAndEveryDtypeOfEightDims) {
  check_transpose({2, 2, 2, 2, 2, 2, 2, 3}, {7, 6, 5, 4, 3, 2, 1, 0}, {});
  check_transpose({33, 65}, {1, 0}, {});
}

TEST(Transpose, Gradient) {
  check_grad("transpose", {{2, 3, 4}}, {uniform(24, -1, 1)},
             {{"axes", "(1,2,0)"}});
  check_grad("transpose", {{2, 3, 2}}, {uniform(12, -1, 1)});
}

TEST(Transpose, BadAxes) {
  Arr a = make({2, 3}, iota(6));
  int rc = 0;
  invoke("transpose", {&a}, {{"axes", "(0,0)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("twice"), std::string::npos) << err();
  invoke("transpose", {&a}, {{"axes", "(1,-2)"}}, &rc);  // -2 is axis 0: ok
  EXPECT_EQ(rc, MXC_OK) << err();
  invoke("transpose", {&a}, {{"axes", "(0,2)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("out of range"), std::string::npos) << err();
  invoke("transpose", {&a}, {{"axes", "(2,0,1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("2 dimensions"), std::string::npos) << err();
  EXPECT_NE(err().find("'axes'"), std::string::npos) << err();
}

// ---- swapaxes ----

TEST(SwapAxes, EveryDtypeAndNegativeAxes) {
  struct {
    Shape in;
    int d1, d2;
  } cases[] = {{{2, 3, 4}, 0, 2},
               {{2, 3, 4}, 1, -1},
               {{2, 3, 4}, -3, 1},
               {{2, 3}, 1, 1},
               {{4, 1, 3, 2}, 3, 1}};
  for (auto &c : cases) {
    int n = (int)c.in.size();
    int a = c.d1 < 0 ? c.d1 + n : c.d1, b = c.d2 < 0 ? c.d2 + n : c.d2;
    Shape out = c.in;
    std::swap(out[(size_t)a], out[(size_t)b]);
    Params p = {{"dim1", std::to_string(c.d1)}, {"dim2", std::to_string(c.d2)}};
    check_gather("swapaxes", p, c.in, out, [&](const Index &o) {
      Index i = o;
      std::swap(i[(size_t)a], i[(size_t)b]);
      return ravel(i, c.in);
    });
  }
  Arr x = make({2, 3}, iota(6));
  auto r = invoke("SwapAxis", {&x}, {{"dim1", "0"}, {"dim2", "1"}});
  EXPECT_EQ(read(r[0]), std::vector<double>({0, 3, 1, 4, 2, 5}));
  check_grad("swapaxes", {{2, 3, 2}}, {uniform(12, -1, 1)},
             {{"dim1", "0"}, {"dim2", "-1"}});
  int rc = 0;
  invoke("swapaxes", {&x}, {{"dim1", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'dim1'"), std::string::npos) << err();
}

// ---- flip ----

TEST(Flip, EveryDtypeAndAxisSet) {
  struct {
    Shape in;
    std::string axis;
    std::vector<int> flipped;  // normalized
  } cases[] = {{{5}, "(0,)", {0}},
               {{2, 3, 4}, "(1,)", {1}},
               {{2, 3, 4}, "(0,2)", {0, 2}},
               {{2, 3, 4}, "(-1,-3)", {2, 0}},
               {{2, 3, 4}, "(0,1,2)", {0, 1, 2}},
               {{2, 3, 4}, "()", {}},
               {{2, 0, 3}, "(1,)", {1}}};
  for (auto &c : cases) {
    check_gather("flip", {{"axis", c.axis}}, c.in, c.in, [&](const Index &o) {
      Index i = o;
      for (int k : c.flipped) i[(size_t)k] = c.in[(size_t)k] - 1 - o[(size_t)k];
      return ravel(i, c.in);
    });
  }
  Arr x = make({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(read(invoke("reverse", {&x}, {{"axis", "1"}})[0]),
            std::vector<double>({2, 1, 4, 3}));
  check_grad("flip", {{2, 3, 2}}, {uniform(12, -1, 1)}, {{"axis", "(0,2)"}});
}

TEST(Flip, BadAxes) {
  Arr x = make({2, 2}, {1, 2, 3, 4});
  int rc = 0;
  invoke("flip", {&x}, {{"axis", "(1,-1)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("twice"), std::string::npos) << err();
  invoke("flip", {&x}, {{"axis", "(2,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("flip", {&x}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("required parameter 'axis'"), std::string::npos)
      << err();
}

}  // namespace
