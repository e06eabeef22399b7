/* Axis parameters, output shapes, iteration plans and row transfers shared
 * by the reduce family (see reduce_impl.h). */
#include <stdio.h>

#include "ops/reduce/reduce_impl.h"

void mxc__red_plan_make(const mxc__shape *s, uint32_t mask, mxc__red_plan *p) {
  int red[MXC_MAX_NDIM];
  int nd = 0;
  p->n_in = p->n_out = p->n_red = 1;
  for (int a = 0; a < s->ndim; ++a) {
    int64_t d = s->dims[a];
    int is_red = (int)(mask >> a & 1);
    p->n_in *= d;
    if (is_red) {
      p->n_red *= d;
    } else {
      p->n_out *= d;
    }
    if (d == 1) continue; /* extent 1 never changes the mapping */
    if (nd > 0 && red[nd - 1] == is_red) {
      p->dim[nd - 1] *= d;
    } else {
      p->dim[nd] = d;
      red[nd++] = is_red;
    }
  }
  if (nd == 0) { /* a scalar, or only extents of 1 */
    p->dim[0] = 1;
    red[0] = 0;
    nd = 1;
  }
  p->nd = nd;
  int64_t os = 1, rs = 1;
  for (int d = nd - 1; d >= 0; --d) {
    p->ostr[d] = red[d] ? 0 : os;
    p->rstr[d] = red[d] ? rs : 0;
    if (red[d]) {
      rs *= p->dim[d];
    } else {
      os *= p->dim[d];
    }
  }
}

static int axis_range_error(const char *op, const char *param, int64_t axis,
                            int ndim) {
  if (ndim == 0) {
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': %s %lld is out of range for an "
                          "input with 0 dimensions (a scalar has no axes)",
                          op, param, (long long)axis);
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': %s %lld is out of range for an input "
                        "with %d dimensions (expected %d..%d)",
                        op, param, (long long)axis, ndim, -ndim, ndim - 1);
}

int mxc__red_axis(const char *op, const char *param, int64_t axis, int ndim,
                  int *out) {
  if (axis < -ndim || axis >= ndim) {
    return axis_range_error(op, param, axis, ndim);
  }
  *out = (int)(axis < 0 ? axis + ndim : axis);
  return MXC_OK;
}

int mxc__red_axes_mask(const char *op, const mxc__tuple *axis, int exclude,
                       int ndim, uint32_t *mask) {
  uint32_t all = ndim ? (uint32_t)((1ull << ndim) - 1) : 0;
  if (axis->ndim <= 0) { /* None or (): every axis, as MXNet does */
    *mask = all;
    return MXC_OK;
  }
  uint32_t m = 0;
  for (int i = 0; i < axis->ndim; ++i) {
    int a = 0;
    MXC_FORWARD_IF_ERROR(mxc__red_axis(op, "axis", axis->d[i], ndim, &a));
    MXC_RETURN_ERROR_IF(m >> a & 1, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': axis %lld repeats axis %d of an input "
                        "with %d dimensions; each axis may be listed once",
                        op, (long long)axis->d[i], a, ndim);
    m |= 1u << a;
  }
  *mask = exclude ? all & ~m : m;
  return MXC_OK;
}

void mxc__red_out_shape(const mxc__shape *in, uint32_t mask, int keepdims,
                        mxc__shape *out) {
  mxc__shape s;
  s.ndim = 0;
  for (int a = 0; a < in->ndim; ++a) {
    if (!(mask >> a & 1)) {
      s.dims[s.ndim++] = in->dims[a];
    } else if (keepdims) {
      s.dims[s.ndim++] = 1;
    }
  }
  if (s.ndim == 0 && in->ndim > 0) s.dims[s.ndim++] = 1;
  *out = s;
}

void mxc__red_split(const mxc__shape *s, int axis, int64_t *outer, int64_t *len,
                    int64_t *inner) {
  int64_t o = 1, in = 1;
  for (int a = 0; a < axis; ++a) o *= s->dims[a];
  for (int a = axis + 1; a < s->ndim; ++a) in *= s->dims[a];
  *outer = o;
  *len = s->dims[axis];
  *inner = in;
}

int mxc__red_set_shape(const char *op, const char *what, mxc__shape *slot,
                       const mxc__shape *want) {
  char b1[160], b2[160];
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s", op, what,
                      mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2));
  return MXC_OK;
}

void mxc__red_load_row(const mxc__blob *b, int64_t base, int64_t stride,
                       int64_t n, double *dst) {
  if (b->dtype == MXC_DTYPE_FLOAT32) {
    const float *x = (const float *)b->ptr + base;
    for (int64_t k = 0; k < n; ++k) dst[k] = x[k * stride];
  } else if (b->dtype == MXC_DTYPE_FLOAT64) {
    const double *x = (const double *)b->ptr + base;
    for (int64_t k = 0; k < n; ++k) dst[k] = x[k * stride];
  } else {
    for (int64_t k = 0; k < n; ++k)
      dst[k] = mxc__blob_get(b, base + k * stride);
  }
}

void mxc__red_store_row(const mxc__blob *b, int64_t base, int64_t stride,
                        int64_t n, const double *src, mxc__req req) {
  if (req == MXC__REQ_NULL) return;
  if (b->dtype == MXC_DTYPE_FLOAT32) {
    float *y = (float *)b->ptr + base;
    for (int64_t k = 0; k < n; ++k)
      MXC__ASSIGN(req, y[k * stride], (float)src[k]);
  } else if (b->dtype == MXC_DTYPE_FLOAT64) {
    double *y = (double *)b->ptr + base;
    for (int64_t k = 0; k < n; ++k) MXC__ASSIGN(req, y[k * stride], src[k]);
  } else {
    for (int64_t k = 0; k < n; ++k) {
      int64_t i = base + k * stride;
      double v = src[k];
      if (req == MXC__REQ_ADD) v += mxc__blob_get(b, i);
      mxc__blob_set(b, i, v);
    }
  }
}

void mxc__red_load_tile(const mxc__blob *b, int64_t base, int64_t stride,
                        int64_t len, int64_t w, double *dst) {
  if (w == 1) { /* one strided row: a single call */
    mxc__red_load_row(b, base, stride, len, dst);
    return;
  }
  for (int64_t k = 0; k < len; ++k) {
    mxc__red_load_row(b, base + k * stride, 1, w, dst + k * w);
  }
}

void mxc__red_store_tile(const mxc__blob *b, int64_t base, int64_t stride,
                         int64_t len, int64_t w, const double *src,
                         mxc__req req) {
  if (w == 1) {
    mxc__red_store_row(b, base, stride, len, src, req);
    return;
  }
  for (int64_t k = 0; k < len; ++k) {
    mxc__red_store_row(b, base + k * stride, 1, w, src + k * w, req);
  }
}

int mxc__red_temp(const mxc__op *op, const mxc__opctx *ctx, size_t nbytes,
                  void **out) {
  int rc = mxc__opctx_temp(ctx, nbytes < 8 ? 8 : nbytes, out);
  if (rc != MXC_OK) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "operator '%s'", op->name);
    mxc__error_prefix(prefix);
  }
  return rc;
}
