/* Shapes: up to MXC_MAX_NDIM int64 extents. 0-d shapes are scalars (one
 * element); zero extents are allowed (zero elements). */
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
 * non-NULL when ndim > 0, every extent >= 0, and the element count times
 * elem_size fits in int64 (pass elem_size 1 to check the count only).
 * `what` names the argument in messages. *out untouched on failure. */
int mxc__shape_make(const int64_t *dims, int ndim, size_t elem_size,
                    const char *what, mxc__shape *out);

/* Number of elements; the shape must have passed mxc__shape_make. */
int64_t mxc__shape_size(const mxc__shape *s);

int mxc__shape_equal(const mxc__shape *a, const mxc__shape *b);

/* Writes "(2,3,4)" into buf (always NUL-terminated). Returns buf. */
char *mxc__shape_str(const mxc__shape *s, char *buf, size_t len);

/* Multiplies with overflow detection: returns 0 on overflow. */
int mxc__mul_i64(int64_t a, int64_t b, int64_t *out);

#endif /* MXC_CORE_BASE_SHAPE_H_ */
