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
#include "core/op/parallel.h"

#define CPU_CLONES MXC__CPU_CLONES /* core/op/common.h */

/* ---- per-type helpers where integer semantics differ ---- */

static inline float div_f32(float a, float b) { return a / b; }
static inline double div_f64(double a, double b) { return a / b; }
/* Truncating division that never traps: b = 0 gives 0 (as MXNet's integer
 * kernels do), INT64_MIN / -1 wraps. */
static inline int64_t div_i64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return mxc__wrap_neg(a);
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

/* Integer +, -, * wrap (computed in uint64_t: the same instructions);
 * the float ones are the operators themselves, inlined, so the float
 * loops vectorize as before. */
static inline float add_f32(float a, float b) { return a + b; }
static inline double add_f64(double a, double b) { return a + b; }
static inline float sub_f32(float a, float b) { return a - b; }
static inline double sub_f64(double a, double b) { return a - b; }
static inline float mul_f32(float a, float b) { return a * b; }
static inline double mul_f64(double a, double b) { return a * b; }

/* MXNet's maximum and minimum: a NaN on either side gives NaN (the left
 * one explicitly, the right one because the comparison fails), where
 * a > b ? a : b alone would drop a NaN on the left. */
static inline float max_f32(float a, float b) { return a > b || a != a ? a : b; }
static inline double max_f64(double a, double b) {
  return a > b || a != a ? a : b;
}
static inline int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline float min_f32(float a, float b) { return a < b || a != a ? a : b; }
static inline double min_f64(double a, double b) {
  return a < b || a != a ? a : b;
}
static inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

#define MXC__MAX(a, b) \
  _Generic((a), float: max_f32, double: max_f64, int64_t: max_i64)(a, b)
#define MXC__MIN(a, b) \
  _Generic((a), float: min_f32, double: min_f64, int64_t: min_i64)(a, b)
#define MXC__ADD(a, b) \
  _Generic((a), float: add_f32, double: add_f64, int64_t: mxc__wrap_add)(a, b)
#define MXC__SUB(a, b) \
  _Generic((a), float: sub_f32, double: sub_f64, int64_t: mxc__wrap_sub)(a, b)
#define MXC__MUL(a, b) \
  _Generic((a), float: mul_f32, double: mul_f64, int64_t: mxc__wrap_mul)(a, b)
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
        out[i] = MXC__ADD(out[i], (T)(f));    \
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

/* ---- threading ----
 *
 * Long rows are split over the kernel thread pool (core/op/parallel.h): each
 * chunk runs the same kernel on its own range of elements, so the result
 * is the same bits as one call. Operand i sits at i * stride for every
 * kernel, so a chunk starting at `begin` offsets each pointer by
 * begin * stride. Shorter rows (and calls made from inside another
 * parallel loop, which the pool runs inline) stay on the calling thread. */
#define PAR_MIN MXC__PAR_MIN_ELEMS
#define PAR_GRAIN MXC__PAR_GRAIN_ELEMS

typedef struct row_job {
  mxc__bin_fwd_f32 f32;
  mxc__bin_fwd_f64 f64;
  mxc__bin_bwd_f32 b32;
  mxc__bin_bwd_f64 b64;
  const void *og, *a, *b;
  int64_t sa, sb;
  void *out, *ga, *gb;
  int add, add_b;
} row_job;

#define AT(T, p, off) ((p) ? (T *)(p) + (off) : NULL)

static int row_range(void *arg, int64_t begin, int64_t end) {
  const row_job *j = arg;
  int64_t n = end - begin, oa = begin * j->sa, ob = begin * j->sb;
  if (j->f32) {
    j->f32(AT(const float, j->a, oa), j->sa, AT(const float, j->b, ob), j->sb,
           AT(float, j->out, begin), n, j->add);
  } else if (j->f64) {
    j->f64(AT(const double, j->a, oa), j->sa, AT(const double, j->b, ob),
           j->sb, AT(double, j->out, begin), n, j->add);
  } else if (j->b32) {
    j->b32(AT(const float, j->og, begin), AT(const float, j->a, oa), j->sa,
           AT(const float, j->b, ob), j->sb, AT(float, j->ga, begin),
           AT(float, j->gb, begin), n, j->add, j->add_b);
  } else {
    j->b64(AT(const double, j->og, begin), AT(const double, j->a, oa), j->sa,
           AT(const double, j->b, ob), j->sb, AT(double, j->ga, begin),
           AT(double, j->gb, begin), n, j->add, j->add_b);
  }
  return MXC_OK;
}

