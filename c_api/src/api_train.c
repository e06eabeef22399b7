/* Initializers and metrics: argument checks and handles around core/train.
 * Core messages name the method or argument; the prefix adds the function
 * the caller called. */
#include "api_internal.h"
#include "core/train/init.h"
#include "core/train/metric.h"

int mxc_init_array(mxc_ndarray arr, const char *method,
                   const char *const *keys, const char *const *vals,
                   int n_params) {
  API_GUARD();
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(api_array(arr, "mxc_init_array: arr", &a));
  int rc = mxc__init_array(a, method, keys, vals, n_params);
  if (rc != MXC_OK) mxc__error_prefix("mxc_init_array");
  return rc;
}

int mxc_metric_accuracy(mxc_ndarray pred, mxc_ndarray label,
                        int64_t *out_correct, int64_t *out_count) {
  API_GUARD();
  static const char fn[] = "mxc_metric_accuracy";
  API_CHECK_OUT(out_correct, fn, "out_correct");
  API_CHECK_OUT(out_count, fn, "out_count");
  mxc__ndarray *p = NULL, *l = NULL;
  MXC_FORWARD_IF_ERROR(api_array(pred, "mxc_metric_accuracy: pred", &p));
  MXC_FORWARD_IF_ERROR(api_array(label, "mxc_metric_accuracy: label", &l));
  int rc = mxc__metric_accuracy(p, l, out_correct, out_count);
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}

int mxc_metric_cross_entropy(mxc_ndarray prob, mxc_ndarray label, double eps,
                             double *out_sum, int64_t *out_count) {
  API_GUARD();
  static const char fn[] = "mxc_metric_cross_entropy";
  API_CHECK_OUT(out_sum, fn, "out_sum");
  API_CHECK_OUT(out_count, fn, "out_count");
  mxc__ndarray *p = NULL, *l = NULL;
  MXC_FORWARD_IF_ERROR(api_array(prob, "mxc_metric_cross_entropy: prob", &p));
  MXC_FORWARD_IF_ERROR(
      api_array(label, "mxc_metric_cross_entropy: label", &l));
  int rc = mxc__metric_cross_entropy(p, l, eps, out_sum, out_count);
  if (rc != MXC_OK) mxc__error_prefix(fn);
  return rc;
}
