/* Predictors (core/exec/predictor.h): handle conversion and argument
 * checks. */
#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/exec/predictor.h"
#include "core/graph/infer.h"

static int api_predictor(mxc_predictor h, const char *what,
                         mxc__predictor **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_PREDICTOR, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys the object once no call uses it. */
static void dtor_predictor(void *p) { mxc__predictor_free(p); }

static int wrap_predictor(mxc__predictor *p, mxc_predictor *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_PREDICTOR, p, dtor_predictor, 0, &h);
  if (rc != MXC_OK) {
    mxc__predictor_free(p);
    return rc;
  }
  *out = (mxc_predictor)h;
  return MXC_OK;
}

/* The input description shared by both creates: n >= 1 named shapes. */
static int check_inputs(int n, const char *const *names, const int *ndims,
                        const int64_t *dims, const char *fn,
                        mxc__shape **shapes) {
  MXC_RETURN_ERROR_IF(n < 1 || !names || !ndims, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_inputs is %d with input_names %s and input_ndims "
                      "%s; expected n_inputs >= 1 and both non-NULL",
                      fn, n, names ? "non-NULL" : "NULL",
                      ndims ? "non-NULL" : "NULL");
  return mxc__shapes_from_dims(fn, n, ndims, dims, shapes);
}

/* Binds the first predictor over w and gives it a handle; releases the
 * creator's reference on w either way. */
static int first_predictor(mxc__pred_weights *w, int n,
                           const char *const *names, const mxc__shape *shapes,
                           const int *dtypes, const char *fn,
                           mxc_predictor *out) {
  mxc__pred_inputs in = {n, names, shapes, dtypes};
  mxc__predictor *p = NULL;
  int rc = mxc__predictor_new(w, &in, fn, &p);
  mxc__pred_weights_release(w);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_predictor(p, out);
}

int mxc_predictor_create(const char *symbol_json, const void *params,
                         size_t params_size, int dev_type, int dev_id,
                         int n_inputs, const char *const *input_names,
                         const int *input_ndims, const int64_t *input_dims,
                         const int *input_dtypes, int n_outputs,
                         const char *const *output_names, mxc_predictor *out) {
  API_GUARD();
  const char *fn = "mxc_predictor_create";
  API_CHECK_OUT(out, fn, "out");
  MXC_RETURN_ERROR_IF(!symbol_json, MXC_ERR_INVALID_ARGUMENT,
                      "%s: symbol_json is NULL", fn);
  MXC_RETURN_ERROR_IF(!params && params_size > 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: params is NULL but params_size is %zu", fn,
                      params_size);
  mxc__device dev;
  MXC_FORWARD_IF_ERROR(api_device(dev_type, dev_id, fn, &dev));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(check_inputs(n_inputs, input_names, input_ndims,
                                    input_dims, fn, &shapes));
  mxc__pred_weights *w = NULL;
  int rc = mxc__pred_weights_from_bytes(symbol_json, params, params_size, dev,
                                        n_outputs, output_names, &w);
  if (rc == MXC_OK) {
    rc = first_predictor(w, n_inputs, input_names, shapes, input_dtypes, fn,
                         out);
  }
  mxc__free(shapes);
  return rc;
}

int mxc_predictor_create_from_checkpoint(
    const char *prefix, int epoch, int dev_type, int dev_id, int n_inputs,
    const char *const *input_names, const int *input_ndims,
    const int64_t *input_dims, const int *input_dtypes, int n_outputs,
    const char *const *output_names, mxc_predictor *out) {
  API_GUARD();
  const char *fn = "mxc_predictor_create_from_checkpoint";
  API_CHECK_OUT(out, fn, "out");
  mxc__device dev;
  MXC_FORWARD_IF_ERROR(api_device(dev_type, dev_id, fn, &dev));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(check_inputs(n_inputs, input_names, input_ndims,
                                    input_dims, fn, &shapes));
  mxc__pred_weights *w = NULL;
  int rc = mxc__pred_weights_from_checkpoint(prefix, epoch, dev, n_outputs,
                                             output_names, &w);
  if (rc == MXC_OK) {
    rc = first_predictor(w, n_inputs, input_names, shapes, input_dtypes, fn,
                         out);
  }
  mxc__free(shapes);
  return rc;
}

