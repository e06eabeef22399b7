/* The rest of the family: add_n (variadic sum), clip, _copy and
 * BlockGrad. add_n and the accumulating write mode of the copies reuse
 * add's row kernels. */
#include <math.h>
#include <string.h>

#include "ops/binary/binary.h"

static const mxc__bin_impl *const k_add = &mxc__bin_impls[MXC__BIN_add];

/* dst = src (WRITE/INPLACE) or dst += src (ADD), any dtype. */
static void copy_req(const mxc__blob *src, const mxc__blob *dst,
                     mxc__req req) {
  int64_t n = mxc__shape_size(&src->shape);
  if (req == MXC__REQ_NULL) return;
  if (req == MXC__REQ_ADD) {
    mxc__bin_row(k_add, src->dtype, dst->ptr, 1, src->ptr, 1, dst->ptr, n, 0);
  } else if (dst->ptr != src->ptr && n > 0) {
    memcpy(dst->ptr, src->ptr, (size_t)n * mxc__dtype_size(src->dtype));
  }
}

/* ---- add_n ---- */

typedef struct add_n_param {
  int64_t num_args;
} add_n_param;

static const mxc__param_def k_add_n_params[] = {
    MXC__PARAM_RANGE(add_n_param, num_args, MXC__P_INT, NULL, 1,
                     MXC__OP_MAX_ARITY,
                     "Number of arrays to sum (>= 1)."),
};

static int add_n_count(const void *param) {
  return (int)((const add_n_param *)param)->num_args;
}

/* add_n's own inference: the shared helpers name inputs through
 * input_names, which has the one variadic name "args". */
static int add_n_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  (void)param, (void)n_out;
  const mxc__shape *known = out[0].ndim >= 0 ? &out[0] : NULL;
  int from = -1;
  char s1[160], s2[160];
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) continue;
    if (known && !mxc__shape_equal(known, &in[i])) {
      if (from < 0) {
        return mxc__error_set(MXC_ERR_SHAPE,
                              "operator '%s': args[%d] has shape %s but the "
                              "output has shape %s",
                              op->name, i,
                              mxc__shape_str(&in[i], s1, sizeof s1),
                              mxc__shape_str(known, s2, sizeof s2));
      }
      return mxc__error_set(MXC_ERR_SHAPE,
                            "operator '%s': args[%d] has shape %s but args[%d] "
                            "has shape %s; all arguments must have the same "
                            "shape",
                            op->name, i, mxc__shape_str(&in[i], s1, sizeof s1),
                            from, mxc__shape_str(known, s2, sizeof s2));
    }
    if (!known) {
      known = &in[i];
      from = i;
    }
  }
  if (!known) return MXC_OK;
  mxc__shape s = *known;
  for (int i = 0; i < n_in; ++i) in[i] = s;
  out[0] = s;
  return MXC_OK;
}

static int add_n_type(const mxc__op *op, const void *param, int *in,
                      int n_in, int *out, int n_out) {
  (void)param, (void)n_out;
  int t = out[0], from = -1;
  for (int i = 0; i < n_in; ++i) {
    if (in[i] < 0) continue;
    MXC_RETURN_ERROR_IF(t >= 0 && in[i] != t, MXC_ERR_DTYPE,
                        "operator '%s': args[%d] is %s but %s is %s; all "
                        "arguments must share a dtype",
                        op->name, i, mxc__dtype_name(in[i]),
                        from < 0 ? "the output" : "an earlier argument",
                        mxc__dtype_name(t));
    if (t < 0) t = in[i], from = i;
  }
  if (t < 0) return MXC_OK;
  for (int i = 0; i < n_in; ++i) in[i] = t;
  out[0] = t;
  return mxc__bin_check_dtype(op->name, k_add->flags, t, 0);
}

/* out = args[0] + args[1], then out += args[k] for the rest, through
 * add's kernels (with ADD, the first step accumulates into out). Every
 * step reads and writes element i together, so out may share args[0]'s
 * memory (the in-place pair). */
