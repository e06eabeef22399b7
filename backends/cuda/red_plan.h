/* The other axis reductions and the reductions' gradients (red.cu), as
 * the CPU computes them (ops/reduce/reduce.c, reduce_grad.c):
 *
 * - forward max, min, prod, nansum, nanprod, norm (ord 1 and 2) over any
 *   axes (axis, keepdims, exclude as sum and mean): each group of input
 *   elements (sum_plan.h's grouping) accumulated in double from the
 *   kind's identity, rounded once to float; max/min propagate NaN; a
 *   max/min over an empty group is refused (no identity), as the CPU's
 *   shape inference does;
 * - _backward_sum, _mean, _nansum, _max, _min, _norm (inputs ograd,
 *   data[, output]; output d data): per data element one double
 *   expression of its group's ograd (and output) value and its own value,
 *   rounded once: sum broadcasts ograd, mean divides it by the group
 *   size, nansum zeroes it where data is NaN, max/min give it to every
 *   element equal to the result (ties each get all of it), norm
 *   multiplies by sign(x) (ord 1) or x / norm (ord 2, 0 where the norm
 *   is 0). The element map is a broadcast plan (bcast_plan.h) of ograd,
 *   with the reduced axes kept as 1, against data's shape.
 *
 * - _backward_prod, _nanprod (inputs ograd, data): per group, its count
 *   of zeros and the product of its other elements (NaN skipped by
 *   nanprod), then per element og * P / x without zeros, og * P for the
 *   one zero of a group holding one, else 0 (NaN elements of nanprod get
 *   0). A thread or a block per group computes its statistics and then
 *   writes its elements' gradients (no workspace); the product's order
 *   differs from the CPU's, so these gradients may differ in the float's
 *   last bit.
 *
 * Forward groups of at most MXC__GRED_THREAD_MAX elements are reduced by
 * one thread in order, larger ones by a block (256 strided partials, then
 * a fixed tree): the order is the plan's, never the scheduler's. The
 * CPU's order differs (four interleaved partials along a row, ranges
 * merged in order), which changes sums and products in the double's last
 * bits and rarely the float; max, min and the gradients are exact
 * (bitwise on both sides).
 *
 * Plain C with no CUDA header, host-tested against the CPU operators
 * (tests/gpu:test_cuda_red_plan); MXC__GRED_HD functions run on both
 * sides. */
#ifndef MXC_BACKENDS_CUDA_RED_PLAN_H_
#define MXC_BACKENDS_CUDA_RED_PLAN_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/bcast_plan.h"
#include "backends/cuda/sum_plan.h"
#include "core/base/gpu_plugin.h"

#ifdef __CUDACC__
#define MXC__GRED_HD __host__ __device__ __forceinline__
#else
#define MXC__GRED_HD static inline
#endif

/* The reductions, as ops/reduce's mxc__red_kind. */
enum {
  MXC__GR_SUM,
  MXC__GR_MEAN,
  MXC__GR_PROD,
  MXC__GR_MAX,
  MXC__GR_MIN,
  MXC__GR_NANSUM,
  MXC__GR_NANPROD,
  MXC__GR_NORM1,
  MXC__GR_NORM2,
  /* norm: NORM1 or NORM2 by the parameter ord (the plans resolve it) */
  MXC__GR_NORM
};

/* Forward groups of at most this many elements: one thread each. */
#define MXC__GRED_THREAD_MAX 32

typedef struct mxc__gred_fwd_plan {
  mxc__sum_plan s; /* the groups (s.mean unused: the kind finishes) */
  int kind;        /* MXC__GR_*, norm resolved */
  int per_thread;  /* 1: a thread per group; 0: a block per group */
} mxc__gred_fwd_plan;

typedef struct mxc__gred_bwd_plan {
  mxc__bcast_plan map; /* data element -> ograd/output offset (sa) */
  int kind;            /* MXC__GR_*, norm resolved */
  int64_t n_red;       /* elements per group (mean's divisor) */
} mxc__gred_bwd_plan;

/* The gradients of prod and nanprod: the groups over data's shape. */
typedef mxc__gred_fwd_plan mxc__gred_prod_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The forward plan of reduction kind (MXC__GR_*) for call c (one input,
 * one output; c->param the operators' mxc__red_param): MXC_OK, or
 * MXC_ERR_INVALID_ARGUMENT (bad axes) / MXC_ERR_SHAPE (output size, an
 * empty max/min group) with the reason in why. */
int mxc__gred_fwd_plan_make(int kind, const mxc__gpu_call *c,
                           mxc__gred_fwd_plan *p, char *why, size_t why_len);

/* The gradient's plan for call c (inputs ograd, data[, output]; output d
 * data): MXC_OK or the same errors for shapes that do not fit. */
int mxc__gred_bwd_plan_make(int kind, const mxc__gpu_call *c,
                           mxc__gred_bwd_plan *p, char *why, size_t why_len);

/* The plan of _backward_prod (kind MXC__GR_PROD) or _backward_nanprod
 * (MXC__GR_NANPROD) for call c (inputs ograd, data; output d data): the
 * groups of data's elements (the kernel writes d data at the same
 * offsets), MXC_OK or the errors of the others. */
int mxc__gred_prod_plan_make(int kind, const mxc__gpu_call *c,
                             mxc__gred_prod_plan *p, char *why,
                             size_t why_len);

#ifdef __cplusplus
}
#endif

