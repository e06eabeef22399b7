/* Optimizer updates: sgd_update, sgd_mom_update, nag_mom_update,
 * adam_update, rmsprop_update, rmspropalex_update, adagrad_update,
 * ftrl_update, signsgd_update, signum_update, following MXNet's published
 * update rules.
 *
 * Inputs are (weight, grad, states...). The output is the new weight; the
 * caller normally passes the weight array itself as the output, which
 * makes the update in place (declared as an in-place pair). States are
 * updated in place (mutate_inputs). Every rule is element-wise, so each
 * element's weight and states are read before its output is written and
 * aliasing weight and output is safe.
 *
 * Each rule is one step function on doubles (float32 arrays compute in
 * double and round once); OPT_LOOPS makes the typed loops around it.
 * sgd_update and sgd_mom_update, the updates training runs on every
 * step, have float32 loops computing in float instead (see FAST_F32):
 * within a few ulps of the double rule and vectorizable. Large arrays are
 * split across the kernel pool (core/op/parallel.h). In
 * the steps, "rescaled" means clip(rescale_grad * grad) with clipping to
 * [-clip_gradient, clip_gradient] when clip_gradient >= 0. */
#include <math.h>
#include <stddef.h>

#include "core/base/dtype.h"
#include "core/op/common.h"
#include "core/op/parallel.h"
#include "core/op/registry.h"
#include "ops/random/internal.h"
#include "ops/random/optimizer_params.h"

/* The struct is in its own header: the GPU plug-in reads it too. */
typedef mxc__opt_param opt_param;

/* Clipping as MXNet does it: NaN passes through (fmin/fmax would drop
 * it and hide a diverged gradient). */
static inline double clip(double x, double c) {
  if (c < 0) return x;
  return x > c ? c : x < -c ? -c : x;
}

static inline double sgn(double x) { return (x > 0) - (x < 0); }

static inline double rescaled(const opt_param *p, double g) {
  return clip(p->rescale_grad * g, p->clip_gradient);
}

/* ---- update rules: state s[] in/out, returns the new weight ---- */

/* w = (1 - lr*wd) * w - lr * rescaled */
static inline double sgd_step(const opt_param *p, double w, double g,
                              double *s) {
  (void)s;
  return (1 - p->lr * p->wd) * w - p->lr * rescaled(p, g);
}

/* mom = momentum*mom - lr*wd*w - lr*rescaled; w += mom */
static inline double sgd_mom_step(const opt_param *p, double w, double g,
                                  double *s) {
  s[0] = p->momentum * s[0] - p->lr * p->wd * w - p->lr * rescaled(p, g);
  return w + s[0];
}

/* Nesterov as MXNet 1.9's nag_mom_update: the momentum holds the step
 * (lr inside, as sgd_mom_update), r = rescaled + wd*w;
 * mom = momentum*mom - lr*r; w += momentum*mom - lr*r. (MXNet 2.0 moved
 * lr out of the momentum: mom = momentum*mom + r; w -= lr*(r +
 * momentum*mom); a saved momentum state means a different thing there.) */
static inline double nag_mom_step(const opt_param *p, double w, double g,
                                  double *s) {
  double step = p->lr * (rescaled(p, g) + p->wd * w);
  s[0] = p->momentum * s[0] - step;
  return w + p->momentum * s[0] - step;
}

/* As MXNet: weight decay joins the gradient before clipping, and there is
 * no bias correction (callers fold it into lr). */
static inline double adam_step(const opt_param *p, double w, double g,
                               double *s) {
  double r = clip(p->rescale_grad * g + p->wd * w, p->clip_gradient);
  s[0] = p->beta1 * s[0] + (1 - p->beta1) * r;
  s[1] = p->beta2 * s[1] + (1 - p->beta2) * r * r;
  return w - p->lr * s[0] / (sqrt(s[1]) + p->epsilon);
}

