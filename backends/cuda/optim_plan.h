/* The optimizer updates beyond sgd/sgd_mom/adam (optim.cu):
 * nag_mom_update, rmsprop_update, rmspropalex_update, adagrad_update,
 * ftrl_update, signsgd_update, signum_update, as the CPU computes them
 * for float32 (ops/random/optimizer.c), and ftml_update,
 * lamb_update_phase1 and _phase2 (optimizer_ext.c, at the end): per
 * element, the weight, the
 * gradient and the states read as doubles, the rule evaluated in double
 * in the CPU's operation order, each state and the new weight rounded
 * once to float (write mode ADD adds the rounded weight in float, as the
 * CPU's MXC__ASSIGN). With -fmad=false on the device and no FMA on the
 * host, and IEEE double sqrt and division on both, each element rounds
 * the same way: the results are expected bitwise.
 *
 * Plain C with no CUDA header, shared by the kernel and the host test
 * (tests/gpu:test_cuda_optim_plan); MXC__OPT2_HD functions run on both
 * sides. */
#ifndef MXC_BACKENDS_CUDA_OPTIM_PLAN_H_
#define MXC_BACKENDS_CUDA_OPTIM_PLAN_H_

#include <math.h>
#include <stdint.h>

#include "backends/cuda/train_plan.h"
#include "ops/random/optimizer_ext_params.h"
#include "ops/random/optimizer_params.h"

#ifdef __CUDACC__
#define MXC__OPT2_HD __host__ __device__ __forceinline__
#else
#define MXC__OPT2_HD static inline
#endif

/* The updates, in the kernel table's order (optim.h). */
enum {
  MXC__OPT2_NAG_MOM,
  MXC__OPT2_RMSPROP,
  MXC__OPT2_RMSPROPALEX,
  MXC__OPT2_ADAGRAD,
  MXC__OPT2_FTRL,
  MXC__OPT2_SIGNSGD,
  MXC__OPT2_SIGNUM
};

MXC__OPT2_HD double mxc__opt2_sgn(double x) { return (x > 0) - (x < 0); }

/* clip(rescale_grad * g) */
MXC__OPT2_HD double mxc__opt2_rescaled(const mxc__opt_param *p, double g) {
  return mxc__opt_clip(p->rescale_grad * g, p->clip_gradient);
}

/* clip(rescale_grad * g + wd * w): rmsprop's and rmspropalex's gradient */
MXC__OPT2_HD double mxc__opt2_decayed(const mxc__opt_param *p, double w,
                                      double g) {
  return mxc__opt_clip(p->rescale_grad * g + p->wd * w, p->clip_gradient);
}

MXC__OPT2_HD double mxc__opt2_nag_mom(const mxc__opt_param *p, double w,
                                      double g, double *s) {
  double step = p->lr * (mxc__opt2_rescaled(p, g) + p->wd * w);
  s[0] = p->momentum * s[0] - step;
  return w + p->momentum * s[0] - step;
}

MXC__OPT2_HD double mxc__opt2_rmsprop(const mxc__opt_param *p, double w,
                                      double g, double *s) {
  double r = mxc__opt2_decayed(p, w, g);
  s[0] = (1 - p->gamma1) * r * r + p->gamma1 * s[0];
  return mxc__opt_clip(w - p->lr * r / sqrt(s[0] + p->epsilon),
                       p->clip_weights);
}

MXC__OPT2_HD double mxc__opt2_rmspropalex(const mxc__opt_param *p, double w,
                                          double g, double *s) {
  double r = mxc__opt2_decayed(p, w, g);
  s[0] = (1 - p->gamma1) * r * r + p->gamma1 * s[0];
  s[1] = (1 - p->gamma1) * r + p->gamma1 * s[1];
  s[2] = p->gamma2 * s[2] -
         p->lr * r / sqrt(s[0] - s[1] * s[1] + p->epsilon);
  return mxc__opt_clip(w + s[2], p->clip_weights);
}

MXC__OPT2_HD double mxc__opt2_adagrad(const mxc__opt_param *p, double w,
                                      double g, double *s) {
  double r = mxc__opt2_rescaled(p, g);
  s[0] += r * r;
  return w - p->lr * (r / sqrt(s[0] + p->epsilon) + p->wd * w);
}

