/* Special functions libm lacks, and vectorized float32 exp, sigmoid and
 * tanh shared by the element-wise and Activation operators. */
#ifndef MXC_CORE_OP_VMATH_H_
#define MXC_CORE_OP_VMATH_H_

#include <stdint.h>

#include "core/op/parallel.h"

/* Inverse error function on (-1, 1); +-inf at +-1, NaN outside. */
double mxc__erfinv(double x);

/* Digamma (psi), the derivative of lgamma. */
double mxc__digamma(double x);

/* ---- fast float32 maps ----
 *
 * Vectorized float32 exp, sigmoid and tanh (within a few ulp of expf and
 * tanhf; NaN in gives NaN out), and relu (exact: x above 0 or NaN, else
 * +0), and their gradients from the output y (exp: g*y, sigmoid:
 * g*y*(1-y), tanh: g*(1-y*y), relu: g*1 above 0, g*0 else, NaN for NaN). Large arrays are split
 * over the kernel thread pool (core/op/parallel.h). `add` != 0 accumulates
 * into y / dx instead of overwriting. Returns MXC_OK (the status of the
 * parallel loop, which cannot fail here). */
enum { MXC__VM_EXP, MXC__VM_SIGMOID, MXC__VM_TANH, MXC__VM_RELU };

int mxc__vmath_f32(int fn, const float *x, float *y, int64_t n, int add);
int mxc__vmath_grad_f32(int fn, const float *og, const float *y, float *dx,
                        int64_t n, int add);

/* Elements below which element-wise kernels stay on the calling thread,
 * and the chunk size they are split into above it: the kernel pool's one
 * threshold (core/op/parallel.h explains the values). */
#define MXC__ELEMWISE_GRAIN MXC__PAR_GRAIN_ELEMS
#define MXC__ELEMWISE_PAR_MIN MXC__PAR_MIN_ELEMS

#endif /* MXC_CORE_OP_VMATH_H_ */
