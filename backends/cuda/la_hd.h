/* The linalg kernels' element and item formulas (la_plan.h's ELEM and
 * ITEM steps), for the device (la.cu) and the host (tests/gpu/la_host.c,
 * which runs the plans against the CPU operators) from one text. They
 * follow ops/linalg/la_ops.c's loops in double; the diagonal index is
 * ops/linalg/linalg_params.h's mxc__la_diag_at, the CPU's own (that
 * header makes MXC__LA_HD __host__ __device__ under nvcc).
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_LA_HD_H_
#define MXC_BACKENDS_CUDA_LA_HD_H_

#include <math.h>
#include <stdint.h>

#include "backends/cuda/la_plan.h"

/* x(i, j) of an r x c row-major item. */
#define MXC__LA_AT(x, c, i, j) ((x)[(i) * (c) + (j)])

/* Element (i, j) of step s's output item `item`: x is slot a's item, sb
 * and sd slots b's and d's values (one per item), info the LU's. */
MXC__LA_HD double mxc__la_elem(const mxc__la_step *s, const double *x,
                               const double *sb, const double *sd,
                               const int *info, int64_t item, int64_t i,
                               int64_t j) {
  int64_t ca = s->ca, off = s->offset;
  switch (s->op) {
    case MXC__LA_E_TRANSPOSE: return MXC__LA_AT(x, ca, j, i);
    case MXC__LA_E_TRIANGLE:
      return (s->lower ? j <= i : j >= i) ? MXC__LA_AT(x, ca, i, j) : 0.0;
    case MXC__LA_E_SYMM:
      return MXC__LA_AT(x, ca, i, j) + MXC__LA_AT(x, ca, j, i);
    case MXC__LA_E_LTU:
      return j > i ? MXC__LA_AT(x, ca, j, i) : MXC__LA_AT(x, ca, i, j);
    case MXC__LA_E_SCALE: return s->alpha * MXC__LA_AT(x, ca, i, j);
    case MXC__LA_E_SCALED_T: {
      double k = s->alpha * sb[item] * (sd ? sd[item] : 1.0);
      return k * MXC__LA_AT(x, ca, j, i);
    }
    case MXC__LA_E_EXTRACT: return x[mxc__la_diag_at(ca, off, j)];
    case MXC__LA_E_MAKE:
      if (off >= 0) return j - i == off ? x[i] : 0.0;
      return i - j == -off ? x[j] : 0.0;
    case MXC__LA_E_LOGDIAG_GRAD:
      return i == j ? sb[item] / MXC__LA_AT(x, ca, i, i) : 0.0;
    case MXC__LA_E_NAN_IF_SINGULAR:
      return info[item] > 0 ? (double)NAN : MXC__LA_AT(x, ca, i, j);
    case MXC__LA_E_ZERO: return 0.0;
    default: return MXC__LA_AT(x, ca, i, j); /* MXC__LA_E_COPY */
  }
}

/* Step s for one item: x is slot a's item (n x n, or 1 x 1), piv the LU's
 * pivots of the item (1-based, LAPACK's), c and d the item's outputs. */
MXC__LA_HD void mxc__la_item(const mxc__la_step *s, const double *x,
                             const int *piv, double *c, double *d) {
  int64_t n = s->ra;
  double v = s->op == MXC__LA_I_SUMLOGDIAG ? 0.0 : 1.0;
  switch (s->op) {
    case MXC__LA_I_SUMLOGDIAG:
      for (int64_t i = 0; i < n; ++i) v += log(MXC__LA_AT(x, n, i, i));
      *c = v;
      return;
    case MXC__LA_I_DET_LU:
      /* The product of U's diagonal, negated per row swap. */
      for (int64_t i = 0; i < n; ++i) {
        if (piv[i] != i + 1) v = -v;
        v *= MXC__LA_AT(x, n, i, i);
      }
      *c = v;
      return;
    default: /* MXC__LA_I_SLOGDET, from the determinant as the CPU */
      v = x[0];
      *c = v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
      *d = log(fabs(v));
      return;
  }
}

#endif /* MXC_BACKENDS_CUDA_LA_HD_H_ */
