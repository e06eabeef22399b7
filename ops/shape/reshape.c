/* Operators that change the shape but not the row-major element order:
 * Reshape, Flatten, expand_dims, squeeze. The data is copied as is (or not
 * at all when the executor runs them in place); the gradient copies the
 * output gradient back into the input's shape (_backward_<op>, inputs
 * (ograd, data): data only supplies the shape). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ops/shape/shape_internal.h"

/* ---- Reshape ---- */

typedef struct reshape_param {
  mxc__tuple shape;
  int reverse;
} reshape_param;

static const mxc__param_def k_reshape_params[] = {
    MXC__PARAM(reshape_param, shape, MXC__P_TUPLE, NULL,
               "target shape; special codes: 0 copies the input dimension, "
               "-1 infers one dimension, -2 copies all remaining input "
               "dimensions, -3 merges two input dimensions, -4 splits one "
               "input dimension into the next two values (one may be -1)"),
    MXC__PARAM(reshape_param, reverse, MXC__P_BOOL, "false",
               "match the special codes against the input dimensions from "
               "right to left"),
};

/* One element of the shape parameter: a dimension (> 0), a code 0, -1,
 * -2, -3, or -4 with its two split values a, b. */
typedef struct rtoken {
  int64_t code, a, b;
} rtoken;

/* Splits the parameter into tokens and checks the codes, so that shape
 * inference only deals with shapes. Returns the token count or -1. */
static int reshape_tokens(const char *op_name, const mxc__tuple *t,
                          rtoken *tok) {
  char b1[256];
  int n = 0, n_infer = 0;
  for (int i = 0; i < t->ndim; ++i) {
    rtoken k = {t->d[i], 0, 0};
    if (k.code < -4) {
      mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                     "operator '%s': parameter 'shape' = %s has %" PRId64
                     " at position %d; accepted: positive sizes and the "
                     "codes 0, -1, -2, -3, -4",
                     op_name, mxc__shp_tuple_str(t, b1, sizeof b1), k.code, i);
      return -1;
    }
    if (k.code == -4) {
      if (i + 2 >= t->ndim || t->d[i + 1] < -1 || t->d[i + 2] < -1 ||
          t->d[i + 1] == 0 || t->d[i + 2] == 0 ||
          (t->d[i + 1] == -1 && t->d[i + 2] == -1)) {
        mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                       "operator '%s': parameter 'shape' = %s: code -4 at "
                       "position %d must be followed by two split sizes "
                       "(positive, at most one of them -1)",
                       op_name, mxc__shp_tuple_str(t, b1, sizeof b1), i);
        return -1;
      }
      k.a = t->d[++i];
      k.b = t->d[++i];
    }
    if (k.code == -1 && ++n_infer > 1) {
      mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                     "operator '%s': parameter 'shape' = %s has more than "
                     "one -1; only one dimension can be inferred",
                     op_name, mxc__shp_tuple_str(t, b1, sizeof b1));
      return -1;
    }
    tok[n++] = k;
  }
  return n;
}

static int reshape_check(const char *op_name, void *param) {
  reshape_param *p = param;
  rtoken tok[MXC__TUPLE_MAX];
  return reshape_tokens(op_name, &p->shape, tok) < 0 ? mxc__error_code()
                                                     : MXC_OK;
}

static int reshape_fail(const mxc__op *op, const reshape_param *p,
                        const mxc__shape *in, const char *why) {
  char b1[160], b2[256];
  return mxc__error_set(MXC_ERR_SHAPE,
                        "operator '%s': cannot reshape input of shape %s "
                        "with shape=%s%s: %s",
                        op->name, MXC__SHP_STR(in, b1),
                        mxc__shp_tuple_str(&p->shape, b2, sizeof b2),
                        p->reverse ? " (reverse)" : "", why);
}

/* The element count of dims[0..n) in *out; 0 when the product of the
 * non-zero extents overflows int64 (such a target never matches an
 * input, whose extents satisfy the shape invariant). */
