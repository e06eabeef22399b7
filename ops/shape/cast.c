/* Cast: element-wise conversion between any two of the nine dtypes.
 *
 * Values are read exactly, into int64 (integers, bool) or double (floating
 * types), and converted once into the target:
 *  - to an integer type: integers wrap modulo 2^bits (as C and numpy's
 *    astype do); floating values truncate toward zero and saturate at the
 *    type's range, NaN giving 0 (the rule of core/base/dtype.h, where the
 *    helpers live);
 *  - to bool: value != 0 (NaN is true);
 *  - to float32/float64: rounded to nearest even by the conversion;
 *  - to float16/bfloat16: rounded to nearest even in one step. The value
 *    goes to float32 with round-to-odd first; with float32's 13 or more
 *    extra bits that intermediate rounding never changes the final result
 *    (rounding float64 to float32 to nearest and then to half could round
 *    twice the wrong way).
 * The gradient casts the output gradient back to the input's dtype
 * (_backward_Cast, inputs (ograd, data): data lends its dtype). */
#include <inttypes.h>
#include <string.h>

#include "ops/shape/shape_internal.h"

typedef struct cast_param {
  int dtype;
} cast_param;

static const mxc__param_def k_cast_params[] = {
    MXC__PARAM(cast_param, dtype, MXC__P_DTYPE, NULL,
               "target dtype: float32, float64, float16, bfloat16, uint8, "
               "int8, int32, int64 or bool"),
};

static int cast_check(const char *op_name, void *param) {
  const cast_param *p = param;
  MXC_RETURN_ERROR_IF(p->dtype < 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'dtype' must name a dtype "
                      "(float32, float64, float16, bfloat16, uint8, int8, "
                      "int32, int64 or bool), not None",
                      op_name);
  return MXC_OK;
}

/* ---- conversions ---- */

static int is_int_class(int dt) { return !mxc__dtype_is_float(dt); }

/* float32 nearest to d with round-to-odd: truncate toward zero, then set
 * the last bit when bits were lost. */
static float f32_round_odd(double d) {
  float f = (float)d;
  if (d != d || (double)f == d) return f; /* NaN, infinity or exact */
  uint32_t u;
  memcpy(&u, &f, 4);
  double af = f < 0 ? -(double)f : (double)f, ad = d < 0 ? -d : d;
  /* Rounded away from zero (possibly to infinity): one ulp toward zero,
   * which on the sign-magnitude pattern is a decrement. */
  if (af > ad) u -= 1;
  u |= 1;
  memcpy(&f, &u, 4);
  return f;
}

/* int64 -> float32 with round-to-odd (exact below 2^24). */
static float i64_round_odd(int64_t v) {
  uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  if (m < (1u << 24)) return (float)v;
  int shift = 64 - __builtin_clzll(m) - 24; /* bits below the 24 kept */
  uint64_t top = m >> shift;
  if (m & ((1ull << shift) - 1)) top |= 1;
  float f = (float)top * (float)(1ull << shift); /* both exact */
  return v < 0 ? -f : f;
}

#define SRC_LOOP(T, expr)                            \
  do {                                               \
    const T *s = (const T *)src + off;               \
    for (int64_t i = 0; i < n; ++i) buf[i] = (expr); \
  } while (0)

/* Reads n elements of src from off into the exact wide form. */
static void read_float(const void *src, int dt, int64_t off, int64_t n,
                       double *buf) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: SRC_LOOP(float, s[i]); break;
    case MXC_DTYPE_FLOAT64: SRC_LOOP(double, s[i]); break;
    case MXC_DTYPE_FLOAT16: SRC_LOOP(uint16_t, mxc__f16_to_f32(s[i])); break;
    default: SRC_LOOP(uint16_t, mxc__bf16_to_f32(s[i])); break;
  }
}

static void read_int(const void *src, int dt, int64_t off, int64_t n,
                     int64_t *buf) {
  switch (dt) {
    case MXC_DTYPE_UINT8: SRC_LOOP(uint8_t, s[i]); break;
    case MXC_DTYPE_INT8: SRC_LOOP(int8_t, s[i]); break;
    case MXC_DTYPE_INT32: SRC_LOOP(int32_t, s[i]); break;
    case MXC_DTYPE_INT64: SRC_LOOP(int64_t, s[i]); break;
    default: SRC_LOOP(uint8_t, s[i] != 0); break; /* bool */
  }
}

#define DST_LOOP(T, expr)                          \
  do {                                             \
    T *d = (T *)dst;                               \
    for (int64_t i = 0; i < n; ++i) d[i] = (expr); \
  } while (0)

static void write_from_float(void *dst, int dt, const double *v, int64_t n) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: DST_LOOP(float, (float)v[i]); break;
    case MXC_DTYPE_FLOAT64: DST_LOOP(double, v[i]); break;
    case MXC_DTYPE_FLOAT16:
      DST_LOOP(uint16_t, mxc__f32_to_f16(f32_round_odd(v[i])));
      break;
    case MXC_DTYPE_BFLOAT16:
      DST_LOOP(uint16_t, mxc__f32_to_bf16(f32_round_odd(v[i])));
      break;
    case MXC_DTYPE_UINT8:
      DST_LOOP(uint8_t, mxc__f2u8(v[i]));
      break;
    case MXC_DTYPE_INT8:
      DST_LOOP(int8_t, mxc__f2i8(v[i]));
      break;
    case MXC_DTYPE_INT32:
      DST_LOOP(int32_t, mxc__f2i32(v[i]));
      break;
    case MXC_DTYPE_INT64:
      DST_LOOP(int64_t, mxc__f2i64(v[i]));
      break;
    default: DST_LOOP(uint8_t, v[i] != 0); break; /* bool */
  }
}

