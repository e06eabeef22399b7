// Naive references for the binary operators, shared by the tests of the
// same-shape, scalar and broadcast forms. Floating-point references are
// computed in double with <cmath>; integer references in int64 exactly.
#ifndef MXC_TESTS_OPS_BINARY_BINARY_CASES_H_
#define MXC_TESTS_OPS_BINARY_BINARY_CASES_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace bint {

using mxct::Shape;

// Python's a % b: the result has the sign of b; mxc (like MXNet) gives 0
// for b == 0.
inline double py_mod(double a, double b) {
  if (b == 0) return 0;
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
inline int64_t py_mod_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
inline int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
  int64_t r = 1;
  for (int64_t i = 0; i < b; ++i) r *= a;
  return r;
}

struct Case {
  const char *name;  // same-shape form; broadcast_<name>
  const char *stem;  // _<stem>_scalar, _r<stem>_scalar
  double (*ref)(double, double);
  int64_t (*iref)(int64_t, int64_t);  // nullptr: floats only
  bool grad;                          // differentiable
  bool rev;                           // has _r<stem>_scalar
  // Test domains: a in [alo, ahi], b in [blo, bhi]; flip_b negates b at
  // odd positions; step > 0 rounds values to multiples of step (ties and
  // zeros for comparisons and logical operators).
  double alo, ahi, blo, bhi;
  bool flip_b;
  double step;
  // Integer domains.
  int ilo_a, ihi_a, ilo_b, ihi_b;
};

inline double b2d(bool v) { return v ? 1.0 : 0.0; }

