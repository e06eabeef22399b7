/* MXNet 1.9's multi-precision and aggregated SGD updates, following its
 * published update rules and parameter names:
 *
 *  - mp_sgd_update (weight, grad, weight32) and mp_sgd_mom_update (weight,
 *    grad, mom, weight32): the float32 master copy weight32 (and the
 *    float32 momentum) carry the state; the new master weight is rounded
 *    into the output, normally float16 weight itself;
 *  - multi_sgd_update, multi_sgd_mom_update, multi_mp_sgd_update and
 *    multi_mp_sgd_mom_update: the same rules for num_weights weights in
 *    one call, inputs grouped per weight (weight, grad[, mom][, weight32])
 *    and one output per weight, each weight with its own learning rate
 *    and weight decay (parameters lrs and wds, tuples of floats).
 *
 * The rule, with r = clip(rescale_grad * grad, clip_gradient) (clipping
 * off when clip_gradient < 0) and w the master weight (weight32 in the
 * mixed-precision forms, the weight otherwise):
 *     mom = momentum * mom - lr * wd * w - lr * r;   w = w + mom
 * (without momentum: w = (1 - lr * wd) * w - lr * r). Arithmetic is in
 * double; states are stored in their dtype after every step.
 *
 * In-place states (mom, weight32) are declared by a static bit mask over
 * the first 32 inputs (core/op/op.h), which bounds num_weights: 16 for
 * multi_sgd_update (no states), 10 for the forms with 3 inputs per
 * weight, 8 with 4. MXNet's optimizers aggregate 4 weights per call by
 * default (MXNET_OPTIMIZER_AGGREGATION_SIZE). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/op/common.h"
#include "core/op/registry.h"
#include "ops/random/optimizer_mp_params.h"
#include "ops/random/optimizer_util.h"

enum { MULTI_MAX = MXC__MP_MAX_WEIGHTS };

typedef mxc__mp_param mp_param;

/* ---- variants ---- */

/* What one descriptor updates: inputs per weight and which are there. */
typedef struct variant {
  int stride;   /* inputs per weight */
  int has_mom;  /* mom at offset 2 */
  int has_w32;  /* weight32 last */
  int multi;    /* lrs/wds/num_weights rather than lr/wd */
} variant;

enum { V_MP_SGD, V_MP_SGD_MOM, V_MULTI, V_MULTI_MOM, V_MULTI_MP,
       V_MULTI_MP_MOM, V_COUNT };

static const variant k_variants[V_COUNT] = {
    [V_MP_SGD] = {3, 0, 1, 0},   [V_MP_SGD_MOM] = {4, 1, 1, 0},
    [V_MULTI] = {2, 0, 0, 1},    [V_MULTI_MOM] = {3, 1, 0, 1},
    [V_MULTI_MP] = {3, 0, 1, 1}, [V_MULTI_MP_MOM] = {4, 1, 1, 1},
};

static const mxc__op k_ops[V_COUNT];

static const variant *variant_of(const mxc__op *op) {
  return &k_variants[op - k_ops];
}

/* ---- parameters ---- */

static const char *skip_ws(const char *p) {
  while (*p == ' ') ++p;
  return p;
}

/* Parses a tuple of floats, "(0.1, 0.2)", "[0.1,0.2]" or "0.1", into
 * v[0..*n). MXC_ERR_INVALID_ARGUMENT naming the parameter otherwise. */
static int parse_floats(const char *op_name, const char *name,
                        const char *s, double *v, int max, int *n) {
  const char *p = skip_ws(s);
  char close = *p == '(' ? ')' : *p == '[' ? ']' : 0;
  if (close) p = skip_ws(p + 1);
  int ok = 1;
  *n = 0;
  while (ok && *p && *p != close) {
    char *end = NULL;
    double x = strtod(p, &end);
    ok = end != p && *n < max;
    if (!ok) break;
    v[(*n)++] = x;
    p = skip_ws(end);
    if (*p == ',') {
      p = skip_ws(p + 1);
    } else {
      ok = *p == close;
    }
  }
  if (ok && close) {
    ok = *p == close;
    p = ok ? skip_ws(p + 1) : p;
  }
  MXC_RETURN_ERROR_IF(!ok || *p != '\0', MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = '%.64s' is not a "
                      "tuple of at most %d numbers such as (0.1, 0.01)",
                      op_name, name, s, max);
  return MXC_OK;
}

