/* float16 (IEEE binary16) and bfloat16 conversions. Kernels compute these
 * types in float32 and round back (round to nearest even). */
#ifndef MXC_CORE_BASE_HALF_H_
#define MXC_CORE_BASE_HALF_H_

#include <stdint.h>
#include <string.h>

static inline float mxc__bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline uint16_t mxc__f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

static inline float mxc__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else { /* subnormal: normalize */
      int e = -1;
      do {
        man <<= 1;
        e++;
      } while (!(man & 0x400));
      u = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | man << 13;
  } else {
    u = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline uint16_t mxc__f32_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* overflow: inf */
  if (a < 0x38800000u) { /* subnormal or zero in half */
    if (a < 0x33000000u) return (uint16_t)sign; /* below half the min */
    uint32_t man = (a & 0x7fffff) | 0x800000;
    int shift = 113 - (int)(a >> 23) + 13; /* 126 - exp */
    uint32_t v = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (v & 1))) v++;
    return (uint16_t)(sign | v);
  }
  uint32_t v = ((a >> 13) - ((127 - 15) << 10));
  uint32_t rem = a & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) v++;
  return (uint16_t)(sign | v);
}

#endif /* MXC_CORE_BASE_HALF_H_ */
