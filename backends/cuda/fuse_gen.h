/* Run-time fused GPU kernels, the generator (the Alea TK design): a parsed
 * _fused_elemwise program (ops/fused/fused_internal.h) becomes the text of
 * one CUDA C++ kernel that NVRTC compiles (fuse_nvrtc.h).
 *
 * Two steps, both plain C with no CUDA header (built and host-tested on
 * every machine):
 *  - mxc__fuse_plan: the program as steps over registers, each a function
 *    of fuse_prelude.h (MXC__FUSE_FNS) applied to earlier registers or the
 *    instruction's scalar. An instruction whose operator has no micro-op
 *    (ops/fused's MXC__UOP_*) is refused, with its name in the reason.
 *  - mxc__fuse_text: the plan as a kernel: fuse_prelude.h's text, then
 *      extern "C" __global__ void mxc_fused(long long n, int add,
 *                                           float *out, const float *i0,
 *                                           ...)
 *    a grid-stride loop that per element loads every input, runs the steps
 *    in order in registers and stores the program's one output (the last
 *    result), or adds it to the output when add != 0 (write mode ADD).
 *    Scalars are written as their bits, so the text is exact.
 *
 * The host tests run the same plan with the same prelude functions
 * (tests/gpu/fuse_host.c) and compare with the CPU operator.
 *
 * Thread-safety: every function is reentrant (no state). */
#ifndef MXC_BACKENDS_CUDA_FUSE_GEN_H_
#define MXC_BACKENDS_CUDA_FUSE_GEN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/op/fusion.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's name in the generated text. */
#define MXC__FUSE_KERNEL "mxc_fused"

/* The prelude's functions a step calls: X(ID, function, arity). */
#define MXC__FUSE_FNS(X)  \
  X(ADD, mxf_add, 2)      \
  X(SUB, mxf_sub, 2)      \
  X(MUL, mxf_mul, 2)      \
  X(DIV, mxf_div, 2)      \
  X(MAX, mxf_max, 2)      \
  X(MIN, mxf_min, 2)      \
  X(COPY, mxf_copy, 1)    \
  X(NEG, mxf_neg, 1)      \
  X(ABS, mxf_abs, 1)      \
  X(SQUARE, mxf_square, 1) \
  X(RELU, mxf_relu, 1)    \
  X(EXP, mxf_exp, 1)      \
  X(SIGMOID, mxf_sigmoid, 1) \
  X(RELU_GRAD, mxf_relu_grad, 2)

enum {
#define MXC__FUSE_ENUM(id, fn, arity) MXC__FUSE_##id,
  MXC__FUSE_FNS(MXC__FUSE_ENUM)
#undef MXC__FUSE_ENUM
      MXC__FUSE_N_FNS
};

/* An operand of a step that is the instruction's scalar, not a register. */
#define MXC__FUSE_SCALAR (-1)

/* Step k computes register n_inputs + k = fn(arg[0][, arg[1]]); registers
 * 0..n_inputs-1 are the external inputs. */
typedef struct mxc__fuse_step {
  int fn;     /* MXC__FUSE_* */
  int arg[2]; /* registers, or MXC__FUSE_SCALAR */
  float scalar;
} mxc__fuse_step;

typedef struct mxc__fuse_plan {
  int n_inputs;
  int n_steps; /* the last step's register is the output */
  mxc__fuse_step steps[MXC__FUSED_MAX_INSTR];
} mxc__fuse_plan;

/* The function's arity (1 or 2) and its name in the prelude. */
int mxc__fuse_fn_arity(int fn);
const char *mxc__fuse_fn_name(int fn);

/* Plans the parsed program `param` (an mxc__fused_param, as the kernel
 * call gets it): MXC_OK, or MXC_ERR_UNSUPPORTED with the reason (which
 * instruction, which operator) in why (why_len bytes). */
int mxc__fuse_plan_make(const void *param, mxc__fuse_plan *out, char *why,
                        size_t why_len);

/* The kernel text of plan p: a NUL-terminated string from malloc (the
 * caller frees it), or NULL when out of memory. */
char *mxc__fuse_text(const mxc__fuse_plan *p);

/* fuse_prelude.h's text (fuse_prelude_text.c, generated at build time). */
extern const char mxc__fuse_prelude[];

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_FUSE_GEN_H_ */
