/* The reduction plans of red_plan.h, made on the host per call from the
 * operators' parameters (ops/reduce's mxc__red_param). */
#include "backends/cuda/red_plan.h"

#include <stdio.h>

#include "ops/reduce/reduce_impl.h"

static int resolve(int kind, const void *param) {
  if (kind != MXC__GR_NORM) return kind;
  return ((const mxc__red_param *)param)->ord == 1 ? MXC__GR_NORM1
                                                   : MXC__GR_NORM2;
}

static int size_error(char *why, size_t len, const char *what, int64_t got,
                      int64_t want) {
  snprintf(why, len, "%s has %lld elements; expected %lld", what,
           (long long)got, (long long)want);
  return MXC_ERR_SHAPE;
}

int mxc__gred_fwd_plan_make(int kind, const mxc__gpu_call *c,
                            mxc__gred_fwd_plan *p, char *why, size_t why_len) {
  uint32_t mask = 0;
  int rc = mxc__sum_axes_mask(c->param, c->in[0].ndim, &mask, why, why_len);
  if (rc != MXC_OK) return rc;
  p->kind = resolve(kind, c->param);
  mxc__sum_plan_masked(&c->in[0], mask, 0, &p->s);
  p->per_thread = p->s.n_red <= MXC__GRED_THREAD_MAX;
  if (p->s.n_out != c->out[0].size) {
    return size_error(why, why_len, "the output", c->out[0].size, p->s.n_out);
  }
  if ((p->kind == MXC__GR_MAX || p->kind == MXC__GR_MIN) && p->s.n_red == 0 &&
      p->s.n_out > 0) {
    snprintf(why, why_len,
             "cannot reduce over a zero-size axis (max and min have no "
             "identity value)");
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}

int mxc__gred_bwd_plan_make(int kind, const mxc__gpu_call *c,
                            mxc__gred_bwd_plan *p, char *why, size_t why_len) {
  const mxc__gpu_array *x = &c->in[1];
  uint32_t mask = 0;
  int rc = mxc__sum_axes_mask(c->param, x->ndim, &mask, why, why_len);
  if (rc != MXC_OK) return rc;
  p->kind = resolve(kind, c->param);
  /* ograd with the reduced axes kept as 1 (its element order either
   * way), broadcast against data's shape. */
  mxc__gpu_array og = *x;
  og.size = 1;
  p->n_red = 1;
  for (int a = 0; a < x->ndim; ++a) {
    if (mask >> a & 1) p->n_red *= x->dims[a], og.dims[a] = 1;
    og.size *= og.dims[a];
  }
  if (c->in[0].size != og.size) {
    return size_error(why, why_len, "input 0 (ograd)", c->in[0].size, og.size);
  }
  if (mxc__gred_grad_uses_y(p->kind) &&
      (c->n_in < 3 || c->in[2].size != og.size)) {
    return size_error(why, why_len, "input 2 (output)",
                      c->n_in < 3 ? 0 : c->in[2].size, og.size);
  }
  if (c->out[0].size != x->size) {
    return size_error(why, why_len, "the gradient", c->out[0].size, x->size);
  }
  return mxc__bcast_plan_make(&og, x, x, &p->map, why, why_len);
}

int mxc__gred_prod_plan_make(int kind, const mxc__gpu_call *c,
                             mxc__gred_prod_plan *p, char *why,
                             size_t why_len) {
  const mxc__gpu_array *x = &c->in[1];
  uint32_t mask = 0;
  int rc = mxc__sum_axes_mask(c->param, x->ndim, &mask, why, why_len);
  if (rc != MXC_OK) return rc;
  p->kind = kind;
  mxc__sum_plan_masked(x, mask, 0, &p->s);
  p->per_thread = p->s.n_red <= MXC__GRED_THREAD_MAX;
  if (c->in[0].size != p->s.n_out) {
    return size_error(why, why_len, "input 0 (ograd)", c->in[0].size,
                      p->s.n_out);
  }
  if (c->out[0].size != x->size) {
    return size_error(why, why_len, "the gradient", c->out[0].size, x->size);
  }
  return MXC_OK;
}
