/* Element-wise unary operators, each declared once (UNARY_OPS below) from
 * its scalar function and derivative. From one declaration come: the
 * forward operator, its "_backward_" operator computing
 * ograd * f'(x, y), and the gradient builder that links them.
 *
 * In the declarations, x is the input, y the output (f(x)); both have the
 * computation type T (float or double; half types compute in float).
 * float32 tanh, sigmoid and exp use the vectorized kernels of core/op/vmath.h
 * (within a few ulp of libm) instead; float32/float64 arrays of 64k
 * elements or more are split over the kernel thread pool. */
#include <tgmath.h>
#include <string.h>

#include "ops/families.h"
#include "core/op/common.h"
#include "core/op/vmath.h"
#include "core/op/parallel.h"

#include "ops/elemwise/unary_ops.h"

/* MXNet's rint: the nearer of floor and ceil, floor on a tie, so halves
 * round down (2.5 -> 2, -2.5 -> -3) rather than to even as C's rint. */
static inline double rint_mxnet(double x) {
  double lo = floor(x), hi = ceil(x);
  return x - lo <= hi - x ? lo : hi;
}

/* lgamma writes the global signgam: kernels run on several threads at
 * once (a data race TSan reports). lgamma_r keeps the sign local. */
static inline double lgamma_local(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

/* ---- kernels ---- */

#define DEF_KERNELS(name, fwd, grad, int_ok, doc)                            \
  MXC__CPU_CLONES static void fwd_##name##_f32(const float *restrict in, float *restrict out, \
                               int64_t n, mxc__req req) {                     \
    for (int64_t i = 0; i < n; ++i) {                                         \
      float x = in[i];                                                        \
      float v = (float)(fwd);                                                 \
      MXC__ASSIGN(req, out[i], v);                                            \
    }                                                                         \
  }                                                                           \
  MXC__CPU_CLONES static void fwd_##name##_f64(const double *restrict in,                     \
                               double *restrict out, int64_t n,               \
                               mxc__req req) {                                \
    for (int64_t i = 0; i < n; ++i) {                                         \
      double x = in[i];                                                       \
      double v = (double)(fwd);                                               \
      MXC__ASSIGN(req, out[i], v);                                            \
    }                                                                         \
  }                                                                           \
  static double fwd_##name##_scalar(double x) { return (double)(fwd); }      \
  static void bwd_##name##_f32(const float *og, const float *in,              \
                               const float *o, float *restrict gi, int64_t n, \
                               mxc__req req) {                                \
    for (int64_t i = 0; i < n; ++i) {                                         \
      float x = in[i], y = o[i];                                              \
      (void)x;                                                                \
      (void)y;                                                                \
      float v = og[i] * (float)(grad);                                        \
      MXC__ASSIGN(req, gi[i], v);                                             \
    }                                                                         \
  }                                                                           \
  static void bwd_##name##_f64(const double *og, const double *in,            \
                               const double *o, double *restrict gi,          \
                               int64_t n, mxc__req req) {                     \
    for (int64_t i = 0; i < n; ++i) {                                         \
      double x = in[i], y = o[i];                                             \
      (void)x;                                                                \
      (void)y;                                                                \
      double v = og[i] * (double)(grad);                                      \
      MXC__ASSIGN(req, gi[i], v);                                             \
    }                                                                         \
  }                                                                           \
  static double bwd_##name##_scalar(double x, double y) {                     \
    (void)x;                                                                  \
    (void)y;                                                                  \
    return (double)(grad);                                                    \
  }
UNARY_OPS(DEF_KERNELS)

/* One row of the dispatch table per operator. */
typedef struct unary_impl {
  void (*f32)(const float *, float *, int64_t, mxc__req);
  void (*f64)(const double *, double *, int64_t, mxc__req);
  double (*scalar)(double);
  void (*b32)(const float *, const float *, const float *, float *, int64_t,
              mxc__req);
  void (*b64)(const double *, const double *, const double *, double *,
              int64_t, mxc__req);
  double (*bscalar)(double, double);
  int int_ok;
} unary_impl;

enum {
#define DEF_ENUM(name, fwd, grad, int_ok, doc) U_##name,
  UNARY_OPS(DEF_ENUM)
#undef DEF_ENUM
      U_COUNT
};

