/* Helpers shared by operator families: shape/type inference for common
 * patterns, dtype dispatch, write-mode handling, and (core/op/describe.h)
 * the pieces of descriptor initializers. */
#ifndef MXC_CORE_OP_COMMON_H_
#define MXC_CORE_OP_COMMON_H_

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/half.h"
#include "core/op/describe.h"
#include "core/op/node.h"
#include "core/op/op.h"

/* Before a loop: its iterations are independent, although the arrays may
 * alias (element i is read before it is written), so GCC need not emit a
 * run-time overlap check. Clang (only the fuzzing build) keeps its check:
 * its equivalent pragma is an error where instrumentation prevents
 * vectorizing. */
#if defined(__GNUC__) && !defined(__clang__)
#define MXC__IVDEP _Pragma("GCC ivdep")
#else
#define MXC__IVDEP
#endif

/* All inputs and outputs share one shape (element-wise operators). Unknown
 * shapes are filled from known ones; a mismatch is MXC_ERR_SHAPE naming
 * both inputs. */
int mxc__infer_shape_same(const mxc__op *op, const void *param,
                          mxc__shape *in, int n_in, mxc__shape *out,
                          int n_out);

/* All inputs and outputs share one dtype; unknown ones are filled. */
int mxc__infer_type_same(const mxc__op *op, const void *param, int *in,
                         int n_in, int *out, int n_out);

/* The same for the inputs whose bit is set in `same` (the others, such as
 * indices or labels, may have any dtype) and all outputs. */
int mxc__infer_type_masked(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out, uint32_t same);

/* Error for a dtype a kernel does not handle. */
int mxc__unsupported_dtype(const char *op_name, int dtype, const char *what);

/* 1 for float32/float64/float16/bfloat16. */
static inline int mxc__dtype_is_float(int dt) {
  return dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_FLOAT64 ||
         dt == MXC_DTYPE_FLOAT16 || dt == MXC_DTYPE_BFLOAT16;
}

/* Reads element i of a blob of any dtype as double / writes it back
 * (into an integer dtype: truncated and saturated, NaN -> 0, the rule of
 * core/base/dtype.h). */
double mxc__blob_get(const mxc__blob *b, int64_t i);
void mxc__blob_set(const mxc__blob *b, int64_t i, double v);

/* The same, exactly, for integer and bool blobs: int64 values beyond 2^53
 * do not survive a double. Writing keeps the low bits of v for narrower
 * dtypes (wraps) and v != 0 for bool. */
int64_t mxc__blob_get_i64(const mxc__blob *b, int64_t i);
void mxc__blob_set_i64(const mxc__blob *b, int64_t i, int64_t v);

/* Run-time CPU dispatch for hot loops: the function is compiled for
 * AVX-512, AVX2 and baseline x86-64, and the loader picks the best (a
 * distributed library must run on any x86-64, so no -march=native). Not
 * under ThreadSanitizer: the clone resolvers run while the dynamic loader
 * relocates the program, before the sanitizer's runtime is up, and their
 * instrumentation crashes there. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__)
#define MXC__CPU_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MXC__CPU_CLONES
#endif

/* Runs the statements given as the variadic argument once with `T` a
 * typedef for float (dt float32) or double (anything else: the operator's
 * infer_type has already rejected other dtypes, as mxc__nn_type_float and
 * mxc__vision_type_float do). The body is a block; it is compiled twice,
 * so each dtype gets its own typed loop. A `break` at the top level of the
 * body would leave the if/else; use it only inside loops or switches of
 * the body. */
#define MXC__FLOAT_TYPED(dt, ...)    \
  do {                               \
    if ((dt) == MXC_DTYPE_FLOAT32) { \
      typedef float T;               \
      __VA_ARGS__                    \
    } else {                         \
      typedef double T;              \
      __VA_ARGS__                    \
    }                                \
  } while (0)

/* Applies a write mode to one element: dst = v (WRITE/INPLACE) or
 * dst += v (ADD). */
#define MXC__ASSIGN(req, dst, v)   \
  do {                             \
    if ((req) == MXC__REQ_ADD) {   \
      (dst) += (v);                \
    } else {                       \
      (dst) = (v);                 \
    }                              \
  } while (0)

#endif /* MXC_CORE_OP_COMMON_H_ */
