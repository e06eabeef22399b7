/* where and its gradient, and the fills, on the GPU (index.cu over
 * index_hd.h). where as ops/indexing/where.c: the condition of x's shape
 * or 1-D over x's rows, of any of float32, float16, bfloat16 (nonzero
 * selects x; NaN is nonzero); x, y and the outputs of one of those
 * dtypes. */
#ifndef MXC_BACKENDS_CUDA_INDEX_H_
#define MXC_BACKENDS_CUDA_INDEX_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rows' dtype checks: the condition (where's input 0, the gradient's
 * input 1) any of the three; every other array one and the same of them.
 * Thread-safety: pure functions. */
int mxc__cuda_where_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_where_bwd_supports(const int *dtypes, int n_in, int n_out);

/* where (condition, x, y) -> out; _backward_where (ograd, condition) ->
 * (dx, dy), each in its write mode. Shapes are checked before any device
 * call; one kernel on the call's stream. Thread-safety: any thread. */
int mxc__cuda_where(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_where_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* Embedding (data, weight) -> rows of weight by clipped index, float32,
 * float16, bfloat16 weights; _backward_Embedding (ograd, data) ->
 * dweight, float32, summed per column in the rows' order (the CPU's
 * order: bitwise; one thread per column, so slow for narrow embeddings).
 * Indices float32, float16, bfloat16, int32 or int64. */
int mxc__cuda_embedding_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_embedding_bwd_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_embedding(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_embedding_bwd(const mxc__gpu_call *c, char *why,
                            size_t why_len);

/* one_hot: indices (float32, float16, bfloat16, int32, int64; floats
 * truncated, out-of-range ones give a row of off_value) -> on_value /
 * off_value in float32, float16 or bfloat16, as ops/indexing/one_hot.c. */
int mxc__cuda_one_hot_supports(const int *dtypes, int n_in, int n_out);
int mxc__cuda_one_hot(const mxc__gpu_call *c, char *why, size_t why_len);

#define MXC__CUDA_INDEX_ROWS                                             \
  {"where", mxc__cuda_where_supports, mxc__cuda_where},                  \
  {"_backward_where", mxc__cuda_where_bwd_supports, mxc__cuda_where_bwd}, \
  {"Embedding", mxc__cuda_embedding_supports, mxc__cuda_embedding},      \
  {"_backward_Embedding", mxc__cuda_embedding_bwd_supports,              \
   mxc__cuda_embedding_bwd},                                             \
  {"one_hot", mxc__cuda_one_hot_supports, mxc__cuda_one_hot},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_INDEX_H_ */
