/* Initialization operators: _zeros, _ones, _full, _arange, _eye (no
 * inputs: the shape and dtype come from parameters and core/op/invoke.c puts
 * the output on the CPU), and zeros_like / ones_like (shape and dtype of
 * their one input, whose values are never read). None has a gradient. */
#include <math.h>

#include "core/op/registry.h"
#include "ops/indexing/init_params.h"
#include "ops/indexing/internal.h"

/* 2^62: a bound on element counts computed in double. */
#define COUNT_LIMIT 4611686018427387904.0

/* dtype -1 ("None") means the default, float32. */
static int dtype_or_default(int dt) { return dt < 0 ? MXC_DTYPE_FLOAT32 : dt; }

/* The output dtype comes from the parameter: operators without inputs
 * have nothing else to take it from (invoke passes -1, unknown). */
static int type_from_param(const mxc__op *op, int dtype, int *out) {
  int t = dtype_or_default(dtype);
  MXC_RETURN_ERROR_IF(out[0] >= 0 && out[0] != t, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s (the "
                      "dtype parameter)",
                      op->name, mxc__dtype_name(out[0]), mxc__dtype_name(t));
  out[0] = t;
  return MXC_OK;
}

/* A validated output shape from dims (extents >= 0, size within int64). */
static int shape_from(const mxc__op *op, const int64_t *dims, int ndim,
                      int dtype, mxc__shape *slot) {
  char what[96];
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(
      dims, ndim, mxc__dtype_size(dtype_or_default(dtype)),
      mxc__idx_what(what, sizeof what, op->name, "parameter 'shape'"), &s));
  return mxc__idx_assign_shape(op, slot, &s, "output 0");
}

/* ---- _zeros, _ones, _full ---- */

typedef mxc__fill_param fill_param;

#define SHAPE_DEF                                                       \
  MXC__PARAM(fill_param, shape, MXC__P_TUPLE, NULL,                     \
             "Shape of the output, e.g. (2,3); () is a scalar, zero "   \
             "extents give an empty array.")
#define DTYPE_DEF(st)                                        \
  MXC__PARAM(st, dtype, MXC__P_DTYPE, "float32", "Dtype of the output.")

static const mxc__param_def k_fill_params[] = {SHAPE_DEF,
                                               DTYPE_DEF(fill_param)};
static const mxc__param_def k_full_params[] = {
    SHAPE_DEF, DTYPE_DEF(fill_param),
    MXC__PARAM(fill_param, value, MXC__P_FLOAT, NULL,
               "Value of every element."),
};

static int fill_check(const char *op_name, void *param) {
  const fill_param *p = param;
  MXC_RETURN_ERROR_IF(p->shape.ndim < 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'shape' must be a tuple "
                      "such as (2,3), not None",
                      op_name);
  return MXC_OK;
}

/* MXNet reads a 0 extent of the shape parameter as "unknown" in graphs
 * (every mx.rnn begin state is _zeros(shape=(0, H))): an output shape a
 * graph already knows fits when it agrees on the rank and on every
 * non-zero extent. Otherwise the zeros are extents, so that an imperative
 * call gives the empty array asked for (graph inference defers such
 * shapes until nothing else can be deduced, core/graph/infer.c). */
static int fits_partial(const mxc__tuple *t, const mxc__shape *s) {
  if (s->ndim != t->ndim) return 0;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->d[i] != 0 && t->d[i] != s->dims[i]) return 0;
  }
  return 1;
}

static int fill_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  const fill_param *p = param;
  if (out[0].ndim >= 0 && fits_partial(&p->shape, &out[0])) return MXC_OK;
  return shape_from(op, p->shape.d, p->shape.ndim, p->dtype, &out[0]);
}

static int fill_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  return type_from_param(op, ((const fill_param *)param)->dtype, out);
}

static int zeros_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)in, (void)n_in, (void)n_out;
  mxc__idx_fill(&out[0], 0, req[0]);
  return MXC_OK;
}

static int ones_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out,
                        const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)in, (void)n_in, (void)n_out;
  mxc__idx_fill(&out[0], 1, req[0]);
  return MXC_OK;
}

static int full_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out,
                        const mxc__req *req) {
  (void)op, (void)ctx, (void)in, (void)n_in, (void)n_out;
  mxc__idx_fill(&out[0], ((const fill_param *)param)->value, req[0]);
  return MXC_OK;
}

