/* quadratic(data; a, b, c) = a*x^2 + b*x + c element-wise (MXNet's
 * contrib example operator, alias _contrib_quadratic), with gradient
 * (2a*x + b) * ograd.
 *
 * Storage: csr or row_sparse in with c == 0 gives the same storage type
 * out, computed on the stored values only (f(0) = 0, so the unstored zeros
 * stay zero). Stored values that become 0 (x = -b/a) stay stored: the
 * output has exactly the input's structure. With c != 0 every element of
 * the output is nonzero, so a sparse input gets MXC_ERR_STYPE and invoke's
 * dense fallback gives a dense result. */
#include <string.h>

#include "core/op/common.h"
#include "core/op/vmath.h"
#include "core/op/parallel.h"
#include "ops/sparse/elemwise.h"

typedef struct quad_param {
  double a, b, c;
} quad_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(quad_param, a, MXC__P_FLOAT, "0", "Coefficient of x^2."),
    MXC__PARAM(quad_param, b, MXC__P_FLOAT, "0", "Coefficient of x."),
    MXC__PARAM(quad_param, c, MXC__P_FLOAT, "0", "Constant term."),
};

static int quad_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = in[0];
  if (t >= 0 && !mxc__dtype_is_float(t)) {
    return mxc__unsupported_dtype(op->name, t,
                                  "this operator takes floating-point "
                                  "inputs (float32, float64, float16, "
                                  "bfloat16)");
  }
  return MXC_OK;
}

/* One job for the forward (og == NULL) and backward kernels: out[i] (=, or
 * += when add) a*x^2 + b*x + c, or og[i] * (2a*x + b). */
typedef struct quad_job {
  const void *x, *og;
  void *out;
  int dtype, add;
  double a, b, c;
} quad_job;

#define QUAD_LOOP(T)                                                   \
  do {                                                                 \
    const T *x = (const T *)j->x + lo;                                 \
    const T *og = j->og ? (const T *)j->og + lo : NULL;                \
    T *o = (T *)j->out + lo;                                           \
    const T a = (T)j->a, b = (T)j->b, c = (T)j->c, a2 = (T)(2 * j->a); \
    if (og) {                                                          \
      for (int64_t i = 0; i < n; ++i) {                                \
        T v = og[i] * (a2 * x[i] + b);                                 \
        o[i] = j->add ? o[i] + v : v;                                  \
      }                                                                \
    } else {                                                           \
      for (int64_t i = 0; i < n; ++i) {                                \
        T v = (a * x[i] + b) * x[i] + c;                               \
        o[i] = j->add ? o[i] + v : v;                                  \
      }                                                                \
    }                                                                  \
  } while (0)

static int quad_range(void *arg, int64_t lo, int64_t hi) {
  const quad_job *j = arg;
  int64_t n = hi - lo;
  if (j->dtype == MXC_DTYPE_FLOAT32) {
    QUAD_LOOP(float);
  } else if (j->dtype == MXC_DTYPE_FLOAT64) {
    QUAD_LOOP(double);
  } else { /* half types through double */
    mxc__shape s = {1, {hi}};
    mxc__device dev = {MXC_DEVICE_CPU, 0};
    mxc__blob bx = {(void *)j->x, s, j->dtype, dev, MXC__FMT_PLAIN};
    mxc__blob bg = {(void *)j->og, s, j->dtype, dev, MXC__FMT_PLAIN};
    mxc__blob bo = {j->out, s, j->dtype, dev, MXC__FMT_PLAIN};
    for (int64_t i = lo; i < hi; ++i) {
      double x = mxc__blob_get(&bx, i);
      double v = j->og ? mxc__blob_get(&bg, i) * (2 * j->a * x + j->b)
                       : (j->a * x + j->b) * x + j->c;
      mxc__blob_set(&bo, i, j->add ? mxc__blob_get(&bo, i) + v : v);
    }
  }
  return MXC_OK;
}

static int quad_run(const mxc__op *op, const void *param, const void *x,
                    const void *og, const mxc__blob *out, mxc__req req) {
  (void)op;
  if (req == MXC__REQ_NULL) return MXC_OK;
  const quad_param *p = param;
  quad_job j = {x,    og,   out->ptr, out->dtype, req == MXC__REQ_ADD,
                p->a, p->b, p->c};
  int64_t n = mxc__shape_size(&out->shape);
  int threads = n >= MXC__ELEMWISE_PAR_MIN ? mxc__parallel_threads() : 1;
  return mxc__parallel_for(n, MXC__ELEMWISE_GRAIN, threads, quad_range, &j);
}

static int quad_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  return quad_run(op, param, in[0].ptr, NULL, &out[0], req[0]);
}

/* _backward_quadratic: (ograd, data) -> ddata. */
static int quad_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)ctx, (void)n_in, (void)n_out;
  return quad_run(op, param, in[1].ptr, in[0].ptr, &out[0], req[0]);
}

static int quad_stype(const mxc__op *op, const void *param, const int *in,
                      int n_in, int *out, int n_out, int *dispatch) {
  (void)n_in, (void)n_out;
  const quad_param *p = param;
  return mxc__sparse_keep_stype(op, in, out, dispatch, p->c == 0);
}

static int quad_sparse(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__ndarray *in, int n_in,
                       const mxc__ndarray *out, int n_out,
                       const mxc__req *req) {
  (void)n_in, (void)n_out;
  return mxc__sparse_map_values(op, ctx, param, in, out, req[0]);
}

static const char *const k_aliases[] = {"_contrib_quadratic", NULL};
static const char *const k_in[] = {"data", NULL};
static const char *const k_bwd_in[] = {"ograd", "data", NULL};
static const int k_inplace[][2] = {{0, 0}};

static const mxc__op k_ops[] = {
    {
        .name = "quadratic",
        .aliases = k_aliases,
        .doc = "Element-wise a*x^2 + b*x + c. csr / row_sparse data with "
               "c = 0 gives the same storage type (the stored values "
               "only); otherwise the result is dense.",
        MXC__PARAMS_OF(quad_param, k_params),
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = quad_type,
        .compute = quad_forward,
        .infer_stype = quad_stype,
        .compute_sparse = quad_sparse,
        .gradient = mxc__grad_use_in,
        MXC__INPLACE(k_inplace),
        .backward_uses_inputs = 1,
    },
    {
        .name = "_backward_quadratic",
        .doc = "Gradient of quadratic: ograd * (2a*x + b).",
        MXC__PARAMS_OF(quad_param, k_params),
        .n_inputs = 2,
        .input_names = k_bwd_in,
        .n_outputs = 1,
        .infer_shape = mxc__infer_shape_same,
        .infer_type = quad_type,
        .compute = quad_backward,
        MXC__INPLACE(k_inplace),
        .hidden = 1,
    },
};

int mxc__sparse_register_quadratic(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
