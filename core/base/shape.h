/* Shapes: up to MXC_MAX_NDIM int64 extents. 0-d shapes are scalars (one
 * element); zero extents are allowed (zero elements).
 *
 * The shape invariant: every extent is >= 0 and the product of the
 * NON-ZERO extents, times the element size, fits in int64. Ignoring the
 * zero extents matters: a shape such as (0, 2^62) holds no element but its
 * strides and the count of any shape derived from it without the zero
 * axis (a reduction over axis 0, a transpose's strides) are computed from
 * the other extents, so these must be representable too. Under the
 * invariant every partial product of the extents fits in int64, so
 * mxc__shape_size and stride loops need no checks of their own. Shapes
 * made from outside values (users, files, graph attributes, operator
 * parameters) are checked with mxc__shape_check or mxc__shape_make; shape
 * inference checks what operators deduce (mxc__op_infer_shape) and array
 * creation checks the byte size again for its dtype. */
#ifndef MXC_CORE_BASE_SHAPE_H_
#define MXC_CORE_BASE_SHAPE_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

typedef struct mxc__shape {
  int ndim;
  int64_t dims[MXC_MAX_NDIM];
} mxc__shape;

/* Validates and copies extents into *out: ndim in 0..MXC_MAX_NDIM, dims
 * non-NULL when ndim > 0, and the shape invariant above for elem_size
 * (pass 1 to check the element count only). `what` names the argument in
 * messages. *out untouched on failure. */
int mxc__shape_make(const int64_t *dims, int ndim, size_t elem_size,
                    const char *what, mxc__shape *out);

/* MXC_OK when s satisfies the shape invariant for elem_size (ndim in
 * 0..MXC_MAX_NDIM included); otherwise MXC_ERR_SHAPE with a message
 * naming `what`, the shape and the limit. */
int mxc__shape_check(const mxc__shape *s, size_t elem_size, const char *what);

/* 1 when s satisfies the shape invariant for element counts (elem_size
 * 1), without a message: the inline test hot paths run before paying for
 * mxc__shape_check's error text. */
static inline int mxc__shape_ok(const mxc__shape *s) {
  if ((unsigned)s->ndim > MXC_MAX_NDIM) return 0;
  int64_t p = 1;
  for (int i = 0; i < s->ndim; ++i) {
    int64_t d = s->dims[i];
    if (d < 0 || (d != 0 && __builtin_mul_overflow(p, d, &p))) return 0;
  }
  return 1;
}

/* Number of elements; the shape must satisfy the invariant (checked by
 * mxc__shape_make or mxc__shape_check), so the product cannot overflow. */
int64_t mxc__shape_size(const mxc__shape *s);

int mxc__shape_equal(const mxc__shape *a, const mxc__shape *b);

/* Writes "(2,3,4)" into buf (always NUL-terminated). Returns buf. */
char *mxc__shape_str(const mxc__shape *s, char *buf, size_t len);

/* Checked arithmetic for extents, counts and byte sizes (shape inference
 * uses these for every value derived from a parameter or an extent):
 * 1 and *out = the result, or 0 on overflow with *out untouched. */
int mxc__mul_i64(int64_t a, int64_t b, int64_t *out);
int mxc__add_i64(int64_t a, int64_t b, int64_t *out);
int mxc__sub_i64(int64_t a, int64_t b, int64_t *out);

#endif /* MXC_CORE_BASE_SHAPE_H_ */
