/* Half-precision (float16, bfloat16) operators computed in float32.
 *
 * Operators whose kernels exist for float32 and float64 only (matrix
 * products, convolution, pooling, activations) take half-precision arrays
 * as MXNet does: the half inputs are widened to float32, the float32
 * kernel runs (so products and sums accumulate in float32, never in half),
 * and the results are rounded back to the output dtype (round to nearest
 * even). Arrays of other dtypes (indices, float32 parameters) pass through
 * unchanged. The widened copies live for the call only: the cost is a
 * float32 copy of every half array the call touches. */
#ifndef MXC_CORE_OP_HALF_COMPUTE_H_
#define MXC_CORE_OP_HALF_COMPUTE_H_

#include <stdint.h>

#include "core/op/op.h"

/* 1 for float16 and bfloat16. */
static inline int mxc__dtype_is_half(int dt) {
  return dt == MXC_DTYPE_FLOAT16 || dt == MXC_DTYPE_BFLOAT16;
}

/* 1 when any input or output blob is float16 or bfloat16. */
int mxc__blobs_have_half(const mxc__blob *in, int n_in, const mxc__blob *out,
                         int n_out);

/* Runs `f32` (a compute function handling float32) with every half blob
 * replaced by a float32 copy, then stores the float32 results into the
 * half outputs honouring req (ADD adds to the stored value, in float32,
 * before rounding once). Inputs whose bit is set in `mutate` (optimizer
 * states, moving statistics) are written back too. MXC_ERR_OOM when the
 * copies cannot be allocated; otherwise f32's status. */
int mxc__half_compute(mxc__compute_fn f32, const mxc__op *op,
                      const mxc__opctx *ctx, const void *param,
                      const mxc__blob *in, int n_in, const mxc__blob *out,
                      int n_out, const mxc__req *req, uint32_t mutate);

/* Defines `static int name(...)`, a compute function that runs `f32`
 * directly when no blob is half precision and through mxc__half_compute
 * otherwise. For descriptors: `.compute = name`. */
#define MXC__HALF_COMPUTE_FN(name, f32, mutate)                              \
  static int name(const mxc__op *op, const mxc__opctx *ctx,                  \
                  const void *param, const mxc__blob *in, int n_in,          \
                  const mxc__blob *out, int n_out, const mxc__req *req) {    \
    if (!mxc__blobs_have_half(in, n_in, out, n_out)) {                       \
      return f32(op, ctx, param, in, n_in, out, n_out, req);                 \
    }                                                                        \
    return mxc__half_compute(f32, op, ctx, param, in, n_in, out, n_out, req, \
                             (mutate));                                      \
  }

/* infer_type: every input and output shares one dtype, which must be
 * float32, float64, float16 or bfloat16. */
int mxc__infer_type_float_or_half(const mxc__op *op, const void *param,
                                  int *in, int n_in, int *out, int n_out);

#endif /* MXC_CORE_OP_HALF_COMPUTE_H_ */
