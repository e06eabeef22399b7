/* The generator of run-time fused kernels (fuse_gen.h). */
#include "backends/cuda/fuse_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"
#include "ops/fused/fused_internal.h"
#include "ops/nn/act_params.h"

static const struct {
  const char *name;
  int arity;
} k_fns[] = {
#define FN_ROW(id, fn, arity) {#fn, arity},
    MXC__FUSE_FNS(FN_ROW)
#undef FN_ROW
};

int mxc__fuse_fn_arity(int fn) {
  return fn >= 0 && fn < MXC__FUSE_N_FNS ? k_fns[fn].arity : 0;
}

const char *mxc__fuse_fn_name(int fn) {
  return fn >= 0 && fn < MXC__FUSE_N_FNS ? k_fns[fn].name : "?";
}

/* ---- plan ---- */

/* Operand orders of a micro-op: FWD computes fn(x, other), REV
 * fn(other, x), where x is the instruction's first argument. */
enum { UNARY, FWD, REV };

/* Micro-op (fused_internal.h) -> step function and order. The R forms
 * are the scalar ones (_rminus_scalar, _rdiv_scalar) or, in programs
 * that are chains, a two-input operator whose running value is its second
 * argument (ops/fused/program.c's plan_chain). */
static const struct {
  int uop, fn, order;
} k_uops[] = {
    {MXC__UOP_ADD, MXC__FUSE_ADD, FWD},
    {MXC__UOP_SUB, MXC__FUSE_SUB, FWD},
    {MXC__UOP_RSUB, MXC__FUSE_SUB, REV},
    {MXC__UOP_MUL, MXC__FUSE_MUL, FWD},
    {MXC__UOP_DIV, MXC__FUSE_DIV, FWD},
    {MXC__UOP_RDIV, MXC__FUSE_DIV, REV},
    {MXC__UOP_MAX, MXC__FUSE_MAX, FWD},
    {MXC__UOP_RMAX, MXC__FUSE_MAX, REV},
    {MXC__UOP_MIN, MXC__FUSE_MIN, FWD},
    {MXC__UOP_RMIN, MXC__FUSE_MIN, REV},
    {MXC__UOP_COPY, MXC__FUSE_COPY, UNARY},
    {MXC__UOP_NEG, MXC__FUSE_NEG, UNARY},
    {MXC__UOP_ABS, MXC__FUSE_ABS, UNARY},
    {MXC__UOP_SQUARE, MXC__FUSE_SQUARE, UNARY},
    {MXC__UOP_RELU, MXC__FUSE_RELU, UNARY},
    {MXC__UOP_EXP, MXC__FUSE_EXP, UNARY},
    {MXC__UOP_SIGMOID, MXC__FUSE_SIGMOID, UNARY},
};

static int refuse(char *why, size_t len, int k, const mxc__fused_instr *in,
                  const char *what) {
  snprintf(why, len,
           "program instruction %d ('%s') %s; the GPU fuses scalar and "
           "same-shape arithmetic, maximum, minimum, _copy, BlockGrad, "
           "negative, abs, square, relu, exp, sigmoid, Activation "
           "relu/sigmoid and its relu gradient (libmxc runs such a "
           "program one instruction at a time)",
           k, in->op ? in->op->name : "?", what);
  return MXC_ERR_UNSUPPORTED;
}

/* _backward_Activation(ograd, data, output) with act_type relu has no
 * micro-op (the CPU runs the operator itself) but is two registers' work
 * on the GPU: the gradient from ograd and the output (ResNet's backward
 * fuses it with the sum of a residual block's gradients). 1 when *s is
 * that step. */
static int plan_relu_grad(const mxc__fused_instr *in, mxc__fuse_step *s) {
  if (!in->op || strcmp(in->op->name, "_backward_Activation") != 0 ||
      in->n_args != 3) {
    return 0;
  }
  const mxc__act_param *a = (const mxc__act_param *)in->param.bytes;
  if (a->act_type != MXC__ACT_RELU) return 0;
  s->fn = MXC__FUSE_RELU_GRAD;
  s->scalar = 0;
  s->arg[0] = in->args[0];
  s->arg[1] = in->args[2];
  return 1;
}

/* Step of instruction k (its registers already those of the plan). Two
 * register arguments keep their order: the R form then only says which
 * one a chain ran through, and fn(args[0], args[1]) is the operator. */
