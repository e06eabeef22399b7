/* _backward_broadcast_to, _backward_broadcast_axis and
 * _backward_broadcast_like on the GPU (bgrad.h): host code only, the
 * plan of bgrad_plan.h (host-tested against the CPU operators by
 * tests/gpu:test_cuda_bgrad_plan) run by sum.cu's reduction. */
#include <stdio.h>

#include "backends/cuda/bgrad.h"
#include "backends/cuda/bgrad_plan.h"
#include "backends/cuda/sum.h"

int mxc__cuda_backward_broadcast_expand(const mxc__gpu_call *c, char *why,
                                        size_t why_len) {
  mxc__sum_plan p;
  int rc = mxc__bgrad_expand_plan(c, &p, why, why_len);
  if (rc != MXC_OK) return rc;
  if (c->req[0] == MXC__GPU_REQ_NULL || c->out[0].size == 0) return MXC_OK;
  int dt = c->in[0].dtype;
  if (dt != MXC_DTYPE_FLOAT32 || c->out[0].dtype != dt) {
    /* float16/bfloat16 in add mode would round twice here (float, then
     * the dtype) where the CPU rounds once from double: the CPU runs
     * them. */
    snprintf(why, why_len,
             "dtypes %d and %d: the GPU kernel takes float32 (the CPU runs "
             "the others)",
             dt, c->out[0].dtype);
    return MXC_ERR_DTYPE;
  }
  return mxc__cuda_sum_launch(c->dev, &p, dt, c->in[0].ptr, c->out[0].ptr,
                              c->req[0] == MXC__GPU_REQ_ADD, why, why_len);
}
