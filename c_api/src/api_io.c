/* Save/load and loaded lists. */
#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/graph/checkpoint.h"
#include "core/ndarray/io.h"

/* *out = a new array of the internal arrays of n handles (mxc__free it);
 * fn names the caller and what the arrays are in messages. */
static int api_arrays(const mxc_ndarray *arrays, int n, const char *fn,
                      mxc__ndarray ***out) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && !arrays, MXC_ERR_INVALID_ARGUMENT,
                      "%s: arrays is NULL but n is %d", fn, n);
  mxc__ndarray **list = mxc__malloc(sizeof *list * (size_t)(n ? n : 1));
  MXC_RETURN_ERROR_IF(!list, MXC_ERR_OOM, "%s: out of memory", fn);
  for (int i = 0; i < n; ++i) {
    int rc = api_array(arrays[i], "arrays[i]", &list[i]);
    if (rc != MXC_OK) {
      mxc__error_prefix(fn);
      mxc__free(list);
      return rc;
    }
  }
  *out = list;
  return MXC_OK;
}

int mxc_ndarray_save(const char *path, const mxc_ndarray *arrays,
                     const char *const *names, int n) {
  return mxc_ndarray_save_format(path, arrays, names, n, MXC_FILE_FORMAT_MXC);
}

int mxc_ndarray_save_format(const char *path, const mxc_ndarray *arrays,
                            const char *const *names, int n, int format) {
  API_GUARD();
  mxc__ndarray **list;
  MXC_FORWARD_IF_ERROR(api_arrays(arrays, n, "mxc_ndarray_save", &list));
  int rc = mxc__ndarray_save_format(path, list, names, n, format);
  mxc__free(list);
  return rc;
}

/* For the handle table: destroys the object once no call uses it. */
static void dtor_list(void *p) { mxc__ndarray_list_free(p); }

/* Gives a new list a public handle; frees it on failure. */
static int wrap_list(mxc__ndarray_list *list, mxc_ndarray_list *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_NDARRAY_LIST, list, dtor_list, 0, &h);
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
    return rc;
  }
  *out = (mxc_ndarray_list)h;
  return MXC_OK;
}

int mxc_ndarray_load(const char *path, mxc_ndarray_list *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_load", "out");
  mxc__ndarray_list *list;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &list));
  return wrap_list(list, out);
}

static int api_list(mxc_ndarray_list h, const char *what,
                    mxc__ndarray_list **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_NDARRAY_LIST, what, &p));
  *out = p;
  return MXC_OK;
}

void mxc_ndarray_list_free(mxc_ndarray_list list) {
  API_GUARD();
  if (!list) return;
  (void)mxc__handle_free((uintptr_t)list, MXC__HANDLE_NDARRAY_LIST,
                         "mxc_ndarray_list_free: list", dtor_list);
}

int mxc_ndarray_list_size(mxc_ndarray_list list, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_list_size", "out");
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(api_list(list, "mxc_ndarray_list_size: list", &l));
  *out = l->n;
  return MXC_OK;
}

static int check_index(const mxc__ndarray_list *l, int index,
                       const char *fn) {
  MXC_RETURN_ERROR_IF(index < 0 || index >= l->n, MXC_ERR_INVALID_ARGUMENT,
                      "%s: index %d is out of range; the list has %d arrays",
                      fn, index, l->n);
  return MXC_OK;
}

int mxc_ndarray_list_get(mxc_ndarray_list list, int index, mxc_ndarray *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_list_get", "out");
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(api_list(list, "mxc_ndarray_list_get: list", &l));
  MXC_FORWARD_IF_ERROR(check_index(l, index, "mxc_ndarray_list_get"));
  mxc__ndarray *v;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(l->arrays[index], &v));
  return api_wrap_array(v, out);
}

int mxc_ndarray_list_name(mxc_ndarray_list list, int index,
                          const char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_list_name", "out");
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(api_list(list, "mxc_ndarray_list_name: list", &l));
  MXC_FORWARD_IF_ERROR(check_index(l, index, "mxc_ndarray_list_name"));
  *out = l->names[index];
  return MXC_OK;
}

/* ---- checkpoints ---- */

int mxc_checkpoint_load(const char *prefix, int epoch, mxc_symbol *out_sym,
                        mxc_ndarray_list *out_args,
                        mxc_ndarray_list *out_aux) {
  API_GUARD();
  const char *fn = "mxc_checkpoint_load";
  API_CHECK_OUT(out_sym, fn, "out_sym");
  API_CHECK_OUT(out_args, fn, "out_args");
  API_CHECK_OUT(out_aux, fn, "out_aux");
  mxc__symbol *s;
  mxc__ndarray_list *args, *aux;
  MXC_FORWARD_IF_ERROR(mxc__checkpoint_load(prefix, epoch, &s, &args, &aux));
  mxc_symbol hs = NULL;
  mxc_ndarray_list ha = NULL, hx = NULL;
  int rc = api_wrap_symbol(s, &hs);
  if (rc == MXC_OK) {
    rc = wrap_list(args, &ha);
  } else {
    mxc__ndarray_list_free(args);
  }
  if (rc == MXC_OK) {
    rc = wrap_list(aux, &hx);
  } else {
    mxc__ndarray_list_free(aux);
  }
  if (rc != MXC_OK) {
    mxc_symbol_free(hs);
    mxc_ndarray_list_free(ha);
    return rc;
  }
  *out_sym = hs;
  *out_args = ha;
  *out_aux = hx;
  return MXC_OK;
}

int mxc_checkpoint_save(const char *prefix, int epoch, mxc_symbol sym,
                        int n_args, const char *const *arg_names,
                        const mxc_ndarray *args, int n_aux,
                        const char *const *aux_names,
                        const mxc_ndarray *aux) {
  API_GUARD();
  const char *fn = "mxc_checkpoint_save";
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_checkpoint_save: sym", &s));
  mxc__ndarray **a = NULL, **x = NULL;
  int rc = api_arrays(args, n_args, fn, &a);
  if (rc == MXC_OK) rc = api_arrays(aux, n_aux, fn, &x);
  if (rc == MXC_OK) {
    rc = mxc__checkpoint_save(prefix, epoch, s, n_args, arg_names, a, n_aux,
                              aux_names, x);
  }
  mxc__free(a);
  mxc__free(x);
  return rc;
}
