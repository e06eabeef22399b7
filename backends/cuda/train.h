/* The plug-in's training-step kernels (train.cu): the optimizer updates
 * sgd_update, sgd_mom_update, adam_update, Activation with its gradient
 * and the same-shape binary operators' gradients, float32 (Activation,
 * its gradient and the binary gradients also float16 and bfloat16), one
 * grid-stride kernel per call computing the per-element functions of
 * train_plan.h. */
#ifndef MXC_BACKENDS_CUDA_TRAIN_H_
#define MXC_BACKENDS_CUDA_TRAIN_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c on gpu(c->dev) and waits for it. Thread-safety: any
 * thread (no state). The optimizers update their state inputs in place,
 * as the CPU operators do. */
int mxc__cuda_sgd_update(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_sgd_mom_update(const mxc__gpu_call *c, char *why,
                             size_t why_len);
int mxc__cuda_adam_update(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_activation(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_activation_bwd(const mxc__gpu_call *c, char *why,
                             size_t why_len);

/* _backward_add/_sub/_mul/_div (same shapes): inputs ograd, lhs, rhs;
 * outputs dlhs, drhs, each in its own write mode. */
int mxc__cuda_backward_add(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_backward_sub(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_backward_mul(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_backward_div(const mxc__gpu_call *c, char *why, size_t n);

/* The kernel table's rows (plugin.c): the optimizers float32 only
 * (supports NULL); the others one dtype of float32, float16 and bfloat16
 * (half_types.h). */
#define MXC__CUDA_TRAIN_ROWS                                              \
  {"sgd_update", NULL, mxc__cuda_sgd_update},                             \
      {"sgd_mom_update", NULL, mxc__cuda_sgd_mom_update},                 \
      {"adam_update", NULL, mxc__cuda_adam_update},                       \
      {"Activation", mxc__half_supports_same, mxc__cuda_activation},      \
      {"_backward_Activation", mxc__half_supports_same,                   \
       mxc__cuda_activation_bwd},                                         \
      {"_backward_add", mxc__half_supports_same, mxc__cuda_backward_add}, \
      {"_backward_sub", mxc__half_supports_same, mxc__cuda_backward_sub}, \
      {"_backward_mul", mxc__half_supports_same, mxc__cuda_backward_mul}, \
      {"_backward_div", mxc__half_supports_same, mxc__cuda_backward_div},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_TRAIN_H_ */
