/* Axis reductions: sum, mean, prod, max, min, nansum, nanprod, norm, their
 * _backward_ operators (kernels in reduce_grad.c), and the family's
 * registration function.
 *
 * Parameters follow MXNet: axis (tuple; None or () reduces every axis,
 * negative axes count from the end, duplicates are an error), keepdims
 * (reduced axes stay as 1), exclude (reduce every axis not listed). A full
 * reduction without keepdims gives shape (1,), as MXNet 1.9 (NumPy would
 * give a 0-d array).
 *
 * Accumulation is in double for float types (float32 sums keep their
 * accuracy over long axes) and in 64-bit integers for int8, uint8, int32
 * and int64, exactly and with wrap-around on overflow as in NumPy; the
 * output keeps the input's dtype (MXNet's rule for every reduction). max/min propagate NaN (NumPy), and
 * reject zero-size reductions since they have no identity. norm sums
 * squares in double, so float64 inputs beyond ~1e154 overflow. */
#include <math.h>

#include "ops/families.h"
#include "ops/reduce/reduce_impl.h"
#include "core/op/registry.h"

/* The struct is in reduce_impl.h: the GPU plug-in reads it too. */
typedef mxc__red_param red_param;

/* ---- kernels ---- */

static inline void st_f32(const mxc__blob *b, int64_t o, double v,
                          mxc__req req) {
  MXC__ASSIGN(req, ((float *)b->ptr)[o], (float)v);
}
static inline void st_f64(const mxc__blob *b, int64_t o, double v,
                          mxc__req req) {
  MXC__ASSIGN(req, ((double *)b->ptr)[o], v);
}
static inline void st_f16(const mxc__blob *b, int64_t o, double v,
                          mxc__req req) {
  uint16_t *y = b->ptr;
  float f = (float)v;
  if (req == MXC__REQ_ADD) f += mxc__f16_to_f32(y[o]);
  y[o] = mxc__f32_to_f16(f);
}
static inline void st_bf16(const mxc__blob *b, int64_t o, double v,
                           mxc__req req) {
  uint16_t *y = b->ptr;
  float f = (float)v;
  if (req == MXC__REQ_ADD) f += mxc__bf16_to_f32(y[o]);
  y[o] = mxc__f32_to_bf16(f);
}
/* Integers add in unsigned arithmetic: overflow wraps instead of being
 * undefined. */
static inline void st_i32(const mxc__blob *b, int64_t o, uint64_t v,
                          mxc__req req) {
  int32_t *y = b->ptr;
  if (req == MXC__REQ_ADD) v += (uint64_t)(int64_t)y[o];
  y[o] = (int32_t)(int64_t)v;
}
static inline void st_i64(const mxc__blob *b, int64_t o, uint64_t v,
                          mxc__req req) {
  int64_t *y = b->ptr;
  if (req == MXC__REQ_ADD) v += (uint64_t)y[o];
  y[o] = (int64_t)v;
}
static inline void st_i8(const mxc__blob *b, int64_t o, uint64_t v,
                         mxc__req req) {
  int8_t *y = b->ptr;
  if (req == MXC__REQ_ADD) v += (uint64_t)(int64_t)y[o];
  y[o] = (int8_t)(int64_t)v;
}
static inline void st_u8(const mxc__blob *b, int64_t o, uint64_t v,
                         mxc__req req) {
  uint8_t *y = b->ptr;
  if (req == MXC__REQ_ADD) v += y[o];
  y[o] = (uint8_t)v;
}

/* Integer mean as MXNet computes it: the sum wrapped to the dtype, then
 * divided by the group size in the dtype (truncating toward zero). An
 * empty group gives 0 (integers have no NaN). */
#define DEF_IMEAN(sfx, T)                                       \
  static inline uint64_t imean_##sfx(uint64_t a, int64_t n) {   \
    if (n == 0) return 0;                                       \
    return (uint64_t)(int64_t)((int64_t)(T)a / n);              \
  }
DEF_IMEAN(i8, int8_t)
DEF_IMEAN(u8, uint8_t)
DEF_IMEAN(i32, int32_t)
DEF_IMEAN(i64, int64_t)

