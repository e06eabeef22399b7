// The random kernels' cases (backends/cuda/rng.h), shared by the host test
// of their plan (test_cuda_rng_plan.cc) and the conformance cases on a GPU
// (conformance_rng.cc): operators, parameters, dtypes, shapes, and a draw
// through the public C API after a given seed and a prefix push (so the
// call's slice starts mid-stream, as in a real program).
#ifndef MXC_TESTS_GPU_RNG_CASES_H_
#define MXC_TESTS_GPU_RNG_CASES_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"

namespace mxct {

using RngKv = std::vector<std::pair<std::string, std::string>>;

struct RngCase {
  const char *op;
  int dtype;
  RngKv kv;
};

// Every sampler in each dtype it writes, with parameters that reach the
// interesting paths: a float32 range so narrow that lo + span * u rounds
// up to hi (the clamp below hi), spans beyond float's and int32's range,
// randint's span above INT64_MAX.
inline std::vector<RngCase> RngCases() {
  const int f32 = MXC_DTYPE_FLOAT32, f64 = MXC_DTYPE_FLOAT64;
  return {
      {"_random_uniform", f32, {}},
      {"_random_uniform", f32, {{"low", "-3"}, {"high", "5.5"}}},
      {"_random_uniform", f32, {{"low", "1"}, {"high", "1.0000001"}}},
      {"_random_uniform", f32, {{"low", "-3e38"}, {"high", "3e38"}}},
      {"_random_uniform", f64, {{"low", "-2.5"}, {"high", "1e10"}}},
      {"_random_uniform", f64, {{"low", "7"}, {"high", "7"}}},
      {"_random_normal", f32, {}},
      {"_random_normal", f32, {{"loc", "0.3"}, {"scale", "2.7"}}},
      {"_random_normal", f64, {{"loc", "-1e3"}, {"scale", "0.01"}}},
      {"_random_normal", f64, {}},
      {"_random_exponential", f32, {{"lam", "0.5"}}},
      {"_random_exponential", f64, {{"lam", "3"}}},
      {"_random_randint", MXC_DTYPE_INT32, {{"low", "-5"}, {"high", "17"}}},
      {"_random_randint",
       MXC_DTYPE_INT32,
       {{"low", "-2147483648"}, {"high", "2147483648"}}},
      {"_random_randint",
       MXC_DTYPE_INT64,
       {{"low", "-9000000000000000000"}, {"high", "9000000000000000000"}}},
  };
}

// Sizes around the blocks' 2 and 4 values, a large odd one, an empty one.
inline std::vector<std::vector<int64_t>> RngShapes() {
  return {{1}, {2}, {3}, {4}, {5}, {2, 3, 3}, {1031}, {0}};
}

inline size_t RngElemSize(int dtype) {
  return dtype == MXC_DTYPE_FLOAT64 || dtype == MXC_DTYPE_INT64 ? 8 : 4;
}

inline int64_t RngNumel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Values an add-mode output starts from: small numbers of the dtype.
inline std::vector<uint8_t> RngBase(int dtype, int64_t n, std::mt19937 *g) {
  std::vector<uint8_t> b((size_t)n * RngElemSize(dtype));
  std::uniform_int_distribution<int> k(-50, 50);
  for (int64_t i = 0; i < n; ++i) {
    double v = k(*g) / 8.0;
    if (dtype == MXC_DTYPE_FLOAT32) {
      float f = (float)v;
      std::memcpy(&b[(size_t)i * 4], &f, 4);
    } else if (dtype == MXC_DTYPE_FLOAT64) {
      std::memcpy(&b[(size_t)i * 8], &v, 8);
    } else if (dtype == MXC_DTYPE_INT32) {
      int32_t x = k(*g);
      std::memcpy(&b[(size_t)i * 4], &x, 4);
    } else {
      int64_t x = k(*g);
      std::memcpy(&b[(size_t)i * 8], &x, 8);
    }
  }
  return b;
}

// The seed and the prefix pushed before a case's call: the call's slice
// then starts at block prefix + 1 (core/op/invoke.c reserves elements + 1
// values of 4 words, a block each, per call).
constexpr uint64_t kRngSeed = 0x0123456789abcdefULL;
constexpr int64_t kRngPrefix = 6;

// Seeds, pushes a uniform of kRngPrefix float32 elements, then the case's
// call on (dev_type, 0) with the output starting from *io (its bytes; the
// result replaces them). MXC_OK or the failing call's code.
inline int RngDraw(const RngCase &c, int dev_type,
                   const std::vector<int64_t> &shape, int req,
                   std::vector<uint8_t> *io) {
  int rc = mxc_random_seed(kRngSeed);
  mxc_op uni = nullptr, op = nullptr;
  if (rc == MXC_OK) rc = mxc_op_find("_random_uniform", &uni);
  if (rc == MXC_OK) rc = mxc_op_find(c.op, &op);
  if (rc != MXC_OK) return rc;
  mxc_ndarray pre = nullptr, out = nullptr;
  int64_t np = kRngPrefix;
  rc = mxc_ndarray_create(&np, 1, MXC_DTYPE_FLOAT32, dev_type, 0, 0, &pre);
  if (rc == MXC_OK) rc = mxc_op_invoke(uni, nullptr, nullptr, 0, nullptr, 0,
                                       &pre, 1, nullptr);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(shape.data(), (int)shape.size(), c.dtype,
                            dev_type, 0, 0, &out);
  }
  if (rc == MXC_OK && !io->empty()) {
    rc = mxc_ndarray_copy_from_host(out, io->data(), io->size());
  }
  std::vector<const char *> k, v;
  for (const auto &p : c.kv) k.push_back(p.first.c_str());
  for (const auto &p : c.kv) v.push_back(p.second.c_str());
  if (rc == MXC_OK) {
    rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), nullptr, 0,
                       &out, 1, &req);
  }
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  if (rc == MXC_OK && !io->empty()) {
    rc = mxc_ndarray_copy_to_host(out, io->data(), io->size());
  }
  if (pre) mxc_ndarray_free(pre);
  if (out) mxc_ndarray_free(out);
  return rc;
}

inline std::string RngWhat(const RngCase &c, size_t n, int req) {
  std::string s = std::string(c.op) + " dtype " + std::to_string(c.dtype);
  for (const auto &p : c.kv) s += " " + p.first + "=" + p.second;
  return s + " size " + std::to_string(n) +
         (req == MXC_REQ_ADD ? " add" : " write");
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_RNG_CASES_H_
