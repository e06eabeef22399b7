/* Vectorized float32 kernels of fused programs: exp and sigmoid for the
 * tile path, and "chains" that run a whole program in registers.
 *
 * Written with GCC vector extensions over 16 floats (vf): the AVX-512
 * clone maps them to one register, the AVX2 and baseline clones to two
 * and four (MXC__CPU_CLONES picks the clone at load time; no
 * -ffast-math, and ISO C mode keeps multiply and add unfused, so every
 * clone gives the same bits).
 *
 * exp(x) = 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (in
 * [-ln2/2, ln2/2]), ln 2 split in two parts (Cody and Waite) so that
 * n * ln2_hi is exact for |n| <= 151. e^r is its Taylor polynomial of
 * degree 7 (truncation error below 4e-9 relative, under 0.05 ulp); the
 * result stays within about 2 ulp of the correctly rounded value (tests
 * compare with expf). 2^n is applied as two factors 2^(n>>1) and
 * 2^(n - (n>>1)), each a normal float, so results that overflow give +inf
 * and tiny ones come out as subnormals or 0 with one rounding.
 *
 * A chain (fused_internal.h) keeps the running value of each block of 64
 * elements in four vector registers while every instruction is applied
 * to it, so a program costs one load per input and one store per output
 * element instead of a store and a load per instruction. Each micro-op
 * computes exactly what its operator's float32 kernel computes (same
 * operations in the same order, the scalar rounded to float first), with
 * this file's exp for exp and sigmoid. */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ops/fused/fused_internal.h"

typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef uint32_t vu __attribute__((vector_size(64)));
/* The clones only compile their own bodies for their targets: helpers
 * must be inlined into them, or they would run as baseline code. Helpers
 * take vectors through pointers, never by value: GCC notes (-Wpsabi) that
 * 64-byte vector arguments and results are passed differently with and
 * without AVX-512, for every such function it compiles, inlined or not;
 * inlined, the pointers cost nothing. */
#define INLINE static inline __attribute__((always_inline))
#define VN 16 /* floats per vf */
#define NB 4  /* vf per chain block (FOR_B below writes out 4) */

/* Bits of 104.0f: |x| is clamped to it (below -104 exp rounds to 0, above
 * 88.73 it overflows either way). */
#define CLAMP_BITS 0x42d00000u

/* s in every lane: added to lanes of -0, which keeps every value, a
 * scalar -0 included (lanes of +0 turned -0 into +0, so that
 * _mul_scalar(x, scalar=-0) in a chain differed from the operator in the
 * sign of zero). */
#define SPLAT(s) ((vf)((vu){0} + 0x80000000u) + (s))

/* a where mask m is all ones, b where it is zero. */
#define VSELECT(m, a, b) ((vf)(((vi)(a) & (m)) | ((vi)(b) & ~(m))))

/* Lane masks (all ones or zero) from the bits alone, with shifts and no
 * compares: GCC 12 compiles an OR of two vector compares into one scalar
 * compare per lane. VNAN_MASK: the lane is NaN (0x7f800000 - |bits| is
 * negative); VPOS_MASK: the lane's bits as a signed int are > 0, that is
 * x > 0 or x a NaN with the sign clear. */
#define VNAN_MASK(v) \
  (((vi){0} + 0x7f800000 - (vi)((vu)(v) & 0x7fffffffu)) >> 31)
#define VPOS_MASK(v) (~(((vi)(v) | (vi)((vu)(v) - 1u)) >> 31))
/* a < c, for a and c in [0, 2^31). */
#define VBELOW_MASK(a, c) (((vi)(a) - (int32_t)(c)) >> 31)

