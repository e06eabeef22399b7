/* The plug-in's fills and simple producers (fill.cu over fill_plan.h):
 * _zeros, _ones, _full, _arange, _eye, zeros_like, ones_like, add_n (any
 * number of inputs), BlockGrad, MakeLoss, make_loss (float32, float64,
 * float16, bfloat16; MakeLoss and make_loss float32) and
 * _backward_MakeLoss (float32). */
#ifndef MXC_BACKENDS_CUDA_FILL_H_
#define MXC_BACKENDS_CUDA_FILL_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(function suffix, operator, supports): the kernels. */
#define MXC__CUDA_FILL_OPS(X)                               \
  X(zeros, "_zeros", mxc__cuda_fill_supports_out)           \
  X(ones, "_ones", mxc__cuda_fill_supports_out)             \
  X(full, "_full", mxc__cuda_fill_supports_out)             \
  X(arange, "_arange", mxc__cuda_fill_supports_out)         \
  X(eye, "_eye", mxc__cuda_fill_supports_out)               \
  X(zeros_like, "zeros_like", mxc__cuda_fill_supports_same) \
  X(ones_like, "ones_like", mxc__cuda_fill_supports_same)   \
  X(add_n, "add_n", mxc__cuda_fill_supports_same)           \
  X(block_grad, "BlockGrad", mxc__cuda_fill_supports_same)  \
  X(make_loss_fwd, "MakeLoss", NULL)                        \
  X(make_loss, "make_loss", NULL)                           \
  X(make_loss_bwd, "_backward_MakeLoss", NULL)

/* mxc__cuda_fill_<suffix>(c): runs call c on gpu(c->dev), on the call's
 * stream, ending with mxc__cuda_finish, computing what the CPU operator
 * computes in c->req[0]'s write mode. Thread-safety: any thread (no
 * state). */
#define MXC__CUDA_FILL_DECL(fn, name, sup) \
  int mxc__cuda_fill_##fn(const mxc__gpu_call *c, char *why, size_t n);
MXC__CUDA_FILL_OPS(MXC__CUDA_FILL_DECL)
#undef MXC__CUDA_FILL_DECL

/* supports: the output float32, float64, float16 or bfloat16 (the
 * producers without inputs); every array of one of those dtypes, the
 * same (-1: not decided yet). */
int mxc__cuda_fill_supports_out(const int *dt, int n_in, int n_out);
int mxc__cuda_fill_supports_same(const int *dt, int n_in, int n_out);

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_FILL_ROW(fn, name, sup) {name, sup, mxc__cuda_fill_##fn},
#define MXC__CUDA_FILL_ROWS MXC__CUDA_FILL_OPS(MXC__CUDA_FILL_ROW)

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_FILL_H_ */
