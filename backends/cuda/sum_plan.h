/* The sum and mean kernels' plan (sum.cu): which input elements each
 * output element reduces, from the operator's parameters (axis, exclude;
 * keepdims only changes the output's shape, not its order) as the CPU's
 * sum and mean (ops/reduce/reduce.c, mxc__red_axes_mask): axis None or ()
 * is every axis, negative axes count from the end, exclude reduces the
 * axes not listed.
 *
 * The input's axes are split into kept ones (the output's, row-major) and
 * reduced ones (a group, row-major), each with its input stride, extent-1
 * axes dropped. Plain C with no CUDA header, host-tested against the CPU
 * operators (tests/gpu:test_cuda_sum_plan); MXC__SUM_HD functions run on
 * both sides. */
#ifndef MXC_BACKENDS_CUDA_SUM_PLAN_H_
#define MXC_BACKENDS_CUDA_SUM_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"

#ifdef __CUDACC__
#define MXC__SUM_HD __host__ __device__ __forceinline__
#else
#define MXC__SUM_HD static inline
#endif

typedef struct mxc__sum_plan {
  int nk, nr;                  /* kept / reduced axes (extent > 1) */
  int64_t kext[MXC_MAX_NDIM];  /* kept extents, outermost first */
  int64_t kstr[MXC_MAX_NDIM];  /* their input strides */
  int64_t rext[MXC_MAX_NDIM];  /* reduced extents */
  int64_t rstr[MXC_MAX_NDIM];  /* their input strides */
  int64_t n_out, n_red;        /* outputs; elements per output */
  int mean;                    /* divide by n_red */
} mxc__sum_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The plan for input `in` and the parameters of sum/mean: axis (ndim -1
 * for None, else n_axis entries), exclude. MXC_ERR_INVALID_ARGUMENT with
 * the reason in why for an axis out of range or listed twice (the
 * framework's shape inference refuses those first). */
int mxc__sum_plan_make(const mxc__gpu_array *in, int axis_ndim,
                       const int64_t *axis, int exclude, int mean,
                       mxc__sum_plan *p, char *why, size_t why_len);

/* The plan reducing the axes in mask (bit a: input axis a), which need
 * not come from the operators' parameters: the broadcast gradients
 * (bgrad_plan.h) reduce the axes an operand was stretched along. */
void mxc__sum_plan_masked(const mxc__gpu_array *in, uint32_t mask, int mean,
                          mxc__sum_plan *p);

/* The mask of reduced axes of an input of ndim axes from the operators'
 * parsed parameters (axis, exclude), as the CPU's mxc__red_axes_mask:
 * MXC_OK, or MXC_ERR_INVALID_ARGUMENT with the reason in why. The
 * reductions' gradients (red_plan.h) map elements with it. */
int mxc__sum_axes_mask(const void *param, int ndim, uint32_t *mask,
                       char *why, size_t why_len);

/* The same from the operators' parsed parameter struct (ops/reduce's
 * mxc__red_param, read in sum_plan.c: its header is C only). */
int mxc__sum_plan_from_param(const void *param, const mxc__gpu_array *in,
                             int mean, mxc__sum_plan *p, char *why,
                             size_t why_len);

#ifdef __cplusplus
}
#endif

/* Input offset of output o's first element. */
MXC__SUM_HD int64_t mxc__sum_base(const mxc__sum_plan *p, int64_t o) {
  int64_t off = 0;
  for (int d = p->nk - 1; d >= 0; --d) {
    off += o % p->kext[d] * p->kstr[d];
    o /= p->kext[d];
  }
  return off;
}

/* Offset of element r of a group from the group's base. */
MXC__SUM_HD int64_t mxc__sum_step(const mxc__sum_plan *p, int64_t r) {
  int64_t off = 0;
  for (int d = p->nr - 1; d >= 0; --d) {
    off += r % p->rext[d] * p->rstr[d];
    r /= p->rext[d];
  }
  return off;
}

/* The output value from the group's double sum, as the CPU's fin. */
MXC__SUM_HD float mxc__sum_final(const mxc__sum_plan *p, double acc) {
  return (float)(p->mean ? acc / (double)p->n_red : acc);
}

#endif /* MXC_BACKENDS_CUDA_SUM_PLAN_H_ */
