/* The plug-in's multi-precision and aggregated SGD updates and the
 * finiteness checks (mp.cu over mp_plan.h): mp_sgd_update,
 * mp_sgd_mom_update, multi_sgd_update, multi_sgd_mom_update,
 * multi_mp_sgd_update, multi_mp_sgd_mom_update, mp_lamb_update_phase1
 * and _phase2 (weights float32, float16 or bfloat16; states float32),
 * all_finite and multi_all_finite (inputs of any dtype). */
#ifndef MXC_BACKENDS_CUDA_MP_H_
#define MXC_BACKENDS_CUDA_MP_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The X-macro of the updates: X(function suffix, kind, operator). */
#define MXC__CUDA_MP_OPS(X)                                          \
  X(mp_sgd_update, MXC__MP_SGD, "mp_sgd_update")                     \
  X(mp_sgd_mom_update, MXC__MP_SGD_MOM, "mp_sgd_mom_update")         \
  X(multi_sgd_update, MXC__MP_MULTI, "multi_sgd_update")             \
  X(multi_sgd_mom_update, MXC__MP_MULTI_MOM, "multi_sgd_mom_update") \
  X(multi_mp_sgd_update, MXC__MP_MULTI_MP, "multi_mp_sgd_update")    \
  X(multi_mp_sgd_mom_update, MXC__MP_MULTI_MP_MOM, "multi_mp_sgd_mom_update")

/* mxc__cuda_<op>(c): runs call c (groups of inputs per weight, one output
 * per weight) on gpu(c->dev), on the call's stream, ending with
 * mxc__cuda_finish; the states (mom, weight32) are updated in place as
 * the CPU does; an output in mode NULL skips its group. supports: the
 * dtypes of mxc__mp_supports (mp_plan.h). Thread-safety: any thread (no
 * state). */
#define MXC__CUDA_MP_DECL(fn, kind, name)                          \
  int mxc__cuda_##fn(const mxc__gpu_call *c, char *why, size_t n); \
  int mxc__cuda_##fn##_supports(const int *dt, int n_in, int n_out);
MXC__CUDA_MP_OPS(MXC__CUDA_MP_DECL)
#undef MXC__CUDA_MP_DECL

/* mp_lamb_update_phase1 (weight, grad, mean, var, weight32 -> g) and
 * _phase2 (weight, g, r1, r2, weight32 -> the new weight; the norms r1, r2
 * of one element each, read on the device), as ops/random/
 * optimizer_ext.c; mean and var updated in place. supports:
 * mxc__mp_lamb_supports (mp_plan.h). Thread-safety: any thread. */
int mxc__cuda_mp_lamb1(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_mp_lamb2(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_mp_lamb1_supports(const int *dt, int n_in, int n_out);
int mxc__cuda_mp_lamb2_supports(const int *dt, int n_in, int n_out);

/* all_finite / multi_all_finite: the float32 flag (shape (1)) set to 1
 * (init_output) and to 0 when an element of an input is infinite or NaN,
 * as ops/nn/all_finite.c; supports: a float32 output, inputs of any
 * dtype. Thread-safety: any thread. */
int mxc__cuda_all_finite(const mxc__gpu_call *c, char *why, size_t n);
int mxc__cuda_all_finite_supports(const int *dt, int n_in, int n_out);

/* The kernel table's rows (plugin.c). */
#define MXC__CUDA_MP_ROW(fn, kind, name) \
  {name, mxc__cuda_##fn##_supports, mxc__cuda_##fn},
#define MXC__CUDA_MP_ROWS                                                  \
  MXC__CUDA_MP_OPS(MXC__CUDA_MP_ROW){"mp_lamb_update_phase1",              \
                                     mxc__cuda_mp_lamb1_supports,          \
                                     mxc__cuda_mp_lamb1},                  \
      {"mp_lamb_update_phase2", mxc__cuda_mp_lamb2_supports,               \
       mxc__cuda_mp_lamb2},                                                \
      {"all_finite", mxc__cuda_all_finite_supports, mxc__cuda_all_finite}, \
      {"multi_all_finite", mxc__cuda_all_finite_supports,                  \
       mxc__cuda_all_finite},

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_MP_H_ */
