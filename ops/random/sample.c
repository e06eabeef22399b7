/* Samplers without inputs whose values take a fixed number of words of the
 * reserved slice: _random_uniform, _random_normal, _random_exponential,
 * _random_randint. Value i of the output is value i of the slice (see
 * core/resource/random.h for the layout), so the numbers depend only on
 * the seed and the order of pushes. Also the parts shared by every sampler
 * (shape/dtype parameters and inference, chunked writing) and the family's
 * registration function. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/random/internal.h"
#include "core/op/registry.h"
#include "ops/random/optimizer_util.h"

/* ---- shared by all samplers ---- */

int mxc__sample_check_head(const char *op_name, const mxc__sample_head *h) {
  if (h->shape.ndim < 0) return MXC_OK;
  char what[160];
  snprintf(what, sizeof what, "operator '%s': parameter 'shape'", op_name);
  mxc__shape s;
  return mxc__shape_make(h->shape.d, h->shape.ndim, 8, what, &s);
}

int mxc__sample_infer_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out) {
  (void)in, (void)n_in, (void)n_out;
  const mxc__sample_head *h = param;
  if (h->shape.ndim < 0) {
    MXC_RETURN_ERROR_IF(out[0].ndim < 0, MXC_ERR_SHAPE,
                        "operator '%s': parameter 'shape' is required when "
                        "no output array is given",
                        op->name);
    return MXC_OK;
  }
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = h->shape.ndim;
  for (int i = 0; i < s.ndim; ++i) s.dims[i] = h->shape.d[i];
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(out[0].ndim >= 0 && !mxc__shape_equal(&out[0], &s),
                      MXC_ERR_SHAPE,
                      "operator '%s': output 0 has shape %s but parameter "
                      "'shape' is %s",
                      op->name, mxc__shape_str(&out[0], b1, sizeof b1),
                      mxc__shape_str(&s, b2, sizeof b2));
  out[0] = s;
  return MXC_OK;
}

/* The dtype a sampler writes: parameter, given output, or default. */
static int resolve_dtype(const mxc__op *op, const mxc__sample_head *h, int *out,
                         int def) {
  int t = h->dtype >= 0 ? h->dtype : out[0] >= 0 ? out[0] : def;
  MXC_RETURN_ERROR_IF(out[0] >= 0 && out[0] != t, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s but parameter 'dtype' "
                      "is %s",
                      op->name, mxc__dtype_name(out[0]), mxc__dtype_name(t));
  out[0] = t;
  return MXC_OK;
}

int mxc__sample_infer_type_float(const mxc__op *op, const void *param, int *in,
                                 int n_in, int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  MXC_FORWARD_IF_ERROR(resolve_dtype(op, param, out, MXC_DTYPE_FLOAT32));
  if (out[0] != MXC_DTYPE_FLOAT32 && out[0] != MXC_DTYPE_FLOAT64) {
    return mxc__unsupported_dtype(op->name, out[0],
                                  "samples are float32 or float64");
  }
  return MXC_OK;
}

void mxc__sample_emit(const mxc__blob *out, mxc__req req, int64_t begin,
                      const double *buf, int64_t m) {
  if (out->dtype == MXC_DTYPE_FLOAT32) {
    float *o = (float *)out->ptr + begin;
    for (int64_t j = 0; j < m; ++j) MXC__ASSIGN(req, o[j], (float)buf[j]);
  } else {
    double *o = (double *)out->ptr + begin;
    for (int64_t j = 0; j < m; ++j) MXC__ASSIGN(req, o[j], buf[j]);
  }
}

int mxc__sample_run(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                    const mxc__blob *out, mxc__req req, int words_per_value,
                    mxc__sample_gen_fn gen) {
  if (req == MXC__REQ_NULL) return MXC_OK;
  int64_t n = mxc__shape_size(&out->shape);
  MXC_FORWARD_IF_ERROR(mxc__rng_check(op->name, &ctx->rng, n, words_per_value));
  double buf[MXC__SAMPLE_CHUNK];
  for (int64_t begin = 0; begin < n; begin += MXC__SAMPLE_CHUNK) {
    int64_t m = n - begin < MXC__SAMPLE_CHUNK ? n - begin : MXC__SAMPLE_CHUNK;
    gen(ctx, param, out->dtype, begin, m, buf);
    mxc__sample_emit(out, req, begin, buf, m);
  }
  return MXC_OK;
}

/* ---- _random_uniform ---- */

static const mxc__param_def k_uniform_params[] = {
    MXC__SAMPLE_HEAD_DEFS(mxc__uniform_param,
                          "float32 (default) or float64."),
    MXC__PARAM(mxc__uniform_param, low, MXC__P_FLOAT, "0", "Lower bound."),
    MXC__PARAM(mxc__uniform_param, high, MXC__P_FLOAT, "1",
               "Upper bound (exclusive)."),
};

static int uniform_check(const char *op_name, void *param) {
  const mxc__uniform_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  MXC_RETURN_ERROR_IF(!(p->low <= p->high) || !isfinite(p->high - p->low),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters low = %g and high = %g; "
                      "expected finite low <= high",
                      op_name, p->low, p->high);
  return MXC_OK;
}

