/* sum and mean: the operators' parameters to a plan (sum_plan.h),
 * reduced by sum.cu. */
#include "backends/cuda/sum.h"

#include <stdio.h>

static int run(const mxc__gpu_call *c, int mean, char *why, size_t why_len) {
  mxc__sum_plan p;
  int rc = mxc__sum_plan_from_param(c->param, &c->in[0], mean, &p, why,
                                    why_len);
  if (rc != MXC_OK) return rc;
  if (p.n_out != c->out[0].size) {
    snprintf(why, why_len,
             "the output has %lld elements; the reduction gives %lld",
             (long long)c->out[0].size, (long long)p.n_out);
    return MXC_ERR_SHAPE;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL || p.n_out == 0) return MXC_OK;
  return mxc__cuda_sum_launch(c->dev, &p, c->in[0].dtype, c->in[0].ptr,
                              c->out[0].ptr, c->req[0] == MXC__GPU_REQ_ADD,
                              why, why_len);
}

int mxc__cuda_sum(const mxc__gpu_call *c, char *why, size_t why_len) {
  return run(c, 0, why, why_len);
}

int mxc__cuda_mean(const mxc__gpu_call *c, char *why, size_t why_len) {
  return run(c, 1, why, why_len);
}
