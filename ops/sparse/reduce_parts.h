/* Private to the reduction part of the sparse family (reduce.c, slice.c,
 * retain.c, square_sum.c): mxc__sparse_register_reduce (reduce.c) calls
 * the registration of the other files, and every file reads the
 * parameters of operators it does not own through mxc__sparse_param. */
#ifndef MXC_OPS_SPARSE_REDUCE_PARTS_H_
#define MXC_OPS_SPARSE_REDUCE_PARTS_H_

#include "ops/sparse/sparse.h"

/* The field `name` of another family's parameter struct, found through
 * the operator's parameter table (so this family never mirrors a struct
 * layout it does not own), or NULL when the operator has no such
 * parameter of that type. */
const void *mxc__sparse_param(const mxc__op *op, const void *param,
                              const char *name, mxc__param_type type);

int mxc__sparse_register_slice(mxc__registry *r);      /* slice.c */
int mxc__sparse_register_retain(mxc__registry *r);     /* retain.c */
int mxc__sparse_register_square_sum(mxc__registry *r); /* square_sum.c */

#endif /* MXC_OPS_SPARSE_REDUCE_PARTS_H_ */
