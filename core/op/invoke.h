/* Imperative operator invocation: validate, infer, allocate outputs and
 * push the kernel to the engine. Shape and type errors are reported here,
 * before anything is pushed. */
#ifndef MXC_CORE_OP_INVOKE_H_
#define MXC_CORE_OP_INVOKE_H_

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* Invokes op with parsed parameters `param` (copied) on inputs in[0..n_in).
 * out[0..n_out): an entry that is NULL receives a new array (owned by the
 * caller) on success; a non-NULL entry is written with req[i] (req NULL:
 * all MXC__REQ_WRITE). n_out is the operator's output count or its visible
 * output count (hidden outputs are then made and dropped internally).
 * On failure nothing is pushed and out is untouched.
 *
 * Storage types (core/op/op.h): the operator's sparse kernel runs when its
 * storage inference accepts the call. When some input or given output is
 * sparse and the operator has no storage functions, or they answer
 * MXC_ERR_STYPE, the call falls back to the dense kernel: sparse inputs
 * are cast to dense temporaries, outputs created here are dense, results
 * for sparse given outputs (and sparse inputs the operator updates) are
 * cast back into them; req add on a sparse output adds through a dense
 * copy of it. One MXC_LOG_WARNING line per distinct case (operator, input
 * and output storage types) names them and the parameters, unless
 * MXC_STORAGE_FALLBACK_LOG=0. In the fallback, an allocation failure
 * after the kernel was pushed may leave given outputs written (out itself
 * stays untouched). */
int mxc__op_invoke(const mxc__op *op, const void *param,
                   mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                   int n_out, const mxc__req *req);

#endif /* MXC_CORE_OP_INVOKE_H_ */
