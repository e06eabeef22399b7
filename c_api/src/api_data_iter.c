/* Data iterators: argument checks and the handle shared by every kind of
 * iterator (see api_data_iter.h); the IDX iterator's adapter. */
#include "api_data_iter.h"

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/io/data_iter.h"

typedef struct api_iter {
  const api_iter_ops *ops;
  void *impl;
} api_iter;

static int api_iter_get(mxc_data_iter h, const char *what, api_iter **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_DATA_ITER, what, &p));
  *out = p;
  return MXC_OK;
}

int api_iter_wrap(const api_iter_ops *ops, void *impl, mxc_data_iter *out) {
  api_iter *w = mxc__malloc(sizeof *w);
  if (!w) {
    ops->free(impl);
    return mxc__error_set(MXC_ERR_OOM, "out of memory creating a data iter");
  }
  w->ops = ops;
  w->impl = impl;
  uintptr_t h;
  int rc = mxc__handle_new(MXC__HANDLE_DATA_ITER, w, &h);
  if (rc != MXC_OK) {
    ops->free(impl);
    mxc__free(w);
    return rc;
  }
  *out = (mxc_data_iter)h;
  return MXC_OK;
}

/* ---- the IDX iterator ---- */

static int idx_next(void *impl, int *out_has) {
  return mxc__data_iter_next(impl, out_has);
}

static int idx_reset(void *impl) {
  mxc__data_iter_reset(impl);
  return MXC_OK;
}

static void idx_current(const void *impl, const mxc__ndarray **data,
                        const mxc__ndarray **label, int64_t *pad) {
  const mxc__data_iter *d = impl;
  *data = d->data;
  *label = d->label;
  *pad = d->pad;
}

static int idx_num_examples(const void *impl, int64_t *out) {
  *out = ((const mxc__data_iter *)impl)->n;
  return MXC_OK;
}

static void idx_free(void *impl) { mxc__data_iter_free(impl); }

static const api_iter_ops k_idx_ops = {idx_next, idx_reset, idx_current,
                                       idx_num_examples, idx_free};

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
  return api_iter_wrap(&k_idx_ops, it, out);
}

/* ---- shared entry points ---- */

void mxc_data_iter_free(mxc_data_iter it) {
  if (!it) return;
  void *p;
  if (mxc__handle_release((uintptr_t)it, MXC__HANDLE_DATA_ITER,
                          "mxc_data_iter_free: it", &p) == MXC_OK) {
    api_iter *w = p;
    w->ops->free(w->impl);
    mxc__free(w);
  }
}

int mxc_data_iter_next(mxc_data_iter it, int *out_has_batch) {
  API_CHECK_OUT(out_has_batch, "mxc_data_iter_next", "out_has_batch");
  api_iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter_get(it, "mxc_data_iter_next: it", &w));
  int rc = w->ops->next(w->impl, out_has_batch);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_next");
  return rc;
}

/* A new public handle on one array of the current batch. */
static int current(mxc_data_iter it, int want_label, const char *fn,
                   mxc_ndarray *out) {
  API_CHECK_OUT(out, fn, "out");
  api_iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter_get(it, fn, &w));
  const mxc__ndarray *data = NULL, *label = NULL;
  int64_t pad = 0;
  w->ops->current(w->impl, &data, &label, &pad);
  MXC_RETURN_ERROR_IF(!data, MXC_ERR_INVALID_ARGUMENT,
                      "%s: no current batch (call mxc_data_iter_next first, "
                      "or the epoch has ended)", fn);
  MXC_RETURN_ERROR_IF(want_label && !label, MXC_ERR_NOT_FOUND,
                      "%s: this iterator has no labels (it was created "
                      "without a label column or label file)", fn);
  mxc__ndarray *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(want_label ? label : data, &v));
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
  api_iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter_get(it, "mxc_data_iter_pad: it", &w));
  const mxc__ndarray *data = NULL, *label = NULL;
  int64_t pad = 0;
  w->ops->current(w->impl, &data, &label, &pad);
  MXC_RETURN_ERROR_IF(!data, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_data_iter_pad: no current batch");
  *out = pad;
  return MXC_OK;
}

int mxc_data_iter_reset(mxc_data_iter it) {
  api_iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter_get(it, "mxc_data_iter_reset: it", &w));
  int rc = w->ops->reset(w->impl);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_reset");
  return rc;
}

int mxc_data_iter_num_examples(mxc_data_iter it, int64_t *out) {
  API_CHECK_OUT(out, "mxc_data_iter_num_examples", "out");
  api_iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter_get(it, "mxc_data_iter_num_examples: it", &w));
  int64_t n = 0;
  int rc = w->ops->num_examples(w->impl, &n);
  if (rc != MXC_OK) {
    mxc__error_prefix("mxc_data_iter_num_examples");
    return rc;
  }
  *out = n;
  return MXC_OK;
}
