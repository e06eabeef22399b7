/* The kernel table's rows of take, pick, their gradients, shape_array,
 * size_array, reshape_like and _backward_reshape_like (one line of
 * plugin.c's table). */
#ifndef MXC_BACKENDS_CUDA_SHAPE_ROWS_H_
#define MXC_BACKENDS_CUDA_SHAPE_ROWS_H_

#include <stddef.h>

#include "backends/cuda/loss.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* shape_array (data -> its extents, ndim int64 values) and size_array
 * (data -> its element count, one int64), as ops/shape/rearrange.c: the
 * values come from the call's shapes (data is never read), written or
 * added (wrapping) on the call's stream by index.cu. Thread-safety: any
 * thread (no state). */
int mxc__cuda_shape_array(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_size_array(const mxc__gpu_call *c, char *why, size_t why_len);

/* Any input dtype, an int64 output. */
int mxc__cuda_shape_array_supports(const int *dtypes, int n_in, int n_out);

/* take (data, indices) -> out, data in float32, float16 or bfloat16, and
 * _backward_take (ograd, data, indices) -> ddata in float32, as
 * ops/indexing/take.c (index.cu over index_hd.h): any axis, indices
 * float32, float16, bfloat16, int32 or int64 (floats truncated), modes
 * clip, wrap and raise (raise reads the indices back to the host first
 * and fails with the CPU's message before writing anything). The gradient
 * has one thread per (outer, inner) column adding ograd in index order:
 * the CPU's order, bitwise and deterministic, no atomics. Enqueued on the
 * call's stream. Thread-safety: any thread. */
int mxc__cuda_take_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_take_bwd_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_take(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_take_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* pick (data, index) -> out and _backward_pick (ograd, data, index) ->
 * ddata, as take.c's pick (axis, keepdims, clip and wrap), with take's
 * dtypes; each gradient element gets at most one ograd element (bitwise,
 * deterministic). Same contract as take. */
int mxc__cuda_pick(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_pick_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* reshape_like (lhs, rhs -> lhs's values in rhs's shape) and
 * _backward_reshape_like ((ograd, lhs) -> ograd's values in lhs's shape)
 * are flat copies of input 0 (rearrange.c's copy_flat): loss.h's
 * reshaping copy, float32. */
#define MXC__CUDA_SHAPE_ROWS                                                \
  {"take", mxc__cuda_take_supports, mxc__cuda_take},                        \
      {"_backward_take", mxc__cuda_take_bwd_supports, mxc__cuda_take_bwd},  \
      {"pick", mxc__cuda_take_supports, mxc__cuda_pick},                    \
      {"_backward_pick", mxc__cuda_take_bwd_supports, mxc__cuda_pick_bwd},  \
      {"shape_array", mxc__cuda_shape_array_supports, mxc__cuda_shape_array}, \
      {"size_array", mxc__cuda_shape_array_supports, mxc__cuda_size_array}, \
      {"reshape_like", NULL, mxc__cuda_reshape_copy},                       \
      {"_backward_reshape_like", NULL, mxc__cuda_reshape_copy},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SHAPE_ROWS_H_ */
