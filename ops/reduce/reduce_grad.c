/* Gradients of the axis reductions. Each input element i gets
 * dx[i] = f(og[o], x[i], y[o], group statistics) where o is the output
 * element i was reduced into: sum broadcasts og back, mean divides it by
 * the group size, nansum zeroes it where x is NaN, norm multiplies by
 * sign(x) (ord 1) or x / ||x|| (ord 2; 0 when the norm is 0).
 *
 * max/min: as MXNet, every element equal to the result gets the full og
 * (ties each get all of it, so the gradient sums to og times the number
 * of ties). A NaN result gets no gradient (NaN equals nothing).
 *
 * prod/nanprod: d(prod)/dx_i is the product of the other elements.
 * Dividing the product by x_i fails at zeros, so a first pass counts the
 * zeros of each group and multiplies its non-zero elements: with no zero
 * dx_i = og * P / x_i; with one zero only that element gets og * P; with
 * two or more every derivative is 0. nanprod treats NaN as 1 (and gives
 * NaN elements no gradient).
 *
 * Everything is computed in double on chunks of a row (loaded from any
 * float dtype and stored back with the write mode), which keeps one code
 * path for every dtype at little cost next to the memory traffic. */
#include <math.h>

#include "ops/reduce/reduce_impl.h"

#define CHUNK 256

static int needs_stats(mxc__red_kind kind) {
  return kind == MXC__RED_PROD || kind == MXC__RED_NANPROD;
}

int64_t mxc__red_grad_temp(mxc__red_kind kind, const mxc__red_plan *p) {
  return needs_stats(kind) ? 2 * p->n_out : 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* First pass of prod/nanprod: cnt[o] = number of zeros, pnz[o] = product
 * of the rest (NaN skipped for nanprod). */
static void group_stats(mxc__red_kind kind, const mxc__red_plan *p,
                        const mxc__blob *x, double *cnt, double *pnz) {
  double xb[CHUNK];
  for (int64_t o = 0; o < p->n_out; ++o) {
    cnt[o] = 0;
    pnz[o] = 1;
  }
  mxc__red_iter it;
  mxc__red_iter_init(&it, p);
  for (int64_t k = 0; k < it.rows; ++k, mxc__red_iter_next(&it)) {
    for (int64_t j0 = 0; j0 < it.len; j0 += CHUNK) {
      int64_t n = min64(CHUNK, it.len - j0);
      int64_t o0 = it.o + j0 * it.os;
      mxc__red_load_row(x, k * it.len + j0, 1, n, xb);
      for (int64_t j = 0; j < n; ++j) {
        double v = xb[j];
        int64_t o = o0 + j * it.os;
        if (kind == MXC__RED_NANPROD && isnan(v)) continue;
        if (v == 0) {
          cnt[o] += 1;
        } else {
          pnz[o] *= v;
        }
      }
    }
  }
}

/* dx for one chunk: g = og, v = x, yv = y (per element of the chunk). */
static void grad_chunk(mxc__red_kind kind, const mxc__red_plan *p, int64_t n,
                       int64_t o0, int64_t os, const double *g, const double *v,
                       const double *yv, const double *cnt, const double *pnz,
                       double *d) {
  switch (kind) {
    case MXC__RED_SUM:
      for (int64_t j = 0; j < n; ++j) d[j] = g[j];
      break;
    case MXC__RED_MEAN:
      for (int64_t j = 0; j < n; ++j) d[j] = g[j] / (double)p->n_red;
      break;
    case MXC__RED_NANSUM:
      for (int64_t j = 0; j < n; ++j) d[j] = isnan(v[j]) ? 0 : g[j];
      break;
    case MXC__RED_NORM1:
      for (int64_t j = 0; j < n; ++j) d[j] = g[j] * ((v[j] > 0) - (v[j] < 0));
      break;
    case MXC__RED_NORM2:
      for (int64_t j = 0; j < n; ++j)
        d[j] = yv[j] == 0 ? 0 : g[j] * v[j] / yv[j];
      break;
    case MXC__RED_MAX:
    case MXC__RED_MIN:
      for (int64_t j = 0; j < n; ++j) {
        d[j] = v[j] == yv[j] ? g[j] : 0;
      }
      break;
    case MXC__RED_PROD:
    case MXC__RED_NANPROD:
      for (int64_t j = 0; j < n; ++j) {
        int64_t o = o0 + j * os;
        if (kind == MXC__RED_NANPROD && isnan(v[j])) {
          d[j] = 0;
        } else if (cnt[o] == 0) {
          d[j] = g[j] * pnz[o] / v[j];
        } else if (cnt[o] == 1) {
          d[j] = v[j] == 0 ? g[j] * pnz[o] : 0;
        } else {
          d[j] = 0;
        }
      }
      break;
    default:
      for (int64_t j = 0; j < n; ++j) d[j] = 0;
      break;
  }
}

void mxc__red_grad(mxc__red_kind kind, const mxc__red_plan *p,
                   const mxc__blob *og, const mxc__blob *x, const mxc__blob *y,
                   const mxc__blob *dx, mxc__req req, double *temp) {
  double *cnt = temp, *pnz = temp ? temp + p->n_out : NULL;
  if (needs_stats(kind)) group_stats(kind, p, x, cnt, pnz);
  int uses_x = kind != MXC__RED_SUM && kind != MXC__RED_MEAN;
  int uses_y =
      kind == MXC__RED_MAX || kind == MXC__RED_MIN || kind == MXC__RED_NORM2;
  double gb[CHUNK], xb[CHUNK], yb[CHUNK], db[CHUNK];
  mxc__red_iter it;
  mxc__red_iter_init(&it, p);
  for (int64_t k = 0; k < it.rows; ++k, mxc__red_iter_next(&it)) {
    for (int64_t j0 = 0; j0 < it.len; j0 += CHUNK) {
      int64_t n = min64(CHUNK, it.len - j0);
      int64_t o0 = it.o + j0 * it.os;
      int64_t base = k * it.len + j0;
      /* A stride of 0 (the row lies in one group) repeats og[o0]. */
      mxc__red_load_row(og, o0, it.os, n, gb);
      if (uses_x) mxc__red_load_row(x, base, 1, n, xb);
      if (uses_y) mxc__red_load_row(y, o0, it.os, n, yb);
      grad_chunk(kind, p, n, o0, it.os, gb, uses_x ? xb : NULL,
                 uses_y ? yb : NULL, cnt, pnz, db);
      mxc__red_store_row(dx, base, 1, n, db, req);
    }
  }
}