/* Tieleman and Hinton: n = (1-g1) r^2 + g1 n; w -= lr r / sqrt(n + eps) */
static inline double rmsprop_step(const opt_param *p, double w, double g,
                                  double *s) {
  double r = clip(p->rescale_grad * g + p->wd * w, p->clip_gradient);
  s[0] = (1 - p->gamma1) * r * r + p->gamma1 * s[0];
  return clip(w - p->lr * r / sqrt(s[0] + p->epsilon), p->clip_weights);
}

/* Graves' centred variant: states n, g, delta. */
static inline double rmspropalex_step(const opt_param *p, double w, double g,
                                      double *s) {
  double r = clip(p->rescale_grad * g + p->wd * w, p->clip_gradient);
  s[0] = (1 - p->gamma1) * r * r + p->gamma1 * s[0];
  s[1] = (1 - p->gamma1) * r + p->gamma1 * s[1];
  s[2] = p->gamma2 * s[2] - p->lr * r / sqrt(s[0] - s[1] * s[1] + p->epsilon);
  return clip(w + s[2], p->clip_weights);
}

/* history += r^2; w -= lr * (r / sqrt(history + eps) + wd*w) */
static inline double adagrad_step(const opt_param *p, double w, double g,
                                  double *s) {
  double r = rescaled(p, g);
  s[0] += r * r;
  return w - p->lr * (r / sqrt(s[0] + p->epsilon) + p->wd * w);
}

/* FTRL-proximal (McMahan et al. 2013), states z and n. */
static inline double ftrl_step(const opt_param *p, double w, double g,
                               double *s) {
  double r = rescaled(p, g);
  s[0] += r - (sqrt(s[1] + r * r) - sqrt(s[1])) * w / p->lr;
  s[1] += r * r;
  if (!(fabs(s[0]) > p->lamda1)) return 0;
  return (sgn(s[0]) * p->lamda1 - s[0]) /
         ((p->beta + sqrt(s[1])) / p->lr + p->wd);
}

/* w = (1 - lr*wd) * w - lr * sign(grad). Rescaling and clipping cannot
 * change a sign for rescale_grad > 0; the sign is taken of rescale*grad
 * so a negative rescale still means what it says. */
static inline double signsgd_step(const opt_param *p, double w, double g,
                                  double *s) {
  (void)s;
  return (1 - p->lr * p->wd) * w - p->lr * sgn(p->rescale_grad * g);
}

/* mom = momentum*mom - (1-momentum)*(wd*w + rescaled);
 * w = (1 - lr*wd_lh) * w + lr * sign(mom) */
static inline double signum_step(const opt_param *p, double w, double g,
                                 double *s) {
  s[0] = p->momentum * s[0] - (1 - p->momentum) * p->wd * w -
         (1 - p->momentum) * rescaled(p, g);
  return (1 - p->lr * p->wd_lh) * w + p->lr * sgn(s[0]);
}

/* ---- typed loops ---- */

typedef struct opt_args {
  const opt_param *p;
  int64_t n;
  const void *w, *g;
  void *s[3];
  void *out;
  mxc__req req;
} opt_args;

/* Loads an element's weight, grad and NS states, applies step, stores
 * the states and writes the new weight with the requested mode. */
#define OPT_LOOP(T, step, NS)                          \
  do {                                                 \
    const T *w_ = a->w, *g_ = a->g;                    \
    T *o_ = a->out;                                    \
    T *s_[3] = {a->s[0], a->s[1], a->s[2]};            \
    for (int64_t i = 0; i < a->n; ++i) {               \
      double s[3] = {0, 0, 0};                         \
      for (int k = 0; k < NS; ++k) s[k] = s_[k][i];    \
      double nw = step(a->p, w_[i], g_[i], s);         \
      for (int k = 0; k < NS; ++k) s_[k][i] = (T)s[k]; \
      MXC__ASSIGN(a->req, o_[i], (T)nw);               \
    }                                                  \
  } while (0)

#define OPT_LOOPS(name, NS)                   \
  static void name##_f32(const opt_args *a) { \
    OPT_LOOP(float, name##_step, NS);         \
  }                                           \
  static void name##_f64(const opt_args *a) { \
    OPT_LOOP(double, name##_step, NS);        \
  }

