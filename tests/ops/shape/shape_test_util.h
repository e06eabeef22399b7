// Helpers for the shape family's tests: arrays of raw bytes (to check that
// data movement keeps every bit of every dtype), N-d index arithmetic for
// the naive references, and a checker that runs an operator on all nine
// dtypes and compares each output element with the input element a
// reference index map names.
#ifndef MXC_TESTS_OPS_SHAPE_SHAPE_TEST_UTIL_H_
#define MXC_TESTS_OPS_SHAPE_SHAPE_TEST_UTIL_H_

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace shpt {

using mxct::Arr;
using mxct::Params;
using mxct::Shape;
using Bytes = std::vector<unsigned char>;
using Index = std::vector<int64_t>;

inline const std::vector<int> &all_dtypes() {
  static const std::vector<int> k = {
      MXC_DTYPE_FLOAT32,  MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT16,
      MXC_DTYPE_BFLOAT16, MXC_DTYPE_UINT8,   MXC_DTYPE_INT8,
      MXC_DTYPE_INT32,    MXC_DTYPE_INT64,   MXC_DTYPE_BOOL};
  return k;
}

inline size_t esize(int dt) { return (size_t)mxc_dtype_size(dt); }

// Random bytes for n elements: any bit pattern (NaN payloads, -0.0,
// denormals included) except bool, which holds 0 or 1.
inline Bytes random_bytes(int64_t n, int dt, unsigned seed) {
  std::mt19937 g(seed);
  Bytes b((size_t)n * esize(dt));
  for (auto &c : b) c = (unsigned char)(g() & 0xff);
  if (dt == MXC_DTYPE_BOOL)
    for (auto &c : b) c &= 1;
  return b;
}

inline Arr make_raw(const Shape &s, int dt, const Bytes &b) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(
      mxc_ndarray_create(s.data(), (int)s.size(), dt, MXC_DEVICE_CPU, 0, 0, &h),
      MXC_OK)
      << mxct::err();
  if (!b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK)
        << mxct::err();
  }
  return Arr(h);
}

inline Bytes raw(const Arr &a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK);
  Bytes b((size_t)n * esize(a.dtype()));
  if (!b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, b.data(), b.size()), MXC_OK)
        << mxct::err();
  }
  return b;
}

inline Index unravel(int64_t flat, const Shape &s) {
  Index idx(s.size());
  for (int k = (int)s.size() - 1; k >= 0; --k) {
    idx[k] = s[k] ? flat % s[k] : 0;
    flat = s[k] ? flat / s[k] : 0;
  }
  return idx;
}

inline int64_t ravel(const Index &idx, const Shape &s) {
  int64_t f = 0;
  for (size_t k = 0; k < s.size(); ++k) f = f * s[k] + idx[k];
  return f;
}

inline std::string str(const Shape &s) {
  std::string r = "(";
  for (size_t k = 0; k < s.size(); ++k)
    r += (k ? "," : "") + std::to_string(s[k]);
  return r + ")";
}

inline std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v((size_t)n);
  for (int64_t i = 0; i < n; ++i) v[(size_t)i] = start + (double)i;
  return v;
}

// Output element at index o (of out_shape) comes from input element
// map(o) (a flat index into the input).
using IndexMap = std::function<int64_t(const Index &o)>;

// Runs `name` on random-byte inputs of every dtype; checks the output
// shape and that every output element is bitwise the mapped input element.
inline void check_gather(const std::string &name, const Params &p,
                         const Shape &in, const Shape &out,
                         const IndexMap &map) {
  SCOPED_TRACE(name + " on " + str(in));
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("dtype " + std::to_string(dt));
    Bytes ib = random_bytes(mxct::numel(in), dt, 17u + (unsigned)dt);
    Arr a = make_raw(in, dt, ib);
    auto res = mxct::invoke(name, {&a}, p);
    ASSERT_EQ(res.size(), 1u);
    ASSERT_EQ(res[0].shape(), out);
    ASSERT_EQ(res[0].dtype(), dt);
    Bytes ob = raw(res[0]);
    const size_t es = esize(dt);
    for (int64_t f = 0; f < mxct::numel(out); ++f) {
      int64_t src = map(unravel(f, out));
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], &ib[(size_t)src * es], es), 0)
          << "output element " << f << " should be input element " << src;
    }
  }
}

// grad_check, after making sure exactly the inputs in no_grad get no
// gradient (slice_like's shape_like, broadcast_like's rhs).
inline void check_grad(const std::string &name,
                       const std::vector<Shape> &shapes,
                       const std::vector<std::vector<double>> &values,
                       const Params &p = {}, std::vector<int> no_grad = {}) {
  SCOPED_TRACE("gradient of " + name);
  std::vector<Arr> in;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(mxct::make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  auto out = mxct::invoke(name, ptrs, p);
  ASSERT_FALSE(out.empty());
  std::vector<Arr> og;
  std::vector<mxc_ndarray> hin, hout, hog;
  for (auto &a : in) hin.push_back(a.h);
  for (auto &o : out) {
    og.push_back(mxct::make(
        o.shape(), std::vector<double>((size_t)mxct::numel(o.shape()), 1.0),
        MXC_DTYPE_FLOAT64));
    hout.push_back(o.h);
    hog.push_back(og.back().h);
  }
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  std::vector<mxc_ndarray> g(in.size(), nullptr);
  ASSERT_EQ(mxct_grad_eval(name.c_str(), k.data(), v.data(), (int)k.size(),
                           hin.data(), (int)hin.size(), hout.data(),
                           (int)hout.size(), hog.data(), g.data()),
            MXC_OK)
      << mxct::err();
  for (size_t i = 0; i < g.size(); ++i) {
    Arr gi(g[i]);
    bool none = false;
    for (int j : no_grad) none |= (size_t)j == i;
    EXPECT_EQ(gi.h == nullptr, none) << "input " << i;
    if (gi.h) {
      EXPECT_EQ(gi.shape(), shapes[i]) << "input " << i;
    }
  }
  mxct::grad_check_except(name, shapes, values, p, no_grad);
}

}  // namespace shpt

#endif  // MXC_TESTS_OPS_SHAPE_SHAPE_TEST_UTIL_H_
