// Same-shape binary operators against naive references: float types
// (float64/float32 long enough to run the vectorized loops and their
// tails, half types against float references), integer types exactly,
// gradients by finite differences, aliases, write modes and bad input.
#include "tests/ops/binary/binary_cases.h"

using namespace mxct;
using namespace bint;

namespace {

class Elemwise : public ::testing::TestWithParam<Case> {};

TEST_P(Elemwise, FloatTypesMatchReference) {
  const Case &c = GetParam();
  for (int dt : kFloatTypes) {
    // 1037: several vector iterations of every width plus a tail.
    int64_t n = (dt == MXC_DTYPE_FLOAT64 || dt == MXC_DTYPE_FLOAT32) ? 1037
                                                                       : 300;
    Arr a = make({n}, values(c, false, n, 1), dt);
    Arr b = make({n}, values(c, true, n, 2), dt);
    auto xa = read(a), xb = read(b);  // as stored in dt
    auto out = invoke(c.name, {&a, &b});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype(), dt);
    EXPECT_EQ(out[0].shape(), Shape({n}));
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = c.ref(xa[i], xb[i]);
    expect_close(read(out[0]), want, dt,
                 std::string(c.name) + " dtype " + std::to_string(dt));
  }
}

TEST_P(Elemwise, IntegerTypesExact) {
  const Case &c = GetParam();
  for (int dt : kIntTypes) {
    int lo_a = c.ilo_a, lo_b = c.ilo_b;
    if (dt == MXC_DTYPE_UINT8) lo_a = lo_b = 0;
    auto va = ints(40, lo_a, c.ihi_a, 3), vb = ints(40, lo_b, c.ihi_b, 4);
    Arr a = make({5, 8}, va, dt);
    Arr b = make({5, 8}, vb, dt);
    int rc = 0;
    auto out = invoke(c.name, {&a, &b}, {}, &rc);
    if (!c.iref) {
      EXPECT_EQ(rc, MXC_ERR_DTYPE) << c.name;
      EXPECT_NE(err().find("floating-point"), std::string::npos) << err();
      continue;
    }
    ASSERT_EQ(rc, MXC_OK) << c.name << ": " << err();
    EXPECT_EQ(out[0].dtype(), dt);
    std::vector<double> want(40);
    for (int i = 0; i < 40; ++i)
      want[i] = wrap(c.iref((int64_t)va[i], (int64_t)vb[i]), dt);
    expect_close(read(out[0]), want, dt, c.name);
  }
}

TEST_P(Elemwise, GradientMatchesFiniteDifferences) {
  const Case &c = GetParam();
  if (!c.grad) return;
  std::vector<double> a, b;
  for (unsigned seed = 10;; ++seed) {
    a = values(c, false, 6, seed);
    b = values(c, true, 6, seed + 100);
    bool ok = true;
    for (int i = 0; i < 6; ++i) ok &= smooth_at(c, a[i], b[i]);
    if (ok) break;
  }
  grad_check(c.name, {{2, 3}, {2, 3}}, {a, b});
}

TEST_P(Elemwise, ComparisonsHaveNoGradient) {
  const Case &c = GetParam();
  if (c.grad) return;
  Arr a = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr b = make({3}, {3, 2, 1}, MXC_DTYPE_FLOAT64);
  auto out = invoke(c.name, {&a, &b});
  Arr og = make({3}, {1, 1, 1}, MXC_DTYPE_FLOAT64);
  mxc_ndarray in[2] = {a.h, b.h}, ig[2] = {nullptr, nullptr};
  ASSERT_EQ(mxct_grad_eval(c.name, nullptr, nullptr, 0, in, 2, &out[0].h, 1,
                           &og.h, ig),
            MXC_OK)
      << err();
  EXPECT_EQ(ig[0], nullptr);
  EXPECT_EQ(ig[1], nullptr);
}

INSTANTIATE_TEST_SUITE_P(All, Elemwise, ::testing::ValuesIn(cases()),
                         case_name);

