// Integer dtypes (int8, uint8, int32, int64) in the reductions (sum, mean,
// prod, max, min), argmax/argmin, sort/argsort/topk and the rounding
// family, with MXNet 1.x's dtype rules: every reduction and argmax/argmin
// keep the input's dtype (ElemwiseType in MXNet's registrations), mean is
// the sum wrapped to the dtype divided by the count, truncated; rounding
// is the identity. References are naive loops in exact 64-bit integer
// arithmetic, and the int64 data lies beyond 2^53, where a detour through
// double would change the values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {
namespace {

using I64s = std::vector<int64_t>;

const int kInts[] = {MXC_DTYPE_INT8, MXC_DTYPE_UINT8, MXC_DTYPE_INT32,
                     MXC_DTYPE_INT64};

// v kept to the dtype's width (wraps as a C++ cast does).
int64_t narrow(int64_t v, int dt) {
  switch (dt) {
    case MXC_DTYPE_INT8: return (int8_t)v;
    case MXC_DTYPE_UINT8: return (uint8_t)v;
    case MXC_DTYPE_INT32: return (int32_t)v;
    default: return v;
  }
}

Arr make_int(const Shape &s, const I64s &v, int dt) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), dt, MXC_DEVICE_CPU, 0,
                               0, &h),
            MXC_OK)
      << err();
  size_t es = mxc_dtype_size(dt);
  std::vector<unsigned char> b(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t x = v[i];
    int8_t i8 = (int8_t)x;
    uint8_t u8 = (uint8_t)x;
    int32_t i32 = (int32_t)x;
    const void *src = dt == MXC_DTYPE_INT8    ? (const void *)&i8
                      : dt == MXC_DTYPE_UINT8 ? (const void *)&u8
                      : dt == MXC_DTYPE_INT32 ? (const void *)&i32
                                              : (const void *)&x;
    memcpy(b.data() + i * es, src, es);
  }
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK);
  return Arr(h);
}

I64s read_int(const Arr &a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK);
  int dt = a.dtype();
  size_t es = mxc_dtype_size(dt);
  std::vector<unsigned char> b((size_t)n * es);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, b.data(), b.size()), MXC_OK);
  I64s v((size_t)n);
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char *p = b.data() + i * es;
    int8_t i8;
    uint8_t u8;
    int32_t i32;
    int64_t i64;
    switch (dt) {
      case MXC_DTYPE_INT8: memcpy(&i8, p, 1); v[i] = i8; break;
      case MXC_DTYPE_UINT8: memcpy(&u8, p, 1); v[i] = u8; break;
      case MXC_DTYPE_INT32: memcpy(&i32, p, 4); v[i] = i32; break;
      default: memcpy(&i64, p, 8); v[i] = i64; break;
    }
  }
  return v;
}

// Values spanning the dtype, int64 ones mostly beyond 2^53 (and near
// 2^62, so that sums and products wrap), with repeats for ties.
I64s values(int dt, size_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  I64s v(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = g();
    if (dt == MXC_DTYPE_INT64) {
      int64_t big = (int64_t)(r >> 2) | ((int64_t)1 << 53);
      v[i] = (r & 1) ? big : -big;
      if (i % 5 == 4) v[i] = v[i - 2];  // ties
    } else {
      v[i] = narrow((int64_t)r, dt);
      if (i % 5 == 4) v[i] = v[i - 3];
    }
  }
  return v;
}

std::string dname(int dt) {
  switch (dt) {
    case MXC_DTYPE_INT8: return "int8";
    case MXC_DTYPE_UINT8: return "uint8";
    case MXC_DTYPE_INT32: return "int32";
    default: return "int64";
  }
}

uint64_t u(int64_t v) { return (uint64_t)v; }

// Naive reduction of group `xs` for `op` in the dtype's arithmetic.
int64_t reduce_ref(const std::string &op, const I64s &xs, int dt) {
  if (op == "max") return *std::max_element(xs.begin(), xs.end());
  if (op == "min") return *std::min_element(xs.begin(), xs.end());
  uint64_t a = op == "prod" ? 1 : 0;
  for (int64_t x : xs) a = op == "prod" ? a * u(x) : a + u(x);
  int64_t r = narrow((int64_t)a, dt);
  if (op == "mean") r = narrow(r / (int64_t)xs.size(), dt);
  return r;
}