#define LD_PLAIN(x) (x)
#define LD_F16(x) mxc__f16_to_f32(x)
#define LD_BF16(x) mxc__bf16_to_f32(x)

/* Accumulation steps: a = step(a, v). Functions rather than expressions
 * so that v is evaluated once. max/min propagate NaN. */
static inline double max_nan(double a, double v) {
  return v > a || isnan(v) ? v : a;
}
static inline double min_nan(double a, double v) {
  return v < a || isnan(v) ? v : a;
}
static inline int64_t max_i(int64_t a, int64_t v) { return v > a ? v : a; }
static inline int64_t min_i(int64_t a, int64_t v) { return v < a ? v : a; }
static inline double nan_to(double v, double r) { return isnan(v) ? r : v; }
static inline double sq(double v) { return v * v; }

#define S_ADD(a, v) ((a) += (v))
#define S_MUL(a, v) ((a) *= (v))
#define S_UADD(a, v) ((a) += (uint64_t)(v)) /* ints wrap, never UB */
#define S_UMUL(a, v) ((a) *= (uint64_t)(v))
#define S_MAX(a, v) ((a) = max_nan((a), (v)))
#define S_MIN(a, v) ((a) = min_nan((a), (v)))
#define S_IMAX(a, v) ((a) = max_i((a), (v)))
#define S_IMIN(a, v) ((a) = min_i((a), (v)))
#define S_NANADD(a, v) ((a) += nan_to((v), 0))
#define S_NANMUL(a, v) ((a) *= nan_to((v), 1))
#define S_ABSADD(a, v) ((a) += fabs((double)(v)))
#define S_SQADD(a, v) ((a) += sq(v))

/* One kernel, in the three steps of mxc__red_kernel (reduce_impl.h):
 * acc[o] = INIT, then STEP(acc, element) over the plan's input; COMB
 * merges two accumulators; out[o] = FIN (of the accumulator `a` and the
 * group size `n`). The input is read in memory order (see reduce_impl.h);
 * a row either lies in one group (os == 0) or feeds consecutive outputs
 * (os == 1). In the first case four partial accumulators, merged with
 * COMB, hide the latency of STEP (a dependent chain of adds or compares
 * is several times slower). */
#define DEF_RED(op, sfx, T, A, LD, ST, INIT, STEP, COMB, FIN)               \
  static void acc_##op##_##sfx(const mxc__red_plan *p, const void *xv,      \
                               void *accv) {                                \
    A *acc = accv;                                                          \
    const T *x = xv;                                                        \
    for (int64_t o = 0; o < p->n_out; ++o) acc[o] = (INIT);                 \
    mxc__red_iter it;                                                       \
    mxc__red_iter_init(&it, p);                                             \
    for (int64_t k = 0; k < it.rows; ++k, mxc__red_iter_next(&it)) {        \
      const T *row = x + k * it.len;                                        \
      if (it.os == 0) {                                                     \
        A a0 = acc[it.o], a1 = (INIT), a2 = (INIT), a3 = (INIT);            \
        int64_t j = 0;                                                      \
        for (; j + 4 <= it.len; j += 4) {                                   \
          STEP(a0, LD(row[j]));                                             \
          STEP(a1, LD(row[j + 1]));                                         \
          STEP(a2, LD(row[j + 2]));                                         \
          STEP(a3, LD(row[j + 3]));                                         \
        }                                                                   \
        for (; j < it.len; ++j) STEP(a0, LD(row[j]));                       \
        COMB(a0, a1);                                                       \
        COMB(a2, a3);                                                       \
        COMB(a0, a2);                                                       \
        acc[it.o] = a0;                                                     \
      } else {                                                              \
        A *ac = acc + it.o;                                                 \
        for (int64_t j = 0; j < it.len; ++j) STEP(ac[j], LD(row[j]));       \
      }                                                                     \
    }                                                                       \
  }                                                                         \
  static void comb_##op##_##sfx(void *dstv, const void *srcv, int64_t cnt) { \
    A *dst = dstv;                                                          \
    const A *src = srcv;                                                    \
    for (int64_t o = 0; o < cnt; ++o) COMB(dst[o], src[o]);                 \
  }                                                                         \
  static void fin_##op##_##sfx(const mxc__red_plan *p, const void *accv,    \
                               const mxc__blob *out, int64_t o0,            \
                               int64_t cnt, mxc__req req) {                 \
    const A *acc = accv;                                                    \
    double n = (double)p->n_red;                                            \
    (void)n;                                                                \
    for (int64_t o = o0; o < o0 + cnt; ++o) {                               \
      A a = acc[o];                                                         \
      ST(out, o, (FIN), req);                                               \
    }                                                                       \
  }