static int check_finite(const char *op_name, const char *name, double v) {
  MXC_RETURN_ERROR_IF(!isfinite(v), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = %g; expected a finite "
                      "number",
                      op_name, name, v);
  return MXC_OK;
}

static int single_check(const char *op_name, void *param) {
  mp_param *p = param;
  MXC_FORWARD_IF_ERROR(check_finite(op_name, "lr", p->lr));
  p->num_weights = 1;
  p->lr_v[0] = p->lr;
  p->wd_v[0] = p->wd;
  return MXC_OK;
}

static int multi_check(const char *op_name, void *param) {
  mp_param *p = param;
  int n_lr = 0, n_wd = 0;
  MXC_FORWARD_IF_ERROR(
      parse_floats(op_name, "lrs", p->lrs, p->lr_v, MULTI_MAX, &n_lr));
  MXC_FORWARD_IF_ERROR(
      parse_floats(op_name, "wds", p->wds, p->wd_v, MULTI_MAX, &n_wd));
  MXC_RETURN_ERROR_IF(n_lr != p->num_weights || n_wd != p->num_weights,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': %d learning rates (lrs) and %d weight "
                      "decays (wds) for num_weights = %lld; expected one of "
                      "each per weight",
                      op_name, n_lr, n_wd, (long long)p->num_weights);
  for (int i = 0; i < n_lr; ++i) {
    MXC_FORWARD_IF_ERROR(check_finite(op_name, "lrs", p->lr_v[i]));
    MXC_FORWARD_IF_ERROR(check_finite(op_name, "wds", p->wd_v[i]));
  }
  return MXC_OK;
}

#define F(field, def, doc) MXC__PARAM(mp_param, field, MXC__P_FLOAT, def, doc)
#define CLIP_DEFS                                                          \
  F(rescale_grad, "1", "Factor the gradient is multiplied by first."),     \
      F(clip_gradient, "-1",                                               \
        "Clip gradients to [-clip_gradient, clip_gradient]; negative: no " \
        "clipping.")
#define SINGLE_DEFS                                                \
  F(lr, NULL, "Learning rate."),                                   \
      F(wd, "0", "Weight decay (L2 penalty coefficient)."), CLIP_DEFS, \
      MXC__PARAM(mp_param, lazy_update, MXC__P_BOOL, "true",       \
                 "Accepted for compatibility; the update is dense.")
#define MOM_DEF F(momentum, "0", "Momentum.")
#define MULTI_DEFS(max)                                                    \
  MXC__PARAM(mp_param, lrs, MXC__P_STRING, NULL,                           \
             "Learning rates, one per weight: (lr0, lr1, ...)."),          \
      MXC__PARAM(mp_param, wds, MXC__P_STRING, NULL,                       \
                 "Weight decays, one per weight: (wd0, wd1, ...)."),       \
      CLIP_DEFS,                                                           \
      MXC__PARAM_RANGE(mp_param, num_weights, MXC__P_INT, "1", 1, max,     \
                       "Number of weights updated by the call (inputs are " \
                       "grouped per weight).")

static const mxc__param_def k_mp_sgd_params[] = {SINGLE_DEFS};
static const mxc__param_def k_mp_sgd_mom_params[] = {SINGLE_DEFS, MOM_DEF};
static const mxc__param_def k_multi_params[] = {MULTI_DEFS(16)};
static const mxc__param_def k_multi_mom_params[] = {MULTI_DEFS(10), MOM_DEF};
static const mxc__param_def k_multi_mp_params[] = {MULTI_DEFS(10)};
static const mxc__param_def k_multi_mp_mom_params[] = {MULTI_DEFS(8),
                                                       MOM_DEF};