static int target_size(const int64_t *dims, int n, int64_t *out) {
  int64_t prod = 1;
  int zero = 0;
  for (int k = 0; k < n; ++k) {
    if (dims[k] == 0) {
      zero = 1;
    } else if (!mxc__mul_i64(prod, dims[k], &prod)) {
      return 0;
    }
  }
  *out = zero ? 0 : prod;
  return 1;
}

/* MXNet's Reshape rules. With reverse, the tokens and the input dims are
 * both read right to left (a -4 group stays one token, its split order
 * swapped), and the result is reversed back. */
static int reshape_apply(const mxc__op *op, const reshape_param *p,
                         const mxc__shape *in, mxc__shape *res) {
  rtoken tok[MXC__TUPLE_MAX];
  int n_tok = reshape_tokens(op->name, &p->shape, tok);
  if (n_tok < 0) return mxc__error_code();
  int nd = in->ndim;
  int64_t src[MXC_MAX_NDIM];
  for (int k = 0; k < nd; ++k)
    src[k] = p->reverse ? in->dims[nd - 1 - k] : in->dims[k];
  if (p->reverse) {
    for (int i = 0; i < n_tok / 2; ++i) {
      rtoken t = tok[i];
      tok[i] = tok[n_tok - 1 - i];
      tok[n_tok - 1 - i] = t;
    }
    for (int i = 0; i < n_tok; ++i) {
      int64_t t = tok[i].a;
      tok[i].a = tok[i].b;
      tok[i].b = t;
    }
  }
  int64_t out[MXC__TUPLE_MAX + MXC_MAX_NDIM];
  int no = 0, si = 0, inf = -1;
  char why[160];
  for (int i = 0; i < n_tok; ++i) {
    const rtoken *t = &tok[i];
    int adds = t->code == -2 ? nd - si : t->code == -4 ? 2 : 1;
    if (no + adds > MXC_MAX_NDIM) {
      return reshape_fail(op, p, in, "the result has too many dimensions");
    }
    if (t->code > 0) {
      out[no++] = t->code;
      si++; /* a given size stands for one input dimension (MXNet) */
    } else if (t->code == 0) {
      if (si >= nd)
        return reshape_fail(op, p, in,
                            "code 0 has no input dimension left to copy");
      out[no++] = src[si++];
    } else if (t->code == -1) {
      inf = no;
      out[no++] = 1;
      si++;
    } else if (t->code == -2) {
      while (si < nd) out[no++] = src[si++];
    } else if (t->code == -3) {
      if (si + 1 >= nd)
        return reshape_fail(op, p, in,
                            "code -3 needs two input dimensions to merge");
      out[no++] = src[si] * src[si + 1];
      si += 2;
    } else { /* -4 */
      if (si >= nd)
        return reshape_fail(op, p, in,
                            "code -4 has no input dimension left to split");
      int64_t d0 = src[si++], a = t->a, b = t->b;
      if (a == -1) a = d0 / b;
      if (b == -1) b = d0 / a;
      int64_t ab;
      if (!mxc__mul_i64(a, b, &ab) || ab != d0) {
        snprintf(why, sizeof why,
                 "split sizes %" PRId64 " and %" PRId64
                 " do not multiply to the input dimension %" PRId64,
                 p->reverse ? b : a, p->reverse ? a : b, d0);
        return reshape_fail(op, p, in, why);
      }
      out[no++] = a;
      out[no++] = b;
    }
  }
  int64_t total = mxc__shape_size(in), prod;
  if (!target_size(out, no, &prod)) {
    return reshape_fail(op, p, in, "the target shape has too many elements");
  }
  if (inf >= 0) {
    /* prod includes the placeholder 1 of the inferred dimension. */
    if (prod == 0 || total % prod != 0) {
      snprintf(why, sizeof why,
               "the other dimensions (product %" PRId64
               ") do not divide the input size %" PRId64,
               prod, total);
      return reshape_fail(op, p, in, why);
    }
    out[inf] = total / prod;
    prod = total;
  }
  if (p->reverse) {
    for (int k = 0; k < no / 2; ++k) {
      int64_t t = out[k];
      out[k] = out[no - 1 - k];
      out[no - 1 - k] = t;
    }
  }
  *res = mxc__shp_make(out, no);
  if (prod != total) {
    char b1[160];
    snprintf(why, sizeof why,
             "the target shape %s has %" PRId64
             " elements but the input has %" PRId64,
             MXC__SHP_STR(res, b1), prod, total);
    return reshape_fail(op, p, in, why);
  }
  return MXC_OK;
}

