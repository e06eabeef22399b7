/* MXNet 1.9's FTML and LAMB updates, following its published update rules
 * and parameter names, and the helpers of optimizer_util.h.
 *
 * ftml_update (weight, grad, d, v, z), Zheng and Kwok 2017, states in
 * place; with g = clip(rescale_grad * grad + wd * weight, clip_grad):
 *     v = beta2 v + (1 - beta2) g^2
 *     d' = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
 *     z = beta1 z + (1 - beta1) g - (d' - beta1 d) weight;  d = d'
 *     weight = -z / d
 * lamb_update_phase1 (weight, grad, mean, var) -> g, You et al. 2019, with
 * r = clip(rescale_grad * grad, clip_gradient):
 *     mean = beta1 mean + (1 - beta1) r;  var = beta2 var + (1 - beta2) r^2
 *     g = m / (sqrt(u) + epsilon) + wd weight
 * where (m, u) = (mean / (1 - beta1^t), var / (1 - beta2^t)) with
 * bias_correction, (mean, var) without. lamb_update_phase2 (weight, g, r1,
 * r2), r1 and r2 of shape (1,) (the norms of weight and g, computed by the
 * caller): r1 clamped to [lower_bound, upper_bound] (each bound only when
 * >= 0), then weight -= lr * (r1 / r2) * g, or lr * g when r1 or r2 is 0.
 * mp_lamb_update_phase1/2 take a float32 master weight32 last: phase 1
 * decays with weight32 and gives a float32 g, phase 2 writes weight32 -
 * lr' g rounded to the weight's dtype (weight32 itself is not updated,
 * as in MXNet). Arithmetic is in double. */
#include <math.h>
#include <string.h>

#include "core/op/registry.h"
#include "ops/random/optimizer_ext_params.h"
#include "ops/random/optimizer_util.h"

/* ---- helpers (optimizer_util.h) ---- */

int mxc__opt_float_type(const char *op_name, int dt) {
  if (dt < 0 || mxc__dtype_is_float(dt)) return MXC_OK;
  return mxc__unsupported_dtype(op_name, dt,
                                "optimizer updates take float32, float64, "
                                "float16 or bfloat16 arrays");
}

int mxc__opt_assign_type(const mxc__op *op, const void *param, int *slot,
                         int want, int index) {
  if (*slot < 0) *slot = want;
  MXC_RETURN_ERROR_IF(*slot != want, MXC_ERR_DTYPE,
                      "operator '%s': %s%s%s is %s; expected %s", op->name,
                      index < 0 ? "the output" : "input '",
                      index < 0 ? "" : mxc__op_input_name(op, param, index),
                      index < 0 ? "" : "'", mxc__dtype_name(*slot),
                      mxc__dtype_name(want));
  return MXC_OK;
}

int mxc__opt_same_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n, int first, mxc__shape *out) {
  const mxc__shape *ref = out->ndim >= 0 ? out : NULL;
  for (int k = 0; k < n && !ref; ++k) ref = in[k].ndim >= 0 ? &in[k] : NULL;
  if (!ref) return MXC_OK;
  mxc__shape s = *ref;
  char b1[160], b2[160];
  for (int k = 0; k < n; ++k) {
    MXC_RETURN_ERROR_IF(
        in[k].ndim >= 0 && !mxc__shape_equal(&in[k], &s), MXC_ERR_SHAPE,
        "operator '%s': input %d ('%s') has shape %s; expected the weight's "
        "shape %s",
        op->name, first + k, mxc__op_input_name(op, param, first + k),
        mxc__shape_str(&in[k], b1, sizeof b1), mxc__shape_str(&s, b2, sizeof b2));
    in[k] = s;
  }
  MXC_RETURN_ERROR_IF(out->ndim >= 0 && !mxc__shape_equal(out, &s),
                      MXC_ERR_SHAPE,
                      "operator '%s': output has shape %s; expected %s",
                      op->name, mxc__shape_str(out, b1, sizeof b1),
                      mxc__shape_str(&s, b2, sizeof b2));
  *out = s;
  return MXC_OK;
}

/* ---- parameters ---- */

/* The struct is in its own header: the GPU plug-in reads it too. */
typedef mxc__opt_ext_param ext_param;

