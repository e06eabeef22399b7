// Issue 15, class 2: integer arithmetic and float-to-integer conversions
// with defined results. Every operator of the registry runs on integer
// arrays holding the extremes of their dtype (write and accumulate
// modes); UBSan with halt (--config=asan) fails the test on any signed
// overflow or out-of-range conversion. The wrapping operators are compared
// with references computed here in unsigned arithmetic, and conversions
// with the documented rule (docs/dtypes.md): truncate toward zero,
// saturate at the dtype's range, NaN -> 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "op_walk.h"

namespace {

using hostile::OpInfo;
using hostile::Params;

const int kIntTypes[] = {MXC_DTYPE_INT8, MXC_DTYPE_UINT8, MXC_DTYPE_INT32,
                         MXC_DTYPE_INT64};

// The extremes of a dtype and their neighbours, as int64.
std::vector<int64_t> Extremes(int dt) {
  int64_t lo = 0, hi = 0;
  switch (dt) {
    case MXC_DTYPE_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
    case MXC_DTYPE_UINT8: lo = 0, hi = UINT8_MAX; break;
    case MXC_DTYPE_INT32: lo = INT32_MIN, hi = INT32_MAX; break;
    default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
  return {hi, lo, -1, 0, 1, hi - 1, lo + 1, 2};
}

// Host bytes of values stored in dtype dt (wrapping, as the library does).
std::vector<uint8_t> Pack(int dt, const std::vector<int64_t> &v) {
  size_t es = static_cast<size_t>(mxc_dtype_size(dt));
  std::vector<uint8_t> bytes(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    uint64_t u = static_cast<uint64_t>(v[i]);
    std::memcpy(&bytes[i * es], &u, es);  // little-endian low bytes
  }
  return bytes;
}

int64_t Unpack(int dt, const uint8_t *p) {
  switch (dt) {
    case MXC_DTYPE_INT8: return static_cast<int8_t>(*p);
    case MXC_DTYPE_UINT8: return *p;
    case MXC_DTYPE_INT32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    default: {
      int64_t x;
      std::memcpy(&x, p, 8);
      return x;
    }
  }
}

// Wraps v into dtype dt (keeps the low bits), in unsigned arithmetic.
int64_t Wrap(int dt, uint64_t v) {
  std::vector<uint8_t> b = Pack(dt, {static_cast<int64_t>(v)});
  return Unpack(dt, b.data());
}

mxc_ndarray Make(int dt, const std::vector<int64_t> &v) {
  int64_t n = static_cast<int64_t>(v.size());
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(&n, 1, dt, MXC_DEVICE_CPU, 0, 0, &a), MXC_OK);
  std::vector<uint8_t> b = Pack(dt, v);
  EXPECT_EQ(mxc_ndarray_copy_from_host(a, b.data(), b.size()), MXC_OK);
  return a;
}

std::vector<int64_t> Read(mxc_ndarray a) {
  int dt = 0;
  int64_t n = 0;
  mxc_ndarray_dtype(a, &dt);
  mxc_ndarray_size(a, &n);
  size_t es = static_cast<size_t>(mxc_dtype_size(dt));
  std::vector<uint8_t> b(static_cast<size_t>(n) * es);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), b.size()), MXC_OK)
      << mxc_last_error();
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(Unpack(dt, &b[i * es]));
  return v;
}

// Runs op; out[0..n_out) NULL slots get new arrays. Returns the code of
// invoke or, when it succeeded, of waiting for the outputs.
int RunOp(mxc_op op, const Params &params, std::vector<mxc_ndarray> in,
        std::vector<mxc_ndarray> *out, const int *reqs) {
  std::vector<const char *> k, v;
  for (const auto &kv : params) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  int rc = mxc_op_invoke(op, k.data(), v.data(), static_cast<int>(k.size()),
                         in.data(), static_cast<int>(in.size()), out->data(),
                         static_cast<int>(out->size()), reqs);
  for (mxc_ndarray o : *out) {
    if (!o) continue;
    int w = mxc_ndarray_wait_to_read(o);
    if (rc == MXC_OK) rc = w;
  }
  return rc;
}

