/* The strided-view kernels shared by the family (see shape_internal.h) and
 * small inference helpers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "core/base/alloc.h"
#include "ops/shape/shape_internal.h"

void mxc__shp_strides(const int64_t *dims, int nd, int64_t *strides) {
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; --k) {
    strides[k] = s;
    s *= dims[k];
  }
}

void mxc__shp_iter_contig(mxc__shp_iter *it, const int64_t *dims, int nd) {
  memset(it, 0, sizeof *it);
  it->nd = nd;
  for (int k = 0; k < nd; ++k) it->dims[k] = dims[k];
  mxc__shp_strides(dims, nd, it->dst_stride);
  mxc__shp_strides(dims, nd, it->src_stride);
}

/* ---- iteration ---- */

/* Called once per innermost run: n elements from offsets doff/soff with
 * strides ds/ss. */
typedef void (*run_fn)(void *ctx, int64_t doff, int64_t soff, int64_t n,
                       int64_t ds, int64_t ss);

/* Drops extent-1 dimensions and merges neighbours that are contiguous with
 * each other in both views, so the innermost run is as long as possible
 * (a transpose of (0,2,1) on (a,b,c) runs over c, a plain copy over
 * everything at once). */
static void simplify(const mxc__shp_iter *in, mxc__shp_iter *out) {
  out->nd = 0;
  out->dst_off = in->dst_off;
  out->src_off = in->src_off;
  for (int k = 0; k < in->nd; ++k) {
    if (in->dims[k] == 1) continue;
    int p = out->nd - 1;
    if (p >= 0 && out->dst_stride[p] == in->dst_stride[k] * in->dims[k] &&
        out->src_stride[p] == in->src_stride[k] * in->dims[k]) {
      out->dims[p] *= in->dims[k];
      out->dst_stride[p] = in->dst_stride[k];
      out->src_stride[p] = in->src_stride[k];
      continue;
    }
    out->dims[out->nd] = in->dims[k];
    out->dst_stride[out->nd] = in->dst_stride[k];
    out->src_stride[out->nd] = in->src_stride[k];
    out->nd++;
  }
}

