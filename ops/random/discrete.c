/* Random operators with an input: _sample_multinomial (draws category
 * indices from rows of probabilities) and _shuffle (permutes the rows of
 * an array). Both take 64 random bits (two words of the slice) per draw:
 * draw o of multinomial is value o of a float64 uniform fill, step i of
 * the shuffle is words 2i and 2i+1. The slice holds 4 words per input and
 * output element plus 4 (internal.h), more than either needs. */
#include <math.h>
#include <string.h>

#include "core/base/alloc.h"
#include "ops/random/internal.h"

/* ---- _sample_multinomial ---- */

typedef struct multinomial_param {
  mxc__tuple shape; /* samples per distribution */
  int get_prob;
  int dtype;
} multinomial_param;

static const mxc__param_def k_multinomial_params[] = {
    MXC__PARAM(multinomial_param, shape, MXC__P_TUPLE, "()",
               "Shape of the samples drawn from each distribution; () "
               "draws one."),
    MXC__PARAM(multinomial_param, get_prob, MXC__P_BOOL, "false",
               "Also return the log-probability of each sample."),
    MXC__PARAM(multinomial_param, dtype, MXC__P_DTYPE, "int32",
               "Dtype of the sampled indices: int32, int64, float32 or "
               "float64."),
};

static int multinomial_check(const char *op_name, void *param) {
  const multinomial_param *p = param;
  mxc__sample_head h;
  h.shape = p->shape;
  h.dtype = p->dtype;
  return mxc__sample_check_head(op_name, &h);
}

static int multinomial_num_outputs(const void *param) {
  return ((const multinomial_param *)param)->get_prob ? 2 : 1;
}

/* data (..., k) -> samples data.shape[:-1] + shape (log-probs alike). */
static int multinomial_shape(const mxc__op *op, const void *param,
                             mxc__shape *in, int n_in, mxc__shape *out,
                             int n_out) {
  (void)n_in;
  const multinomial_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(in[0].ndim < 1 || in[0].dims[in[0].ndim - 1] < 1,
                      MXC_ERR_SHAPE,
                      "operator '%s': input 'data' has shape %s; expected "
                      "(..., k) with k >= 1 probabilities per row",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1));
  int sdim = p->shape.ndim < 0 ? 0 : p->shape.ndim;
  MXC_RETURN_ERROR_IF(in[0].ndim - 1 + sdim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "operator '%s': data shape %s plus sample shape of %d "
                      "dimensions exceeds %d dimensions",
                      op->name, mxc__shape_str(&in[0], b1, sizeof b1), sdim,
                      MXC_MAX_NDIM);
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = in[0].ndim - 1 + sdim;
  for (int i = 0; i < in[0].ndim - 1; ++i) s.dims[i] = in[0].dims[i];
  for (int i = 0; i < sdim; ++i) s.dims[in[0].ndim - 1 + i] = p->shape.d[i];
  for (int i = 0; i < n_out; ++i) {
    MXC_RETURN_ERROR_IF(out[i].ndim >= 0 && !mxc__shape_equal(&out[i], &s),
                        MXC_ERR_SHAPE,
                        "operator '%s': output %d has shape %s; expected %s",
                        op->name, i, mxc__shape_str(&out[i], b1, sizeof b1),
                        mxc__shape_str(&s, b2, sizeof b2));
    out[i] = s;
  }
  return MXC_OK;
}

static int is_f(int t) {
  return t == MXC_DTYPE_FLOAT32 || t == MXC_DTYPE_FLOAT64;
}

static int multinomial_type(const mxc__op *op, const void *param, int *in,
                            int n_in, int *out, int n_out) {
  (void)n_in;
  const multinomial_param *p = param;
  if (in[0] >= 0 && !is_f(in[0])) {
    return mxc__unsupported_dtype(op->name, in[0],
                                  "probabilities are float32 or float64");
  }
  int want[2] = {p->dtype >= 0 ? p->dtype : MXC_DTYPE_INT32, in[0]};
  if (want[0] != MXC_DTYPE_INT32 && want[0] != MXC_DTYPE_INT64 &&
      !is_f(want[0])) {
    return mxc__unsupported_dtype(op->name, want[0],
                                  "sample indices are int32, int64, "
                                  "float32 or float64");
  }
  for (int i = 0; i < n_out; ++i) {
    if (want[i] < 0) continue;
    MXC_RETURN_ERROR_IF(out[i] >= 0 && out[i] != want[i], MXC_ERR_DTYPE,
                        "operator '%s': output %d is %s; expected %s", op->name,
                        i, mxc__dtype_name(out[i]), mxc__dtype_name(want[i]));
    out[i] = want[i];
  }
  return MXC_OK;
}