/* ---- _arange ---- */

typedef mxc__arange_param arange_param;

static const mxc__param_def k_arange_params[] = {
    MXC__PARAM(arange_param, start, MXC__P_FLOAT, NULL,
               "Start of the interval (its end when stop is not given)."),
    MXC__PARAM(arange_param, stop, MXC__P_OPT_FLOAT, "None",
               "End of the interval (excluded); None (the default) means "
               "the interval is [0, start)."),
    MXC__PARAM(arange_param, step, MXC__P_FLOAT, "1",
               "Spacing between values; nonzero."),
    MXC__PARAM_RANGE(arange_param, repeat, MXC__P_INT, "1", 1, 2147483647.0,
                     "Times each value is repeated."),
    MXC__PARAM(arange_param, infer_range, MXC__P_BOOL, "false",
               "Accepted for MXNet compatibility; only false is supported."),
    DTYPE_DEF(arange_param),
};

static int arange_check(const char *op_name, void *param) {
  arange_param *p = param;
  MXC_RETURN_ERROR_IF(p->step == 0 || !isfinite(p->step) ||
                          !isfinite(p->start) || isinf(p->stop),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': start (%g), stop (%g) and step (%g) "
                      "must be finite and step nonzero",
                      op_name, p->start, p->stop, p->step);
  MXC_RETURN_ERROR_IF(p->infer_range, MXC_ERR_UNSUPPORTED,
                      "operator '%s': infer_range=true is not supported; "
                      "give stop",
                      op_name);
  if (isnan(p->stop)) { /* arange(n) is [0, n), as in MXNet and numpy */
    p->stop = p->start;
    p->start = 0;
  }
  return MXC_OK;
}

static int arange_shape(const mxc__op *op, const void *param, mxc__shape *in,
                        int n_in, mxc__shape *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  const arange_param *p = param;
  double n = ceil((p->stop - p->start) / p->step);
  if (!(n > 0)) n = 0; /* an empty interval is an empty array */
  MXC_RETURN_ERROR_IF(n * (double)p->repeat > COUNT_LIMIT, MXC_ERR_SHAPE,
                      "operator '%s': [%g, %g) by %g repeated %lld times "
                      "has too many elements",
                      op->name, p->start, p->stop, p->step,
                      (long long)p->repeat);
  int64_t len = (int64_t)n * p->repeat;
  return shape_from(op, &len, 1, p->dtype, &out[0]);
}

static int arange_type(const mxc__op *op, const void *param, int *in,
                       int n_in, int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  return type_from_param(op, ((const arange_param *)param)->dtype, out);
}

/* Values are computed in the output dtype, as MXNet does: start + (i /
 * repeat) * step with start and step converted first (so integer dtypes
 * truncate them). Half types compute in float. */
static int arange_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)op, (void)ctx, (void)in, (void)n_in, (void)n_out;
  const arange_param *p = param;
  const mxc__blob *o = &out[0];
  int64_t n = mxc__shape_size(&o->shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (o->dtype == MXC_DTYPE_FLOAT64) {
    double *d = o->ptr;
    for (int64_t i = 0; i < n; ++i) {
      double v = p->start + (double)(i / p->repeat) * p->step;
      MXC__ASSIGN(req[0], d[i], v);
    }
    return MXC_OK;
  }
  if (o->dtype == MXC_DTYPE_FLOAT32) {
    float *d = o->ptr, start = (float)p->start, step = (float)p->step;
    for (int64_t i = 0; i < n; ++i) {
      float v = start + (float)(i / p->repeat) * step;
      MXC__ASSIGN(req[0], d[i], v);
    }
    return MXC_OK;
  }
  int integral = !mxc__dtype_is_float(o->dtype);
  double start = integral ? trunc(p->start) : (float)p->start;
  double step = integral ? trunc(p->step) : (float)p->step;
  for (int64_t i = 0; i < n; ++i) {
    double v = start + (double)(i / p->repeat) * step;
    if (!integral) v = (float)v;
    if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(o, i);
    mxc__blob_set(o, i, v);
  }
  return MXC_OK;
}

/* ---- _eye ---- */

typedef mxc__eye_param eye_param;

