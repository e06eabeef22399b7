/* The sparse operator family (storage casts now; the sparse kernels of
 * issue 5 later): helpers shared by its kernels. */
#ifndef MXC_OPS_SPARSE_SPARSE_H_
#define MXC_OPS_SPARSE_SPARSE_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"
#include "ops/op.h"

/* 1 when the element at p of dtype compares equal to zero (so -0.0 is
 * zero and NaN is not). */
int mxc__sparse_is_zero(const void *p, int dtype);

/* Elements per row along axis 0 (product of the trailing extents). */
int64_t mxc__sparse_row_elems(const mxc__ndarray *a);

int mxc__ops_register_sparse(mxc__registry *r);

#endif /* MXC_OPS_SPARSE_SPARSE_H_ */