static const unary_impl k_impl[U_COUNT] = {
#define DEF_IMPL(name, fwd, grad, int_ok, doc)                            \
  [U_##name] = {fwd_##name##_f32, fwd_##name##_f64, fwd_##name##_scalar, \
                bwd_##name##_f32, bwd_##name##_f64, bwd_##name##_scalar, \
                int_ok},
    UNARY_OPS(DEF_IMPL)
#undef DEF_IMPL
};

/* ---- compute ---- */

static const mxc__op k_fwd_ops[U_COUNT];
static const mxc__op k_bwd_ops[U_COUNT];

/* Index into k_impl of a forward or backward descriptor. */
static int impl_of(const mxc__op *op) {
  if (op >= k_fwd_ops && op < k_fwd_ops + U_COUNT) return (int)(op - k_fwd_ops);
  return (int)(op - k_bwd_ops);
}

/* The rounding family: the identity on integers (MXNet and NumPy keep
 * the dtype and the values). */
static int is_rounding(int u) {
  return u == U_floor || u == U_ceil || u == U_round || u == U_rint ||
         u == U_trunc || u == U_fix;
}

static int unary_type(const mxc__op *op, const void *param, int *in, int n_in,
                      int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = n_in ? in[0] : -1;
  int ui = impl_of(op);
  int int_ok = k_impl[ui].int_ok || (is_rounding(ui) && op == &k_fwd_ops[ui]);
  if (t >= 0 && !mxc__dtype_is_float(t) && !int_ok) {
    return mxc__unsupported_dtype(op->name, t,
                                  "this operator takes floating-point "
                                  "inputs (float32, float64, float16, "
                                  "bfloat16)");
  }
  return MXC_OK;
}

/* float32 operators with a vectorized kernel (core/op/vmath.h), else -1. */
static int vmath_of(int u) {
  switch (u) {
    case U_tanh:
      return MXC__VM_TANH;
    case U_sigmoid:
      return MXC__VM_SIGMOID;
    case U_exp:
      return MXC__VM_EXP;
    default:
      return -1;
  }
}

/* One float32/float64 forward or backward over a range of elements: large
 * arrays are split over the kernel thread pool (each chunk owns its own
 * output elements). */
typedef struct unary_job {
  const unary_impl *u;
  const mxc__blob *in, *out;
  mxc__req req;
  int bwd;
} unary_job;

static int unary_range(void *arg, int64_t b, int64_t e) {
  const unary_job *j = arg;
  const mxc__blob *in = j->in, *out = j->out;
  int64_t n = e - b;
  if (in[0].dtype == MXC_DTYPE_FLOAT32) {
    const float *a0 = (const float *)in[0].ptr + b;
    float *o = (float *)out[0].ptr + b;
    if (j->bwd) {
      j->u->b32(a0, (const float *)in[1].ptr + b,
                (const float *)in[2].ptr + b, o, n, j->req);
    } else {
      j->u->f32(a0, o, n, j->req);
    }
  } else {
    const double *a0 = (const double *)in[0].ptr + b;
    double *o = (double *)out[0].ptr + b;
    if (j->bwd) {
      j->u->b64(a0, (const double *)in[1].ptr + b,
                (const double *)in[2].ptr + b, o, n, j->req);
    } else {
      j->u->f64(a0, o, n, j->req);
    }
  }
  return MXC_OK;
}

static int unary_run(const unary_impl *u, const mxc__blob *in,
                     const mxc__blob *out, mxc__req req, int bwd,
                     int64_t n) {
  unary_job j = {u, in, out, req, bwd};
  int threads = n >= MXC__ELEMWISE_PAR_MIN ? mxc__parallel_threads() : 1;
  return mxc__parallel_for(n, MXC__ELEMWISE_GRAIN, threads, unary_range, &j);
}

/* Integer forms of the operators that take integer dtypes, exact in
 * int64 and wrapping (core/base/dtype.h): through double, int64 values
 * beyond 2^53 would round, and abs, negative and square of extreme values
 * would saturate instead of wrapping as numpy does. */
static int64_t int_forward(int u, int64_t x) {
  if (is_rounding(u)) return x;
  switch (u) {
    case U_abs: return x < 0 ? mxc__wrap_neg(x) : x;
    case U_sign: return SGN(x);
    case U_negative: return mxc__wrap_neg(x);
    case U_relu: return x > 0 ? x : 0;
    case U_square: return mxc__wrap_mul(x, x);
    default: return x == 0; /* logical_not, the last int_ok operator */
  }
}

