// Helpers for the indexing family's tests: the index rules written out
// independently of the library, gradients with chosen output gradients,
// and error checks.
#ifndef MXC_TESTS_OPS_INDEXING_INDEXING_TEST_UTIL_H_
#define MXC_TESTS_OPS_INDEXING_INDEXING_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace mxct {

// An index value as MXNet reads it: truncated toward zero.
inline int64_t trunc_index(double v) { return (int64_t)std::trunc(v); }

// Index v into an axis of extent n: "clip" clamps, "wrap" is Python's
// modulo, "raise" accepts -n..n-1 and gives -1 otherwise.
inline int64_t fix_index(double raw, int64_t n, const std::string &mode) {
  int64_t v = trunc_index(raw);
  if (mode == "wrap") return ((v % n) + n) % n;
  if (mode == "raise") {
    if (v < -n || v >= n) return -1;
    return v < 0 ? v + n : v;
  }
  return v < 0 ? 0 : (v >= n ? n - 1 : v);
}

// Gradients of `name` w.r.t. its inputs for the given output gradients,
// through the operator's own gradient (float64 throughout). has[i] is
// false when input i gets no gradient.
struct Grads {
  std::vector<std::vector<double>> g;
  std::vector<bool> has;
};

inline Grads grads_of(const std::string &name, const std::vector<Shape> &shapes,
                      const std::vector<std::vector<double>> &values,
                      const Params &p,
                      const std::vector<std::vector<double>> &ograds) {
  Grads res;
  std::vector<Arr> in, og;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  auto out = invoke(name, ptrs, p);
  EXPECT_EQ(out.size(), ograds.size());
  if (out.size() != ograds.size()) return res;
  for (size_t k = 0; k < out.size(); ++k)
    og.push_back(make(out[k].shape(), ograds[k], MXC_DTYPE_FLOAT64));
  std::vector<const char *> keys, vals;
  for (auto &kv : p) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  std::vector<mxc_ndarray> iin, iout, iog, ig(in.size(), nullptr);
  for (auto &a : in) iin.push_back(a.h);
  for (auto &a : out) iout.push_back(a.h);
  for (auto &a : og) iog.push_back(a.h);
  int rc = mxct_grad_eval(name.c_str(), keys.data(), vals.data(),
                          (int)keys.size(), iin.data(), (int)iin.size(),
                          iout.data(), (int)iout.size(), iog.data(),
                          ig.data());
  EXPECT_EQ(rc, MXC_OK) << err();
  for (auto h : ig) {
    Arr a(h);
    res.has.push_back(h != nullptr);
    res.g.push_back(h ? read(a) : std::vector<double>());
  }
  return res;
}

// Asserts that an invoke failed with `code` and a message holding every
// one of `parts`.
inline void expect_error(const std::string &name,
                         const std::vector<const Arr *> &in, const Params &p,
                         int code, const std::vector<std::string> &parts) {
  int rc = 0;
  auto out = invoke(name, in, p, &rc);
  EXPECT_EQ(rc, code) << name << ": " << err();
  EXPECT_TRUE(out.empty());
  std::string msg = err();
  for (auto &s : parts)
    EXPECT_NE(msg.find(s), std::string::npos)
        << name << ": '" << s << "' not in: " << msg;
}

// Waits on an array that an asynchronous failure should have reached and
// checks the message; then clears every pending failure. The code is the
// kernel's own (MXC_ERR_INVALID_ARGUMENT) or MXC_ERR_OPERATOR, depending
// on whether the engine keeps kernel codes.
inline void expect_async_error(const Arr &a,
                               const std::vector<std::string> &parts) {
  int rc = mxc_ndarray_wait_to_read(a.h);
  EXPECT_TRUE(rc == MXC_ERR_OPERATOR || rc == MXC_ERR_INVALID_ARGUMENT)
      << mxc_error_name(rc) << ": " << err();
  std::string msg = err();
  for (auto &s : parts)
    EXPECT_NE(msg.find(s), std::string::npos)
        << "'" << s << "' not in: " << msg;
  mxc_wait_all();
}

// Values with a dtype's precision (what the library sees after make()).
inline std::vector<double> as_dtype(const std::vector<double> &v, int dt) {
  return decode(encode(v, dt), dt);
}

}  // namespace mxct

#endif  // MXC_TESTS_OPS_INDEXING_INDEXING_TEST_UTIL_H_
