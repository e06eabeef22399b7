// Reshape (every special code, with the examples of MXNet's documentation),
// Flatten, expand_dims and squeeze: output shapes, element order (all
// dtypes, bitwise), gradients, and bad input.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

// Reshape keeps the row-major order: output element f is input element f.
int64_t same_flat(const Shape &out, const Index &o) { return ravel(o, out); }

struct ReshapeCase {
  Shape in;
  std::string shape;
  bool reverse;
  Shape want;
};

// The examples of MXNet's Reshape documentation, one group per code.
const ReshapeCase kReshapeCases[] = {
    // 0 copies the input dimension
    {{2, 3, 4}, "(4,0,2)", false, {4, 3, 2}},
    {{2, 3, 4}, "(2,0,0)", false, {2, 3, 4}},
    // -1 infers the remaining size
    {{2, 3, 4}, "(6,1,-1)", false, {6, 1, 4}},
    {{2, 3, 4}, "(3,-1,8)", false, {3, 1, 8}},
    {{2, 3, 4}, "(-1,)", false, {24}},
    // -2 copies all remaining dimensions
    {{2, 3, 4}, "(-2,)", false, {2, 3, 4}},
    {{2, 3, 4}, "(2,-2)", false, {2, 3, 4}},
    {{2, 3, 4}, "(-2,1,1)", false, {2, 3, 4, 1, 1}},
    // -3 merges two dimensions
    {{2, 3, 4}, "(-3,4)", false, {6, 4}},
    {{2, 3, 4, 5}, "(-3,-3)", false, {6, 20}},
    {{2, 3, 4}, "(0,-3)", false, {2, 12}},
    {{2, 3, 4}, "(-3,-2)", false, {6, 4}},
    // -4 splits a dimension into the next two values
    {{2, 3, 4}, "(-4,1,2,-2)", false, {1, 2, 3, 4}},
    {{2, 3, 4}, "(2,-4,-1,3,-2)", false, {2, 1, 3, 4}},
    // reverse matches the codes from the right
    {{10, 5, 4}, "(-1,0)", false, {40, 5}},
    {{10, 5, 4}, "(-1,0)", true, {50, 4}},
    // a few more: plain shapes, -1 with a split, reverse with -4
    {{2, 3, 4}, "(4,6)", false, {4, 6}},
    {{2, 3, 4}, "[24]", false, {24}},
    {{6, 4}, "(-4,2,-1,0)", false, {2, 3, 4}},
    {{4, 6}, "(0,-4,2,3)", true, {4, 2, 3}},
    {{1}, "()", false, {}},
};

class ReshapeDoc : public ::testing::TestWithParam<ReshapeCase> {};

TEST_P(ReshapeDoc, ShapeAndElementsForEveryDtype) {
  const ReshapeCase &c = GetParam();
  Params p = {{"shape", c.shape}};
  if (c.reverse) p.push_back({"reverse", "True"});
  check_gather("Reshape", p, c.in, c.want,
               [&](const Index &o) { return same_flat(c.want, o); });
}

INSTANTIATE_TEST_SUITE_P(All, ReshapeDoc, ::testing::ValuesIn(kReshapeCases));

TEST(Reshape, AliasAndGradient) {
  Arr a = make({2, 3}, iota(6));
  auto r = invoke("reshape", {&a}, {{"shape", "(3,2)"}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].shape(), Shape({3, 2}));
  EXPECT_EQ(read(r[0]), iota(6));
  check_grad("Reshape", {{2, 3, 2}}, {uniform(12, -1, 1)},
             {{"shape", "(-1,0)"}, {"reverse", "1"}});
  check_grad("Reshape", {{2, 3, 2}}, {uniform(12, -1, 1)},
             {{"shape", "(-4,1,2,-3)"}});
}

// Reshape into an existing output with MXC_REQ_ADD accumulates.
TEST(Reshape, AddWriteMode) {
  Arr a = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_INT32);
  Arr o = make({4}, {10, 20, 30, 40}, MXC_DTYPE_INT32);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Reshape", &op), MXC_OK);
  const char *k[] = {"shape"}, *v[] = {"(4,)"};
  int req[] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &a.h, 1, &o.h, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({11, 22, 33, 44}));
}

struct BadReshape {
  Shape in;
  std::string shape;
  int rc;
  std::vector<std::string> says;  // substrings of the message
};

const BadReshape kBadReshapes[] = {
    {{2, 3, 4}, "(5,5)", MXC_ERR_SHAPE, {"(2,3,4)", "(5,5)", "25", "24"}},
    {{2, 3, 4}, "(5,-1)", MXC_ERR_SHAPE, {"(2,3,4)", "(5,-1)", "divide"}},
    {{2, 3, 4}, "(-1,-1)", MXC_ERR_INVALID_ARGUMENT, {"more than one -1"}},
    {{2, 3, 4}, "(-4,2,2,-2)", MXC_ERR_SHAPE, {"do not multiply"}},
    {{2, 3, 4}, "(-4,-1,-1,-2)", MXC_ERR_INVALID_ARGUMENT, {"-4"}},
    {{2, 3, 4}, "(2,-4,3)", MXC_ERR_INVALID_ARGUMENT, {"-4"}},
    {{2, 3, 4}, "(-5,24)", MXC_ERR_INVALID_ARGUMENT, {"-5", "codes"}},
    {{2, 3}, "(0,0,0)", MXC_ERR_SHAPE, {"code 0"}},
    {{2, 3}, "(-3,-3)", MXC_ERR_SHAPE, {"-3"}},
    {{2, 0}, "(-1,0)", MXC_ERR_SHAPE, {"divide"}},
    {{2, 3}, "(2,x)", MXC_ERR_INVALID_ARGUMENT, {"'shape'", "(2,x)"}},
};

