/* Loss heads and softmax layers as ops/nn computes them for float32:
 * LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput
 * and their _backward_ (regression.c), smooth_l1 and softmin with
 * their _backward_ (pointwise.c), SoftmaxActivation and its _backward_
 * (softmax_activation.c), softmax_cross_entropy and its _backward_
 * (softmax_loss.c). Per element or per softmax group, the CPU's
 * operations in its order (double where it uses double, its NaN rules
 * for the maxima), each value rounded once to float; write mode ADD adds
 * the rounded value in float (MXC__ASSIGN), softmin's in double
 * (mxc__blob_set).
 *
 * Plain C with no CUDA header, shared by loss2.cu and the host test
 * (tests/gpu:test_cuda_fill_plan), which runs them on host arrays
 * against the CPU operators; MXC__L2_HD functions run on both sides.
 * The device's double exp and log may differ from glibc's by an ulp of
 * double, which moves a float result only near a rounding tie. */
#ifndef MXC_BACKENDS_CUDA_LOSS2_PLAN_H_
#define MXC_BACKENDS_CUDA_LOSS2_PLAN_H_

#include <math.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/nn/loss_params.h"

#ifdef __CUDACC__
#define MXC__L2_HD __host__ __device__ __forceinline__
#else
#define MXC__L2_HD static inline
#endif

/* Softmax groups: group (o, k) holds elements (o * n + j) * inner + k,
 * j < n. */
typedef struct mxc__l2_groups {
  int64_t outer, n, inner;
} mxc__l2_groups;

/* The groups along `axis` of a (negative: from the end). Host only. */
static inline mxc__l2_groups mxc__l2_split(const mxc__gpu_array *a,
                                           int64_t axis) {
  mxc__l2_groups l = {1, 1, 1};
  int ax = (int)(axis < 0 ? axis + a->ndim : axis);
  for (int d = 0; d < a->ndim; ++d) {
    if (d < ax) l.outer *= a->dims[d];
    if (d == ax) l.n = a->dims[d];
    if (d > ax) l.inner *= a->dims[d];
  }
  return l;
}

/* SoftmaxActivation's groups: all axes but 0 (instance) or axis 1 at
 * each position (channel). Host only. */
static inline mxc__l2_groups mxc__l2_sa_groups(const mxc__sa_param *p,
                                               const mxc__gpu_array *a) {
  mxc__l2_groups l = {a->ndim > 0 ? a->dims[0] : 1, 1, 1};
  for (int d = 1; d < a->ndim; ++d) l.n *= a->dims[d];
  if (p->mode == MXC__SA_CHANNEL && a->ndim > 1) {
    l.inner = l.n / (a->dims[1] > 0 ? a->dims[1] : 1);
    l.n = a->dims[1];
  }
  return l;
}

/* out[i] = v, or out[i] + v in float (ADD). */
MXC__L2_HD void mxc__l2_put(float *out, int64_t i, float v, int add) {
  out[i] = add ? out[i] + v : v;
}

/* ---- regression outputs ---- */

MXC__L2_HD void mxc__l2_reg_fwd(int logistic, const float *x, float *y, int add,
                                int64_t i) {
  float v = logistic ? (float)(1 / (1 + exp(-(double)x[i]))) : x[i];
  mxc__l2_put(y, i, v, add);
}

/* grad_scale / num_output, num_output = elements per label row. Host
 * only. */
static inline double mxc__l2_reg_scale(const mxc__reg_param *p,
                                       const mxc__gpu_array *label) {
  int64_t rows = label->ndim > 0 ? label->dims[0] : 1;
  return p->grad_scale / (rows > 0 ? (double)(label->size / rows) : 1);
}

MXC__L2_HD void mxc__l2_reg_bwd(int mae, double scale, const float *y,
                                const float *label, float *dx, int add,
                                int64_t i) {
  double d = (double)y[i] - (double)label[i];
  if (mae) d = (d > 0) - (d < 0);
  mxc__l2_put(dx, i, (float)(d * scale), add);
}

/* ---- smooth_l1: forward (g NULL) or backward g * f'(x) ---- */

MXC__L2_HD void mxc__l2_sl1(double sigma, const float *g, const float *x,
                            float *y, int add, int64_t i) {
  double s2 = sigma * sigma, xv = x[i], v, d;
  if (fabs(xv) < 1 / s2) {
    d = s2 * xv;
    v = 0.5 * s2 * xv * xv;
  } else {
    d = (xv > 0) - (xv < 0);
    v = fabs(xv) - 0.5 / s2;
  }
  mxc__l2_put(y, i, (float)(g ? g[i] * d : v), add);
}

/* ---- softmin (temperature t), group gi ---- */

