/* GroupNorm and InstanceNorm: data (N, C, ...) normalized over groups of
 * channels and all spatial positions of each sample, then scaled by
 * gamma[c] and shifted by beta[c] (both of shape (C)).
 *
 * GroupNorm splits the C channels into num_groups consecutive groups;
 * InstanceNorm is the case of one channel per group. Both keep the
 * statistics as hidden outputs the gradient reads, shaped (N, groups):
 * GroupNorm mean and std = sqrt(var + eps), InstanceNorm mean and var, as
 * MXNet names them. The variance is the biased one (divided by the group
 * size). */
#include <math.h>

#include "ops/nn/group_norm_params.h"
#include "ops/nn/nn.h"

typedef mxc__gn_param gn_param;

static const mxc__param_def k_gn_params[] = {
    MXC__PARAM_RANGE(gn_param, num_groups, MXC__P_INT, "1", 1, 1e9,
                     "Number of channel groups; must divide the channels."),
    MXC__PARAM_RANGE(gn_param, eps, MXC__P_FLOAT, "1e-05", 0, INFINITY,
                     "Added to the variance before the square root."),
    MXC__PARAM(gn_param, output_mean_var, MXC__P_BOOL, "false",
               "Accepted for compatibility; mean and std are always hidden "
               "outputs 1 and 2 (request three outputs to get them)."),
};

typedef mxc__in_param in_param;

static const mxc__param_def k_in_params[] = {
    MXC__PARAM_RANGE(in_param, eps, MXC__P_FLOAT, "0.001", 0, INFINITY,
                     "Added to the variance before the square root."),
};

static const mxc__op k_ops[4];
#define IS_INSTANCE(op) ((op) == &k_ops[2] || (op) == &k_ops[3])

/* Groups of this call: C channels for InstanceNorm, else num_groups. */
static int64_t groups_of(const mxc__op *op, const void *param, int64_t c) {
  return IS_INSTANCE(op) ? c : ((const gn_param *)param)->num_groups;
}

static double eps_of(const mxc__op *op, const void *param) {
  return IS_INSTANCE(op) ? ((const in_param *)param)->eps
                         : ((const gn_param *)param)->eps;
}

static int gn_shape(const mxc__op *op, const void *param, mxc__shape *in,
                    int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 3, MXC_ERR_SHAPE,
                      "operator '%s': data must have at least 3 axes (batch, "
                      "channel, spatial...); got shape %s",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  int64_t c = in[0].dims[1], g = groups_of(op, param, c);
  /* g is 0 only for InstanceNorm of data without channels. */
  MXC_RETURN_ERROR_IF(g > 0 && c % g != 0, MXC_ERR_SHAPE,
                      "operator '%s': num_groups = %lld does not divide the "
                      "%lld channels of data %s",
                      op->name, (long long)g, (long long)c,
                      mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape cs = mxc__nn_shape1(c);
  for (int i = 1; i < 3; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__nn_assign_shape(
        op->name, &in[i], &cs, i == 1 ? "input 1 ('gamma')" : "input 2 ('beta')",
        "one value per channel of data's axis 1"));
  }
  mxc__shape stat = {2, {in[0].dims[0], g}};
  out[0] = in[0];
  out[1] = stat;
  out[2] = stat;
  return MXC_OK;
}

static int gn_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  for (int i = 0; i < 3; ++i) out[i] = in[1 + i];
  return MXC_OK;
}

/* Data (N, C, S...) as N * G groups of d = (C / G) * S contiguous
 * elements; channel of element j of a group: g * cpg + j / s. */
typedef struct gn_geom {
  int64_t groups, d, cpg, s, g;
} gn_geom;

static gn_geom geom_of(const mxc__op *op, const void *param,
                       const mxc__shape *x) {
  gn_geom m;
  m.s = mxc__nn_split(x, 1).inner;
  m.g = groups_of(op, param, x->dims[1]);
  m.cpg = IS_INSTANCE(op) ? 1 : x->dims[1] / m.g;
  m.groups = x->dims[0] * m.g;
  m.d = m.cpg * m.s;
  return m;
}

/* Outputs (out, mean, std-or-var). */
static int gn_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const void *param, const mxc__blob *in, int n_in,
                      const mxc__blob *out, int n_out, const mxc__req *req) {
  gn_geom m = geom_of(op, param, &in[0].shape);
  double eps = eps_of(op, param);
  int inst = IS_INSTANCE(op);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *gamma = in[1].ptr, *beta = in[2].ptr;
    for (int64_t q = 0; q < m.groups; ++q) {
      const T *x = (const T *)in[0].ptr + q * m.d;
      T *y = (T *)out[0].ptr + q * m.d;
      double s = 0, v = 0;
      for (int64_t j = 0; j < m.d; ++j) s += x[j];
      double mean = s / (double)m.d;
      for (int64_t j = 0; j < m.d; ++j) v += (x[j] - mean) * (x[j] - mean);
      v /= (double)m.d;
      double sd = sqrt(v + eps);
      for (int64_t j = 0; req[0] != MXC__REQ_NULL && j < m.d; ++j) {
        int64_t c = (q % m.g) * m.cpg + j / m.s;
        MXC__ASSIGN(req[0], y[j],
                    (T)((x[j] - mean) / sd * gamma[c] + beta[c]));
      }
      if (n_out > 1 && req[1] != MXC__REQ_NULL)
        MXC__ASSIGN(req[1], ((T *)out[1].ptr)[q], (T)mean);
      if (n_out > 2 && req[2] != MXC__REQ_NULL)
        MXC__ASSIGN(req[2], ((T *)out[2].ptr)[q], (T)(inst ? v : sd));
    }
  });
  return MXC_OK;
}

