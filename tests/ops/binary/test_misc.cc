// add_n, clip, _copy and BlockGrad: references, gradients, write modes and
// bad input.
#include "tests/ops/binary/binary_cases.h"

using namespace mxct;
using namespace bint;

namespace {

TEST(AddN, SumsEveryDtype) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
                 MXC_DTYPE_BFLOAT16, MXC_DTYPE_INT32, MXC_DTYPE_INT8}) {
    for (int k : {1, 2, 3, 5}) {
      std::vector<Arr> args;
      std::vector<const Arr *> ptrs;
      std::vector<double> want(531, 0);
      for (int j = 0; j < k; ++j) {
        auto v = ints(531, -9, 9, 10 + j);
        args.push_back(make({3, 177}, v, dt));
        for (int i = 0; i < 531; ++i) want[i] += v[i];
      }
      for (auto &a : args) ptrs.push_back(&a);
      for (const char *name : {"add_n", "ElementWiseSum"}) {
        auto out = invoke(name, ptrs, {{"num_args", std::to_string(k)}});
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape(), Shape({3, 177}));
        EXPECT_EQ(read(out[0]), want) << name << " dtype " << dt << " k " << k;
      }
    }
  }
}

// No cap but memory (MXNet has none): 1000 terms, exact in float64 and
// int32 (small integers), against a plain loop.
TEST(AddN, ThousandInputs) {
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_INT32}) {
    const int k = 1000, n = 7;
    std::vector<Arr> args;
    std::vector<const Arr *> ptrs;
    std::vector<double> want(n, 0);
    for (int j = 0; j < k; ++j) {
      auto v = ints(n, -9, 9, 100 + j);
      args.push_back(make({n}, v, dt));
      for (int i = 0; i < n; ++i) want[i] += v[i];
    }
    for (auto &a : args) ptrs.push_back(&a);
    auto out = invoke("add_n", ptrs, {{"num_args", std::to_string(k)}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(read(out[0]), want) << "dtype " << dt;
  }
  Arr a = make({2}, {1, 2});
  int rc = 0;
  invoke("add_n", {&a}, {{"num_args", "1048577"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("1..1048576"), std::string::npos) << err();
}

TEST(AddN, GradientPassesToEveryInput) {
  grad_check("add_n", {{2, 3}, {2, 3}, {2, 3}},
             {uniform(6, -1, 1, 1), uniform(6, -1, 1, 2),
              uniform(6, -1, 1, 3)},
             {{"num_args", "3"}});
  std::vector<Shape> shapes(100, Shape{2});
  std::vector<std::vector<double>> vals;
  for (unsigned i = 0; i < 100; ++i) vals.push_back(uniform(2, -1, 1, i));
  grad_check("add_n", shapes, vals, {{"num_args", "100"}});
}

TEST(AddN, WriteModeAdd) {
  Arr a = make({3}, {1, 2, 3}), b = make({3}, {10, 20, 30}),
      c = make({3}, {100, 200, 300}), o = make({3}, {5, 5, 5});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("add_n", &op), MXC_OK);
  const char *k[1] = {"num_args"}, *v[1] = {"3"};
  mxc_ndarray ins[3] = {a.h, b.h, c.h}, outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, ins, 3, outs, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({116, 227, 338}));
  v[0] = "1";
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, ins, 1, outs, 1, req), MXC_OK) << err();
  EXPECT_EQ(read(o), std::vector<double>({117, 229, 341}));
}

