/* transpose, swapaxes, flip, the broadcast_to/axis/like copies and the
 * slices with their gradients on the GPU (copy.cu over copy_plan.h):
 * float32, float16 and bfloat16, the stored bits moved in write mode, the
 * old value plus the input in float (one rounding) in add mode, as the
 * CPU's view copies (ops/shape/view.c). transpose, swapaxes and flip are
 * the operators their own gradients run; the broadcasts' gradients
 * (sums) are not here. */
#ifndef MXC_BACKENDS_CUDA_COPY_H_
#define MXC_BACKENDS_CUDA_COPY_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operator's plan (parameters, shapes) is checked before any device
 * call; then one gather kernel on the call's stream (mxc__cuda_stream).
 * Thread-safety: any thread (no state). */
int mxc__cuda_transpose(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_swapaxes(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_flip(const mxc__gpu_call *c, char *why, size_t why_len);
/* broadcast_to, broadcast_axis (data) and broadcast_like (lhs, rhs): input
 * 0 repeated into the output's shape. */
int mxc__cuda_broadcast_copy(const mxc__gpu_call *c, char *why,
                             size_t why_len);
/* slice, slice_axis, slice_like (data[, shape_like] -> the box) and their
 * _backward_ ((ograd, data) -> a gradient shaped like data: zeros outside
 * the box unless add, the box scattered in), as ops/shape/slice.c. */
int mxc__cuda_slice(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_slice_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_slice_axis(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_slice_axis_bwd(const mxc__gpu_call *c, char *why,
                             size_t why_len);
int mxc__cuda_slice_like(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_slice_like_bwd(const mxc__gpu_call *c, char *why,
                             size_t why_len);
/* Concat (parts -> whole, one write mode), _backward_Concat ((ograd,
 * parts) -> part gradients, each in its mode), split (whole -> parts,
 * each in its mode; squeeze_axis alike), _backward_split (part gradients
 * -> whole, one mode), as ops/shape/concat.c's parts_copy. */
int mxc__cuda_concat(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_concat_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_split(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_split_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* stack (parts -> whole with a new axis) and _backward_stack (ograd ->
 * one gradient per part, each in its mode), as ops/shape/concat.c. */
int mxc__cuda_stack(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_stack_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
/* tile, repeat (data -> the expanded array) and their _backward_ ((ograd,
 * data) -> the gradient of data: each element's copies summed in double
 * in the CPU's order, one thread per element, rounded once), as
 * ops/shape/broadcast.c over ops/shape/rep_box.h's box. */
int mxc__cuda_tile(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_tile_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_repeat(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_repeat_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* depth_to_space, space_to_depth (data -> the other side) and their
 * _backward_ (ograd -> the gradient), one permutation each way over
 * ops/shape/rearrange_map.h's map; diag (data) and _backward_diag
 * (ograd, data): the diagonal gathered, or scattered into a cleared
 * matrix (add: onto it), as ops/shape/rearrange.c. */
int mxc__cuda_d2s(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_d2s_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_s2d(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_s2d_bwd(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_diag(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_diag_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

#define MXC__CUDA_COPY_ROWS                                                    \
  {"transpose", mxc__half_supports_same, mxc__cuda_transpose},                 \
  {"swapaxes", mxc__half_supports_same, mxc__cuda_swapaxes},                   \
  {"flip", mxc__half_supports_same, mxc__cuda_flip},                           \
  {"broadcast_to", mxc__half_supports_same, mxc__cuda_broadcast_copy},         \
  {"broadcast_axis", mxc__half_supports_same, mxc__cuda_broadcast_copy},       \
  {"broadcast_like", mxc__half_supports_same, mxc__cuda_broadcast_copy},       \
  {"slice", mxc__half_supports_same, mxc__cuda_slice},                         \
  {"_backward_slice", mxc__half_supports_same, mxc__cuda_slice_bwd},           \
  {"slice_axis", mxc__half_supports_same, mxc__cuda_slice_axis},               \
  {"_backward_slice_axis", mxc__half_supports_same, mxc__cuda_slice_axis_bwd}, \
  {"slice_like", mxc__half_supports_same, mxc__cuda_slice_like},               \
  {"_backward_slice_like", mxc__half_supports_same, mxc__cuda_slice_like_bwd}, \
  {"Concat", mxc__half_supports_same, mxc__cuda_concat},                       \
  {"_backward_Concat", mxc__half_supports_same, mxc__cuda_concat_bwd},         \
  {"split", mxc__half_supports_same, mxc__cuda_split},                         \
  {"_backward_split", mxc__half_supports_same, mxc__cuda_split_bwd},         \
  {"stack", mxc__half_supports_same, mxc__cuda_stack},                         \
  {"_backward_stack", mxc__half_supports_same, mxc__cuda_stack_bwd},           \
  {"tile", mxc__half_supports_same, mxc__cuda_tile},                           \
  {"_backward_tile", mxc__half_supports_same, mxc__cuda_tile_bwd},             \
  {"repeat", mxc__half_supports_same, mxc__cuda_repeat},                       \
  {"_backward_repeat", mxc__half_supports_same, mxc__cuda_repeat_bwd},       \
  {"depth_to_space", mxc__half_supports_same, mxc__cuda_d2s},                  \
  {"_backward_depth_to_space", mxc__half_supports_same, mxc__cuda_d2s_bwd},    \
  {"space_to_depth", mxc__half_supports_same, mxc__cuda_s2d},                  \
  {"_backward_space_to_depth", mxc__half_supports_same, mxc__cuda_s2d_bwd},    \
  {"diag", mxc__half_supports_same, mxc__cuda_diag},                           \
  {"_backward_diag", mxc__half_supports_same, mxc__cuda_diag_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_COPY_H_ */