OPT_LOOPS(sgd, 0)
OPT_LOOPS(sgd_mom, 1)

/* float32 sgd / sgd_mom in float, for the common case (req WRITE, no
 * clipping; anything else takes the double loops above). The work goes in
 * blocks of a constant FAST_BLOCK elements so that GCC's default -O2 cost
 * model, which only vectorizes loops of a known trip count, vectorizes
 * them; ivdep states what the compiler cannot prove: the arrays either do
 * not overlap or alias exactly (output == weight, the in-place update),
 * and either way element i is read before it is written. */
enum { FAST_BLOCK = 64 };

static inline void sgd_f32_run(float keep, float lrs, const float *w,
                               const float *g, float *o, int64_t len) {
  MXC__IVDEP
  for (int64_t i = 0; i < len; ++i) o[i] = keep * w[i] - lrs * g[i];
}

static inline void sgd_mom_f32_run(float mom, float lrwd, float lrs,
                                   const float *w, const float *g, float *s,
                                   float *o, int64_t len) {
  MXC__IVDEP
  for (int64_t i = 0; i < len; ++i) {
    float m = mom * s[i] - lrwd * w[i] - lrs * g[i];
    s[i] = m;
    o[i] = w[i] + m;
  }
}

static int fast_f32(const opt_args *a) {
  return a->req == MXC__REQ_WRITE && a->p->clip_gradient < 0;
}

static void sgd_fast_f32(const opt_args *a) {
  if (!fast_f32(a)) {
    sgd_f32(a);
    return;
  }
  const opt_param *p = a->p;
  float keep = (float)(1 - p->lr * p->wd),
        lrs = (float)(p->lr * p->rescale_grad);
  const float *w = a->w, *g = a->g;
  float *o = a->out;
  int64_t i = 0;
  for (; i + FAST_BLOCK <= a->n; i += FAST_BLOCK) {
    sgd_f32_run(keep, lrs, w + i, g + i, o + i, FAST_BLOCK);
  }
  sgd_f32_run(keep, lrs, w + i, g + i, o + i, a->n - i);
}

static void sgd_mom_fast_f32(const opt_args *a) {
  if (!fast_f32(a)) {
    sgd_mom_f32(a);
    return;
  }
  const opt_param *p = a->p;
  float mom = (float)p->momentum, lrwd = (float)(p->lr * p->wd);
  float lrs = (float)(p->lr * p->rescale_grad);
  const float *w = a->w, *g = a->g;
  float *s = a->s[0], *o = a->out;
  int64_t i = 0;
  for (; i + FAST_BLOCK <= a->n; i += FAST_BLOCK) {
    sgd_mom_f32_run(mom, lrwd, lrs, w + i, g + i, s + i, o + i, FAST_BLOCK);
  }
  sgd_mom_f32_run(mom, lrwd, lrs, w + i, g + i, s + i, o + i, a->n - i);
}
OPT_LOOPS(nag_mom, 1)
OPT_LOOPS(adam, 2)
OPT_LOOPS(rmsprop, 1)
OPT_LOOPS(rmspropalex, 3)
OPT_LOOPS(adagrad, 1)
OPT_LOOPS(ftrl, 2)
OPT_LOOPS(signsgd, 0)
OPT_LOOPS(signum, 1)

typedef struct opt_impl {
  void (*f32)(const opt_args *);
  void (*f64)(const opt_args *);
} opt_impl;

