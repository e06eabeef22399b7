/* Save/load and loaded lists. */
#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/ndarray/io.h"

int mxc_ndarray_save(const char *path, const mxc_ndarray *arrays,
                     const char *const *names, int n) {
  API_GUARD();
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_ndarray_save: n is %d; expected >= 0", n);
  MXC_RETURN_ERROR_IF(n > 0 && !arrays, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_ndarray_save: arrays is NULL but n is %d", n);
  mxc__ndarray **list = mxc__malloc(sizeof *list * (size_t)(n ? n : 1));
  MXC_RETURN_ERROR_IF(!list, MXC_ERR_OOM, "mxc_ndarray_save: out of memory");
  int rc = MXC_OK;
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = api_array(arrays[i], "mxc_ndarray_save: arrays[i]", &list[i]);
    if (rc != MXC_OK) {
      mxc__error_prefix("mxc_ndarray_save");
    }
  }
  if (rc == MXC_OK) rc = mxc__ndarray_save(path, list, names, n);
  mxc__free(list);
  return rc;
}

int mxc_ndarray_load(const char *path, mxc_ndarray_list *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_ndarray_load", "out");
  mxc__ndarray_list *list;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &list));
  uintptr_t h;
  int rc = mxc__handle_new(MXC__HANDLE_NDARRAY_LIST, list, &h);
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
    return rc;
  }
  *out = (mxc_ndarray_list)h;
  return MXC_OK;
}

static int api_list(mxc_ndarray_list h, const char *what,
                    mxc__ndarray_list **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_NDARRAY_LIST, what, &p));
  *out = p;
  return MXC_OK;
}

/* For mxc__handle_free: destroys the object once no call uses it. */
static void dtor_list(void *p) { mxc__ndarray_list_free(p); }

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
