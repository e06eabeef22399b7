#include <string.h>

#include "core/op/common.h"
#include "ops/sparse/sparse.h"

int mxc__sparse_is_zero(const void *p, int dtype) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: {
      float v;
      memcpy(&v, p, sizeof v);
      return v == 0.0f;
    }
    case MXC_DTYPE_FLOAT64: {
      double v;
      memcpy(&v, p, sizeof v);
      return v == 0.0;
    }
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16: {
      uint16_t v; /* +-0 whatever the exponent width: all but the sign */
      memcpy(&v, p, sizeof v);
      return (v & 0x7fffu) == 0;
    }
    default: { /* integers and bool: every byte zero */
      const unsigned char *b = p;
      for (size_t i = 0; i < mxc__dtype_size(dtype); ++i) {
        if (b[i]) return 0;
      }
      return 1;
    }
  }
}

int64_t mxc__sparse_row_elems(const mxc__ndarray *a) {
  int64_t n = 1;
  for (int i = 1; i < a->shape.ndim; ++i) n *= a->shape.dims[i];
  return n;
}
