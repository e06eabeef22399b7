/* The sparse operator family (storage casts now; the sparse kernels of
 * issue 5 later): helpers shared by its kernels. */
#ifndef MXC_OPS_SPARSE_SPARSE_H_
#define MXC_OPS_SPARSE_SPARSE_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* 1 when the element at p of dtype compares equal to zero (so -0.0 is
 * zero and NaN is not). */
int mxc__sparse_is_zero(const void *p, int dtype);

/* Elements per row along axis 0 (product of the trailing extents). */
int64_t mxc__sparse_row_elems(const mxc__ndarray *a);

/* The family's registration (register.c) calls one function per file;
 * each registers its new operators (mxc__registry_add) and attaches
 * sparse kernels to operators of other families
 * (mxc__registry_attach_stype). It runs after every other family. */
int mxc__sparse_register_cast(mxc__registry *r);      /* cast_storage.c */
int mxc__sparse_register_elemwise(mxc__registry *r);  /* elemwise.c */
int mxc__sparse_register_dot(mxc__registry *r);       /* dot.c */
int mxc__sparse_register_reduce(mxc__registry *r);    /* reduce.c */
int mxc__sparse_register_optim(mxc__registry *r);     /* optim.c */

#endif /* MXC_OPS_SPARSE_SPARSE_H_ */
