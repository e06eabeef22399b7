/* The plug-in's loss heads and softmax layers (loss2.cu over
 * loss2_plan.h), float32: LinearRegressionOutput,
 * LogisticRegressionOutput, MAERegressionOutput, smooth_l1, softmin,
 * SoftmaxActivation, softmax_cross_entropy, each with its _backward_
 * operator as a kernel of its own. */
#ifndef MXC_BACKENDS_CUDA_LOSS2_H_
#define MXC_BACKENDS_CUDA_LOSS2_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(kind, operator): kinds index the kernels of loss2.cu. */
#define MXC__CUDA_LOSS2_OPS(X)                       \
  X(REG_LIN, "LinearRegressionOutput")               \
  X(REG_LOG, "LogisticRegressionOutput")             \
  X(REG_MAE, "MAERegressionOutput")                  \
  X(REG_LIN_B, "_backward_LinearRegressionOutput")   \
  X(REG_LOG_B, "_backward_LogisticRegressionOutput") \
  X(REG_MAE_B, "_backward_MAERegressionOutput")      \
  X(SL1, "smooth_l1")                                \
  X(SL1_B, "_backward_smooth_l1")                    \
  X(SOFTMIN, "softmin")                              \
  X(SOFTMIN_B, "_backward_softmin")                  \
  X(SA, "SoftmaxActivation")                         \
  X(SA_B, "_backward_SoftmaxActivation")             \
  X(CE, "softmax_cross_entropy")                     \
  X(CE_B, "_backward_softmax_cross_entropy")

enum {
#define MXC__CUDA_LOSS2_ENUM(kind, name) MXC__L2_##kind,
  MXC__CUDA_LOSS2_OPS(MXC__CUDA_LOSS2_ENUM)
#undef MXC__CUDA_LOSS2_ENUM
      MXC__L2_KINDS
};

/* mxc__cuda_loss2_<kind>(c): runs call c (the CPU operator's inputs and
 * output, float32) on gpu(c->dev), on the call's stream, ending with
 * mxc__cuda_finish. Thread-safety: any thread (no state). */
#define MXC__CUDA_LOSS2_DECL(kind, name) \
  int mxc__cuda_loss2_##kind(const mxc__gpu_call *c, char *why, size_t n);
MXC__CUDA_LOSS2_OPS(MXC__CUDA_LOSS2_DECL)
#undef MXC__CUDA_LOSS2_DECL

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_LOSS2_ROW(kind, name) {name, NULL, mxc__cuda_loss2_##kind},
#define MXC__CUDA_LOSS2_ROWS MXC__CUDA_LOSS2_OPS(MXC__CUDA_LOSS2_ROW)

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_LOSS2_H_ */
