/* GroupNorm, InstanceNorm and their gradients as ops/nn/group_norm.c
 * computes them for float32: data (N, C, S...) as N * G groups of
 * d = (C / G) * S contiguous elements.
 *
 * Forward, per group (one thread): the double sum, mean, the double sum
 * of squared deviations, sd = sqrt(var + eps), then each output element
 * (float)((x - mean) / sd * gamma[c] + beta[c]), the mean and sd
 * (GroupNorm) or var (InstanceNorm) as hidden outputs; ADD adds in
 * float (MXC__ASSIGN).
 *
 * Gradient: ddata per group (one thread: the two double means, then
 * each element); dgamma and dbeta per channel (one thread): the CPU adds
 * float(og * xh) and og into them group by group, position by position,
 * so a channel's thread adds over the samples n, then its positions, in
 * that order, from 0 (or the old value in ADD).
 *
 * LRN and _backward_LRN (ops/nn/lrn.c), per element: the window's double
 * sum of squares, norm = knorm + alpha / nsize * sum, the output
 * x * pow(norm, -beta) and the hidden norm; the gradient
 * g * pow(s, -beta) - 2 beta alpha / nsize * x * sum_j g_j y_j / s_j over
 * the channels whose windows hold it. A direct kernel rather than
 * cuDNN's LRN: the CPU's hidden norm output and its double arithmetic
 * are followed exactly (pow on the device may differ from glibc's by an
 * ulp of double).
 *
 * Plain C with no CUDA header, shared by gn.cu and the host test
 * (tests/gpu:test_cuda_fill_plan). */
#ifndef MXC_BACKENDS_CUDA_GN_PLAN_H_
#define MXC_BACKENDS_CUDA_GN_PLAN_H_

#include <math.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "ops/nn/group_norm_params.h"
#include "ops/nn/lrn_params.h"

#ifdef __CUDACC__
#define MXC__GN_HD __host__ __device__ __forceinline__
#else
#define MXC__GN_HD static inline
#endif

typedef struct mxc__gn_plan {
  int64_t n, groups, d, cpg, s, g;
  double eps;
  int inst;
  int add[3], on[3]; /* per output: ADD mode; written (not NULL, present) */
} mxc__gn_plan;

/* Host only: for data x, the call's outputs (n_out of them, modes req). */
static inline mxc__gn_plan mxc__gn_plan_make(int inst, const void *param,
                                             const mxc__gpu_array *x,
                                             const int *req, int n_out) {
  mxc__gn_plan q;
  int64_t c = x->dims[1];
  q.s = 1;
  for (int k = 2; k < x->ndim; ++k) q.s *= x->dims[k];
  q.g = inst ? c : ((const mxc__gn_param *)param)->num_groups;
  q.cpg = inst ? 1 : c / q.g;
  q.n = x->dims[0];
  q.groups = x->dims[0] * q.g;
  q.d = q.cpg * q.s;
  q.eps = inst ? ((const mxc__in_param *)param)->eps
               : ((const mxc__gn_param *)param)->eps;
  q.inst = inst;
  for (int k = 0; k < 3; ++k) {
    q.on[k] = k < n_out && req[k] != MXC__GPU_REQ_NULL;
    q.add[k] = k < n_out && req[k] == MXC__GPU_REQ_ADD;
  }
  return q;
}

MXC__GN_HD void mxc__gn_put(float *o, int64_t i, float v, int add) {
  o[i] = add ? o[i] + v : v;
}

/* Forward, group qi: output y, hidden mean and sd (or var). */
MXC__GN_HD void mxc__gn_fwd(const mxc__gn_plan *q, const float *xs,
                            const float *gamma, const float *beta, float *ys,
                            float *mean_out, float *st_out, int64_t qi) {
  const float *x = xs + qi * q->d;
  double s = 0, v = 0;
  for (int64_t j = 0; j < q->d; ++j) s += x[j];
  double mean = s / (double)q->d;
  for (int64_t j = 0; j < q->d; ++j) v += (x[j] - mean) * (x[j] - mean);
  v /= (double)q->d;
  double sd = sqrt(v + q->eps);
  for (int64_t j = 0; q->on[0] && j < q->d; ++j) {
    int64_t c = (qi % q->g) * q->cpg + j / q->s;
    mxc__gn_put(ys, qi * q->d + j,
                (float)((x[j] - mean) / sd * gamma[c] + beta[c]), q->add[0]);
  }
  if (q->on[1]) mxc__gn_put(mean_out, qi, (float)mean, q->add[1]);
  if (q->on[2]) mxc__gn_put(st_out, qi, (float)(q->inst ? v : sd), q->add[2]);
}

/* The group's sd from its hidden output (var for InstanceNorm). */
MXC__GN_HD double mxc__gn_sd(const mxc__gn_plan *q, const float *st,
                             int64_t qi) {
  return q->inst ? sqrt(st[qi] + q->eps) : st[qi];
}

