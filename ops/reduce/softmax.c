/* softmax and log_softmax along one axis, with a temperature T:
 *   softmax(x)_i     = exp(x_i / T - m) / sum_j exp(x_j / T - m)
 *   log_softmax(x)_i = x_i / T - m - log(sum_j exp(x_j / T - m))
 * where m = max_j x_j / T keeps exp from overflowing (the result does not
 * depend on m). Rows are computed in double and stored in the output
 * dtype (the `dtype` parameter, default the input's).
 *
 * Gradients, with g the output gradient and y the output:
 *   softmax:     dx = y * (g - sum(g * y)) / T
 *   log_softmax: dx = (g - exp(y) * sum(g)) / T
 * They read only y, except when `dtype` changes the output type: then the
 * backward node also takes the input, whose dtype the gradient must have.
 *
 * temperature: None (the default, as in MXNet) means 1.
 *
 * use_length (MXNet 1.9): a second input `length`, data's shape without
 * the axis, gives each row its length L (truncated, clamped to the
 * axis): the row's first L elements are normalized among themselves and
 * the rest are 0, in softmax and log_softmax alike; so are their
 * gradients. length gets no gradient. */
#include <math.h>
#include <stdio.h>

#include "ops/reduce/reduce_impl.h"

typedef mxc__softmax_param softmax_param;

static int softmax_check(const char *op_name, void *param) {
  softmax_param *sp = param;
  if (isnan(sp->temperature)) sp->temperature = 1; /* None */
  MXC_RETURN_ERROR_IF(!(isfinite(sp->temperature) && sp->temperature != 0),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'temperature' = %g must be "
                      "finite and non-zero",
                      op_name, sp->temperature);
  MXC_RETURN_ERROR_IF(sp->dtype >= 0 && !mxc__dtype_is_float(sp->dtype),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'dtype' = %s is not "
                      "supported; expected float32, float64, float16, "
                      "bfloat16 or None",
                      op_name, mxc__dtype_name(sp->dtype));
  return MXC_OK;
}

static const mxc__op k_fwd[2];
static const mxc__op k_bwd[2];

static int is_log(const mxc__op *op) {
  return op == &k_fwd[1] || op == &k_bwd[1];
}

/* The shape of `length`: one entry per row, data's shape without axis. */
static mxc__shape row_shape(const mxc__shape *data, int axis) {
  mxc__shape s;
  s.ndim = 0;
  for (int a = 0; a < data->ndim; ++a) {
    if (a != axis) s.dims[s.ndim++] = data->dims[a];
  }
  return s;
}

static int fwd_num_inputs(const void *param) {
  return ((const softmax_param *)param)->use_length ? 2 : 1;
}

/* Row r's length from `length` (any numeric dtype): truncated, clamped to
 * 0..len (NaN counts as 0). */
static int64_t row_len(const mxc__blob *length, int64_t r, int64_t len) {
  double v = trunc(mxc__blob_get(length, r));
  return v >= (double)len ? len : v > 0 ? (int64_t)v : 0;
}

static int softmax_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  const softmax_param *sp = param;
  if (in[0].ndim < 0) return MXC_OK;
  int axis = 0;
  MXC_FORWARD_IF_ERROR(
      mxc__red_axis(op->name, "axis", sp->axis, in[0].ndim, &axis));
  if (sp->use_length) {
    mxc__shape ls = row_shape(&in[0], axis);
    MXC_FORWARD_IF_ERROR(
        mxc__red_set_shape(op->name, "input 1 (length)", &in[1], &ls));
  }
  return mxc__red_set_shape(op->name, "output 0", &out[0], &in[0]);
}

static int softmax_type(const mxc__op *op, const void *param, int *in, int n_in,
                        int *out, int n_out) {
  (void)n_out;
  const softmax_param *sp = param;
  if (in[0] < 0) return MXC_OK;
  /* length (use_length) keeps its own dtype: integer or float. */
  if (n_in > 1 && in[1] < 0) in[1] = MXC_DTYPE_INT32;
  if (!mxc__dtype_is_float(in[0])) {
    return mxc__unsupported_dtype(op->name, in[0],
                                  "this operator takes floating-point inputs "
                                  "(float32, float64, float16, bfloat16)");
  }
  int want = sp->dtype >= 0 ? sp->dtype : in[0];
  if (out[0] < 0) out[0] = want;
  MXC_RETURN_ERROR_IF(out[0] != want, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s", op->name,
                      mxc__dtype_name(out[0]), mxc__dtype_name(want));
  return MXC_OK;
}