/* max/min as the CPU's: a NaN, either side, wins. */
MXC__GRED_HD double mxc__gred_max(double a, double v) {
  return v > a || v != v ? v : a;
}
MXC__GRED_HD double mxc__gred_min(double a, double v) {
  return v < a || v != v ? v : a;
}

/* The accumulator's start (the kind's identity). */
MXC__GRED_HD double mxc__gred_init(int kind) {
  switch (kind) {
    case MXC__GR_PROD:
    case MXC__GR_NANPROD: return 1;
    case MXC__GR_MAX: return -INFINITY;
    case MXC__GR_MIN: return INFINITY;
    default: return 0;
  }
}

/* One element v into accumulator a. */
MXC__GRED_HD double mxc__gred_step(int kind, double a, double v) {
  switch (kind) {
    case MXC__GR_PROD: return a * v;
    case MXC__GR_MAX: return mxc__gred_max(a, v);
    case MXC__GR_MIN: return mxc__gred_min(a, v);
    case MXC__GR_NANSUM: return a + (v != v ? 0 : v);
    case MXC__GR_NANPROD: return a * (v != v ? 1 : v);
    case MXC__GR_NORM1: return a + fabs(v);
    case MXC__GR_NORM2: return a + v * v;
    default: return a + v;
  }
}

/* Two partial accumulators merged. */
MXC__GRED_HD double mxc__gred_comb(int kind, double a, double b) {
  switch (kind) {
    case MXC__GR_PROD:
    case MXC__GR_NANPROD: return a * b;
    case MXC__GR_MAX: return mxc__gred_max(a, b);
    case MXC__GR_MIN: return mxc__gred_min(a, b);
    default: return a + b;
  }
}

/* The output value from a group's accumulator (n: its element count). */
MXC__GRED_HD float mxc__gred_final(int kind, double a, int64_t n) {
  if (kind == MXC__GR_MEAN) return (float)(a / (double)n);
  if (kind == MXC__GR_NORM2) return (float)sqrt(a);
  return (float)a;
}

/* The gradient of one data element: g its group's ograd, x its value, y
 * the group's forward output (max/min/norm2 only), in double. */
MXC__GRED_HD double mxc__gred_grad(const mxc__gred_bwd_plan *p, double g,
                                 double x, double y) {
  switch (p->kind) {
    case MXC__GR_MEAN: return g / (double)p->n_red;
    case MXC__GR_NANSUM: return x != x ? 0 : g;
    case MXC__GR_NORM1: return g * ((x > 0) - (x < 0));
    case MXC__GR_NORM2: return y == 0 ? 0 : g * x / y;
    case MXC__GR_MAX:
    case MXC__GR_MIN: return x == y ? g : 0;
    default: return g; /* sum */
  }
}

/* Whether the gradient reads the forward output (input 2). */
MXC__GRED_HD int mxc__gred_grad_uses_y(int kind) {
  return kind == MXC__GR_MAX || kind == MXC__GR_MIN || kind == MXC__GR_NORM2;
}

/* prod's gradient statistics of a group: zeros counted, the others
 * multiplied (NaN skipped for nanprod), as the CPU's group_stats. */
typedef struct mxc__gred_pstat {
  double cnt, pnz;
} mxc__gred_pstat;

MXC__GRED_HD mxc__gred_pstat mxc__gred_pstat_init(void) {
  mxc__gred_pstat s = {0, 1};
  return s;
}

MXC__GRED_HD void mxc__gred_pstat_step(int kind, mxc__gred_pstat *s,
                                       double v) {
  if (kind == MXC__GR_NANPROD && v != v) return;
  if (v == 0) {
    s->cnt += 1;
  } else {
    s->pnz *= v;
  }
}

MXC__GRED_HD void mxc__gred_pstat_comb(mxc__gred_pstat *a,
                                       const mxc__gred_pstat *b) {
  a->cnt += b->cnt;
  a->pnz *= b->pnz;
}

/* d prod / d x times g for an element x of a group with statistics s. */
MXC__GRED_HD double mxc__gred_prod_grad(int kind, double g, double x,
                                        const mxc__gred_pstat *s) {
  if (kind == MXC__GR_NANPROD && x != x) return 0;
  if (s->cnt == 0) return g * s->pnz / x;
  if (s->cnt == 1) return x == 0 ? g * s->pnz : 0;
  return 0;
}

#endif /* MXC_BACKENDS_CUDA_RED_PLAN_H_ */