void FreeAll(std::vector<mxc_ndarray> *v) {
  for (mxc_ndarray a : *v) mxc_ndarray_free(a);
  v->clear();
}

// Every operator on integer extremes, written and accumulated. Without a
// reference this checks definedness (UBSan) and clean errors.
TEST(IntSemantics, EveryOperatorOnIntegerExtremes) {
  int ran = 0;
  for (const OpInfo &op : hostile::AllOps()) {
    Params params = hostile::BaseParams(op);
    int n_in = hostile::NumInputs(op, params);
    int n_out = hostile::NumOutputs(op, params);
    if (n_in < 0 || n_in > 8 || n_out < 1) continue;
    for (int dt : kIntTypes) {
      std::vector<int64_t> vals = Extremes(dt);
      std::vector<mxc_ndarray> in;
      for (int i = 0; i < n_in; ++i) in.push_back(Make(dt, vals));
      std::vector<mxc_ndarray> out(static_cast<size_t>(n_out), nullptr);
      int rc = RunOp(op.op, params, in, &out, nullptr);
      if (rc == MXC_OK) {
        ++ran;
        // Accumulate into outputs holding the extremes too.
        std::vector<int> add(out.size(), MXC_REQ_ADD);
        std::vector<mxc_ndarray> again = out;
        rc = RunOp(op.op, params, in, &again, add.data());
        if (rc != MXC_OK) {
          EXPECT_GT(std::strlen(mxc_last_error()), 0u);
        }
      } else {
        EXPECT_GT(std::strlen(mxc_last_error()), 0u) << op.name;
      }
      FreeAll(&out);
      FreeAll(&in);
    }
  }
  EXPECT_GT(ran, 50);
}

// Scalars that are NaN, infinite or beyond every integer type, given to
// every scalar operator of an integer array.
TEST(IntSemantics, EveryScalarOperatorWithUnrepresentableScalars) {
  const char *const scalars[] = {"nan", "inf", "-inf", "1e300", "-1e300",
                                 "9223372036854775808", "-1"};
  for (const OpInfo &op : hostile::AllOps()) {
    bool has_scalar = false;
    for (const auto &p : op.params) has_scalar |= p.name == "scalar";
    if (!has_scalar) continue;
    for (int dt : kIntTypes) {
      for (const char *s : scalars) {
        std::vector<mxc_ndarray> in = {Make(dt, Extremes(dt))};
        std::vector<mxc_ndarray> out(1, nullptr);
        int rc = RunOp(op.op, {{"scalar", s}}, in, &out, nullptr);
        if (rc != MXC_OK) {
          EXPECT_GT(std::strlen(mxc_last_error()), 0u);
        }
        FreeAll(&out);
        FreeAll(&in);
      }
    }
  }
}

// The wrapping operators against references in unsigned arithmetic.
uint64_t U(int64_t x) { return static_cast<uint64_t>(x); }

