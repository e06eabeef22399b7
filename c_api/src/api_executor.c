/* Executors (core/exec/executor.h): handle conversion and argument checks. */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/exec/executor.h"
#include "core/graph/infer.h"

static int api_executor(mxc_executor h, const char *what, mxc__executor **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_EXECUTOR, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys the object once no call uses it. */
static void dtor_executor(void *p) { mxc__executor_free(p); }

static int wrap_executor(mxc__executor *ex, mxc_executor *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_EXECUTOR, ex, dtor_executor, 0, &h);
  if (rc != MXC_OK) {
    mxc__executor_free(ex);
    return rc;
  }
  *out = (mxc_executor)h;
  return MXC_OK;
}

/* *out = a new array of n internal arrays for handles h (NULL handles
 * give NULL when allow_null, else an error naming "<what>[i]"). */
static int api_arrays(const mxc_ndarray *h, int n, int allow_null,
                      const char *what, mxc__ndarray ***out) {
  mxc__ndarray **a = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof *a);
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_OOM, "%s: out of memory", what);
  for (int i = 0; h && i < n; ++i) {
    if (!h[i] && allow_null) continue;
    char name[160];
    snprintf(name, sizeof name, "%s[%d]", what, i);
    int rc = api_array(h[i], name, &a[i]);
    if (rc != MXC_OK) {
      mxc__free(a);
      return rc;
    }
  }
  *out = a;
  return MXC_OK;
}

/* The internal flag MXC__BIND_GRAPH_OF_GPU (tests' CPU bind of a GPU
 * executor's graph) is not the public API's: refused as an unknown bit,
 * as binding refuses any other. */
static int check_public_flags(int flags, const char *fn) {
  MXC_RETURN_ERROR_IF(flags & MXC__BIND_GRAPH_OF_GPU, MXC_ERR_INVALID_ARGUMENT,
                      "%s: flags 0x%x has unknown bits; expected a "
                      "combination of MXC_BIND_*",
                      fn, (unsigned)flags);
  return MXC_OK;
}

int mxc_executor_bind(mxc_symbol sym, int dev_type, int dev_id, int n_args,
                      const mxc_ndarray *args, const mxc_ndarray *arg_grads,
                      const int *grad_reqs, int n_aux, const mxc_ndarray *aux,
                      int flags, mxc_executor *out) {
  API_GUARD();
  const char *fn = "mxc_executor_bind";
  API_CHECK_OUT(out, fn, "out");
  mxc__symbol *s;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_executor_bind: sym", &s));
  mxc__device dev;
  MXC_FORWARD_IF_ERROR(api_device(dev_type, dev_id, fn, &dev));
  MXC_FORWARD_IF_ERROR(check_public_flags(flags, fn));
  MXC_RETURN_ERROR_IF(n_args < 0 || (n_args > 0 && !args),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_args is %d with args %s; expected n_args >= 0 "
                      "and args non-NULL when positive",
                      fn, n_args, args ? "non-NULL" : "NULL");
  MXC_RETURN_ERROR_IF(n_aux < 0 || (n_aux > 0 && !aux),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_aux is %d with aux %s; expected n_aux >= 0 and "
                      "aux non-NULL when positive",
                      fn, n_aux, aux ? "non-NULL" : "NULL");
  mxc__ndarray **a = NULL, **g = NULL, **x = NULL;
  int rc = api_arrays(args, n_args, 0, "mxc_executor_bind: args", &a);
  if (rc == MXC_OK) {
    rc = api_arrays(arg_grads, n_args, 1, "mxc_executor_bind: arg_grads", &g);
  }
  if (rc == MXC_OK)
    rc = api_arrays(aux, n_aux, 0, "mxc_executor_bind: aux", &x);
  mxc__executor *ex = NULL;
  if (rc == MXC_OK) {
    rc = mxc__executor_bind(s, dev, a, n_args, arg_grads ? g : NULL, grad_reqs,
                            x, n_aux, flags, fn, &ex);
  }
  mxc__free(a);
  mxc__free(g);
  mxc__free(x);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_executor(ex, out);
}

/* Checks the dtypes given to simple_bind. */
static int check_dtypes(const int *dtypes, int n, const char *fn) {
  for (int i = 0; dtypes && i < n; ++i) {
    MXC_RETURN_ERROR_IF(mxc__dtype_size(dtypes[i]) == 0, MXC_ERR_DTYPE,
                        "%s: dtypes[%d] is %d, which is not a known dtype", fn,
                        i, dtypes[i]);
  }
  return MXC_OK;
}

int mxc_executor_simple_bind(mxc_symbol sym, int dev_type, int dev_id,
                             int n_shapes, const char *const *names,
                             const int *ndims, const int64_t *dims,
                             const int *dtypes, int default_req, int n_reqs,
                             const char *const *req_names, const int *reqs,
                             int flags, mxc_executor *out) {
  API_GUARD();
  const char *fn = "mxc_executor_simple_bind";
  API_CHECK_OUT(out, fn, "out");
  mxc__symbol *s;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_executor_simple_bind: sym", &s));
  mxc__device dev;
  MXC_FORWARD_IF_ERROR(api_device(dev_type, dev_id, fn, &dev));
  MXC_FORWARD_IF_ERROR(check_public_flags(flags, fn));
  MXC_FORWARD_IF_ERROR(check_dtypes(dtypes, n_shapes, fn));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__shapes_from_dims(fn, n_shapes, ndims, dims, &shapes));
  mxc__executor *ex = NULL;
  int rc = mxc__executor_simple_bind(s, dev, n_shapes, names, shapes, dtypes,
                                     default_req, n_reqs, req_names, reqs,
                                     flags, &ex);
  mxc__free(shapes);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_executor(ex, out);
}