#define FLOAT_KERNELS(op, INIT, STEP, COMB, FIN)                            \
  DEF_RED(op, f32, float, double, LD_PLAIN, st_f32, INIT, STEP, COMB, FIN)  \
  DEF_RED(op, f64, double, double, LD_PLAIN, st_f64, INIT, STEP, COMB, FIN) \
  DEF_RED(op, f16, uint16_t, double, LD_F16, st_f16, INIT, STEP, COMB, FIN) \
  DEF_RED(op, bf16, uint16_t, double, LD_BF16, st_bf16, INIT, STEP, COMB, FIN)
#define INT_KERNELS_FIN(op, A, INIT, STEP, FIN)                            \
  DEF_RED(op, i32, int32_t, A, LD_PLAIN, st_i32, INIT, STEP, STEP, FIN(i32)) \
  DEF_RED(op, i64, int64_t, A, LD_PLAIN, st_i64, INIT, STEP, STEP, FIN(i64)) \
  DEF_RED(op, i8, int8_t, A, LD_PLAIN, st_i8, INIT, STEP, STEP, FIN(i8))     \
  DEF_RED(op, u8, uint8_t, A, LD_PLAIN, st_u8, INIT, STEP, STEP, FIN(u8))
#define FIN_PLAIN(sfx) a
#define FIN_IMEAN(sfx) imean_##sfx(a, p->n_red)
#define INT_KERNELS(op, A, INIT, STEP) \
  INT_KERNELS_FIN(op, A, INIT, STEP, FIN_PLAIN)

FLOAT_KERNELS(sum, 0, S_ADD, S_ADD, a)
FLOAT_KERNELS(mean, 0, S_ADD, S_ADD, a / n)
FLOAT_KERNELS(prod, 1, S_MUL, S_MUL, a)
FLOAT_KERNELS(max, -INFINITY, S_MAX, S_MAX, a)
FLOAT_KERNELS(min, INFINITY, S_MIN, S_MIN, a)
FLOAT_KERNELS(nansum, 0, S_NANADD, S_ADD, a)
FLOAT_KERNELS(nanprod, 1, S_NANMUL, S_MUL, a)
FLOAT_KERNELS(norm1, 0, S_ABSADD, S_ADD, a)
FLOAT_KERNELS(norm2, 0, S_SQADD, S_ADD, sqrt(a))
INT_KERNELS(sum, uint64_t, 0, S_UADD)
INT_KERNELS_FIN(mean, uint64_t, 0, S_UADD, FIN_IMEAN)
INT_KERNELS(prod, uint64_t, 1, S_UMUL)
INT_KERNELS(max, int64_t, INT64_MIN, S_IMAX)
INT_KERNELS(min, int64_t, INT64_MAX, S_IMIN)

enum { S_F32, S_F64, S_F16, S_BF16, S_I32, S_I64, S_I8, S_U8, S_COUNT };

static int dtype_slot(int dt) {
  switch (dt) {
    case MXC_DTYPE_FLOAT32:
      return S_F32;
    case MXC_DTYPE_FLOAT64:
      return S_F64;
    case MXC_DTYPE_FLOAT16:
      return S_F16;
    case MXC_DTYPE_BFLOAT16:
      return S_BF16;
    case MXC_DTYPE_INT32:
      return S_I32;
    case MXC_DTYPE_INT64:
      return S_I64;
    case MXC_DTYPE_INT8:
      return S_I8;
    case MXC_DTYPE_UINT8:
      return S_U8;
    default:
      return -1;
  }
}

