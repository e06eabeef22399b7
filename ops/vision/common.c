/* Helpers shared by the files of ops/vision, and the family's
 * registration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"
#include "ops/vision/vision.h"

int mxc__vision_type_float(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = n_in > 0 ? in[0] : (n_out > 0 ? out[0] : -1);
  if (t < 0 || t == MXC_DTYPE_FLOAT32 || t == MXC_DTYPE_FLOAT64) {
    return MXC_OK;
  }
  return mxc__unsupported_dtype(op->name, t,
                                "inputs must be float32 or float64");
}

int mxc__vision_assign(const char *op_name, mxc__shape *slot,
                       const mxc__shape *want, const char *what) {
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s", op_name,
                      what, mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2));
  return MXC_OK;
}

int mxc__vision_need_ndim(const char *op_name, const mxc__shape *s, int ndim,
                          const char *what, const char *expect, int *known) {
  *known = s->ndim >= 0;
  if (!*known) return MXC_OK;
  char b[160];
  MXC_RETURN_ERROR_IF(s->ndim != ndim, MXC_ERR_SHAPE,
                      "operator '%s': %s must be %s; got shape %s", op_name,
                      what, expect, mxc__shape_str(s, b, sizeof b));
  return MXC_OK;
}

mxc__shape mxc__vision_shape(int n, const int64_t *dims) {
  mxc__shape s;
  s.ndim = n;
  for (int i = 0; i < n; ++i) s.dims[i] = dims[i];
  return s;
}

void mxc__vision_clear(void *p, int64_t n, size_t es, mxc__req req) {
  if (req != MXC__REQ_ADD && n > 0) memset(p, 0, (size_t)n * es);
}

/* Parses "(a, b, ...)" / "[a, b]" / "a" into at most max finite values. */
int mxc__vision_parse_floats(const char *op_name, const char *key,
                             const char *s, double *out, int max, int *n) {
  const char *p = s;
  *n = 0;
  while (*p == ' ' || *p == '(' || *p == '[') ++p;
  while (*p && *p != ')' && *p != ']') {
    char *end = NULL;
    double v = strtod(p, &end);
    MXC_RETURN_ERROR_IF(end == p || !isfinite(v) || *n >= max,
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter '%s' = '%s' is not a tuple "
                        "of at most %d finite numbers",
                        op_name, key, s, max);
    out[(*n)++] = v;
    p = end;
    while (*p == ' ' || *p == ',') ++p;
  }
  return MXC_OK;
}

int mxc__ops_register_vision(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__vision_register_roi(r));
  MXC_FORWARD_IF_ERROR(mxc__vision_register_box(r));
  MXC_FORWARD_IF_ERROR(mxc__vision_register_prior(r));
  MXC_FORWARD_IF_ERROR(mxc__vision_register_detection(r));
  MXC_FORWARD_IF_ERROR(mxc__vision_register_target(r));
  return mxc__vision_register_sampler(r);
}
