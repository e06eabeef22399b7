/* The multi-precision and aggregated SGD updates (mp_sgd_update,
 * mp_sgd_mom_update, multi_sgd_update, multi_sgd_mom_update,
 * multi_mp_sgd_update, multi_mp_sgd_mom_update) as ops/random/
 * optimizer_mp.c computes them, and all_finite's per-element test: the
 * plan (which inputs of a call form weight w's group, its learning rate
 * and weight decay) and the per-element rule, shared by mp.cu and the
 * host test (tests/gpu:test_cuda_optim_plan), which runs them on host
 * arrays against the CPU operators; and mp_lamb_update_phase1/phase2
 * (ops/random/optimizer_ext.c) over optim_plan.h's LAMB plan.
 *
 * Per element, as the CPU: the master weight (weight32 in the mp forms,
 * the weight otherwise), the gradient and the momentum read as doubles,
 * the rule in double in the CPU's operation order, each state and the
 * output rounded once to its dtype (float16/bfloat16 through float32,
 * as mxc__opt_st), write mode ADD adding the output's old value in
 * double first (mxc__opt_st_req). -fmad=false on the device and IEEE
 * double on both sides: bitwise agreement expected.
 *
 * Plain C with no CUDA header; MXC__MP_HD functions run on both sides. */
#ifndef MXC_BACKENDS_CUDA_MP_PLAN_H_
#define MXC_BACKENDS_CUDA_MP_PLAN_H_

#include <stdint.h>

#include "backends/cuda/half_hd.h"
#include "backends/cuda/optim_plan.h"
#include "core/base/gpu_plugin.h"
#include "ops/random/optimizer_mp_params.h"

#ifdef __CUDACC__
#define MXC__MP_HD __host__ __device__ __forceinline__
#else
#define MXC__MP_HD static inline
#endif

/* The operators, in optimizer_mp.c's order. */
enum {
  MXC__MP_SGD,
  MXC__MP_SGD_MOM,
  MXC__MP_MULTI,
  MXC__MP_MULTI_MOM,
  MXC__MP_MULTI_MP,
  MXC__MP_MULTI_MP_MOM,
  MXC__MP_KINDS
};

MXC__MP_HD int mxc__mp_has_mom(int kind) {
  return kind == MXC__MP_SGD_MOM || kind == MXC__MP_MULTI_MOM ||
         kind == MXC__MP_MULTI_MP_MOM;
}
MXC__MP_HD int mxc__mp_has_w32(int kind) {
  return kind == MXC__MP_SGD || kind == MXC__MP_SGD_MOM ||
         kind == MXC__MP_MULTI_MP || kind == MXC__MP_MULTI_MP_MOM;
}
/* Inputs per weight (weight, grad[, mom][, weight32]). */
MXC__MP_HD int mxc__mp_stride(int kind) {
  return 2 + mxc__mp_has_mom(kind) + mxc__mp_has_w32(kind);
}

/* One weight's update: its arrays (mom, w32 NULL when absent) and
 * numbers; dt is the weight's (and grad's, and the output's) dtype, the
 * states are float32. */
typedef struct mxc__mp_step {
  const void *w, *g;
  float *mom, *w32;
  void *out;
  int64_t n;
  int dt, add;
  double lr, wd, momentum, rescale, clip;
} mxc__mp_step;

