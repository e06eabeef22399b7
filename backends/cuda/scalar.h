/* The binary operators' scalar forms and the same-shape forms without a
 * kernel elsewhere, with their gradients, and clip, on the GPU
 * (scalar.cu), from the one list the CPU's kernels expand too
 * (ops/binary/binary_ops.h, through scalar_hd.h): float32, float16 and
 * bfloat16 computed in float, as the CPU does, each output in its write
 * mode (add accumulates in float).
 *
 * Where results can differ from the CPU: pow (`power`, its gradients and
 * the gradient's log) and hypot are CUDA's float functions, within a few
 * ulps of glibc's; every other operation is the same IEEE one (fmodf and
 * floorf are exact; -fmad=false): bitwise.
 *
 * Not here: the same-shape add, sub, mul, div (elementwise.h) and their
 * gradients (train.h); the broadcast forms beyond bcast.h's four. */
#ifndef MXC_BACKENDS_CUDA_SCALAR_H_
#define MXC_BACKENDS_CUDA_SCALAR_H_

#include <stddef.h>

#include "backends/cuda/half_types.h"
#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, stem) of ops/binary/binary_ops.h: every operator has a scalar
 * form; these are differentiable (MXC__BIN_GRAD); these not commutative
 * (MXC__BIN_REV, all differentiable); these have a same-shape forward
 * here; and these a same-shape gradient here. */
#define MXC__CUDA_SCALAR_ALL(X)                                        \
  X(add, plus) X(sub, minus) X(mul, mul) X(div, div) X(mod, mod)       \
  X(power, power) X(maximum, maximum) X(minimum, minimum)              \
  X(hypot, hypot) X(equal, equal) X(not_equal, not_equal)              \
  X(greater, greater) X(greater_equal, greater_equal) X(lesser, lesser) \
  X(lesser_equal, lesser_equal) X(logical_and, logical_and)            \
  X(logical_or, logical_or) X(logical_xor, logical_xor)
#define MXC__CUDA_SCALAR_GRAD(X)                                     \
  X(add, plus) X(sub, minus) X(mul, mul) X(div, div) X(mod, mod)     \
  X(power, power) X(maximum, maximum) X(minimum, minimum)            \
  X(hypot, hypot)
#define MXC__CUDA_SCALAR_REV(X) \
  X(sub, minus) X(div, div) X(mod, mod) X(power, power)
#define MXC__CUDA_SAME_FWD(X)                                          \
  X(mod, mod) X(power, power) X(maximum, maximum) X(minimum, minimum)  \
  X(hypot, hypot) X(equal, equal) X(not_equal, not_equal)              \
  X(greater, greater) X(greater_equal, greater_equal) X(lesser, lesser) \
  X(lesser_equal, lesser_equal) X(logical_and, logical_and)            \
  X(logical_or, logical_or) X(logical_xor, logical_xor)
#define MXC__CUDA_SAME_GRAD(X)                                        \
  X(mod, mod) X(power, power) X(maximum, maximum) X(minimum, minimum) \
  X(hypot, hypot)

/* The kernels: _<stem>_scalar (data -> out = f(data, scalar)),
 * _r<stem>_scalar (f(scalar, data)), their _backward_ (ograd, data ->
 * ddata), NAME (lhs, rhs -> f(lhs, rhs)), _backward_NAME (ograd, lhs, rhs
 * -> dlhs, drhs, each in its own write mode). Enqueued on the call's
 * stream (mxc__cuda_stream). Thread-safety: any thread (no state). */
#define MXC__CUDA_SCALAR_DECL(kind, name)                        \
  int mxc__cuda_bin_##kind##_##name(const mxc__gpu_call *c, char *why, \
                                    size_t why_len);
#define MXC__CUDA_SC_FWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(sc, name)
#define MXC__CUDA_SC_BWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(scb, name)
#define MXC__CUDA_RSC_FWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(rsc, name)
#define MXC__CUDA_RSC_BWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(rscb, name)
#define MXC__CUDA_SAME_FWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(ew, name)
#define MXC__CUDA_SAME_BWD_DECL(name, stem) MXC__CUDA_SCALAR_DECL(ewb, name)
MXC__CUDA_SCALAR_ALL(MXC__CUDA_SC_FWD_DECL)
MXC__CUDA_SCALAR_GRAD(MXC__CUDA_SC_BWD_DECL)
MXC__CUDA_SCALAR_REV(MXC__CUDA_RSC_FWD_DECL)
MXC__CUDA_SCALAR_REV(MXC__CUDA_RSC_BWD_DECL)
MXC__CUDA_SAME_FWD(MXC__CUDA_SAME_FWD_DECL)
MXC__CUDA_SAME_GRAD(MXC__CUDA_SAME_BWD_DECL)