/* The kernels cannot fail, so neither can the loop. */
static void run_rows(row_job *j, int64_t n) {
  (void)mxc__parallel_for(n, PAR_GRAIN, mxc__parallel_threads(), row_range, j);
}

#define DEF_PAR(name, stem, f, da, db, flags, doc, ...)                        \
  static void pfwd_##name##_f32(const float *pa, int64_t sa, const float *pb,  \
                                int64_t sb, float *out, int64_t n, int add) {  \
    if (n < PAR_MIN) {                                                         \
      fwd_##name##_f32(pa, sa, pb, sb, out, n, add);                           \
      return;                                                                  \
    }                                                                          \
    row_job j = {.f32 = fwd_##name##_f32, .a = pa, .b = pb, .sa = sa,          \
                 .sb = sb, .out = out, .add = add};                            \
    run_rows(&j, n);                                                           \
  }                                                                            \
  static void pfwd_##name##_f64(const double *pa, int64_t sa,                  \
                                const double *pb, int64_t sb, double *out,     \
                                int64_t n, int add) {                          \
    if (n < PAR_MIN) {                                                         \
      fwd_##name##_f64(pa, sa, pb, sb, out, n, add);                           \
      return;                                                                  \
    }                                                                          \
    row_job j = {.f64 = fwd_##name##_f64, .a = pa, .b = pb, .sa = sa,          \
                 .sb = sb, .out = out, .add = add};                            \
    run_rows(&j, n);                                                           \
  }                                                                            \
  static void pbwd_##name##_f32(const float *og, const float *pa, int64_t sa,  \
                                const float *pb, int64_t sb, float *ga,        \
                                float *gb, int64_t n, int add_a, int add_b) {  \
    if (n < PAR_MIN) {                                                         \
      bwd_##name##_f32(og, pa, sa, pb, sb, ga, gb, n, add_a, add_b);           \
      return;                                                                  \
    }                                                                          \
    row_job j = {.b32 = bwd_##name##_f32, .og = og, .a = pa, .b = pb,          \
                 .sa = sa, .sb = sb, .ga = ga, .gb = gb, .add = add_a,         \
                 .add_b = add_b};                                              \
    run_rows(&j, n);                                                           \
  }                                                                            \
  static void pbwd_##name##_f64(const double *og, const double *pa,            \
                                int64_t sa, const double *pb, int64_t sb,      \
                                double *ga, double *gb, int64_t n, int add_a,  \
                                int add_b) {                                   \
    if (n < PAR_MIN) {                                                         \
      bwd_##name##_f64(og, pa, sa, pb, sb, ga, gb, n, add_a, add_b);           \
      return;                                                                  \
    }                                                                          \
    row_job j = {.b64 = bwd_##name##_f64, .og = og, .a = pa, .b = pb,          \
                 .sa = sa, .sb = sb, .ga = ga, .gb = gb, .add = add_a,         \
                 .add_b = add_b};                                              \
    run_rows(&j, n);                                                           \
  }
MXC__BINARY_OPS(DEF_PAR)
#undef DEF_PAR

const mxc__bin_impl mxc__bin_impls[MXC__BIN_COUNT] = {
#define DEF_IMPL(name, stem, f, da, db, flags_, doc, ...)                     \
  [MXC__BIN_##name] = {#name,           #stem,            flags_,            \
                       pfwd_##name##_f32, pfwd_##name##_f64, fwd_##name##_i64, \
                       pbwd_##name##_f32, pbwd_##name##_f64},
    MXC__BINARY_OPS(DEF_IMPL)
#undef DEF_IMPL
};