/* Rows along the axis lie `inner` elements apart. Up to TILE neighbouring
 * rows are processed together as a len x w tile (element k of row j at
 * k * w + j), so that memory is read and written w contiguous elements at
 * a time instead of one element per cache line. */
#define TILE 32

/* The tile in place; m, s: w doubles of scratch. One exp per element. */
static void softmax_tile(int log_out, double t, int64_t len, int64_t w,
                         double *x, double *m, double *s) {
  for (int64_t j = 0; j < w; ++j) {
    m[j] = -INFINITY;
    s[j] = 0;
  }
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t j = 0; j < w; ++j) {
      double z = x[k * w + j] / t;
      x[k * w + j] = z;
      if (z > m[j]) m[j] = z;
    }
  }
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t j = 0; j < w; ++j) {
      double e = exp(x[k * w + j] - m[j]);
      s[j] += e;
      if (!log_out) x[k * w + j] = e;
    }
  }
  for (int64_t j = 0; j < w; ++j) s[j] = log_out ? m[j] + log(s[j]) : 1 / s[j];
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t j = 0; j < w; ++j) {
      if (log_out) {
        x[k * w + j] -= s[j];
      } else {
        x[k * w + j] *= s[j];
      }
    }
  }
}

/* use_length: one row at a time (rows have their own lengths), as a
 * tile of width 1; x holds len + 2 doubles. Elements past the row's
 * length are 0. */
static void softmax_len_rows(const mxc__op *op, const softmax_param *sp,
                             const mxc__blob *in, const mxc__blob *out,
                             mxc__req req, int64_t outer, int64_t len,
                             int64_t inner, double *x) {
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      int64_t base = a * len * inner + b;
      int64_t n = row_len(&in[1], a * inner + b, len);
      mxc__red_load_tile(&in[0], base, inner, len, 1, x);
      softmax_tile(is_log(op), sp->temperature, n, 1, x, x + len, x + len + 1);
      for (int64_t k = n; k < len; ++k) x[k] = 0;
      mxc__red_store_tile(out, base, inner, len, 1, x, req);
    }
  }
}

static int softmax_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)n_in, (void)n_out;
  const softmax_param *sp = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int axis = 0;
  MXC_FORWARD_IF_ERROR(
      mxc__red_axis(op->name, "axis", sp->axis, in[0].shape.ndim, &axis));
  int64_t outer = 0, len = 0, inner = 0;
  mxc__red_split(&in[0].shape, axis, &outer, &len, &inner);
  int64_t tw = inner < TILE ? inner : TILE;
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__red_temp(
      op, ctx, (size_t)(len + 2) * (size_t)tw * sizeof(double), &t));
  double *x = t, *m = x + len * tw, *s = m + tw;
  if (sp->use_length) {
    softmax_len_rows(op, sp, in, &out[0], req[0], outer, len, inner, x);
    return MXC_OK;
  }
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; b += tw) {
      int64_t w = inner - b < tw ? inner - b : tw;
      int64_t base = a * len * inner + b;
      mxc__red_load_tile(&in[0], base, inner, len, w, x);
      softmax_tile(is_log(op), sp->temperature, len, w, x, m, s);
      mxc__red_store_tile(&out[0], base, inner, len, w, x, req[0]);
    }
  }
  return MXC_OK;
}

/* _backward_: inputs (ograd, [data], output, [length]): data when dtype
 * is set, length with use_length; output d data. */
static int bwd_num_inputs(const void *param) {
  const softmax_param *sp = param;
  return 2 + (sp->dtype >= 0) + (sp->use_length != 0);
}

/* Index of the forward output among the backward's inputs. */
static int bwd_output_index(const softmax_param *sp) {
  return sp->dtype >= 0 ? 2 : 1;
}

static const char *bwd_input_name(const void *param, int i) {
  const softmax_param *sp = param;
  if (i == 0) return "ograd";
  if (i == bwd_output_index(sp)) return "output";
  return i < bwd_output_index(sp) ? "data" : "length";
}