#define F(field, def, doc) \
  MXC__PARAM(ext_param, field, MXC__P_FLOAT, def, doc)
#define T_DEF                                                  \
  MXC__PARAM_RANGE(ext_param, t, MXC__P_INT, NULL, 1, 9.0e18,  \
                   "Number of the update, from 1 (bias corrections " \
                   "use beta^t).")

static const mxc__param_def k_ftml_params[] = {
    F(lr, NULL, "Learning rate (> 0)."),
    F(beta1, "0.6", "Decay of the z state; generally close to 0.5."),
    F(beta2, "0.999", "Decay of the squared-gradient average v."),
    F(epsilon, "1e-8", "Added to the denominator for stability."),
    T_DEF,
    F(wd, "0", "Weight decay, added to the gradient before clipping."),
    F(rescale_grad, "1", "Factor the gradient is multiplied by first."),
    F(clip_grad, "-1",
      "Clip the gradient to [-clip_grad, clip_grad]; negative: no "
      "clipping."),
};

static const mxc__param_def k_lamb1_params[] = {
    F(beta1, "0.9", "Decay of the first moment estimate."),
    F(beta2, "0.999", "Decay of the second moment estimate."),
    F(epsilon, "1e-6", "Added to the denominator for stability."),
    T_DEF,
    MXC__PARAM(ext_param, bias_correction, MXC__P_BOOL, "true",
               "Divide the moments by 1 - beta^t."),
    F(wd, NULL, "Weight decay, added to the normalized update."),
    F(rescale_grad, "1", "Factor the gradient is multiplied by first."),
    F(clip_gradient, "-1",
      "Clip the rescaled gradient to [-clip_gradient, clip_gradient]; "
      "negative: no clipping."),
};

static const mxc__param_def k_lamb2_params[] = {
    F(lr, NULL, "Learning rate."),
    F(lower_bound, "-1",
      "Lower limit of the weight norm r1; negative: no limit."),
    F(upper_bound, "-1",
      "Upper limit of the weight norm r1; negative: no limit."),
};
#undef F

static int ftml_check(const char *op_name, void *param) {
  const ext_param *p = param;
  MXC_RETURN_ERROR_IF(!(p->lr > 0) || !isfinite(p->lr),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lr' = %g; expected a finite "
                      "lr > 0 (FTML divides by it)",
                      op_name, p->lr);
  return MXC_OK;
}

static int lamb2_check(const char *op_name, void *param) {
  const ext_param *p = param;
  MXC_RETURN_ERROR_IF(!isfinite(p->lr), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lr' = %g; expected a finite "
                      "learning rate",
                      op_name, p->lr);
  return MXC_OK;
}

/* ---- inference: one letter per input, then the output ----
 * types: 'W' the weight's dtype, 'F' float32; shapes: 'W' the weight's
 * shape, '1' shape (1,). */
typedef struct ext_spec {
  const char *types;
  const char *shapes;
} ext_spec;

enum { E_FTML, E_LAMB1, E_LAMB2, E_MP_LAMB1, E_MP_LAMB2, E_COUNT };

static const ext_spec k_specs[E_COUNT] = {
    [E_FTML] = {"WWWWWW", "WWWWW"},
    [E_LAMB1] = {"WWWWW", "WWWW"},
    [E_LAMB2] = {"WWWWW", "WW11"},
    [E_MP_LAMB1] = {"WWFFFF", "WWWWW"},
    [E_MP_LAMB2] = {"WFFFFW", "WW11W"},
};

static const mxc__op k_ops[E_COUNT];

static const ext_spec *spec_of(const mxc__op *op) {
  return &k_specs[op - k_ops];
}

