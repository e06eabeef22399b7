/* Operator introspection and imperative invocation. */
#include <string.h>

#include "api_internal.h"
#include "core/autograd/autograd.h"
#include "core/base/alloc.h"
#include "core/op/arity.h"
#include "core/op/invoke.h"
#include "core/resource/training.h"
#include "core/op/op.h"

static int api_op(mxc_op h, const char *fn, const mxc__op **out) {
  const mxc__op *op = (const mxc__op *)h;
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INVALID_ARGUMENT, "%s: op is NULL", fn);
  MXC_RETURN_ERROR_IF(!mxc__op_is_registered(op), MXC_ERR_INVALID_HANDLE,
                      "%s: op is not an operator handle from mxc_op_find or "
                      "mxc_op_at",
                      fn);
  *out = op;
  return MXC_OK;
}

int mxc_op_count(int *out) {
  API_CHECK_OUT(out, "mxc_op_count", "out");
  *out = mxc__op_count();
  return MXC_OK;
}

int mxc_op_at(int index, mxc_op *out) {
  API_CHECK_OUT(out, "mxc_op_at", "out");
  const mxc__op *op = mxc__op_at(index);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_op_at: index %d is out of range; there are %d "
                      "operators",
                      index, mxc__op_count());
  *out = (mxc_op)op;
  return MXC_OK;
}

int mxc_op_find(const char *name, mxc_op *out) {
  API_CHECK_OUT(out, "mxc_op_find", "out");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(name, &op));
  *out = (mxc_op)op;
  return MXC_OK;
}

int mxc_op_name(mxc_op h, const char **out) {
  API_CHECK_OUT(out, "mxc_op_name", "out");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_name", &op));
  *out = op->name;
  return MXC_OK;
}

int mxc_op_doc(mxc_op h, const char **out) {
  API_CHECK_OUT(out, "mxc_op_doc", "out");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_doc", &op));
  *out = op->doc ? op->doc : "";
  return MXC_OK;
}

int mxc_op_num_params(mxc_op h, int *out) {
  API_CHECK_OUT(out, "mxc_op_num_params", "out");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_num_params", &op));
  *out = op->n_params;
  return MXC_OK;
}

int mxc_op_param(mxc_op h, int index, const char **out_name,
                 const char **out_type, const char **out_default,
                 const char **out_doc) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_param", &op));
  MXC_RETURN_ERROR_IF(index < 0 || index >= op->n_params,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_op_param: index %d is out of range; '%s' has %d "
                      "parameters",
                      index, op->name, op->n_params);
  const mxc__param_def *d = &op->params[index];
  const char *type = NULL;
  MXC_FORWARD_IF_ERROR(mxc__param_type_name(d, &type));
  if (out_name) *out_name = d->name;
  if (out_type) *out_type = type;
  if (out_default) *out_default = d->def;
  if (out_doc) *out_doc = d->doc ? d->doc : "";
  return MXC_OK;
}

int mxc_op_inputs(mxc_op h, int *out_n, int *out_variadic) {
  API_CHECK_OUT(out_n, "mxc_op_inputs", "out_n");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_inputs", &op));
  int variadic;
  int n = mxc__op_declared_inputs(op, &variadic);
  *out_n = n;
  if (out_variadic) *out_variadic = variadic;
  return MXC_OK;
}

int mxc_op_input_name(mxc_op h, int index, const char **out) {
  API_CHECK_OUT(out, "mxc_op_input_name", "out");
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(api_op(h, "mxc_op_input_name", &op));
  int variadic;
  int n = mxc__op_declared_inputs(op, &variadic);
  MXC_RETURN_ERROR_IF(index < 0 || index >= n, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_op_input_name: index %d is out of range; '%s' "
                      "declares %d inputs",
                      index, op->name, n);
  *out = op->input_names ? op->input_names[index] : "data";
  return MXC_OK;
}

