/* Typed row kernels generated from MXC__BINARY_OPS.
 *
 * Forward kernels come in float, double and int64_t; backward kernels in
 * float and double. The float and double forward kernels are the hot
 * loops: each specialises the four stride cases so that the inner loops
 * have unit or zero strides and vectorize (BUILD enables the vectorizer's
 * dynamic cost model), and is compiled three times (AVX-512F, AVX2,
 * baseline x86-64) with the best version picked at load time. */
#include <tgmath.h>

#include "ops/binary/binary.h"

#define CPU_CLONES MXC__CPU_CLONES /* ops/common.h */

/* ---- per-type helpers where integer semantics differ ---- */

static inline float div_f32(float a, float b) { return a / b; }
static inline double div_f64(double a, double b) { return a / b; }
/* Truncating division that never traps: b = 0 gives 0 (as MXNet's integer
 * kernels do), INT64_MIN / -1 wraps. */
static inline int64_t div_i64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  return a / b;
}

/* Python-style modulo: the result takes the divisor's sign; b = 0 gives
 * 0 (MXNet's convention, rather than NaN). */
static inline float mod_f32(float a, float b) {
  if (b == 0) return 0;
  float r = fmodf(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline double mod_f64(double a, double b) {
  if (b == 0) return 0;
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline int64_t mod_i64(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0; /* -1: INT64_MIN % -1 would trap */
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* Exact integer power by squaring (wrapping on overflow, like the other
 * integer kernels). Negative exponents give the truncated reciprocal:
 * 1 for a = 1, +-1 for a = -1, 0 otherwise (0^negative gives 0 too). */
static inline int64_t pow_i64(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t base = (uint64_t)a, r = 1;
  for (uint64_t e = (uint64_t)b; e; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return (int64_t)r;
}

#define MXC__DIV(a, b) \
  _Generic((a), float: div_f32, double: div_f64, int64_t: div_i64)(a, b)
#define MXC__MOD(a, b) \
  _Generic((a), float: mod_f32, double: mod_f64, int64_t: mod_i64)(a, b)
#define MXC__POW(a, b) \
  _Generic((a), float: powf, double: pow, int64_t: pow_i64)(a, b)

/* ---- forward ---- */

/* One write-mode loop; A and B give operand i. */
#define FWD_LOOP(T, f, A, B)                  \
  do {                                        \
    if (add) {                                \
      for (int64_t i = 0; i < n; ++i) {       \
        const T a = (A), b = (B);             \
        out[i] += (T)(f);                     \
      }                                       \
    } else {                                  \
      for (int64_t i = 0; i < n; ++i) {       \
        const T a = (A), b = (B);             \
        out[i] = (T)(f);                      \
      }                                       \
    }                                         \
  } while (0)

/* A stride-0 operand is read once into a local so that the loop sees a
 * loop-invariant value instead of a load through a maybe-aliased
 * pointer. */
#define DEF_FWD(T, sfx, attr, name, f)                                        \
  static attr void fwd_##name##_##sfx(const T *pa, int64_t sa, const T *pb, \
                                      int64_t sb, T *out, int64_t n,         \
                                      int add) {                             \
    if (sa && sb) {                                                          \
      FWD_LOOP(T, f, pa[i], pb[i]);                                          \
    } else if (sa) {                                                         \
      const T y = pb[0];                                                     \
      FWD_LOOP(T, f, pa[i], y);                                              \
    } else if (sb) {                                                         \
      const T x = pa[0];                                                     \
      FWD_LOOP(T, f, x, pb[i]);                                              \
    } else {                                                                 \
      const T x = pa[0], y = pb[0];                                          \
      FWD_LOOP(T, f, x, y);                                                  \
    }                                                                        \
  }

/* ---- backward ---- */

#define BWD_LOOP(T, g, d, add_g, A, B)        \
  do {                                        \
    if (add_g) {                              \
      for (int64_t i = 0; i < n; ++i) {       \
        const T a = (A), b = (B);             \
        (void)a, (void)b;                     \
        g[i] += og[i] * (T)(d);               \
      }                                       \
    } else {                                  \
      for (int64_t i = 0; i < n; ++i) {       \
        const T a = (A), b = (B);             \
        (void)a, (void)b;                     \
        g[i] = og[i] * (T)(d);                \
      }                                       \
    }                                         \
  } while (0)

/* The unit-stride case (same-shape gradients) gets its own loop so that
 * it vectorizes; other strides index generally. */
#define BWD_ONE(T, g, d, add_g)                                   \
  do {                                                            \
    if (sa == 1 && sb == 1) {                                     \
      BWD_LOOP(T, g, d, add_g, pa[i], pb[i]);                     \
    } else {                                                      \
      BWD_LOOP(T, g, d, add_g, pa[i * sa], pb[i * sb]);           \
    }                                                             \
  } while (0)

#define DEF_BWD(T, sfx, name, da, db)                                        \
  static void bwd_##name##_##sfx(const T *og, const T *pa, int64_t sa,      \
                                 const T *pb, int64_t sb, T *ga, T *gb,     \
                                 int64_t n, int add_a, int add_b) {         \
    if (ga) BWD_ONE(T, ga, da, add_a);                                      \
    if (gb) BWD_ONE(T, gb, db, add_b);                                      \
  }

#define DEF_KERNELS(name, stem, f, da, db, flags, doc, ...) \
  DEF_FWD(float, f32, CPU_CLONES, name, f)                  \
  DEF_FWD(double, f64, CPU_CLONES, name, f)                 \
  DEF_FWD(int64_t, i64, , name, f)                          \
  DEF_BWD(float, f32, name, da, db)                         \
  DEF_BWD(double, f64, name, da, db)
MXC__BINARY_OPS(DEF_KERNELS)
#undef DEF_KERNELS

const mxc__bin_impl mxc__bin_impls[MXC__BIN_COUNT] = {
#define DEF_IMPL(name, stem, f, da, db, flags_, doc, ...)                  \
  [MXC__BIN_##name] = {#name,         #stem,         flags_,              \
                       fwd_##name##_f32, fwd_##name##_f64, fwd_##name##_i64, \
                       bwd_##name##_f32, bwd_##name##_f64},
    MXC__BINARY_OPS(DEF_IMPL)
#undef DEF_IMPL
};
