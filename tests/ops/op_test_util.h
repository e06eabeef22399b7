// Helpers for operator tests: arrays from/to std::vector<double>, invoke
// by name through the public C API, and a finite-difference gradient
// check through the operator's own gradient function (mxc__grad_eval).
#ifndef MXC_TESTS_OPS_OP_TEST_UTIL_H_
#define MXC_TESTS_OPS_OP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mxc/mxc.h"

#include "tests/ops/grad_shim.h"

namespace mxct {

using Shape = std::vector<int64_t>;
using Params = std::vector<std::pair<std::string, std::string>>;

inline std::string err() { return mxc_last_error(); }

inline int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

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
  Shape shape() const {
    int nd;
    const int64_t *d;
    EXPECT_EQ(mxc_ndarray_shape(h, &nd, &d), MXC_OK);
    return Shape(d, d + nd);
  }
  int dtype() const {
    int t = -1;
    mxc_ndarray_dtype(h, &t);
    return t;
  }
};

// Element conversion through the library's own dtype handling would not be
// independent; convert here with plain casts (half types via float bits).
std::vector<unsigned char> encode(const std::vector<double> &v, int dtype);
std::vector<double> decode(const std::vector<unsigned char> &b, int dtype);

Arr make(const Shape &s, const std::vector<double> &v,
         int dtype = MXC_DTYPE_FLOAT32);
std::vector<double> read(const Arr &a);

// Invokes op `name`; outputs are created by the call.
std::vector<Arr> invoke(const std::string &name, const std::vector<const Arr *> &in,
                        const Params &p = {}, int *rc_out = nullptr);

// As invoke, with an explicit output count (e.g. all outputs, hidden ones
// included; -1: the visible count).
std::vector<Arr> invoke_count(const std::string &name,
                          const std::vector<const Arr *> &in, const Params &p,
                          int n_out, int *rc_out = nullptr);

// Uniform values in [lo, hi) from a fixed seed.
std::vector<double> uniform(int64_t n, double lo, double hi, unsigned seed = 1);

// Checks the gradient of `name` at the float64 inputs by central
// differences of L = sum_k ograd_k . out_k with random ograds. Every input
// must get a gradient of its shape, except those listed in `skip` (inputs
// without a gradient by design, or not to be checked).
void grad_check(const std::string &name, const std::vector<Shape> &shapes,
                const std::vector<std::vector<double>> &values,
                const Params &p = {}, double eps = 1e-6, double rtol = 1e-4,
                double atol = 1e-6, std::vector<int> skip = {});

// grad_check with default tolerances, skipping the listed inputs (those
// without a gradient by design: labels, indices, conditions).
void grad_check_except(const std::string &name,
                       const std::vector<Shape> &shapes,
                       const std::vector<std::vector<double>> &values,
                       const Params &p, std::vector<int> skip);

}  // namespace mxct

#endif  // MXC_TESTS_OPS_OP_TEST_UTIL_H_