/* *v = e^*v. */
INLINE void vexp(vf *v) {
  /* Clamp |x| on its bit pattern with integer operations only: float
   * comparisons with constants here became control flow and stopped the
   * vectorizer outside AVX-512. A NaN's bits are OR-ed back in, so it
   * stays NaN through the arithmetic below. */
  vu ux = (vu)*v, ax = ux & 0x7fffffffu;
  vu nan_bits = ax & (vu)VNAN_MASK(ax);
  vu lim = (vu)VBELOW_MASK(ax, CLAMP_BITS);
  ax = (ax & lim) | (CLAMP_BITS & ~lim);
  vf xc = (vf)(ax | nan_bits | (ux & 0x80000000u));
  /* Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits
   * (round to nearest even). */
  const float shifter = 12582912.0f;
  vf t = xc * 1.44269504088896341f + shifter;
  vf nf = t - shifter;
  vu n = (vu)t - 0x4b400000u; /* bits of shifter */
  vf r = xc - nf * 0.693359375f;          /* ln2_hi: 9 significant bits */
  r = r - nf * -2.12194440054690583e-4f; /* ln2 - ln2_hi */
  vf p = SPLAT(1.0f / 5040);
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  vu n1 = (vu)((vi)n >> 1); /* |n1|, |n - n1| <= 76 for |x| <= 104 */
  vu n2 = n - n1;
  vf s1 = (vf)((n1 + 127u) << 23);
  vf s2 = (vf)((n2 + 127u) << 23);
  *v = p * s1 * s2;
}

/* *v = 1 / (1 + e^-*v). */
INLINE void vsigmoid(vf *v) {
  vf e = -*v;
  vexp(&e);
  *v = 1.0f / (1.0f + e);
}

/* m (<= VN) floats from p into *v (the rest zero), and back. */
INLINE void load_n(vf *v, const float *p, int64_t m) {
  *v = (vf){0};
  memcpy(v, p, sizeof(float) * (size_t)m);
}

INLINE void store_n(float *p, const vf *v, int64_t m) {
  memcpy(p, v, sizeof(float) * (size_t)m);
}

/* ---- tile kernels ---- */

/* y[i, i + m) = (or += with add) f(x[i, i + m)). */
#define MAP_STEP(vfn, i, m)    \
  do {                         \
    vf v, o;                   \
    load_n(&v, x + (i), m);    \
    vfn(&v);                   \
    if (add) {                 \
      load_n(&o, y + (i), m);  \
      v += o;                  \
    }                          \
    store_n(y + (i), &v, m);   \
  } while (0)

/* y (=, or += with add) f(x) over n floats, VN at a time. */
#define MAP_KERNEL(fn, vfn)                                              \
  MXC__CPU_CLONES void fn(const float *x, float *y, int64_t n, int add) { \
    int64_t i = 0;                                                       \
    for (; i + VN <= n; i += VN) MAP_STEP(vfn, i, VN);                   \
    if (i < n) MAP_STEP(vfn, i, n - i);                                  \
  }
MAP_KERNEL(mxc__fused_exp_f32, vexp)
MAP_KERNEL(mxc__fused_sigmoid_f32, vsigmoid)

/* ---- chains ---- */

/* Statement s for b = 0..NB-1 written out with constant indices: a loop
 * here stayed a loop at -O2, and indexing v[] with its counter kept the
 * running values in memory instead of registers. */
#define FOR_B(s) \
  do {           \
    {            \
      enum { b = 0 };      \
      s;         \
    }            \
    {            \
      enum { b = 1 };      \
      s;         \
    }            \
    {            \
      enum { b = 2 };      \
      s;         \
    }            \
    {            \
      enum { b = 3 };      \
      s;         \
    }            \
  } while (0)

/* One micro-op on the running values v[0..NB) with the other operands
 * o[0..NB) (the scalar or an input's elements): x is the running value,
 * y the other operand. The switch is outside the per-vector statements,
 * so each case is straight vector code. */