static int ext_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const ext_spec *sp = spec_of(op);
  mxc__shape one = {1, {1}};
  (void)n_out;
  for (int i = 0; i < n_in; ++i) {
    if (sp->shapes[i] != '1') continue;
    char b[160];
    MXC_RETURN_ERROR_IF(in[i].ndim >= 0 && !mxc__shape_equal(&in[i], &one),
                        MXC_ERR_SHAPE,
                        "operator '%s': input %d ('%s') has shape %s; "
                        "expected (1,)",
                        op->name, i, mxc__op_input_name(op, param, i),
                        mxc__shape_str(&in[i], b, sizeof b));
    in[i] = one;
  }
  /* The weight-shaped inputs are 0, 1 and those marked 'W' after. */
  mxc__shape tmp[8];
  int idx[8], n = 0;
  for (int i = 0; i < n_in; ++i) {
    if (sp->shapes[i] == 'W') {
      idx[n] = i;
      tmp[n++] = in[i];
    }
  }
  MXC_FORWARD_IF_ERROR(mxc__opt_same_shape(op, param, tmp, n, 0, &out[0]));
  for (int k = 0; k < n; ++k) in[idx[k]] = tmp[k];
  return MXC_OK;
}

static int ext_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  const ext_spec *sp = spec_of(op);
  (void)n_out;
  int w = -1;
  for (int i = 0; i <= n_in; ++i) {
    int t = i < n_in ? in[i] : out[0];
    if (sp->types[i] == 'W' && t >= 0) w = t;
  }
  if (w < 0) return MXC_OK;
  MXC_FORWARD_IF_ERROR(mxc__opt_float_type(op->name, w));
  for (int i = 0; i < n_in; ++i) {
    int want = sp->types[i] == 'W' ? w : MXC_DTYPE_FLOAT32;
    MXC_FORWARD_IF_ERROR(mxc__opt_assign_type(op, param, &in[i], want, i));
  }
  int want = sp->types[n_in] == 'W' ? w : MXC_DTYPE_FLOAT32;
  return mxc__opt_assign_type(op, param, &out[0], want, -1);
}

/* ---- compute ---- */

static inline double clip_to(double x, double c) {
  if (c < 0) return x;
  return x > c ? c : x < -c ? -c : x;
}

static void ftml_run(const ext_param *p, const mxc__blob *in,
                     const mxc__blob *out, mxc__req req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  double c1 = 1 - pow(p->beta1, (double)p->t);
  double c2 = 1 - pow(p->beta2, (double)p->t);
  for (int64_t i = 0; i < n; ++i) {
    double w = mxc__opt_ld(&in[0], i);
    double g = clip_to(p->rescale_grad * mxc__opt_ld(&in[1], i) + p->wd * w,
                       p->clip_grad);
    double v = p->beta2 * mxc__opt_ld(&in[3], i) + (1 - p->beta2) * g * g;
    double d = c1 / p->lr * (sqrt(v / c2) + p->epsilon);
    double z = p->beta1 * mxc__opt_ld(&in[4], i) + (1 - p->beta1) * g -
               (d - p->beta1 * mxc__opt_ld(&in[2], i)) * w;
    mxc__opt_st(&in[2], i, d);
    mxc__opt_st(&in[3], i, v);
    mxc__opt_st(&in[4], i, z);
    mxc__opt_st_req(&out[0], i, -z / d, req);
  }
}

/* Phase 1; `decay` is the weight the decay term uses (weight or
 * weight32). */
static void lamb1_run(const ext_param *p, const mxc__blob *in,
                      const mxc__blob *decay, const mxc__blob *out,
                      mxc__req req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  double c1 = p->bias_correction ? 1 - pow(p->beta1, (double)p->t) : 1;
  double c2 = p->bias_correction ? 1 - pow(p->beta2, (double)p->t) : 1;
  for (int64_t i = 0; i < n; ++i) {
    double r = clip_to(p->rescale_grad * mxc__opt_ld(&in[1], i),
                       p->clip_gradient);
    double m = p->beta1 * mxc__opt_ld(&in[2], i) + (1 - p->beta1) * r;
    double u = p->beta2 * mxc__opt_ld(&in[3], i) + (1 - p->beta2) * r * r;
    mxc__opt_st(&in[2], i, m);
    mxc__opt_st(&in[3], i, u);
    double g = (m / c1) / (sqrt(u / c2) + p->epsilon) +
               p->wd * mxc__opt_ld(decay, i);
    mxc__opt_st_req(&out[0], i, g, req);
  }
}

