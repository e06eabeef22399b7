#include "core/op/vmath.h"

#include <math.h>
#include <string.h>

#include "core/base/error.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "core/op/special_hd.h"

/* One text with the CUDA plug-in's kernels (special_hd.h). */
double mxc__erfinv(double x) { return mxc__sp_erfinv(x); }

double mxc__digamma(double x) { return mxc__sp_digamma(x); }

/* ---- fast float32 maps ----
 *
 * Written with GCC vector extensions over 16 floats (one AVX-512
 * register, two AVX2 or four SSE ones; MXC__CPU_CLONES picks the clone at
 * load time). No -ffast-math: every clone gives the same bits.
 *
 * e^y = 2^n * (1 + q) with n = round(y / ln 2), r = y - n ln 2 in
 * [-ln2/2, ln2/2] (ln 2 in two parts, Cody and Waite, so n * ln2_hi is
 * exact for |n| <= 151) and q = e^r - 1 its Taylor polynomial of degree 8
 * (truncation below 0.05 ulp of q). Keeping q separate from the 1 lets
 * tanh use expm1(y) = 2^n q + (2^n - 1) without cancellation near 0:
 * tanh|x| = expm1(2|x|) / (expm1(2|x|) + 2), within about 3 ulp of
 * tanhf. Constants are clamped on their bit patterns with integer
 * operations, which keeps the loops branch-free (float comparisons with
 * constants became control flow and stopped the vectorizer). */

/* Helpers take and give vectors through pointers, never by value: GCC
 * notes (-Wpsabi) that a 64-byte vector argument or result is passed
 * differently with and without AVX-512, and it does so for every such
 * function it compiles, inlined or not. Inlined, the pointers cost
 * nothing: the vectors stay in registers. */
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef uint32_t vu __attribute__((vector_size(64)));
#define VN 16
/* Helpers must be inlined into the clones, or they run as baseline code. */
#define INLINE static inline __attribute__((always_inline))

#define EXP_CLAMP_BITS 0x42d00000u  /* 104.0f: exp overflows/underflows */
#define TANH_CLAMP_BITS 0x41200000u /* 10.0f: tanh(10) rounds to 1 */

#define SPLAT(s) ((vf){0} + (s))
/* a where mask m is all ones, b where it is zero. */
#define VSELECT(m, a, b) ((vf)(((vi)(a) & (m)) | ((vi)(b) & ~(m))))

/* Lane masks (all ones or zero) from the bits alone, with shifts and no
 * compares: GCC 12 compiles an OR of two vector compares, and float
 * compares on AVX2, into one scalar compare per lane (relu ran 2.5x slower
 * than a batch norm over the same array). VNAN_MASK: the lane is NaN
 * (0x7f800000 - |bits| is negative); VPOS_MASK: the lane's bits as a
 * signed int are > 0, that is x > 0 or x a NaN with the sign clear. */
#define VNAN_MASK(v) \
  (((vi){0} + 0x7f800000 - (vi)((vu)(v) & 0x7fffffffu)) >> 31)
#define VPOS_MASK(v) (~(((vi)(v) | (vi)((vu)(v) - 1u)) >> 31))
/* a < c, for a and c in [0, 2^31). */
#define VBELOW_MASK(a, c) (((vi)(a) - (int32_t)(c)) >> 31)

/* 2^n for n + 127 in [1, 254]. */
#define POW2(n) ((vf)((vu)((n) + 127) << 23))

/* *q = e^r - 1 and *n for *y (|y| <= 104, not NaN); see above. */
INLINE void exp_parts(const vf *y, vf *q, vi *n) {
  const float shifter = 12582912.0f; /* 1.5 * 2^23: rounds to integer */
  vf t = *y * 1.44269504088896341f + shifter;
  vf nf = t - shifter;
  *n = (vi)((vu)t - 0x4b400000u); /* bits of shifter */
  vf r = *y - nf * 0.693359375f;
  r = r - nf * -2.12194440054690583e-4f;
  vf p = SPLAT(1.0f / 40320);
  p = p * r + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  *q = p * r;
}

