// Typed conformance calls (tests/gpu/conformance_mp.cc,
// conformance_fill.cc): arrays of any dtype as bytes, one call on the CPU
// and on a device with the same inputs, compared bitwise (GPU outputs in
// mode WRITE poisoned first; every output and input compared).
#ifndef MXC_TESTS_GPU_TYPED_CASES_H_
#define MXC_TESTS_GPU_TYPED_CASES_H_

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/gpu/half_test_util.h"

namespace mxct {

using Bytes = std::vector<uint8_t>;
using Dims = std::vector<int64_t>;
using Kv = std::vector<std::pair<std::string, std::string>>;

// One array of a call: dtype, shape, contents.
struct TArr {
  int dt;
  Dims d;
  Bytes b;
};

inline size_t Numel(const Dims &d) {
  size_t n = 1;
  for (int64_t v : d) n *= (size_t)v;
  return n;
}

// Uniform values in [lo, hi) (float32 draws) as an array of dtype dt.
inline TArr RandArr(int dt, const Dims &d, float lo, float hi,
                    std::mt19937 *g) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<double> v(Numel(d));
  for (auto &x : v) x = u(*g);
  return {dt, d, CastBytes(dt, v)};
}

inline mxc_ndarray MakeOn(const TArr &a, int dev) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(
      mxc_ndarray_create(a.d.data(), (int)a.d.size(), a.dt, dev, 0, 0, &h),
      MXC_OK)
      << mxc_last_error();
  if (h && !a.b.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(h, a.b.data(), a.b.size()), MXC_OK)
        << mxc_last_error();
  }
  return h;
}

// Runs op on dev over ins (read back after the call: states) and outs
// (initial values, then the results); alias[w] >= 0: output w is that
// input's array (in place).
inline int RunTyped(const char *name, const Kv &kv, int dev,
                    std::vector<TArr> *ins, std::vector<TArr> *outs,
                    const std::vector<int> &req,
                    const std::vector<int> &alias) {
  mxc_op op = nullptr;
  if (mxc_op_find(name, &op) != MXC_OK) return MXC_ERR_NOT_FOUND;
  std::vector<const char *> k, v;
  for (const auto &p : kv) k.push_back(p.first.c_str());
  for (const auto &p : kv) v.push_back(p.second.c_str());
  std::vector<mxc_ndarray> a, o;
  for (const TArr &x : *ins) a.push_back(MakeOn(x, dev));
  for (size_t w = 0; w < outs->size(); ++w) {
    o.push_back(alias[w] >= 0 ? a[alias[w]] : MakeOn((*outs)[w], dev));
  }
  int rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), a.data(),
                         (int)a.size(), o.data(), (int)o.size(), req.data());
  auto back = [&rc](mxc_ndarray x, TArr *y) {
    if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(x);
    if (rc == MXC_OK && !y->b.empty()) {
      rc = mxc_ndarray_copy_to_host(x, y->b.data(), y->b.size());
    }
  };
  for (size_t w = 0; w < o.size(); ++w) back(o[w], &(*outs)[w]);
  for (size_t i = 0; i < a.size(); ++i) back(a[i], &(*ins)[i]);
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  for (size_t w = 0; w < o.size(); ++w) {
    if (alias[w] < 0) mxc_ndarray_free(o[w]);
  }
  return rc;
}

// gpu against cpu element by element (poison: never written): bitwise,
// or for float32 with ulps > 0 within ulps float ulps of max(|cpu|, 1)
// (the absolute floor: the cases' values are of order 1, and a gradient
// y (g - sum) that cancels keeps an error of its terms' size).
inline void ExpectBits(const std::string &what, const TArr &gpu,
                       const TArr &cpu, int ulps = 0) {
  ASSERT_EQ(gpu.b.size(), cpu.b.size()) << what;
  size_t es = ElemSize(gpu.dt);
  Bytes poison = PoisonBytes(gpu.dt, 1);
  for (size_t i = 0; i * es < gpu.b.size(); ++i) {
    if (std::memcmp(&gpu.b[i * es], &cpu.b[i * es], es) == 0) continue;
    bool poisoned = std::memcmp(&gpu.b[i * es], poison.data(), es) == 0;
    double a = ElemAt(gpu.dt, gpu.b, i), b = ElemAt(cpu.dt, cpu.b, i);
    if (!poisoned && ulps > 0 && gpu.dt == MXC_DTYPE_FLOAT32 &&
        std::fabs(a - b) <= ulps * FLT_EPSILON * std::fmax(std::fabs(b), 1.)) {
      continue;
    }
    if (std::memcmp(&gpu.b[i * es], poison.data(), es) == 0) {
      ADD_FAILURE() << what << ": element " << i << " was never written";
    } else {
      ADD_FAILURE() << what << ": element " << i << " is "
                    << ElemAt(gpu.dt, gpu.b, i) << " on the GPU, "
                    << ElemAt(cpu.dt, cpu.b, i) << " on the CPU";
    }
    return;
  }
}

// One call on the CPU and on dev from the same inputs; GPU outputs in
// mode WRITE poisoned first; every output and input compared (outputs
// within ulps, ExpectBits).
inline void CompareTyped(int dev, const std::string &what, const char *op,
                         const Kv &kv, const std::vector<TArr> &in,
                         const std::vector<TArr> &out,
                         const std::vector<int> &req,
                         const std::vector<int> &alias, int ulps = 0) {
  std::vector<TArr> ci = in, gi = in, co = out, go = out;
  for (size_t w = 0; w < go.size(); ++w) {
    if (req[w] == MXC_REQ_WRITE && alias[w] < 0) {
      go[w].b = PoisonBytes(go[w].dt, Numel(go[w].d));
    }
  }
  ASSERT_EQ(RunTyped(op, kv, MXC_DEVICE_CPU, &ci, &co, req, alias), MXC_OK)
      << what << " on the CPU: " << mxc_last_error();
  ASSERT_EQ(RunTyped(op, kv, dev, &gi, &go, req, alias), MXC_OK)
      << what << " on the GPU: " << mxc_last_error();
  for (size_t w = 0; w < co.size(); ++w) {
    ExpectBits(what + " output " + std::to_string(w), go[w], co[w], ulps);
  }
  for (size_t i = 0; i < ci.size(); ++i) {
    ExpectBits(what + " input " + std::to_string(i) + " after", gi[i], ci[i]);
  }
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_TYPED_CASES_H_
