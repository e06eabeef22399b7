/* Internal interface of the shape-manipulation family (ops/shape).
 *
 * Almost every operator here moves elements without computing on them, so
 * they share one kernel: a copy between two strided views of the same
 * logical N-d box (mxc__shp_iter). Transpose permutes source strides, slice
 * and flip offset and scale them (flip with negative strides), broadcast,
 * tile and repeat give a broadcast dimension source stride 0, and concat,
 * split and stack copy each part into a strided window of the whole. The
 * adjoint of a many-to-one copy (broadcast, tile, repeat, padding edges)
 * is mxc__shp_sum, which accumulates in double.
 *
 * Plain copies move bytes by element size, so every dtype is moved bit for
 * bit; only the MXC__REQ_ADD path and sums do arithmetic. */
#ifndef MXC_OPS_SHAPE_SHAPE_INTERNAL_H_
#define MXC_OPS_SHAPE_SHAPE_INTERNAL_H_

#include <stdint.h>

#include "core/op/common.h"

/* Iterations may split every dimension in two (tile). */
#define MXC__SHP_MAX_DIMS (2 * MXC_MAX_NDIM)

/* A box of nd dimensions seen through two strided views: element
 * (i_0..i_{nd-1}) is dst[dst_off + sum i_k dst_stride[k]] and
 * src[src_off + sum i_k src_stride[k]] (offsets and strides in elements;
 * strides may be 0 or negative). */
typedef struct mxc__shp_iter {
  int nd;
  int64_t dims[MXC__SHP_MAX_DIMS];
  int64_t dst_stride[MXC__SHP_MAX_DIMS];
  int64_t src_stride[MXC__SHP_MAX_DIMS];
  int64_t dst_off, src_off;
} mxc__shp_iter;

/* Row-major strides (elements) of a contiguous array of these dims. */
void mxc__shp_strides(const int64_t *dims, int nd, int64_t *strides);

/* An iteration over `dims` with both views contiguous (strides filled
 * row-major, offsets 0); callers then adjust one side. */
void mxc__shp_iter_contig(mxc__shp_iter *it, const int64_t *dims, int nd);

/* dst[view] = src[view] (WRITE/INPLACE) or += (ADD); dst and src share a
 * dtype. REQ_NULL does nothing. Views must not overlap unless identical. */
void mxc__shp_copy(const mxc__shp_iter *it, const mxc__blob *dst,
                   const mxc__blob *src, mxc__req req);

/* Adjoint of a many-to-one copy: acc = sum of src[view] over all elements
 * mapping to each dst element (in double), then dst = acc (WRITE) or
 * dst += acc (ADD) over the whole of dst; dst elements no view element
 * reaches become 0 (WRITE). `op_name` names the operator in an OOM error. */
int mxc__shp_sum(const char *op_name, const mxc__shp_iter *it,
                 const mxc__blob *dst, const mxc__blob *src, mxc__req req);

/* Whole-array copy of equally sized arrays (reshape-like operators). */
void mxc__shp_copy_flat(const mxc__blob *dst, const mxc__blob *src,
                        mxc__req req);

/* Sets every element of b to zero (all dtypes: all-zero bytes). */
void mxc__shp_zero(const mxc__blob *b);

/* ---- shape inference helpers ---- */

/* A shape from nd extents. */
mxc__shape mxc__shp_make(const int64_t *dims, int nd);

/* out[i] = s when unknown (after checking that s satisfies the shape
 * invariant of core/base/shape.h for its element count: tile and repeat
 * can ask for more); otherwise MXC_ERR_SHAPE unless equal. */
int mxc__shp_set_out(const mxc__op *op, mxc__shape *out, int i,
                     const mxc__shape *s);

/* *out = axis normalized into [0, ndim) (negative counts from the end), or
 * MXC_ERR_INVALID_ARGUMENT naming the operator, the parameter and the
 * accepted range. */
int mxc__shp_axis(const char *op_name, const char *param, int64_t axis,
                  int ndim, int *out);

/* A parameter tuple as "(2,-1)" (or "None") in buf, for messages. */
char *mxc__shp_tuple_str(const mxc__tuple *t, char *buf, size_t len);

/* Shape as "(2,3,4)" in a caller buffer, for messages. */
#define MXC__SHP_STR(s, buf) mxc__shape_str((s), (buf), sizeof(buf))

/* The box slice(data, begin, end, step) selects, as an iteration whose
 * dims are the box's extents, dst view the box inside data and src view a
 * contiguous array of the box's shape (_slice_assign copies its rhs so).
 * Parameter errors as slice's, naming op. */
int mxc__shp_slice_view(const mxc__op *op, const mxc__tuple *begin,
                        const mxc__tuple *end, const mxc__tuple *step,
                        const mxc__shape *data, mxc__shp_iter *it);

/* The family's parts (one per file). */
int mxc__shp_register_reshape(mxc__registry *r);
int mxc__shp_register_transpose(mxc__registry *r);
int mxc__shp_register_concat(mxc__registry *r);
int mxc__shp_register_slice(mxc__registry *r);
int mxc__shp_register_broadcast(mxc__registry *r);
int mxc__shp_register_pad(mxc__registry *r);
int mxc__shp_register_cast(mxc__registry *r);
int mxc__shp_register_slice_assign(mxc__registry *r);
int mxc__shp_register_rearrange(mxc__registry *r);
int mxc__shp_register_crop(mxc__registry *r);

/* Registers a NULL-terminated list of descriptors. */
int mxc__shp_add_all(mxc__registry *r, const mxc__op *const *ops);

#endif /* MXC_OPS_SHAPE_SHAPE_INTERNAL_H_ */
