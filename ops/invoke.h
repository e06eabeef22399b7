/* Imperative operator invocation: validate, infer, allocate outputs and
 * push the kernel to the engine. Shape and type errors are reported here,
 * before anything is pushed. */
#ifndef MXC_OPS_INVOKE_H_
#define MXC_OPS_INVOKE_H_

#include "core/ndarray/ndarray.h"
#include "ops/op.h"

/* Invokes op with parsed parameters `param` (copied) on inputs in[0..n_in).
 * out[0..n_out): an entry that is NULL receives a new array (owned by the
 * caller) on success; a non-NULL entry is written with req[i] (req NULL:
 * all MXC__REQ_WRITE). n_out is the operator's output count or its visible
 * output count (hidden outputs are then made and dropped internally).
 * On failure nothing is pushed and out is untouched. */
int mxc__op_invoke(const mxc__op *op, const void *param,
                   mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                   int n_out, const mxc__req *req);

/* Per-thread training mode used by invoke (Dropout, BatchNorm): returns
 * the previous value. Default 0 (inference). */
int mxc__set_training(int is_train);
int mxc__is_training(void);

#endif /* MXC_OPS_INVOKE_H_ */
