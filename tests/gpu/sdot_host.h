/* A host stand-in for cuSPARSE's cusparseSpMM that reads only a plan of
 * backends/cuda/sdot_plan.h and the arrays' pointers, with cuSPARSE's
 * documented semantics: C = alpha op(A) B + beta C for the CSR A (a_rows x
 * a_cols as stored, opA transposing it), B (b_rows x b_cols) and C
 * (c_rows x c_cols) row-major with leading dimensions ldb and ldc; C is
 * not read when beta is 0. It refuses what cuSPARSE refuses (dimensions
 * that do not chain, a leading dimension below the columns) and any
 * matrix reaching past its array, so a wrong plan fails the tests instead
 * of reading stray memory.
 *
 * Used by tests/gpu:test_cuda_sdot_plan (against the CPU operator) and by
 * the fake plug-in's sparse dot row (tests/gpu/fake_plugin.c). */
#ifndef MXC_TESTS_GPU_SDOT_HOST_H_
#define MXC_TESTS_GPU_SDOT_HOST_H_

#include <stdint.h>

#include "backends/cuda/sdot_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs plan p on host memory: indptr/indices (index64 ? int64 : int32),
 * vals, B (b_elems elements) and C (c_elems), all of the plan's value
 * type. NULL on success, else what cuSPARSE (or memory) would refuse. */
const char *mxct_sdot_host_run(const mxc__sdot_plan *p, const void *indptr,
                               const void *indices, const void *vals,
                               const void *b, int64_t b_elems, void *c,
                               int64_t c_elems);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GPU_SDOT_HOST_H_ */
