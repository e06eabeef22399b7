/* The broadcast gradients' plan of bgrad_plan.h, made on the host per
 * call. */
#include "backends/cuda/bgrad_plan.h"

#include <stdio.h>

/* The axes of ograd an operand was stretched along: those it lacks or
 * has extent 1 on (extent-1 axes of ograd too: reducing them changes
 * nothing). */
static uint32_t stretched(const mxc__gpu_array *x, const mxc__gpu_array *og) {
  uint32_t m = 0;
  for (int i = 0; i < og->ndim; ++i) {
    int j = i - (og->ndim - x->ndim);
    if (j < 0 || x->dims[j] == 1) m |= 1u << i;
  }
  return m;
}

int mxc__bgrad_plan_make(const mxc__gpu_call *c, mxc__bgrad_plan *p, char *why,
                         size_t why_len) {
  const mxc__gpu_array *og = &c->in[0];
  int rc =
      mxc__bcast_plan_make(&c->in[1], &c->in[2], og, &p->map, why, why_len);
  if (rc != MXC_OK) return rc;
  for (int x = 0; x < 2; ++x) {
    const mxc__gpu_array *in = &c->in[1 + x];
    if (c->out[x].size != in->size) {
      snprintf(why, why_len,
               "output %d has %lld elements, its operand (input %d) %lld: "
               "expected the operand's shape",
               x, (long long)c->out[x].size, x + 1, (long long)in->size);
      return MXC_ERR_SHAPE;
    }
    mxc__sum_plan_masked(og, stretched(in, og), 0, &p->red[x]);
    p->per_thread[x] = p->red[x].n_red <= MXC__BGRAD_THREAD_MAX;
  }
  return MXC_OK;
}
