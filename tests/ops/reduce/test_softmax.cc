// softmax / log_softmax against a direct reference (explicit index math,
// exp and log in long double), for every axis, temperatures, the dtype
// parameter and extreme inputs; gradients by finite differences; bad input.
#include <algorithm>
#include <limits>

#include "tests/ops/op_test_util.h"

using namespace mxct;

namespace {

std::vector<double> ref_softmax(const Shape &s, const std::vector<double> &x,
                                int axis, double t, bool log_out) {
  int64_t outer = 1, len = s[axis], inner = 1;
  for (int a = 0; a < axis; ++a) outer *= s[a];
  for (size_t a = axis + 1; a < s.size(); ++a) inner *= s[a];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * len + k) * inner + i; };
      long double m = -INFINITY, sum = 0;
      for (int64_t k = 0; k < len; ++k)
        m = std::max(m, (long double)x[at(k)] / t);
      for (int64_t k = 0; k < len; ++k) sum += expl(x[at(k)] / t - m);
      for (int64_t k = 0; k < len; ++k) {
        long double z = x[at(k)] / t - m;
        y[at(k)] = (double)(log_out ? z - logl(sum) : expl(z) / sum);
      }
    }
  }
  return y;
}

TEST(Softmax, EveryAxisTemperatureAndDtype) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, -4, 4, 8);
  for (const char *op : {"softmax", "log_softmax"}) {
    bool lg = std::string(op) == "log_softmax";
    for (int axis : {0, 1, 2, -1, -3}) {
      for (double t : {1.0, 2.0, 0.5, -1.5}) {
        for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) +
                       " T " + std::to_string(t));
          Arr a = make(s, x, dt);
          Params p = {{"axis", std::to_string(axis)}};
          if (t != 1.0) p.push_back({"temperature", std::to_string(t)});
          auto out = invoke(op, {&a}, p);
          ASSERT_EQ(out.size(), 1u);
          EXPECT_EQ(out[0].shape(), s);
          EXPECT_EQ(out[0].dtype(), dt);
          auto y = read(out[0]);
          auto want =
              ref_softmax(s, read(a), axis < 0 ? axis + 3 : axis, t, lg);
          double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-13 : 1e-6;
          for (size_t i = 0; i < y.size(); ++i)
            EXPECT_NEAR(y[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
        }
      }
    }
  }
}

TEST(Softmax, StableForLargeInputs) {
  Arr a = make({1, 3}, {1000, 1001, 1002}, MXC_DTYPE_FLOAT32);
  auto y = read(invoke("softmax", {&a})[0]);
  auto want = ref_softmax({1, 3}, {0, 1, 2}, 1, 1, false);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i], want[i], 1e-6);
  auto ly = read(invoke("log_softmax", {&a})[0]);
  auto lwant = ref_softmax({1, 3}, {0, 1, 2}, 1, 1, true);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(ly[i], lwant[i], 1e-5);
  Arr b = make({2}, {-1e4, 0}, MXC_DTYPE_FLOAT64);
  auto lb = read(invoke("log_softmax", {&b})[0]);
  EXPECT_NEAR(lb[0], -1e4, 1e-9);
  EXPECT_EQ(lb[1], 0);
}

TEST(Softmax, DtypeParameterSetsTheOutputType) {
  auto x = uniform(6, -2, 2, 4);
  Arr a = make({2, 3}, x, MXC_DTYPE_FLOAT16);
  auto out = invoke("softmax", {&a}, {{"dtype", "float32"}});
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
  auto want = ref_softmax({2, 3}, read(a), 1, 1, false);
  auto y = read(out[0]);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], want[i], 1e-6);
  auto same = invoke("log_softmax", {&a}, {{"dtype", "None"}});
  EXPECT_EQ(same[0].dtype(), MXC_DTYPE_FLOAT16);
}

TEST(Softmax, ZeroSizeAndSingletonAxes) {
  Arr e = make({0, 3}, {});
  EXPECT_EQ(invoke("softmax", {&e})[0].shape(), (Shape{0, 3}));
  Arr one = make({3, 1}, {5, -2, 7});
  EXPECT_EQ(read(invoke("softmax", {&one})[0]), std::vector<double>({1, 1, 1}));
  EXPECT_EQ(read(invoke("log_softmax", {&one})[0]),
            std::vector<double>({0, 0, 0}));
}

