/* C shim for the C++ tests of the sparse reductions: internal functions on
 * public handles (internal headers are C11, unusable from C++). */
#ifndef MXC_TESTS_SPARSE_REDUCE_SHIM_H_
#define MXC_TESTS_SPARSE_REDUCE_SHIM_H_

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the operator's storage-type inference (mxc__op_infer_stype) on
 * in[0..n_in) and out[0..n_out) (-1 = not given): its status, with out
 * and *dispatch (0 dense, 1 sparse) filled on success. MXC_ERR_NOT_FOUND
 * when the operator has none. */
int mxct_infer_stype(const char *op_name, const char *const *keys,
                     const char *const *vals, int n_attrs, const int *in,
                     int n_in, int *out, int n_out, int *dispatch);

/* mxc__grad_eval on handles, for one-output operators: igrad[i] a new
 * handle, or NULL when input i gets no gradient. */
int mxct_grad(const char *op_name, const char *const *keys,
              const char *const *vals, int n_attrs, const mxc_ndarray *in,
              int n_in, mxc_ndarray out, mxc_ndarray ograd, mxc_ndarray *igrad);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_SPARSE_REDUCE_SHIM_H_ */
