/* The plug-in's other optimizer updates (optim.cu over optim_plan.h):
 * nag_mom_update, rmsprop_update, rmspropalex_update, adagrad_update,
 * ftrl_update, signsgd_update, signum_update, ftml_update,
 * lamb_update_phase1 and _phase2 in float32, one fused kernel per call,
 * one table row each (sgd, sgd_mom and adam are train.h's). */
#ifndef MXC_BACKENDS_CUDA_OPTIM_H_
#define MXC_BACKENDS_CUDA_OPTIM_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each runs call c (inputs weight, grad, states; output the new weight,
 * usually the weight itself) on gpu(c->dev), on the call's stream, ending
 * with mxc__cuda_finish (cuda_rt.h); the states are updated in place, as
 * the CPU operators do. Thread-safety: any thread (no state). */
int mxc__cuda_nag_mom_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_rmsprop_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_rmspropalex_update(const mxc__gpu_call *c, char *why,
                                 size_t n);
int mxc__cuda_adagrad_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_ftrl_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_signsgd_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_signum_update(const mxc__gpu_call *c, char *why, size_t n);
/* ftml_update (weight, grad, d, v, z), lamb_update_phase1 (weight, grad,
 * mean, var; output g), lamb_update_phase2 (weight, g, r1, r2: the norms,
 * one element each, read on the device). */
int mxc__cuda_ftml_update(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_lamb_update_phase1(const mxc__gpu_call *c, char *why,
                                 size_t n);
int mxc__cuda_lamb_update_phase2(const mxc__gpu_call *c, char *why,
                                 size_t n);

/* The kernel table's rows (plugin.c): float32 only (supports NULL). */
#define MXC__CUDA_OPTIM_ROWS                                        \
  {"nag_mom_update", NULL, mxc__cuda_nag_mom_update},               \
      {"rmsprop_update", NULL, mxc__cuda_rmsprop_update},           \
      {"rmspropalex_update", NULL, mxc__cuda_rmspropalex_update},   \
      {"adagrad_update", NULL, mxc__cuda_adagrad_update},           \
      {"ftrl_update", NULL, mxc__cuda_ftrl_update},                 \
      {"signsgd_update", NULL, mxc__cuda_signsgd_update},           \
      {"signum_update", NULL, mxc__cuda_signum_update},             \
      {"ftml_update", NULL, mxc__cuda_ftml_update},                 \
      {"lamb_update_phase1", NULL, mxc__cuda_lamb_update_phase1},   \
      {"lamb_update_phase2", NULL, mxc__cuda_lamb_update_phase2},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_OPTIM_H_ */
