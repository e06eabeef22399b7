/* The per-value functions of the random stream (random.h), written once
 * for the C library and for the CUDA plug-in's kernels (nvcc), so that a
 * GPU fill is the CPU's computation and not a second implementation that
 * could drift from it: the Philox4x32-10 block, a word (or two) as a
 * uniform float, the Box-Muller pair, the exponential's inversion, the
 * integer range map.
 *
 * Every function is static inline (and __host__ __device__ under nvcc):
 * no state, no allocation, safe from any thread. Only <stdint.h> and
 * <math.h>: the plug-in includes this header and links nothing of libmxc.
 *
 * What is bit-identical between the two sides: the Philox words, the
 * uniform values (integer operations, then IEEE add, multiply and
 * conversion, which round the same everywhere when nothing is contracted
 * into an FMA: the plug-in is compiled with -fmad=false, the library for
 * x86-64 without FMA) and the randint values. The normal and exponential
 * values also call log, sqrt, cos, sin and log1p in double: the device's
 * versions are within 1-2 ulps of double, glibc's within 1 ulp, so those
 * values agree within a few ulps of double (docs/gpu.md). */
#ifndef MXC_CORE_RESOURCE_PHILOX_IMPL_H_
#define MXC_CORE_RESOURCE_PHILOX_IMPL_H_

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MXC__RNG_HD __host__ __device__ static inline
#else
#define MXC__RNG_HD static inline
#endif

#define MXC__PHILOX_M0 UINT32_C(0xD2511F53)
#define MXC__PHILOX_M1 UINT32_C(0xCD9E8D57)
#define MXC__PHILOX_W0 UINT32_C(0x9E3779B9) /* golden ratio */
#define MXC__PHILOX_W1 UINT32_C(0xBB67AE85) /* sqrt(3) - 1 */
#define MXC__PHILOX_ROUNDS 10

#define MXC__PHILOX_TWO_PI 6.283185307179586476925286766559

/* ---- the generator ---- */

