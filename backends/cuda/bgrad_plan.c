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

/* Whether x repeats into og's shape: no more axes, each of og's extent or
 * 1 (aligned at the last axes). */
static int repeats_into(const mxc__gpu_array *x, const mxc__gpu_array *og) {
  if (x->ndim > og->ndim) return 0;
  for (int j = 0; j < x->ndim; ++j) {
    int64_t e = x->dims[j], eo = og->dims[j + og->ndim - x->ndim];
    if (e != eo && e != 1) return 0;
  }
  return 1;
}

int mxc__bgrad_expand_plan(const mxc__gpu_call *c, mxc__sum_plan *p,
                           char *why, size_t why_len) {
  if (c->n_in != 2 || c->n_out != 1) {
    snprintf(why, why_len,
             "%d inputs and %d outputs; expected 2 (ograd, data) and 1", c->n_in,
             c->n_out);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  const mxc__gpu_array *og = &c->in[0], *x = &c->in[1];
  if (!repeats_into(x, og) || c->out[0].size != x->size) {
    snprintf(why, why_len,
             "data (%d axes, %lld elements) does not repeat into the output "
             "gradient's %d axes, or the gradient has %lld elements: "
             "expected data's extents equal to ograd's last ones or 1, and "
             "a gradient of data's shape",
             x->ndim, (long long)x->size, og->ndim,
             (long long)c->out[0].size);
    return MXC_ERR_SHAPE;
  }
  mxc__sum_plan_masked(og, stretched(x, og), 0, p);
  return MXC_OK;
}
