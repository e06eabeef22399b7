/* Helpers shared by the indexing family (see internal.h), and the two
 * registration functions of the family. */
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/indexing/internal.h"
#include "core/op/registry.h"

/* 2^62: far outside any extent, and safely convertible to int64. */
#define IDX_LIMIT 4611686018427387904.0

static int64_t idx_from_double(double v) {
  if (!(v > -IDX_LIMIT)) return -(int64_t)IDX_LIMIT; /* NaN lands here too */
  if (v > IDX_LIMIT) return (int64_t)IDX_LIMIT;
  return (int64_t)v; /* truncates toward zero */
}

int64_t mxc__idx_at(const mxc__blob *b, int64_t i) {
  switch (b->dtype) {
    case MXC_DTYPE_INT32: return ((const int32_t *)b->ptr)[i];
    case MXC_DTYPE_INT64: return ((const int64_t *)b->ptr)[i];
    case MXC_DTYPE_FLOAT32: return idx_from_double(((const float *)b->ptr)[i]);
    case MXC_DTYPE_FLOAT64: return idx_from_double(((const double *)b->ptr)[i]);
    default: return idx_from_double(mxc__blob_get(b, i));
  }
}

int mxc__idx_range_error(const char *op_name, int64_t index, int axis,
                         int64_t extent) {
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': index %lld is out of range for axis "
                        "%d of extent %lld",
                        op_name, (long long)index, axis, (long long)extent);
}

int mxc__idx_axis(const char *op_name, int64_t axis, int ndim, int *out) {
  MXC_RETURN_ERROR_IF(axis < -ndim || axis >= ndim, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': axis %lld is out of range for an array "
                      "of %d dimensions; expected %d..%d",
                      op_name, (long long)axis, ndim, -ndim, ndim - 1);
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return MXC_OK;
}

void mxc__idx_move(const mxc__blob *dst, int64_t doff, const mxc__blob *src,
                   int64_t soff, int64_t n, mxc__req req) {
  if (n <= 0) return; /* zero-size arrays may have no storage at all */
  if (req != MXC__REQ_ADD) {
    size_t es = mxc__dtype_size(dst->dtype);
    memcpy((char *)dst->ptr + (size_t)doff * es,
           (const char *)src->ptr + (size_t)soff * es, (size_t)n * es);
    return;
  }
  switch (dst->dtype) {
    case MXC_DTYPE_FLOAT32: {
      float *d = (float *)dst->ptr + doff;
      const float *s = (const float *)src->ptr + soff;
      for (int64_t i = 0; i < n; ++i) d[i] += s[i];
      return;
    }
    case MXC_DTYPE_FLOAT64: {
      double *d = (double *)dst->ptr + doff;
      const double *s = (const double *)src->ptr + soff;
      for (int64_t i = 0; i < n; ++i) d[i] += s[i];
      return;
    }
    default:
      for (int64_t i = 0; i < n; ++i) {
        mxc__blob_set(dst, doff + i,
                      mxc__blob_get(dst, doff + i) +
                          mxc__blob_get(src, soff + i));
      }
      return;
  }
}

int mxc__idx_begin_accum(const mxc__blob *b, mxc__req req) {
  if (req == MXC__REQ_NULL) return 0;
  if (req != MXC__REQ_ADD && mxc__shape_size(&b->shape) > 0) {
    /* All-zero bytes are 0 in every dtype mxc has. */
    memset(b->ptr, 0,
           (size_t)mxc__shape_size(&b->shape) * mxc__dtype_size(b->dtype));
  }
  return 1;
}

void mxc__idx_fill(const mxc__blob *b, double v, mxc__req req) {
  int64_t n = mxc__shape_size(&b->shape);
  if (req == MXC__REQ_NULL || n == 0) return;
  if (req == MXC__REQ_ADD) {
    for (int64_t i = 0; i < n; ++i) {
      mxc__blob_set(b, i, mxc__blob_get(b, i) + v);
    }
    return;
  }
  /* Convert once, then double the filled prefix with memcpy: fast for
   * every dtype without a typed loop per dtype. */
  size_t es = mxc__dtype_size(b->dtype);
  mxc__blob_set(b, 0, v);
  size_t done = es, total = (size_t)n * es;
  char *p = b->ptr;
  while (done < total) {
    size_t k = done < total - done ? done : total - done;
    memcpy(p + done, p, k);
    done += k;
  }
}

int mxc__idx_grad_data_only(const mxc__node *fwd, const mxc__entry *ograd,
                            mxc__entry *igrad) {
  mxc__entry ins[8];
  int n = fwd->n_inputs;
  MXC_RETURN_ERROR_IF(n + 1 > 8, MXC_ERR_INTERNAL,
                      "operator '%s': too many inputs for its gradient",
                      fwd->op->name);
  ins[0] = ograd[0];
  for (int i = 0; i < n; ++i) ins[i + 1] = fwd->inputs[i];
  char name[128];
  snprintf(name, sizeof name, "_backward_%s", fwd->op->name);
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op_like(name, fwd, ins, n + 1, &b));
  for (int i = 0; i < n; ++i) {
    mxc__entry none = {NULL, 0};
    igrad[i] = i == 0 ? mxc__entry_ref(b, 0) : none;
  }
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

int mxc__idx_assign_shape(const mxc__op *op, mxc__shape *slot,
                          const mxc__shape *s, const char *what) {
  char b1[160], b2[160];
  if (slot->ndim < 0) {
    *slot = *s;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, s), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s",
                      op->name, what, mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(s, b2, sizeof b2));
  return MXC_OK;
}

int64_t mxc__idx_span(const mxc__shape *s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s->dims[i];
  return n;
}

const char *mxc__idx_what(char *buf, size_t len, const char *op_name,
                          const char *what) {
  snprintf(buf, len, "operator '%s': %s", op_name, what);
  return buf;
}

int mxc__ops_register_indexing(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__idx_register_take(r));
  MXC_FORWARD_IF_ERROR(mxc__idx_register_gather(r));
  MXC_FORWARD_IF_ERROR(mxc__idx_register_where(r));
  MXC_FORWARD_IF_ERROR(mxc__idx_register_one_hot(r));
  return mxc__idx_register_init(r);
}
