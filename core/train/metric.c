/* Metrics (see metric.h). Inputs are copied to host doubles first: the copy
 * is ordered by the engine after pending writes and surfaces their
 * failures, and doubles let one loop serve every supported dtype. */
#include "core/train/metric.h"

#include <math.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"

/* Element i of a host buffer of `dtype` as a double. */
static double elem(const void *p, int dtype, int64_t i) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: return ((const float *)p)[i];
    case MXC_DTYPE_FLOAT64: return ((const double *)p)[i];
    case MXC_DTYPE_INT32: return ((const int32_t *)p)[i];
    case MXC_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case MXC_DTYPE_INT8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i]; /* MXC_DTYPE_UINT8 */
  }
}

static int check_input(const mxc__ndarray *a, const char *what) {
  int d = a->dtype;
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s must be a dense array", what);
  MXC_RETURN_ERROR_IF(d != MXC_DTYPE_FLOAT32 && d != MXC_DTYPE_FLOAT64 &&
                          d != MXC_DTYPE_INT32 && d != MXC_DTYPE_INT64 &&
                          d != MXC_DTYPE_INT8 && d != MXC_DTYPE_UINT8,
                      MXC_ERR_DTYPE,
                      "%s has dtype %s; expected float32, float64, int32, "
                      "int64, int8 or uint8", what, mxc__dtype_name(d));
  return MXC_OK;
}

/* *out = the array's values as a new mxc__malloc'd double buffer (NULL for
 * an empty array). Waits for pending writes through the copy. */
static int read_doubles(const mxc__ndarray *a, double **out) {
  int64_t n = mxc__ndarray_size(a);
  *out = NULL;
  if (n == 0) return MXC_OK;
  size_t nbytes = mxc__ndarray_nbytes(a);
  void *raw = mxc__malloc(nbytes);
  double *d = mxc__malloc((size_t)n * sizeof *d);
  int rc = (raw && d) ? MXC_OK
                      : mxc__error_set(MXC_ERR_OOM, "metric: out of memory");
  if (rc == MXC_OK) rc = mxc__ndarray_copy_to_host(a, raw, nbytes);
  for (int64_t i = 0; rc == MXC_OK && i < n; ++i) d[i] = elem(raw, a->dtype, i);
  mxc__free(raw);
  if (rc != MXC_OK) {
    mxc__free(d);
    return rc;
  }
  *out = d;
  return MXC_OK;
}

/* Both inputs as doubles; on failure nothing is left allocated. */
static int read_pair(const mxc__ndarray *x, const mxc__ndarray *y, double **xd,
                     double **yd) {
  MXC_FORWARD_IF_ERROR(read_doubles(x, xd));
  int rc = read_doubles(y, yd);
  if (rc != MXC_OK) {
    mxc__free(*xd);
    *xd = NULL;
  }
  return rc;
}

/* Shapes: x is (N, K) with K >= 1 (or (N) when allow_1d) and label (N). */
static int check_shapes(const mxc__ndarray *x, const mxc__ndarray *label,
                        int allow_1d, const char *xname) {
  char b1[160], b2[160];
  const mxc__shape *xs = &x->shape, *ls = &label->shape;
  int x_ok = xs->ndim == 2 || (allow_1d && xs->ndim == 1);
  int n_ok = x_ok && ls->ndim == 1 && ls->dims[0] == xs->dims[0];
  int k_ok = xs->ndim != 2 || xs->dims[1] > 0 || xs->dims[0] == 0;
  MXC_RETURN_ERROR_IF(!n_ok || !k_ok, MXC_ERR_SHAPE,
                      "%s has shape %s and label %s; expected %s (N, K) with "
                      "K >= 1%s and label (N)", xname,
                      mxc__shape_str(xs, b1, sizeof b1),
                      mxc__shape_str(ls, b2, sizeof b2), xname,
                      allow_1d ? " or (N)" : "");
  return MXC_OK;
}

/* Index of the first maximum: ties go to the lowest index (MXNet's
 * argmax behaves the same), NaN never wins over a number. */
static int64_t argmax_row(const double *row, int64_t k) {
  int64_t best = 0;
  for (int64_t j = 1; j < k; ++j) {
    if (row[j] > row[best] || (isnan(row[best]) && !isnan(row[j]))) best = j;
  }
  return best;
}

int mxc__metric_accuracy(const mxc__ndarray *pred, const mxc__ndarray *label,
                         int64_t *correct, int64_t *count) {
  MXC_FORWARD_IF_ERROR(check_input(pred, "pred"));
  MXC_FORWARD_IF_ERROR(check_input(label, "label"));
  MXC_FORWARD_IF_ERROR(check_shapes(pred, label, 1, "pred"));
  double *p = NULL, *l = NULL;
  MXC_FORWARD_IF_ERROR(read_pair(pred, label, &p, &l));
  int64_t n = label->shape.dims[0];
  int64_t k = pred->shape.ndim == 2 ? pred->shape.dims[1] : 0;
  int64_t hits = 0;
  for (int64_t i = 0; i < n; ++i) {
    double id = k ? (double)argmax_row(p + i * k, k) : round(p[i]);
    hits += id == round(l[i]); /* NaN labels never match */
  }
  mxc__free(p);
  mxc__free(l);
  *correct = hits;
  *count = n;
  return MXC_OK;
}

/* Checks every label before summing, so a bad one gives an error rather
 * than a partial sum. */
static int check_labels(const double *l, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; ++i) {
    double c = round(l[i]);
    MXC_RETURN_ERROR_IF(!(c >= 0 && c < (double)k), MXC_ERR_INVALID_ARGUMENT,
                        "label[%lld] = %g is not a class index in [0, %lld)",
                        (long long)i, l[i], (long long)k);
  }
  return MXC_OK;
}

int mxc__metric_cross_entropy(const mxc__ndarray *prob,
                              const mxc__ndarray *label, double eps,
                              double *sum, int64_t *count) {
  MXC_RETURN_ERROR_IF(!(eps >= 0) || isinf(eps), MXC_ERR_INVALID_ARGUMENT,
                      "eps = %g must be finite and >= 0", eps);
  MXC_FORWARD_IF_ERROR(check_input(prob, "prob"));
  MXC_FORWARD_IF_ERROR(check_input(label, "label"));
  MXC_FORWARD_IF_ERROR(check_shapes(prob, label, 0, "prob"));
  double *p = NULL, *l = NULL;
  MXC_FORWARD_IF_ERROR(read_pair(prob, label, &p, &l));
  int64_t n = label->shape.dims[0], k = prob->shape.dims[1];
  int rc = check_labels(l, n, k);
  double s = 0.0;
  for (int64_t i = 0; rc == MXC_OK && i < n; ++i) {
    /* Not fmax: a NaN probability must show in the sum, not become eps. */
    double v = p[i * k + (int64_t)round(l[i])];
    s -= log(v < eps ? eps : v);
  }
  mxc__free(p);
  mxc__free(l);
  if (rc != MXC_OK) return rc;
  *sum = s;
  *count = n;
  return MXC_OK;
}
