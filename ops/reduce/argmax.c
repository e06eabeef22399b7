/* argmax / argmin: the position of the largest / smallest element along
 * one axis, or in the flattened array when axis is None. As in MXNet the
 * positions are returned in the input's dtype (float32 input: float32
 * indices; int8 input: int8 indices, saturating at 127 as a float index
 * stored into int8 does: MXNet 1.x's ElemwiseType rule). Ties give the first position; NaN counts as the extreme value
 * (the first NaN wins, as in NumPy). Not differentiable. */
#include <math.h>

#include "ops/reduce/arg_params.h"
#include "ops/reduce/reduce_impl.h"

typedef mxc__arg_param arg_param;

/* Reduced axes: one, or all when axis is None. */
static int arg_mask(const mxc__op *op, const arg_param *ap, int ndim,
                    uint32_t *mask) {
  if (!ap->axis.has) {
    *mask = ndim ? (uint32_t)((1ull << ndim) - 1) : 0;
    return MXC_OK;
  }
  int a = 0;
  MXC_FORWARD_IF_ERROR(mxc__red_axis(op->name, "axis", ap->axis.v, ndim, &a));
  *mask = 1u << a;
  return MXC_OK;
}

#define LD_PLAIN(x) (x)
#define LD_F16(x) mxc__f16_to_f32(x)
#define LD_BF16(x) mxc__bf16_to_f32(x)
#define ISNAN_F(x) isnan(x)
#define ISNAN_I(x) 0

/* best[o] / pos[o]: the extreme value so far and its position in the
 * group. Elements of a group arrive in increasing position (see
 * reduce_impl.h), so replacing only on a strict improvement keeps the
 * first of equal values. */
#define DEF_ARG(sfx, T, VT, A, LD, ISNAN)                                 \
  static void arg_##sfx(const mxc__red_plan *p, int is_max,               \
                        const mxc__blob *in, void *bestv, int64_t *pos) { \
    A *best = bestv;                                                      \
    const T *x = in->ptr;                                                 \
    for (int64_t o = 0; o < p->n_out; ++o) {                              \
      best[o] = 0;                                                        \
      pos[o] = -1;                                                        \
    }                                                                     \
    mxc__red_iter it;                                                     \
    mxc__red_iter_init(&it, p);                                           \
    for (int64_t k = 0; k < it.rows; ++k, mxc__red_iter_next(&it)) {      \
      const T *row = x + k * it.len;                                      \
      for (int64_t j = 0; j < it.len; ++j) {                              \
        VT v = LD(row[j]);                                                \
        int64_t o = it.o + j * it.os;                                     \
        A b = best[o];                                                    \
        int better = is_max ? v > b : v < b;                              \
        if (pos[o] < 0 || better || (ISNAN(v) && !ISNAN(b))) {            \
          best[o] = v;                                                    \
          pos[o] = it.r + j * it.rs;                                      \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  }

DEF_ARG(f32, float, float, double, LD_PLAIN, ISNAN_F)
DEF_ARG(f64, double, double, double, LD_PLAIN, ISNAN_F)
DEF_ARG(f16, uint16_t, float, double, LD_F16, ISNAN_F)
DEF_ARG(bf16, uint16_t, float, double, LD_BF16, ISNAN_F)
DEF_ARG(i32, int32_t, int32_t, int64_t, LD_PLAIN, ISNAN_I)
DEF_ARG(i64, int64_t, int64_t, int64_t, LD_PLAIN, ISNAN_I)
DEF_ARG(i8, int8_t, int8_t, int64_t, LD_PLAIN, ISNAN_I)
DEF_ARG(u8, uint8_t, uint8_t, int64_t, LD_PLAIN, ISNAN_I)

typedef void (*arg_kernel)(const mxc__red_plan *, int, const mxc__blob *,
                           void *, int64_t *);

static arg_kernel kernel_for(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32:
      return arg_f32;
    case MXC_DTYPE_FLOAT64:
      return arg_f64;
    case MXC_DTYPE_FLOAT16:
      return arg_f16;
    case MXC_DTYPE_BFLOAT16:
      return arg_bf16;
    case MXC_DTYPE_INT32:
      return arg_i32;
    case MXC_DTYPE_INT64:
      return arg_i64;
    case MXC_DTYPE_INT8:
      return arg_i8;
    case MXC_DTYPE_UINT8:
      return arg_u8;
    default:
      return NULL;
  }
}

static int arg_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  const arg_param *ap = param;
  if (in[0].ndim < 0) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(arg_mask(op, ap, in[0].ndim, &mask));
  mxc__red_plan p;
  mxc__red_plan_make(&in[0], mask, &p);
  char b[160];
  MXC_RETURN_ERROR_IF(p.n_red == 0 && p.n_out > 0, MXC_ERR_SHAPE,
                      "operator '%s': cannot search input of shape %s along "
                      "a zero-size axis",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape s;
  mxc__red_out_shape(&in[0], mask, ap->keepdims, &s);
  return mxc__red_set_shape(op->name, "output 0", &out[0], &s);
}

static int arg_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  if (in[0] >= 0 && !kernel_for(in[0])) {
    return mxc__unsupported_dtype(op->name, in[0],
                                  "expected float32, float64, float16, "
                                  "bfloat16, int8, uint8, int32 or int64");
  }
  return MXC_OK;
}

static const mxc__op k_ops[2];

static int arg_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(arg_mask(op, param, in[0].shape.ndim, &mask));
  mxc__red_plan p;
  mxc__red_plan_make(&in[0].shape, mask, &p);
  arg_kernel k = kernel_for(in[0].dtype);
  if (!k) return mxc__unsupported_dtype(op->name, in[0].dtype, NULL);
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__red_temp(op, ctx, (size_t)p.n_out * 16, &t));
  int64_t *pos = (int64_t *)t + p.n_out; /* values first, 8 bytes each */
  k(&p, op == &k_ops[0], &in[0], t, pos);
  for (int64_t o = 0; o < p.n_out; ++o) {
    double v = (double)pos[o];
    if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], o);
    mxc__blob_set(&out[0], o, v);
  }
  return MXC_OK;
}

static const mxc__param_def k_params[] = {
    MXC__PARAM(arg_param, axis, MXC__P_OPT_INT, "None",
               "Axis to search along; None searches the flattened input."),
    MXC__PARAM(arg_param, keepdims, MXC__P_BOOL, "false",
               "Keep the searched axis (or all axes for None) as extent 1."),
};
static const char *const k_in_names[] = {"data", NULL};

#define ARG_DESC(nm, doc_)                                                     \
  {                                                                            \
    .name = nm, .doc = doc_, MXC__PARAMS_OF(arg_param, k_params),              \
    .n_inputs = 1, .input_names = k_in_names,                                  \
    .n_outputs = 1, .infer_shape = arg_shape, .infer_type = arg_type,          \
    .compute = arg_forward, .gradient = mxc__grad_none,                        \
    .resources = MXC__RES_TEMP,                                                \
  }

static const mxc__op k_ops[2] = {
    ARG_DESC("argmax",
             "Index of the maximum along axis (first on ties), in the "
             "input's dtype."),
    ARG_DESC("argmin",
             "Index of the minimum along axis (first on ties), in the "
             "input's dtype."),
};

int mxc__reduce_register_arg(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[0]));
  return mxc__registry_add(r, &k_ops[1]);
}
