// broadcast_<name> against a naive numpy-style broadcast written here, for
// several shape pairs, dtypes, gradients (which sum over stretched axes),
// write modes and incompatible shapes.
#include "tests/ops/binary/binary_cases.h"

using namespace mxct;
using namespace bint;

namespace {

struct Pair {
  Shape a, b, out;
};

const std::vector<Pair> kPairs = {
    {{2, 3, 4}, {3, 1}, {2, 3, 4}},
    {{1}, {5, 2}, {5, 2}},
    {{4, 1, 3}, {1, 5, 1}, {4, 5, 3}},
    {{}, {2, 3}, {2, 3}},
    {{2, 3}, {}, {2, 3}},
    {{}, {}, {}},
    {{2, 3}, {2, 3}, {2, 3}},
    {{3, 1}, {1, 4}, {3, 4}},
    {{5}, {2, 1, 5}, {2, 1, 5}},
    {{2, 1, 300}, {2, 3, 1}, {2, 3, 300}},  // rows longer than a chunk
};

std::string str(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + ")";
}

// Flat index into an operand of shape s for the output multi-index idx.
int64_t src_index(const Shape &s, const Shape &out, const Shape &idx) {
  int64_t k = 0;
  size_t off = out.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    k = k * s[d] + (s[d] == 1 ? 0 : idx[off + d]);
  return k;
}

// Calls fn(flat output index, flat a index, flat b index) for every output
// element.
template <typename F>
void for_each(const Pair &p, F fn) {
  int64_t n = numel(p.out);
  Shape idx(p.out.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, src_index(p.a, p.out, idx), src_index(p.b, p.out, idx));
    for (int d = (int)p.out.size() - 1; d >= 0; --d) {
      if (++idx[d] < p.out[d]) break;
      idx[d] = 0;
    }
  }
}

std::string bname(const Case &c) { return std::string("broadcast_") + c.name; }

class Broadcast : public ::testing::TestWithParam<Case> {};

TEST_P(Broadcast, FloatShapesMatchReference) {
  const Case &c = GetParam();
  for (const Pair &p : kPairs) {
    for (int dt : kFloatTypes) {
      Arr a = make(p.a, values(c, false, numel(p.a), 1), dt);
      Arr b = make(p.b, values(c, true, numel(p.b), 2), dt);
      auto xa = read(a), xb = read(b);
      auto out = invoke(bname(c), {&a, &b});
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].shape(), p.out) << str(p.a) << "+" << str(p.b);
      std::vector<double> want(numel(p.out));
      for_each(p, [&](int64_t i, int64_t ia, int64_t ib) {
        want[i] = c.ref(xa[ia], xb[ib]);
      });
      expect_close(read(out[0]), want, dt,
                   bname(c) + " " + str(p.a) + "+" + str(p.b) + " dtype " +
                       std::to_string(dt));
    }
  }
}

TEST_P(Broadcast, IntegerTypesExact) {
  const Case &c = GetParam();
  if (!c.iref) return;
  for (const Pair &p : kPairs) {
    for (int dt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
      auto va = ints(numel(p.a), c.ilo_a, c.ihi_a, 3);
      auto vb = ints(numel(p.b), c.ilo_b, c.ihi_b, 4);
      Arr a = make(p.a, va, dt), b = make(p.b, vb, dt);
      auto out = invoke(bname(c), {&a, &b});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> want(numel(p.out));
      for_each(p, [&](int64_t i, int64_t ia, int64_t ib) {
        want[i] = wrap(c.iref((int64_t)va[ia], (int64_t)vb[ib]), dt);
      });
      expect_close(read(out[0]), want, dt, bname(c) + " " + str(p.a));
    }
  }
}

