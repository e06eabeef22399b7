/* Imperative evaluation of an operator's gradient: builds the forward node,
 * asks the operator's gradient function for backward nodes, and runs them
 * with mxc__op_invoke. Used by tests (finite-difference checks) and as the
 * core of imperative autograd. */
#ifndef MXC_CORE_OP_GRAD_EVAL_H_
#define MXC_CORE_OP_GRAD_EVAL_H_

#include "core/ndarray/ndarray.h"
#include "core/op/node.h"

/* in: n_in forward inputs; out: the forward outputs (all of them, hidden
 * included) computed with the same parameters; ograd: one per visible
 * output. On success igrad[i] is a new array (caller frees) holding
 * d(sum(ograd . out))/d(in[i]), or NULL when input i has no gradient. */
int mxc__grad_eval(const char *op_name, const char *const *keys,
                   const char *const *vals, int n_attrs,
                   mxc__ndarray *const *in, int n_in,
                   mxc__ndarray *const *out, int n_out,
                   mxc__ndarray *const *ograd, mxc__ndarray **igrad);

#endif /* MXC_CORE_OP_GRAD_EVAL_H_ */
