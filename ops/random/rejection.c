/* Samplers that need a variable number of draws per value:
 * _random_gamma (Marsaglia-Tsang) and _random_poisson (inversion for small
 * rates, Hoermann's PTRS for large ones). Both read a sub-stream of the
 * call (internal.h): value i, attempt j uses the Philox block at counter
 * (i, j) under a key derived from the slice. Each value has a fixed budget
 * of attempts; what a value draws never depends on other values, so the
 * results do not depend on threads or chunking. When the budget runs out
 * (probability below 1e-20, see each sampler) the value falls back to the
 * distribution's mode-like value instead of drawing more. */
#include <math.h>

#include "ops/random/internal.h"

#define TWO_PI 6.283185307179586476925286766559

/* Sub-stream tags: distinct per sampler so the two never share numbers
 * even if used on one slice. */
#define TAG_GAMMA 1u
#define TAG_POISSON 2u

/* ---- _random_gamma ---- */

/* Marsaglia-Tsang accepts with probability >= 0.95 for every shape >= 1
 * (shapes < 1 are boosted to shape + 1), so 16 attempts all fail with
 * probability < 0.05^16 ~ 1.5e-21. Attempt GAMMA_ATTEMPTS (one past the
 * last) is the extra uniform of the boost for shape < 1. */
#define GAMMA_ATTEMPTS 16u

typedef struct gamma_param {
  mxc__sample_head head;
  double alpha, beta;
} gamma_param;

static const mxc__param_def k_gamma_params[] = {
    MXC__SAMPLE_HEAD_DEFS(gamma_param, "float32 (default) or float64."),
    MXC__PARAM(gamma_param, alpha, MXC__P_FLOAT, "1", "Shape (> 0)."),
    MXC__PARAM(gamma_param, beta, MXC__P_FLOAT, "1", "Scale (> 0)."),
};

static int gamma_check(const char *op_name, void *param) {
  const gamma_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  MXC_RETURN_ERROR_IF(!(p->alpha > 0) || !(p->beta > 0) ||
                          !isfinite(p->alpha) || !isfinite(p->beta),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameters alpha = %g and beta = %g; "
                      "expected finite values > 0",
                      op_name, p->alpha, p->beta);
  return MXC_OK;
}

/* One Gamma(alpha, 1) value: Marsaglia and Tsang, "A simple method for
 * generating gamma variables" (2000). Each attempt takes one block: words
 * 0-1 (53 bits) and 2 make a Box-Muller normal, word 3 the acceptance
 * uniform in (0, 1). */
static double gamma_one(const mxc__substream *ss, uint64_t i, double alpha) {
  double a = alpha < 1 ? alpha + 1 : alpha;
  double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  double g = d; /* the fallback: v = 1, near the mode */
  uint32_t w[4];
  for (uint32_t j = 0; j < GAMMA_ATTEMPTS; ++j) {
    mxc__substream_block(ss, i, j, w);
    double r = sqrt(-2.0 * log(mxc__unit53_pos(w[0], w[1])));
    double x = r * cos(TWO_PI * (double)w[2] * (1.0 / 4294967296.0));
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = ((double)w[3] + 0.5) * (1.0 / 4294967296.0);
    double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2 ||
        log(u) < 0.5 * x2 + d * (1.0 - v + log(v))) {
      g = d * v;
      break;
    }
  }
  if (alpha < 1) {
    /* Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha). */
    mxc__substream_block(ss, i, GAMMA_ATTEMPTS, w);
    g *= exp(log(mxc__unit53_pos(w[0], w[1])) / alpha);
  }
  return g;
}

static void gamma_gen(const mxc__opctx *ctx, const void *param, int dtype,
                      int64_t begin, int64_t m, double *buf) {
  (void)dtype;
  const gamma_param *p = param;
  mxc__substream ss = mxc__substream_of(&ctx->rng, TAG_GAMMA);
  for (int64_t j = 0; j < m; ++j) {
    buf[j] = p->beta * gamma_one(&ss, (uint64_t)(begin + j), p->alpha);
  }
}

static int gamma_compute(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  return mxc__sample_run(op, ctx, param, &out[0], req[0], 0, gamma_gen);
}

/* ---- _random_poisson ---- */

/* Below this rate: inversion by sequential search from one uniform (as
 * numpy does below 10); above: PTRS. */
#define POISSON_PTRS_MIN 10.0
/* The inversion search stops here; P(k > 256) for lam < 10 is < 1e-200. */
#define POISSON_INV_MAX 256
/* PTRS accepts with probability ~0.85..0.9 per attempt for lam >= 10, so
 * 32 attempts all fail with probability < 0.15^32 ~ 4e-27. */
#define POISSON_ATTEMPTS 32u