/* The operator of handle h, with its parameter arrays checked. */
static int check_params(mxc_op h, const char *fn, const char *const *keys,
                        const char *const *vals, int n, const mxc__op **op) {
  MXC_FORWARD_IF_ERROR(api_op(h, fn, op));
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: parameter keys/vals are NULL or n (%d) is "
                      "negative",
                      fn, n);
  return MXC_OK;
}

static int with_params(mxc_op h, const char *fn, const char *const *keys,
                       const char *const *vals, int n, const mxc__op **op,
                       void **param) {
  MXC_FORWARD_IF_ERROR(check_params(h, fn, keys, vals, n, op));
  return mxc__op_parse_params(*op, keys, vals, n, param);
}

int mxc_op_num_inputs(mxc_op h, const char *const *keys,
                      const char *const *vals, int n, int *out) {
  API_CHECK_OUT(out, "mxc_op_num_inputs", "out");
  const mxc__op *op = NULL;
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(
      with_params(h, "mxc_op_num_inputs", keys, vals, n, &op, &param));
  *out = mxc__op_num_inputs(op, param);
  mxc__free(param);
  return MXC_OK;
}

int mxc_op_num_outputs(mxc_op h, const char *const *keys,
                       const char *const *vals, int n, int *out) {
  API_CHECK_OUT(out, "mxc_op_num_outputs", "out");
  const mxc__op *op = NULL;
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(
      with_params(h, "mxc_op_num_outputs", keys, vals, n, &op, &param));
  *out = mxc__op_num_visible_outputs(op, param);
  mxc__free(param);
  return MXC_OK;
}

/* The core arrays of one mxc_op_invoke call; made: scratch for the
 * handles of created outputs. */
typedef struct invoke_arrays {
  mxc__ndarray **in, **out;
  mxc_ndarray *made;
  mxc__req *req;
} invoke_arrays;

static size_t invoke_arrays_bytes(int n_in, int n_out) {
  return sizeof(mxc__ndarray *) * ((size_t)n_in + (size_t)n_out) +
         (sizeof(mxc_ndarray) + sizeof(mxc__req)) * (size_t)n_out;
}

static void invoke_arrays_carve(char *m, int n_in, int n_out,
                                invoke_arrays *a) {
  a->in = (mxc__ndarray **)m;
  a->out = a->in + n_in;
  a->made = (mxc_ndarray *)(a->out + n_out);
  a->req = (mxc__req *)(a->made + n_out);
}

static int check_invoke_counts(const char *fn, const mxc_ndarray *inputs,
                               int n_inputs, const mxc_ndarray *outputs,
                               int n_outputs) {
  MXC_RETURN_ERROR_IF(n_inputs < 0 || n_inputs > MXC__OP_MAX_ARITY ||
                          (n_inputs > 0 && !inputs),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: inputs is NULL or n_inputs (%d) is out of range "
                      "0..%d",
                      fn, n_inputs, MXC__OP_MAX_ARITY);
  MXC_RETURN_ERROR_IF(n_outputs < 0 || n_outputs > MXC__OP_MAX_ARITY ||
                          (n_outputs > 0 && !outputs),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: outputs is NULL or n_outputs (%d) is out of "
                      "range 0..%d",
                      fn, n_outputs, MXC__OP_MAX_ARITY);
  return MXC_OK;
}

/* Resolves the handles and write modes into a. */
static int resolve_arrays(const char *fn, const mxc_ndarray *inputs,
                          int n_inputs, const mxc_ndarray *outputs,
                          int n_outputs, const int *reqs, invoke_arrays *a) {
  for (int i = 0; i < n_inputs; ++i) {
    MXC_FORWARD_IF_ERROR(
        api_array(inputs[i], "mxc_op_invoke: inputs[i]", &a->in[i]));
  }
  for (int i = 0; i < n_outputs; ++i) {
    a->out[i] = NULL;
    if (outputs[i]) {
      MXC_FORWARD_IF_ERROR(
          api_array(outputs[i], "mxc_op_invoke: outputs[i]", &a->out[i]));
    }
    int r = reqs ? reqs[i] : MXC_REQ_WRITE;
    MXC_RETURN_ERROR_IF(r != MXC_REQ_NULL && r != MXC_REQ_WRITE &&
                            r != MXC_REQ_ADD,
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: reqs[%d] is %d; expected MXC_REQ_NULL, "
                        "MXC_REQ_WRITE or MXC_REQ_ADD",
                        fn, i, r);
    MXC_RETURN_ERROR_IF(r == MXC_REQ_ADD && !outputs[i],
                        MXC_ERR_INVALID_ARGUMENT,
                        "%s: reqs[%d] is MXC_REQ_ADD but outputs[%d] is "
                        "NULL; accumulation needs an existing array",
                        fn, i, i);
    a->req[i] = (mxc__req)r;
  }
  return MXC_OK;
}

