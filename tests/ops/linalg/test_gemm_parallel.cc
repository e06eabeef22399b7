// mxc__gemm on products large enough to be split across the kernel pool
// (by rows of C when m >= n, by columns otherwise), every transpose
// combination, padded leading dimensions and accumulation, against a
// naive double loop written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "mxc/mxc.h"

// From ops/linalg/linalg.h, which C++ cannot include (C11 atomics in the
// headers it pulls in).
extern "C" void mxc__gemm(int dtype, int ta, int tb, int64_t m, int64_t n,
                          int64_t k, const void *a, int64_t lda, const void *b,
                          int64_t ldb, int accumulate, void *c, int64_t ldc);

namespace {

// Deterministic values in [-1, 1).
std::vector<float> fill(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  return v;
}

void check_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                bool acc) {
  // Leading dimensions padded by 3 so that parts must honour them.
  int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
  std::vector<float> a = fill((size_t)((ta ? k : m) * lda), 1);
  std::vector<float> b = fill((size_t)((tb ? n : k) * ldb), 2);
  std::vector<float> c = fill((size_t)(m * ldc), 3);
  std::vector<float> c0 = c;
  mxc__gemm(MXC_DTYPE_FLOAT32, ta, tb, m, n, k, a.data(), lda, b.data(), ldb,
            acc, c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      float got = c[(size_t)(i * ldc + j)];
      if (j >= n) {  // padding is never written
        ASSERT_EQ(got, c0[(size_t)(i * ldc + j)]) << i << "," << j;
        continue;
      }
      double s = acc ? c0[(size_t)(i * ldc + j)] : 0.0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[(size_t)(p * lda + i)] : a[(size_t)(i * lda + p)];
        double bv = tb ? b[(size_t)(j * ldb + p)] : b[(size_t)(p * ldb + j)];
        s += av * bv;
      }
      ASSERT_NEAR(got, s, 1e-4 * (1 + std::fabs(s)))
          << "m=" << m << " n=" << n << " ta=" << ta << " tb=" << tb
          << " acc=" << acc << " at " << i << "," << j;
    }
  }
}

TEST(GemmParallel, SplitRowsAndColumnsMatchNaive) {
  // 301x97x130 and 90x333x120 exceed the split threshold (2^21 flops);
  // odd sizes leave a short last part.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool acc : {false, true}) {
        check_gemm(301, 97, 130, ta, tb, acc);
        check_gemm(90, 333, 120, ta, tb, acc);
      }
    }
  }
}

}  // namespace
