/* Storage fallback: how mxc__op_invoke runs an operator on sparse arrays
 * it has no kernel for (see core/op/invoke.h for the contract). Sparse
 * inputs are cast to dense temporaries, the dense kernel runs into dense
 * arrays, and results meant for sparse given outputs (and sparse inputs
 * the operator updates in place) are cast back. Everything is pushed,
 * nothing waited for: temporaries are freed at once and live until their
 * work is done. Each distinct case (operator, input and output storage
 * types) is logged once; MXC_STORAGE_FALLBACK_LOG=0 silences the log. */
#ifndef MXC_CORE_OP_FALLBACK_H_
#define MXC_CORE_OP_FALLBACK_H_

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* 1 when an input or a given output (given[i] may be NULL) is sparse. */
int mxc__op_has_sparse(mxc__ndarray *const *in, int n_in,
                       mxc__ndarray *const *given, int n_total);

/* The fallback for a call whose shapes and dtypes invoke has checked;
 * arguments as for mxc__op_invoke. Outputs it creates are dense. On
 * failure, out is untouched; given outputs may have been written when a
 * cast back failed after the kernel was pushed (allocation failure
 * only). */
int mxc__op_fallback(const mxc__op *op, const void *param,
                     mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                     int n_out, const mxc__req *req);

/* For tests: forgets the fallback cases already logged and reads
 * MXC_STORAGE_FALLBACK_LOG again at the next fallback. */
void mxc__fallback_log_reset(void);

#endif /* MXC_CORE_OP_FALLBACK_H_ */