/* Rows of the kernel table, in S_* order (float-only rows end early:
 * missing integer entries are NULL). */
/* clang-format off */
#define K(op, sfx) {acc_##op##_##sfx, comb_##op##_##sfx, fin_##op##_##sfx}
#define FLOAT_ROW(op) \
  {K(op, f32), K(op, f64), K(op, f16), K(op, bf16)}
#define ALL_ROW(op)                                          \
  {K(op, f32), K(op, f64), K(op, f16), K(op, bf16),          \
   K(op, i32), K(op, i64), K(op, i8), K(op, u8)}
/* clang-format on */

static const mxc__red_kernel k_kernels[MXC__RED_KIND_COUNT][S_COUNT] = {
    [MXC__RED_SUM] = ALL_ROW(sum),
    [MXC__RED_MEAN] = ALL_ROW(mean),
    [MXC__RED_PROD] = ALL_ROW(prod),
    [MXC__RED_MAX] = ALL_ROW(max),
    [MXC__RED_MIN] = ALL_ROW(min),
    [MXC__RED_NANSUM] = FLOAT_ROW(nansum),
    [MXC__RED_NANPROD] = FLOAT_ROW(nanprod),
    [MXC__RED_NORM1] = FLOAT_ROW(norm1),
    [MXC__RED_NORM2] = FLOAT_ROW(norm2),
};

/* ---- operators ---- */

/* The operators, in descriptor order: X(name, kind, aliases, param table,
 * gradient builder, backward uses the output, doc). norm's kind depends on
 * ord (see kind_of). */
#define RED_OPS(X)                                                       \
  X(sum, MXC__RED_SUM, k_sum_aliases, k_params, mxc__grad_use_in, 0,     \
    "Sum over the given axes.")                                          \
  X(mean, MXC__RED_MEAN, NULL, k_params, mxc__grad_use_in, 0,            \
    "Arithmetic mean over the given axes (integers: the wrapped sum "    \
    "divided by the count, truncated, as MXNet).")                       \
  X(prod, MXC__RED_PROD, NULL, k_params, mxc__grad_use_in, 0,            \
    "Product over the given axes.")                                      \
  X(max, MXC__RED_MAX, k_max_aliases, k_params, mxc__grad_use_in_out, 1, \
    "Maximum over the given axes; NaN if the group holds a NaN.")        \
  X(min, MXC__RED_MIN, k_min_aliases, k_params, mxc__grad_use_in_out, 1, \
    "Minimum over the given axes; NaN if the group holds a NaN.")        \
  X(nansum, MXC__RED_NANSUM, NULL, k_params, mxc__grad_use_in, 0,        \
    "Sum over the given axes, treating NaN as 0.")                       \
  X(nanprod, MXC__RED_NANPROD, NULL, k_params, mxc__grad_use_in, 0,      \
    "Product over the given axes, treating NaN as 1.")                   \
  X(norm, MXC__RED_NORM2, NULL, k_norm_params, mxc__grad_use_in_out, 1,  \
    "L1 (ord=1) or L2 (ord=2) norm over the given axes (all by default).")

enum {
#define DEF_ENUM(nm, kind, al, prm, grad, uses_out, doc) O_##nm,
  RED_OPS(DEF_ENUM)
#undef DEF_ENUM
      O_COUNT
};

static const mxc__op k_fwd[O_COUNT];
static const mxc__op k_bwd[O_COUNT];

static int index_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + O_COUNT) return (int)(op - k_fwd);
  return (int)(op - k_bwd);
}

static mxc__red_kind kind_of(const mxc__op *op, const red_param *rp) {
  static const mxc__red_kind kinds[O_COUNT] = {
#define DEF_KIND(nm, kind, al, prm, grad, uses_out, doc) kind,
      RED_OPS(DEF_KIND)
#undef DEF_KIND
  };
  int i = index_of(op);
  if (i == O_norm) return rp->ord == 1 ? MXC__RED_NORM1 : MXC__RED_NORM2;
  return kinds[i];
}

