/* Element data types (values are the public MXC_DTYPE_* constants) and
 * storage types (MXC_STYPE_*). */
#ifndef MXC_CORE_BASE_DTYPE_H_
#define MXC_CORE_BASE_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

/* Bytes per element; 0 for an unknown dtype. */
size_t mxc__dtype_size(int dtype);
/* Static name ("float32"); NULL for an unknown dtype. */
const char *mxc__dtype_name(int dtype);
/* MXC_OK, or MXC_ERR_DTYPE naming `what` and listing the known dtypes. */
int mxc__dtype_check(int dtype, const char *what);

/* Storage-type names indexed by MXC_STYPE_* value ("default",
 * "row_sparse", "csr"), NULL-terminated: the one spelling of each, shared
 * by messages, graph attributes and cast_storage's enum parameter. */
extern const char *const mxc__stype_names[];
/* Static name of a storage type; "unknown" for any other value, so that a
 * message can print whatever it was given. */
const char *mxc__stype_name(int stype);
/* The MXC_STYPE_* value called `name`, or -1. */
int mxc__stype_parse(const char *name);

/* ---- integer semantics (docs/dtypes.md) ----
 *
 * C leaves signed overflow and out-of-range float-to-integer conversions
 * undefined; every kernel and conversion goes through these instead, so
 * the results are defined and the same everywhere:
 *  - integer add, subtract, multiply and negate wrap modulo 2^64 (two's
 *    complement, as numpy and MXNet give), computed in uint64_t;
 *  - an integer stored into a narrower integer dtype keeps its low bits
 *    (wraps, as numpy's astype);
 *  - a floating value stored into an integer dtype truncates toward zero
 *    and saturates at the dtype's range (infinities included); NaN gives
 *    0. bool is value != 0.
 * The wrapping helpers compile to the plain instructions. */
static inline int64_t mxc__wrap_add(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t mxc__wrap_sub(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t mxc__wrap_mul(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}
static inline int64_t mxc__wrap_neg(int64_t a) {
  return (int64_t)(0 - (uint64_t)a);
}

/* Truncation toward zero, saturating at [ilo, ihi] (lo = ilo and
 * hi_plus_1 = ihi + 1 as doubles, both exact), NaN -> 0. */
static inline int64_t mxc__f2i_sat(double d, double lo, double hi_plus_1,
                                   int64_t ilo, int64_t ihi) {
  if (d != d) return 0;
  if (d <= lo) return ilo;
  if (d >= hi_plus_1) return ihi;
  return (int64_t)d; /* in range: C truncates toward zero */
}
static inline int64_t mxc__f2i64(double d) {
  return mxc__f2i_sat(d, -9223372036854775808.0, 9223372036854775808.0,
                      INT64_MIN, INT64_MAX);
}
static inline int32_t mxc__f2i32(double d) {
  return (int32_t)mxc__f2i_sat(d, -2147483648.0, 2147483648.0, INT32_MIN,
                               INT32_MAX);
}
static inline int8_t mxc__f2i8(double d) {
  return (int8_t)mxc__f2i_sat(d, -128.0, 128.0, -128, 127);
}
static inline uint8_t mxc__f2u8(double d) {
  return (uint8_t)mxc__f2i_sat(d, 0.0, 256.0, 0, 255);
}

#endif /* MXC_CORE_BASE_DTYPE_H_ */