TEST_P(Broadcast, GradientMatchesFiniteDifferences) {
  const Case &c = GetParam();
  if (!c.grad) return;
  // Small shapes: every element is perturbed twice per check.
  const std::vector<Pair> pairs = {{{2, 3, 4}, {3, 1}, {2, 3, 4}},
                                   {{1}, {5, 2}, {5, 2}},
                                   {{4, 1, 3}, {1, 5, 1}, {4, 5, 3}},
                                   {{}, {2, 3}, {2, 3}},
                                   {{2, 3}, {2, 3}, {2, 3}}};
  for (const Pair &p : pairs) {
    std::vector<double> a, b;
    for (unsigned seed = 30;; ++seed) {
      a = values(c, false, numel(p.a), seed);
      b = values(c, true, numel(p.b), seed + 1000);
      bool ok = true;
      for_each(p, [&](int64_t, int64_t ia, int64_t ib) {
        ok &= smooth_at(c, a[ia], b[ib]);
      });
      if (ok) break;
    }
    SCOPED_TRACE(str(p.a) + " + " + str(p.b));
    grad_check(bname(c), {p.a, p.b}, {a, b});
  }
}

TEST_P(Broadcast, HalfGradientsSumInFloat) {
  const Case &c = GetParam();
  if (!c.grad) return;
  const Pair p = {{4, 1, 3}, {1, 5, 1}, {4, 5, 3}};
  for (int dt : {MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    std::vector<double> va, vb;
    for (unsigned seed = 40;; ++seed) {
      va = values(c, false, 12, seed);
      vb = values(c, true, 5, seed + 7);
      bool ok = true;
      for_each(p, [&](int64_t, int64_t ia, int64_t ib) {
        ok &= smooth_at(c, as_stored(va[ia], dt), as_stored(vb[ib], dt)) &&
              smooth_at(c, va[ia], vb[ib]);
      });
      if (ok) break;
    }
    Arr a = make(p.a, va, dt), b = make(p.b, vb, dt);
    auto out = invoke(bname(c), {&a, &b});
    Arr og = make(p.out, uniform(60, -1, 1, 9), dt);
    auto xa = read(a), xb = read(b), g = read(og);
    mxc_ndarray in[2] = {a.h, b.h}, ig[2] = {nullptr, nullptr};
    ASSERT_EQ(mxct_grad_eval(bname(c).c_str(), nullptr, nullptr, 0, in, 2,
                             &out[0].h, 1, &og.h, ig),
              MXC_OK)
        << err();
    Arr ga(ig[0]), gb(ig[1]);
    // Reference partials by central differences of the double reference.
    std::vector<double> wa(12, 0), wb(5, 0);
    const double h = 1e-6;
    for_each(p, [&](int64_t i, int64_t ia, int64_t ib) {
      double x = xa[ia], y = xb[ib];
      wa[ia] += g[i] * (c.ref(x + h, y) - c.ref(x - h, y)) / (2 * h);
      wb[ib] += g[i] * (c.ref(x, y + h) - c.ref(x, y - h)) / (2 * h);
    });
    // Partials are computed in float and summed in double: only the final
    // rounding to dt is visible.
    double tol = dt == MXC_DTYPE_FLOAT16 ? 4e-3 : 2e-2;
    auto ra = read(ga), rb = read(gb);
    for (int i = 0; i < 12; ++i)
      EXPECT_NEAR(ra[i], wa[i], tol * (1 + std::fabs(wa[i]))) << c.name;
    for (int i = 0; i < 5; ++i)
      EXPECT_NEAR(rb[i], wb[i], tol * (1 + std::fabs(wb[i]))) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Broadcast, ::testing::ValuesIn(cases()),
                         case_name);

TEST(BroadcastExtra, ZeroSizedAxes) {
  Arr a = make({0, 3}, {}, MXC_DTYPE_FLOAT32);
  Arr b = make({1, 3}, {1, 2, 3}, MXC_DTYPE_FLOAT32);
  auto out = invoke("broadcast_add", {&a, &b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), Shape({0, 3}));
  // The gradient of b sums over nothing: zeros.
  Arr og = make({0, 3}, {}, MXC_DTYPE_FLOAT32);
  mxc_ndarray in[2] = {a.h, b.h}, ig[2] = {nullptr, nullptr};
  ASSERT_EQ(mxct_grad_eval("broadcast_add", nullptr, nullptr, 0, in, 2,
                           &out[0].h, 1, &og.h, ig),
            MXC_OK)
      << err();
  Arr ga(ig[0]), gb(ig[1]);
  EXPECT_EQ(ga.shape(), Shape({0, 3}));
  EXPECT_EQ(read(gb), std::vector<double>({0, 0, 0}));
}

TEST(BroadcastExtra, WriteModeAdd) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16, MXC_DTYPE_INT32}) {
    Arr a = make({2, 3, 4}, ints(24, -4, 4, 1), dt);
    Arr b = make({3, 1}, {1, 2, 3}, dt);
    auto va = read(a);
    Arr o = make({2, 3, 4}, std::vector<double>(24, 100), dt);
    mxc_op op;
    ASSERT_EQ(mxc_op_find("broadcast_mul", &op), MXC_OK);
    mxc_ndarray ins[2] = {a.h, b.h}, outs[1] = {o.h};
    int req[1] = {MXC_REQ_ADD};
    ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, req),
              MXC_OK)
        << err();
    std::vector<double> want(24);
    for (int i = 0; i < 24; ++i) want[i] = 100 + va[i] * (1 + (i / 4) % 3);
    EXPECT_EQ(read(o), want) << dt;
  }
}

