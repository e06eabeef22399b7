#include "tests/ops/grad_shim.h"

#include "c_api/src/api_internal.h"
#include "core/base/alloc.h"
#include "core/op/grad_eval.h"

int mxct_num_all_outputs(const char *op_name, const char *const *keys,
                         const char *const *vals, int n_attrs) {
  const mxc__op *op;
  void *param;
  if (mxc__op_lookup(op_name, &op) != MXC_OK) return -1;
  if (mxc__op_parse_params(op, keys, vals, n_attrs, &param) != MXC_OK) {
    return -1;
  }
  int n = mxc__op_num_outputs(op, param);
  mxc__free(param);
  return n;
}

/* The internal arrays of the handles; a[0..4n) holds in, out, ograd and
 * igrad (n entries each). */
static int grad_eval_with(const char *op_name, const char *const *keys,
                          const char *const *vals, int n_attrs,
                          const mxc_ndarray *in, int n_in,
                          const mxc_ndarray *out, int n_out,
                          const mxc_ndarray *ograd, mxc_ndarray *igrad,
                          mxc__ndarray **a, int n) {
  mxc__ndarray **i_in = a, **i_out = a + n, **i_og = a + 2 * n,
               **i_ig = a + 3 * n;
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(in[i], "in", &i_in[i]));
  }
  const mxc__op *op;
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op_name, &op));
  MXC_FORWARD_IF_ERROR(
      mxc__op_parse_params(op, keys, vals, n_attrs, &param));
  int n_vis = mxc__op_num_visible_outputs(op, param);
  mxc__free(param);
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(out[i], "out", &i_out[i]));
  }
  for (int i = 0; i < n_vis && i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(api_array(ograd[i], "ograd", &i_og[i]));
  }
  MXC_FORWARD_IF_ERROR(mxc__grad_eval(op_name, keys, vals, n_attrs, i_in,
                                      n_in, i_out, n_out, i_og, i_ig));
  for (int i = 0; i < n_in; ++i) {
    igrad[i] = NULL;
    if (i_ig[i]) MXC_FORWARD_IF_ERROR(api_wrap_array(i_ig[i], &igrad[i]));
  }
  return MXC_OK;
}

int mxct_grad_eval(const char *op_name, const char *const *keys,
                   const char *const *vals, int n_attrs,
                   const mxc_ndarray *in, int n_in, const mxc_ndarray *out,
                   int n_out, const mxc_ndarray *ograd, mxc_ndarray *igrad) {
  int n = (n_in > n_out ? n_in : n_out) + 1;
  mxc__ndarray **a = mxc__calloc(4 * (size_t)n, sizeof *a);
  if (!a) return MXC_ERR_OOM;
  int rc = grad_eval_with(op_name, keys, vals, n_attrs, in, n_in, out, n_out,
                          ograd, igrad, a, n);
  mxc__free(a);
  return rc;
}