/* *v = e^*v. */
INLINE void vexp(vf *v) {
  vu ux = (vu)*v, ax = ux & 0x7fffffffu;
  vu nan_bits = ax & (vu)VNAN_MASK(ax);
  vu lim = (vu)VBELOW_MASK(ax, EXP_CLAMP_BITS);
  ax = (ax & lim) | (EXP_CLAMP_BITS & ~lim);
  vf xc = (vf)(ax | nan_bits | (ux & 0x80000000u)), q;
  vi n;
  exp_parts(&xc, &q, &n);
  /* 2^n as two normal factors, so overflow gives inf and underflow a
   * subnormal or 0 with one rounding (|n| <= 151). */
  vi n1 = n >> 1;
  *v = (q + 1.0f) * POW2(n1) * POW2(n - n1);
}

/* *v = 1 / (1 + e^-*v). */
INLINE void vsigmoid(vf *v) {
  vf e = -*v;
  vexp(&e);
  *v = 1.0f / (1.0f + e);
}

/* *v = tanh *v. */
INLINE void vtanh(vf *v) {
  vu ux = (vu)*v, ax = ux & 0x7fffffffu;
  vi is_nan = VNAN_MASK(ax);
  vu lim = (vu)VBELOW_MASK(ax, TANH_CLAMP_BITS);
  ax = (ax & lim) | (TANH_CLAMP_BITS & ~lim);
  vf y = (vf)ax * 2.0f, q; /* in [0, 20]: n in [0, 29] */
  vi n;
  exp_parts(&y, &q, &n);
  /* s - 1 is exact up to n = 24; beyond that e is so large that the
   * quotient rounds to 1 anyway. */
  vf s = POW2(n);
  vf e = s * q + (s - 1.0f);
  vf t = e / (e + 2.0f);
  t = (vf)((vu)t | (ux & 0x80000000u));
  *v = VSELECT(is_nan, *v, t);
}

/* m (<= VN) floats from p into *v (the rest zero), and back. */
INLINE void load_n(vf *v, const float *p, int64_t m) {
  *v = (vf){0};
  memcpy(v, p, sizeof(float) * (size_t)m);
}

INLINE void store_n(float *p, const vf *v, int64_t m) {
  memcpy(p, v, sizeof(float) * (size_t)m);
}

/* relu keeping NaN (MXNet's): x where x > 0 or x is NaN, else +0. */
INLINE void vrelu(vf *v) {
  *v = (vf)((vi)*v & (VPOS_MASK(*v) | VNAN_MASK(*v)));
}

/* relu's derivative from its output: NaN stays NaN, 1 above 0, else 0. */
INLINE void vrelu_grad(vf *g, const vf *y) {
  vf d = VSELECT(VPOS_MASK(*y), SPLAT(1.0f), SPLAT(0.0f));
  *g = *g * VSELECT(VNAN_MASK(*y), *y, d);
}

INLINE void apply_fn(int fn, vf *v) {
  if (fn == MXC__VM_TANH) {
    vtanh(v);
  } else if (fn == MXC__VM_SIGMOID) {
    vsigmoid(v);
  } else if (fn == MXC__VM_RELU) {
    vrelu(v);
  } else {
    vexp(v);
  }
}

/* *g = the gradient for output gradient *g and output *y. */
INLINE void apply_grad(int fn, vf *g, const vf *y) {
  if (fn == MXC__VM_RELU) {
    vrelu_grad(g, y);
    return;
  }
  *g = fn == MXC__VM_TANH      ? *g * (1.0f - *y * *y)
       : fn == MXC__VM_SIGMOID ? *g * (*y * (1.0f - *y))
                               : *g * *y;
}

