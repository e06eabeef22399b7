#include "backends/cuda/so_plan.h"

#include <stdio.h>
#include <string.h>

#include "ops/nn/nn.h"

/* The class axis, as the CPU's so_layout: axis 1 with multi_output, the
 * last with preserve_shape, else every axis after the first. */
static void layout(const mxc__so_param *q, const mxc__gpu_array *d,
                   mxc__so_plan *p) {
  int axis = q->multi_output ? 1 : q->preserve_shape ? d->ndim - 1 : -1;
  p->outer = axis < 0 && d->ndim > 0 ? d->dims[0] : 1;
  p->n = 1;
  p->inner = 1;
  for (int i = axis < 0 ? 1 : 0; i < d->ndim; ++i) {
    if (axis < 0 || i == axis) {
      p->n *= d->dims[i];
    } else if (i < axis) {
      p->outer *= d->dims[i];
    } else {
      p->inner *= d->dims[i];
    }
  }
}

static int same_shape(const mxc__gpu_array *a, const mxc__gpu_array *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

/* grad_scale / norm as the CPU's so_scale, for null and batch. */
static double scale_of(const mxc__so_param *q, const mxc__gpu_array *d,
                       const mxc__so_plan *p) {
  double norm = 1;
  if (q->normalization == MXC__SO_NORM_BATCH) {
    norm = (double)(q->preserve_shape ? p->outer : d->dims[0]);
  }
  if (q->multi_output) norm *= (double)p->inner;
  return q->grad_scale / (norm < 1 ? 1 : norm);
}

static int sizes_fit(const mxc__gpu_call *c, const mxc__so_plan *p, char *why,
                     size_t why_len) {
  int64_t groups = p->outer * p->inner;
  int64_t label = c->in[1].size;
  if (c->out[0].size != c->in[0].size || (label != groups && !p->prob_label)) {
    snprintf(why, why_len,
             "SoftmaxOutput: output of %lld values, label of %lld, for data "
             "of %lld values in %lld groups",
             (long long)c->out[0].size, (long long)label,
             (long long)c->in[0].size, (long long)groups);
    return MXC_ERR_SHAPE;
  }
  return MXC_OK;
}

int mxc__so_plan_make(const mxc__gpu_call *c, int backward, mxc__so_plan *p,
                      char *why, size_t why_len) {
  const mxc__so_param *q = c->param;
  memset(p, 0, sizeof *p);
  if (!q || c->n_in != 2 || c->n_out != 1) {
    snprintf(why, why_len,
             "SoftmaxOutput: expected 2 inputs, 1 output and "
             "the parsed parameters");
    return MXC_ERR_INVALID_ARGUMENT;
  }
  layout(q, &c->in[0], p);
  p->add = c->req[0] == MXC__GPU_REQ_ADD;
  p->prob_label = same_shape(&c->in[1], &c->in[0]);
  if (backward && !p->prob_label && q->normalization == MXC__SO_NORM_VALID) {
    snprintf(why, why_len,
             "_backward_SoftmaxOutput: normalization 'valid' is not on the "
             "GPU (its count of labels is not); 'null' and 'batch' are");
    return MXC_ERR_UNSUPPORTED;
  }
  p->use_ignore = q->use_ignore;
  p->ignore_label = q->ignore_label;
  p->scale = p->prob_label ? q->grad_scale : scale_of(q, &c->in[0], p);
  p->hit = 1 - q->smooth_alpha;
  p->others = p->n > 1 ? q->smooth_alpha / (double)(p->n - 1) : 0;
  return sizes_fit(c, p, why, why_len);
}

int mxc__so_bwd_accepts(const mxc__gpu_call *c, char *why, size_t why_len) {
  if (!mxc__gpu_call_has_shapes(c)) return 1;
  mxc__so_plan p;
  return mxc__so_plan_make(c, 1, &p, why, why_len) != MXC_ERR_UNSUPPORTED;
}
