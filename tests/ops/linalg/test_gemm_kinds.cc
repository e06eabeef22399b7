// Every GEMM (portable loop, OpenBLAS, oneDNN) against a naive double
// loop written here, and against each other: every transpose, odd sizes,
// padded leading dimensions, accumulation, float32 and float64, small
// products (one call) and large ones (split over the kernel pool). Run
// once per MXC_GEMM value (see BUILD): the default entry point mxc__gemm
// must then use the forced GEMM, and the GEMM_* feature must say so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "ops/linalg/gemm_choice.h"

extern "C" void mxc__gemm(int dtype, int ta, int tb, int64_t m, int64_t n,
                          int64_t k, const void *a, int64_t lda, const void *b,
                          int64_t ldb, int accumulate, void *c, int64_t ldc);

namespace {

template <typename T>
std::vector<T> fill(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (T)((seed >> 8) & 0xffff) / (T)32768 - (T)1;
  }
  return v;
}

template <typename T>
constexpr int dtype_of() {
  return sizeof(T) == 4 ? MXC_DTYPE_FLOAT32 : MXC_DTYPE_FLOAT64;
}

struct Case {
  int64_t m, n, k;
  bool ta, tb, acc;
};

// The operands of one case, leading dimensions padded by 3 so that the
// parts of a split product must honour them.
template <typename T>
struct Operands {
  int64_t lda, ldb, ldc;
  std::vector<T> a, b, c0;
  explicit Operands(const Case &t)
      : lda((t.ta ? t.m : t.k) + 3),
        ldb((t.tb ? t.k : t.n) + 3),
        ldc(t.n + 3),
        a(fill<T>((size_t)((t.ta ? t.k : t.m) * lda), 1)),
        b(fill<T>((size_t)((t.tb ? t.n : t.k) * ldb), 2)),
        c0(fill<T>((size_t)(t.m * ldc), 3)) {}
};

// kind < 0: the process's choice through mxc__gemm.
template <typename T>
std::vector<T> run(int kind, const Case &t, const Operands<T> &o) {
  std::vector<T> c = o.c0;
  if (kind < 0) {
    mxc__gemm(dtype_of<T>(), t.ta, t.tb, t.m, t.n, t.k, o.a.data(), o.lda,
              o.b.data(), o.ldb, t.acc, c.data(), o.ldc);
  } else {
    mxc__gemm_using(kind, dtype_of<T>(), t.ta, t.tb, t.m, t.n, t.k,
                    o.a.data(), o.lda, o.b.data(), o.ldb, t.acc, c.data(),
                    o.ldc);
  }
  return c;
}

// The naive reference of entry (i, j), accumulated in double.
template <typename T>
double naive(const Case &t, const Operands<T> &o, int64_t i, int64_t j) {
  double s = t.acc ? (double)o.c0[(size_t)(i * o.ldc + j)] : 0.0;
  for (int64_t p = 0; p < t.k; ++p) {
    double av = t.ta ? o.a[(size_t)(p * o.lda + i)] : o.a[(size_t)(i * o.lda + p)];
    double bv = t.tb ? o.b[(size_t)(j * o.ldb + p)] : o.b[(size_t)(p * o.ldb + j)];
    s += av * bv;
  }
  return s;
}

template <typename T>
void check(int kind, const Case &t) {
  const double tol = sizeof(T) == 4 ? 1e-4 : 1e-12;
  Operands<T> o(t);
  std::vector<T> got = run<T>(kind, t, o);
  std::vector<T> portable = run<T>(MXC__GEMM_PORTABLE, t, o);
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < o.ldc; ++j) {
      size_t at = (size_t)(i * o.ldc + j);
      if (j >= t.n) {  // padding is never written
        ASSERT_EQ(got[at], o.c0[at]) << i << "," << j;
        continue;
      }
      double p = portable[at];
      ASSERT_NEAR(got[at], p, tol * (1 + std::fabs(p)))
          << "kind=" << kind << " m=" << t.m << " n=" << t.n << " k=" << t.k
          << " ta=" << t.ta << " tb=" << t.tb << " acc=" << t.acc << " at "
          << i << "," << j;
      if (kind != MXC__GEMM_PORTABLE) continue;  // checked on its own run
      double want = naive<T>(t, o, i, j);
      ASSERT_NEAR(p, want, tol * (1 + std::fabs(want)))
          << "portable m=" << t.m << " n=" << t.n << " at " << i << "," << j;
    }
  }
}

template <typename T>
void sweep(int kind) {
  // Odd small sizes run in one call; 301x97x130 and 90x333x120 exceed the
  // split threshold (rows, then columns, with a short last part).
  const int64_t sizes[][3] = {{1, 1, 1},   {7, 5, 3},     {33, 17, 65},
                              {1, 64, 31}, {301, 97, 130}, {90, 333, 120}};
  for (const auto &s : sizes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (bool acc : {false, true}) {
          check<T>(kind, Case{s[0], s[1], s[2], ta, tb, acc});
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(GemmKinds, EveryKindMatchesThePortableLoopFloat32) {
  for (int kind : {(int)MXC__GEMM_PORTABLE, (int)MXC__GEMM_OPENBLAS,
                   (int)MXC__GEMM_ONEDNN, -1}) {
    sweep<float>(kind);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmKinds, EveryKindMatchesThePortableLoopFloat64) {
  // oneDNN has no dgemm: kind onednn falls back to OpenBLAS for float64.
  for (int kind : {(int)MXC__GEMM_PORTABLE, (int)MXC__GEMM_OPENBLAS,
                   (int)MXC__GEMM_ONEDNN, -1}) {
    sweep<double>(kind);
    if (HasFatalFailure()) return;
  }
}

TEST(GemmKinds, EmptyInnerDimensionClearsOrKeeps) {
  for (int kind : {MXC__GEMM_PORTABLE, MXC__GEMM_OPENBLAS, MXC__GEMM_ONEDNN}) {
    float c[6] = {1, 2, 3, 4, 5, 6}, a[1] = {0}, b[1] = {0};
    mxc__gemm_using(kind, MXC_DTYPE_FLOAT32, 0, 0, 2, 3, 0, a, 1, b, 3, 1, c,
                    3);
    EXPECT_EQ(c[5], 6.0f);
    mxc__gemm_using(kind, MXC_DTYPE_FLOAT32, 0, 0, 2, 3, 0, a, 1, b, 3, 0, c,
                    3);
    for (float v : c) EXPECT_EQ(v, 0.0f);
  }
}

// The feature and the process's choice agree with MXC_GEMM.
TEST(GemmKinds, FeatureNamesTheForcedOrChosenGemm) {
  const char *env = getenv("MXC_GEMM");
  const char *names[] = {"GEMM_PORTABLE", "GEMM_OPENBLAS", "GEMM_ONEDNN"};
  int enabled = 0, which = -1;
  for (int k = 0; k < 3; ++k) {
    int on = -1;
    ASSERT_EQ(mxc_feature_enabled(names[k], &on), MXC_OK) << mxc_last_error();
    enabled += on;
    if (on) which = k;
  }
  ASSERT_EQ(enabled, 1) << "exactly one GEMM_* feature";
  EXPECT_EQ(which, (int)mxc__gemm_current()->f32);
  if (env && *env && strcmp(env, "auto") != 0) {
    EXPECT_STREQ(mxc__gemm_kind_name(which), env);
  }
}

}  // namespace
