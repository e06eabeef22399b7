/* The strided-copy plans of copy_plan.h: each operator's permutation or
 * flipped axes read from its parameters, checked as ops/shape/transpose.c
 * checks them (the call reached the GPU after the CPU's shape inference,
 * so a refusal here means the mirrors or the shapes disagree). */
#include "backends/cuda/copy_plan.h"

#include <stdint.h>
#include <stdio.h>

#include "ops/shape/py_slice.h"
#include "ops/shape/rearrange_map.h"
#include "ops/shape/rep_box.h"

/* axis in [-nd, nd) normalized into *out; else the reason. */
static int norm_axis(const char *what, int64_t axis, int nd, int *out,
                     char *why, size_t why_len) {
  if (axis < -nd || axis >= nd) {
    snprintf(why, why_len, "%s = %lld is outside [%d, %d)", what,
             (long long)axis, -nd, nd);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  *out = (int)(axis < 0 ? axis + nd : axis);
  return MXC_OK;
}

static int transpose_perm(const mxc__cp_transpose_param *p, int nd, int *perm,
                          char *why, size_t why_len) {
  if (p->axes.ndim <= 0) {
    for (int k = 0; k < nd; ++k) perm[k] = nd - 1 - k;
    return MXC_OK;
  }
  if (p->axes.ndim != nd) {
    snprintf(why, why_len, "transpose: axes has %d entries for %d axes",
             p->axes.ndim, nd);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int seen[MXC_MAX_NDIM] = {0};
  for (int k = 0; k < nd; ++k) {
    int rc = norm_axis("transpose: an axis", p->axes.d[k], nd, &perm[k], why,
                       why_len);
    if (rc != MXC_OK) return rc;
    if (seen[perm[k]]++) {
      snprintf(why, why_len, "transpose: axes names axis %d twice", perm[k]);
      return MXC_ERR_INVALID_ARGUMENT;
    }
  }
  return MXC_OK;
}

static int swap_perm(const mxc__cp_swap_param *p, int nd, int *perm,
                     char *why, size_t why_len) {
  int a, b;
  int rc = norm_axis("swapaxes: dim1", p->dim1, nd, &a, why, why_len);
  if (rc == MXC_OK) {
    rc = norm_axis("swapaxes: dim2", p->dim2, nd, &b, why, why_len);
  }
  if (rc != MXC_OK) return rc;
  for (int k = 0; k < nd; ++k) perm[k] = k;
  perm[a] = b;
  perm[b] = a;
  return MXC_OK;
}

/* stride[k] of flipped axes negated, src_off at their last element. */
static int flip_axes(const mxc__cp_flip_param *p, mxc__copy_plan *cp,
                     char *why, size_t why_len) {
  int flipped[MXC_MAX_NDIM] = {0};
  for (int i = 0; i < p->axis.ndim; ++i) {
    int ax;
    int rc = norm_axis("flip: an axis", p->axis.d[i], cp->nd, &ax, why,
                       why_len);
    if (rc != MXC_OK) return rc;
    if (flipped[ax]++) {
      snprintf(why, why_len, "flip: axis names axis %d twice", ax);
      return MXC_ERR_INVALID_ARGUMENT;
    }
    cp->src_off += (cp->ext[ax] - 1) * cp->stride[ax];
    cp->stride[ax] = -cp->stride[ax];
  }
  return MXC_OK;
}

/* The permuted (or, for flip, the identity) plan, its output shape
 * checked against out. */
static int permuted(const int *perm, const mxc__gpu_array *in,
                    const mxc__gpu_array *out, mxc__copy_plan *p, char *why,
                    size_t why_len) {
  int nd = in->ndim;
  int64_t istr[MXC_MAX_NDIM], s = 1;
  for (int k = nd - 1; k >= 0; --k) istr[k] = s, s *= in->dims[k];
  if (out->ndim != nd) {
    snprintf(why, why_len, "the output has %d axes, the input %d",
             out->ndim, nd);
    return MXC_ERR_SHAPE;
  }
  p->nd = nd > 0 ? nd : 1;
  p->ext[0] = 1, p->stride[0] = 0, p->src_off = 0;
  for (int k = 0; k < nd; ++k) {
    p->ext[k] = in->dims[perm[k]];
    p->stride[k] = istr[perm[k]];
    if (out->dims[k] != p->ext[k]) {
      snprintf(why, why_len,
               "output axis %d has extent %lld; the plan gives %lld", k,
               (long long)out->dims[k], (long long)p->ext[k]);
      return MXC_ERR_SHAPE;
    }
  }
  return MXC_OK;
}

/* Each output axis from the input's, or repeated (stride 0) where the
 * input's extent is 1. */
static int broadcast(const mxc__gpu_array *in, const mxc__gpu_array *out,
                     mxc__copy_plan *p, char *why, size_t why_len) {
  int nd = in->ndim;
  if (out->ndim != nd) {
    snprintf(why, why_len, "the output has %d axes, the input %d",
             out->ndim, nd);
    return MXC_ERR_SHAPE;
  }
  p->nd = nd > 0 ? nd : 1;
  p->ext[0] = 1, p->stride[0] = 0, p->src_off = 0;
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; --k) {
    if (in->dims[k] != out->dims[k] && in->dims[k] != 1) {
      snprintf(why, why_len,
               "input axis %d has extent %lld, neither 1 nor the output's "
               "%lld",
               k, (long long)in->dims[k], (long long)out->dims[k]);
      return MXC_ERR_SHAPE;
    }
    p->ext[k] = out->dims[k];
    p->stride[k] = in->dims[k] == out->dims[k] ? s : 0;
    s *= in->dims[k];
  }
  return MXC_OK;
}

int mxc__copy_plan_make(int kind, const void *param, const mxc__gpu_array *in,
                        const mxc__gpu_array *out, mxc__copy_plan *p,
                        char *why, size_t why_len) {
  int nd = in->ndim, perm[MXC_MAX_NDIM], rc = MXC_OK;
  if (kind == MXC__CP_BROADCAST) return broadcast(in, out, p, why, why_len);
  for (int k = 0; k < nd; ++k) perm[k] = k;
  if (!param) {
    snprintf(why, why_len, "no parameters");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (kind == MXC__CP_TRANSPOSE) {
    rc = transpose_perm(param, nd, perm, why, why_len);
  } else if (kind == MXC__CP_SWAPAXES) {
    rc = swap_perm(param, nd, perm, why, why_len);
  }
  if (rc == MXC_OK) rc = permuted(perm, in, out, p, why, why_len);
  if (rc == MXC_OK && kind == MXC__CP_FLIP) {
    rc = flip_axes(param, p, why, why_len);
  }
  return rc;
}

/* ---- slices (ops/shape/slice.c's boxes; mxc__py_slice shared) ---- */

#define NONE_ENTRY INT64_MIN

/* begin, step and len per axis of slice's box. */
static int slice_box(const mxc__cp_slice_param *p, const mxc__gpu_array *d,
                     int64_t *begin, int64_t *step, int64_t *len, char *why,
                     size_t why_len) {
  if (p->begin.ndim > d->ndim || p->end.ndim != p->begin.ndim ||
      (p->step.ndim > 0 && p->step.ndim != p->begin.ndim)) {
    snprintf(why, why_len, "slice: begin/end/step do not fit %d axes",
             d->ndim);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  for (int k = 0; k < p->begin.ndim; ++k) {
    int has_step = p->step.ndim > 0 && p->step.d[k] != NONE_ENTRY;
    step[k] = has_step ? p->step.d[k] : 1; /* None is 1, as in Python */
    if (step[k] == 0) {
      snprintf(why, why_len, "slice: a zero step on axis %d", k);
      return MXC_ERR_INVALID_ARGUMENT;
    }
    mxc__py_slice(p->begin.d[k], p->end.d[k], step[k], d->dims[k], &begin[k],
                  &len[k]);
    if (len[k] <= 1) step[k] = 1;
  }
  return MXC_OK;
}

/* slice_axis: MXNet's unclamped range on one axis. */
static int slice_axis_box(const mxc__cp_slice_axis_param *p,
                          const mxc__gpu_array *d, int64_t *begin,
                          int64_t *len, char *why, size_t why_len) {
  int ax;
  int rc = norm_axis("slice_axis: axis", p->axis, d->ndim, &ax, why, why_len);
  if (rc != MXC_OK) return rc;
  int64_t n = d->dims[ax];
  int64_t b = p->begin < 0 ? p->begin + n : p->begin;
  int64_t e = !p->end.has ? n : p->end.v < 0 ? p->end.v + n : p->end.v;
  if (!(0 <= b && b <= e && e <= n)) {
    snprintf(why, why_len,
             "slice_axis: begin %lld, end %lld outside [0, %lld]",
             (long long)b, (long long)e, (long long)n);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  begin[ax] = b;
  len[ax] = e - b;
  return MXC_OK;
}

int mxc__copy_plan_slice(int kind, const void *param,
                         const mxc__gpu_array *data,
                         const mxc__gpu_array *box, mxc__copy_plan *p,
                         char *why, size_t why_len) {
  int nd = data->ndim, rc = MXC_OK;
  int64_t begin[MXC_MAX_NDIM], step[MXC_MAX_NDIM], len[MXC_MAX_NDIM];
  for (int k = 0; k < nd; ++k) {
    begin[k] = 0, step[k] = 1, len[k] = data->dims[k];
  }
  if (kind == MXC__CP_SLICE_LIKE) {
    for (int k = 0; k < nd && k < box->ndim; ++k) len[k] = box->dims[k];
  } else if (!param) {
    snprintf(why, why_len, "no parameters");
    return MXC_ERR_INVALID_ARGUMENT;
  } else if (kind == MXC__CP_SLICE) {
    rc = slice_box(param, data, begin, step, len, why, why_len);
  } else {
    rc = slice_axis_box(param, data, begin, len, why, why_len);
  }
  if (rc != MXC_OK) return rc;
  int64_t s = 1;
  p->nd = nd > 0 ? nd : 1;
  p->ext[0] = 1, p->stride[0] = 0, p->src_off = 0;
  for (int k = nd - 1; k >= 0; --k) {
    if (box->ndim != nd || box->dims[k] != len[k] || len[k] > data->dims[k]) {
      snprintf(why, why_len,
               "the slice's axis %d has extent %lld; the parameters give "
               "%lld",
               k, (long long)(k < box->ndim ? box->dims[k] : -1),
               (long long)len[k]);
      return MXC_ERR_SHAPE;
    }
    p->ext[k] = len[k];
    p->stride[k] = step[k] * s;
    p->src_off += begin[k] * s;
    s *= data->dims[k];
  }
  return MXC_OK;
}

/* ---- joins and splits (ops/shape/concat.c's parts) ---- */

void mxc__copy_plan_part(const mxc__gpu_array *whole, int axis,
                         int64_t start, int64_t ext, mxc__copy_plan *p) {
  int nd = whole->ndim;
  int64_t s = 1;
  p->nd = nd > 0 ? nd : 1;
  p->ext[0] = 1, p->stride[0] = 0, p->src_off = 0;
  for (int k = nd - 1; k >= 0; --k) {
    p->ext[k] = k == axis ? ext : whole->dims[k];
    p->stride[k] = s;
    if (k == axis) p->src_off = start * s;
    s *= whole->dims[k];
  }
}

/* ---- tile and repeat (ops/shape/rep_box.h's box) ---- */

/* The box of kind's parameters over data's shape: MXC__REP_BOX_*, or -1
 * with the reason (a negative rep, a repeat axis out of range). */
static int rep_box(int kind, const void *param, const mxc__gpu_array *data,
                   mxc__rep_box *b, char *why, size_t why_len) {
  if (kind == MXC__CP_TILE) {
    const mxc__cp_tile_param *t = param;
    for (int k = 0; k < t->reps.ndim; ++k) {
      if (t->reps.d[k] < 0) {
        snprintf(why, why_len, "reps has a negative entry");
        return -1;
      }
    }
    return mxc__tile_box(data->dims, data->ndim, t->reps.d, t->reps.ndim, b);
  }
  const mxc__cp_repeat_param *r = param;
  int ax = -1;
  if (r->repeats < 0) {
    snprintf(why, why_len, "repeats = %lld is negative",
             (long long)r->repeats);
    return -1;
  }
  if (r->axis.has &&
      norm_axis("axis", r->axis.v, data->ndim, &ax, why, why_len) != MXC_OK) {
    return -1;
  }
  return mxc__repeat_box(data->dims, data->ndim, r->repeats, ax, b);
}

/* Splits the box's axes into data and copies, each with its output step
 * (the box is the output in row-major order). */
static void rep_split(const mxc__rep_box *b, mxc__rep_plan *p) {
  int64_t step[2 * MXC_MAX_NDIM], s = 1;
  for (int k = b->nd - 1; k >= 0; --k) {
    step[k] = s;
    s *= b->dims[k];
  }
  p->nd_data = p->nd_rep = 0;
  p->n_data = p->n_rep = 1;
  for (int k = 0; k < b->nd; ++k) {
    if (b->rep[k]) {
      p->rep_ext[p->nd_rep] = b->dims[k];
      p->rep_step[p->nd_rep++] = step[k];
      p->n_rep *= b->dims[k];
    } else {
      p->data_ext[p->nd_data] = b->dims[k];
      p->data_step[p->nd_data++] = step[k];
      p->n_data *= b->dims[k];
    }
  }
}

int mxc__copy_plan_rep(int kind, const void *param, const mxc__gpu_array *data,
                       const mxc__gpu_array *big, mxc__rep_plan *p, char *why,
                       size_t why_len) {
  mxc__rep_box b;
  if (!param) {
    snprintf(why, why_len, "parameters expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  int rc = rep_box(kind, param, data, &b, why, why_len);
  if (rc < 0) return MXC_ERR_INVALID_ARGUMENT;
  if (rc != MXC__REP_BOX_OK) {
    snprintf(why, why_len, "the output would have more than %d axes or more "
             "elements than int64 counts", MXC_MAX_NDIM);
    return MXC_ERR_SHAPE;
  }
  int same = big->ndim == b.out_nd;
  for (int k = 0; same && k < b.out_nd; ++k) same = big->dims[k] == b.out[k];
  if (!same) {
    snprintf(why, why_len, "the expanded array has %d axes and %lld "
             "elements; the parameters give another shape", big->ndim,
             (long long)big->size);
    return MXC_ERR_SHAPE;
  }
  rep_split(&b, p);
  return MXC_OK;
}

/* ---- depth_to_space, space_to_depth, diag (ops/shape/rearrange_map.h) */

/* a's shape is nd extents d[0..nd)? */
static int shape_is(const mxc__gpu_array *a, const int64_t *d, int nd) {
  int same = a->ndim == nd;
  for (int k = 0; same && k < nd; ++k) same = a->dims[k] == d[k];
  return same;
}

int mxc__copy_plan_ds(int64_t b, const mxc__gpu_array *space,
                      const mxc__gpu_array *depth, mxc__copy_plan *p,
                      char *why, size_t why_len) {
  if (b < 1 || space->ndim != 4 || space->dims[2] % b != 0 ||
      space->dims[3] % b != 0) {
    snprintf(why, why_len, "a 4-D space side whose height and width are "
             "multiples of block_size %lld expected", (long long)b);
    return MXC_ERR_SHAPE;
  }
  int64_t dims[6], depth_st[6];
  mxc__ds_map(space->dims, b, dims, depth_st);
  int64_t want[4] = {dims[0], dims[1] * b * b, dims[2], dims[4]};
  if (!shape_is(depth, want, 4)) {
    snprintf(why, why_len, "the depth side has %d axes and %lld elements; "
             "block_size %lld gives (%lld, %lld, %lld, %lld)", depth->ndim,
             (long long)depth->size, (long long)b, (long long)want[0],
             (long long)want[1], (long long)want[2], (long long)want[3]);
    return MXC_ERR_SHAPE;
  }
  p->nd = 6;
  p->src_off = 0;
  for (int k = 0; k < 6; ++k) p->ext[k] = dims[k], p->stride[k] = depth_st[k];
  return MXC_OK;
}

int mxc__copy_plan_diag(const void *param, const mxc__gpu_array *m,
                        const mxc__gpu_array *v, int one_d,
                        mxc__copy_plan *p, char *why, size_t why_len) {
  const mxc__cp_diag_param *d = param;
  int a1 = 0, a2 = 1;
  if (!d) {
    snprintf(why, why_len, "parameters expected");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (!one_d && (norm_axis("axis1", d->axis1, m->ndim, &a1, why, why_len) ||
                 norm_axis("axis2", d->axis2, m->ndim, &a2, why, why_len))) {
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (a1 == a2 || m->ndim < 2 || (one_d && m->ndim != 2)) {
    snprintf(why, why_len, "two distinct axes of a matrix side of at least "
             "2 axes expected (axes %d and %d of %d)", a1, a2, m->ndim);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  p->nd = mxc__diag_map(m->dims, m->ndim, a1, a2, d->k, p->ext, p->stride,
                        &p->src_off);
  if (p->nd == 0) {
    snprintf(why, why_len, "diagonal k = %lld lies outside the planes",
             (long long)d->k);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  if (!shape_is(v, p->ext, p->nd)) {
    snprintf(why, why_len, "the diagonal array has %d axes and %lld "
             "elements; the matrix side gives another shape", v->ndim,
             (long long)v->size);
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}