static int reshape_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(reshape_apply(op, param, &in[0], &s));
  return mxc__shp_set_out(op, out, 0, &s);
}

/* ---- Flatten ---- */

static int flatten_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  /* A 0-d input flattens to (1,1), like a 1-element (1) input. */
  int64_t d[2] = {in[0].ndim ? in[0].dims[0] : 1, 1};
  for (int k = 1; k < in[0].ndim; ++k) d[1] *= in[0].dims[k];
  mxc__shape s = mxc__shp_make(d, 2);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* ---- expand_dims ---- */

typedef struct expand_param {
  int64_t axis;
} expand_param;

static const mxc__param_def k_expand_params[] = {
    MXC__PARAM(expand_param, axis, MXC__P_INT, NULL,
               "position of the new extent-1 axis in the output, in "
               "[-ndim-1, ndim]"),
};

static int expand_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  const expand_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  int nd = in[0].ndim, ax;
  MXC_RETURN_ERROR_IF(nd == MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': the input already has %d dimensions, "
                      "the most an array can have",
                      op->name, nd);
  MXC_FORWARD_IF_ERROR(mxc__shp_axis(op->name, "axis", p->axis, nd + 1, &ax));
  int64_t d[MXC_MAX_NDIM];
  for (int k = 0, j = 0; k <= nd; ++k) d[k] = k == ax ? 1 : in[0].dims[j++];
  mxc__shape s = mxc__shp_make(d, nd + 1);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* ---- squeeze ---- */

typedef struct squeeze_param {
  mxc__tuple axis;
} squeeze_param;

static const mxc__param_def k_squeeze_params[] = {
    MXC__PARAM(squeeze_param, axis, MXC__P_TUPLE, "None",
               "axes to remove (each must have extent 1); None removes "
               "every extent-1 axis"),
};

static int squeeze_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  const squeeze_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  int nd = in[0].ndim;
  int drop[MXC_MAX_NDIM] = {0};
  if (p->axis.ndim < 0) {
    for (int k = 0; k < nd; ++k) drop[k] = in[0].dims[k] == 1;
  }
  for (int i = 0; i < p->axis.ndim; ++i) {
    int ax;
    MXC_FORWARD_IF_ERROR(
        mxc__shp_axis(op->name, "axis", p->axis.d[i], nd, &ax));
    MXC_RETURN_ERROR_IF(drop[ax], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter 'axis' names axis %d twice",
                        op->name, ax);
    char b1[160];
    MXC_RETURN_ERROR_IF(in[0].dims[ax] != 1, MXC_ERR_SHAPE,
                        "operator '%s': axis %d of the input (shape %s) has "
                        "extent %" PRId64
                        "; only extent-1 axes can be "
                        "squeezed",
                        op->name, ax, MXC__SHP_STR(&in[0], b1), in[0].dims[ax]);
    drop[ax] = 1;
  }
  int64_t d[MXC_MAX_NDIM];
  int no = 0;
  for (int k = 0; k < nd; ++k) {
    if (!drop[k]) d[no++] = in[0].dims[k];
  }
  /* As in MXNet, squeezing every axis of (1,...,1) leaves (1), not a
   * scalar. */
  if (no == 0 && nd > 0) d[no++] = 1;
  mxc__shape s = mxc__shp_make(d, no);
  return mxc__shp_set_out(op, out, 0, &s);
}