static int add_n_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)n_out;
  if (n_in == 1 || req[0] == MXC__REQ_NULL) {
    copy_req(&in[0], &out[0], req[0]);
    return MXC_OK;
  }
  int dt = in[0].dtype;
  int64_t n = mxc__shape_size(&out[0].shape);
  mxc__bin_row(k_add, dt, in[0].ptr, 1, in[1].ptr, 1, out[0].ptr, n,
               req[0] == MXC__REQ_ADD);
  for (int i = 2; i < n_in; ++i) {
    mxc__bin_row(k_add, dt, out[0].ptr, 1, in[i].ptr, 1, out[0].ptr, n, 0);
  }
  return MXC_OK;
}

/* The output gradient, unchanged, for every input (add_n, _copy). */
static int grad_pass(const mxc__node *fwd, const mxc__entry *ograd,
                     mxc__entry *igrad) {
  for (int i = 0; i < fwd->n_inputs; ++i) {
    igrad[i] = mxc__entry_ref(ograd[0].node, ograd[0].index);
  }
  return MXC_OK;
}

/* ---- clip ---- */

typedef struct clip_param {
  double a_min, a_max;
} clip_param;

static const mxc__param_def k_clip_params[] = {
    MXC__PARAM(clip_param, a_min, MXC__P_FLOAT, NULL, "Lower bound."),
    MXC__PARAM(clip_param, a_max, MXC__P_FLOAT, NULL, "Upper bound."),
};

static int clip_check(const char *op_name, void *param) {
  const clip_param *p = param;
  MXC_RETURN_ERROR_IF(!(p->a_min <= p->a_max), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': a_min (%g) must not exceed a_max (%g)",
                      op_name, p->a_min, p->a_max);
  return MXC_OK;
}

static int clip_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  return mxc__bin_check_dtype(op->name, op->hidden ? 0 : MXC__BIN_INT, in[0],
                              op->hidden);
}

#define CLIP_LOOP(T, x, y, n, lo, hi, add)             \
  for (int64_t i = 0; i < (n); ++i) {                  \
    T v = (x)[i];                                      \
    v = v < (lo) ? (lo) : v;                           \
    v = v > (hi) ? (hi) : v;                           \
    if (add) {                                         \
      (y)[i] += v;                                     \
    } else {                                           \
      (y)[i] = v;                                      \
    }                                                  \
  }

/* Half types clip in float chunks, integers in int64 with the bounds
 * rounded inward (clip(x, 0.5, 2.5) of integers lies in [1, 2]). */
static void clip_chunked(const mxc__blob *x, const mxc__blob *y,
                         const clip_param *p, int add) {
  int dt = x->dtype;
  int64_t n = mxc__shape_size(&x->shape);
  for (int64_t off = 0; off < n; off += MXC__BIN_CHUNK) {
    int64_t m = n - off < MXC__BIN_CHUNK ? n - off : MXC__BIN_CHUNK;
    void *src = mxc__bin_at(x->ptr, dt, off);
    void *dst = mxc__bin_at(y->ptr, dt, off);
    if (mxc__dtype_is_float(dt)) {
      float bx[MXC__BIN_CHUNK], by[MXC__BIN_CHUNK];
      float lo = (float)p->a_min, hi = (float)p->a_max;
      mxc__bin_load_f32(dt, src, m, bx);
      if (add) mxc__bin_load_f32(dt, dst, m, by);
      CLIP_LOOP(float, bx, by, m, lo, hi, add);
      mxc__bin_store_f32(dt, dst, m, by);
    } else {
      int64_t bx[MXC__BIN_CHUNK], by[MXC__BIN_CHUNK], bz[MXC__BIN_CHUNK];
      int64_t lo = mxc__f2i64(ceil(p->a_min));
      int64_t hi = mxc__f2i64(floor(p->a_max));
      mxc__bin_load_i64(dt, src, m, bx);
      CLIP_LOOP(int64_t, bx, bz, m, lo, hi, 0);
      if (add) { /* accumulating integers wrap (core/base/dtype.h) */
        mxc__bin_load_i64(dt, dst, m, by);
        for (int64_t i = 0; i < m; ++i) bz[i] = mxc__wrap_add(by[i], bz[i]);
      }
      mxc__bin_store_i64(dt, dst, m, bz);
    }
  }
}