MXC__OPT2_HD double mxc__opt2_ftrl(const mxc__opt_param *p, double w,
                                   double g, double *s) {
  double r = mxc__opt2_rescaled(p, g);
  s[0] += r - (sqrt(s[1] + r * r) - sqrt(s[1])) * w / p->lr;
  s[1] += r * r;
  if (!(fabs(s[0]) > p->lamda1)) return 0;
  return (mxc__opt2_sgn(s[0]) * p->lamda1 - s[0]) /
         ((p->beta + sqrt(s[1])) / p->lr + p->wd);
}

MXC__OPT2_HD double mxc__opt2_signsgd(const mxc__opt_param *p, double w,
                                      double g, double *s) {
  (void)s;
  return (1 - p->lr * p->wd) * w - p->lr * mxc__opt2_sgn(p->rescale_grad * g);
}

MXC__OPT2_HD double mxc__opt2_signum(const mxc__opt_param *p, double w,
                                     double g, double *s) {
  s[0] = p->momentum * s[0] - (1 - p->momentum) * p->wd * w -
         (1 - p->momentum) * mxc__opt2_rescaled(p, g);
  return (1 - p->lr * p->wd_lh) * w + p->lr * mxc__opt2_sgn(s[0]);
}

/* The rule of update kind (MXC__OPT2_*): states s[] in/out, returns the
 * new weight. */
MXC__OPT2_HD double mxc__opt2_rule(int kind, const mxc__opt_param *p,
                                   double w, double g, double *s) {
  switch (kind) {
    case MXC__OPT2_NAG_MOM: return mxc__opt2_nag_mom(p, w, g, s);
    case MXC__OPT2_RMSPROP: return mxc__opt2_rmsprop(p, w, g, s);
    case MXC__OPT2_RMSPROPALEX: return mxc__opt2_rmspropalex(p, w, g, s);
    case MXC__OPT2_ADAGRAD: return mxc__opt2_adagrad(p, w, g, s);
    case MXC__OPT2_FTRL: return mxc__opt2_ftrl(p, w, g, s);
    case MXC__OPT2_SIGNSGD: return mxc__opt2_signsgd(p, w, g, s);
    default: return mxc__opt2_signum(p, w, g, s);
  }
}

/* States of each kind (inputs after weight and grad). */
MXC__OPT2_HD int mxc__opt2_states(int kind) {
  switch (kind) {
    case MXC__OPT2_RMSPROPALEX: return 3;
    case MXC__OPT2_FTRL: return 2;
    case MXC__OPT2_SIGNSGD: return 0;
    default: return 1;
  }
}

/* Element i of an update: weight w, gradient g, states s[0..3) (NULL past
 * the kind's count), new weight into out, added to it when add. out may
 * be w (in place): element i is read before it is written. */
MXC__OPT2_HD void mxc__opt2_elem(int kind, const mxc__opt_param *p,
                                 const float *w, const float *g,
                                 float *const *s, float *out, int add,
                                 int64_t i) {
  int ns = mxc__opt2_states(kind);
  double st[3] = {0, 0, 0};
  for (int k = 0; k < ns; ++k) st[k] = s[k][i];
  double nw = mxc__opt2_rule(kind, p, w[i], g[i], st);
  for (int k = 0; k < ns; ++k) s[k][i] = (float)st[k];
  out[i] = add ? out[i] + (float)nw : (float)nw;
}

/* ---- FTML and LAMB (ops/random/optimizer_ext.c) ----
 *
 * ftml_update (weight, grad, d, v, z), lamb_update_phase1 (weight, grad,
 * mean, var) -> g, lamb_update_phase2 (weight, g, r1, r2 of shape (1,)).
 * The same rounding as the others (double rules, values rounded once),
 * except write mode ADD: these add the output's old value in double and
 * round once (the CPU's mxc__opt_st_req). The bias corrections
 * 1 - beta^t come from the host's pow (plan), as the CPU's. */
enum { MXC__OPT3_FTML, MXC__OPT3_LAMB1, MXC__OPT3_LAMB2 };

