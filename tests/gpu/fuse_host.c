/* The host run of fused plans (fuse_host.h): the generated kernel's loop
 * body, interpreted, calling the same prelude functions by the same
 * table (MXC__FUSE_FNS) that names them in the kernel text. */
#include "tests/gpu/fuse_host.h"

#include "backends/cuda/fuse_prelude.h"

#define CALL1(f, a, b) f(a)
#define CALL2(f, a, b) f(a, b)

static float call(int fn, float a, float b) {
  switch (fn) {
#define CASE(id, f, arity) \
  case MXC__FUSE_##id:     \
    return CALL##arity(f, a, b);
    MXC__FUSE_FNS(CASE)
#undef CASE
    default:
      return mxf_f(0x7fc0badeu); /* an unknown function: a NaN to notice */
  }
}

static float operand(const mxc__fuse_step *s, const float *reg, int r) {
  return r == MXC__FUSE_SCALAR ? s->scalar : reg[r];
}

static float run_one(const mxc__fuse_plan *p, float *reg) {
  for (int k = 0; k < p->n_steps; ++k) {
    const mxc__fuse_step *s = &p->steps[k];
    float b = mxc__fuse_fn_arity(s->fn) == 2 ? operand(s, reg, s->arg[1]) : 0;
    reg[p->n_inputs + k] = call(s->fn, operand(s, reg, s->arg[0]), b);
  }
  return reg[p->n_inputs + p->n_steps - 1];
}

void mxc__fuse_host_run(const mxc__fuse_plan *p, const float *const *in,
                        float *out, int64_t n, int add) {
  float reg[MXC__FUSED_MAX_INPUTS + MXC__FUSED_MAX_INSTR];
  for (int64_t e = 0; e < n; ++e) {
    for (int i = 0; i < p->n_inputs; ++i) reg[i] = in[i][e];
    float v = run_one(p, reg);
    out[e] = add ? mxf_add(v, out[e]) : v;
  }
}