static int plan_instr(const mxc__fused_instr *in, int k, mxc__fuse_step *s,
                      char *why, size_t len) {
  if (plan_relu_grad(in, s)) return MXC_OK;
  size_t i = 0;
  while (i < sizeof k_uops / sizeof k_uops[0] && k_uops[i].uop != in->uop.kind) {
    ++i;
  }
  if (i == sizeof k_uops / sizeof k_uops[0]) {
    return refuse(why, len, k, in, "has no GPU micro-op");
  }
  int arity = mxc__fuse_fn_arity(k_uops[i].fn);
  int n_reg = arity == 2 && in->n_args == 1 ? 1 : arity;
  if (in->n_args != n_reg) {
    return refuse(why, len, k, in, "has an unexpected number of arguments");
  }
  s->fn = k_uops[i].fn;
  s->scalar = in->uop.s;
  s->arg[0] = in->args[0];
  s->arg[1] = in->n_args == 2 ? in->args[1] : MXC__FUSE_SCALAR;
  if (arity == 2 && in->n_args == 1 && k_uops[i].order == REV) {
    s->arg[1] = s->arg[0];
    s->arg[0] = MXC__FUSE_SCALAR;
  }
  return MXC_OK;
}

int mxc__fuse_plan_make(const void *param, mxc__fuse_plan *out, char *why,
                        size_t why_len) {
  const mxc__fused_param *p = param;
  if (!p || p->n_instr < 1 || p->n_instr > MXC__FUSED_MAX_INSTR ||
      p->num_inputs < 1 || p->num_inputs > MXC__FUSED_MAX_INPUTS) {
    snprintf(why, why_len, "the fused program was not parsed");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  memset(out, 0, sizeof *out);
  out->n_inputs = (int)p->num_inputs;
  out->n_steps = p->n_instr;
  for (int k = 0; k < p->n_instr; ++k) {
    int rc = plan_instr(&p->instr[k], k, &out->steps[k], why, why_len);
    if (rc != MXC_OK) return rc;
  }
  return MXC_OK;
}

/* ---- text ---- */

typedef struct text {
  char *buf;
  size_t len, cap;
  int oom;
} text;

static void put(text *t, const char *fmt, ...) {
  if (t->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->oom = 1;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = (t->cap + (size_t)n) * 2;
    char *b = realloc(t->buf, cap);
    if (!b) {
      t->oom = 1;
      return;
    }
    t->buf = b;
    t->cap = cap;
  }
}

/* An operand: register r's variable, or the scalar by its bits (exact,
 * infinities and NaN included). */
static void put_operand(text *t, const mxc__fuse_step *s, int r) {
  if (r != MXC__FUSE_SCALAR) {
    put(t, "x%d", r);
    return;
  }
  unsigned bits;
  memcpy(&bits, &s->scalar, sizeof bits);
  put(t, "mxf_f(0x%08xu)", bits);
}

static void put_signature(text *t, const mxc__fuse_plan *p) {
  put(t, "\nextern \"C\" __global__ void " MXC__FUSE_KERNEL
         "(long long n, int add, float *out");
  for (int i = 0; i < p->n_inputs; ++i) put(t, ", const float *i%d", i);
  put(t, ") {\n");
}

static void put_body(text *t, const mxc__fuse_plan *p) {
  put(t,
      "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long e = (long long)blockIdx.x * blockDim.x + "
      "threadIdx.x; e < n; e += stride) {\n");
  for (int i = 0; i < p->n_inputs; ++i) {
    put(t, "    const float x%d = i%d[e];\n", i, i);
  }
  for (int k = 0; k < p->n_steps; ++k) {
    const mxc__fuse_step *s = &p->steps[k];
    put(t, "    const float x%d = %s(", p->n_inputs + k,
        mxc__fuse_fn_name(s->fn));
    put_operand(t, s, s->arg[0]);
    if (mxc__fuse_fn_arity(s->fn) == 2) {
      put(t, ", ");
      put_operand(t, s, s->arg[1]);
    }
    put(t, ");\n");
  }
  int last = p->n_inputs + p->n_steps - 1;
  put(t, "    out[e] = add ? mxf_add(x%d, out[e]) : x%d;\n  }\n}\n", last,
      last);
}

char *mxc__fuse_text(const mxc__fuse_plan *p) {
  text t = {malloc(8192), 0, 8192, 0};
  if (!t.buf) return NULL;
  put(&t, "%s", mxc__fuse_prelude);
  put_signature(&t, p);
  put_body(&t, p);
  if (t.oom) {
    free(t.buf);
    return NULL;
  }
  return t.buf;
}