/* The backward node; length (forward input 1) gets no gradient. */
static int softmax_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                            mxc__entry *igrad) {
  const softmax_param *sp = fwd->param;
  mxc__entry ins[4];
  int k = 0;
  ins[k++] = ograd[0];
  if (sp->dtype >= 0) ins[k++] = fwd->inputs[0];
  ins[k++] = (mxc__entry){(mxc__node *)fwd, 0};
  if (sp->use_length) ins[k++] = fwd->inputs[1];
  char name[64];
  snprintf(name, sizeof name, "_backward_%s", fwd->op->name);
  mxc__node *b = NULL;
  MXC_FORWARD_IF_ERROR(mxc__node_op_like(name, fwd, ins, k, &b));
  igrad[0] = mxc__entry_ref(b, 0);
  if (sp->use_length) igrad[1] = (mxc__entry){NULL, 0};
  mxc__node_release(b); /* the entry holds it now */
  return MXC_OK;
}

static int bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  const softmax_param *sp = param;
  int n_same = n_in - (sp->use_length != 0); /* length: a row shape */
  const mxc__shape *known = NULL;
  for (int i = 0; i < n_same && !known; ++i) {
    if (in[i].ndim >= 0) known = &in[i];
  }
  if (!known) return MXC_OK;
  mxc__shape s = *known;
  if (sp->use_length) {
    int axis = 0;
    MXC_FORWARD_IF_ERROR(
        mxc__red_axis(op->name, "axis", sp->axis, s.ndim, &axis));
    mxc__shape ls = row_shape(&s, axis);
    MXC_FORWARD_IF_ERROR(mxc__red_set_shape(op->name, "input (length)",
                                            &in[n_in - 1], &ls));
  }
  for (int i = 0; i < n_same; ++i) {
    char what[64];
    snprintf(what, sizeof what, "input %d (%s)", i, bwd_input_name(param, i));
    MXC_FORWARD_IF_ERROR(mxc__red_set_shape(op->name, what, &in[i], &s));
  }
  return mxc__red_set_shape(op->name, "output 0", &out[0], &s);
}

static int bwd_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  (void)n_out;
  const softmax_param *sp = param;
  if (sp->use_length && in[n_in - 1] < 0) in[n_in - 1] = MXC_DTYPE_INT32;
  for (int i = 0; i < n_in - (sp->use_length != 0); ++i) {
    if (in[i] >= 0 && !mxc__dtype_is_float(in[i])) {
      return mxc__unsupported_dtype(op->name, in[i],
                                    "gradients are computed for float32, "
                                    "float64, float16 and bfloat16");
    }
  }
  /* The gradient has the dtype of the forward input: input 1 is the data,
   * or the output when the two share a dtype. */
  if (in[1] < 0) return MXC_OK;
  if (out[0] < 0) out[0] = in[1];
  MXC_RETURN_ERROR_IF(out[0] != in[1], MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s", op->name,
                      mxc__dtype_name(out[0]), mxc__dtype_name(in[1]));
  return MXC_OK;
}

/* The gradient of a tile (see softmax_tile) into g; s: w of scratch. */
static void softmax_grad_tile(int log_out, double t, int64_t len, int64_t w,
                              double *g, const double *y, double *s) {
  for (int64_t j = 0; j < w; ++j) s[j] = 0;
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t j = 0; j < w; ++j) {
      s[j] += log_out ? g[k * w + j] : g[k * w + j] * y[k * w + j];
    }
  }
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t j = 0; j < w; ++j) {
      double gv = g[k * w + j], yv = y[k * w + j];
      double d = log_out ? gv - exp(yv) * s[j] : yv * (gv - s[j]);
      g[k * w + j] = d / t;
    }
  }
}

/* use_length: the gradient row by row (see softmax_len_rows); g holds
 * 2 * len + 1 doubles. */
static void softmax_len_grad_rows(const mxc__op *op, const softmax_param *sp,
                                  const mxc__blob *og, const mxc__blob *y,
                                  const mxc__blob *length,
                                  const mxc__blob *out, mxc__req req,
                                  int64_t outer, int64_t len, int64_t inner,
                                  double *g) {
  double *yb = g + len, *s = yb + len;
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      int64_t base = a * len * inner + b;
      int64_t n = row_len(length, a * inner + b, len);
      mxc__red_load_tile(og, base, inner, len, 1, g);
      mxc__red_load_tile(y, base, inner, len, 1, yb);
      softmax_grad_tile(is_log(op), sp->temperature, n, 1, g, yb, s);
      for (int64_t k = n; k < len; ++k) g[k] = 0;
      mxc__red_store_tile(out, base, inner, len, 1, g, req);
    }
  }
}