void mxc_executor_free(mxc_executor ex) {
  API_GUARD();
  if (!ex) return;
  mxc__executor *e;
  if (api_executor(ex, "mxc_executor_free: ex", &e) != MXC_OK ||
      mxc__executor_check_not_monitoring(e, "mxc_executor_free") != MXC_OK) {
    return; /* reported through mxc_last_error */
  }
  (void)mxc__handle_free((uintptr_t)ex, MXC__HANDLE_EXECUTOR,
                         "mxc_executor_free: ex", dtor_executor);
}

int mxc_executor_forward(mxc_executor ex, int is_train) {
  API_GUARD();
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_forward: ex", &e));
  return mxc__executor_forward(e, is_train);
}

int mxc_executor_backward(mxc_executor ex, int n,
                          const mxc_ndarray *head_grads) {
  API_GUARD();
  const char *fn = "mxc_executor_backward";
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_backward: ex", &e));
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && !head_grads), MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d with head_grads %s; expected n >= 0 and "
                      "head_grads non-NULL when positive",
                      fn, n, head_grads ? "non-NULL" : "NULL");
  mxc__ndarray **hg = NULL;
  MXC_FORWARD_IF_ERROR(
      api_arrays(head_grads, n, 0, "mxc_executor_backward: head_grads", &hg));
  int rc = mxc__executor_backward(e, n, hg);
  mxc__free(hg);
  return rc;
}

int mxc_executor_num_outputs(mxc_executor ex, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_executor_num_outputs", "out");
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_num_outputs: ex", &e));
  *out = e->n_outputs;
  return MXC_OK;
}

/* A new handle on a borrowed executor array. */
static int lend(const mxc__ndarray *a, mxc_ndarray *out) {
  mxc__ndarray *v;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &v));
  return api_wrap_array(v, out);
}

int mxc_executor_output(mxc_executor ex, int index, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_executor_output", "out");
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_output: ex", &e));
  MXC_RETURN_ERROR_IF(index < 0 || index >= e->n_outputs,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_executor_output: index %d is out of range; the "
                      "executor has %d outputs",
                      index, e->n_outputs);
  return lend(mxc__executor_output(e, index), out);
}

static int find(mxc_executor ex, int group, const char *name, const char *fn,
                mxc_ndarray *out) {
  API_CHECK_OUT(out, fn, "out");
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT, "%s: name is NULL", fn);
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)ex, MXC__HANDLE_EXECUTOR, fn, &p));
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(mxc__executor_find(p, group, name, fn, &a));
  return lend(a, out);
}

int mxc_executor_arg(mxc_executor ex, const char *name, mxc_ndarray *out) {
  API_GUARD();
  return find(ex, MXC__EXEC_ARG, name, "mxc_executor_arg", out);
}

int mxc_executor_grad(mxc_executor ex, const char *name, mxc_ndarray *out) {
  API_GUARD();
  return find(ex, MXC__EXEC_GRAD, name, "mxc_executor_grad", out);
}

int mxc_executor_aux(mxc_executor ex, const char *name, mxc_ndarray *out) {
  API_GUARD();
  return find(ex, MXC__EXEC_AUX, name, "mxc_executor_aux", out);
}

int mxc_executor_reshape(mxc_executor ex, int n, const char *const *names,
                         const int *ndims, const int64_t *dims,
                         mxc_executor *out) {
  API_GUARD();
  const char *fn = "mxc_executor_reshape";
  API_CHECK_OUT(out, fn, "out");
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_reshape: ex", &e));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(mxc__shapes_from_dims(fn, n, ndims, dims, &shapes));
  mxc__executor *r = NULL;
  int rc = mxc__executor_reshape(e, n, names, shapes, &r);
  mxc__free(shapes);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_executor(r, out);
}

int mxc_executor_set_monitor(mxc_executor ex, mxc_monitor_fn fn,
                             void *user_data) {
  API_GUARD();
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_set_monitor: ex", &e));
  return mxc__executor_set_monitor(e, fn, user_data);
}

int mxc_executor_memory(mxc_executor ex, int64_t *out_planned,
                        int64_t *out_unshared) {
  API_GUARD();
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_memory: ex", &e));
  mxc__executor_memory(e, out_planned, out_unshared);
  return MXC_OK;
}

int mxc_executor_debug_str(mxc_executor ex, char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_executor_debug_str", "out");
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_debug_str: ex", &e));
  return mxc__executor_debug_str(e, out);
}

int mxc_executor_save_params(mxc_executor ex, const char *path, int n_exclude,
                             const char *const *exclude) {
  API_GUARD();
  const char *fn = "mxc_executor_save_params";
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_save_params: ex", &e));
  MXC_RETURN_ERROR_IF(!path, MXC_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
  MXC_RETURN_ERROR_IF(n_exclude < 0 || (n_exclude > 0 && !exclude),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_exclude is %d with exclude %s; expected "
                      "n_exclude >= 0 and exclude non-NULL when positive",
                      fn, n_exclude, exclude ? "non-NULL" : "NULL");
  return mxc__executor_save_params(e, path, n_exclude, exclude);
}

int mxc_executor_load_params(mxc_executor ex, const char *path,
                             int allow_extra) {
  API_GUARD();
  mxc__executor *e;
  MXC_FORWARD_IF_ERROR(api_executor(ex, "mxc_executor_load_params: ex", &e));
  MXC_RETURN_ERROR_IF(!path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_executor_load_params: path is NULL");
  return mxc__executor_load_params(e, path, allow_extra);
}
