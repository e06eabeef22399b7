/* Operator calls of layers: by name, through the imperative entry point,
 * so that they are recorded when the thread records. */
#include "core/autograd/autograd.h"
#include "core/base/error.h"
#include "core/nn/internal.h"

int mxc__nn_call_op(const mxc__op *op, int n, const char *const *keys,
                    const char *const *vals, int n_in,
                    mxc__ndarray *const *in, mxc__ndarray **out) {
  mxc__ndarray *y[1] = {NULL};
  MXC_FORWARD_IF_ERROR(
      mxc__imperative_invoke(op, keys, vals, n, in, n_in, y, 1, NULL));
  *out = y[0];
  return MXC_OK;
}

int mxc__nn_call(const char *op, int n, const char *const *keys,
                 const char *const *vals, int n_in, mxc__ndarray *const *in,
                 mxc__ndarray **out) {
  const mxc__op *o = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op, &o));
  return mxc__nn_call_op(o, n, keys, vals, n_in, in, out);
}

int mxc__nn_run_op(mxc__block *b, int n_in, mxc__ndarray *const *in,
                   mxc__ndarray **out) {
  mxc__ndarray *y = NULL;
  MXC_FORWARD_IF_ERROR(mxc__nn_call_op(
      b->op, b->n_op, (const char *const *)b->op_keys,
      (const char *const *)b->op_vals, n_in, in, &y));
  if (!b->act) {
    *out = y;
    return MXC_OK;
  }
  const char *k[] = {"act_type"}, *v[] = {b->act};
  int rc = mxc__nn_call("Activation", 1, k, v, 1, &y, out);
  mxc__ndarray_free(y);
  return rc;
}
