/* Host stand-ins for the kernels of backends/cuda/train2.h (broadcast
 * gradients, reductions and their gradients, optimizer updates), for the
 * fake plug-in (tests/gpu/fake_plugin.c): each plans its call with the
 * real kernel's plan functions (bgrad_plan.h, red_plan.h, optim_plan.h)
 * and runs the plan on the host, so test_gpu_conformance_fake sends the
 * conformance cases of tests/gpu/conformance_bwd.cc through libmxc's
 * dispatch (parameters as the kernels receive them, the backward
 * operators' array order, write modes, errors surfacing at the wait)
 * against the CPU. Groups are summed in order by one loop (the device's
 * block order is the host tests' business). */
#ifndef MXC_TESTS_GPU_TRAIN2_HOST_H_
#define MXC_TESTS_GPU_TRAIN2_HOST_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host address of an array of a call (NULL: not reachable). */
typedef float *(*mxct_train2_host_fn)(const mxc__gpu_array *a, int dev);

/* Runs call c of kernel `which` (an MXCT_TRAIN2_FAKE_OPS index) with the
 * arrays mapped by host. Thread-safe. */
int mxct_train2_fake_run(int which, const mxc__gpu_call *c,
                         mxct_train2_host_fn host, char *why, size_t why_len);

/* The fake's kernels: run function, index, operator. */
#define MXCT_TRAIN2_FAKE_OPS(X)                                    \
  X(fake_bgrad_add, 0, "_backward_broadcast_add")                  \
  X(fake_bgrad_sub, 1, "_backward_broadcast_sub")                  \
  X(fake_bgrad_mul, 2, "_backward_broadcast_mul")                  \
  X(fake_bgrad_div, 3, "_backward_broadcast_div")                  \
  X(fake_red_max, 4, "max")                                        \
  X(fake_red_min, 5, "min")                                        \
  X(fake_red_prod, 6, "prod")                                      \
  X(fake_red_nansum, 7, "nansum")                                  \
  X(fake_red_nanprod, 8, "nanprod")                                \
  X(fake_red_norm, 9, "norm")                                      \
  X(fake_red_bwd_sum, 10, "_backward_sum")                         \
  X(fake_red_bwd_mean, 11, "_backward_mean")                       \
  X(fake_red_bwd_max, 12, "_backward_max")                         \
  X(fake_red_bwd_min, 13, "_backward_min")                         \
  X(fake_red_bwd_nansum, 14, "_backward_nansum")                   \
  X(fake_red_bwd_norm, 15, "_backward_norm")                       \
  X(fake_red_bwd_prod, 16, "_backward_prod")                       \
  X(fake_red_bwd_nanprod, 17, "_backward_nanprod")                 \
  X(fake_nag_mom, 18, "nag_mom_update")                            \
  X(fake_rmsprop, 19, "rmsprop_update")                            \
  X(fake_rmspropalex, 20, "rmspropalex_update")                    \
  X(fake_adagrad, 21, "adagrad_update")                            \
  X(fake_ftrl, 22, "ftrl_update")                                  \
  X(fake_signsgd, 23, "signsgd_update")                            \
  X(fake_signum, 24, "signum_update")                              \
  X(fake_ftml, 25, "ftml_update")                                  \
  X(fake_lamb1, 26, "lamb_update_phase1")                          \
  X(fake_lamb2, 27, "lamb_update_phase2")

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_TRAIN2_HOST_H_ */
