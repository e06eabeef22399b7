/* Shared pieces of the reduce family (reductions, arg-reductions, softmax,
 * sorting): axis parameters, output shapes, and the iteration plan every
 * reduction kernel walks.
 *
 * The plan. Reducing a set of axes maps each input element to one output
 * element. Dimensions of extent 1 do not affect that mapping, and
 * neighbouring dimensions that are both reduced or both kept behave as one,
 * so the input shape is first simplified to at most MXC_MAX_NDIM "merged"
 * dimensions alternating between kept and reduced. Kernels then read the
 * input once, in memory order, one row (the last merged dimension) at a
 * time; for each row the iterator gives the output offset `o` of its first
 * element and its index `r` within its reduction group (row-major over the
 * reduced axes, which for a single axis is the position along it). Along a
 * row both advance by fixed steps (ostr/rstr of the last dimension: one of
 * them is 0). Reading in memory order keeps every layout cache-friendly
 * without special cases; kernels accumulate into a per-output array. */
#ifndef MXC_OPS_REDUCE_REDUCE_IMPL_H_
#define MXC_OPS_REDUCE_REDUCE_IMPL_H_

#include <stdint.h>

#include "core/op/common.h"

/* softmax and log_softmax's parameters (softmax.c), here for the GPU
 * plug-in's kernels, which read them (backends/cuda). */
typedef struct mxc__softmax_param {
  int64_t axis;
  double temperature; /* 1 when None */
  int dtype;          /* -1: the input's */
  int use_length;
} mxc__softmax_param;

/* The axis reductions' parameters (reduce.c: sum, mean, prod, ...), here
 * for the GPU plug-in's kernels too. */
typedef struct mxc__red_param {
  mxc__tuple axis;
  int keepdims;
  int exclude;
  int64_t ord; /* norm only */
} mxc__red_param;

typedef struct mxc__red_plan {
  int nd;                     /* merged dimensions, >= 1 */
  int64_t dim[MXC_MAX_NDIM];  /* extents */
  int64_t ostr[MXC_MAX_NDIM]; /* output stride; 0 for reduced dims */
  int64_t rstr[MXC_MAX_NDIM]; /* in-group stride; 0 for kept dims */
  int64_t n_in, n_out, n_red; /* elements: input, output, per group */
} mxc__red_plan;

/* Plan for reducing the axes in `mask` (bit a = axis a) of shape s. */
void mxc__red_plan_make(const mxc__shape *s, uint32_t mask, mxc__red_plan *p);

/* Walks the rows of a plan: row k covers input elements
 * [k * len, (k + 1) * len) with len = dim[nd - 1]. */
typedef struct mxc__red_iter {
  const mxc__red_plan *p;
  int64_t idx[MXC_MAX_NDIM];
  int64_t o, r; /* output offset / group index of the row's first element */
  int64_t rows; /* number of rows */
  int64_t len, os, rs; /* row length and the steps of o and r along it */
} mxc__red_iter;

static inline void mxc__red_iter_init(mxc__red_iter *it,
                                      const mxc__red_plan *p) {
  it->p = p;
  for (int d = 0; d < p->nd; ++d) it->idx[d] = 0;
  it->o = it->r = 0;
  it->len = p->dim[p->nd - 1];
  it->rows = it->len ? p->n_in / it->len : 0;
  it->os = p->ostr[p->nd - 1];
  it->rs = p->rstr[p->nd - 1];
}

/* Advances to the next row (an odometer over all but the last dim). */
static inline void mxc__red_iter_next(mxc__red_iter *it) {
  const mxc__red_plan *p = it->p;
  for (int d = p->nd - 2; d >= 0; --d) {
    it->o += p->ostr[d];
    it->r += p->rstr[d];
    if (++it->idx[d] < p->dim[d]) return;
    it->o -= p->ostr[d] * p->dim[d];
    it->r -= p->rstr[d] * p->dim[d];
    it->idx[d] = 0;
  }
}

/* ---- running a reduction, split over the kernel pool ----
 *
 * A reduction kernel in three steps, so that the input can be split:
 * acc: set acc[0, p->n_out) to the identity and accumulate every input
 *      element of plan p (x its first element) into it;
 * comb: dst[o] = dst[o] (+) src[o] for o in [0, n): merges two partial
 *      accumulators of the same outputs;
 * fin: out[o] = final(acc[o]) for o in [o0, o0 + n), honouring req. */
typedef struct mxc__red_kernel {
  void (*acc)(const mxc__red_plan *p, const void *x, void *acc);
  void (*comb)(void *dst, const void *src, int64_t n);
  void (*fin)(const mxc__red_plan *p, const void *acc, const mxc__blob *out,
              int64_t o0, int64_t n, mxc__req req);
} mxc__red_kernel;

/* How many partial accumulator arrays (of p->n_out entries) mxc__red_run
 * needs for p: 1 unless the input is large and its outermost merged
 * dimension is reduced. A function of the plan alone, never of the
 * thread count: see mxc__red_run. */
int64_t mxc__red_parts(const mxc__red_plan *p);