/* Phase 2 from `base` (weight or weight32). */
static void lamb2_run(const ext_param *p, const mxc__blob *in,
                      const mxc__blob *base, const mxc__blob *out,
                      mxc__req req) {
  int64_t n = mxc__shape_size(&in[0].shape);
  double r1 = mxc__opt_ld(&in[2], 0), r2 = mxc__opt_ld(&in[3], 0);
  if (p->lower_bound >= 0) r1 = r1 > p->lower_bound ? r1 : p->lower_bound;
  if (p->upper_bound >= 0) r1 = r1 < p->upper_bound ? r1 : p->upper_bound;
  double lr = r1 == 0 || r2 == 0 ? p->lr : p->lr * r1 / r2;
  for (int64_t i = 0; i < n; ++i) {
    double nw = mxc__opt_ld(base, i) - lr * mxc__opt_ld(&in[1], i);
    mxc__opt_st_req(&out[0], i, nw, req);
  }
}

static int ext_compute(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  /* REQ_NULL skips the whole update, states included. */
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  switch (op - k_ops) {
    case E_FTML:
      ftml_run(param, in, out, req[0]);
      break;
    case E_LAMB1:
      lamb1_run(param, in, &in[0], out, req[0]);
      break;
    case E_MP_LAMB1:
      lamb1_run(param, in, &in[4], out, req[0]);
      break;
    case E_LAMB2:
      lamb2_run(param, in, &in[0], out, req[0]);
      break;
    default:
      lamb2_run(param, in, &in[4], out, req[0]);
      break;
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_in_ftml[] = {"weight", "grad", "d", "v", "z",
                                        NULL};
static const char *const k_in_lamb1[] = {"weight", "grad", "mean", "var",
                                         NULL};
static const char *const k_in_lamb2[] = {"weight", "g", "r1", "r2", NULL};
static const char *const k_in_mp_lamb1[] = {"weight", "grad", "mean", "var",
                                            "weight32", NULL};
static const char *const k_in_mp_lamb2[] = {"weight", "g", "r1", "r2",
                                            "weight32", NULL};
static const int k_inplace[][2] = {{0, 0}};

#define EXT_DESC(e, nm, n_in_, names, defs, check, mutate, doc_)            \
  [e] = {.name = nm,                                                        \
         .doc = doc_,                                                       \
         MXC__PARAMS_OF(ext_param, defs),                                   \
         .param_check = check,                                              \
         .n_inputs = n_in_,                                                 \
         .input_names = names,                                              \
         .n_outputs = 1,                                                    \
         .infer_shape = ext_shape,                                          \
         .infer_type = ext_type,                                            \
         .compute = ext_compute,                                            \
         .gradient = mxc__grad_none,                                        \
         MXC__INPLACE(k_inplace),                                           \
         .mutate_inputs = mutate}

static const mxc__op k_ops[E_COUNT] = {
    EXT_DESC(E_FTML, "ftml_update", 5, k_in_ftml, k_ftml_params, ftml_check,
             0x1Cu,
             "FTML (Follow the Moving Leader) with states d, v, z updated in "
             "place; weight = -z / d."),
    EXT_DESC(E_LAMB1, "lamb_update_phase1", 4, k_in_lamb1, k_lamb1_params,
             NULL, 0xCu,
             "LAMB phase 1: updates mean and var in place and gives the "
             "normalized step g = mean_hat/(sqrt(var_hat) + epsilon) + "
             "wd*weight."),
    EXT_DESC(E_LAMB2, "lamb_update_phase2", 4, k_in_lamb2, k_lamb2_params,
             lamb2_check, 0,
             "LAMB phase 2: weight -= lr * (r1/r2) * g with r1 = ||weight|| "
             "clamped to [lower_bound, upper_bound], r2 = ||g|| (shape (1,) "
             "each)."),
    EXT_DESC(E_MP_LAMB1, "mp_lamb_update_phase1", 5, k_in_mp_lamb1,
             k_lamb1_params, NULL, 0xCu,
             "lamb_update_phase1 with a float32 master weight32 (decay uses "
             "weight32); g is float32."),
    EXT_DESC(E_MP_LAMB2, "mp_lamb_update_phase2", 5, k_in_mp_lamb2,
             k_lamb2_params, lamb2_check, 0,
             "lamb_update_phase2 from the float32 master weight32, rounded "
             "to the weight's dtype."),
};

int mxc__random_register_optimizer_ext(mxc__registry *r) {
  for (int i = 0; i < E_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return mxc__random_register_optimizer_mp(r);
}
