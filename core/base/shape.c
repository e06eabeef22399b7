#include "core/base/shape.h"

#include <stdio.h>
#include <string.h>

#include "core/base/error.h"

int mxc__mul_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

int mxc__add_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

int mxc__sub_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

/* The product of the non-zero extents times elem_size, or -1 when it does
 * not fit in int64 (extents are known to be >= 0). */
static int64_t nonzero_bytes(const mxc__shape *s, size_t elem_size) {
  int64_t p = 1;
  for (int i = 0; i < s->ndim; ++i) {
    if (s->dims[i] != 0 && !mxc__mul_i64(p, s->dims[i], &p)) return -1;
  }
  if (elem_size > (size_t)INT64_MAX || !mxc__mul_i64(p, (int64_t)elem_size, &p)) {
    return -1;
  }
  return p;
}

int mxc__shape_check(const mxc__shape *s, size_t elem_size,
                     const char *what) {
  MXC_RETURN_ERROR_IF(s->ndim < 0 || s->ndim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "%s: ndim %d is out of range; expected 0..%d", what,
                      s->ndim, MXC_MAX_NDIM);
  for (int i = 0; i < s->ndim; ++i) {
    MXC_RETURN_ERROR_IF(s->dims[i] < 0, MXC_ERR_SHAPE,
                        "%s: extent %d is %lld; extents must be >= 0", what,
                        i, (long long)s->dims[i]);
  }
  char buf[256];
  MXC_RETURN_ERROR_IF(
      nonzero_bytes(s, elem_size) < 0, MXC_ERR_SHAPE,
      "%s: shape %s is too large: the product of its non-zero extents "
      "times %zu byte(s) per element overflows int64",
      what, mxc__shape_str(s, buf, sizeof buf), elem_size);
  return MXC_OK;
}

int mxc__shape_make(const int64_t *dims, int ndim, size_t elem_size,
                    const char *what, mxc__shape *out) {
  MXC_RETURN_ERROR_IF(ndim < 0 || ndim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "%s: ndim %d is out of range; expected 0..%d", what,
                      ndim, MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(ndim > 0 && dims == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "%s: shape is NULL but ndim is %d", what, ndim);
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = ndim;
  for (int i = 0; i < ndim; ++i) s.dims[i] = dims[i];
  MXC_FORWARD_IF_ERROR(mxc__shape_check(&s, elem_size, what));
  *out = s;
  return MXC_OK;
}

int64_t mxc__shape_size(const mxc__shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->ndim; ++i) n *= s->dims[i];
  return n;
}

int mxc__shape_equal(const mxc__shape *a, const mxc__shape *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

char *mxc__shape_str(const mxc__shape *s, char *buf, size_t len) {
  size_t pos = 0;
  if (len == 0) return buf;
  buf[0] = '\0';
  pos += (size_t)snprintf(buf + pos, len - pos, "(");
  for (int i = 0; i < s->ndim && pos < len; ++i) {
    pos += (size_t)snprintf(buf + pos, len - pos, i ? ",%lld" : "%lld",
                            (long long)s->dims[i]);
  }
  if (pos < len) snprintf(buf + pos, len - pos, ")");
  return buf;
}
