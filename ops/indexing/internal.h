/* Shared helpers of the indexing and initialization family (ops/indexing).
 *
 * Index arrays may have any numeric dtype: values are read as doubles and
 * truncated toward zero, as MXNet does for float indices. Data is moved
 * in whole runs of contiguous elements (memcpy for writes), so forward
 * operators work for every dtype; accumulation (gradients, req ADD) has
 * typed loops for float32/float64 and a generic path for the rest. */
#ifndef MXC_OPS_INDEXING_INTERNAL_H_
#define MXC_OPS_INDEXING_INTERNAL_H_

#include <stdint.h>

#include "core/op/common.h"
#include "ops/indexing/index_mode.h"

/* Index value i of an index blob of any dtype, truncated toward zero.
 * NaN and values beyond +-2^62 saturate (so later range checks catch them
 * instead of the cast being undefined). */
int64_t mxc__idx_at(const mxc__blob *b, int64_t i);

/* The run-time error for an index outside an axis: names the operator, the
 * index, the axis and its extent. Returns MXC_ERR_INVALID_ARGUMENT. */
int mxc__idx_range_error(const char *op_name, int64_t index, int axis,
                         int64_t extent);

/* Normalizes axis (negative counts from the end) for an array of ndim
 * dimensions; MXC_ERR_INVALID_ARGUMENT naming the operator otherwise. */
int mxc__idx_axis(const char *op_name, int64_t axis, int ndim, int *out);

/* dst[doff .. doff+n) = or += src[soff .. soff+n) according to req (not
 * NULL). dst and src have the same dtype. */
void mxc__idx_move(const mxc__blob *dst, int64_t doff, const mxc__blob *src,
                   int64_t soff, int64_t n, mxc__req req);

/* Prepares a gradient output for scatter-adding into it: zeroes it for
 * WRITE/INPLACE, leaves it for ADD. Returns 0 for NULL (skip the work). */
int mxc__idx_begin_accum(const mxc__blob *b, mxc__req req);

/* Writes v (converted to b's dtype) to every element, honouring req. */
void mxc__idx_fill(const mxc__blob *b, double v, mxc__req req);

/* Gradient builder for operators differentiable in input 0 only (data;
 * indices get none): one node "_backward_<op>" with inputs (ograd,
 * forward inputs...) and a single output, the gradient of input 0. */
int mxc__idx_grad_data_only(const struct mxc__node *fwd,
                            const struct mxc__entry *ograd,
                            struct mxc__entry *igrad);

/* Puts an inferred shape s into a slot: fills it when unknown, otherwise
 * checks it (MXC_ERR_SHAPE naming the operator, `what` and both shapes). */
int mxc__idx_assign_shape(const mxc__op *op, mxc__shape *slot,
                          const mxc__shape *s, const char *what);

/* Product of dims [from, to) of a shape. */
int64_t mxc__idx_span(const mxc__shape *s, int from, int to);

/* Builds "operator 'name': what" into buf (for mxc__shape_make). */
const char *mxc__idx_what(char *buf, size_t len, const char *op_name,
                          const char *what);

/* Registration of each file's descriptors. */
int mxc__idx_register_take(mxc__registry *r);
int mxc__idx_register_gather(mxc__registry *r);
int mxc__idx_register_where(mxc__registry *r);
int mxc__idx_register_one_hot(mxc__registry *r);
int mxc__idx_register_init(mxc__registry *r);  /* init.c */

#endif /* MXC_OPS_INDEXING_INTERNAL_H_ */
