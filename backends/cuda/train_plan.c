/* The optimizer plans of train_plan.h: the CPU's choice between its float
 * and double loops (ops/random/optimizer.c's fast_f32), made once per
 * call on the host. */
#include "backends/cuda/train_plan.h"

#include <string.h>

#include "core/base/gpu_plugin.h"

int mxc__opt_kind(const char *op) {
  if (strcmp(op, "sgd_update") == 0) return MXC__OPT_SGD;
  if (strcmp(op, "sgd_mom_update") == 0) return MXC__OPT_SGD_MOM;
  return strcmp(op, "adam_update") == 0 ? MXC__OPT_ADAM : -1;
}

void mxc__opt_plan_make(int kind, const mxc__opt_param *p, int req,
                        mxc__opt_plan *out) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  /* The CPU's float loop: sgd and sgd_mom, write mode WRITE (not INPLACE,
   * not ADD), no clipping. */
  out->fast = kind != MXC__OPT_ADAM && req == MXC__GPU_REQ_WRITE &&
              p->clip_gradient < 0;
  out->add = req == MXC__GPU_REQ_ADD;
  out->lr = p->lr, out->wd = p->wd, out->rescale_grad = p->rescale_grad;
  out->clip_gradient = p->clip_gradient, out->momentum = p->momentum;
  out->beta1 = p->beta1, out->beta2 = p->beta2, out->eps = p->epsilon;
  out->keep = (float)(1 - p->lr * p->wd);
  out->lrs = (float)(p->lr * p->rescale_grad);
  out->mom = (float)p->momentum;
  out->lrwd = (float)(p->lr * p->wd);
}
