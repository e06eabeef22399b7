/* Rows of any dtype through the typed kernels.
 *
 * float32 and float64 rows run the kernels directly on the arrays. Half
 * types compute in float and integer types in int64: their rows are cut
 * into chunks of MXC__BIN_CHUNK elements, converted into stack buffers,
 * run through the float or int64 kernel and converted back. A stride-0
 * operand converts to a one-element buffer. */
#include <math.h>
#include <string.h>

#include "ops/binary/binary.h"

#define CHUNK MXC__BIN_CHUNK

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- conversions ---- */

void mxc__bin_load_f32(int dtype, const void *p, int64_t n, float *dst) {
  const uint16_t *h = p;
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      memcpy(dst, p, (size_t)n * sizeof(float));
      break;
    case MXC_DTYPE_FLOAT16:
      for (int64_t i = 0; i < n; ++i) dst[i] = mxc__f16_to_f32(h[i]);
      break;
    case MXC_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < n; ++i) dst[i] = mxc__bf16_to_f32(h[i]);
      break;
    default:
      break;
  }
}

void mxc__bin_store_f32(int dtype, void *p, int64_t n, const float *src) {
  uint16_t *h = p;
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      memcpy(p, src, (size_t)n * sizeof(float));
      break;
    case MXC_DTYPE_FLOAT16:
      for (int64_t i = 0; i < n; ++i) h[i] = mxc__f32_to_f16(src[i]);
      break;
    case MXC_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < n; ++i) h[i] = mxc__f32_to_bf16(src[i]);
      break;
    default:
      break;
  }
}

void mxc__bin_load_i64(int dtype, const void *p, int64_t n, int64_t *dst) {
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case MXC_DTYPE_UINT8: dst[i] = ((const uint8_t *)p)[i]; break;
      case MXC_DTYPE_INT8: dst[i] = ((const int8_t *)p)[i]; break;
      case MXC_DTYPE_INT32: dst[i] = ((const int32_t *)p)[i]; break;
      case MXC_DTYPE_INT64: dst[i] = ((const int64_t *)p)[i]; break;
      case MXC_DTYPE_BOOL: dst[i] = ((const uint8_t *)p)[i] != 0; break;
      default: dst[i] = 0; break;
    }
  }
}

/* Narrowing keeps the low bits (two's complement wrap, as numpy does). */
void mxc__bin_store_i64(int dtype, void *p, int64_t n, const int64_t *src) {
  for (int64_t i = 0; i < n; ++i) {
    uint64_t u = (uint64_t)src[i];
    switch (dtype) {
      case MXC_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; break;
      case MXC_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)u; break;
      case MXC_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)u; break;
      case MXC_DTYPE_INT64: ((int64_t *)p)[i] = src[i]; break;
      case MXC_DTYPE_BOOL: ((uint8_t *)p)[i] = src[i] != 0; break;
      default: break;
    }
  }
}


void mxc__bin_scalar_set(int dtype, double v, mxc__bin_scalar *out) {
  memset(out, 0, sizeof *out);
  switch (dtype) {
    case MXC_DTYPE_FLOAT64:
      out->f64 = v;
      break;
    case MXC_DTYPE_FLOAT32:
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16: {
      float f = (float)v;
      mxc__bin_store_f32(dtype, out->bytes, 1, &f);
      break;
    }
    default: { /* saturated to the dtype's own range (core/base/dtype.h) */
      mxc__blob b = {out->bytes, {0, {0}}, dtype, {MXC_DEVICE_CPU, 0},
                     MXC__FMT_PLAIN};
      mxc__blob_set(&b, 0, v);
      break;
    }
  }
}

/* ---- forward rows ---- */

static void row_half(const mxc__bin_impl *k, int dtype, const void *a,
                     int64_t sa, const void *b, int64_t sb, void *out,
                     int64_t n, int add) {
  float xa[CHUNK], xb[CHUNK], xo[CHUNK];
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = min64(CHUNK, n - off);
    mxc__bin_load_f32(dtype, mxc__bin_at(a, dtype, off * sa), sa ? m : 1, xa);
    mxc__bin_load_f32(dtype, mxc__bin_at(b, dtype, off * sb), sb ? m : 1, xb);
    void *o = mxc__bin_at(out, dtype, off);
    if (add) mxc__bin_load_f32(dtype, o, m, xo);
    k->f32(xa, sa, xb, sb, xo, m, add);
    mxc__bin_store_f32(dtype, o, m, xo);
  }
}

static void row_int(const mxc__bin_impl *k, int dtype, const void *a,
                    int64_t sa, const void *b, int64_t sb, void *out,
                    int64_t n, int add) {
  int64_t xa[CHUNK], xb[CHUNK], xo[CHUNK];
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = min64(CHUNK, n - off);
    mxc__bin_load_i64(dtype, mxc__bin_at(a, dtype, off * sa), sa ? m : 1, xa);
    mxc__bin_load_i64(dtype, mxc__bin_at(b, dtype, off * sb), sb ? m : 1, xb);
    void *o = mxc__bin_at(out, dtype, off);
    if (add) mxc__bin_load_i64(dtype, o, m, xo);
    k->i64(xa, sa, xb, sb, xo, m, add);
    mxc__bin_store_i64(dtype, o, m, xo);
  }
}