TEST(IntDtypes, ReductionsKeepDtypeAndAreExact) {
  const int64_t rows = 3, cols = 7;
  for (int dt : kInts) {
    I64s x = values(dt, rows * cols, 100 + dt);
    Arr a = make_int({rows, cols}, x, dt);
    for (std::string op : {"sum", "mean", "prod", "max", "min"}) {
      int rc = -1;
      auto out = invoke(op, {&a}, {{"axis", "1"}}, &rc);
      ASSERT_EQ(rc, MXC_OK) << op << " " << dname(dt) << ": " << err();
      EXPECT_EQ(out[0].dtype(), dt) << op;
      I64s want;
      for (int64_t r = 0; r < rows; ++r) {
        I64s g(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        want.push_back(reduce_ref(op, g, dt));
      }
      EXPECT_EQ(read_int(out[0]), want) << op << " " << dname(dt);
      // Over every axis (the shape is another helper's business).
      auto all = invoke(op, {&a}, {}, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(read_int(all[0]), I64s{reduce_ref(op, x, dt)})
          << op << " " << dname(dt) << " over all axes";
    }
  }
}

TEST(IntDtypes, MeanTruncatesTowardZero) {
  // sum -7 over 2 -> -3 (C and MXNet truncate; floor would give -4).
  Arr a = make_int({2}, {-3, -4}, MXC_DTYPE_INT32);
  int rc = -1;
  auto out = invoke("mean", {&a}, {}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(read_int(out[0]), I64s{-3});
  // int8: 100 + 100 wraps to -56 before the division (MXNet sums in the
  // dtype), giving -28.
  Arr b = make_int({2}, {100, 100}, MXC_DTYPE_INT8);
  out = invoke("mean", {&b}, {}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(read_int(out[0]), I64s{-28});
}

TEST(IntDtypes, ArgmaxArgminKeepDtype) {
  const int64_t rows = 4, cols = 9;
  for (int dt : kInts) {
    I64s x = values(dt, rows * cols, 200 + dt);
    Arr a = make_int({rows, cols}, x, dt);
    for (std::string op : {"argmax", "argmin"}) {
      int rc = -1;
      auto out = invoke(op, {&a}, {{"axis", "1"}}, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(out[0].dtype(), dt) << op;
      I64s want;
      for (int64_t r = 0; r < rows; ++r) {
        int64_t best = 0;
        for (int64_t c = 1; c < cols; ++c) {
          int64_t v = x[r * cols + c], b = x[r * cols + best];
          if (op == "argmax" ? v > b : v < b) best = c;  // first of ties
        }
        want.push_back(best);
      }
      EXPECT_EQ(read_int(out[0]), want) << op << " " << dname(dt);
    }
  }
}

// The stable order of row values: positions sorted by value, ties in
// their original order.
std::vector<int64_t> order(const I64s &row, bool asc) {
  std::vector<int64_t> p(row.size());
  std::iota(p.begin(), p.end(), 0);
  std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
    return asc ? row[a] < row[b] : row[a] > row[b];
  });
  return p;
}

TEST(IntDtypes, SortArgsortTopk) {
  const int64_t rows = 2, cols = 11;
  for (int dt : kInts) {
    I64s x = values(dt, rows * cols, 300 + dt);
    Arr a = make_int({rows, cols}, x, dt);
    for (bool asc : {true, false}) {
      const char *is_asc = asc ? "true" : "false";
      int rc = -1;
      auto s = invoke("sort", {&a}, {{"is_ascend", is_asc}}, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(s[0].dtype(), dt);
      auto as = invoke("argsort", {&a},
                       {{"is_ascend", is_asc}, {"dtype", "int64"}}, &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      auto tk = invoke("topk", {&a},
                       {{"is_ascend", is_asc}, {"k", "3"}, {"ret_typ", "both"},
                        {"dtype", "int32"}},
                       &rc);
      ASSERT_EQ(rc, MXC_OK) << err();
      ASSERT_EQ(tk.size(), 2u);
      EXPECT_EQ(tk[0].dtype(), dt);
      EXPECT_EQ(tk[1].dtype(), MXC_DTYPE_INT32);
      I64s ws, wa, wtv, wti;
      for (int64_t r = 0; r < rows; ++r) {
        I64s row(x.begin() + r * cols, x.begin() + (r + 1) * cols);
        auto p = order(row, asc);
        for (size_t j = 0; j < p.size(); ++j) {
          ws.push_back(row[p[j]]);
          wa.push_back(p[j]);
          if (j < 3) {
            wtv.push_back(row[p[j]]);
            wti.push_back(p[j]);
          }
        }
      }
      EXPECT_EQ(read_int(s[0]), ws) << dname(dt) << " asc " << asc;
      EXPECT_EQ(read_int(as[0]), wa) << dname(dt) << " asc " << asc;
      EXPECT_EQ(read_int(tk[0]), wtv) << dname(dt) << " asc " << asc;
      EXPECT_EQ(read_int(tk[1]), wti) << dname(dt) << " asc " << asc;
    }
  }
}

TEST(IntDtypes, ArgsortDefaultIndexDtypeIsFloat32) {
  Arr a = make_int({3}, {5, -2, 7}, MXC_DTYPE_INT8);
  int rc = -1;
  auto out = invoke("argsort", {&a}, {}, &rc);
  ASSERT_EQ(rc, MXC_OK) << err();
  EXPECT_EQ(out[0].dtype(), MXC_DTYPE_FLOAT32);
  EXPECT_EQ(read(out[0]), (std::vector<double>{1, 0, 2}));
}

TEST(IntDtypes, RoundingFamilyIsTheIdentity) {
  for (int dt : kInts) {
    I64s x = values(dt, 16, 400 + dt);
    Arr a = make_int({16}, x, dt);
    for (std::string op : {"round", "rint", "ceil", "floor", "trunc", "fix"}) {
      int rc = -1;
      auto out = invoke(op, {&a}, {}, &rc);
      ASSERT_EQ(rc, MXC_OK) << op << " " << dname(dt) << ": " << err();
      EXPECT_EQ(out[0].dtype(), dt);
      EXPECT_EQ(read_int(out[0]), x) << op << " " << dname(dt);
    }
  }
}

TEST(IntDtypes, FloatOnlyOperatorsStillRejectIntegers) {
  Arr a = make_int({4}, {1, 2, 3, 4}, MXC_DTYPE_INT8);
  int rc = MXC_OK;
  invoke("nansum", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  invoke("sqrt", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  Arr b = make_int({4}, {1, 0, 1, 0}, MXC_DTYPE_BOOL);
  invoke("sum", {&b}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("int8"), std::string::npos) << err();
}

}  // namespace
}  // namespace mxct