static void iterate(const mxc__shp_iter *given, run_fn fn, void *ctx) {
  for (int k = 0; k < given->nd; ++k) {
    if (given->dims[k] == 0) return; /* empty box */
  }
  mxc__shp_iter it;
  simplify(given, &it);
  if (it.nd == 0) { /* a single element */
    fn(ctx, it.dst_off, it.src_off, 1, 0, 0);
    return;
  }
  const int inner = it.nd - 1;
  int64_t idx[MXC__SHP_MAX_DIMS] = {0};
  int64_t doff = it.dst_off, soff = it.src_off;
  for (;;) {
    fn(ctx, doff, soff, it.dims[inner], it.dst_stride[inner],
       it.src_stride[inner]);
    int k = inner - 1;
    for (; k >= 0; --k) { /* odometer over the outer dimensions */
      idx[k]++;
      doff += it.dst_stride[k];
      soff += it.src_stride[k];
      if (idx[k] < it.dims[k]) break;
      doff -= it.dst_stride[k] * it.dims[k];
      soff -= it.src_stride[k] * it.dims[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* ---- copy ---- */

typedef struct copy_ctx {
  char *dst;
  const char *src;
  size_t esize;
  int dtype;
} copy_ctx;

#define STRIDED_MOVE(T)                                      \
  do {                                                       \
    T *dp = (T *)d;                                          \
    const T *sp = (const T *)s;                              \
    for (int64_t i = 0; i < n; ++i) dp[i * ds] = sp[i * ss]; \
  } while (0)

static void run_move(void *c, int64_t doff, int64_t soff, int64_t n, int64_t ds,
                     int64_t ss) {
  const copy_ctx *x = c;
  char *d = x->dst + doff * (int64_t)x->esize;
  const char *s = x->src + soff * (int64_t)x->esize;
  if (ds == 1 && ss == 1) {
    if (d != s) memmove(d, s, (size_t)n * x->esize);
    return;
  }
  /* Moving through same-sized unsigned integers keeps every bit (NaN
   * payloads, -0.0) of every dtype. */
  switch (x->esize) {
    case 1: STRIDED_MOVE(uint8_t); break;
    case 2: STRIDED_MOVE(uint16_t); break;
    case 4: STRIDED_MOVE(uint32_t); break;
    default: STRIDED_MOVE(uint64_t); break;
  }
}

#define STRIDED_ADD(T, expr)            \
  do {                                  \
    T *dp = (T *)d;                     \
    const T *sp = (const T *)s;         \
    for (int64_t i = 0; i < n; ++i) {   \
      T a = dp[i * ds], b = sp[i * ss]; \
      dp[i * ds] = (expr);              \
    }                                   \
  } while (0)

/* dst += src for one run. Integers wrap (computed unsigned), bool is a
 * logical or, half types add in float and round once. */
static void run_add(void *c, int64_t doff, int64_t soff, int64_t n, int64_t ds,
                    int64_t ss) {
  const copy_ctx *x = c;
  char *d = x->dst + doff * (int64_t)x->esize;
  const char *s = x->src + soff * (int64_t)x->esize;
  switch (x->dtype) {
    case MXC_DTYPE_FLOAT32: STRIDED_ADD(float, a + b); break;
    case MXC_DTYPE_FLOAT64: STRIDED_ADD(double, a + b); break;
    case MXC_DTYPE_FLOAT16:
      STRIDED_ADD(uint16_t,
                  mxc__f32_to_f16(mxc__f16_to_f32(a) + mxc__f16_to_f32(b)));
      break;
    case MXC_DTYPE_BFLOAT16:
      STRIDED_ADD(uint16_t,
                  mxc__f32_to_bf16(mxc__bf16_to_f32(a) + mxc__bf16_to_f32(b)));
      break;
    case MXC_DTYPE_UINT8: STRIDED_ADD(uint8_t, (uint8_t)(a + b)); break;
    case MXC_DTYPE_INT8:
      STRIDED_ADD(int8_t, (int8_t)(uint8_t)((uint8_t)a + (uint8_t)b));
      break;
    case MXC_DTYPE_INT32:
      STRIDED_ADD(int32_t, (int32_t)((uint32_t)a + (uint32_t)b));
      break;
    case MXC_DTYPE_INT64:
      STRIDED_ADD(int64_t, (int64_t)((uint64_t)a + (uint64_t)b));
      break;
    case MXC_DTYPE_BOOL: STRIDED_ADD(uint8_t, (uint8_t)(a || b)); break;
    default: break;
  }
}

void mxc__shp_copy(const mxc__shp_iter *it, const mxc__blob *dst,
                   const mxc__blob *src, mxc__req req) {
  if (req == MXC__REQ_NULL) return;
  copy_ctx c = {dst->ptr, src->ptr, mxc__dtype_size(dst->dtype), dst->dtype};
  iterate(it, req == MXC__REQ_ADD ? run_add : run_move, &c);
}

void mxc__shp_copy_flat(const mxc__blob *dst, const mxc__blob *src,
                        mxc__req req) {
  int64_t n = mxc__shape_size(&src->shape);
  mxc__shp_iter it;
  mxc__shp_iter_contig(&it, &n, 1);
  mxc__shp_copy(&it, dst, src, req);
}

void mxc__shp_zero(const mxc__blob *b) {
  int64_t n = mxc__shape_size(&b->shape);
  if (n > 0) memset(b->ptr, 0, (size_t)n * mxc__dtype_size(b->dtype));
}

/* ---- sum (adjoint of a many-to-one copy) ---- */

typedef struct sum_ctx {
  double *acc;
  const mxc__blob *src;
} sum_ctx;

static void run_sum(void *c, int64_t doff, int64_t soff, int64_t n, int64_t ds,
                    int64_t ss) {
  const sum_ctx *x = c;
  double *a = x->acc + doff;
  switch (x->src->dtype) {
    case MXC_DTYPE_FLOAT32: {
      const float *s = (const float *)x->src->ptr + soff;
      for (int64_t i = 0; i < n; ++i) a[i * ds] += s[i * ss];
      break;
    }
    case MXC_DTYPE_FLOAT64: {
      const double *s = (const double *)x->src->ptr + soff;
      for (int64_t i = 0; i < n; ++i) a[i * ds] += s[i * ss];
      break;
    }
    default:
      for (int64_t i = 0; i < n; ++i) {
        a[i * ds] += mxc__blob_get(x->src, soff + i * ss);
      }
      break;
  }
}

int mxc__shp_sum(const char *op_name, const mxc__shp_iter *it,
                 const mxc__blob *dst, const mxc__blob *src, mxc__req req) {
  if (req == MXC__REQ_NULL) return MXC_OK;
  int64_t n = mxc__shape_size(&dst->shape);
  if (n == 0) return MXC_OK;
  /* A double accumulator: many float16 terms summed in their own type
   * would lose most of their bits. */
  double *acc = mxc__calloc((size_t)n, sizeof(double));
  MXC_RETURN_ERROR_IF(!acc, MXC_ERR_OOM,
                      "operator '%s': out of memory for a %" PRId64
                      "-element gradient accumulator",
                      op_name, n);
  sum_ctx c = {acc, src};
  iterate(it, run_sum, &c);
  if (dst->dtype == MXC_DTYPE_FLOAT32) {
    float *d = dst->ptr;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req, d[i], (float)acc[i]);
  } else if (dst->dtype == MXC_DTYPE_FLOAT64) {
    double *d = dst->ptr;
    for (int64_t i = 0; i < n; ++i) MXC__ASSIGN(req, d[i], acc[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      double v = acc[i];
      if (req == MXC__REQ_ADD) v += mxc__blob_get(dst, i);
      mxc__blob_set(dst, i, v);
    }
  }
  mxc__free(acc);
  return MXC_OK;
}

/* ---- inference helpers ---- */

mxc__shape mxc__shp_make(const int64_t *dims, int nd) {
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = nd;
  for (int k = 0; k < nd; ++k) s.dims[k] = dims[k];
  return s;
}

char *mxc__shp_tuple_str(const mxc__tuple *t, char *buf, size_t len) {
  if (t->ndim < 0) {
    snprintf(buf, len, "None");
    return buf;
  }
  size_t pos = (size_t)snprintf(buf, len, "(");
  for (int k = 0; k < t->ndim && pos < len; ++k) {
    pos += (size_t)snprintf(buf + pos, len - pos, "%s%" PRId64, k ? "," : "",
                            t->d[k]);
  }
  if (pos < len) snprintf(buf + pos, len - pos, ")");
  return buf;
}

int mxc__shp_set_out(const mxc__op *op, mxc__shape *out, int i,
                     const mxc__shape *s) {
  char b1[160], b2[160];
  if (out[i].ndim < 0) {
    /* Validates what parameters produced (tile, repeat, broadcast_to can
     * ask for more elements than int64 counts). Element counts only: the
     * dtype is not known here, and array creation checks the bytes. */
    snprintf(b1, sizeof b1, "operator '%s': output %d", op->name, i);
    return mxc__shape_make(s->dims, s->ndim, 1, b1, &out[i]);
  }
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&out[i], s), MXC_ERR_SHAPE,
                      "operator '%s': output %d has shape %s; expected %s",
                      op->name, i, MXC__SHP_STR(&out[i], b1),
                      MXC__SHP_STR(s, b2));
  return MXC_OK;
}

int mxc__shp_axis(const char *op_name, const char *param, int64_t axis,
                  int ndim, int *out) {
  MXC_RETURN_ERROR_IF(ndim == 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = %" PRId64
                      " names an axis, but the input is 0-d (a scalar has "
                      "no axes)",
                      op_name, param, axis);
  MXC_RETURN_ERROR_IF(axis < -(int64_t)ndim || axis >= ndim,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = %" PRId64
                      " is out of range for a %d-d input; expected %d..%d",
                      op_name, param, axis, ndim, -ndim, ndim - 1);
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return MXC_OK;
}

int mxc__shp_add_all(mxc__registry *r, const mxc__op *const *ops) {
  for (int i = 0; ops[i]; ++i)
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, ops[i]));
  return MXC_OK;
}

int mxc__ops_register_shape(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__shp_register_reshape(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_transpose(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_concat(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_slice(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_broadcast(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_pad(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_slice_assign(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_rearrange(r));
  MXC_FORWARD_IF_ERROR(mxc__shp_register_crop(r));
  return mxc__shp_register_cast(r);
}