static double prob_at(const mxc__blob *b, int64_t i) {
  return b->dtype == MXC_DTYPE_FLOAT32 ? ((const float *)b->ptr)[i]
                                       : ((const double *)b->ptr)[i];
}

/* Every row must be a distribution up to scale: finite, non-negative,
 * positive sum. Checked before anything is written. */
static int multinomial_validate(const char *op_name, const mxc__blob *data,
                                int64_t rows, int64_t k) {
  for (int64_t b = 0; b < rows; ++b) {
    double total = 0;
    for (int64_t j = 0; j < k; ++j) {
      double v = prob_at(data, b * k + j);
      MXC_RETURN_ERROR_IF(!(v >= 0) || !isfinite(v), MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': probability %g at row %lld, "
                          "category %lld; expected finite values >= 0",
                          op_name, v, (long long)b, (long long)j);
      total += v;
    }
    MXC_RETURN_ERROR_IF(!(total > 0) || !isfinite(total),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': probabilities of row %lld sum to %g; "
                        "expected a finite positive sum",
                        op_name, (long long)b, total);
  }
  return MXC_OK;
}

static void put_index(const mxc__blob *o, mxc__req req, int64_t i, int64_t j) {
  switch (o->dtype) {
    case MXC_DTYPE_INT32:
      MXC__ASSIGN(req, ((int32_t *)o->ptr)[i], (int32_t)j);
      break;
    case MXC_DTYPE_INT64:
      MXC__ASSIGN(req, ((int64_t *)o->ptr)[i], j);
      break;
    case MXC_DTYPE_FLOAT32:
      MXC__ASSIGN(req, ((float *)o->ptr)[i], (float)j);
      break;
    default:
      MXC__ASSIGN(req, ((double *)o->ptr)[i], (double)j);
      break;
  }
}

/* Smallest j with cdf[j] > x; categories of probability 0 never qualify
 * (their cdf equals the previous one). x can reach cdf[k-1] only by
 * rounding; then the last category with positive probability is taken. */
static int64_t search_cdf(const double *cdf, int64_t k, double x) {
  int64_t lo = 0, hi = k;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > x) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo == k) {
    lo = k - 1;
    while (lo > 0 && cdf[lo] == cdf[lo - 1]) --lo;
  }
  return lo;
}

/* Sample o (= row * S + s) compares uniform value o, scaled by the row's
 * total, with the row's cumulative sums, so rows need not sum to exactly
 * 1; the log-probability is log(p_j / total). */
static int multinomial_compute(const mxc__op *op, const mxc__opctx *ctx,
                               const void *param, const mxc__blob *in, int n_in,
                               const mxc__blob *out, int n_out,
                               const mxc__req *req) {
  (void)param, (void)n_in;
  const mxc__blob *data = &in[0];
  int64_t k = data->shape.dims[data->shape.ndim - 1];
  int64_t rows = mxc__shape_size(&data->shape) / k;
  int64_t n = mxc__shape_size(&out[0].shape);
  int64_t per_row = rows ? n / rows : 0;
  int want_prob = n_out > 1 && req[1] != MXC__REQ_NULL;
  if ((req[0] == MXC__REQ_NULL && !want_prob) || n == 0) return MXC_OK;
  MXC_FORWARD_IF_ERROR(mxc__rng_check(op->name, &ctx->rng, n, 2));
  MXC_FORWARD_IF_ERROR(multinomial_validate(op->name, data, rows, k));
  double *cdf = mxc__malloc((size_t)k * sizeof(double));
  MXC_RETURN_ERROR_IF(!cdf, MXC_ERR_OOM, "operator '%s': out of memory",
                      op->name);
  double u[MXC__SAMPLE_CHUNK];
  int64_t row = -1;
  for (int64_t begin = 0; begin < n; begin += MXC__SAMPLE_CHUNK) {
    int64_t m = n - begin < MXC__SAMPLE_CHUNK ? n - begin : MXC__SAMPLE_CHUNK;
    mxc__rng_uniform_f64(&ctx->rng, begin, m, 0.0, 1.0, u);
    for (int64_t t = 0; t < m; ++t) {
      int64_t o = begin + t;
      if (o / per_row != row) {
        row = o / per_row;
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) {
          acc += prob_at(data, row * k + j);
          cdf[j] = acc;
        }
      }
      double total = cdf[k - 1];
      int64_t j = search_cdf(cdf, k, u[t] * total);
      if (req[0] != MXC__REQ_NULL) put_index(&out[0], req[0], o, j);
      if (want_prob) {
        double lp = log(prob_at(data, row * k + j) / total);
        mxc__sample_emit(&out[1], req[1], o, &lp, 1);
      }
    }
  }
  mxc__free(cdf);
  return MXC_OK;
}

/* ---- _shuffle ---- */