static int red_mask(const mxc__op *op, const red_param *rp, int ndim,
                    uint32_t *mask) {
  return mxc__red_axes_mask(op->name, &rp->axis, rp->exclude, ndim, mask);
}

static int red_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)n_in, (void)n_out;
  const red_param *rp = param;
  if (in[0].ndim < 0) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(red_mask(op, rp, in[0].ndim, &mask));
  mxc__red_kind kind = kind_of(op, rp);
  if (kind == MXC__RED_MAX || kind == MXC__RED_MIN) {
    mxc__red_plan p;
    mxc__red_plan_make(&in[0], mask, &p);
    char b[160];
    MXC_RETURN_ERROR_IF(p.n_red == 0 && p.n_out > 0, MXC_ERR_SHAPE,
                        "operator '%s': cannot reduce input of shape %s over "
                        "a zero-size axis (%s has no identity value)",
                        op->name, mxc__shape_str(&in[0], b, sizeof b),
                        op->name);
  }
  mxc__shape s;
  mxc__red_out_shape(&in[0], mask, rp->keepdims, &s);
  return mxc__red_set_shape(op->name, "output 0", &out[0], &s);
}

static int red_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  if (in[0] < 0) return MXC_OK;
  mxc__red_kind kind = kind_of(op, param);
  int slot = dtype_slot(in[0]);
  if (slot < 0 || !k_kernels[kind][slot].acc) {
    return mxc__unsupported_dtype(
        op->name, in[0],
        k_kernels[kind][S_I32].acc
            ? "expected float32, float64, float16, bfloat16, int8, uint8, "
              "int32 or int64"
            : "this operator takes floating-point inputs (float32, "
              "float64, float16, bfloat16)");
  }
  return MXC_OK;
}

static int red_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in, (void)n_out;
  const red_param *rp = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(red_mask(op, rp, in[0].shape.ndim, &mask));
  mxc__red_plan p;
  mxc__red_plan_make(&in[0].shape, mask, &p);
  int slot = dtype_slot(in[0].dtype);
  const mxc__red_kernel *k =
      slot < 0 ? NULL : &k_kernels[kind_of(op, rp)][slot];
  if (!k || !k->acc) {
    return mxc__unsupported_dtype(op->name, in[0].dtype, NULL);
  }
  /* Accumulators are 8 bytes (double, int64_t or uint64_t), one array per
   * part of the split (at most a quarter of the input's elements). */
  void *acc = NULL;
  size_t parts = (size_t)mxc__red_parts(&p);
  MXC_FORWARD_IF_ERROR(
      mxc__red_temp(op, ctx, parts * (size_t)p.n_out * 8, &acc));
  mxc__red_run(k, &p, in[0].ptr, mxc__dtype_size(in[0].dtype), &out[0], acc,
               req[0]);
  return MXC_OK;
}

/* _backward_<op>: inputs (ograd, data[, output]) -> d data. */
static int red_backward_shape(const mxc__op *op, const void *param,
                              mxc__shape *in, int n_in, mxc__shape *out,
                              int n_out) {
  (void)n_out;
  const red_param *rp = param;
  if (in[1].ndim < 0) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(red_mask(op, rp, in[1].ndim, &mask));
  mxc__shape s;
  mxc__red_out_shape(&in[1], mask, rp->keepdims, &s);
  MXC_FORWARD_IF_ERROR(
      mxc__red_set_shape(op->name, "input 0 (ograd)", &in[0], &s));
  if (n_in > 2) {
    MXC_FORWARD_IF_ERROR(
        mxc__red_set_shape(op->name, "input 2 (output)", &in[2], &s));
  }
  return mxc__red_set_shape(op->name, "output 0", &out[0], &in[1]);
}

static int red_backward_type(const mxc__op *op, const void *param, int *in,
                             int n_in, int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  if (in[0] >= 0 && !mxc__dtype_is_float(in[0])) {
    return mxc__unsupported_dtype(op->name, in[0],
                                  "gradients are computed for float32, "
                                  "float64, float16 and bfloat16");
  }
  return MXC_OK;
}