/* Philox4x32 with 10 rounds (Salmon et al., SC 2011) of ctr under key. */
MXC__RNG_HD void mxc__philox_block(const uint32_t ctr[4],
                                   const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < MXC__PHILOX_ROUNDS; r++) {
    if (r > 0) { /* the key schedule: a Weyl sequence between rounds */
      k0 += MXC__PHILOX_W0;
      k1 += MXC__PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)MXC__PHILOX_M0 * c0;
    uint64_t p1 = (uint64_t)MXC__PHILOX_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* Block `blk` (numbered from 0) of a slice starting at counter `first`:
 * counter words 0-1 hold first + blk, words 2-3 are 0 (random.h). */
MXC__RNG_HD void mxc__philox_slice_block(const uint32_t key[2],
                                         uint64_t first, uint64_t blk,
                                         uint32_t out[4]) {
  uint64_t c = first + blk;
  uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
  mxc__philox_block(ctr, key, out);
}

/* ---- words as uniform numbers ---- */

/* [0, 1) from the top 24 bits of a word: exact in float. */
MXC__RNG_HD float mxc__philox_unit_f32(uint32_t w) {
  return (float)(w >> 8) * (1.0f / 16777216.0f);
}

/* 53 random bits from two words (a the high one). */
MXC__RNG_HD uint64_t mxc__philox_bits53(uint32_t a, uint32_t b) {
  return (((uint64_t)a << 32) | b) >> 11;
}

/* [0, 1) with 53 bits: exact in double. */
MXC__RNG_HD double mxc__philox_unit_f64(uint32_t a, uint32_t b) {
  return (double)mxc__philox_bits53(a, b) * (1.0 / 9007199254740992.0);
}

/* (0, 1] with 53 bits: never 0, so log() of it is finite. */
MXC__RNG_HD double mxc__philox_unit_f64_pos(uint32_t a, uint32_t b) {
  return ((double)mxc__philox_bits53(a, b) + 1.0) *
         (1.0 / 9007199254740992.0);
}

/* A float32 uniform on [lo, hi) from word w: lo + (hi - lo) * u computed
 * in double (span = (double)hi - (double)lo, which cannot overflow), which
 * can still round up to hi in float: below_hi (the largest float below hi)
 * replaces it then. lo >= hi keeps what the formula gives. */
MXC__RNG_HD float mxc__philox_uniform_f32(uint32_t w, float lo, float hi,
                                          double span, float below_hi) {
  float u = mxc__philox_unit_f32(w);
  float v = (float)((double)lo + span * (double)u);
  return (v < hi || lo >= hi) ? v : below_hi;
}

/* The same in double from words a, b (span = hi - lo). */
MXC__RNG_HD double mxc__philox_uniform_f64(uint32_t a, uint32_t b, double lo,
                                           double hi, double span,
                                           double below_hi) {
  double v = lo + span * mxc__philox_unit_f64(a, b);
  return (v < hi || lo >= hi) ? v : below_hi;
}

/* ---- distributions ---- */

/* Box-Muller: radius from u1 in (0, 1], angle from u2 in [0, 1). */
MXC__RNG_HD void mxc__philox_box_muller(double u1, double u2, double z[2]) {
  double r = sqrt(-2.0 * log(u1));
  double theta = MXC__PHILOX_TWO_PI * u2;
  z[0] = r * cos(theta);
  z[1] = r * sin(theta);
}

/* The normal pair of a float32 fill from words a (radius), b (angle). */
MXC__RNG_HD void mxc__philox_normal_pair_f32(uint32_t a, uint32_t b,
                                             double z[2]) {
  double u1 = ((double)a + 1.0) * (1.0 / 4294967296.0); /* (0, 1] */
  double u2 = (double)b * (1.0 / 4294967296.0);         /* [0, 1) */
  mxc__philox_box_muller(u1, u2, z);
}

/* The normal pair of a float64 fill from one block: 53 bits of words 0-1
 * for the radius, of words 2-3 for the angle. */
MXC__RNG_HD void mxc__philox_normal_pair_f64(const uint32_t w[4],
                                             double z[2]) {
  double u1 = mxc__philox_unit_f64_pos(w[0], w[1]);
  double u2 = mxc__philox_unit_f64(w[2], w[3]);
  mxc__philox_box_muller(u1, u2, z);
}

/* A normal value from its standard one, in double (rounded once to float
 * by a float32 fill). */
MXC__RNG_HD double mxc__philox_affine(double mean, double stddev, double z) {
  return mean + stddev * z;
}

/* Exponential with rate lam by inversion from u in [0, 1): 1 - u is never
 * 0, so the tail reaches about 36.7 / lam. */
MXC__RNG_HD double mxc__philox_exponential(double u, double lam) {
  return -log1p(-u) / lam;
}

/* floor(r * span / 2^64): an integer in [0, span) from 64 random bits
 * (bias at most span / 2^64), from 32-bit halves (no __int128 needed). */
MXC__RNG_HD uint64_t mxc__philox_mulhi64(uint64_t r, uint64_t span) {
  uint64_t r_lo = (uint32_t)r, r_hi = r >> 32;
  uint64_t s_lo = (uint32_t)span, s_hi = span >> 32;
  uint64_t ll = r_lo * s_lo, lh = r_lo * s_hi;
  uint64_t hl = r_hi * s_lo, hh = r_hi * s_hi;
  uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* A randint value in [low, low + span) (unsigned: high - low may exceed
 * INT64_MAX) from words a (high 32 bits), b; the caller converts it to
 * its signed type (modulo 2^64 with GCC, Clang and nvcc). */
MXC__RNG_HD uint64_t mxc__philox_randint(uint32_t a, uint32_t b, uint64_t low,
                                         uint64_t span) {
  uint64_t r = ((uint64_t)a << 32) | b;
  return low + mxc__philox_mulhi64(r, span);
}

#endif /* MXC_CORE_RESOURCE_PHILOX_IMPL_H_ */