TEST(BroadcastExtra, BackwardAccumulatesReducedGradients) {
  // _backward_broadcast_add directly: drhs (shape (3,1)) += row sums of
  // ograd over the stretched axes; dlhs not requested.
  Arr og = make({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                MXC_DTYPE_FLOAT32);
  Arr a = make({2, 3, 2}, std::vector<double>(12, 0), MXC_DTYPE_FLOAT32);
  Arr b = make({3, 1}, {0, 0, 0}, MXC_DTYPE_FLOAT32);
  Arr ga = make({2, 3, 2}, std::vector<double>(12, -1), MXC_DTYPE_FLOAT32);
  Arr gb = make({3, 1}, {1000, 2000, 3000}, MXC_DTYPE_FLOAT32);
  mxc_op op;
  ASSERT_EQ(mxc_op_find("_backward_broadcast_add", &op), MXC_OK);
  mxc_ndarray ins[3] = {og.h, a.h, b.h}, outs[2] = {ga.h, gb.h};
  int req[2] = {MXC_REQ_NULL, MXC_REQ_ADD};
  ASSERT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 3, outs, 2, req),
            MXC_OK)
      << err();
  EXPECT_EQ(read(gb), std::vector<double>({1000 + 1 + 2 + 7 + 8,
                                           2000 + 3 + 4 + 9 + 10,
                                           3000 + 5 + 6 + 11 + 12}));
  EXPECT_EQ(read(ga), std::vector<double>(12, -1));
}

TEST(BroadcastExtra, IncompatibleShapesNameBoth) {
  Arr a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  Arr b = make({4}, {1, 2, 3, 4});
  int rc = 0;
  auto out = invoke("broadcast_add", {&a, &b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("broadcast_add"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(4)"), std::string::npos) << err();
  EXPECT_TRUE(out.empty());
  // A given output of the wrong shape.
  Arr c = make({3}, {1, 2, 3});
  Arr o = make({2, 2}, {0, 0, 0, 0});
  mxc_op op;
  ASSERT_EQ(mxc_op_find("broadcast_mul", &op), MXC_OK);
  mxc_ndarray ins[2] = {a.h, c.h}, outs[1] = {o.h};
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, ins, 2, outs, 1, nullptr),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_EQ(read(o), std::vector<double>({0, 0, 0, 0}));
  // Mixed dtypes and arity.
  Arr d = make({3}, {1, 2, 3}, MXC_DTYPE_FLOAT64);
  invoke("broadcast_add", {&a, &d}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  invoke("broadcast_add", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
