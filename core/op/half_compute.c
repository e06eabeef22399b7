/* Half-precision operators through float32 kernels (see half_compute.h). */
#include "core/op/half_compute.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/half.h"
#include "core/op/common.h"

int mxc__blobs_have_half(const mxc__blob *in, int n_in, const mxc__blob *out,
                         int n_out) {
  for (int i = 0; i < n_in; ++i) {
    if (mxc__dtype_is_half(in[i].dtype)) return 1;
  }
  for (int i = 0; i < n_out; ++i) {
    if (mxc__dtype_is_half(out[i].dtype)) return 1;
  }
  return 0;
}

static void widen(const mxc__blob *h, float *f) {
  const uint16_t *x = h->ptr;
  int64_t n = mxc__shape_size(&h->shape);
  if (h->dtype == MXC_DTYPE_FLOAT16) {
    for (int64_t i = 0; i < n; ++i) f[i] = mxc__f16_to_f32(x[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) f[i] = mxc__bf16_to_f32(x[i]);
  }
}

static void narrow(const float *f, const mxc__blob *h) {
  uint16_t *x = h->ptr;
  int64_t n = mxc__shape_size(&h->shape);
  if (h->dtype == MXC_DTYPE_FLOAT16) {
    for (int64_t i = 0; i < n; ++i) x[i] = mxc__f32_to_f16(f[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = mxc__f32_to_bf16(f[i]);
  }
}

/* Bytes of the float32 copy of b (0 for a blob that is not half),
 * rounded up to 64 so that every copy stays aligned. Half blobs hold at
 * most INT64_MAX / 2 bytes, so the copy's size fits; the running total is
 * checked by the caller. */
static int64_t copy_bytes(const mxc__blob *b) {
  if (!mxc__dtype_is_half(b->dtype)) return 0;
  return (mxc__shape_size(&b->shape) * 4 + 63) / 64 * 64;
}

/* The copies of all blobs: blobs in[0..n_in) then out[0..n_out), each
 * pointing at its float32 copy (half blobs) or at the original. */
typedef struct half_ctx {
  mxc__blob *blobs;
  mxc__req *req; /* n_out write modes, after the blobs */
  void *data;
} half_ctx;

static int half_alloc(const char *op_name, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, half_ctx *h) {
  int n = n_in + n_out;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const mxc__blob *b = i < n_in ? &in[i] : &out[i - n_in];
    MXC_RETURN_ERROR_IF(!mxc__add_i64(total, copy_bytes(b), &total) ||
                            (uint64_t)total > SIZE_MAX,
                        MXC_ERR_OOM,
                        "operator '%s': float32 copies of the half-precision "
                        "arrays would exceed the address space",
                        op_name);
  }
  h->blobs = mxc__malloc((size_t)n * sizeof(mxc__blob) +
                         (size_t)n_out * sizeof(mxc__req) + 1);
  h->data = total > 0 ? mxc__aligned_alloc(64, (size_t)total) : NULL;
  if (!h->blobs || (total > 0 && !h->data)) {
    mxc__free(h->blobs);
    mxc__free(h->data);
    return mxc__error_set(MXC_ERR_OOM,
                          "operator '%s': out of memory for %lld bytes of "
                          "float32 copies of half-precision arrays",
                          op_name, (long long)total);
  }
  h->req = (mxc__req *)(h->blobs + n);
  char *p = h->data;
  for (int i = 0; i < n; ++i) {
    const mxc__blob *b = i < n_in ? &in[i] : &out[i - n_in];
    h->blobs[i] = *b;
    if (!mxc__dtype_is_half(b->dtype)) continue;
    h->blobs[i].ptr = p;
    h->blobs[i].dtype = MXC_DTYPE_FLOAT32;
    p += copy_bytes(b);
  }
  return MXC_OK;
}

int mxc__half_compute(mxc__compute_fn f32, const mxc__op *op,
                      const mxc__opctx *ctx, const void *param,
                      const mxc__blob *in, int n_in, const mxc__blob *out,
                      int n_out, const mxc__req *req, uint32_t mutate) {
  half_ctx h = {NULL, NULL, NULL};
  MXC_FORWARD_IF_ERROR(half_alloc(op->name, in, n_in, out, n_out, &h));
  mxc__blob *fin = h.blobs, *fout = h.blobs + n_in;
  for (int i = 0; i < n_in; ++i) {
    if (mxc__dtype_is_half(in[i].dtype)) widen(&in[i], fin[i].ptr);
  }
  /* ADD adds to the widened old value; the copies never alias an input,
   * so INPLACE becomes a plain write. */
  mxc__req *freq = h.req;
  for (int i = 0; i < n_out; ++i) {
    int half = mxc__dtype_is_half(out[i].dtype);
    freq[i] = half && req[i] == MXC__REQ_INPLACE ? MXC__REQ_WRITE : req[i];
    if (half && req[i] == MXC__REQ_ADD) widen(&out[i], fout[i].ptr);
  }
  int rc = f32(op, ctx, param, fin, n_in, fout, n_out, freq);
  for (int i = 0; rc == MXC_OK && i < n_out; ++i) {
    if (mxc__dtype_is_half(out[i].dtype) && req[i] != MXC__REQ_NULL) {
      narrow(fout[i].ptr, &out[i]);
    }
  }
  for (int i = 0; rc == MXC_OK && i < n_in && i < 32; ++i) {
    if ((mutate >> i & 1u) && mxc__dtype_is_half(in[i].dtype)) {
      narrow(fin[i].ptr, &in[i]);
    }
  }
  mxc__free(h.blobs);
  mxc__free(h.data);
  return rc;
}

int mxc__infer_type_float_or_half(const mxc__op *op, const void *param,
                                  int *in, int n_in, int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = n_in ? in[0] : (n_out ? out[0] : -1);
  if (t >= 0 && !mxc__dtype_is_float(t)) {
    return mxc__unsupported_dtype(op->name, t,
                                  "this operator takes float32 or float64, "
                                  "or float16/bfloat16 (computed in "
                                  "float32)");
  }
  return MXC_OK;
}
