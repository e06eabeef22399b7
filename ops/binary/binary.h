/* Element-wise binary operators: the one list of operators, the kernels
 * generated from it, and the row primitives the operator forms share.
 *
 * Every operator of MXC__BINARY_OPS comes in up to four forms:
 *   name             same-shape operands            (binary.c)
 *   _<stem>_scalar   f(x, scalar)                   (scalar.c)
 *   _r<stem>_scalar  f(scalar, x), non-commutative  (scalar.c)
 *   broadcast_name   numpy broadcasting             (broadcast.c)
 * each differentiable one with a hidden "_backward_" operator. All forms
 * reduce to "rows": runs of n outputs whose operands advance by 1 or stay
 * put (stride 0), so one set of typed kernels serves them all.
 *
 * Internal to ops/binary; other families never include it. */
#ifndef MXC_OPS_BINARY_BINARY_H_
#define MXC_OPS_BINARY_BINARY_H_

#include <stdint.h>

#include "core/op/common.h"

#include "ops/binary/binary_ops.h"

enum {
#define MXC__BIN_ENUM(name, stem, f, da, db, flags, doc, ...) MXC__BIN_##name,
  MXC__BINARY_OPS(MXC__BIN_ENUM)
#undef MXC__BIN_ENUM
      MXC__BIN_COUNT
};

/* Forward row kernel: out[i] (=, or += when add) f(a[i*sa], b[i*sb]) for
 * 0 <= i < n, with sa, sb in {0, 1}. */
typedef void (*mxc__bin_fwd_f32)(const float *a, int64_t sa, const float *b,
                                 int64_t sb, float *out, int64_t n, int add);
typedef void (*mxc__bin_fwd_f64)(const double *a, int64_t sa,
                                 const double *b, int64_t sb, double *out,
                                 int64_t n, int add);
typedef void (*mxc__bin_fwd_i64)(const int64_t *a, int64_t sa,
                                 const int64_t *b, int64_t sb, int64_t *out,
                                 int64_t n, int add);
/* Backward row kernel: ga[i] (=, or += when add_a) og[i] * df/da(...),
 * likewise gb; a NULL ga or gb is skipped. Strides may be any value. */
typedef void (*mxc__bin_bwd_f32)(const float *og, const float *a, int64_t sa,
                                 const float *b, int64_t sb, float *ga,
                                 float *gb, int64_t n, int add_a, int add_b);
typedef void (*mxc__bin_bwd_f64)(const double *og, const double *a,
                                 int64_t sa, const double *b, int64_t sb,
                                 double *ga, double *gb, int64_t n, int add_a,
                                 int add_b);

typedef struct mxc__bin_impl {
  const char *name;
  const char *stem;
  int flags;
  mxc__bin_fwd_f32 f32;
  mxc__bin_fwd_f64 f64;
  mxc__bin_fwd_i64 i64;
  mxc__bin_bwd_f32 b32;
  mxc__bin_bwd_f64 b64;
} mxc__bin_impl;

extern const mxc__bin_impl mxc__bin_impls[MXC__BIN_COUNT];

/* ---- rows (rows.c): any dtype, through the typed kernels ---- */

/* Longest run the chunked paths (half and integer types, broadcast
 * gradients) convert at a time. */
#define MXC__BIN_CHUNK 256

/* Address of element i of a typed array. */
static inline void *mxc__bin_at(const void *p, int dtype, int64_t i) {
  return (char *)p + i * (int64_t)mxc__dtype_size(dtype);
}

/* Forward row in `dtype`: float32/float64 run the kernels in place; half
 * types go through float and integer types through int64 in chunks. */
void mxc__bin_row(const mxc__bin_impl *k, int dtype, const void *a,
                  int64_t sa, const void *b, int64_t sb, void *out,
                  int64_t n, int add);

/* Backward row for a floating-point dtype: ga/gb contiguous, NULL to
 * skip. */
void mxc__bin_grad_row(const mxc__bin_impl *k, int dtype, const void *og,
                       const void *a, int64_t sa, const void *b, int64_t sb,
                       void *ga, void *gb, int64_t n, int add_a, int add_b);

/* og[i] * df/da and og[i] * df/db for n <= MXC__BIN_CHUNK elements, as
 * doubles (broadcast gradients accumulate these); da/db NULL to skip. */
void mxc__bin_grad_chunk(const mxc__bin_impl *k, int dtype, const void *og,
                         const void *a, int64_t sa, const void *b,
                         int64_t sb, double *da, double *db, int64_t n);

/* A scalar parameter as one element of `dtype` (integer dtypes: truncated
 * and saturated at the dtype's range, NaN gives 0: core/base/dtype.h). */
typedef union mxc__bin_scalar {
  double f64;
  float f32;
  int64_t i64;
  unsigned char bytes[8];
} mxc__bin_scalar;
void mxc__bin_scalar_set(int dtype, double v, mxc__bin_scalar *out);

/* Element conversions for the chunked paths: n elements of `dtype` at p
 * to/from float (float32/half types) or int64 (integer types, bool). */
void mxc__bin_load_f32(int dtype, const void *p, int64_t n, float *dst);
void mxc__bin_store_f32(int dtype, void *p, int64_t n, const float *src);
void mxc__bin_load_i64(int dtype, const void *p, int64_t n, int64_t *dst);
void mxc__bin_store_i64(int dtype, void *p, int64_t n, const int64_t *src);

/* ---- shared descriptor pieces ---- */

/* Whether `dtype` may flow through an operator with these flags: forward
 * operators take floats, and integers with MXC__BIN_INT; backward ones
 * (backward = 1) floats only. -1 (unknown) passes. */
int mxc__bin_check_dtype(const char *op_name, int flags, int dtype,
                         int backward);

/* Registration of each file's operators (binary.c calls them all). */
int mxc__bin_register_scalar(mxc__registry *r);
int mxc__bin_register_broadcast(mxc__registry *r);
int mxc__bin_register_misc(mxc__registry *r);
int mxc__bin_register_legacy(mxc__registry *r); /* legacy.c */

#endif /* MXC_OPS_BINARY_BINARY_H_ */