/* Runs k over plan p: input x (elements of es bytes), output out, acc
 * scratch of mxc__red_parts(p) * p->n_out 8-byte accumulators. Inputs of
 * at least MXC__PAR_MIN_ELEMS elements are split over the kernel pool:
 * by slices of the outermost merged dimension when it is kept (each
 * output then sees exactly the serial order of additions), or, when it is
 * reduced, into mxc__red_parts(p) fixed ranges of it whose partial
 * accumulators are merged in range order. The split depends only on the
 * plan, so the result is bitwise the same on 1 thread or many. */
void mxc__red_run(const mxc__red_kernel *k, const mxc__red_plan *p,
                  const void *x, size_t es, const mxc__blob *out, void *acc,
                  mxc__req req);

/* Mask of reduced axes from MXNet-style parameters: axis None or () is
 * every axis (exclude is then ignored, as in MXNet); negative axes count
 * from the end; exclude reduces every axis NOT listed. Out-of-range and
 * duplicate axes are MXC_ERR_INVALID_ARGUMENT naming the operator, the
 * axis and the input's ndim. */
int mxc__red_axes_mask(const char *op, const mxc__tuple *axis, int exclude,
                       int ndim, uint32_t *mask);

/* Shape after reducing `mask`: reduced axes dropped, or kept as 1. A
 * reduction of every axis without keepdims gives (1,), as MXNet 1.9 does
 * (NumPy would give a 0-d array); a 0-d input stays 0-d. */
void mxc__red_out_shape(const mxc__shape *in, uint32_t mask, int keepdims,
                        mxc__shape *out);

/* One axis (softmax, sort, argmax): normalizes a negative axis; an out of
 * range one is MXC_ERR_INVALID_ARGUMENT naming the operator, parameter,
 * axis and ndim. */
int mxc__red_axis(const char *op, const char *param, int64_t axis, int ndim,
                  int *out);

/* Splits s around `axis` into outer x len x inner (row-major). */
void mxc__red_split(const mxc__shape *s, int axis, int64_t *outer, int64_t *len,
                    int64_t *inner);

/* Sets *slot to `want` when unknown; MXC_ERR_SHAPE naming the operator and
 * `what` when it is known and differs. */
int mxc__red_set_shape(const char *op, const char *what, mxc__shape *slot,
                       const mxc__shape *want);

/* Strided row transfer between a blob of a float dtype (float32/64,
 * float16, bfloat16) and doubles: elements base + k * stride, k < n.
 * store honours req (WRITE/INPLACE overwrite, ADD accumulates). */
void mxc__red_load_row(const mxc__blob *b, int64_t base, int64_t stride,
                       int64_t n, double *dst);
void mxc__red_store_row(const mxc__blob *b, int64_t base, int64_t stride,
                        int64_t n, const double *src, mxc__req req);

/* A tile of rows strided by `stride` (the rows along a non-last axis), w
 * of them side by side: dst[k * w + j] = b[base + k * stride + j] for
 * k < len, j < w. Reads w contiguous elements at a time. */
void mxc__red_load_tile(const mxc__blob *b, int64_t base, int64_t stride,
                        int64_t len, int64_t w, double *dst);
void mxc__red_store_tile(const mxc__blob *b, int64_t base, int64_t stride,
                         int64_t len, int64_t w, const double *src,
                         mxc__req req);

/* The reductions of reduce.c, shared with their gradients in
 * reduce_grad.c. */
typedef enum mxc__red_kind {
  MXC__RED_SUM,
  MXC__RED_MEAN,
  MXC__RED_PROD,
  MXC__RED_MAX,
  MXC__RED_MIN,
  MXC__RED_NANSUM,
  MXC__RED_NANPROD,
  MXC__RED_NORM1,
  MXC__RED_NORM2,
  MXC__RED_KIND_COUNT
} mxc__red_kind;

/* Doubles of workspace mxc__red_grad needs for plan p. */
int64_t mxc__red_grad_temp(mxc__red_kind kind, const mxc__red_plan *p);

/* dx (shape of x) = gradient of reduction `kind` given the output
 * gradient og and the forward output y (shape of og; NULL when the
 * gradient does not read it: only max/min/norm2 do). Float dtypes only.
 * temp: mxc__red_grad_temp doubles. */
void mxc__red_grad(mxc__red_kind kind, const mxc__red_plan *p,
                   const mxc__blob *og, const mxc__blob *x, const mxc__blob *y,
                   const mxc__blob *dx, mxc__req req, double *temp);

/* Temporary workspace (MXC__RES_TEMP) of at least nbytes (and at least 8
 * bytes); a failure's message names the operator. */
int mxc__red_temp(const mxc__op *op, const mxc__opctx *ctx, size_t nbytes,
                  void **out);

/* Registration of the other files of the family (reduce.c registers the
 * family and calls these). */
int mxc__reduce_register_arg(mxc__registry *r);
int mxc__reduce_register_softmax(mxc__registry *r);
int mxc__reduce_register_sort(mxc__registry *r);

#endif /* MXC_OPS_REDUCE_REDUCE_IMPL_H_ */