MXC__L2_HD void mxc__l2_softmin_fwd(mxc__l2_groups l, double t, const float *x,
                                    float *y, int add, int64_t gi) {
  int64_t o = gi / l.inner, k = gi % l.inner;
  int64_t base = o * l.n * l.inner + k;
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < l.n; ++j)
    m = fmax(m, -(double)x[base + j * l.inner] / t);
  for (int64_t j = 0; j < l.n; ++j)
    s += exp(-(double)x[base + j * l.inner] / t - m);
  for (int64_t j = 0; j < l.n; ++j) {
    int64_t i = base + j * l.inner;
    double v = exp(-(double)x[i] / t - m) / s;
    if (add) v += y[i];
    y[i] = (float)v;
  }
}

MXC__L2_HD void mxc__l2_softmin_bwd(mxc__l2_groups l, double t, const float *g,
                                    const float *y, float *dx, int add,
                                    int64_t gi) {
  int64_t o = gi / l.inner, k = gi % l.inner;
  int64_t base = o * l.n * l.inner + k;
  double s = 0;
  for (int64_t j = 0; j < l.n; ++j) {
    s += (double)g[base + j * l.inner] * y[base + j * l.inner];
  }
  for (int64_t j = 0; j < l.n; ++j) {
    int64_t i = base + j * l.inner;
    mxc__l2_put(dx, i, (float)(-(double)y[i] * (g[i] - s) / t), add);
  }
}

/* ---- SoftmaxActivation, group gi ---- */

MXC__L2_HD void mxc__l2_sa_fwd(mxc__l2_groups l, const float *x, float *y,
                               int add, int64_t gi) {
  int64_t o = gi / l.inner, k = gi % l.inner;
  int64_t base = o * l.n * l.inner + k;
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < l.n; ++j) m = fmax(m, (double)x[base + j * l.inner]);
  for (int64_t j = 0; j < l.n; ++j) s += exp(x[base + j * l.inner] - m);
  for (int64_t j = 0; j < l.n; ++j) {
    int64_t i = base + j * l.inner;
    mxc__l2_put(y, i, (float)(exp(x[i] - m) / s), add);
  }
}

MXC__L2_HD void mxc__l2_sa_bwd(mxc__l2_groups l, const float *g, const float *y,
                               float *dx, int add, int64_t gi) {
  int64_t o = gi / l.inner, k = gi % l.inner;
  int64_t base = o * l.n * l.inner + k;
  double s = 0;
  for (int64_t j = 0; j < l.n; ++j) {
    s += (double)g[base + j * l.inner] * y[base + j * l.inner];
  }
  for (int64_t j = 0; j < l.n; ++j) {
    int64_t i = base + j * l.inner;
    mxc__l2_put(dx, i, (float)(y[i] * (g[i] - s)), add);
  }
}

/* ---- softmax_cross_entropy: data (rows, c), label (rows) ---- */

/* The class of label value v, -1 when it is none (ops/nn's
 * mxc__nn_class_of: NaN fails every comparison). */
MXC__L2_HD int64_t mxc__l2_class(double v, int64_t c) {
  if (!(v >= 0 && v < (double)c)) return -1;
  int64_t k = (int64_t)v;
  return (double)k == v ? k : -1;
}

/* Row r's max and sum of exp(x - max), as the CPU's loops. */
MXC__L2_HD void mxc__l2_ce_stats(const float *xr, int64_t c, double *mx,
                                 double *sum) {
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < c; ++j) m = xr[j] > m ? xr[j] : m;
  for (int64_t j = 0; j < c; ++j) s += exp(xr[j] - m);
  *mx = m, *sum = s;
}

/* Row r's loss term; 0 (and *valid 0) for a label that is no class. */
MXC__L2_HD double mxc__l2_ce_term(const float *x, const float *label, int64_t c,
                                  int64_t r, int *valid) {
  int64_t cls = mxc__l2_class(label[r], c);
  *valid = cls >= 0;
  if (cls < 0) return 0;
  double mx, sum;
  mxc__l2_ce_stats(x + r * c, c, &mx, &sum);
  return mx + log(sum) - x[r * c + cls];
}

/* Row r of the gradient, ograd g (its one element). */
MXC__L2_HD void mxc__l2_ce_bwd_row(const float *x, const float *label,
                                   int64_t c, double g, float *dx, int add,
                                   int64_t r) {
  int64_t cls = mxc__l2_class(label[r], c);
  const float *xr = x + r * c;
  double mx, sum;
  mxc__l2_ce_stats(xr, c, &mx, &sum);
  for (int64_t j = 0; j < c; ++j) {
    double v = cls < 0 ? 0 : g * (exp(xr[j] - mx) / sum - (j == cls));
    mxc__l2_put(dx, r * c + j, (float)v, add);
  }
}

#endif /* MXC_BACKENDS_CUDA_LOSS2_PLAN_H_ */