typedef struct poisson_param {
  mxc__sample_head head;
  double lam;
} poisson_param;

static const mxc__param_def k_poisson_params[] = {
    MXC__SAMPLE_HEAD_DEFS(poisson_param, "float32 (default) or float64."),
    MXC__PARAM(poisson_param, lam, MXC__P_FLOAT, "1", "Rate (>= 0)."),
};

static int poisson_check(const char *op_name, void *param) {
  const poisson_param *p = param;
  MXC_FORWARD_IF_ERROR(mxc__sample_check_head(op_name, &p->head));
  /* 2^52 keeps every count exactly representable in float64. */
  MXC_RETURN_ERROR_IF(!(p->lam >= 0) || !(p->lam < 4503599627370496.0),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'lam' = %g; expected a rate "
                      "in [0, 2^52)",
                      op_name, p->lam);
  return MXC_OK;
}

static double poisson_inversion(const mxc__substream *ss, uint64_t i,
                                double lam) {
  uint32_t w[4];
  mxc__substream_block(ss, i, 0, w);
  double u = mxc__unit53(w[0], w[1]);
  double pk = exp(-lam), cdf = pk;
  int k = 0;
  while (u > cdf && k < POISSON_INV_MAX) {
    ++k;
    pk *= lam / k;
    cdf += pk;
  }
  return k;
}

/* Hoermann, "The transformed rejection method for generating Poisson
 * random variables" (1993), algorithm PTRS. Attempt j: U from words 0-1,
 * V from words 2-3. lgamma_r because lgamma writes the global signgam,
 * which kernels running on several threads would race on. */
static double poisson_ptrs(const mxc__substream *ss, uint64_t i, double lam) {
  double slam = sqrt(lam), loglam = log(lam);
  double b = 0.931 + 2.53 * slam;
  double a = -0.059 + 0.02483 * b;
  double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  double vr = 0.9277 - 3.6224 / (b - 2);
  uint32_t w[4];
  for (uint32_t j = 0; j < POISSON_ATTEMPTS; ++j) {
    mxc__substream_block(ss, i, j, w);
    double u = mxc__unit53(w[0], w[1]) - 0.5;
    double v = mxc__unit53(w[2], w[3]);
    double us = 0.5 - fabs(u);
    double k = floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    int sign = 0;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <=
        -lam + k * loglam - lgamma_r(k + 1, &sign)) {
      return k;
    }
  }
  return floor(lam); /* the mode */
}

static void poisson_gen(const mxc__opctx *ctx, const void *param, int dtype,
                        int64_t begin, int64_t m, double *buf) {
  (void)dtype;
  const poisson_param *p = param;
  mxc__substream ss = mxc__substream_of(&ctx->rng, TAG_POISSON);
  for (int64_t j = 0; j < m; ++j) {
    uint64_t i = (uint64_t)(begin + j);
    if (p->lam == 0) {
      buf[j] = 0;
    } else if (p->lam < POISSON_PTRS_MIN) {
      buf[j] = poisson_inversion(&ss, i, p->lam);
    } else {
      buf[j] = poisson_ptrs(&ss, i, p->lam);
    }
  }
}

static int poisson_compute(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)in, (void)n_in, (void)n_out;
  return mxc__sample_run(op, ctx, param, &out[0], req[0], 0, poisson_gen);
}

/* ---- descriptors ---- */

static const char *const k_out_names[] = {"output", NULL};
static const char *const k_gamma_aliases[] = {"random_gamma", NULL};
static const char *const k_poisson_aliases[] = {"random_poisson", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_random_gamma",
        .aliases = k_gamma_aliases,
        .doc = "Samples from the gamma distribution with shape alpha and "
               "scale beta (mean alpha * beta); output of the given shape.",
        MXC__PARAMS_OF(gamma_param, k_gamma_params),
        .param_check = gamma_check,
        .n_outputs = 1,
        .output_names = k_out_names,
        .infer_shape = mxc__sample_infer_shape,
        .infer_type = mxc__sample_infer_type_float,
        .compute = gamma_compute,
        .gradient = mxc__grad_none,
        .resources = MXC__RES_RANDOM,
    },
    {
        .name = "_random_poisson",
        .aliases = k_poisson_aliases,
        .doc = "Samples from the Poisson distribution with rate lam, as "
               "floats with integer values; output of the given shape.",
        MXC__PARAMS_OF(poisson_param, k_poisson_params),
        .param_check = poisson_check,
        .n_outputs = 1,
        .output_names = k_out_names,
        .infer_shape = mxc__sample_infer_shape,
        .infer_type = mxc__sample_infer_type_float,
        .compute = poisson_compute,
        .gradient = mxc__grad_none,
        .resources = MXC__RES_RANDOM,
    },
};

int mxc__random_register_rejection(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