static const mxc__param_def k_eye_params[] = {
    {"N", MXC__P_INT, offsetof(eye_param, n), NULL, "Number of rows.", 0,
     COUNT_LIMIT, NULL},
    {"M", MXC__P_INT, offsetof(eye_param, m), "0",
     "Number of columns; 0 means N.", 0, COUNT_LIMIT, NULL},
    MXC__PARAM(eye_param, k, MXC__P_INT, "0",
               "Diagonal: 0 the main one, > 0 above, < 0 below."),
    DTYPE_DEF(eye_param),
};

static int64_t eye_cols(const eye_param *p) { return p->m ? p->m : p->n; }

static int eye_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  const eye_param *p = param;
  int64_t dims[2] = {p->n, eye_cols(p)};
  return shape_from(op, dims, 2, p->dtype, &out[0]);
}

static int eye_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  return type_from_param(op, ((const eye_param *)param)->dtype, out);
}

static int eye_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out,
                       const mxc__req *req) {
  (void)op, (void)ctx, (void)in, (void)n_in, (void)n_out;
  const eye_param *p = param;
  int64_t cols = eye_cols(p);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (req[0] != MXC__REQ_ADD) mxc__idx_fill(&out[0], 0, req[0]);
  /* A diagonal outside the matrix has no element; inside it, |k| is below
   * an extent, so i + k cannot overflow. */
  if (p->k >= cols || p->k <= -p->n) return MXC_OK;
  for (int64_t i = 0; i < p->n; ++i) {
    int64_t j = i + p->k;
    if (j < 0 || j >= cols) continue;
    int64_t at = i * cols + j;
    double base = req[0] == MXC__REQ_ADD ? mxc__blob_get(&out[0], at) : 0;
    mxc__blob_set(&out[0], at, base + 1);
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_like_in[] = {"data", NULL};
static const char *const k_zeros_alias[] = {"zeros", NULL};
static const char *const k_ones_alias[] = {"ones", NULL};
static const char *const k_full_alias[] = {"full", NULL};
static const char *const k_arange_alias[] = {"arange", NULL};
static const char *const k_eye_alias[] = {"eye", NULL};

#define NO_INPUT_OP(nm, alias, doc_, params_, pstruct, check, shape_fn,      \
                    type_fn, fn)                                             \
  {                                                                          \
    .name = nm, .aliases = alias, .doc = doc_,                               \
    MXC__PARAMS_OF(pstruct, params_), .param_check = check, .n_inputs = 0,   \
    .n_outputs = 1, .infer_shape = shape_fn, .infer_type = type_fn,          \
    .compute = fn, .gradient = mxc__grad_none,                               \
  }
#define LIKE_OP(nm, doc_, fn)                                                \
  {                                                                          \
    .name = nm, .doc = doc_, .n_inputs = 1, .input_names = k_like_in,        \
    .n_outputs = 1, .infer_shape = mxc__infer_shape_same,                    \
    .infer_type = mxc__infer_type_same, .compute = fn,                       \
    .gradient = mxc__grad_none,                                              \
  }

static const mxc__op k_ops[] = {
    NO_INPUT_OP("_zeros", k_zeros_alias, "An array of zeros of the given "
                "shape and dtype.", k_fill_params, fill_param, fill_check,
                fill_shape, fill_type, zeros_forward),
    NO_INPUT_OP("_ones", k_ones_alias, "An array of ones of the given "
                "shape and dtype.", k_fill_params, fill_param, fill_check,
                fill_shape, fill_type, ones_forward),
    NO_INPUT_OP("_full", k_full_alias, "An array of the given shape and "
                "dtype with every element equal to value.", k_full_params,
                fill_param, fill_check, fill_shape, fill_type, full_forward),
    NO_INPUT_OP("_arange", k_arange_alias, "Evenly spaced values start, "
                "start+step, ... below stop (each repeated `repeat` times), "
                "a 1-D array; without stop, [0, start).", k_arange_params,
                arange_param, arange_check, arange_shape, arange_type,
                arange_forward),
    NO_INPUT_OP("_eye", k_eye_alias, "An N x M matrix with ones on "
                "diagonal k and zeros elsewhere.", k_eye_params, eye_param,
                NULL, eye_shape, eye_type, eye_forward),
    LIKE_OP("zeros_like", "Zeros with the shape and dtype of data.",
            zeros_forward),
    LIKE_OP("ones_like", "Ones with the shape and dtype of data.",
            ones_forward),
};

int mxc__idx_register_init(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
