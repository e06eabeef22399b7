/* The sum/mean plan of sum_plan.h, made on the host per call. */
#include "backends/cuda/sum_plan.h"

#include <stdio.h>

#include "ops/reduce/reduce_impl.h"

/* The mask of reduced axes, as the CPU's mxc__red_axes_mask. */
static int axes_mask(int ndim, int axis_ndim, const int64_t *axis,
                     int exclude, uint32_t *mask, char *why, size_t len) {
  uint32_t all = ndim ? (uint32_t)((1ull << ndim) - 1) : 0, m = 0;
  if (axis_ndim <= 0) { /* None or (): every axis, exclude ignored */
    *mask = all;
    return MXC_OK;
  }
  for (int i = 0; i < axis_ndim; ++i) {
    int64_t a = axis[i] < 0 ? axis[i] + ndim : axis[i];
    if (a < 0 || a >= ndim || (m >> a & 1)) {
      snprintf(why, len,
               "axis %lld is out of range or repeated for an input with %d "
               "dimensions",
               (long long)axis[i], ndim);
      return MXC_ERR_INVALID_ARGUMENT;
    }
    m |= 1u << a;
  }
  *mask = exclude ? all & ~m : m;
  return MXC_OK;
}

int mxc__sum_plan_make(const mxc__gpu_array *in, int axis_ndim,
                       const int64_t *axis, int exclude, int mean,
                       mxc__sum_plan *p, char *why, size_t why_len) {
  uint32_t mask = 0;
  int rc = axes_mask(in->ndim, axis_ndim, axis, exclude, &mask, why, why_len);
  if (rc != MXC_OK) return rc;
  mxc__sum_plan_masked(in, mask, mean, p);
  return MXC_OK;
}

void mxc__sum_plan_masked(const mxc__gpu_array *in, uint32_t mask, int mean,
                          mxc__sum_plan *p) {
  int64_t st[MXC_MAX_NDIM], run = 1;
  for (int a = in->ndim - 1; a >= 0; --a) st[a] = run, run *= in->dims[a];
  p->nk = p->nr = 0;
  p->n_out = p->n_red = 1;
  p->mean = mean;
  for (int a = 0; a < in->ndim; ++a) {
    int64_t e = in->dims[a];
    if (mask >> a & 1) {
      p->n_red *= e;
      if (e != 1) p->rext[p->nr] = e, p->rstr[p->nr++] = st[a];
    } else {
      p->n_out *= e;
      if (e != 1) p->kext[p->nk] = e, p->kstr[p->nk++] = st[a];
    }
  }
}

int mxc__sum_axes_mask(const void *param, int ndim, uint32_t *mask,
                       char *why, size_t why_len) {
  const mxc__red_param *rp = param;
  return axes_mask(ndim, rp->axis.ndim, rp->axis.d, rp->exclude, mask, why,
                   why_len);
}

int mxc__sum_plan_from_param(const void *param, const mxc__gpu_array *in,
                             int mean, mxc__sum_plan *p, char *why,
                             size_t why_len) {
  const mxc__red_param *rp = param;
  return mxc__sum_plan_make(in, rp->axis.ndim, rp->axis.d, rp->exclude, mean,
                            p, why, why_len);
}
