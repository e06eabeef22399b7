/* A fused node run one instruction at a time (core/op/fusion.h's
 * mxc__unfused_fn): what a device whose fused kernel declines a program
 * runs instead. Why through mxc__op_invoke: each instruction then picks
 * its own kernel on the call's device (a GPU kernel of its own, or that
 * operator's CPU fallback), and the intermediate arrays are ordinary
 * arrays of that device, ordered by the engine like any call's. */
#include "core/base/error.h"
#include "core/ndarray/ndarray.h"
#include "core/op/invoke.h"
#include "ops/fused/fused_internal.h"

/* Instruction k of p on the registers: its result into *dst (created
 * when NULL) in write mode req (NULL: write). */
static int run_instr(const mxc__fused_param *p, int k, mxc__ndarray **reg,
                     mxc__ndarray **dst, const mxc__req *req) {
  const mxc__fused_instr *ins = &p->instr[k];
  mxc__ndarray *args[3];
  for (int a = 0; a < ins->n_args; ++a) args[a] = reg[ins->args[a]];
  return mxc__op_invoke(ins->op, ins->param.bytes, args, ins->n_args, dst, 1,
                        req);
}

int mxc__fused_run_unfused(const mxc__op *op, const void *param,
                           mxc__ndarray *const *in, int n_in,
                           mxc__ndarray **out, int n_out,
                           const mxc__req *req) {
  const mxc__fused_param *p = param;
  MXC_RETURN_ERROR_IF(n_out != 1 || n_in != (int)p->num_inputs ||
                          p->n_instr < 1,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %d inputs and %d outputs for a program "
                      "of %lld inputs and one output",
                      op->name, n_in, n_out, (long long)p->num_inputs);
  mxc__ndarray *reg[MXC__FUSED_MAX_INPUTS + MXC__FUSED_MAX_INSTR] = {0};
  for (int i = 0; i < n_in; ++i) reg[i] = in[i];
  int last = p->n_instr - 1, rc = MXC_OK;
  for (int k = 0; k < last && rc == MXC_OK; ++k) {
    rc = run_instr(p, k, reg, &reg[n_in + k], NULL);
  }
  if (rc == MXC_OK) rc = run_instr(p, last, reg, out, req);
  /* Pending work keeps the intermediates' storage alive. */
  for (int k = 0; k < last; ++k) mxc__ndarray_free(reg[n_in + k]);
  return rc;
}