/* Hands out created outputs; on failure of a handle, frees the rest. */
static int hand_out(mxc_ndarray *outputs, int n_outputs, invoke_arrays *a) {
  int n_new = 0;
  for (int i = 0; i < n_outputs; ++i) {
    if (outputs[i]) continue;
    uintptr_t hh;
    int rc = mxc__handle_new_owned(
        MXC__HANDLE_NDARRAY, a->out[i], api_dtor_array,
        (int64_t)mxc__ndarray_nbytes(a->out[i]), &hh);
    if (rc != MXC_OK) {
      for (int j = i; j < n_outputs; ++j) {
        if (!outputs[j]) mxc__ndarray_free(a->out[j]);
      }
      for (int j = 0; j < n_new; ++j) mxc_ndarray_free(a->made[j]);
      return rc;
    }
    a->made[n_new++] = (mxc_ndarray)hh;
  }
  n_new = 0;
  for (int i = 0; i < n_outputs; ++i) {
    if (!outputs[i]) outputs[i] = a->made[n_new++];
  }
  return MXC_OK;
}

static int invoke_with(mxc_op h, const char *const *keys,
                       const char *const *vals, int n_params,
                       const mxc_ndarray *inputs, int n_inputs,
                       mxc_ndarray *outputs, int n_outputs, const int *reqs,
                       invoke_arrays *a) {
  const char *fn = "mxc_op_invoke";
  MXC_FORWARD_IF_ERROR(resolve_arrays(fn, inputs, n_inputs, outputs,
                                      n_outputs, reqs, a));
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(check_params(h, fn, keys, vals, n_params, &op));
  int rc = mxc__imperative_invoke(op, keys, vals, n_params, a->in, n_inputs,
                                  a->out, n_outputs, a->req);
  if (rc != MXC_OK) return rc;
  return hand_out(outputs, n_outputs, a);
}

int mxc_op_invoke(mxc_op h, const char *const *keys, const char *const *vals,
                  int n_params, const mxc_ndarray *inputs, int n_inputs,
                  mxc_ndarray *outputs, int n_outputs, const int *reqs) {
  API_GUARD();
  MXC_FORWARD_IF_ERROR(check_invoke_counts("mxc_op_invoke", inputs, n_inputs,
                                           outputs, n_outputs));
  /* 16 inputs and outputs on the stack; wider calls use the heap. */
  _Alignas(16) char small[16 * (3 * sizeof(void *) + sizeof(mxc__req))];
  char *m = mxc__scratch(small, sizeof small, 1,
                         invoke_arrays_bytes(n_inputs, n_outputs));
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM,
                      "mxc_op_invoke: out of memory for %d inputs and %d "
                      "outputs",
                      n_inputs, n_outputs);
  invoke_arrays a;
  invoke_arrays_carve(m, n_inputs, n_outputs, &a);
  int rc = invoke_with(h, keys, vals, n_params, inputs, n_inputs, outputs,
                       n_outputs, reqs, &a);
  mxc__scratch_free(m, small);
  return rc;
}

int mxc_set_training(int is_train, int *out_prev) {
  int prev = mxc__set_training(is_train);
  if (out_prev) *out_prev = prev;
  return MXC_OK;
}