typedef struct mxc__opt3_plan {
  mxc__opt_ext_param p;
  double c1, c2; /* 1 - beta1^t, 1 - beta2^t (1 without LAMB's correction) */
} mxc__opt3_plan;

/* The plan of update kind (MXC__OPT3_*) for the parsed parameters p. Host
 * only (glibc's pow, as the CPU). */
static inline mxc__opt3_plan mxc__opt3_plan_make(int kind,
                                                 const mxc__opt_ext_param *p) {
  mxc__opt3_plan r;
  r.p = *p;
  int correct = kind == MXC__OPT3_FTML || p->bias_correction;
  r.c1 = correct ? 1 - pow(p->beta1, (double)p->t) : 1;
  r.c2 = correct ? 1 - pow(p->beta2, (double)p->t) : 1;
  return r;
}

/* out[i] from value v: rounded once, with the old value in add mode. */
MXC__OPT2_HD void mxc__opt3_store(float *out, int64_t i, double v, int add) {
  out[i] = (float)(add ? v + (double)out[i] : v);
}

/* FTML, element i: states d, v, z updated, new weight into out (may be
 * w: read first). */
MXC__OPT2_HD void mxc__opt3_ftml(const mxc__opt3_plan *q, const float *w,
                                 const float *g, float *d, float *v, float *z,
                                 float *out, int add, int64_t i) {
  const mxc__opt_ext_param *p = &q->p;
  double wv = w[i];
  double r = mxc__opt_clip(p->rescale_grad * g[i] + p->wd * wv, p->clip_grad);
  double vn = p->beta2 * v[i] + (1 - p->beta2) * r * r;
  double dn = q->c1 / p->lr * (sqrt(vn / q->c2) + p->epsilon);
  double zn = p->beta1 * z[i] + (1 - p->beta1) * r - (dn - p->beta1 * d[i]) * wv;
  d[i] = (float)dn, v[i] = (float)vn, z[i] = (float)zn;
  mxc__opt3_store(out, i, -zn / dn, add);
}

/* LAMB phase 1, element i: mean and var updated, the normalized update
 * (with weight decay from w) into out (may be w: read first). */
MXC__OPT2_HD void mxc__opt3_lamb1(const mxc__opt3_plan *q, const float *w,
                                  const float *g, float *mean, float *var,
                                  float *out, int add, int64_t i) {
  const mxc__opt_ext_param *p = &q->p;
  double r = mxc__opt_clip(p->rescale_grad * g[i], p->clip_gradient);
  double m = p->beta1 * mean[i] + (1 - p->beta1) * r;
  double u = p->beta2 * var[i] + (1 - p->beta2) * r * r;
  mean[i] = (float)m, var[i] = (float)u;
  double up = (m / q->c1) / (sqrt(u / q->c2) + p->epsilon) + p->wd * w[i];
  mxc__opt3_store(out, i, up, add);
}

/* LAMB phase 2's learning rate from the norms r1 (clamped to the bounds
 * set) and r2: lr * r1 / r2, or lr when either is 0. */
MXC__OPT2_HD double mxc__opt3_lamb2_lr(const mxc__opt3_plan *q, double r1,
                                       double r2) {
  const mxc__opt_ext_param *p = &q->p;
  if (p->lower_bound >= 0) r1 = r1 > p->lower_bound ? r1 : p->lower_bound;
  if (p->upper_bound >= 0) r1 = r1 < p->upper_bound ? r1 : p->upper_bound;
  return r1 == 0 || r2 == 0 ? p->lr : p->lr * r1 / r2;
}

/* LAMB phase 2, element i: w - lr' * g into out (may be w). */
MXC__OPT2_HD void mxc__opt3_lamb2(const mxc__opt3_plan *q, const float *w,
                                  const float *g, const float *r1,
                                  const float *r2, float *out, int add,
                                  int64_t i) {
  double lr = mxc__opt3_lamb2_lr(q, r1[0], r2[0]);
  mxc__opt3_store(out, i, w[i] - lr * g[i], add);
}

#endif /* MXC_BACKENDS_CUDA_OPTIM_PLAN_H_ */
