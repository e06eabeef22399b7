/* C shim for C++ tests: mxc__grad_eval on public handles (internal headers
 * are C11 and not usable from C++). */
#ifndef MXC_TESTS_OPS_GRAD_SHIM_H_
#define MXC_TESTS_OPS_GRAD_SHIM_H_

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Total outputs of an operator for these parameters, hidden ones included
 * (mxc_op_num_outputs counts visible outputs only). -1 on error. */
int mxct_num_all_outputs(const char *op_name, const char *const *keys,
                         const char *const *vals, int n_attrs);

/* out: all n_out forward outputs (hidden included); ograd: one per visible
 * output. igrad[i]: a new handle, or NULL when input i has no gradient. */
int mxct_grad_eval(const char *op_name, const char *const *keys,
                   const char *const *vals, int n_attrs,
                   const mxc_ndarray *in, int n_in, const mxc_ndarray *out,
                   int n_out, const mxc_ndarray *ograd, mxc_ndarray *igrad);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_OPS_GRAD_SHIM_H_ */