class ReshapeBad : public ::testing::TestWithParam<BadReshape> {};

TEST_P(ReshapeBad, ErrorAtInvokeNamingTheProblem) {
  const BadReshape &c = GetParam();
  Arr a = make(c.in, std::vector<double>((size_t)numel(c.in), 1.0));
  int rc = 0;
  auto r = invoke("Reshape", {&a}, {{"shape", c.shape}}, &rc);
  EXPECT_EQ(rc, c.rc) << err();
  EXPECT_TRUE(r.empty());
  for (auto &s : c.says) EXPECT_NE(err().find(s), std::string::npos) << err();
  EXPECT_NE(err().find("Reshape"), std::string::npos) << err();
}

INSTANTIATE_TEST_SUITE_P(All, ReshapeBad, ::testing::ValuesIn(kBadReshapes));

TEST(Reshape, ShapeIsRequired) {
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("Reshape", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("required parameter 'shape'"), std::string::npos)
      << err();
}

// Errors leave caller-provided output slots alone.
TEST(Reshape, FailedInvokeLeavesOutputSlotsUntouched) {
  Arr a = make({2, 3}, iota(6));
  mxc_op op;
  ASSERT_EQ(mxc_op_find("Reshape", &op), MXC_OK);
  const char *k[] = {"shape"}, *v[] = {"(4,2)"};
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, &a.h, 1, outs, 1, nullptr),
            MXC_ERR_SHAPE);
  EXPECT_EQ(outs[0], nullptr);
}

// ---- Flatten ----

TEST(Flatten, ShapesElementsAndGradient) {
  struct {
    Shape in, out;
  } cases[] = {{{2, 3, 4}, {2, 12}},
               {{5}, {5, 1}},
               {{}, {1, 1}},
               {{3, 0, 2}, {3, 0}},
               {{2, 1, 1, 3}, {2, 3}}};
  for (auto &c : cases) {
    check_gather("Flatten", {}, c.in, c.out,
                 [&](const Index &o) { return same_flat(c.out, o); });
  }
  Arr a = make({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(invoke("flatten", {&a})[0].shape(), Shape({2, 2}));
  check_grad("Flatten", {{2, 2, 3}}, {uniform(12, -1, 1)});
}

// ---- expand_dims ----

TEST(ExpandDims, EveryPositionIncludingNegative) {
  struct {
    int axis;
    Shape out;
  } cases[] = {{0, {1, 2, 3}},  {1, {2, 1, 3}},  {2, {2, 3, 1}},
               {-1, {2, 3, 1}}, {-2, {2, 1, 3}}, {-3, {1, 2, 3}}};
  for (auto &c : cases) {
    check_gather("expand_dims", {{"axis", std::to_string(c.axis)}}, {2, 3},
                 c.out, [&](const Index &o) { return same_flat(c.out, o); });
  }
  check_gather("expand_dims", {{"axis", "0"}}, {}, {1},
               [](const Index &) { return 0; });
  check_grad("expand_dims", {{2, 3}}, {uniform(6, -1, 1)}, {{"axis", "-2"}});
}

TEST(ExpandDims, BadAxis) {
  Arr a = make({2, 3}, iota(6));
  for (const char *ax : {"3", "-4"}) {
    int rc = 0;
    invoke("expand_dims", {&a}, {{"axis", ax}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << ax;
    EXPECT_NE(err().find("'axis'"), std::string::npos) << err();
    EXPECT_NE(err().find("-3..2"), std::string::npos) << err();
  }
  Shape big(8, 1);
  Arr b = make(big, {7});
  int rc = 0;
  invoke("expand_dims", {&b}, {{"axis", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("8 dimensions"), std::string::npos) << err();
}

// ---- squeeze ----

TEST(Squeeze, AllOrListedAxes) {
  struct {
    Shape in;
    std::string axis;
    Shape out;
  } cases[] = {
      {{1, 3, 1, 2}, "None", {3, 2}},
      {{1, 3, 1, 2}, "(0,)", {3, 1, 2}},
      {{1, 3, 1, 2}, "(-2)", {1, 3, 2}},
      {{1, 3, 1, 2}, "(2,0)", {3, 2}},
      {{3, 2}, "None", {3, 2}},
      // MXNet keeps one axis when every axis goes
      {{1, 1}, "None", {1}},
      {{1}, "(0,)", {1}},
      {{}, "None", {}},
  };
  for (auto &c : cases) {
    Params p;
    if (c.axis != "None") p.push_back({"axis", c.axis});
    check_gather("squeeze", p, c.in, c.out,
                 [&](const Index &o) { return same_flat(c.out, o); });
  }
  check_grad("squeeze", {{1, 3, 1, 2}}, {uniform(6, -1, 1)});
  check_grad("squeeze", {{1, 3, 1, 2}}, {uniform(6, -1, 1)},
             {{"axis", "(-4,)"}});
}

TEST(Squeeze, BadAxes) {
  Arr a = make({1, 3, 1}, iota(3));
  int rc = 0;
  invoke("squeeze", {&a}, {{"axis", "(1,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("axis 1"), std::string::npos) << err();
  EXPECT_NE(err().find("extent 3"), std::string::npos) << err();
  invoke("squeeze", {&a}, {{"axis", "(0,-3)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("twice"), std::string::npos) << err();
  invoke("squeeze", {&a}, {{"axis", "(3,)"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("out of range"), std::string::npos) << err();
}

}  // namespace
