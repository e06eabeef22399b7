/* Helpers shared by the files of ops/nn (see nn.h). */
#include <stdio.h>

#include "ops/families.h"
#include "ops/nn/nn.h"
#include "core/op/registry.h"

mxc__nn_layout mxc__nn_split(const mxc__shape *s, int axis) {
  mxc__nn_layout l = {1, 1, 1};
  for (int d = 0; d < s->ndim; ++d) {
    if (d < axis) {
      l.outer *= s->dims[d];
    } else if (d == axis) {
      l.n = s->dims[d];
    } else {
      l.inner *= s->dims[d];
    }
  }
  return l;
}

int mxc__nn_axis(const char *op_name, const char *param_name, int64_t axis,
                 const mxc__shape *data, int *out) {
  char b[160];
  int64_t a = axis < 0 ? axis + data->ndim : axis;
  MXC_RETURN_ERROR_IF(a < 0 || a >= data->ndim, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = %lld is out of range "
                      "for data of shape %s; expected -%d..%d",
                      op_name, param_name, (long long)axis,
                      mxc__shape_str(data, b, sizeof b), data->ndim,
                      data->ndim - 1);
  *out = (int)a;
  return MXC_OK;
}

mxc__shape mxc__nn_shape1(int64_t n) {
  mxc__shape s;
  s.ndim = 1;
  s.dims[0] = n;
  return s;
}

int mxc__nn_assign_shape(const char *op_name, mxc__shape *slot,
                         const mxc__shape *want, const char *what,
                         const char *why) {
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator '%s': %s has shape %s; expected %s (%s)",
                      op_name, what, mxc__shape_str(slot, b1, sizeof b1),
                      mxc__shape_str(want, b2, sizeof b2), why);
  return MXC_OK;
}

int mxc__nn_check_float(const char *op_name, int dt, const char *what) {
  if (dt < 0 || dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_FLOAT64) {
    return MXC_OK;
  }
  char msg[160];
  snprintf(msg, sizeof msg, "%s must be float32 or float64", what);
  return mxc__unsupported_dtype(op_name, dt, msg);
}

int mxc__nn_type_float(const mxc__op *op, const void *param, int *in, int n_in,
                       int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = n_in > 0 ? in[0] : (n_out > 0 ? out[0] : -1);
  return mxc__nn_check_float(op->name, t, "the data");
}

int64_t mxc__nn_class_of(const mxc__blob *label, int64_t i, int64_t n) {
  double v = mxc__blob_get(label, i);
  /* Written so that NaN fails every comparison and lands on -1. */
  if (!(v >= 0 && v < (double)n)) return -1;
  int64_t k = (int64_t)v;
  return (double)k == v ? k : -1;
}

/* ---- registration ---- */

int mxc__ops_register_nn(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__nn_register_activation(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_batch_norm(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_layer_norm(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_l2_norm(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_dropout(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_embedding(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_upsampling(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_softmax_loss(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_regression(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_lrn(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_group_norm(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_make_loss(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_pointwise(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_sequence(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_resize(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_all_finite(r));
  MXC_FORWARD_IF_ERROR(mxc__nn_register_softmax_activation(r));
  return MXC_OK;
}