TEST(ElemwiseExtra, ModFollowsTheDivisorsSign) {
  Arr a = make({6}, {-7, 7, -7, 7, 7.5, -7.5}, MXC_DTYPE_FLOAT64);
  Arr b = make({6}, {3, -3, -3, 3, -2, 2}, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("mod", {&a, &b})[0]),
            std::vector<double>({2, -2, -1, 1, -0.5, 0.5}));
  Arr ia = make({6}, {-7, 7, -7, 7, 0, 5}, MXC_DTYPE_INT32);
  Arr ib = make({6}, {3, -3, -3, 3, 2, 0}, MXC_DTYPE_INT32);
  EXPECT_EQ(read(invoke("mod", {&ia, &ib})[0]),
            std::vector<double>({2, -2, -1, 1, 0, 0}));
  // Integer division truncates toward zero; a zero divisor gives 0.
  EXPECT_EQ(read(invoke("div", {&ia, &ib})[0]),
            std::vector<double>({-2, -2, 2, 2, 0, 0}));
}

TEST(ElemwiseExtra, IntegerPowerIsExact) {
  Arr a = make({5}, {3, -2, 7, 2, -1}, MXC_DTYPE_INT64);
  Arr b = make({5}, {20, 3, 0, -1, -3}, MXC_DTYPE_INT64);
  EXPECT_EQ(read(invoke("power", {&a, &b})[0]),
            std::vector<double>({3486784401.0, -8, 1, 0, -1}));
}

TEST(ElemwiseExtra, Int64BeyondDoublePrecision) {
  // 2^53 + 1 is not a double: the integer path must not go through one.
  Arr a = make({1}, {0}, MXC_DTYPE_INT64);
  int64_t big = (int64_t(1) << 53) + 1;
  ASSERT_EQ(mxc_ndarray_copy_from_host(a.h, &big, 8), MXC_OK);
  Arr one = make({1}, {1}, MXC_DTYPE_INT64);
  auto out = invoke("add", {&a, &one});
  int64_t got = 0;
  ASSERT_EQ(mxc_ndarray_copy_to_host(out[0].h, &got, 8), MXC_OK);
  EXPECT_EQ(got, big + 1);
}

TEST(ElemwiseExtra, BoolInputs) {
  Arr a = make({4}, {0, 1, 0, 1}, MXC_DTYPE_BOOL);
  Arr b = make({4}, {0, 0, 1, 1}, MXC_DTYPE_BOOL);
  EXPECT_EQ(read(invoke("logical_xor", {&a, &b})[0]),
            std::vector<double>({0, 1, 1, 0}));
  EXPECT_EQ(read(invoke("add", {&a, &b})[0]),
            std::vector<double>({0, 1, 1, 1}));
}

TEST(ElemwiseExtra, AliasesFindTheSameOperator) {
  const std::vector<std::pair<const char *, const char *>> k = {
      {"add", "elemwise_add"}, {"add", "_plus"},   {"add", "_add"},
      {"sub", "elemwise_sub"}, {"sub", "_minus"},  {"sub", "_sub"},
      {"mul", "elemwise_mul"}, {"mul", "_mul"},    {"div", "elemwise_div"},
      {"div", "_div"},         {"mod", "_mod"},    {"power", "_power"},
      {"power", "pow"},        {"maximum", "_maximum"},
      {"minimum", "_minimum"}, {"hypot", "_hypot"}, {"equal", "_equal"},
      {"not_equal", "_not_equal"}, {"greater", "_greater"},
      {"greater_equal", "_greater_equal"}, {"lesser", "_lesser"},
      {"lesser_equal", "_lesser_equal"}, {"logical_and", "_logical_and"},
      {"logical_or", "_logical_or"}, {"logical_xor", "_logical_xor"},
      {"broadcast_add", "broadcast_plus"},
      {"broadcast_sub", "broadcast_minus"}};
  for (auto &p : k) {
    mxc_op a = nullptr, b = nullptr;
    ASSERT_EQ(mxc_op_find(p.first, &a), MXC_OK) << p.first;
    ASSERT_EQ(mxc_op_find(p.second, &b), MXC_OK) << p.second;
    EXPECT_EQ(a, b) << p.second;
    const char *name = nullptr;
    ASSERT_EQ(mxc_op_name(b, &name), MXC_OK);
    EXPECT_STREQ(name, p.first);
  }
}

