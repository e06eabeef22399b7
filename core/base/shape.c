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

int mxc__shape_make(const int64_t *dims, int ndim, size_t elem_size,
                    const char *what, mxc__shape *out) {
  MXC_RETURN_ERROR_IF(ndim < 0 || ndim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "%s: ndim %d is out of range; expected 0..%d", what,
                      ndim, MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(ndim > 0 && dims == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "%s: shape is NULL but ndim is %d", what, ndim);
  int64_t count = 1;
  int overflow = 0;
  for (int i = 0; i < ndim; ++i) {
    MXC_RETURN_ERROR_IF(dims[i] < 0, MXC_ERR_SHAPE,
                        "%s: extent %d is %lld; extents must be >= 0", what,
                        i, (long long)dims[i]);
    if (!overflow && !mxc__mul_i64(count, dims[i], &count)) overflow = 1;
  }
  int64_t bytes = 0;
  /* A zero extent anywhere makes the product 0 even if a prefix overflowed;
   * such shapes are still rejected because their extents are unusable. */
  MXC_RETURN_ERROR_IF(
      overflow || !mxc__mul_i64(count, (int64_t)elem_size, &bytes),
      MXC_ERR_SHAPE,
      "%s: the element count overflows int64 (shape too large)", what);
  (void)bytes;
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = ndim;
  for (int i = 0; i < ndim; ++i) s.dims[i] = dims[i];
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
