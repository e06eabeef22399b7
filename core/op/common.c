#include "core/op/common.h"

#include <stdio.h>

int mxc__infer_shape_same(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out) {
  const mxc__shape *known = NULL;
  int known_in = -1;
  char b1[160], b2[160];
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) continue;
    if (!known) {
      known = &in[i];
      known_in = i;
      continue;
    }
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(known, &in[i]), MXC_ERR_SHAPE,
                        "operator '%s': input %d ('%s') has shape %s but "
                        "input %d ('%s') has shape %s; element-wise "
                        "operands must have the same shape (use the "
                        "broadcast_ form to broadcast)",
                        op->name, i, mxc__op_input_name(op, param, i),
                        mxc__shape_str(&in[i], b1, sizeof b1), known_in,
                        mxc__op_input_name(op, param, known_in),
                        mxc__shape_str(known, b2, sizeof b2));
  }
  for (int i = 0; i < n_out && !known; ++i) {
    if (out[i].ndim >= 0) known = &out[i];
  }
  if (!known) return MXC_OK;
  mxc__shape s = *known;
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) in[i] = s;
  }
  for (int i = 0; i < n_out; ++i) {
    if (out[i].ndim < 0) {
      out[i] = s;
    } else {
      MXC_RETURN_ERROR_IF(!mxc__shape_equal(&out[i], &s), MXC_ERR_SHAPE,
                          "operator '%s': output %d has shape %s; expected "
                          "%s",
                          op->name, i, mxc__shape_str(&out[i], b1, sizeof b1),
                          mxc__shape_str(&s, b2, sizeof b2));
    }
  }
  return MXC_OK;
}

int mxc__infer_type_masked(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out, uint32_t same) {
  int t = -1, from = -1;
  for (int i = 0; i < n_in; ++i) {
    if (!(i < 32 && (same >> i & 1)) || in[i] < 0) continue;
    if (t < 0) {
      t = in[i];
      from = i;
      continue;
    }
    MXC_RETURN_ERROR_IF(in[i] != t, MXC_ERR_DTYPE,
                        "operator '%s': input %d ('%s') is %s but input "
                        "%d ('%s') is %s; inputs must share a dtype",
                        op->name, i, mxc__op_input_name(op, param, i),
                        mxc__dtype_name(in[i]), from,
                        mxc__op_input_name(op, param, from),
                        mxc__dtype_name(t));
  }
  for (int i = 0; i < n_out && t < 0; ++i) {
    if (out[i] >= 0) t = out[i];
  }
  if (t < 0) return MXC_OK;
  for (int i = 0; i < n_in; ++i) {
    if (i < 32 && (same >> i & 1) && in[i] < 0) in[i] = t;
  }
  for (int i = 0; i < n_out; ++i) {
    if (out[i] < 0) out[i] = t;
    MXC_RETURN_ERROR_IF(out[i] != t, MXC_ERR_DTYPE,
                        "operator '%s': output %d is %s; expected %s",
                        op->name, i, mxc__dtype_name(out[i]),
                        mxc__dtype_name(t));
  }
  return MXC_OK;
}

int mxc__infer_type_same(const mxc__op *op, const void *param, int *in,
                         int n_in, int *out, int n_out) {
  return mxc__infer_type_masked(op, param, in, n_in, out, n_out,
                                UINT32_MAX);
}

int mxc__unsupported_dtype(const char *op_name, int dtype, const char *what) {
  return mxc__error_set(MXC_ERR_DTYPE,
                        "operator '%s': dtype %s is not supported%s%s",
                        op_name, mxc__dtype_name(dtype) ? mxc__dtype_name(dtype)
                                                        : "(unknown)",
                        what ? "; " : "", what ? what : "");
}

double mxc__blob_get(const mxc__blob *b, int64_t i) {
  switch (b->dtype) {
    case MXC_DTYPE_FLOAT32: return ((const float *)b->ptr)[i];
    case MXC_DTYPE_FLOAT64: return ((const double *)b->ptr)[i];
    case MXC_DTYPE_FLOAT16: return mxc__f16_to_f32(((const uint16_t *)b->ptr)[i]);
    case MXC_DTYPE_BFLOAT16: return mxc__bf16_to_f32(((const uint16_t *)b->ptr)[i]);
    case MXC_DTYPE_UINT8: return ((const uint8_t *)b->ptr)[i];
    case MXC_DTYPE_INT8: return ((const int8_t *)b->ptr)[i];
    case MXC_DTYPE_INT32: return ((const int32_t *)b->ptr)[i];
    case MXC_DTYPE_INT64: return (double)((const int64_t *)b->ptr)[i];
    case MXC_DTYPE_BOOL: return ((const uint8_t *)b->ptr)[i] != 0;
    default: return 0;
  }
}

void mxc__blob_set(const mxc__blob *b, int64_t i, double v) {
  switch (b->dtype) {
    case MXC_DTYPE_FLOAT32: ((float *)b->ptr)[i] = (float)v; break;
    case MXC_DTYPE_FLOAT64: ((double *)b->ptr)[i] = v; break;
    case MXC_DTYPE_FLOAT16: ((uint16_t *)b->ptr)[i] = mxc__f32_to_f16((float)v); break;
    case MXC_DTYPE_BFLOAT16: ((uint16_t *)b->ptr)[i] = mxc__f32_to_bf16((float)v); break;
    /* Saturating, NaN -> 0 (core/base/dtype.h): a plain cast of an
     * out-of-range value is undefined. */
    case MXC_DTYPE_UINT8: ((uint8_t *)b->ptr)[i] = mxc__f2u8(v); break;
    case MXC_DTYPE_INT8: ((int8_t *)b->ptr)[i] = mxc__f2i8(v); break;
    case MXC_DTYPE_INT32: ((int32_t *)b->ptr)[i] = mxc__f2i32(v); break;
    case MXC_DTYPE_INT64: ((int64_t *)b->ptr)[i] = mxc__f2i64(v); break;
    case MXC_DTYPE_BOOL: ((uint8_t *)b->ptr)[i] = v != 0; break;
    default: break;
  }
}

int64_t mxc__blob_get_i64(const mxc__blob *b, int64_t i) {
  switch (b->dtype) {
    case MXC_DTYPE_UINT8: return ((const uint8_t *)b->ptr)[i];
    case MXC_DTYPE_INT8: return ((const int8_t *)b->ptr)[i];
    case MXC_DTYPE_INT32: return ((const int32_t *)b->ptr)[i];
    case MXC_DTYPE_INT64: return ((const int64_t *)b->ptr)[i];
    case MXC_DTYPE_BOOL: return ((const uint8_t *)b->ptr)[i] != 0;
    default: return mxc__f2i64(mxc__blob_get(b, i));
  }
}

void mxc__blob_set_i64(const mxc__blob *b, int64_t i, int64_t v) {
  uint64_t u = (uint64_t)v; /* narrowing through unsigned keeps low bits */
  switch (b->dtype) {
    case MXC_DTYPE_UINT8: ((uint8_t *)b->ptr)[i] = (uint8_t)u; break;
    case MXC_DTYPE_INT8: ((int8_t *)b->ptr)[i] = (int8_t)(uint8_t)u; break;
    case MXC_DTYPE_INT32: ((int32_t *)b->ptr)[i] = (int32_t)(uint32_t)u; break;
    case MXC_DTYPE_INT64: ((int64_t *)b->ptr)[i] = v; break;
    case MXC_DTYPE_BOOL: ((uint8_t *)b->ptr)[i] = v != 0; break;
    default: mxc__blob_set(b, i, (double)v); break;
  }
}