/* ---- compute, shared ---- */

static int copy_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  mxc__shp_copy_flat(&out[0], &in[0], req[0]);
  return MXC_OK;
}

/* _backward_*: inputs (ograd, data); the gradient has data's shape. */
static int copy_back_shape(const mxc__op *op, const void *param, mxc__shape *in,
                           int n_in, mxc__shape *out, int n_out) {
  if (in[1].ndim < 0) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(
      in[0].ndim >= 0 && mxc__shape_size(&in[0]) != mxc__shape_size(&in[1]),
      MXC_ERR_SHAPE,
      "operator '%s': output gradient of shape %s does not "
      "have the size of the input of shape %s",
      op->name, MXC__SHP_STR(&in[0], b1), MXC__SHP_STR(&in[1], b2));
  return mxc__shp_set_out(op, out, 0, &in[1]);
}

/* ---- descriptors ---- */

static const char *const k_data[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};

#define FWD(var, nm, alias_list, doc_, params_, shape_fn) \
  static const mxc__op var = {                            \
      .name = nm,                                         \
      .aliases = alias_list,                              \
      .doc = doc_,                                        \
      params_,                                            \
      .n_inputs = 1,                                      \
      .input_names = k_data,                              \
      .n_outputs = 1,                                     \
      .infer_shape = shape_fn,                            \
      .compute = copy_forward,                            \
      .gradient = mxc__grad_use_in,                       \
      MXC__INPLACE(k_inplace),                            \
      .backward_uses_inputs = 1,                          \
  }

#define BWD(var, nm, params_)                                           \
  static const mxc__op var = {                                          \
      MXC__BACKWARD_DOC(nm, "Gradient of " nm                           \
                                ": the output gradient in the input's " \
                                "shape."),                              \
      params_,                                                          \
      .n_inputs = 2,                                                    \
      .input_names = k_bwd_in,                                          \
      .n_outputs = 1,                                                   \
      .infer_shape = copy_back_shape,                                   \
      .compute = copy_forward,                                          \
      MXC__INPLACE(k_inplace),                                          \
  }

#define RESHAPE_PARAMS \
  MXC__PARAMS_OF(reshape_param, k_reshape_params), .param_check = reshape_check
#define NO_PARAMS .params = NULL

static const char *const k_reshape_alias[] = {"reshape", NULL};
static const char *const k_flatten_alias[] = {"flatten", NULL};

FWD(k_reshape, "Reshape", k_reshape_alias,
    "Same elements in a new shape (MXNet codes 0, -1, -2, -3, -4 and "
    "reverse).",
    RESHAPE_PARAMS, reshape_shape);
BWD(k_reshape_bwd, "Reshape", RESHAPE_PARAMS);
FWD(k_flatten, "Flatten", k_flatten_alias,
    "Collapses all axes but the first: (d0, d1*...*dn).", NO_PARAMS,
    flatten_shape);
BWD(k_flatten_bwd, "Flatten", NO_PARAMS);
FWD(k_expand, "expand_dims", NULL, "Inserts an extent-1 axis at position axis.",
    MXC__PARAMS_OF(expand_param, k_expand_params), expand_shape);
BWD(k_expand_bwd, "expand_dims",
    MXC__PARAMS_OF(expand_param, k_expand_params));
FWD(k_squeeze, "squeeze", NULL,
    "Removes extent-1 axes (the listed ones, or all).",
    MXC__PARAMS_OF(squeeze_param, k_squeeze_params), squeeze_shape);
BWD(k_squeeze_bwd, "squeeze", MXC__PARAMS_OF(squeeze_param, k_squeeze_params));

int mxc__shp_register_reshape(mxc__registry *r) {
  static const mxc__op *const ops[] = {
      &k_reshape,     &k_reshape_bwd, &k_flatten,
      &k_flatten_bwd, &k_expand,      &k_expand_bwd,
      &k_squeeze,     &k_squeeze_bwd, NULL};
  return mxc__shp_add_all(r, ops);
}
