/* The element-wise unary math operators on the GPU (unary.cu) and their
 * _backward_ operators, from the one list the CPU kernels expand too
 * (ops/elemwise/unary_ops.h): each element is computed by the same
 * expression in the same types (float32: float functions, x and y
 * float; float16/bfloat16: the double expression rounded to float, then
 * to the dtype, as ops/elemwise/unary.c's half path).
 *
 * Where results can differ from the CPU: the libm functions (exp, log,
 * sin, tanh, erf, ...) are CUDA's, within a few ulps of glibc's (CUDA C
 * Programming Guide, "Mathematical Functions"), and the CPU's float32
 * tanh, sigmoid and exp are core/op/vmath.h's vectorized approximations.
 * The rest (sign, softsign, sqrt, rsqrt, reciprocal, rounding, degrees,
 * radians, logical_not, the polynomial gradients) is the same IEEE
 * operations (nvcc -fmad=false, IEEE division and square root): bitwise.
 *
 * erfinv, gamma, gammaln and their gradients run core/op/special_hd.h's
 * erfinv and digamma (the CPU's own text) over CUDA's erf, exp, log, tan,
 * tgammaf and lgamma: within a few float ulps of the CPU
 * (tests/gpu/conformance_math.cc states each bound).
 *
 * Not here: abs, negative, relu, square forward, which are
 * elementwise.h's rows (their gradients are here). */
#ifndef MXC_BACKENDS_CUDA_UNARY_H_
#define MXC_BACKENDS_CUDA_UNARY_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operators with a forward row here. */
#define MXC__CUDA_UNARY_FWD(X)                                            \
  X(sign) X(sigmoid) X(tanh) X(softsign) X(softrelu) X(exp) X(expm1)     \
  X(log) X(log1p) X(log2) X(log10) X(sqrt) X(rsqrt) X(cbrt)             \
  X(reciprocal) X(sin) X(cos) X(tan) X(arcsin) X(arccos) X(arctan)       \
  X(sinh) X(cosh) X(arcsinh) X(arccosh) X(arctanh) X(degrees)            \
  X(radians) X(floor) X(ceil) X(round) X(rint) X(trunc) X(fix) X(erf)    \
  X(logical_not) X(erfinv) X(gamma) X(gammaln)

/* Operators with a _backward_ row here: every one above, and the four
 * whose forward is an elementwise.h row. */
#define MXC__CUDA_UNARY_BWD(X) \
  MXC__CUDA_UNARY_FWD(X) X(abs) X(negative) X(relu) X(square)

/* mxc__cuda_unary_NAME: forward, input data -> output, same shape.
 * mxc__cuda_unary_bwd_NAME: _backward_NAME, inputs (ograd, data, output)
 * -> ddata = ograd * f'(data, output). float32, float16, bfloat16; each
 * in its write mode (add accumulates; in place allowed). Enqueued on the
 * call's stream (mxc__cuda_stream). Thread-safety: any thread (no
 * state). */
#define MXC__CUDA_UNARY_DECL(name)                                  \
  int mxc__cuda_unary_##name(const mxc__gpu_call *c, char *why,     \
                             size_t why_len);
#define MXC__CUDA_UNARY_BWD_DECL(name)                              \
  int mxc__cuda_unary_bwd_##name(const mxc__gpu_call *c, char *why, \
                                 size_t why_len);
MXC__CUDA_UNARY_FWD(MXC__CUDA_UNARY_DECL)
MXC__CUDA_UNARY_BWD(MXC__CUDA_UNARY_BWD_DECL)
#undef MXC__CUDA_UNARY_DECL
#undef MXC__CUDA_UNARY_BWD_DECL

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_UNARY_FWD_ROW(name) \
  {#name, mxc__half_supports_same, mxc__cuda_unary_##name},
#define MXC__CUDA_UNARY_BWD_ROW(name) \
  {"_backward_" #name, mxc__half_supports_same, mxc__cuda_unary_bwd_##name},
#define MXC__CUDA_UNARY_ROWS                          \
  MXC__CUDA_UNARY_FWD(MXC__CUDA_UNARY_FWD_ROW)        \
  MXC__CUDA_UNARY_BWD(MXC__CUDA_UNARY_BWD_ROW)

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_UNARY_H_ */