void mxc__bin_row(const mxc__bin_impl *k, int dtype, const void *a,
                  int64_t sa, const void *b, int64_t sb, void *out,
                  int64_t n, int add) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      k->f32(a, sa, b, sb, out, n, add);
      break;
    case MXC_DTYPE_FLOAT64:
      k->f64(a, sa, b, sb, out, n, add);
      break;
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16:
      row_half(k, dtype, a, sa, b, sb, out, n, add);
      break;
    default:
      row_int(k, dtype, a, sa, b, sb, out, n, add);
      break;
  }
}

/* ---- backward rows ---- */

/* Half types: og, a, b and (when accumulating) the gradients go through
 * float buffers. */
static void grad_row_half(const mxc__bin_impl *k, int dtype, const void *og,
                          const void *a, int64_t sa, const void *b,
                          int64_t sb, void *ga, void *gb, int64_t n,
                          int add_a, int add_b) {
  float xg[CHUNK], xa[CHUNK], xb[CHUNK], xga[CHUNK], xgb[CHUNK];
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = min64(CHUNK, n - off);
    mxc__bin_load_f32(dtype, mxc__bin_at(og, dtype, off), m, xg);
    mxc__bin_load_f32(dtype, mxc__bin_at(a, dtype, off * sa), sa ? m : 1, xa);
    mxc__bin_load_f32(dtype, mxc__bin_at(b, dtype, off * sb), sb ? m : 1, xb);
    void *pa = ga ? mxc__bin_at(ga, dtype, off) : NULL;
    void *pb = gb ? mxc__bin_at(gb, dtype, off) : NULL;
    if (pa && add_a) mxc__bin_load_f32(dtype, pa, m, xga);
    if (pb && add_b) mxc__bin_load_f32(dtype, pb, m, xgb);
    k->b32(xg, xa, sa ? 1 : 0, xb, sb ? 1 : 0, pa ? xga : NULL,
           pb ? xgb : NULL, m, add_a, add_b);
    if (pa) mxc__bin_store_f32(dtype, pa, m, xga);
    if (pb) mxc__bin_store_f32(dtype, pb, m, xgb);
  }
}

void mxc__bin_grad_row(const mxc__bin_impl *k, int dtype, const void *og,
                       const void *a, int64_t sa, const void *b, int64_t sb,
                       void *ga, void *gb, int64_t n, int add_a, int add_b) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      k->b32(og, a, sa, b, sb, ga, gb, n, add_a, add_b);
      break;
    case MXC_DTYPE_FLOAT64:
      k->b64(og, a, sa, b, sb, ga, gb, n, add_a, add_b);
      break;
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16:
      grad_row_half(k, dtype, og, a, sa, b, sb, ga, gb, n, add_a, add_b);
      break;
    default: /* integer gradients are rejected at type inference */
      break;
  }
}

void mxc__bin_grad_chunk(const mxc__bin_impl *k, int dtype, const void *og,
                         const void *a, int64_t sa, const void *b,
                         int64_t sb, double *da, double *db, int64_t n) {
  if (dtype == MXC_DTYPE_FLOAT64) {
    k->b64(og, a, sa, b, sb, da, db, n, 0, 0);
    return;
  }
  /* float32 and half types: float partials, widened. */
  float xg[CHUNK], xa[CHUNK], xb[CHUNK], fa[CHUNK], fb[CHUNK];
  const float *g = og, *pa = a, *pb = b;
  if (dtype != MXC_DTYPE_FLOAT32) {
    mxc__bin_load_f32(dtype, og, n, xg);
    mxc__bin_load_f32(dtype, a, sa ? n : 1, xa);
    mxc__bin_load_f32(dtype, b, sb ? n : 1, xb);
    g = xg;
    pa = xa;
    pb = xb;
  }
  k->b32(g, pa, sa, pb, sb, da ? fa : NULL, db ? fb : NULL, n, 0, 0);
  for (int64_t i = 0; da && i < n; ++i) da[i] = fa[i];
  for (int64_t i = 0; db && i < n; ++i) db[i] = fb[i];
}

/* ---- dtype checks ---- */

int mxc__bin_check_dtype(const char *op_name, int flags, int dtype,
                         int backward) {
  if (dtype < 0 || mxc__dtype_is_float(dtype)) return MXC_OK;
  if (backward) {
    return mxc__unsupported_dtype(op_name, dtype,
                                  "gradients are computed for floating-point "
                                  "dtypes (float32, float64, float16, "
                                  "bfloat16)");
  }
  if (!(flags & MXC__BIN_INT)) {
    return mxc__unsupported_dtype(op_name, dtype,
                                  "this operator takes floating-point inputs "
                                  "(float32, float64, float16, bfloat16)");
  }
  if (mxc__dtype_size(dtype) == 0) {
    return mxc__unsupported_dtype(op_name, dtype, NULL);
  }
  return MXC_OK;
}
