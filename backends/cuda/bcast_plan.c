/* The broadcast plan of bcast_plan.h, made on the host per call. */
#include "backends/cuda/bcast_plan.h"

#include <stdio.h>

/* The element strides of s aligned to the output's nd last axes: 0 on an
 * axis s lacks or has extent 1 on (repeated), else contiguous. -1 in
 * *bad_axis when an extent is neither 1 nor the output's. */
static void aligned(const mxc__gpu_array *s, const mxc__gpu_array *out,
                    int64_t *st, int *bad_axis) {
  int64_t run = 1;
  for (int i = out->ndim - 1; i >= 0; --i) {
    int j = i - (out->ndim - s->ndim);
    int64_t e = j >= 0 ? s->dims[j] : 1;
    if (e != 1 && e != out->dims[i]) *bad_axis = i;
    st[i] = e == 1 ? 0 : run;
    run *= e;
  }
}

/* Appends output axis (extent e, strides a, b) to the plan, built
 * innermost first: merged into the previous kept axis when both operands
 * continue contiguously across it. */
static void keep_axis(mxc__bcast_plan *p, int64_t e, int64_t a, int64_t b) {
  int k = p->nd;
  if (k > 0 && a == p->sa[k - 1] * p->ext[k - 1] &&
      b == p->sb[k - 1] * p->ext[k - 1]) {
    p->ext[k - 1] *= e;
    return;
  }
  p->ext[k] = e, p->sa[k] = a, p->sb[k] = b;
  p->nd = k + 1;
}

static void reverse(mxc__bcast_plan *p) {
  for (int i = 0, j = p->nd - 1; i < j; ++i, --j) {
    int64_t t = p->ext[i];
    p->ext[i] = p->ext[j], p->ext[j] = t;
    t = p->sa[i], p->sa[i] = p->sa[j], p->sa[j] = t;
    t = p->sb[i], p->sb[i] = p->sb[j], p->sb[j] = t;
  }
}

int mxc__bcast_plan_make(const mxc__gpu_array *a, const mxc__gpu_array *b,
                         const mxc__gpu_array *out, mxc__bcast_plan *p,
                         char *why, size_t why_len) {
  int64_t sa[MXC_MAX_NDIM] = {0}, sb[MXC_MAX_NDIM] = {0};
  int bad = -1;
  if (a->ndim > out->ndim || b->ndim > out->ndim) bad = 0;
  if (bad < 0) aligned(a, out, sa, &bad);
  if (bad < 0) aligned(b, out, sb, &bad);
  if (bad >= 0) {
    snprintf(why, why_len,
             "the inputs (%d and %d axes) do not broadcast to the output's "
             "shape (%d axes) at output axis %d",
             a->ndim, b->ndim, out->ndim, bad);
    return MXC_ERR_SHAPE;
  }
  p->nd = 0;
  for (int i = out->ndim - 1; i >= 0; --i) {
    if (out->dims[i] != 1) keep_axis(p, out->dims[i], sa[i], sb[i]);
  }
  if (p->nd == 0) { /* one element */
    p->nd = 1, p->ext[0] = 1, p->sa[0] = p->sb[0] = 0;
  }
  reverse(p);
  return MXC_OK;
}