static int clip_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  const clip_param *p = param;
  int64_t n = mxc__shape_size(&in[0].shape);
  int add = req[0] == MXC__REQ_ADD;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  if (in[0].dtype == MXC_DTYPE_FLOAT32) {
    const float *x = in[0].ptr;
    float *y = out[0].ptr, lo = (float)p->a_min, hi = (float)p->a_max;
    CLIP_LOOP(float, x, y, n, lo, hi, add);
  } else if (in[0].dtype == MXC_DTYPE_FLOAT64) {
    const double *x = in[0].ptr;
    double *y = out[0].ptr, lo = p->a_min, hi = p->a_max;
    CLIP_LOOP(double, x, y, n, lo, hi, add);
  } else {
    clip_chunked(&in[0], &out[0], p, add);
  }
  return MXC_OK;
}

/* _backward_clip: inputs (ograd, data); the gradient passes where
 * a_min <= x <= a_max, bounds included, as MXNet's clip gradient. */
static int clip_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)ctx, (void)n_in, (void)n_out;
  const clip_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t n = mxc__shape_size(&in[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    double x = mxc__blob_get(&in[1], i);
    double g = (p->a_min <= x && x <= p->a_max) ? mxc__blob_get(&in[0], i) : 0;
    if (req[0] == MXC__REQ_ADD) g += mxc__blob_get(&out[0], i);
    mxc__blob_set(&out[0], i, g);
  }
  return MXC_OK;
}

/* ---- _copy, BlockGrad ---- */

static int copy_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  return mxc__bin_check_dtype(op->name, MXC__BIN_INT, in[0], 0);
}

static int copy_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op, (void)ctx, (void)param, (void)n_in, (void)n_out;
  copy_req(&in[0], &out[0], req[0]);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_args[] = {"args", NULL};
static const char *const k_data[] = {"data", NULL};
static const char *const k_grad_data[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};
static const char *const k_add_n_aliases[] = {"ElementWiseSum", NULL};
static const char *const k_copy_aliases[] = {"identity", NULL};
static const char *const k_block_aliases[] = {"stop_gradient", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "add_n",
        .aliases = k_add_n_aliases,
        .doc = "Sum of num_args arrays of one shape and dtype.",
        MXC__PARAMS_OF(add_n_param, k_add_n_params),
        .num_inputs = add_n_count,
        .input_names = k_args,
        .n_outputs = 1,
        .infer_shape = add_n_shape,
        .infer_type = add_n_type,
        .compute = add_n_forward,
        .elementwise = 1,
        .gradient = grad_pass,
        MXC__INPLACE(k_inplace),
    },
    {
        .name = "clip",
        .doc = "Clips x to [a_min, a_max]; the gradient passes where "
               "a_min <= x <= a_max.",
        MXC__PARAMS_OF(clip_param, k_clip_params),
        .param_check = clip_check,
        .n_inputs = 1,
        .input_names = k_data,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = clip_type,
        .compute = clip_forward,
        .elementwise = 1,
        .gradient = mxc__grad_use_in,
        MXC__INPLACE(k_inplace),
        .backward_uses_inputs = 1,
    },
    {
        .name = "_backward_clip",
        .doc = "Gradient of clip.",
        MXC__PARAMS_OF(clip_param, k_clip_params),
        .param_check = clip_check,
        .n_inputs = 2,
        .input_names = k_grad_data,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = clip_type,
        .compute = clip_backward,
        .elementwise = 1,
        MXC__INPLACE(k_inplace),
        .hidden = 1,
    },
    {
        .name = "_copy",
        .aliases = k_copy_aliases,
        .doc = "A copy of the input.",
        .n_inputs = 1,
        .input_names = k_data,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = copy_type,
        .compute = copy_forward,
        .elementwise = 1,
        .gradient = grad_pass,
        MXC__INPLACE(k_inplace),
    },
    {
        .name = "BlockGrad",
        .aliases = k_block_aliases,
        .doc = "A copy of the input that stops gradients: its inputs get "
               "none.",
        .n_inputs = 1,
        .input_names = k_data,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = copy_type,
        .compute = copy_forward,
        .elementwise = 1,
        .gradient = mxc__grad_none,
        MXC__INPLACE(k_inplace),
    },
};

int mxc__bin_register_misc(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
