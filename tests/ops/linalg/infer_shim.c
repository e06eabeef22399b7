#include "tests/ops/linalg/infer_shim.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/op.h"

#define MAX_IN 8

int mxct_infer_from_data(const char *op_name, const char *const *keys,
                         const char *const *vals, int n_attrs, int n_in,
                         const int64_t *data, int data_ndim, int *in_ndim,
                         int64_t *in_dims, int *out_ndim, int64_t *out_dims) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op_name, &op));
  MXC_RETURN_ERROR_IF(n_in < 1 || n_in > MAX_IN, MXC_ERR_INVALID_ARGUMENT,
                      "n_in out of range");
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_parse_params(op, keys, vals, n_attrs, &param));
  mxc__shape in[MAX_IN], out[1];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  for (int i = 0; i < n_in; ++i) in[i].ndim = -1;
  out[0].ndim = -1;
  in[0].ndim = data_ndim;
  for (int i = 0; i < data_ndim; ++i) in[0].dims[i] = data[i];
  int rc = op->infer_shape(op, param, in, n_in, out, 1);
  mxc__free(param);
  for (int i = 0; i < n_in; ++i) {
    in_ndim[i] = in[i].ndim;
    for (int j = 0; j < in[i].ndim; ++j) {
      in_dims[i * MXC_MAX_NDIM + j] = in[i].dims[j];
    }
  }
  *out_ndim = out[0].ndim;
  for (int j = 0; j < out[0].ndim; ++j) out_dims[j] = out[0].dims[j];
  return rc;
}