/* float32 uses the slice's 24-bit float layout (one word per value), so
 * that float32 samples are exactly what mxc__rng_uniform_f32 gives. */
static void uniform_gen(const mxc__opctx *ctx, const void *param, int dtype,
                        int64_t begin, int64_t m, double *buf) {
  const mxc__uniform_param *p = param;
  if (dtype == MXC_DTYPE_FLOAT32) {
    float tmp[MXC__SAMPLE_CHUNK];
    mxc__rng_uniform_f32(&ctx->rng, begin, m, (float)p->low, (float)p->high,
                         tmp);
    for (int64_t j = 0; j < m; ++j) buf[j] = tmp[j];
  } else {
    mxc__rng_uniform_f64(&ctx->rng, begin, m, p->low, p->high, buf);
  }
}

static int uniform_compute(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  return mxc__sample_run(op, ctx, param, &out[0], req[0], 2, uniform_gen);
}

/* ---- _random_normal ---- */

static const mxc__param_def k_normal_params[] = {
    MXC__SAMPLE_HEAD_DEFS(mxc__normal_param, "float32 (default) or float64."),
    MXC__PARAM(mxc__normal_param, loc, MXC__P_FLOAT, "0", "Mean."),
    MXC__PARAM(mxc__normal_param, scale, MXC__P_FLOAT, "1",
               "Standard deviation (>= 0)."),
};

static int normal_check(const char *op_name, void *param) {
  const mxc__normal_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  MXC_RETURN_ERROR_IF(
      !(p->scale >= 0) || !isfinite(p->scale) || !isfinite(p->loc),
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': parameter 'scale' = %g, 'loc' = %g; "
      "expected finite values with scale >= 0",
      op_name, p->scale, p->loc);
  return MXC_OK;
}

/* Box-Muller pairs: two words per value (random.h). */
static void normal_gen(const mxc__opctx *ctx, const void *param, int dtype,
                       int64_t begin, int64_t m, double *buf) {
  const mxc__normal_param *p = param;
  if (dtype == MXC_DTYPE_FLOAT32) {
    float tmp[MXC__SAMPLE_CHUNK];
    mxc__rng_normal_f32(&ctx->rng, begin, m, (float)p->loc, (float)p->scale,
                        tmp);
    for (int64_t j = 0; j < m; ++j) buf[j] = tmp[j];
  } else {
    mxc__rng_normal_f64(&ctx->rng, begin, m, p->loc, p->scale, buf);
  }
}

static int normal_compute(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out,
                          const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  return mxc__sample_run(op, ctx, param, &out[0], req[0], 2, normal_gen);
}

/* ---- _random_exponential ---- */

static const mxc__param_def k_exponential_params[] = {
    MXC__SAMPLE_HEAD_DEFS(mxc__exponential_param,
                          "float32 (default) or float64."),
    MXC__PARAM(mxc__exponential_param, lam, MXC__P_FLOAT, "1",
               "Rate (> 0)."),
};

static int exponential_check(const char *op_name, void *param) {
  const mxc__exponential_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  MXC_RETURN_ERROR_IF(!(p->lam > 0) || !isfinite(p->lam),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lam' = %g; expected a "
                      "finite rate > 0",
                      op_name, p->lam);
  return MXC_OK;
}

/* Inversion -log(1 - u) / lam with a 53-bit u in [0, 1): 1 - u is never
 * 0, and the tail reaches about 36.7 / lam. Two words per value. */
static void exponential_gen(const mxc__opctx *ctx, const void *param, int dtype,
                            int64_t begin, int64_t m, double *buf) {
  (void)dtype;
  const mxc__exponential_param *p = param;
  mxc__rng_uniform_f64(&ctx->rng, begin, m, 0.0, 1.0, buf);
  for (int64_t j = 0; j < m; ++j) {
    buf[j] = mxc__philox_exponential(buf[j], p->lam);
  }
}

static int exponential_compute(const mxc__op *op, const mxc__opctx *ctx,
                               const void *param, const mxc__blob *in, int n_in,
                               const mxc__blob *out, int n_out,
                               const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  return mxc__sample_run(op, ctx, param, &out[0], req[0], 2, exponential_gen);
}

/* ---- _random_randint ---- */

static const mxc__param_def k_randint_params[] = {
    MXC__SAMPLE_HEAD_DEFS(mxc__randint_param, "int32 (default) or int64."),
    MXC__PARAM(mxc__randint_param, low, MXC__P_INT, NULL, "Lower bound."),
    MXC__PARAM(mxc__randint_param, high, MXC__P_INT, NULL,
               "Upper bound (exclusive)."),
};

static int randint_check(const char *op_name, void *param) {
  const mxc__randint_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  MXC_RETURN_ERROR_IF(p->low >= p->high, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters low = %lld and high = %lld; "
                      "expected low < high",
                      op_name, (long long)p->low, (long long)p->high);
  return MXC_OK;
}

