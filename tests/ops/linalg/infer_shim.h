/* C shim for the linalg tests: runs an operator's shape inference with
 * only the data shape known, as a graph bind would (internal headers are
 * C11 and not usable from C++). */
#ifndef MXC_TESTS_OPS_LINALG_INFER_SHIM_H_
#define MXC_TESTS_OPS_LINALG_INFER_SHIM_H_

#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input 0 has shape data[0..data_ndim); inputs 1..n_in-1 and the single
 * output start unknown. On return in_ndim[i]/in_dims[i * MXC_MAX_NDIM..]
 * and out_ndim/out_dims hold what inference filled (ndim -1: unknown). */
int mxct_infer_from_data(const char *op_name, const char *const *keys,
                         const char *const *vals, int n_attrs, int n_in,
                         const int64_t *data, int data_ndim, int *in_ndim,
                         int64_t *in_dims, int *out_ndim, int64_t *out_dims);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_OPS_LINALG_INFER_SHIM_H_ */
