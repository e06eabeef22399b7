// Scalar forms _<stem>_scalar (f(x, s)) and reversed _r<stem>_scalar
// (f(s, x)) against naive references, gradients, write modes and bad
// parameters.
#include <sstream>

#include "tests/ops/binary/binary_cases.h"

using namespace mxct;
using namespace bint;

namespace {

std::string scalar_name(const Case &c, bool rev) {
  return std::string(rev ? "_r" : "_") + c.stem + "_scalar";
}

std::string str(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// A scalar inside the domain of the operand it replaces.
double scalar_for(const Case &c, bool rev) {
  if (c.step > 0) return c.step;  // a tie with some elements
  return rev ? values(c, false, 1, 77)[0] : values(c, true, 2, 78)[1];
}

class Scalar : public ::testing::TestWithParam<Case> {};

TEST_P(Scalar, FloatTypesMatchReference) {
  const Case &c = GetParam();
  for (bool rev : {false, true}) {
    if (rev && !c.rev) continue;
    std::string name = scalar_name(c, rev);
    double s = scalar_for(c, rev);
    for (int dt : kFloatTypes) {
      int64_t n = (dt == MXC_DTYPE_FLOAT64 || dt == MXC_DTYPE_FLOAT32) ? 1037
                                                                         : 100;
      // x replaces b in f(s, x) and a in f(x, s).
      Arr x = make({n}, values(c, rev, n, 5), dt);
      auto xs = read(x);
      auto out = invoke(name, {&x}, {{"scalar", str(s)}});
      ASSERT_EQ(out.size(), 1u) << name;
      // The scalar takes the input's dtype first.
      double sd = as_stored(s, dt);
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i)
        want[i] = rev ? c.ref(sd, xs[i]) : c.ref(xs[i], sd);
      expect_close(read(out[0]), want, dt, name + " " + std::to_string(dt));
    }
  }
}

TEST_P(Scalar, IntegerTypesExact) {
  const Case &c = GetParam();
  for (bool rev : {false, true}) {
    if (rev && !c.rev) continue;
    std::string name = scalar_name(c, rev);
    for (int dt : {MXC_DTYPE_INT32, MXC_DTYPE_INT8}) {
      auto v = rev ? ints(30, c.ilo_b, c.ihi_b, 6)
                   : ints(30, c.ilo_a, c.ihi_a, 6);
      int64_t s = rev ? 3 : 2;
      Arr x = make({30}, v, dt);
      int rc = 0;
      auto out = invoke(name, {&x}, {{"scalar", std::to_string(s)}}, &rc);
      if (!c.iref) {
        EXPECT_EQ(rc, MXC_ERR_DTYPE) << name;
        continue;
      }
      ASSERT_EQ(rc, MXC_OK) << name << ": " << err();
      std::vector<double> want(30);
      for (int i = 0; i < 30; ++i) {
        int64_t xi = (int64_t)v[i];
        want[i] = wrap(rev ? c.iref(s, xi) : c.iref(xi, s), dt);
      }
      expect_close(read(out[0]), want, dt, name);
    }
  }
}

TEST_P(Scalar, GradientMatchesFiniteDifferences) {
  const Case &c = GetParam();
  if (!c.grad) return;
  for (bool rev : {false, true}) {
    if (rev && !c.rev) continue;
    std::string name = scalar_name(c, rev);
    double s = scalar_for(c, rev);
    std::vector<double> x;
    for (unsigned seed = 20;; ++seed) {
      x = values(c, rev, 6, seed);
      bool ok = true;
      for (double xi : x) ok &= rev ? smooth_at(c, s, xi) : smooth_at(c, xi, s);
      if (ok) break;
    }
    grad_check(name, {{3, 2}}, {x}, {{"scalar", str(s)}});
  }
}

INSTANTIATE_TEST_SUITE_P(All, Scalar, ::testing::ValuesIn(cases()),
                         case_name);

TEST(ScalarExtra, ReversedFormsExistOnlyWhereOrderMatters) {
  mxc_op op;
  for (const char *n : {"_rminus_scalar", "_rdiv_scalar", "_rmod_scalar",
                        "_rpower_scalar"})
    EXPECT_EQ(mxc_op_find(n, &op), MXC_OK) << n;
  for (const char *n : {"_rplus_scalar", "_rmul_scalar", "_rmaximum_scalar"})
    EXPECT_EQ(mxc_op_find(n, &op), MXC_ERR_NOT_FOUND) << n;
}

TEST(ScalarExtra, ModSignsAndIntegerScalars) {
  Arr x = make({4}, {-7, 7, -0.5, 5}, MXC_DTYPE_FLOAT64);
  EXPECT_EQ(read(invoke("_mod_scalar", {&x}, {{"scalar", "-3"}})[0]),
            std::vector<double>({-1, -2, -0.5, -1}));
  EXPECT_EQ(read(invoke("_rmod_scalar", {&x}, {{"scalar", "10"}})[0]),
            std::vector<double>({-4, 3, -0, 0}));
  // The scalar is converted to an integer input's dtype (truncated).
  Arr i = make({2}, {7, -7}, MXC_DTYPE_INT32);
  EXPECT_EQ(read(invoke("_div_scalar", {&i}, {{"scalar", "2.9"}})[0]),
            std::vector<double>({3, -3}));
}

TEST(ScalarExtra, WriteModeAdd) {
  Arr x = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  Arr o = make({3}, {10, 20, 30}, MXC_DTYPE_FLOAT64);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("_rminus_scalar", &op), MXC_OK);
  const char *k[1] = {"scalar"}, *v[1] = {"5"};
  mxc_ndarray outs[1] = {o.h};
  int req[1] = {MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, k, v, 1, &x.h, 1, outs, 1, req), MXC_OK)
      << err();
  EXPECT_EQ(read(o), std::vector<double>({14, 23, 32}));
}

TEST(ScalarExtra, BadParameters) {
  Arr x = make({2}, {1, 2});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("_plus_scalar", &op), MXC_OK);
  mxc_ndarray outs[1] = {nullptr};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &x.h, 1, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("scalar"), std::string::npos) << err();
  EXPECT_NE(err().find("_plus_scalar"), std::string::npos) << err();
  const char *k[1] = {"scalar"}, *v[1] = {"two"};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, &x.h, 1, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("scalar"), std::string::npos) << err();
  mxc_ndarray two[2] = {x.h, x.h};
  EXPECT_EQ(mxc_op_invoke(op, k, v, 1, two, 2, outs, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(outs[0], nullptr);
}

}  // namespace
