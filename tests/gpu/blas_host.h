/* A host stand-in for cuBLAS, for tests: runs the steps of a cuBLAS
 * kernel's plan (backends/cuda/blas_plan.h) with cuBLAS's column-major
 * semantics (alpha = 1; beta = 0 never reads the output, as cuBLAS
 * promises), and refuses what cuBLAS would refuse (a leading dimension
 * below the stored rows) and any matrix of a batch reaching past its
 * array. Used by tests/gpu:test_cuda_blas_plan and by the fake plug-in's
 * cuBLAS kernels (the conformance harness through libmxc's dispatch). */
#ifndef MXC_TESTS_GPU_BLAS_HOST_H_
#define MXC_TESTS_GPU_BLAS_HOST_H_

#include <stddef.h>

#include "backends/cuda/blas_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host address of an array of call c (NULL: not reachable). */
typedef float *(*mxct_host_fn)(const mxc__gpu_array *a, int dev);

/* Runs p for call c; host NULL: the arrays' pointers are host memory.
 * NULL, or a static string naming the rule a step breaks (or "out of
 * memory", "array not on the device"). Thread-safe. */
const char *mxct_blas_host_run(const mxc__blas_plan *p, const mxc__gpu_call *c,
                               mxct_host_fn host);

/* A cuBLAS kernel of the fake plug-in (tests/gpu/fake_plugin.c): plans
 * call c of operator op (MXC__BLAS_*) as the real plug-in does and runs
 * the plan here; host maps device arrays to the fake's host aliases. */
int mxct_blas_fake_run(int op, const mxc__gpu_call *c, mxct_host_fn host,
                       char *why, size_t why_len);

/* The fake's cuBLAS kernels: run function, operator, name. */
#define MXCT_BLAS_FAKE_OPS(X)                                           \
  X(fake_dot, MXC__BLAS_DOT, "dot")                                     \
  X(fake_dot_bwd, MXC__BLAS_DOT_BWD, "_backward_dot")                   \
  X(fake_batch_dot, MXC__BLAS_BATCH_DOT, "batch_dot")                   \
  X(fake_batch_dot_bwd, MXC__BLAS_BATCH_DOT_BWD, "_backward_batch_dot") \
  X(fake_fc, MXC__BLAS_FC, "FullyConnected")                            \
  X(fake_fc_bwd, MXC__BLAS_FC_BWD, "_backward_FullyConnected")

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_BLAS_HOST_H_ */