/* Clears dgamma/dbeta unless accumulating (the kernel adds into them). */
static void clear_unless_add(const mxc__blob *b, mxc__req req) {
  if (req == MXC__REQ_ADD || req == MXC__REQ_NULL) return;
  int64_t n = mxc__shape_size(&b->shape);
  for (int64_t i = 0; i < n; ++i) mxc__blob_set(b, i, 0);
}

/* _backward_: (ograd, data, gamma, beta, out, mean, std|var) ->
 * (ddata, dgamma, dbeta). With xh = (x - mean) / sd and w = og * gamma /
 * sd over a group: dx = w - mean(w) - xh * mean(w * xh); dgamma[c] =
 * sum og * xh and dbeta[c] = sum og over the elements of channel c. */
static int gn_backward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  gn_geom m = geom_of(op, param, &in[1].shape);
  double eps = eps_of(op, param);
  int inst = IS_INSTANCE(op);
  clear_unless_add(&out[1], req[1]);
  clear_unless_add(&out[2], req[2]);
  MXC__FLOAT_TYPED(in[1].dtype, {
    const T *gamma = in[2].ptr;
    T *dg = out[1].ptr, *db = out[2].ptr;
    for (int64_t q = 0; q < m.groups; ++q) {
      const T *og = (const T *)in[0].ptr + q * m.d;
      const T *x = (const T *)in[1].ptr + q * m.d;
      T *dx = (T *)out[0].ptr + q * m.d;
      double mean = ((const T *)in[5].ptr)[q];
      double st = ((const T *)in[6].ptr)[q];
      double sd = inst ? sqrt(st + eps) : st;
      double sw = 0, swx = 0;
      for (int64_t j = 0; j < m.d; ++j) {
        int64_t c = (q % m.g) * m.cpg + j / m.s;
        double xh = (x[j] - mean) / sd, w = og[j] * (double)gamma[c] / sd;
        sw += w;
        swx += w * xh;
        if (req[1] != MXC__REQ_NULL) dg[c] += (T)(og[j] * xh);
        if (req[2] != MXC__REQ_NULL) db[c] += og[j];
      }
      sw /= (double)m.d;
      swx /= (double)m.d;
      for (int64_t j = 0; req[0] != MXC__REQ_NULL && j < m.d; ++j) {
        int64_t c = (q % m.g) * m.cpg + j / m.s;
        double xh = (x[j] - mean) / sd, w = og[j] * (double)gamma[c] / sd;
        MXC__ASSIGN(req[0], dx[j], (T)(w - sw - xh * swx));
      }
    }
  });
  return MXC_OK;
}

static const char *const k_in[] = {"data", "gamma", "beta", NULL};
static const char *const k_gn_out[] = {"output", "mean", "std", NULL};
static const char *const k_in_out[] = {"output", "mean", "var", NULL};
static const char *const k_gn_bwd_in[] = {"ograd",  "data", "gamma", "beta",
                                          "output", "mean", "std",   NULL};
static const char *const k_in_bwd_in[] = {"ograd",  "data", "gamma", "beta",
                                          "output", "mean", "var",   NULL};

#define NORM_FWD(nm, st, table, outs, doc_)                             \
  {                                                                    \
    .name = nm, .doc = doc_, MXC__PARAMS_OF(st, table), .n_inputs = 3, \
    .input_names = k_in, .n_outputs = 3, .n_visible_outputs = 1,       \
    .output_names = outs, .infer_shape = gn_shape,                     \
    .infer_type = mxc__nn_type_float, .compute = gn_forward,           \
    .gradient = mxc__grad_use_in_out, .backward_uses_inputs = 7u,      \
    .backward_uses_outputs = 6u,                                       \
  }
#define NORM_BWD(nm, st, table, ins)                                     \
  {                                                                     \
    MXC__BACKWARD(nm), MXC__PARAMS_OF(st, table), .n_inputs = 7,        \
    .input_names = ins, .n_outputs = 3, .infer_shape = gn_bwd_shape,    \
    .infer_type = mxc__nn_type_float, .compute = gn_backward,           \
  }

static const mxc__op k_ops[4] = {
    NORM_FWD("GroupNorm", gn_param, k_gn_params, k_gn_out,
             "Normalizes data (N, C, ...) over each group of C/num_groups "
             "channels and all positions of a sample, then gamma[c] * x + "
             "beta[c]; output has the data's shape."),
    NORM_BWD("GroupNorm", gn_param, k_gn_params, k_gn_bwd_in),
    NORM_FWD("InstanceNorm", in_param, k_in_params, k_in_out,
             "Normalizes each channel of each sample of data (N, C, ...) "
             "over its positions, then gamma[c] * x + beta[c]; output has "
             "the data's shape."),
    NORM_BWD("InstanceNorm", in_param, k_in_params, k_in_bwd_in),
};

int mxc__nn_register_group_norm(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