/* ddata, group qi. */
MXC__GN_HD void mxc__gn_dx(const mxc__gn_plan *q, const float *ogs,
                           const float *xs, const float *gamma,
                           const float *mean_in, const float *st, float *dxs,
                           int64_t qi) {
  const float *og = ogs + qi * q->d, *x = xs + qi * q->d;
  double mean = mean_in[qi], sd = mxc__gn_sd(q, st, qi);
  double sw = 0, swx = 0;
  for (int64_t j = 0; j < q->d; ++j) {
    int64_t c = (qi % q->g) * q->cpg + j / q->s;
    double xh = (x[j] - mean) / sd, w = og[j] * (double)gamma[c] / sd;
    sw += w;
    swx += w * xh;
  }
  sw /= (double)q->d;
  swx /= (double)q->d;
  for (int64_t j = 0; j < q->d; ++j) {
    int64_t c = (qi % q->g) * q->cpg + j / q->s;
    double xh = (x[j] - mean) / sd, w = og[j] * (double)gamma[c] / sd;
    mxc__gn_put(dxs, qi * q->d + j, (float)(w - sw - xh * swx), q->add[0]);
  }
}

/* dgamma (k 1) or dbeta (k 2) of channel c. */
MXC__GN_HD void mxc__gn_dgb(const mxc__gn_plan *q, int k, const float *ogs,
                            const float *xs, const float *mean_in,
                            const float *st, float *out, int64_t c) {
  int64_t g = c / q->cpg, off = (c - g * q->cpg) * q->s;
  float acc = q->add[k] ? out[c] : 0.f;
  for (int64_t n = 0; n < q->n; ++n) {
    int64_t qi = n * q->g + g;
    const float *og = ogs + qi * q->d + off, *x = xs + qi * q->d + off;
    double mean = mean_in[qi], sd = mxc__gn_sd(q, st, qi);
    for (int64_t j = 0; j < q->s; ++j) {
      acc += k == 1 ? (float)(og[j] * ((x[j] - mean) / sd)) : og[j];
    }
  }
  out[c] = acc;
}

/* ---- LRN ---- */

typedef struct mxc__lrn_plan {
  int64_t c, inner; /* channels, positions per channel */
  double alpha, beta, knorm;
  int64_t nsize;
  int add[2], on[2];
} mxc__lrn_plan;

/* Host only: for data x (N, C, H, W) and the call's output modes. */
static inline mxc__lrn_plan mxc__lrn_plan_make(const mxc__lrn_param *p,
                                               const mxc__gpu_array *x,
                                               const int *req, int n_out) {
  mxc__lrn_plan q;
  q.c = x->dims[1];
  q.inner = x->dims[2] * x->dims[3];
  q.alpha = p->alpha, q.beta = p->beta, q.knorm = p->knorm;
  q.nsize = p->nsize;
  for (int k = 0; k < 2; ++k) {
    q.on[k] = k < n_out && req[k] != MXC__GPU_REQ_NULL;
    q.add[k] = k < n_out && req[k] == MXC__GPU_REQ_ADD;
  }
  return q;
}

/* Forward, element i: output y and hidden norm nm. */
MXC__GN_HD void mxc__lrn_fwd(const mxc__lrn_plan *q, const float *x, float *y,
                             float *nm, int64_t i) {
  int64_t k = i % q->inner, c = i / q->inner % q->c, o = i / (q->inner * q->c);
  int64_t a = c - q->nsize / 2, b = a + q->nsize;
  int64_t lo = a < 0 ? 0 : a, hi = b > q->c ? q->c : b;
  double s = 0;
  for (int64_t cc = lo; cc < hi; ++cc) {
    double v = x[(o * q->c + cc) * q->inner + k];
    s += v * v;
  }
  double norm = q->knorm + q->alpha / (double)q->nsize * s;
  if (q->on[0])
    mxc__gn_put(y, i, (float)(x[i] * pow(norm, -q->beta)), q->add[0]);
  if (q->on[1]) mxc__gn_put(nm, i, (float)norm, q->add[1]);
}

/* Gradient, element i: inputs ograd g, data x, output y, norm s. */
MXC__GN_HD void mxc__lrn_bwd(const mxc__lrn_plan *q, const float *g,
                             const float *x, const float *y, const float *s,
                             float *dx, int64_t i) {
  int64_t k = i % q->inner, c = i / q->inner % q->c, o = i / (q->inner * q->c);
  int64_t h = q->nsize / 2, lo = c + h - q->nsize + 1, hi = c + h + 1;
  if (lo < 0) lo = 0;
  if (hi > q->c) hi = q->c;
  double f = 2 * q->beta * q->alpha / (double)q->nsize, acc = 0;
  for (int64_t j = lo; j < hi; ++j) {
    int64_t ij = (o * q->c + j) * q->inner + k;
    acc += (double)g[ij] * y[ij] / s[ij];
  }
  double v = g[i] * pow((double)s[i], -q->beta) - f * x[i] * acc;
  mxc__gn_put(dx, i, (float)v, q->add[0]);
}

#endif /* MXC_BACKENDS_CUDA_GN_PLAN_H_ */
