/* Outputs that share memory with inputs (an `out=` array that is also an
 * input, or a view of one).
 *
 * A kernel may read an input after it has written part of an output (dot,
 * transpose, sort, take, add_n, ...), so writing into memory it still
 * reads gives a wrong answer without any error. An operator declares the
 * pairs it handles (op.h `inplace`: output o may be input i itself);
 * every other overlap is computed through a temporary output, copied into
 * the caller's array afterwards, so the caller gets the answer it would
 * get from separate arrays. */
#ifndef MXC_CORE_OP_ALIAS_H_
#define MXC_CORE_OP_ALIAS_H_

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* 1 when a dense given output out[o] (NULL entries skipped) overlaps a
 * dense input in bytes, unless it is exactly that input (same bytes) and
 * the operator declares the pair {input, o} in place (its inplace pairs,
 * or inplace_input for these parameters); or when two given outputs
 * overlap each other. */
int mxc__op_alias_hazard(const mxc__op *op, const void *param,
                         mxc__ndarray *const *in, int n_in,
                         mxc__ndarray *const *out, int n_out);

/* mxc__op_invoke (same contract) for a call with an alias hazard: every
 * given output that overlaps an input is replaced by a new array (holding
 * a copy of it for req add), and copied back once the kernel has run, in
 * engine order. Two given outputs that overlap each other are
 * MXC_ERR_INVALID_ARGUMENT (no order of writes gives a defined answer). */
int mxc__op_invoke_via_temps(const mxc__op *op, const void *param,
                             mxc__ndarray *const *in, int n_in,
                             mxc__ndarray **out, int n_out,
                             const mxc__req *req);

#endif /* MXC_CORE_OP_ALIAS_H_ */
