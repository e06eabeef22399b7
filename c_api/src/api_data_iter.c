/* Data iterators: argument checks and handles around core/io. */
#include "api_internal.h"
#include "core/io/data_iter.h"

static int api_iter(mxc_data_iter h, const char *what, mxc__data_iter **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_DATA_ITER, what, &p));
  *out = p;
  return MXC_OK;
}

int mxc_data_iter_idx_create(const char *images_path, const char *labels_path,
                             int64_t batch_size, int shuffle, uint64_t seed,
                             int flat, int scale, int last_batch,
                             mxc_data_iter *out) {
  API_CHECK_OUT(out, "mxc_data_iter_idx_create", "out");
  mxc__data_iter *it = NULL;
  int rc = mxc__data_iter_create(images_path, labels_path, batch_size,
                                 shuffle, seed, flat, scale, last_batch, &it);
  if (rc != MXC_OK) {
    mxc__error_prefix("mxc_data_iter_idx_create");
    return rc;
  }
  uintptr_t h;
  rc = mxc__handle_new(MXC__HANDLE_DATA_ITER, it, &h);
  if (rc != MXC_OK) {
    mxc__data_iter_free(it);
    return rc;
  }
  *out = (mxc_data_iter)h;
  return MXC_OK;
}

void mxc_data_iter_free(mxc_data_iter it) {
  if (!it) return;
  void *p;
  if (mxc__handle_release((uintptr_t)it, MXC__HANDLE_DATA_ITER,
                          "mxc_data_iter_free: it", &p) == MXC_OK) {
    mxc__data_iter_free(p);
  }
}

int mxc_data_iter_next(mxc_data_iter it, int *out_has_batch) {
  API_CHECK_OUT(out_has_batch, "mxc_data_iter_next", "out_has_batch");
  mxc__data_iter *d = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_next: it", &d));
  return mxc__data_iter_next(d, out_has_batch);
}

/* A new public handle on one array of the current batch. */
static int current(mxc_data_iter it, int want_label, const char *fn,
                   mxc_ndarray *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__data_iter *d = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, fn, &d));
  const mxc__ndarray *a = want_label ? d->label : d->data;
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_INVALID_ARGUMENT,
                      "%s: no current batch (call mxc_data_iter_next first, "
                      "or the epoch has ended)", fn);
  mxc__ndarray *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &v));
  return api_wrap_array(v, out);
}

int mxc_data_iter_data(mxc_data_iter it, mxc_ndarray *out) {
  return current(it, 0, "mxc_data_iter_data", out);
}

int mxc_data_iter_label(mxc_data_iter it, mxc_ndarray *out) {
  return current(it, 1, "mxc_data_iter_label", out);
}

int mxc_data_iter_pad(mxc_data_iter it, int64_t *out) {
  API_CHECK_OUT(out, "mxc_data_iter_pad", "out");
  mxc__data_iter *d = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_pad: it", &d));
  MXC_RETURN_ERROR_IF(!d->data, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_data_iter_pad: no current batch");
  *out = d->pad;
  return MXC_OK;
}

int mxc_data_iter_reset(mxc_data_iter it) {
  mxc__data_iter *d = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_reset: it", &d));
  mxc__data_iter_reset(d);
  return MXC_OK;
}

int mxc_data_iter_num_examples(mxc_data_iter it, int64_t *out) {
  API_CHECK_OUT(out, "mxc_data_iter_num_examples", "out");
  mxc__data_iter *d = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_num_examples: it", &d));
  *out = d->n;
  return MXC_OK;
}
