/* The plug-in's element-wise kernels (elementwise.cu), called from the
 * kernel table in plugin.c. */
#ifndef MXC_BACKENDS_CUDA_ELEMENTWISE_H_
#define MXC_BACKENDS_CUDA_ELEMENTWISE_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row per operator: the kernel's kind, the operator's canonical name
 * and its inputs (1 or 2). float32, float16 and bfloat16 (the rows'
 * supports: mxc__half_supports_same); the results are exactly the CPU's
 * (the same single operation per element, no contraction into FMA, half
 * types computed in the CPU's type and rounded once). */
#define MXC__CUDA_ELEMENTWISE(X) \
  X(COPY, "_copy", 1)            \
  X(RELU, "relu", 1)             \
  X(NEGATIVE, "negative", 1)     \
  X(ABS, "abs", 1)               \
  X(SQUARE, "square", 1)         \
  X(ADD, "add", 2)               \
  X(SUB, "sub", 2)               \
  X(MUL, "mul", 2)               \
  X(DIV, "div", 2)

enum {
#define MXC__CUDA_KIND(kind, name, n_in) MXC__CUDA_##kind,
  MXC__CUDA_ELEMENTWISE(MXC__CUDA_KIND)
#undef MXC__CUDA_KIND
};

/* Runs element-wise kernel `kind` for call c on gpu(c->dev) and waits for
 * it. Same-shape calls only: broadcasting is not on the GPU yet
 * (MXC_ERR_UNSUPPORTED). */
int mxc__cuda_elementwise(int kind, const mxc__gpu_call *c, char *why,
                          size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_ELEMENTWISE_H_ */