static int red_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_out;
  const red_param *rp = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  uint32_t mask = 0;
  MXC_FORWARD_IF_ERROR(red_mask(op, rp, in[1].shape.ndim, &mask));
  mxc__red_plan p;
  mxc__red_plan_make(&in[1].shape, mask, &p);
  mxc__red_kind kind = kind_of(op, rp);
  double *temp = NULL;
  int64_t nt = mxc__red_grad_temp(kind, &p);
  if (nt > 0) {
    void *t = NULL;
    MXC_FORWARD_IF_ERROR(
        mxc__red_temp(op, ctx, (size_t)nt * sizeof(double), &t));
    temp = t;
  }
  mxc__red_grad(kind, &p, &in[0], &in[1], n_in > 2 ? &in[2] : NULL, &out[0],
                req[0], temp);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const mxc__param_def k_params[] = {
    MXC__PARAM(red_param, axis, MXC__P_TUPLE, "None",
               "Axes to reduce; None or () reduces all of them."),
    MXC__PARAM(red_param, keepdims, MXC__P_BOOL, "false",
               "Keep reduced axes as axes of extent 1."),
    MXC__PARAM(red_param, exclude, MXC__P_BOOL, "false",
               "Reduce every axis except those in axis."),
};
static const mxc__param_def k_norm_params[] = {
    MXC__PARAM_RANGE(red_param, ord, MXC__P_INT, "2", 1, 2,
                     "Order of the norm: 1 (sum of |x|) or 2 (Euclidean)."),
    MXC__PARAM(red_param, axis, MXC__P_TUPLE, "None",
               "Axes to reduce; None or () reduces all of them."),
    MXC__PARAM(red_param, keepdims, MXC__P_BOOL, "false",
               "Keep reduced axes as axes of extent 1."),
};

static const char *const k_sum_aliases[] = {"sum_axis", NULL};
static const char *const k_max_aliases[] = {"max_axis", NULL};
static const char *const k_min_aliases[] = {"min_axis", NULL};
static const char *const k_in_names[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const char *const k_bwd_in_out[] = {"ograd", "data", "output", NULL};

#define FWD_DESC(nm, kind, al, prm, grad, uses_out, doc_) \
  [O_##nm] = {                                            \
      .name = #nm,                                        \
      .aliases = al,                                      \
      .doc = doc_,                                        \
      MXC__PARAMS_OF(red_param, prm),                     \
      .n_inputs = 1,                                      \
      .input_names = k_in_names,                          \
      .n_outputs = 1,                                     \
      .infer_shape = red_shape,                           \
      .infer_type = red_type,                             \
      .compute = red_forward,                             \
      .gradient = grad,                                   \
      .backward_uses_inputs = 1,                          \
      .backward_uses_outputs = uses_out,                  \
      .resources = MXC__RES_TEMP,                         \
  },
#define BWD_DESC(nm, kind, al, prm, grad, uses_out, doc_) \
  [O_##nm] = {                                            \
      MXC__BACKWARD(#nm),                                 \
      MXC__PARAMS_OF(red_param, prm),                     \
      .n_inputs = 2 + uses_out,                           \
      .input_names = uses_out ? k_bwd_in_out : k_bwd_in,  \
      .n_outputs = 1,                                     \
      .infer_shape = red_backward_shape,                  \
      .infer_type = red_backward_type,                    \
      .compute = red_backward,                            \
      .resources = MXC__RES_TEMP,                         \
  },

static const mxc__op k_fwd[O_COUNT] = {RED_OPS(FWD_DESC)};
static const mxc__op k_bwd[O_COUNT] = {RED_OPS(BWD_DESC)};

int mxc__ops_register_reduce(mxc__registry *r) {
  for (int i = 0; i < O_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
  }
  MXC_FORWARD_IF_ERROR(mxc__reduce_register_arg(r));
  MXC_FORWARD_IF_ERROR(mxc__reduce_register_softmax(r));
  return mxc__reduce_register_sort(r);
}