/* The permutation of n rows: Fisher-Yates from the top, step i (n-1..1)
 * swapping i with j in [0, i] taken from words 2i, 2i+1. */
static void shuffle_perm(const mxc__rng_slice *s, int64_t n, int64_t *perm) {
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  uint32_t w[2 * MXC__SAMPLE_CHUNK];
  for (int64_t top = n - 1; top >= 1; top -= MXC__SAMPLE_CHUNK) {
    int64_t lo =
        top - MXC__SAMPLE_CHUNK + 1 < 1 ? 1 : top - MXC__SAMPLE_CHUNK + 1;
    mxc__rng_u32(s, 2 * lo, 2 * (top - lo + 1), w);
    for (int64_t i = top; i >= lo; --i) {
      uint64_t r = ((uint64_t)w[2 * (i - lo)] << 32) | w[2 * (i - lo) + 1];
      int64_t j = (int64_t)mxc__mulhi64(r, (uint64_t)i + 1);
      int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  }
}

/* out row r = in row perm[r]. When out is in (in-place use), the input is
 * copied first, since a permutation cannot be gathered onto itself. */
static int shuffle_compute(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)param, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int64_t size = mxc__shape_size(&in[0].shape);
  int64_t n = in[0].shape.ndim ? in[0].shape.dims[0] : 1;
  if (size == 0) return MXC_OK;
  int64_t row = size / n;
  size_t esz = mxc__dtype_size(in[0].dtype);
  MXC_FORWARD_IF_ERROR(mxc__rng_check(op->name, &ctx->rng, n, 2));
  int aliased = in[0].ptr == out[0].ptr;
  int64_t *perm = mxc__malloc((size_t)n * sizeof(int64_t));
  void *copy = aliased ? mxc__malloc((size_t)size * esz) : NULL;
  if (!perm || (aliased && !copy)) {
    mxc__free(perm);
    mxc__free(copy);
    return mxc__error_set(MXC_ERR_OOM, "operator '%s': out of memory",
                          op->name);
  }
  mxc__blob src = in[0];
  if (aliased) {
    memcpy(copy, in[0].ptr, (size_t)size * esz);
    src.ptr = copy;
  }
  shuffle_perm(&ctx->rng, n, perm);
  size_t row_bytes = (size_t)row * esz;
  for (int64_t r = 0; r < n; ++r) {
    if (req[0] != MXC__REQ_ADD) {
      memcpy((char *)out[0].ptr + (size_t)r * row_bytes,
             (const char *)src.ptr + (size_t)perm[r] * row_bytes, row_bytes);
      continue;
    }
    for (int64_t e = 0; e < row; ++e) {
      double v = mxc__blob_get(&src, perm[r] * row + e) +
                 mxc__blob_get(&out[0], r * row + e);
      mxc__blob_set(&out[0], r * row + e, v);
    }
  }
  mxc__free(perm);
  mxc__free(copy);
  return MXC_OK;
}

/* ---- descriptors ---- */

static const char *const k_data_names[] = {"data", NULL};
static const char *const k_multinomial_out[] = {"output", "prob", NULL};
static const char *const k_shuffle_out[] = {"output", NULL};
static const char *const k_multinomial_aliases[] = {"sample_multinomial", NULL};
static const char *const k_shuffle_aliases[] = {"shuffle", NULL};
static const int k_inplace[][2] = {{0, 0}};

static const mxc__op k_ops[] = {
    {
        .name = "_sample_multinomial",
        .aliases = k_multinomial_aliases,
        .doc = "Draws category indices from each row of probabilities data "
               "(..., k); output data.shape[:-1] + shape, plus the "
               "log-probabilities of the draws when get_prob is set.",
        .params = k_multinomial_params,
        .n_params =
            sizeof k_multinomial_params / sizeof k_multinomial_params[0],
        .param_size = sizeof(multinomial_param),
        .param_check = multinomial_check,
        .n_inputs = 1,
        .input_names = k_data_names,
        .num_outputs = multinomial_num_outputs,
        .output_names = k_multinomial_out,
        .infer_shape = multinomial_shape,
        .infer_type = multinomial_type,
        .compute = multinomial_compute,
        .gradient = mxc__grad_none,
        .resources = MXC__RES_RANDOM,
    },
    {
        .name = "_shuffle",
        .aliases = k_shuffle_aliases,
        .doc = "Randomly permutes data along its first axis (rows move "
               "whole); output of data's shape and dtype.",
        .n_inputs = 1,
        .input_names = k_data_names,
        .n_outputs = 1,
        .output_names = k_shuffle_out,
        .infer_shape = mxc__infer_shape_same,
        .compute = shuffle_compute,
        .gradient = mxc__grad_none,
        MXC__INPLACE(k_inplace),
        .resources = MXC__RES_RANDOM,
    },
};

int mxc__random_register_discrete(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