int mxc_predictor_clone(mxc_predictor pred, mxc_predictor *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_predictor_clone", "out");
  mxc__predictor *p, *c = NULL;
  MXC_FORWARD_IF_ERROR(api_predictor(pred, "mxc_predictor_clone: pred", &p));
  MXC_FORWARD_IF_ERROR(mxc__predictor_reshape(p, 0, NULL, NULL, &c));
  return wrap_predictor(c, out);
}

int mxc_predictor_reshape(mxc_predictor pred, int n, const char *const *names,
                          const int *ndims, const int64_t *dims,
                          mxc_predictor *out) {
  API_GUARD();
  const char *fn = "mxc_predictor_reshape";
  API_CHECK_OUT(out, fn, "out");
  mxc__predictor *p, *r = NULL;
  MXC_FORWARD_IF_ERROR(api_predictor(pred, "mxc_predictor_reshape: pred", &p));
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!names || !ndims)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d with names %s and ndims %s; expected n >= 0 "
                      "and both non-NULL when positive",
                      fn, n, names ? "non-NULL" : "NULL",
                      ndims ? "non-NULL" : "NULL");
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(mxc__shapes_from_dims(fn, n, ndims, dims, &shapes));
  int rc = mxc__predictor_reshape(p, n, names, shapes, &r);
  mxc__free(shapes);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_predictor(r, out);
}

void mxc_predictor_free(mxc_predictor pred) {
  API_GUARD();
  if (!pred) return;
  (void)mxc__handle_free((uintptr_t)pred, MXC__HANDLE_PREDICTOR,
                         "mxc_predictor_free: pred", dtor_predictor);
}

int mxc_predictor_set_input(mxc_predictor pred, const char *name,
                            const void *data, size_t nbytes) {
  API_GUARD();
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(
      api_predictor(pred, "mxc_predictor_set_input: pred", &p));
  return mxc__predictor_set_input(p, name, data, nbytes);
}

int mxc_predictor_set_input_array(mxc_predictor pred, const char *name,
                                  mxc_ndarray arr) {
  API_GUARD();
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(
      api_predictor(pred, "mxc_predictor_set_input_array: pred", &p));
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(
      api_array(arr, "mxc_predictor_set_input_array: arr", &a));
  return mxc__predictor_set_input_array(p, name, a);
}

int mxc_predictor_forward(mxc_predictor pred) {
  API_GUARD();
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(api_predictor(pred, "mxc_predictor_forward: pred", &p));
  return mxc__predictor_forward(p);
}

int mxc_predictor_num_outputs(mxc_predictor pred, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_predictor_num_outputs", "out");
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(
      api_predictor(pred, "mxc_predictor_num_outputs: pred", &p));
  *out = p->ex->n_outputs;
  return MXC_OK;
}

int mxc_predictor_output_shape(mxc_predictor pred, int index, int *out_ndim,
                               int64_t *out_dims, int *out_dtype) {
  API_GUARD();
  const char *fn = "mxc_predictor_output_shape";
  API_CHECK_OUT(out_ndim, fn, "out_ndim");
  API_CHECK_OUT(out_dims, fn, "out_dims");
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(
      api_predictor(pred, "mxc_predictor_output_shape: pred", &p));
  const mxc__ndarray *o;
  MXC_FORWARD_IF_ERROR(mxc__predictor_output(p, index, fn, &o));
  *out_ndim = o->shape.ndim;
  for (int i = 0; i < o->shape.ndim; ++i) out_dims[i] = o->shape.dims[i];
  if (out_dtype) *out_dtype = o->dtype;
  return MXC_OK;
}

int mxc_predictor_get_output(mxc_predictor pred, int index, void *data,
                             size_t nbytes) {
  API_GUARD();
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(
      api_predictor(pred, "mxc_predictor_get_output: pred", &p));
  return mxc__predictor_get_output(p, index, data, nbytes);
}

int mxc_predictor_output(mxc_predictor pred, int index, mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_predictor_output";
  API_CHECK_OUT(out, fn, "out");
  mxc__predictor *p;
  MXC_FORWARD_IF_ERROR(api_predictor(pred, "mxc_predictor_output: pred", &p));
  const mxc__ndarray *o;
  MXC_FORWARD_IF_ERROR(mxc__predictor_output(p, index, fn, &o));
  mxc__ndarray *v;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(o, &v));
  return api_wrap_array(v, out);
}