void CheckBinary(const char *name, uint64_t (*ref)(uint64_t, uint64_t)) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK);
  for (int dt : kIntTypes) {
    std::vector<int64_t> a = Extremes(dt), b = a;
    std::reverse(b.begin(), b.end());
    std::vector<mxc_ndarray> in = {Make(dt, a), Make(dt, b)};
    std::vector<mxc_ndarray> out(1, nullptr);
    ASSERT_EQ(RunOp(op, {}, in, &out, nullptr), MXC_OK) << name << ": "
                                                      << mxc_last_error();
    std::vector<int64_t> got = Read(out[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(got[i], Wrap(dt, ref(U(a[i]), U(b[i]))))
          << name << " dtype " << mxc_dtype_name(dt) << " of " << a[i]
          << " and " << b[i];
    }
    // Accumulating wraps too: out += a op b.
    int add = MXC_REQ_ADD;
    ASSERT_EQ(RunOp(op, {}, in, &out, &add), MXC_OK) << mxc_last_error();
    std::vector<int64_t> twice = Read(out[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(twice[i], Wrap(dt, U(got[i]) + ref(U(a[i]), U(b[i]))))
          << name << " accumulated, dtype " << mxc_dtype_name(dt);
    }
    FreeAll(&out);
    FreeAll(&in);
  }
}

TEST(IntSemantics, AddSubMulWrapLikeNumpy) {
  auto add = [](uint64_t x, uint64_t y) { return x + y; };
  auto sub = [](uint64_t x, uint64_t y) { return x - y; };
  auto mul = [](uint64_t x, uint64_t y) { return x * y; };
  CheckBinary("add", add);
  CheckBinary("sub", sub);
  CheckBinary("mul", mul);
  CheckBinary("broadcast_add", add);
  CheckBinary("broadcast_sub", sub);
  CheckBinary("broadcast_mul", mul);
}

void CheckUnary(const char *name, uint64_t (*ref)(uint64_t)) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find(name, &op), MXC_OK);
  for (int dt : kIntTypes) {
    std::vector<int64_t> a = Extremes(dt);
    // int64 values beyond 2^53 must not go through double.
    if (dt == MXC_DTYPE_INT64) a.push_back((int64_t{1} << 53) + 1);
    std::vector<mxc_ndarray> in = {Make(dt, a)};
    std::vector<mxc_ndarray> out(1, nullptr);
    ASSERT_EQ(RunOp(op, {}, in, &out, nullptr), MXC_OK) << mxc_last_error();
    std::vector<int64_t> got = Read(out[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      // The input as stored (uint8 extremes are non-negative).
      uint64_t x = U(Wrap(dt, U(a[i])));
      EXPECT_EQ(got[i], Wrap(dt, ref(x))) << name << " dtype "
                                          << mxc_dtype_name(dt) << " of "
                                          << a[i];
    }
    FreeAll(&out);
    FreeAll(&in);
  }
}

TEST(IntSemantics, NegativeAbsSquareWrapLikeNumpy) {
  CheckUnary("negative", [](uint64_t x) { return 0 - x; });
  CheckUnary("abs", [](uint64_t x) {
    return static_cast<int64_t>(x) < 0 ? 0 - x : x;
  });
  CheckUnary("square", [](uint64_t x) { return x * x; });
}