/* Element i of an array of dtype dt (float32, float16, bfloat16). */
MXC__MP_HD double mxc__mp_ld(const void *p, int dt, int64_t i) {
  if (dt == MXC_DTYPE_FLOAT32) return ((const float *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return dt == MXC_DTYPE_FLOAT16 ? mxc__hd_f16_to_f32(h)
                                 : mxc__hd_bf16_to_f32(h);
}

/* Stores v rounded to dt: to float first, as the CPU's mxc__opt_st. */
MXC__MP_HD void mxc__mp_st(void *p, int dt, int64_t i, double v) {
  float f = (float)v;
  if (dt == MXC_DTYPE_FLOAT32) {
    ((float *)p)[i] = f;
  } else {
    ((uint16_t *)p)[i] = dt == MXC_DTYPE_FLOAT16 ? mxc__hd_f32_to_f16(f)
                                                 : mxc__hd_f32_to_bf16(f);
  }
}

MXC__MP_HD double mxc__mp_clip(double x, double c) {
  if (c < 0) return x;
  return x > c ? c : x < -c ? -c : x;
}

/* Element i of step s: reads everything first (the output may be the
 * weight's memory), then stores mom, weight32 and the output, in the
 * CPU's order. */
MXC__MP_HD void mxc__mp_elem(const mxc__mp_step *s, int64_t i) {
  double x = s->w32 ? (double)s->w32[i] : mxc__mp_ld(s->w, s->dt, i);
  double r = mxc__mp_clip(s->rescale * mxc__mp_ld(s->g, s->dt, i), s->clip);
  double nw;
  if (s->mom) {
    double m = s->momentum * s->mom[i] - s->lr * s->wd * x - s->lr * r;
    s->mom[i] = (float)m;
    nw = x + m;
  } else {
    nw = (1 - s->lr * s->wd) * x - s->lr * r;
  }
  if (s->w32) s->w32[i] = (float)nw;
  if (s->add) nw += mxc__mp_ld(s->out, s->dt, i);
  mxc__mp_st(s->out, s->dt, i, nw);
}

/* The step of weight w of call c (the kernel's parameters p; req its
 * output's mode, not NULL). Host only. */
static inline mxc__mp_step mxc__mp_plan(int kind, const mxc__mp_param *p,
                                        const mxc__gpu_call *c, int w) {
  int st = mxc__mp_stride(kind);
  const mxc__gpu_array *grp = c->in + w * st;
  mxc__mp_step s;
  s.w = grp[0].ptr;
  s.g = grp[1].ptr;
  s.mom = mxc__mp_has_mom(kind) ? (float *)grp[2].ptr : NULL;
  s.w32 = mxc__mp_has_w32(kind) ? (float *)grp[st - 1].ptr : NULL;
  s.out = c->out[w].ptr;
  s.n = c->out[w].size;
  s.dt = c->out[w].dtype;
  s.add = c->req[w] == MXC__GPU_REQ_ADD;
  s.lr = p->lr_v[w];
  s.wd = p->wd_v[w];
  s.momentum = p->momentum;
  s.rescale = p->rescale_grad;
  s.clip = p->clip_gradient;
  return s;
}

/* 1 when dtype t (-1: not decided yet) is u or undecided. */
static inline int mxc__mp_dt_ok(int t, int u) { return t == -1 || t == u; }

/* 1 when the kernel takes these dtypes (-1: not decided yet): per group,
 * weight, grad and the output of one dtype among float32, float16 and
 * bfloat16, the states (mom, weight32) float32. Host only. */
static inline int mxc__mp_supports(int kind, const int *dt, int n_in,
                                   int n_out) {
  int st = mxc__mp_stride(kind);
  if (n_in != n_out * st) return 0;
  for (int w = 0; w < n_out; ++w) {
    const int *grp = dt + w * st;
    int t = dt[n_in + w] != -1 ? dt[n_in + w] : grp[0] != -1 ? grp[0] : grp[1];
    if (t != -1 && t != MXC_DTYPE_FLOAT32 && t != MXC_DTYPE_FLOAT16 &&
        t != MXC_DTYPE_BFLOAT16) {
      return 0;
    }
    /* multi_sgd_mom_update's mom has the weight's dtype: float32 only
     * (the step's states are float *). */
    if (kind == MXC__MP_MULTI_MOM && !mxc__mp_dt_ok(t, MXC_DTYPE_FLOAT32)) {
      return 0;
    }
    if (!mxc__mp_dt_ok(dt[n_in + w], t)) return 0;
    for (int k = 0; k < st; ++k) {
      if (!mxc__mp_dt_ok(grp[k], k >= 2 ? MXC_DTYPE_FLOAT32 : t)) return 0;
    }
  }
  return 1;
}

/* ---- mp_lamb_update_phase1 / phase2 ----
 *
 * Phase 1 (weight, grad, mean, var, weight32) -> g (float32): LAMB phase
 * 1 with the decay from weight32; the weight itself is not read. Phase 2
 * (weight, g, r1, r2, weight32) -> the new weight, weight32 - lr' * g
 * rounded to the weight's dtype (weight32 is not updated, as the CPU).
 * Rounding as optim_plan.h's LAMB (ADD adds the old value in double). */
typedef struct mxc__mp_lamb_step {
  mxc__opt3_plan q;
  const void *grad;         /* phase 1, of dtype dt */
  float *mean, *var;        /* phase 1 */
  const float *g, *r1, *r2; /* phase 2 */
  const float *w32;
  void *out; /* float32 (phase 1) or dt (phase 2) */
  int64_t n;
  int dt, add; /* dt: the weight's dtype */
} mxc__mp_lamb_step;

MXC__MP_HD void mxc__mp_lamb1(const mxc__mp_lamb_step *s, int64_t i) {
  const mxc__opt_ext_param *p = &s->q.p;
  double r = mxc__mp_clip(p->rescale_grad * mxc__mp_ld(s->grad, s->dt, i),
                          p->clip_gradient);
  double m = p->beta1 * s->mean[i] + (1 - p->beta1) * r;
  double u = p->beta2 * s->var[i] + (1 - p->beta2) * r * r;
  s->mean[i] = (float)m, s->var[i] = (float)u;
  double up =
      (m / s->q.c1) / (sqrt(u / s->q.c2) + p->epsilon) + p->wd * s->w32[i];
  mxc__opt3_store((float *)s->out, i, up, s->add);
}

MXC__MP_HD void mxc__mp_lamb2(const mxc__mp_lamb_step *s, int64_t i) {
  double lr = mxc__opt3_lamb2_lr(&s->q, s->r1[0], s->r2[0]);
  double nw = s->w32[i] - lr * s->g[i];
  if (s->add) nw += mxc__mp_ld(s->out, s->dt, i);
  mxc__mp_st(s->out, s->dt, i, nw);
}

/* The step of call c of phase 1 or 2 (parameters p, c->req[0] not NULL).
 * Host only. */
static inline mxc__mp_lamb_step mxc__mp_lamb_plan(int phase,
                                                  const mxc__opt_ext_param *p,
                                                  const mxc__gpu_call *c) {
  mxc__mp_lamb_step s;
  s.q = mxc__opt3_plan_make(phase == 1 ? MXC__OPT3_LAMB1 : MXC__OPT3_LAMB2, p);
  s.grad = c->in[1].ptr;
  s.mean = (float *)c->in[2].ptr, s.var = (float *)c->in[3].ptr;
  s.g = (const float *)c->in[1].ptr;
  s.r1 = (const float *)c->in[2].ptr, s.r2 = (const float *)c->in[3].ptr;
  s.w32 = (const float *)c->in[4].ptr;
  s.out = c->out[0].ptr;
  s.n = c->out[0].size;
  s.dt = c->in[0].dtype;
  s.add = c->req[0] == MXC__GPU_REQ_ADD;
  return s;
}

/* 1 when the kernel takes these dtypes (-1: not decided): the weight
 * (and phase 1's grad, phase 2's output) float32, float16 or bfloat16,
 * the rest float32. Host only. */
static inline int mxc__mp_lamb_supports(int phase, const int *dt, int n_in,
                                        int n_out) {
  if (n_in != 5 || n_out != 1) return 0;
  const int f32 = MXC_DTYPE_FLOAT32;
  int t = dt[0] != -1 ? dt[0] : phase == 1 ? dt[1] : dt[5];
  if (t != -1 && t != f32 && t != MXC_DTYPE_FLOAT16 &&
      t != MXC_DTYPE_BFLOAT16) {
    return 0;
  }
  int ok = mxc__mp_dt_ok(dt[0], t) && mxc__mp_dt_ok(dt[2], f32) &&
           mxc__mp_dt_ok(dt[3], f32) && mxc__mp_dt_ok(dt[4], f32);
  if (phase == 1) {
    return ok && mxc__mp_dt_ok(dt[1], t) && mxc__mp_dt_ok(dt[5], f32);
  }
  return ok && mxc__mp_dt_ok(dt[1], f32) && mxc__mp_dt_ok(dt[5], t);
}

/* all_finite: 1 when element i of an array of dtype dt is finite
 * (integers always are). */
MXC__MP_HD int mxc__mp_finite(const void *p, int dt, int64_t i) {
  double v;
  if (dt == MXC_DTYPE_FLOAT64) {
    v = ((const double *)p)[i];
  } else if (dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_FLOAT16 ||
             dt == MXC_DTYPE_BFLOAT16) {
    v = mxc__mp_ld(p, dt, i);
  } else {
    return 1;
  }
  return v - v == 0; /* inf - inf and NaN - NaN are NaN */
}

#endif /* MXC_BACKENDS_CUDA_MP_PLAN_H_ */