#define IMPL(name) \
  { name##_f32, name##_f64 }
enum { N_OPT = 10 };
static const opt_impl k_impl[N_OPT] = {
    {sgd_fast_f32, sgd_f64}, {sgd_mom_fast_f32, sgd_mom_f64},
    IMPL(nag_mom),           IMPL(adam),
    IMPL(rmsprop),           IMPL(rmspropalex),
    IMPL(adagrad),           IMPL(ftrl),
    IMPL(signsgd),           IMPL(signum),
};

static const mxc__op k_ops[N_OPT];

/* Elements per part of a split update: each part streams several arrays,
 * so below a few hundred KiB the hand-off costs more than it saves. */
enum { OPT_GRAIN = 1 << 16 };

typedef struct opt_split {
  const opt_args *a;
  void (*loop)(const opt_args *);
  size_t es;
} opt_split;

/* Runs the loop over elements [lo, hi): every array shifted by lo. */
static int opt_part(void *arg, int64_t lo, int64_t hi) {
  const opt_split *sp = arg;
  const opt_args *a = sp->a;
  size_t off = (size_t)lo * sp->es;
  opt_args part = *a;
  part.n = hi - lo;
  part.w = (const char *)a->w + off;
  part.g = (const char *)a->g + off;
  part.out = (char *)a->out + off;
  for (int k = 0; k < 3; ++k) {
    if (a->s[k]) part.s[k] = (char *)a->s[k] + off;
  }
  sp->loop(&part);
  return MXC_OK;
}

static int opt_compute(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_out;
  const opt_impl *impl = &k_impl[op - k_ops];
  opt_args a = {param,
                mxc__shape_size(&in[0].shape),
                in[0].ptr,
                in[1].ptr,
                {NULL, NULL, NULL},
                out[0].ptr,
                req[0]};
  for (int k = 2; k < n_in; ++k) a.s[k - 2] = in[k].ptr;
  /* REQ_NULL skips the whole update, states included: nothing asked for
   * the new weight, and half an update would be worse than none. */
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  opt_split sp = {&a, in[0].dtype == MXC_DTYPE_FLOAT32 ? impl->f32 : impl->f64,
                  mxc__dtype_size(in[0].dtype)};
  /* Parts never fail, so neither does the loop. */
  (void)mxc__parallel_for(a.n, OPT_GRAIN, mxc__parallel_threads(), opt_part,
                          &sp);
  return MXC_OK;
}

/* ---- parameters ---- */

static int opt_check(const char *op_name, void *param) {
  const opt_param *p = param;
  MXC_RETURN_ERROR_IF(!isfinite(p->lr), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lr' = %g; expected a finite "
                      "learning rate",
                      op_name, p->lr);
  return MXC_OK;
}

/* FTRL divides by lr. */
static int ftrl_check(const char *op_name, void *param) {
  MXC_FORWARD_IF_ERROR(opt_check(op_name, param));
  const opt_param *p = param;
  MXC_RETURN_ERROR_IF(!(p->lr > 0), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lr' = %g; expected lr > 0",
                      op_name, p->lr);
  return MXC_OK;
}

#define F(field, def, doc) MXC__PARAM(opt_param, field, MXC__P_FLOAT, def, doc)
#define COMMON_DEFS                                                        \
  F(lr, NULL, "Learning rate."),                                           \
      F(wd, "0", "Weight decay (L2 penalty coefficient)."),                \
      F(rescale_grad, "1", "Factor the gradient is multiplied by first."), \
      F(clip_gradient, "-1",                                               \
        "Clip gradients to [-clip_gradient, clip_gradient]; negative: "    \
        "no clipping.")
#define LAZY_DEF                                          \
  MXC__PARAM(opt_param, lazy_update, MXC__P_BOOL, "true", \
             "Lazy update for row-sparse gradients; dense arrays ignore it.")
#define CLIP_WEIGHTS_DEF \
  F(clip_weights, "-1",  \
    "Clip weights to [-clip_weights, clip_weights]; negative: no clipping.")

static const mxc__param_def k_sgd_params[] = {COMMON_DEFS, LAZY_DEF};
static const mxc__param_def k_sgd_mom_params[] = {
    COMMON_DEFS, F(momentum, "0", "Momentum."), LAZY_DEF};
static const mxc__param_def k_nag_mom_params[] = {
    COMMON_DEFS, F(momentum, "0", "Momentum.")};
static const mxc__param_def k_adam_params[] = {
    COMMON_DEFS, F(beta1, "0.9", "Decay of the first moment estimate."),
    F(beta2, "0.999", "Decay of the second moment estimate."),
    F(epsilon, "1e-8", "Added to the denominator for stability."), LAZY_DEF};
static const mxc__param_def k_rmsprop_params[] = {
    COMMON_DEFS, F(gamma1, "0.95", "Decay of the squared-gradient average."),
    F(epsilon, "1e-8", "Added under the square root."), CLIP_WEIGHTS_DEF};
static const mxc__param_def k_rmspropalex_params[] = {
    COMMON_DEFS, F(gamma1, "0.95", "Decay of the gradient averages."),
    F(gamma2, "0.9", "Momentum of the update."),
    F(epsilon, "1e-8", "Added under the square root."), CLIP_WEIGHTS_DEF};
static const mxc__param_def k_adagrad_params[] = {
    COMMON_DEFS, F(epsilon, "1e-7", "Added under the square root.")};
static const mxc__param_def k_ftrl_params[] = {
    COMMON_DEFS, F(lamda1, "0.01", "L1 regularization coefficient."),
    F(beta, "1", "Per-coordinate learning rate offset.")};
static const mxc__param_def k_signsgd_params[] = {COMMON_DEFS};
static const mxc__param_def k_signum_params[] = {
    COMMON_DEFS, F(momentum, "0.9", "Momentum."),
    F(wd_lh, "0", "Decoupled weight decay (Loshchilov and Hutter).")};

/* ---- inference ---- */

/* Grad and every state have the weight's shape; unknown ones are filled
 * from whichever is known (graphs bind states from the weight). */
static int opt_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  int ref = -1;
  for (int i = 0; i < n_in && ref < 0; ++i) {
    if (in[i].ndim >= 0) ref = i;
  }
  mxc__shape s;
  if (ref >= 0) {
    s = in[ref];
  } else if (out[0].ndim >= 0) {
    s = out[0];
  } else {
    return MXC_OK;
  }
  char b1[160], b2[160];
  for (int i = 0; i < n_in; ++i) {
    MXC_RETURN_ERROR_IF(
        in[i].ndim >= 0 && !mxc__shape_equal(&in[i], &s), MXC_ERR_SHAPE,
        "operator '%s': input %d ('%s') has shape %s but "
        "input %d ('%s') has shape %s; grad and states must "
        "have the weight's shape",
        op->name, i, mxc__op_input_name(op, param, i),
        mxc__shape_str(&in[i], b1, sizeof b1), ref,
        mxc__op_input_name(op, param, ref), mxc__shape_str(&s, b2, sizeof b2));
    in[i] = s;
  }
  MXC_RETURN_ERROR_IF(out[0].ndim >= 0 && !mxc__shape_equal(&out[0], &s),
                      MXC_ERR_SHAPE,
                      "operator '%s': output 0 has shape %s; expected the "
                      "weight's shape %s",
                      op->name, mxc__shape_str(&out[0], b1, sizeof b1),
                      mxc__shape_str(&s, b2, sizeof b2));
  out[0] = s;
  return MXC_OK;
}

