/* What the SoftmaxOutput kernels (loss.cu) compute, as a plan and
 * per-element functions shared by the device code and the host test
 * (tests/gpu:test_cuda_so_plan), which runs them on the host against the
 * CPU operator (ops/nn/softmax_loss.c). The arithmetic is the CPU's: the
 * maximum and the sum of exponentials of a group in double, each value
 * rounded once to float; the gradient (y - target) * scale in double.
 * The device's double exp may differ from glibc's by an ulp of double,
 * which almost never changes the float.
 *
 * Plain C with no CUDA header; MXC__SO_HD marks the functions for both
 * sides under nvcc. */
#ifndef MXC_BACKENDS_CUDA_SO_PLAN_H_
#define MXC_BACKENDS_CUDA_SO_PLAN_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"

#ifdef __CUDACC__
#define MXC__SO_HD __host__ __device__ __forceinline__
#else
#define MXC__SO_HD static inline
#endif

/* One SoftmaxOutput call: data as (outer, n, inner), the classes on the
 * middle axis; group (o, k) has label o * inner + k and its values at
 * (o * n + j) * inner + k. */
typedef struct mxc__so_plan {
  int64_t outer, n, inner;
  int add;        /* write mode ADD: accumulate into the output */
  int prob_label; /* the label is shaped like the data (probabilities) */
  int use_ignore;
  double ignore_label;
  double scale;       /* grad_scale / normalization */
  double hit, others; /* the target: 1 - alpha at the class, alpha/(n-1) */
} mxc__so_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The plan of SoftmaxOutput (backward = 0) or _backward_SoftmaxOutput
 * (1) for call c: parameters c->param (mxc__so_param of ops/nn/nn.h),
 * inputs (data, label) or (output, label), output 0's write mode.
 * MXC_ERR_UNSUPPORTED (reason in why) for normalization 'valid' (its
 * count of labels would need a reduction first); MXC_ERR_SHAPE when the
 * output's or the label's size does not fit the data. */
int mxc__so_plan_make(const mxc__gpu_call *c, int backward, mxc__so_plan *p,
                      char *why, size_t why_len);

/* _backward_SoftmaxOutput's row accepts (core/base/gpu_plugin.h): 0 with
 * the reason for a call the plan answers MXC_ERR_UNSUPPORTED
 * (normalization 'valid' with class labels), which libmxc then runs on
 * the CPU; 1 otherwise and without shapes. */
int mxc__so_bwd_accepts(const mxc__gpu_call *c, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

/* The class of label value v among n, or -1 (not an integer in [0, n),
 * NaN included): the CPU's mxc__nn_class_of. */
MXC__SO_HD int64_t mxc__so_class(double v, int64_t n) {
  if (!(v >= 0 && v < (double)n)) return -1;
  int64_t k = (int64_t)v;
  return (double)k == v ? k : -1;
}

/* The forward of group g: y[i] = exp(x[i] - max) / sum, the sum in
 * double (or added into y in write mode ADD). */
MXC__SO_HD void mxc__so_forward(const mxc__so_plan *p, const float *x, float *y,
                                int64_t g) {
  int64_t o = g / p->inner, k = g % p->inner;
  int64_t base = o * p->n * p->inner + k;
  double mx = -INFINITY, sum = 0;
  for (int64_t j = 0; j < p->n; ++j) {
    if (x[base + j * p->inner] > mx) mx = x[base + j * p->inner];
  }
  for (int64_t j = 0; j < p->n; ++j) sum += exp(x[base + j * p->inner] - mx);
  for (int64_t j = 0; j < p->n; ++j) {
    int64_t i = base + j * p->inner;
    float v = (float)(exp(x[i] - mx) / sum);
    y[i] = p->add ? y[i] + v : v;
  }
}

/* The gradient of element i (class j of group g) from the output y[i]
 * and the group's label (or, for a probability label, element i's). */
MXC__SO_HD float mxc__so_grad(const mxc__so_plan *p, float y, float label,
                              int64_t j) {
  if (p->prob_label) return (float)(((double)y - label) * p->scale);
  if (p->use_ignore && (double)label == p->ignore_label) return 0.f;
  int64_t cls = mxc__so_class(label, p->n);
  double t = cls < 0 ? 0 : (j == cls ? p->hit : p->others);
  return (float)(((double)y - t) * p->scale);
}

/* Element i of the backward: the label of its group, or its own. */
MXC__SO_HD void mxc__so_backward(const mxc__so_plan *p, const float *y,
                                 const float *label, float *dx, int64_t i) {
  int64_t k = i % p->inner, j = i / p->inner % p->n, o = i / p->inner / p->n;
  float l = p->prob_label ? label[i] : label[o * p->inner + k];
  float v = mxc__so_grad(p, y[i], l, j);
  dx[i] = p->add ? dx[i] + v : v;
}

#endif /* MXC_BACKENDS_CUDA_SO_PLAN_H_ */
