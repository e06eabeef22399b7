/* The plug-in's Cast kernels (cast.cu): Cast and _backward_Cast between
 * float32, float64, float16 and bfloat16 (any pair), converting as
 * ops/shape/cast.c does (half_hd.h's mxc__hd_cast_elem), one table row
 * each. Integer and bool arrays are not taken (the rows' supports): such a
 * call finds no GPU kernel. */
#ifndef MXC_BACKENDS_CUDA_CAST_H_
#define MXC_BACKENDS_CUDA_CAST_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Converts c->in[0] into c->out[0] (its dtype is the target: Cast's
 * `dtype` parameter, _backward_Cast's data dtype), write or add, on
 * gpu(c->dev) on the call's stream. MXC_ERR_SHAPE when the sizes differ,
 * MXC_ERR_DTYPE for a dtype outside the four. Thread-safety: any thread
 * (no state). */
int mxc__cuda_cast(const mxc__gpu_call *c, char *why, size_t why_len);

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_CAST_ROWS                                \
  {"Cast", mxc__half_supports_cast, mxc__cuda_cast},       \
      {"_backward_Cast", mxc__half_supports_cast, mxc__cuda_cast},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_CAST_H_ */