TEST(AddN, BadInput) {
  Arr a = make({3}, {1, 2, 3}), b = make({3}, {1, 2, 3}),
      c = make({2}, {1, 2}), d = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  int rc = 0;
  invoke("add_n", {&a, &b}, {{"num_args", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 2 inputs; expected 3"), std::string::npos)
      << err();
  invoke("add_n", {&a, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_args"), std::string::npos) << err();
  invoke("add_n", {}, {{"num_args", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("num_args"), std::string::npos) << err();
  invoke("add_n", {&a, &b, &c}, {{"num_args", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("args[2] has shape (2)"), std::string::npos) << err();
  invoke("add_n", {&a, &d}, {{"num_args", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("args[1] is float64"), std::string::npos) << err();
  mxc_op op;
  ASSERT_EQ(mxc_op_find("add_n", &op), MXC_OK);
  int n = 0, variadic = 0;
  ASSERT_EQ(mxc_op_inputs(op, &n, &variadic), MXC_OK);
  EXPECT_EQ(variadic, 1);
  const char *name = nullptr;
  ASSERT_EQ(mxc_op_input_name(op, 0, &name), MXC_OK);
  EXPECT_STREQ(name, "args");
}

TEST(Clip, MatchesReference) {
  auto x = uniform(1037, -3, 3, 4);
  for (int dt : kFloatTypes) {
    Arr a = make({1037}, x, dt);
    auto xs = read(a);
    auto out = invoke("clip", {&a}, {{"a_min", "-1.5"}, {"a_max", "2"}});
    std::vector<double> want(1037);
    for (int i = 0; i < 1037; ++i)
      want[i] = std::min(std::max(xs[i], -1.5), 2.0);
    EXPECT_EQ(read(out[0]), want) << dt;
  }
}

TEST(Clip, IntegerBoundsRoundInward) {
  for (int dt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64, MXC_DTYPE_INT8}) {
    Arr a = make({6}, {-3, -1, 0, 1, 2, 5}, dt);
    auto out = invoke("clip", {&a}, {{"a_min", "-0.5"}, {"a_max", "2.5"}});
    EXPECT_EQ(read(out[0]), std::vector<double>({0, 0, 0, 1, 2, 2})) << dt;
  }
}

TEST(Clip, GradientPassesInsideAndAtTheBounds) {
  grad_check("clip", {{2, 3}}, {{-2, -0.5, 0.3, 0.9, 1.7, 3}},
             {{"a_min", "-1"}, {"a_max", "1"}});
  // At the bounds themselves the gradient passes (MXNet's rule:
  // a_min <= x <= a_max); beyond them it is 0.
  Arr a = make({5}, {-1.5, -1, 0, 1, 1.5}, MXC_DTYPE_FLOAT64);
  auto out = invoke("clip", {&a}, {{"a_min", "-1"}, {"a_max", "1"}});
  Arr og = make({5}, {5, 5, 5, 5, 5}, MXC_DTYPE_FLOAT64);
  const char *k[2] = {"a_min", "a_max"}, *v[2] = {"-1", "1"};
  mxc_ndarray ig[1] = {nullptr};
  ASSERT_EQ(mxct_grad_eval("clip", k, v, 2, &a.h, 1, &out[0].h, 1, &og.h, ig),
            MXC_OK)
      << err();
  Arr g(ig[0]);
  EXPECT_EQ(read(g), std::vector<double>({0, 5, 5, 5, 0}));
}

TEST(Clip, WriteModeAndBadParameters) {
  Arr a = make({3}, {-5, 0.5, 5});
  Arr o = make({3}, {1, 1, 1});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("clip", &op), MXC_OK);
  const char *k[2] = {"a_min", "a_max"}, *v[2] = {"0", "1"};
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 2, &a.h, 1, outs, 1, req), MXC_OK)
      << err();
  EXPECT_EQ(read(o), std::vector<double>({1, 1.5, 2}));
  int rc = 0;
  invoke("clip", {&a}, {{"a_min", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("a_max"), std::string::npos) << err();
  invoke("clip", {&a}, {{"a_min", "2"}, {"a_max", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("a_min (2) must not exceed a_max (1)"),
            std::string::npos)
      << err();
}

TEST(CopyAndBlockGrad, CopyEveryDtypeAndAccumulate) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16, MXC_DTYPE_UINT8,
                 MXC_DTYPE_INT64, MXC_DTYPE_BOOL}) {
    auto v = ints(10, 0, 1, 3);
    Arr a = make({2, 5}, v, dt);
    for (const char *name :
         {"_copy", "identity", "BlockGrad", "stop_gradient"}) {
      auto out = invoke(name, {&a});
      EXPECT_EQ(read(out[0]), v) << name << " " << dt;
    }
  }
  Arr a = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr o = make({3}, {10, 10, 10}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("BlockGrad", &op), MXC_OK);
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a.h, 1, outs, 1, req),
            MXC_OK);
  EXPECT_EQ(read(o), std::vector<double>({11, 12, 13}));
}

TEST(CopyAndBlockGrad, Gradients) {
  grad_check("_copy", {{4}}, {{1, -2, 3, 0.5}});
  Arr a = make({2}, {1, 2}, MXC_DTYPE_FLOAT64);
  auto out = invoke("BlockGrad", {&a});
  Arr og = make({2}, {1, 1}, MXC_DTYPE_FLOAT64);
  mxc_ndarray ig[1] = {nullptr};
  ASSERT_EQ(mxct_grad_eval("BlockGrad", nullptr, nullptr, 0, &a.h, 1,
                           &out[0].h, 1, &og.h, ig),
            MXC_OK)
      << err();
  EXPECT_EQ(ig[0], nullptr);
}

}  // namespace
