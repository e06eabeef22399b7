/* Storage casts between dense, row_sparse and CSR arrays through the
 * cast_storage operator, for callers outside an operator's kernel (the C
 * API's mxc_ndarray_cast_storage, executors delivering sparse gradients).
 * The work is pushed like any mxc__op_invoke call. */
#ifndef MXC_CORE_OP_CAST_STORAGE_H_
#define MXC_CORE_OP_CAST_STORAGE_H_

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* Casts src to storage type stype (MXC_STYPE_*; checked by the caller).
 * *dst NULL: a new array is created and returned there (owned by the
 * caller); else *dst is written with req (NULL: write), and its storage
 * type must be stype. Errors as mxc__op_invoke; MXC_ERR_NOT_FOUND when
 * this build has no cast_storage. */
int mxc__op_cast_storage(mxc__ndarray *src, int stype, const mxc__req *req,
                         mxc__ndarray **dst);

#endif /* MXC_CORE_OP_CAST_STORAGE_H_ */