static void int_run(int u, const mxc__blob *in, const mxc__blob *out,
                    mxc__req req, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = int_forward(u, mxc__blob_get_i64(in, i));
    if (req == MXC__REQ_ADD) v = mxc__wrap_add(v, mxc__blob_get_i64(out, i));
    mxc__blob_set_i64(out, i, v);
  }
}

static int unary_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  int ui = impl_of(op);
  const unary_impl *u = &k_impl[ui];
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  switch (in[0].dtype) {
    case MXC_DTYPE_FLOAT32:
      if (vmath_of(ui) >= 0) {
        return mxc__vmath_f32(vmath_of(ui), in[0].ptr, out[0].ptr, n,
                              req[0] == MXC__REQ_ADD);
      }
      return unary_run(u, in, out, req[0], 0, n);
    case MXC_DTYPE_FLOAT64:
      return unary_run(u, in, out, req[0], 0, n);
    case MXC_DTYPE_FLOAT16:
    case MXC_DTYPE_BFLOAT16: /* through double */
      for (int64_t i = 0; i < n; ++i) {
        double v = u->scalar(mxc__blob_get(&in[0], i));
        if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i);
        mxc__blob_set(&out[0], i, v);
      }
      return MXC_OK;
    default:
      int_run(ui, &in[0], &out[0], req[0], n);
      return MXC_OK;
  }
}

/* _backward_<op>: inputs (ograd, x, y), output dx. */
static int unary_backward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)ctx, (void)param, (void)n_in, (void)n_out;
  int ui = impl_of(op);
  const unary_impl *u = &k_impl[ui];
  int64_t n = mxc__shape_size(&in[0].shape);
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  switch (in[0].dtype) {
    case MXC_DTYPE_FLOAT32:
      if (vmath_of(ui) >= 0) {
        return mxc__vmath_grad_f32(vmath_of(ui), in[0].ptr, in[2].ptr,
                                   out[0].ptr, n, req[0] == MXC__REQ_ADD);
      }
      return unary_run(u, in, out, req[0], 1, n);
    case MXC_DTYPE_FLOAT64:
      return unary_run(u, in, out, req[0], 1, n);
    default:
      for (int64_t i = 0; i < n; ++i) {
        double v = mxc__blob_get(&in[0], i) *
                   u->bscalar(mxc__blob_get(&in[1], i),
                              mxc__blob_get(&in[2], i));
        if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i);
        mxc__blob_set(&out[0], i, v);
      }
      return MXC_OK;
  }
}

/* ---- descriptors ---- */

static const char *const k_in_names[] = {"data", NULL};
static const char *const k_bwd_in_names[] = {"ograd", "data", "output", NULL};
static const int k_inplace[][2] = {{0, 0}};

#define FWD_DESC(nm, fwd, grad, int_ok, doc_)                            \
  [U_##nm] = {                                                           \
      .name = #nm,                                                       \
      .doc = "Element-wise: " doc_,                                      \
      .n_inputs = 1,                                                     \
      .input_names = k_in_names,                                         \
      .n_outputs = 1,                                                    \
      .infer_shape = mxc__infer_shape_same,                              \
      .infer_type = unary_type,                                          \
      .compute = unary_forward,                                          \
      .elementwise = 1,                                                  \
      .gradient = mxc__grad_use_in_out,                                  \
      MXC__INPLACE(k_inplace),                                           \
      .backward_uses_inputs = 1,                                         \
      .backward_uses_outputs = 1,                                        \
  },
#define BWD_DESC(nm, fwd, grad, int_ok, doc_)                            \
  [U_##nm] = {                                                           \
      MXC__BACKWARD(#nm),                                                \
      .n_inputs = 3,                                                     \
      .input_names = k_bwd_in_names,                                     \
      .n_outputs = 1,                                                    \
      .infer_shape = mxc__infer_shape_same,                              \
      .infer_type = unary_type,                                          \
      .compute = unary_backward,                                         \
      .elementwise = 1,                                                  \
      MXC__INPLACE(k_inplace),                                           \
  },

static const mxc__op k_fwd_ops[U_COUNT] = {UNARY_OPS(FWD_DESC)};
static const mxc__op k_bwd_ops[U_COUNT] = {UNARY_OPS(BWD_DESC)};

int mxc__ops_register_elemwise(mxc__registry *r) {
  for (int i = 0; i < U_COUNT; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd_ops[i]));
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd_ops[i]));
  }
  return MXC_OK;
}
