/* Internal to ops/fused: the parsed form of a program (program.c) that
 * the kernel (fused.c) runs, and the vectorized kernels (fast.c). */
#ifndef MXC_OPS_FUSED_FUSED_INTERNAL_H_
#define MXC_OPS_FUSED_FUSED_INTERNAL_H_

#include <stdint.h>

#include "core/op/common.h"
#include "core/op/fusion.h"
#include "core/op/param.h"

/* Largest parameter struct of a fusible operator (stored inline, since
 * the whole parameter struct is copied flat into each pushed call). */
#define MXC__FUSED_PARAM_BYTES 32

/* The family's answer to mxc__op_fusible (core/op/fusion.h), set at
 * registration (program.c). */
int mxc__fused_is_fusible(const mxc__op *op);

/* Instructions with a vectorized float32 kernel of their own (fast.c);
 * for other dtypes, and every other instruction, the operator's own
 * compute function runs on the tile. */
enum { MXC__FAST_NONE = 0, MXC__FAST_EXP, MXC__FAST_SIGMOID };

/* Micro-ops of float32 chains (fast.c): binary ones compute x op y with
 * x the running value and y the other operand (the scalar or an external
 * input); the R forms compute y op x. */
enum {
  MXC__UOP_NONE = 0,
  MXC__UOP_ADD,
  MXC__UOP_SUB,
  MXC__UOP_RSUB,
  MXC__UOP_MUL,
  MXC__UOP_DIV,
  MXC__UOP_RDIV,
  MXC__UOP_MAX,
  MXC__UOP_RMAX,
  MXC__UOP_MIN,
  MXC__UOP_RMIN,
  MXC__UOP_COPY,
  MXC__UOP_NEG,
  MXC__UOP_ABS,
  MXC__UOP_SQUARE,
  MXC__UOP_RELU,
  MXC__UOP_EXP,
  MXC__UOP_SIGMOID
};

typedef struct mxc__fused_uop {
  int kind; /* MXC__UOP_*; NONE: the instruction has no micro-op */
  int src;  /* other operand of binary ones: -1 the scalar, else an input */
  float s;  /* the scalar, rounded to float as the operators do */
} mxc__fused_uop;

typedef struct mxc__fused_instr {
  const mxc__op *op;
  int n_args;
  /* Registers: 0..num_inputs-1 are the external inputs, num_inputs + k
   * the result of instruction k. */
  int args[3];
  int slot; /* scratch buffer of the result; -1: the output */
  int fast; /* MXC__FAST_* */
  mxc__fused_uop uop;
  union {
    double align;
    unsigned char bytes[MXC__FUSED_PARAM_BYTES];
  } param; /* the operator's parsed parameters */
} mxc__fused_instr;

typedef struct mxc__fused_param {
  char program[MXC__PARAM_STR_MAX];
  int64_t num_inputs;
  /* Filled from program by mxc__fused_compile (the param_check). */
  int n_instr;
  int n_slots; /* scratch buffers live at once (0 for one instruction) */
  /* 1 when the program is a chain: instruction 0 reads external input
   * chain_in (and perhaps others), each later one reads the result just
   * before it as one argument and only external inputs otherwise, and
   * every instruction has a micro-op. float32 chains then run in
   * registers (mxc__fused_chain_f32). */
  int chain;
  int chain_in;
  mxc__fused_instr instr[MXC__FUSED_MAX_INSTR];
} mxc__fused_param;

/* Runs a call of the fused operator one instruction at a time through
 * mxc__op_invoke (unfused.c; core/op/fusion.h's mxc__unfused_fn). */
struct mxc__ndarray;
int mxc__fused_run_unfused(const mxc__op *op, const void *param,
                           struct mxc__ndarray *const *in, int n_in,
                           struct mxc__ndarray **out, int n_out,
                           const mxc__req *req);

/* Parses p->program into p->instr (the descriptor's param_check). */
int mxc__fused_compile(const char *op_name, void *param);

/* y = exp(x) / y = 1 / (1 + exp(-x)) over n float32 values, written or
 * (add != 0) added; within a few ulp of expf. */
void mxc__fused_exp_f32(const float *x, float *y, int64_t n, int add);
void mxc__fused_sigmoid_f32(const float *x, float *y, int64_t n, int add);

/* Runs chain program p (p->chain set) over elements [begin, end):
 * in[k] is external input k, out is written or (add) added to. */
void mxc__fused_chain_f32(const mxc__fused_param *p, const float *const *in,
                          float *out, int64_t begin, int64_t end, int add);

/* Copies n bytes with non-temporal (cache-bypassing) stores where the
 * CPU has them; mxc__fused_stream_fence orders those stores before later
 * ones (call it before another thread may read dst). */
void mxc__fused_stream_copy(void *dst, const void *src, size_t n);
void mxc__fused_stream_fence(void);

#endif /* MXC_OPS_FUSED_FUSED_INTERNAL_H_ */