inline const std::vector<Case> &cases() {
  static const std::vector<Case> k = {
      {"add", "plus", [](double a, double b) { return a + b; },
       [](int64_t a, int64_t b) { return a + b; }, true, false, -3, 3, -3, 3,
       false, 0, -9, 9, -9, 9},
      {"sub", "minus", [](double a, double b) { return a - b; },
       [](int64_t a, int64_t b) { return a - b; }, true, true, -3, 3, -3, 3,
       false, 0, -9, 9, -9, 9},
      {"mul", "mul", [](double a, double b) { return a * b; },
       [](int64_t a, int64_t b) { return a * b; }, true, false, -3, 3, -3, 3,
       false, 0, -9, 9, -9, 9},
      {"div", "div", [](double a, double b) { return a / b; },
       [](int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }, true, true,
       -3, 3, 0.5, 3, true, 0, -20, 20, -4, 4},
      {"mod", "mod", py_mod, py_mod_i, true, true, -5, 5, 0.5, 3, true, 0,
       -20, 20, -4, 4},
      {"power", "power", [](double a, double b) { return std::pow(a, b); },
       ipow, true, true, 0.5, 2.5, -2, 2, false, 0, -3, 3, -2, 5},
      {"maximum", "maximum",
       [](double a, double b) { return a > b ? a : b; },
       [](int64_t a, int64_t b) { return a > b ? a : b; }, true, false, -3,
       3, -3, 3, false, 0, -9, 9, -9, 9},
      {"minimum", "minimum",
       [](double a, double b) { return a < b ? a : b; },
       [](int64_t a, int64_t b) { return a < b ? a : b; }, true, false, -3,
       3, -3, 3, false, 0, -9, 9, -9, 9},
      {"hypot", "hypot", [](double a, double b) { return std::hypot(a, b); },
       nullptr, true, false, -3, 3, -3, 3, false, 0, 0, 0, 0, 0},
      {"equal", "equal", [](double a, double b) { return b2d(a == b); },
       [](int64_t a, int64_t b) -> int64_t { return a == b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"not_equal", "not_equal",
       [](double a, double b) { return b2d(a != b); },
       [](int64_t a, int64_t b) -> int64_t { return a != b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"greater", "greater", [](double a, double b) { return b2d(a > b); },
       [](int64_t a, int64_t b) -> int64_t { return a > b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"greater_equal", "greater_equal",
       [](double a, double b) { return b2d(a >= b); },
       [](int64_t a, int64_t b) -> int64_t { return a >= b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"lesser", "lesser", [](double a, double b) { return b2d(a < b); },
       [](int64_t a, int64_t b) -> int64_t { return a < b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"lesser_equal", "lesser_equal",
       [](double a, double b) { return b2d(a <= b); },
       [](int64_t a, int64_t b) -> int64_t { return a <= b; }, false, false,
       -2, 2, -2, 2, false, 0.5, -3, 3, -3, 3},
      {"logical_and", "logical_and",
       [](double a, double b) { return b2d(a != 0 && b != 0); },
       [](int64_t a, int64_t b) -> int64_t { return a != 0 && b != 0; },
       false, false, -1.4, 1.4, -1.4, 1.4, false, 1, -2, 2, -2, 2},
      {"logical_or", "logical_or",
       [](double a, double b) { return b2d(a != 0 || b != 0); },
       [](int64_t a, int64_t b) -> int64_t { return a != 0 || b != 0; },
       false, false, -1.4, 1.4, -1.4, 1.4, false, 1, -2, 2, -2, 2},
      {"logical_xor", "logical_xor",
       [](double a, double b) { return b2d((a != 0) != (b != 0)); },
       [](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); },
       false, false, -1.4, 1.4, -1.4, 1.4, false, 1, -2, 2, -2, 2},
  };
  return k;
}

// gtest prints parameters with this (instead of the struct's bytes).
inline void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

inline std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

// Values for operand a or b of a case (seeded).
inline std::vector<double> values(const Case &c, bool is_b, int64_t n,
                                  unsigned seed) {
  auto v = is_b ? mxct::uniform(n, c.blo, c.bhi, seed)
                : mxct::uniform(n, c.alo, c.ahi, seed);
  for (int64_t i = 0; i < n; ++i) {
    if (is_b && c.flip_b && (i % 2)) v[i] = -v[i];
    if (c.step > 0) v[i] = std::round(v[i] / c.step) * c.step;
  }
  return v;
}

// Integers in [lo, hi] (seeded), as doubles.
inline std::vector<double> ints(int64_t n, int lo, int hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v((size_t)n);
  for (auto &x : v) x = d(g);
  return v;
}

// Whether the gradient of c is smooth around (a, b): away from the ties
// of maximum/minimum and the jumps of mod.
inline bool smooth_at(const Case &c, double a, double b) {
  std::string n = c.name;
  if (n == "maximum" || n == "minimum") return std::fabs(a - b) > 1e-3;
  if (n == "mod") {
    double q = a / b;
    return std::fabs(q - std::round(q)) > 1e-3;
  }
  return true;
}

// Element-wise tolerance of a dtype against a double reference.
inline double tol_of(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT64: return 1e-12;
    case MXC_DTYPE_FLOAT32: return 3e-6;
    case MXC_DTYPE_FLOAT16: return 2e-3;
    case MXC_DTYPE_BFLOAT16: return 1.6e-2;
    default: return 0;
  }
}

// v rounded to what a float dtype stores (identity for float64).
inline double as_stored(double v, int dt) {
  auto b = mxct::encode({v}, dt);
  return mxct::decode(b, dt)[0];
}

// An integer result as the integer dtype stores it (wrapping).
inline double wrap(int64_t v, int dt) {
  switch (dt) {
    case MXC_DTYPE_UINT8: return (double)(uint8_t)v;
    case MXC_DTYPE_INT8: return (double)(int8_t)v;
    case MXC_DTYPE_INT32: return (double)(int32_t)v;
    case MXC_DTYPE_BOOL: return v != 0;
    default: return (double)v;
  }
}

inline constexpr int kFloatTypes[] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32,
                                      MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16};
inline constexpr int kIntTypes[] = {MXC_DTYPE_INT32, MXC_DTYPE_INT64,
                                    MXC_DTYPE_INT8, MXC_DTYPE_UINT8};

// Checks y against want elementwise for dtype dt (exact for integers).
inline void expect_close(const std::vector<double> &y,
                         const std::vector<double> &want, int dt,
                         const std::string &what) {
  ASSERT_EQ(y.size(), want.size()) << what;
  double tol = tol_of(dt);
  for (size_t i = 0; i < y.size(); ++i) {
    if (tol == 0) {
      EXPECT_EQ(y[i], want[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(y[i], want[i], tol * (1 + std::fabs(want[i])))
          << what << " at " << i;
    }
  }
}

}  // namespace bint

#endif  // MXC_TESTS_OPS_BINARY_BINARY_CASES_H_