static int randint_type(const mxc__op *op, const void *param, int *in, int n_in,
                        int *out, int n_out) {
  (void)in, (void)n_in, (void)n_out;
  const mxc__randint_param *p = param;
  MXC_FORWARD_IF_ERROR(resolve_dtype(op, &p->head, out, MXC_DTYPE_INT32));
  if (out[0] != MXC_DTYPE_INT32 && out[0] != MXC_DTYPE_INT64) {
    return mxc__unsupported_dtype(op->name, out[0],
                                  "randint samples are int32 or int64");
  }
  /* high is exclusive, so [low, high) fits int32 when high <= 2^31. */
  MXC_RETURN_ERROR_IF(
      out[0] == MXC_DTYPE_INT32 &&
          (p->low < INT32_MIN || p->high > (int64_t)INT32_MAX + 1),
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': range [%lld, %lld) does not fit int32; "
      "use dtype int64",
      op->name, (long long)p->low, (long long)p->high);
  return MXC_OK;
}

/* Value i takes words 2i and 2i+1 as 64 random bits and maps them to
 * [0, high - low) by a multiply-high (bias <= range / 2^64). */
static int randint_compute(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  const mxc__randint_param *p = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t n = mxc__shape_size(&out[0].shape);
  MXC_FORWARD_IF_ERROR(mxc__rng_check(op->name, &ctx->rng, n, 2));
  /* Unsigned arithmetic: high - low may exceed INT64_MAX. */
  uint64_t span = (uint64_t)p->high - (uint64_t)p->low;
  uint32_t w[2 * MXC__SAMPLE_CHUNK];
  for (int64_t begin = 0; begin < n; begin += MXC__SAMPLE_CHUNK) {
    int64_t m = n - begin < MXC__SAMPLE_CHUNK ? n - begin : MXC__SAMPLE_CHUNK;
    mxc__rng_u32(&ctx->rng, 2 * begin, 2 * m, w);
    for (int64_t j = 0; j < m; ++j) {
      /* Wraps back into [low, high): the result is in range by
       * construction, and GCC/Clang convert out-of-range uint64 modulo
       * 2^64. */
      int64_t v = (int64_t)mxc__philox_randint(w[2 * j], w[2 * j + 1],
                                               (uint64_t)p->low, span);
      if (out[0].dtype == MXC_DTYPE_INT32) {
        int32_t *o = (int32_t *)out[0].ptr + begin;
        MXC__ASSIGN(req[0], o[j], (int32_t)v);
      } else {
        int64_t *o = (int64_t *)out[0].ptr + begin;
        MXC__ASSIGN(req[0], o[j], v);
      }
    }
  }
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_out_names[] = {"output", NULL};
static const char *const k_uniform_aliases[] = {"random_uniform", "uniform",
                                                NULL};
static const char *const k_normal_aliases[] = {"random_normal", "normal", NULL};
static const char *const k_exponential_aliases[] = {"random_exponential", NULL};
static const char *const k_randint_aliases[] = {"random_randint", "randint",
                                                NULL};

#define SAMPLER(nm, al, doc_, st, defs, check, type, fn)                       \
  {                                                                            \
    .name = nm, .aliases = al, .doc = doc_, MXC__PARAMS_OF(st, defs),          \
    .param_check = check, .n_inputs = 0, .n_outputs = 1,                       \
    .output_names = k_out_names, .infer_shape = mxc__sample_infer_shape,       \
    .infer_type = type, .compute = fn, .gradient = mxc__grad_none,             \
    .resources = MXC__RES_RANDOM,                                              \
  }

static const mxc__op k_ops[] = {
    SAMPLER("_random_uniform", k_uniform_aliases,
            "Samples from the uniform distribution on [low, high); output "
            "of the given shape.",
            mxc__uniform_param, k_uniform_params, uniform_check,
            mxc__sample_infer_type_float, uniform_compute),
    SAMPLER("_random_normal", k_normal_aliases,
            "Samples from the normal distribution N(loc, scale^2); output of "
            "the given shape.",
            mxc__normal_param, k_normal_params, normal_check,
            mxc__sample_infer_type_float, normal_compute),
    SAMPLER("_random_exponential", k_exponential_aliases,
            "Samples from the exponential distribution with rate lam (mean "
            "1/lam); output of the given shape.",
            mxc__exponential_param, k_exponential_params,
            exponential_check,
            mxc__sample_infer_type_float, exponential_compute),
    SAMPLER("_random_randint", k_randint_aliases,
            "Samples integers uniformly from [low, high); output of the "
            "given shape.",
            mxc__randint_param, k_randint_params, randint_check, randint_type,
            randint_compute),
};

int mxc__random_register_basic(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}

int mxc__ops_register_random(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__random_register_basic(r));
  MXC_FORWARD_IF_ERROR(mxc__random_register_rejection(r));
  MXC_FORWARD_IF_ERROR(mxc__random_register_discrete(r));
  MXC_FORWARD_IF_ERROR(mxc__random_register_optimizer(r));
  return mxc__random_register_optimizer_ext(r);
}