/* The body of one map: FN is a constant in each expansion, so every loop
 * is straight vector code. LOAD(v, FN, i, m) puts the result for elements
 * [i, i + m) into v. */
#define VM_LOOP(FN, LOAD)                                    \
  do {                                                       \
    int64_t i = 0;                                           \
    for (; i + VN <= n; i += VN) VM_STEP(FN, LOAD, i, VN);   \
    if (i < n) VM_STEP(FN, LOAD, i, n - i);                  \
  } while (0)

/* y[i, i + m) = (or +=) the result. */
#define VM_STEP(FN, LOAD, i, m)     \
  do {                              \
    vf v, o;                        \
    LOAD(v, FN, i, m);              \
    if (add) {                      \
      load_n(&o, y + (i), m);       \
      v += o;                       \
    }                               \
    store_n(y + (i), &v, m);        \
  } while (0)

#define MAP_LOAD(v, FN, i, m) \
  (load_n(&v, x + (i), m), apply_fn(FN, &v))
#define GRAD_LOAD(v, FN, i, m)                                   \
  do {                                                           \
    vf y_;                                                       \
    load_n(&v, g + (i), m);                                      \
    load_n(&y_, out + (i), m);                                   \
    apply_grad(FN, &v, &y_);                                     \
  } while (0)

MXC__CPU_CLONES static void vm_map(int fn, const float *x, float *y,
                                   int64_t n, int add) {
  switch (fn) {
    case MXC__VM_TANH:
      VM_LOOP(MXC__VM_TANH, MAP_LOAD);
      break;
    case MXC__VM_SIGMOID:
      VM_LOOP(MXC__VM_SIGMOID, MAP_LOAD);
      break;
    case MXC__VM_RELU:
      VM_LOOP(MXC__VM_RELU, MAP_LOAD);
      break;
    default:
      VM_LOOP(MXC__VM_EXP, MAP_LOAD);
      break;
  }
}

/* y here is the gradient being written; out the operator's output. */
MXC__CPU_CLONES static void vm_grad(int fn, const float *g, const float *out,
                                    float *y, int64_t n, int add) {
  switch (fn) {
    case MXC__VM_TANH:
      VM_LOOP(MXC__VM_TANH, GRAD_LOAD);
      break;
    case MXC__VM_SIGMOID:
      VM_LOOP(MXC__VM_SIGMOID, GRAD_LOAD);
      break;
    case MXC__VM_RELU:
      VM_LOOP(MXC__VM_RELU, GRAD_LOAD);
      break;
    default:
      VM_LOOP(MXC__VM_EXP, GRAD_LOAD);
      break;
  }
}

typedef struct vm_job {
  int fn, add;
  const float *a, *b; /* map: x; grad: og, y */
  float *y;
} vm_job;

static int vm_map_range(void *arg, int64_t begin, int64_t end) {
  const vm_job *j = arg;
  vm_map(j->fn, j->a + begin, j->y + begin, end - begin, j->add);
  return MXC_OK;
}

static int vm_grad_range(void *arg, int64_t begin, int64_t end) {
  const vm_job *j = arg;
  vm_grad(j->fn, j->a + begin, j->b + begin, j->y + begin, end - begin,
          j->add);
  return MXC_OK;
}

static int vm_threads(int64_t n) {
  return n >= MXC__ELEMWISE_PAR_MIN ? mxc__parallel_threads() : 1;
}

int mxc__vmath_f32(int fn, const float *x, float *y, int64_t n, int add) {
  vm_job j = {fn, add, x, NULL, y};
  return mxc__parallel_for(n, MXC__ELEMWISE_GRAIN, vm_threads(n),
                           vm_map_range, &j);
}

int mxc__vmath_grad_f32(int fn, const float *og, const float *y, float *dx,
                        int64_t n, int add) {
  vm_job j = {fn, add, og, y, dx};
  return mxc__parallel_for(n, MXC__ELEMWISE_GRAIN, vm_threads(n),
                           vm_grad_range, &j);
}