/* clip (data -> out) and _backward_clip (ograd, data -> ddata), as
 * ops/binary/misc.c: the bounds in float forward, in double backward. */
int mxc__cuda_clip(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_clip_bwd(const mxc__gpu_call *c, char *why, size_t why_len);

/* LeakyReLU (data -> out) and _backward_LeakyReLU ((ograd, data, output)
 * -> ddata) for act_type leaky, elu, selu and gelu, float32, as
 * ops/nn/activation.c (the expression in double, rounded to float once);
 * prelu and rrelu answer MXC_ERR_UNSUPPORTED, and the accepts functions
 * (accepts.h) decline them, so libmxc runs them on the CPU. */
int mxc__cuda_leaky_relu(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_leaky_relu_bwd(const mxc__gpu_call *c, char *why,
                             size_t why_len);
int mxc__cuda_leaky_relu_accepts(const mxc__gpu_call *c, char *why,
                                 size_t why_len);
int mxc__cuda_leaky_relu_bwd_accepts(const mxc__gpu_call *c, char *why,
                                     size_t why_len);

/* hard_sigmoid, quadratic (data -> out) and their _backward_ ((ograd,
 * data) -> ddata), float32, as ops/nn/pointwise.c and
 * ops/sparse/quadratic.c (dense arrays; a sparse call runs on the CPU):
 * bitwise (the same IEEE operations, -fmad=false). */
int mxc__cuda_hard_sigmoid(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_hard_sigmoid_bwd(const mxc__gpu_call *c, char *why,
                               size_t why_len);
int mxc__cuda_quadratic(const mxc__gpu_call *c, char *why, size_t why_len);
int mxc__cuda_quadratic_bwd(const mxc__gpu_call *c, char *why,
                            size_t why_len);

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_SC_ROW(opname, fn) {opname, mxc__half_supports_same, fn},
#define MXC__CUDA_SC_FWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW("_" #stem "_scalar", mxc__cuda_bin_sc_##name)
#define MXC__CUDA_SC_BWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW("_backward__" #stem "_scalar", mxc__cuda_bin_scb_##name)
#define MXC__CUDA_RSC_FWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW("_r" #stem "_scalar", mxc__cuda_bin_rsc_##name)
#define MXC__CUDA_RSC_BWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW("_backward__r" #stem "_scalar", mxc__cuda_bin_rscb_##name)
#define MXC__CUDA_SAME_FWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW(#name, mxc__cuda_bin_ew_##name)
#define MXC__CUDA_SAME_BWD_ROW(name, stem) \
  MXC__CUDA_SC_ROW("_backward_" #name, mxc__cuda_bin_ewb_##name)
#define MXC__CUDA_SCALAR_ROWS                         \
  MXC__CUDA_SCALAR_ALL(MXC__CUDA_SC_FWD_ROW)          \
  MXC__CUDA_SCALAR_GRAD(MXC__CUDA_SC_BWD_ROW)         \
  MXC__CUDA_SCALAR_REV(MXC__CUDA_RSC_FWD_ROW)         \
  MXC__CUDA_SCALAR_REV(MXC__CUDA_RSC_BWD_ROW)         \
  MXC__CUDA_SAME_FWD(MXC__CUDA_SAME_FWD_ROW)          \
  MXC__CUDA_SAME_GRAD(MXC__CUDA_SAME_BWD_ROW)         \
  MXC__CUDA_SC_ROW("clip", mxc__cuda_clip)            \
  MXC__CUDA_SC_ROW("_backward_clip", mxc__cuda_clip_bwd) \
  {"LeakyReLU", NULL, mxc__cuda_leaky_relu},          \
  {"_backward_LeakyReLU", NULL, mxc__cuda_leaky_relu_bwd},          \
  {"hard_sigmoid", NULL, mxc__cuda_hard_sigmoid},                    \
  {"_backward_hard_sigmoid", NULL, mxc__cuda_hard_sigmoid_bwd},      \
  {"quadratic", NULL, mxc__cuda_quadratic},                          \
  {"_backward_quadratic", NULL, mxc__cuda_quadratic_bwd},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_SCALAR_H_ */
