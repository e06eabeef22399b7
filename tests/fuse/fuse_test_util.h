// Array helpers for the fusion tests, through the public C API: arrays
// from/to std::vector<double> (plain casts, independent of the library's
// conversions), operator invocation by name, and comparison.
#ifndef MXC_TESTS_FUSE_FUSE_TEST_UTIL_H_
#define MXC_TESTS_FUSE_FUSE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"

namespace fuset {

using Params = std::vector<std::pair<std::string, std::string>>;

inline std::string err() { return mxc_last_error(); }

// An owned array handle.
struct Arr {
  mxc_ndarray h = nullptr;
  Arr() = default;
  explicit Arr(mxc_ndarray x) : h(x) {}
  Arr(const Arr &) = delete;
  Arr(Arr &&o) noexcept : h(o.h) { o.h = nullptr; }
  Arr &operator=(Arr &&o) noexcept {
    std::swap(h, o.h);
    return *this;
  }
  ~Arr() { mxc_ndarray_free(h); }
};

inline size_t dtype_size(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT64:
    case MXC_DTYPE_INT64:
      return 8;
    default:
      return 4;  // float32, int32 (the dtypes these tests use)
  }
}

inline Arr make(const std::vector<int64_t> &shape,
                const std::vector<double> &v, int dt = MXC_DTYPE_FLOAT32) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dt,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK)
      << err();
  std::vector<unsigned char> b(v.size() * dtype_size(dt));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == MXC_DTYPE_FLOAT32) {
      float f = (float)v[i];
      std::memcpy(&b[i * 4], &f, 4);
    } else if (dt == MXC_DTYPE_FLOAT64) {
      std::memcpy(&b[i * 8], &v[i], 8);
    } else if (dt == MXC_DTYPE_INT32) {
      int32_t x = (int32_t)v[i];
      std::memcpy(&b[i * 4], &x, 4);
    } else {
      int64_t x = (int64_t)v[i];
      std::memcpy(&b[i * 8], &x, 8);
    }
  }
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK)
      << err();
  return Arr(h);
}

inline Arr make1(const std::vector<double> &v, int dt = MXC_DTYPE_FLOAT32) {
  return make({(int64_t)v.size()}, v, dt);
}

inline std::vector<double> read(const Arr &a) {
  int64_t n = 0;
  int dt = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_dtype(a.h, &dt), MXC_OK) << err();
  std::vector<unsigned char> b((size_t)n * dtype_size(dt));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, b.data(), b.size()), MXC_OK)
      << err();
  std::vector<double> v((size_t)n);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == MXC_DTYPE_FLOAT32) {
      float f;
      std::memcpy(&f, &b[i * 4], 4);
      v[i] = f;
    } else if (dt == MXC_DTYPE_FLOAT64) {
      std::memcpy(&v[i], &b[i * 8], 8);
    } else if (dt == MXC_DTYPE_INT32) {
      int32_t x;
      std::memcpy(&x, &b[i * 4], 4);
      v[i] = x;
    } else {
      int64_t x;
      std::memcpy(&x, &b[i * 8], 8);
      v[i] = (double)x;
    }
  }
  return v;
}

// Invokes `name`; *rc_out gets the status (or it is expected to be OK).
inline Arr invoke(const std::string &name, const std::vector<const Arr *> &in,
                  const Params &p = {}, int *rc_out = nullptr) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << err();
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  std::vector<mxc_ndarray> ins;
  for (auto *a : in) ins.push_back(a->h);
  mxc_ndarray out = nullptr;
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), ins.data(),
                         (int)ins.size(), &out, 1, nullptr);
  if (rc_out) {
    *rc_out = rc;
  } else {
    EXPECT_EQ(rc, MXC_OK) << name << ": " << err();
  }
  return Arr(out);
}

inline std::vector<double> uniform(int64_t n, double lo, double hi,
                                   unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v((size_t)n);
  for (auto &x : v) x = d(g);
  return v;
}

// |a - b| <= atol + rtol |b| elementwise; NaNs must match; infinities
// must be equal.
inline ::testing::AssertionResult close(const std::vector<double> &a,
                                        const std::vector<double> &b,
                                        double rtol, double atol) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure()
           << "sizes " << a.size() << " vs " << b.size();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ok = std::isnan(a[i]) && std::isnan(b[i]);
    } else if (std::isinf(a[i]) || std::isinf(b[i])) {
      ok = a[i] == b[i];
    } else {
      ok = std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i]);
    }
    if (!ok) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace fuset

#endif  // MXC_TESTS_FUSE_FUSE_TEST_UTIL_H_