static int softmax_backward(const mxc__op *op, const mxc__opctx *ctx,
                            const void *param, const mxc__blob *in, int n_in,
                            const mxc__blob *out, int n_out,
                            const mxc__req *req) {
  (void)n_out;
  const softmax_param *sp = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  (void)n_in;
  const mxc__blob *og = &in[0], *y = &in[bwd_output_index(sp)];
  int axis = 0;
  MXC_FORWARD_IF_ERROR(
      mxc__red_axis(op->name, "axis", sp->axis, y->shape.ndim, &axis));
  int64_t outer = 0, len = 0, inner = 0;
  mxc__red_split(&y->shape, axis, &outer, &len, &inner);
  int64_t tw = inner < TILE ? inner : TILE;
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__red_temp(
      op, ctx, (size_t)(2 * len + 1) * (size_t)tw * sizeof(double), &t));
  double *g = t, *yb = g + len * tw, *s = yb + len * tw;
  if (sp->use_length) {
    softmax_len_grad_rows(op, sp, og, y, &in[n_in - 1], &out[0], req[0],
                          outer, len, inner, g);
    return MXC_OK;
  }
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; b += tw) {
      int64_t w = inner - b < tw ? inner - b : tw;
      int64_t base = a * len * inner + b;
      mxc__red_load_tile(og, base, inner, len, w, g);
      mxc__red_load_tile(y, base, inner, len, w, yb);
      softmax_grad_tile(is_log(op), sp->temperature, len, w, g, yb, s);
      mxc__red_store_tile(&out[0], base, inner, len, w, g, req[0]);
    }
  }
  return MXC_OK;
}

static const mxc__param_def k_params[] = {
    MXC__PARAM(softmax_param, axis, MXC__P_INT, "-1",
               "Axis to normalize along."),
    MXC__PARAM(softmax_param, temperature, MXC__P_OPT_FLOAT, "None",
               "Divides the input before normalizing (finite, non-zero; "
               "None means 1)."),
    MXC__PARAM(softmax_param, dtype, MXC__P_DTYPE, "None",
               "Output dtype (a float type); None: the input's."),
    MXC__PARAM(softmax_param, use_length, MXC__P_BOOL, "false",
               "Take a second input `length` (data's shape without axis): "
               "each row normalizes its first length elements, the rest "
               "are 0."),
};
static const char *const k_in_names[] = {"data", "length", NULL};

#define FWD_DESC(nm, doc_)                                             \
  {                                                                    \
    .name = nm, .doc = doc_, MXC__PARAMS_OF(softmax_param, k_params),  \
    .param_check = softmax_check,                                      \
    .num_inputs = fwd_num_inputs, .input_names = k_in_names,           \
    .n_outputs = 1,                                                    \
    .infer_shape = softmax_shape, .infer_type = softmax_type,          \
    .compute = softmax_forward,                                        \
    .gradient = softmax_gradient, /* the input only when dtype is set; \
                                     declared for safety */            \
        .backward_uses_inputs = 3, .backward_uses_outputs = 1,         \
    .resources = MXC__RES_TEMP,                                        \
  }
#define BWD_DESC(nm)                                                           \
  {                                                                            \
    MXC__BACKWARD(nm), MXC__PARAMS_OF(softmax_param, k_params),                \
    .param_check = softmax_check, .num_inputs = bwd_num_inputs,                \
    .input_name = bwd_input_name, .n_outputs = 1, .infer_shape = bwd_shape,    \
    .infer_type = bwd_type, .compute = softmax_backward,                       \
    .resources = MXC__RES_TEMP,                                                \
  }

static const mxc__op k_fwd[2] = {
    FWD_DESC("softmax",
             "exp(x/T) normalized to sum 1 along axis (same shape as x)."),
    FWD_DESC("log_softmax", "log(softmax(x)) along axis, computed stably."),
};
static const mxc__op k_bwd[2] = {BWD_DESC("softmax"), BWD_DESC("log_softmax")};

int mxc__reduce_register_softmax(mxc__registry *r) {
  for (int i = 0; i < 2; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
  }
  return MXC_OK;
}
