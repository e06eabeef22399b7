#include "tests/sparse_reduce/shim.h"

#include "c_api/src/api_internal.h"
#include "core/base/alloc.h"
#include "core/op/grad_eval.h"

int mxct_infer_stype(const char *op_name, const char *const *keys,
                     const char *const *vals, int n_attrs, const int *in,
                     int n_in, int *out, int n_out, int *dispatch) {
  const mxc__op *op;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op_name, &op));
  mxc__infer_stype_fn f = mxc__op_infer_stype(op);
  MXC_RETURN_ERROR_IF(!f, MXC_ERR_NOT_FOUND,
                      "operator '%s' has no storage-type inference", op_name);
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_parse_params(op, keys, vals, n_attrs, &param));
  int rc = f(op, param, in, n_in, out, n_out, dispatch);
  mxc__free(param);
  return rc;
}

int mxct_grad(const char *op_name, const char *const *keys,
              const char *const *vals, int n_attrs, const mxc_ndarray *in,
              int n_in, mxc_ndarray out, mxc_ndarray ograd,
              mxc_ndarray *igrad) {
  mxc__ndarray *i_in[8], *i_out, *i_og, *i_ig[8] = {0};
  MXC_RETURN_ERROR_IF(n_in > 8, MXC_ERR_UNSUPPORTED, "too many inputs");
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(in[i], "in", &i_in[i]));
  }
  MXC_FORWARD_IF_ERROR(api_array(out, "out", &i_out));
  MXC_FORWARD_IF_ERROR(api_array(ograd, "ograd", &i_og));
  MXC_FORWARD_IF_ERROR(mxc__grad_eval(op_name, keys, vals, n_attrs, i_in, n_in,
                                      &i_out, 1, &i_og, i_ig));
  int rc = MXC_OK;
  for (int i = 0; i < n_in; ++i) {
    igrad[i] = NULL;
    if (!i_ig[i]) continue;
    if (rc == MXC_OK) {
      rc = api_wrap_array(i_ig[i], &igrad[i]); /* frees it on failure */
    } else {
      mxc__ndarray_free(i_ig[i]);
    }
  }
  if (rc != MXC_OK) {
    for (int i = 0; i < n_in; ++i) {
      if (igrad[i]) mxc_ndarray_free(igrad[i]);
      igrad[i] = NULL;
    }
  }
  return rc;
}
