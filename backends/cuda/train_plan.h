/* What the training-step kernels (train.h: optimizer updates and
 * Activation) compute, as plans and per-element functions shared by the
 * device code (train.cu, compiled by nvcc) and the host tests
 * (tests/gpu:test_cuda_train_plan), which run the same functions on the
 * host against the CPU operators. The arithmetic is the CPU kernels'
 * (ops/random/optimizer.c, ops/nn/activation.c), operation for operation:
 * with -fmad=false on the device and no FMA on the host, each element
 * rounds the same way; only the device's double exp/log1p/tanh may
 * differ from glibc's by an ulp of double, and the CPU's float32 tanh and
 * sigmoid are vectorized approximations within a few float ulps.
 *
 * Plain C with no CUDA header; MXC__HD marks the functions for both
 * sides under nvcc. */
#ifndef MXC_BACKENDS_CUDA_TRAIN_PLAN_H_
#define MXC_BACKENDS_CUDA_TRAIN_PLAN_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/nn/act_params.h"
#include "ops/random/optimizer_params.h"

#ifdef __CUDACC__
#define MXC__HD __host__ __device__ __forceinline__
#else
#define MXC__HD static inline
#endif

/* The optimizer updates with a GPU kernel. */
enum { MXC__OPT_SGD, MXC__OPT_SGD_MOM, MXC__OPT_ADAM };

/* One update call: its parameters and the CPU's choice of loop. */
typedef struct mxc__opt_plan {
  int kind; /* MXC__OPT_* */
  /* 1: the CPU's float loop (sgd and sgd_mom in write mode without
   * clipping); 0: the double rule, rounded once per value. */
  int fast;
  int add; /* accumulate the new weight into the output (write mode ADD) */
  double lr, wd, rescale_grad, clip_gradient, momentum, beta1, beta2, eps;
  /* The float loop's constants, rounded from double as the CPU does. */
  float keep, lrs, mom, lrwd;
} mxc__opt_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* The plan of operator `kind` for parameters p and the weight output's
 * write mode req (MXC__GPU_REQ_WRITE, _INPLACE or _ADD; the caller skips
 * NULL). */
void mxc__opt_plan_make(int kind, const mxc__opt_param *p, int req,
                        mxc__opt_plan *out);

/* The kind of an operator name, or -1. */
int mxc__opt_kind(const char *op);

#ifdef __cplusplus
}
#endif

/* Clipping as the CPU's: NaN passes through; c < 0 is no clipping. */
MXC__HD double mxc__opt_clip(double x, double c) {
  if (c < 0) return x;
  return x > c ? c : x < -c ? -c : x;
}

/* The double rules; s[] are the states (in/out), returns the weight. */
MXC__HD double mxc__opt_rule(const mxc__opt_plan *p, double w, double g,
                             double *s) {
  if (p->kind == MXC__OPT_SGD) {
    return (1 - p->lr * p->wd) * w -
           p->lr * mxc__opt_clip(p->rescale_grad * g, p->clip_gradient);
  }
  if (p->kind == MXC__OPT_SGD_MOM) {
    s[0] = p->momentum * s[0] - p->lr * p->wd * w -
           p->lr * mxc__opt_clip(p->rescale_grad * g, p->clip_gradient);
    return w + s[0];
  }
  double r = mxc__opt_clip(p->rescale_grad * g + p->wd * w, p->clip_gradient);
  s[0] = p->beta1 * s[0] + (1 - p->beta1) * r;
  s[1] = p->beta2 * s[1] + (1 - p->beta2) * r * r;
  return w - p->lr * s[0] / (sqrt(s[1]) + p->eps);
}

/* Element i of an update: weight w, gradient g, states s0 (sgd_mom's mom,
 * adam's mean) and s1 (adam's var), new weight into out. out may be w
 * (in place): element i is read before it is written. */
MXC__HD void mxc__opt_elem(const mxc__opt_plan *p, const float *w,
                           const float *g, float *s0, float *s1, float *out,
                           int64_t i) {
  float wf = w[i], gf = g[i];
  if (p->fast) {
    if (p->kind == MXC__OPT_SGD) {
      out[i] = p->keep * wf - p->lrs * gf;
      return;
    }
    float m = p->mom * s0[i] - p->lrwd * wf - p->lrs * gf;
    s0[i] = m;
    out[i] = wf + m;
    return;
  }
  double s[2] = {s0 ? s0[i] : 0.0, s1 ? s1[i] : 0.0};
  float nw = (float)mxc__opt_rule(p, wf, gf, s);
  if (s0) s0[i] = (float)s[0];
  if (s1) s1[i] = (float)s[1];
  out[i] = p->add ? out[i] + nw : nw;
}

/* Activation's forward for act_type t (MXC__ACT_*). relu keeps NaN. */
MXC__HD float mxc__act_fwd(int t, float xf) {
  double x = xf;
  switch (t) {
    case MXC__ACT_RELU: return xf > 0 || xf != xf ? xf : 0.f;
    case MXC__ACT_SIGMOID: return (float)(1 / (1 + exp(-x)));
    case MXC__ACT_TANH: return (float)tanh(x);
    /* log(1 + e^x) without overflow, as the CPU's softrelu */
    case MXC__ACT_SOFTRELU:
      return (float)(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)));
    default: return (float)(x / (1 + fabs(x)));
  }
}

/* _backward_Activation: output gradient g, data x, output y. relu,
 * sigmoid and tanh compute in float from y (the CPU's float32 vmath
 * gradients), softrelu and softsign in double from x. */
MXC__HD float mxc__act_bwd(int t, float g, float xf, float y) {
  double x = xf, d = 1 + fabs(x);
  switch (t) {
    case MXC__ACT_RELU: return g * (y != y ? y : y > 0 ? 1.0f : 0.0f);
    case MXC__ACT_SIGMOID: return g * (y * (1.0f - y));
    case MXC__ACT_TANH: return g * (1.0f - y * y);
    case MXC__ACT_SOFTRELU: return (float)((double)g * (1 / (1 + exp(-x))));
    default: return (float)((double)g * (1 / (d * d)));
  }
}

/* The same-shape binary operators' backward (_backward_add, _sub, _mul,
 * _div: inputs ograd, lhs, rhs; outputs dlhs, drhs), as the CPU's float
 * rows (ops/binary/kernels.c): g * d with d = the partial derivative
 * computed in float. */
enum { MXC__BG_ADD, MXC__BG_SUB, MXC__BG_MUL, MXC__BG_DIV };

MXC__HD float mxc__bin_grad_a(int op, float og, float a, float b) {
  (void)a;
  switch (op) {
    case MXC__BG_MUL: return og * b;
    case MXC__BG_DIV: return og * (1 / b);
    default: return og * 1.0f; /* add, sub */
  }
}

MXC__HD float mxc__bin_grad_b(int op, float og, float a, float b) {
  switch (op) {
    case MXC__BG_ADD: return og * 1.0f;
    case MXC__BG_SUB: return og * -1.0f;
    case MXC__BG_MUL: return og * a;
    default: return og * (-a / (b * b));
  }
}

#endif /* MXC_BACKENDS_CUDA_TRAIN_PLAN_H_ */