TEST(SoftmaxGrad, FiniteDifferences) {
  Shape s = {2, 3, 4};
  auto x = uniform(24, -2, 2, 12);
  for (const char *op : {"softmax", "log_softmax"}) {
    grad_check(op, {s}, {x});
    grad_check(op, {s}, {x}, {{"axis", "1"}, {"temperature", "2.5"}});
    grad_check(op, {s}, {x}, {{"axis", "0"}, {"temperature", "-0.7"}});
    // dtype set: the backward node also takes the data.
    grad_check(op, {s}, {x}, {{"axis", "-1"}, {"dtype", "float64"}});
  }
}

TEST(SoftmaxGrad, MixedDtypeGradientHasTheInputsDtype) {
  // float32 input, float64 output: the gradient must come back in float32.
  auto x = uniform(6, -2, 2, 13);
  auto og = uniform(6, -1, 1, 14);
  Arr a = make({2, 3}, x, MXC_DTYPE_FLOAT32);
  Arr a64 = make({2, 3}, read(a), MXC_DTYPE_FLOAT64);
  for (const char *op : {"softmax", "log_softmax"}) {
    std::vector<double> grads[2];
    for (int pass = 0; pass < 2; ++pass) {
      const Arr &in = pass ? a64 : a;
      const char *k[1] = {"dtype"}, *v[1] = {"float64"};
      auto out = invoke(op, {&in}, {{"dtype", "float64"}});
      EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT64);
      Arr g = make({2, 3}, og, MXC_DTYPE_FLOAT64);
      mxc_ndarray ig = nullptr;
      ASSERT_EQ(mxct_grad_eval(op, k, v, 1, &in.h, 1, &out[0].h, 1, &g.h, &ig),
                MXC_OK)
          << err();
      Arr res(ig);
      EXPECT_EQ(res.dtype(), pass ? MXC_DTYPE_FLOAT64 : MXC_DTYPE_FLOAT32);
      grads[pass] = read(res);
    }
    for (int i = 0; i < 6; ++i)
      EXPECT_NEAR(grads[0][i], grads[1][i], 1e-6) << op << " " << i;
  }
}

TEST(SoftmaxErrors, BadAxisTemperatureDtypeArity) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  int rc = 0;
  invoke("softmax", {&a}, {{"axis", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("axis 2"), std::string::npos) << err();
  EXPECT_NE(err().find("2 dimensions"), std::string::npos) << err();
  invoke("log_softmax", {&a}, {{"axis", "-3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("softmax", {&a}, {{"temperature", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("temperature"), std::string::npos) << err();
  // None means 1, as in MXNet.
  auto none = invoke("softmax", {&a}, {{"temperature", "None"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  auto one = invoke("softmax", {&a}, {{"temperature", "1"}}, &rc);
  ASSERT_EQ(none.size(), 1u);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(read(none[0]), read(one[0]));
  invoke("softmax", {&a}, {{"dtype", "int32"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("dtype"), std::string::npos) << err();
  Arr i = make({3}, {1, 2, 3}, MXC_DTYPE_INT32);
  invoke("softmax", {&i}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  Arr s = make({}, {1});
  invoke("softmax", {&s}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("0 dimensions"), std::string::npos) << err();
  mxc_op op;
  ASSERT_EQ(mxc_op_find("softmax", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, a.h};
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outs[0], nullptr);
}

TEST(Softmax, UseLengthGradientAndBadLength) {
  // Lengths 2 and 0 of rows of 3 (any numeric dtype; float64 here).
  auto x = uniform(6, -1, 1, 9);
  for (const char *op : {"softmax", "log_softmax"}) {
    grad_check_except(op, {{2, 3}, {2}}, {x, {2, 0}}, {{"use_length", "true"}},
                      {1});
  }
  Arr a = make({2, 3}, x);
  Arr bad = make({3}, {1, 2, 3}, MXC_DTYPE_INT32);
  int rc = 0;
  invoke("softmax", {&a, &bad}, {{"use_length", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("length"), std::string::npos) << err();
  invoke("softmax", {&a}, {{"use_length", "true"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);  // length missing
}

}  // namespace