// sum and prod of int64 wrap (int32 and int64 are the integer dtypes the
// reductions take).
TEST(IntSemantics, SumAndProdWrap) {
  mxc_op sum = nullptr, prod = nullptr;
  ASSERT_EQ(mxc_op_find("sum", &sum), MXC_OK);
  ASSERT_EQ(mxc_op_find("prod", &prod), MXC_OK);
  for (int dt : {MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
    std::vector<int64_t> a = Extremes(dt);
    uint64_t s = 0, p = 1;
    for (int64_t x : a) {
      s += U(x);
      p *= U(x) | 1;  // avoid the zero so the product stays interesting
    }
    std::vector<int64_t> odd = a;
    for (int64_t &x : odd) x = Wrap(dt, U(x) | 1);
    std::vector<mxc_ndarray> in = {Make(dt, a)}, out(1, nullptr);
    ASSERT_EQ(RunOp(sum, {}, in, &out, nullptr), MXC_OK) << mxc_last_error();
    EXPECT_EQ(Read(out[0])[0], Wrap(dt, s)) << mxc_dtype_name(dt);
    FreeAll(&out);
    FreeAll(&in);
    in = {Make(dt, odd)};
    out.assign(1, nullptr);
    ASSERT_EQ(RunOp(prod, {}, in, &out, nullptr), MXC_OK) << mxc_last_error();
    uint64_t q = 1;
    for (int64_t x : odd) q *= U(x);
    EXPECT_EQ(Read(out[0])[0], Wrap(dt, q)) << mxc_dtype_name(dt);
    (void)p;
    FreeAll(&out);
    FreeAll(&in);
  }
}

// Floating values into integer dtypes: truncate, saturate, NaN -> 0.
int64_t Saturate(int dt, double v) {
  std::vector<int64_t> e = Extremes(dt);
  double lo = static_cast<double>(e[1]), hi = static_cast<double>(e[0]);
  if (std::isnan(v)) return 0;
  if (v <= lo) return e[1];
  if (v >= hi) return e[0];
  return static_cast<int64_t>(v);
}

TEST(IntSemantics, FloatToIntegerConversionsSaturate) {
  const std::vector<float> vals = {
      std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      1e30f, -1e30f, 300.5f, -129.7f, 2.9f, -2.9f, 0.0f};
  int64_t n = static_cast<int64_t>(vals.size());
  mxc_ndarray x = nullptr;
  ASSERT_EQ(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               &x),
            MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_from_host(x, vals.data(), vals.size() * 4),
            MXC_OK);
  mxc_op cast = nullptr, full = nullptr;
  ASSERT_EQ(mxc_op_find("Cast", &cast), MXC_OK);
  ASSERT_EQ(mxc_op_find("_full", &full), MXC_OK);
  for (int dt : kIntTypes) {
    std::vector<mxc_ndarray> out(1, nullptr);
    ASSERT_EQ(RunOp(cast, {{"dtype", mxc_dtype_name(dt)}}, {x}, &out, nullptr),
              MXC_OK)
        << mxc_last_error();
    std::vector<int64_t> got = Read(out[0]);
    for (size_t i = 0; i < vals.size(); ++i) {
      EXPECT_EQ(got[i], Saturate(dt, vals[i]))
          << "Cast of " << vals[i] << " to " << mxc_dtype_name(dt);
    }
    FreeAll(&out);
    // The shared store helper (operators computing in double): _full.
    for (double v : {1e300, -1e300, std::nan(""), 1e19, -2.5}) {
      out.assign(1, nullptr);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      ASSERT_EQ(RunOp(full, {{"shape", "(2)"},
                           {"dtype", mxc_dtype_name(dt)},
                           {"value", buf}},
                    {}, &out, nullptr),
                MXC_OK)
          << mxc_last_error();
      EXPECT_EQ(Read(out[0])[0], Saturate(dt, v))
          << "_full " << buf << " " << mxc_dtype_name(dt);
      FreeAll(&out);
    }
  }
  mxc_ndarray_free(x);
}

// A scalar operand is converted to the array's dtype by the same rule:
// 1e30 + int8 array saturates the scalar to 127 first, then adds wrapping.
TEST(IntSemantics, ScalarOperandsSaturateThenWrap) {
  mxc_op plus = nullptr;
  ASSERT_EQ(mxc_op_find("_plus_scalar", &plus), MXC_OK);
  for (int dt : kIntTypes) {
    std::vector<int64_t> a = Extremes(dt);
    for (const char *s : {"1e30", "-1e30", "nan", "3.9"}) {
      std::vector<mxc_ndarray> in = {Make(dt, a)}, out(1, nullptr);
      ASSERT_EQ(RunOp(plus, {{"scalar", s}}, in, &out, nullptr), MXC_OK)
          << mxc_last_error();
      int64_t sc = Saturate(dt, std::strtod(s, nullptr));
      std::vector<int64_t> got = Read(out[0]);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(got[i], Wrap(dt, U(Wrap(dt, U(a[i]))) + U(sc)))
            << "_plus_scalar " << s << " on " << a[i] << " "
            << mxc_dtype_name(dt);
      }
      FreeAll(&out);
      FreeAll(&in);
    }
  }
}

}  // namespace