#undef F

/* ---- arity and names ---- */

static const char *role_name(const variant *v, int i) {
  int k = i % v->stride;
  if (k == 0) return "weight";
  if (k == 1) return "grad";
  if (v->has_mom && k == 2) return "mom";
  return "weight32";
}

/* Weights per call: num_weights (1 for the single forms, whose
 * param_check sets it). */
static int n_weights(const void *param) {
  int64_t n = ((const mp_param *)param)->num_weights;
  return n > 0 ? (int)n : 1;
}

#define COUNT_FNS(v)                                                 \
  static int n_in_##v(const void *param) {                           \
    return n_weights(param) * k_variants[v].stride;                  \
  }                                                                  \
  static const char *in_name_##v(const void *param, int i) {         \
    (void)param;                                                     \
    return role_name(&k_variants[v], i);                             \
  }

COUNT_FNS(V_MP_SGD)
COUNT_FNS(V_MP_SGD_MOM)
COUNT_FNS(V_MULTI)
COUNT_FNS(V_MULTI_MOM)
COUNT_FNS(V_MULTI_MP)
COUNT_FNS(V_MULTI_MP_MOM)

/* ---- inference ---- */

/* Within each group every input and the output share one shape. */
static int mp_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  const variant *v = variant_of(op);
  for (int w = 0; w < n_out; ++w) {
    mxc__shape *grp = in + w * v->stride;
    MXC_FORWARD_IF_ERROR(mxc__opt_same_shape(op, param, grp, v->stride,
                                             w * v->stride, &out[w]));
  }
  (void)n_in;
  return MXC_OK;
}

/* 1 when input k of a group has the weight's dtype: all do, except mom
 * and weight32 in the mixed-precision forms (float32). */
static int weight_typed(const variant *v, int k) {
  return !(v->has_w32 && k >= 2);
}

static int mp_type(const mxc__op *op, const void *param, int *in, int n_in,
                   int *out, int n_out) {
  const variant *v = variant_of(op);
  (void)n_in;
  for (int w = 0; w < n_out; ++w) {
    int *grp = in + w * v->stride, t = out[w];
    for (int k = 0; k < v->stride && t < 0; ++k) {
      if (weight_typed(v, k)) t = grp[k];
    }
    if (t < 0) continue;
    MXC_FORWARD_IF_ERROR(mxc__opt_float_type(op->name, t));
    for (int k = 0; k < v->stride; ++k) {
      int want = weight_typed(v, k) ? t : MXC_DTYPE_FLOAT32;
      MXC_FORWARD_IF_ERROR(mxc__opt_assign_type(op, param, &grp[k], want,
                                                w * v->stride + k));
    }
    MXC_FORWARD_IF_ERROR(mxc__opt_assign_type(op, param, &out[w], t, -1));
  }
  return MXC_OK;
}

/* ---- compute ---- */

static inline double clip_to(double x, double c) {
  if (c < 0) return x;
  return x > c ? c : x < -c ? -c : x;
}