static int opt_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = in[0] >= 0 ? in[0] : out[0];
  if (t >= 0 && t != MXC_DTYPE_FLOAT32 && t != MXC_DTYPE_FLOAT64) {
    return mxc__unsupported_dtype(op->name, t,
                                  "optimizer updates take float32 or "
                                  "float64 arrays");
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in_sgd[] = {"weight", "grad", NULL};
static const char *const k_in_mom[] = {"weight", "grad", "mom", NULL};
static const char *const k_in_adam[] = {"weight", "grad", "mean", "var", NULL};
static const char *const k_in_rmsprop[] = {"weight", "grad", "n", NULL};
static const char *const k_in_rmspropalex[] = {"weight", "grad",  "n",
                                               "g",      "delta", NULL};
static const char *const k_in_adagrad[] = {"weight", "grad", "history", NULL};
static const char *const k_in_ftrl[] = {"weight", "grad", "z", "n", NULL};
static const char *const k_out_names[] = {"weight", NULL};
static const int k_inplace[][2] = {{0, 0}};

/* Inputs 2.. are states, updated in place. */
#define STATE_BITS(n_in) ((uint32_t)((1u << (n_in)) - 4u))

#define OPT_DESC(nm, n_in_, names, defs, check, doc_) \
  OPT_DESC_ALIASED(nm, NULL, n_in_, names, defs, check, doc_)
#define OPT_DESC_ALIASED(nm, al, n_in_, names, defs, check, doc_)            \
  {                                                                           \
    .name = nm, .aliases = al, .doc = doc_, MXC__PARAMS_OF(opt_param, defs),  \
    .param_check = check, .n_inputs = n_in_,                                  \
    .input_names = names, .n_outputs = 1, .output_names = k_out_names,        \
    .infer_shape = opt_shape, .infer_type = opt_type, .compute = opt_compute, \
    .gradient = mxc__grad_none, MXC__INPLACE(k_inplace),                      \
    .mutate_inputs = STATE_BITS(n_in_),                                       \
  }

/* MXNet 1.9 registers AdaGrad as _sparse_adagrad_update (row_sparse
 * gradients: lazy, ops/sparse/optim.c); dense gradients update every row. */
static const char *const k_adagrad_aliases[] = {"_sparse_adagrad_update",
                                                NULL};

/* Same order as k_impl. */
static const mxc__op k_ops[N_OPT] = {
    OPT_DESC("sgd_update", 2, k_in_sgd, k_sgd_params, opt_check,
             "SGD: weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)."),
    OPT_DESC("sgd_mom_update", 3, k_in_mom, k_sgd_mom_params, opt_check,
             "SGD with momentum: mom = momentum*mom - lr*(clip(rescale_grad*"
             "grad) + wd*weight); weight += mom."),
    OPT_DESC("nag_mom_update", 3, k_in_mom, k_nag_mom_params, opt_check,
             "Nesterov momentum (MXNet 1.9): g = clip(rescale_grad*grad) + "
             "wd*weight; mom = momentum*mom - lr*g; "
             "weight += momentum*mom - lr*g."),
    OPT_DESC("adam_update", 4, k_in_adam, k_adam_params, opt_check,
             "Adam without bias correction: g = clip(rescale_grad*grad + "
             "wd*weight); mean, var = moving averages of g, g^2; weight -= "
             "lr*mean/(sqrt(var) + epsilon)."),
    OPT_DESC("rmsprop_update", 3, k_in_rmsprop, k_rmsprop_params, opt_check,
             "RMSProp: n = (1-gamma1)*g^2 + gamma1*n; weight -= "
             "lr*g/sqrt(n + epsilon), g = clip(rescale_grad*grad + "
             "wd*weight)."),
    OPT_DESC("rmspropalex_update", 5, k_in_rmspropalex, k_rmspropalex_params,
             opt_check,
             "Centred RMSProp (Graves 2013) with states n, g, delta: delta = "
             "gamma2*delta - lr*g/sqrt(n - g_avg^2 + epsilon); weight += "
             "delta."),
    OPT_DESC_ALIASED("adagrad_update", k_adagrad_aliases, 3, k_in_adagrad,
                     k_adagrad_params, opt_check,
             "AdaGrad: history += g^2; weight -= lr*(g/sqrt(history + "
             "epsilon) + wd*weight), g = clip(rescale_grad*grad)."),
    OPT_DESC("ftrl_update", 4, k_in_ftrl, k_ftrl_params, ftrl_check,
             "FTRL-proximal with states z, n; weight = (sign(z)*lamda1 - z) "
             "/ ((beta + sqrt(n))/lr + wd) where |z| > lamda1, else 0."),
    OPT_DESC("signsgd_update", 2, k_in_sgd, k_signsgd_params, opt_check,
             "signSGD: weight = (1 - lr*wd)*weight - lr*sign(grad)."),
    OPT_DESC("signum_update", 3, k_in_mom, k_signum_params, opt_check,
             "Signum: mom = momentum*mom - (1-momentum)*(wd*weight + "
             "clip(rescale_grad*grad)); weight = (1 - lr*wd_lh)*weight + "
             "lr*sign(mom)."),
};

int mxc__random_register_optimizer(mxc__registry *r) {
  for (int i = 0; i < N_OPT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