static void write_from_int(void *dst, int dt, const int64_t *v, int64_t n) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32: DST_LOOP(float, (float)v[i]); break;
    case MXC_DTYPE_FLOAT64: DST_LOOP(double, (double)v[i]); break;
    case MXC_DTYPE_FLOAT16:
      DST_LOOP(uint16_t, mxc__f32_to_f16(i64_round_odd(v[i])));
      break;
    case MXC_DTYPE_BFLOAT16:
      DST_LOOP(uint16_t, mxc__f32_to_bf16(i64_round_odd(v[i])));
      break;
    /* Wrap through the unsigned type of the same width (GCC and Clang
     * define the conversion back to signed as modular). */
    case MXC_DTYPE_UINT8: DST_LOOP(uint8_t, (uint8_t)v[i]); break;
    case MXC_DTYPE_INT8: DST_LOOP(int8_t, (int8_t)(uint8_t)v[i]); break;
    case MXC_DTYPE_INT32: DST_LOOP(int32_t, (int32_t)(uint32_t)v[i]); break;
    case MXC_DTYPE_INT64: DST_LOOP(int64_t, v[i]); break;
    default: DST_LOOP(uint8_t, v[i] != 0); break; /* bool */
  }
}

#define CHUNK 256

static int cast_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const int st = in[0].dtype, dt = out[0].dtype;
  const size_t es = mxc__dtype_size(dt);
  const int64_t total = mxc__shape_size(&in[0].shape);
  /* Chunks bound the scratch space; ADD converts a chunk aside first. */
  double fbuf[CHUNK];
  int64_t ibuf[CHUNK];
  _Alignas(8) unsigned char tmp[CHUNK * 8];
  for (int64_t off = 0; off < total; off += CHUNK) {
    int64_t n = total - off < CHUNK ? total - off : CHUNK;
    char *dst = (char *)out[0].ptr + off * (int64_t)es;
    void *w = req[0] == MXC__REQ_ADD ? (void *)tmp : (void *)dst;
    if (is_int_class(st)) {
      read_int(in[0].ptr, st, off, n, ibuf);
      write_from_int(w, dt, ibuf, n);
    } else {
      read_float(in[0].ptr, st, off, n, fbuf);
      write_from_float(w, dt, fbuf, n);
    }
    if (req[0] == MXC__REQ_ADD) {
      mxc__blob a = {dst, {1, {n}}, dt, out[0].dev, MXC__FMT_PLAIN};
      mxc__blob b = {tmp, {1, {n}}, dt, out[0].dev, MXC__FMT_PLAIN};
      mxc__shp_copy_flat(&a, &b, MXC__REQ_ADD);
    }
  }
  return MXC_OK;
}

/* ---- inference ---- */

static int cast_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  const cast_param *p = param;
  MXC_RETURN_ERROR_IF(out[0] >= 0 && out[0] != p->dtype, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s (the "
                      "'dtype' parameter)",
                      op->name, mxc__dtype_name(out[0]),
                      mxc__dtype_name(p->dtype));
  out[0] = p->dtype;
  return MXC_OK;
}

/* _backward_Cast (ograd, data): the gradient takes data's dtype. */
static int cast_bwd_type(const mxc__op *op, const void *param, int *in,
                         int n_in, int *out, int n_out) {
  if (in[1] < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(out[0] >= 0 && out[0] != in[1], MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s", op->name,
                      mxc__dtype_name(out[0]), mxc__dtype_name(in[1]));
  out[0] = in[1];
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const char *const k_cast_alias[] = {"cast", NULL};

static const mxc__op k_cast = {
    .name = "Cast",
    .aliases = k_cast_alias,
    .doc =
        "Converts every element to dtype (floats to integers truncate "
        "toward zero and saturate; half types round to nearest even).",
    MXC__PARAMS_OF(cast_param, k_cast_params),
    .param_check = cast_check,
    .n_inputs = 1,
    .input_names = k_data,
    .n_outputs = 1,
    .infer_shape = mxc__infer_shape_same,
    .infer_type = cast_type,
    .compute = cast_forward,
    .gradient = mxc__grad_use_in,
    .backward_uses_inputs = 1,
};

static const mxc__op k_cast_bwd = {
    .name = "_backward_Cast",
    .doc =
        "Gradient of Cast: the output gradient cast to the input's "
        "dtype.",
    MXC__PARAMS_OF(cast_param, k_cast_params),
    .param_check = cast_check,
    .n_inputs = 2,
    .input_names = k_bwd_in,
    .n_outputs = 1,
    .infer_shape = mxc__infer_shape_same,
    .infer_type = cast_bwd_type,
    .compute = cast_forward,
    .hidden = 1,
};

int mxc__shp_register_cast(mxc__registry *r) {
  static const mxc__op *const ops[] = {&k_cast, &k_cast_bwd, NULL};
  return mxc__shp_add_all(r, ops);
}