static void update_group(const variant *v, const mp_param *p, int w,
                         const mxc__blob *grp, const mxc__blob *out,
                         mxc__req req) {
  const mxc__blob *master = v->has_w32 ? &grp[v->stride - 1] : &grp[0];
  const mxc__blob *mom = v->has_mom ? &grp[2] : NULL;
  double lr = p->lr_v[w], wd = p->wd_v[w];
  int64_t n = mxc__shape_size(&grp[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    double x = mxc__opt_ld(master, i);
    double r = clip_to(p->rescale_grad * mxc__opt_ld(&grp[1], i),
                       p->clip_gradient);
    double nw;
    if (mom) {
      double m = p->momentum * mxc__opt_ld(mom, i) - lr * wd * x - lr * r;
      mxc__opt_st(mom, i, m);
      nw = x + m;
    } else {
      nw = (1 - lr * wd) * x - lr * r;
    }
    if (v->has_w32) mxc__opt_st(master, i, nw);
    mxc__opt_st_req(out, i, nw, req);
  }
}

static int mp_compute(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in;
  const variant *v = variant_of(op);
  for (int w = 0; w < n_out; ++w) {
    /* REQ_NULL skips the weight's whole update, states included. */
    if (req[w] == MXC__REQ_NULL) continue;
    update_group(v, param, w, in + w * v->stride, &out[w], req[w]);
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

/* weight i may be output i; states (mom, weight32) change in place. */
static const int k_inplace[][2] = {
    {0, 0},   {2, 1},   {4, 2},   {6, 3},   {8, 4},   {10, 5},
    {12, 6},  {14, 7},  {16, 8},  {18, 9},  {20, 10}, {22, 11},
    {24, 12}, {26, 13}, {28, 14}, {30, 15}};
static const int k_inplace3[][2] = {{0, 0},  {3, 1},  {6, 2},  {9, 3},
                                    {12, 4}, {15, 5}, {18, 6}, {21, 7},
                                    {24, 8}, {27, 9}};
static const int k_inplace4[][2] = {{0, 0},  {4, 1},  {8, 2},  {12, 3},
                                    {16, 4}, {20, 5}, {24, 6}, {28, 7}};
/* Bits of inputs 2 (and 3) of every group of 3 (4). */
#define STATES3 0x24924924u
#define STATES4 0xCCCCCCCCu

#define MP_DESC(v, nm, defs, check, inplace, mutate, doc_)                  \
  [v] = {.name = nm,                                                        \
         .doc = doc_,                                                       \
         MXC__PARAMS_OF(mp_param, defs),                                    \
         .param_check = check,                                              \
         .num_inputs = n_in_##v,                                            \
         .input_name = in_name_##v,                                         \
         .num_outputs = n_weights,                                          \
         .infer_shape = mp_shape,                                           \
         .infer_type = mp_type,                                             \
         .compute = mp_compute,                                             \
         .gradient = mxc__grad_none,                                        \
         MXC__INPLACE(inplace),                                             \
         .mutate_inputs = mutate}

static const mxc__op k_ops[V_COUNT] = {
    MP_DESC(V_MP_SGD, "mp_sgd_update", k_mp_sgd_params, single_check,
            k_inplace3, 0x4u,
            "Multi-precision SGD: weight32 = (1 - lr*wd)*weight32 - "
            "lr*clip(rescale_grad*grad); weight = weight32 rounded."),
    MP_DESC(V_MP_SGD_MOM, "mp_sgd_mom_update", k_mp_sgd_mom_params,
            single_check, k_inplace4, 0xCu,
            "Multi-precision SGD with momentum: mom = momentum*mom - "
            "lr*wd*weight32 - lr*clip(rescale_grad*grad); weight32 += mom; "
            "weight = weight32 rounded."),
    MP_DESC(V_MULTI, "multi_sgd_update", k_multi_params, multi_check,
            k_inplace, 0,
            "sgd_update of num_weights weights, inputs (weight, grad) per "
            "weight, learning rates lrs and weight decays wds."),
    MP_DESC(V_MULTI_MOM, "multi_sgd_mom_update", k_multi_mom_params,
            multi_check, k_inplace3, STATES3,
            "sgd_mom_update of num_weights weights, inputs (weight, grad, "
            "mom) per weight."),
    MP_DESC(V_MULTI_MP, "multi_mp_sgd_update", k_multi_mp_params,
            multi_check, k_inplace3, STATES3,
            "mp_sgd_update of num_weights weights, inputs (weight, grad, "
            "weight32) per weight."),
    MP_DESC(V_MULTI_MP_MOM, "multi_mp_sgd_mom_update",
            k_multi_mp_mom_params, multi_check, k_inplace4, STATES4,
            "mp_sgd_mom_update of num_weights weights, inputs (weight, "
            "grad, mom, weight32) per weight."),
};

int mxc__random_register_optimizer_mp(mxc__registry *r) {
  for (int i = 0; i < V_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