TEST(ElemwiseExtra, WriteModeAddAndNull) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
                 MXC_DTYPE_INT32}) {
    const int64_t n = 523;
    auto va = ints(n, -5, 5, 1), vb = ints(n, -5, 5, 2),
         vo = ints(n, -5, 5, 3);
    Arr a = make({n}, va, dt), b = make({n}, vb, dt), o = make({n}, vo, dt);
    mxc_op op;
    ASSERT_EQ(mxc_op_find("mul", &op), MXC_OK);
    mxc_ndarray ins[2] = {a.h, b.h}, outs[1] = {o.h};
    int req[1] = {MXC_REQ_ADD};
    ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, req),
              MXC_OK)
        << err();
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = vo[i] + va[i] * vb[i];
    EXPECT_EQ(read(o), want) << dt;
    req[0] = MXC_REQ_NULL;
    ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, req),
              MXC_OK);
    EXPECT_EQ(read(o), want) << dt;
  }
}

TEST(ElemwiseExtra, BackwardAccumulates) {
  // _backward_mul called directly: dlhs += og * rhs, drhs untouched.
  Arr og = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr a = make({3}, {4, 5, 6}, MXC_DTYPE_FLOAT64);
  Arr b = make({3}, {7, 8, 9}, MXC_DTYPE_FLOAT64);
  Arr ga = make({3}, {1, 1, 1}, MXC_DTYPE_FLOAT64);
  Arr gb = make({3}, {-1, -1, -1}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("_backward_mul", &op), MXC_OK);
  mxc_ndarray ins[3] = {og.h, a.h, b.h}, outs[2] = {ga.h, gb.h};
  int req[2] = {MXC_REQ_ADD, MXC_REQ_NULL};
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 3, outs, 2, req),
            MXC_OK)
      << err();
  EXPECT_EQ(read(ga), std::vector<double>({8, 17, 28}));
  EXPECT_EQ(read(gb), std::vector<double>({-1, -1, -1}));
}

TEST(ElemwiseExtra, BadInput) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  Arr b = make({3, 2}, {1, 2, 3, 4, 5, 6});
  Arr d = make({2, 3}, {1, 2, 3, 4, 5, 6}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("add", &op), MXC_OK);
  mxc_ndarray outs[1] = {nullptr};
  // Wrong arity.
  mxc_ndarray one[1] = {a.h};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, one, 1, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 1 inputs; expected 2"), std::string::npos)
      << err();
  // Different shapes: the same-shape form names both.
  mxc_ndarray ab[2] = {a.h, b.h};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ab, 2, outs, 1, nullptr),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(3,2)"), std::string::npos) << err();
  EXPECT_NE(err().find("broadcast_"), std::string::npos) << err();
  // Mixed dtypes.
  mxc_ndarray ad[2] = {a.h, d.h};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ad, 2, outs, 1, nullptr),
            MXC_ERR_DTYPE);
  EXPECT_NE(err().find("float64"), std::string::npos) << err();
  EXPECT_NE(err().find("float32"), std::string::npos) << err();
  // Unknown parameter.
  const char *k[1] = {"scalar"}, *v[1] = {"1"};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, ab, 2, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outs[0], nullptr);
  // Integer inputs for a float-only operator.
  Arr i = make({2}, {3, 4}, MXC_DTYPE_INT32);
  int rc = 0;
  invoke("hypot", {&i, &i}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
}

}  // namespace