INLINE void apply(int kind, vf *v, const vf *o) {
  switch (kind) {
#define CASE(k, expr)                        \
  case k:                                    \
    FOR_B(vf x = v[b]; vf y = o[b]; (void)y; \
          v[b] = (expr));                    \
    break;
    CASE(MXC__UOP_ADD, x + y)
    CASE(MXC__UOP_SUB, x - y)
    CASE(MXC__UOP_RSUB, y - x)
    CASE(MXC__UOP_MUL, x * y)
    CASE(MXC__UOP_DIV, x / y)
    CASE(MXC__UOP_RDIV, y / x)
    /* maximum(a, b) = a > b || a is NaN ? a : b, as MXNet: a NaN on
     * either side gives NaN; minimum with <. */
    CASE(MXC__UOP_MAX, VSELECT((vi)(x > y) | VNAN_MASK(x), x, y))
    CASE(MXC__UOP_RMAX, VSELECT((vi)(y > x) | VNAN_MASK(y), y, x))
    CASE(MXC__UOP_MIN, VSELECT((vi)(x < y) | VNAN_MASK(x), x, y))
    CASE(MXC__UOP_RMIN, VSELECT((vi)(y < x) | VNAN_MASK(y), y, x))
    CASE(MXC__UOP_NEG, -x)
    CASE(MXC__UOP_ABS, (vf)((vu)x & 0x7fffffffu))
    CASE(MXC__UOP_SQUARE, x * x)
    /* NaN stays NaN, as MXNet's relu keeps it. */
    CASE(MXC__UOP_RELU, (vf)((vi)x & (VPOS_MASK(x) | VNAN_MASK(x))))
#undef CASE
    case MXC__UOP_EXP:
      FOR_B(vexp(&v[b]));
      break;
    case MXC__UOP_SIGMOID:
      FOR_B(vsigmoid(&v[b]));
      break;
    default: /* MXC__UOP_COPY */
      break;
  }
}

/* Elements [i, i + NB * VN) when m == NB * VN (constant after inlining,
 * so loads and stores are plain vector moves), else the first m. */
INLINE void chain_block(const mxc__fused_param *p, const float *const *in,
                        float *out, int64_t i, int64_t m, int add) {
  vf v[NB], o[NB];
#define MB (m - b * VN < VN ? m - b * VN : VN) /* elements of vector b */
  FOR_B(if (MB > 0) load_n(&v[b], in[p->chain_in] + i + b * VN, MB);
        else v[b] = (vf){0});
  for (int k = 0; k < p->n_instr; ++k) {
    const mxc__fused_uop *u = &p->instr[k].uop;
    if (u->src < 0) {
      vf sv = SPLAT(u->s);
      FOR_B(o[b] = sv);
    } else {
      const float *src = in[u->src] + i;
      FOR_B(if (MB > 0) load_n(&o[b], src + b * VN, MB);
            else o[b] = (vf){0});
    }
    apply(u->kind, v, o);
  }
  FOR_B(if (MB > 0) {
    if (add) {
      vf w;
      load_n(&w, out + i + b * VN, MB);
      v[b] += w;
    }
    store_n(out + i + b * VN, &v[b], MB);
  });
#undef MB
}

MXC__CPU_CLONES void mxc__fused_chain_f32(const mxc__fused_param *p,
                                          const float *const *in, float *out,
                                          int64_t begin, int64_t end,
                                          int add) {
  int64_t i = begin;
  for (; i + NB * VN <= end; i += NB * VN) {
    chain_block(p, in, out, i, NB * VN, add);
  }
  if (i < end) chain_block(p, in, out, i, end - i, add);
}

/* ---- streaming stores ---- */

#if defined(__SSE2__)
/* SSE2 is part of x86-64, so no dispatch: 16-byte streaming stores once
 * dst is aligned; the copy is bound by memory, not by vector width. */
void mxc__fused_stream_copy(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
  }
  memcpy(d, s, n);
}

void mxc__fused_stream_fence(void) { _mm_sfence(); }
#else
void mxc__fused_stream_copy(void *dst, const void *src, size_t n) {
  memcpy(dst, src, n);
}

void mxc__fused_stream_fence(void) {}
#endif
