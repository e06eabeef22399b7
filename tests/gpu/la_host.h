/* A host stand-in for cuBLAS and cuSOLVER, for tests: runs the steps of a
 * linalg kernel's plan (backends/cuda/la_plan.h) with the libraries'
 * column-major semantics: cublasDgemmStridedBatched (beta = 0 never reads
 * C), cublasDgetrfBatched (LAPACK's partial pivoting, 1-based pivots,
 * info = the first zero pivot), cublasDgetriBatched (its output undefined
 * for a singular item: filled with 12345 here, so a plan relying on it
 * shows), cusolverDnDpotrfBatched (reads and writes only the fill
 * triangle, info = the first failing pivot), and la_hd.h's element and
 * item formulas as la.cu runs them. It refuses what cuBLAS would refuse
 * (a leading dimension below the stored rows) and any matrix reaching
 * past its slot. Used by tests/gpu:test_cuda_la_plan and by the fake
 * plug-in's linalg kernels (the conformance harness through libmxc's
 * dispatch). */
#ifndef MXC_TESTS_GPU_LA_HOST_H_
#define MXC_TESTS_GPU_LA_HOST_H_

#include <stddef.h>

#include "backends/cuda/la_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs p for call c whose arrays are host memory. MXC_OK; the error a
 * kernel returns (potrf's MXC_ERR_INVALID_ARGUMENT, with why); or
 * MXC_ERR_INTERNAL with why naming the rule a step breaks. */
int mxct_la_host_run(const mxc__la_plan *p, const mxc__gpu_call *c,
                     char *why, size_t why_len);

/* The host address of an array of call c (NULL: not reachable). */
typedef float *(*mxct_la_host_fn)(const mxc__gpu_array *a, int dev);

/* A linalg kernel of the fake plug-in (tests/gpu/fake_plugin.c): plans
 * call c of operator op (MXC__LA_*) as the real plug-in does and runs the
 * plan here on the host aliases of its arrays (host). */
int mxct_la_fake_run(int op, const mxc__gpu_call *c, mxct_la_host_fn host,
                     char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_LA_HOST_H_ */
