/* Data iterators (core/io/iter.h, data_iter.h, text_iter.h): argument and
 * handle checks, and handles over the shared iterator. */
#include "api_internal.h"
#include "core/io/data_iter.h"
#include "core/io/image_iter.h"
#include "core/io/iter.h"
#include "core/io/text_iter.h"

static int api_iter(mxc_data_iter h, const char *what, mxc__iter **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_DATA_ITER, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys the object once no call uses it. */
static void dtor_iter(void *p) { mxc__iter_free(p); }

/* Gives a new iterator a public handle; frees it on failure. */
static int wrap_iter(mxc__iter *it, mxc_data_iter *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_DATA_ITER, it, dtor_iter, 0, &h);
  if (rc != MXC_OK) {
    mxc__iter_free(it);
    return rc;
  }
  *out = (mxc_data_iter)h;
  return MXC_OK;
}

/* ---- creation ---- */

int mxc_data_iter_idx_create(const char *images_path, const char *labels_path,
                             int64_t batch_size, int shuffle, uint64_t seed,
                             int flat, int scale, int last_batch,
                             mxc_data_iter *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_idx_create", "out");
  mxc__iter *it = NULL;
  int rc = mxc__iter_idx_create(images_path, labels_path, batch_size, shuffle,
                                seed, flat, scale, last_batch, &it);
  if (rc != MXC_OK) {
    mxc__error_prefix("mxc_data_iter_idx_create");
    return rc;
  }
  return wrap_iter(it, out);
}

int mxc_data_iter_libsvm_create(const char *path, int64_t num_features,
                                int64_t batch_size, int one_based,
                                int last_batch, mxc_data_iter *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_libsvm_create", "out");
  mxc__iter *it = NULL;
  int rc = mxc__iter_libsvm_create(path, num_features, batch_size, one_based,
                                   last_batch, &it);
  if (rc == MXC_OK) rc = wrap_iter(it, out);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_libsvm_create");
  return rc;
}

int mxc_data_iter_csv_create(const char *data_path, const char *label_path,
                             int64_t num_cols, int64_t batch_size, int header,
                             int64_t label_col, int last_batch,
                             mxc_data_iter *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_csv_create", "out");
  mxc__iter *it = NULL;
  int rc = mxc__iter_csv_create(data_path, label_path, num_cols, batch_size,
                                header, label_col, last_batch, &it);
  if (rc == MXC_OK) rc = wrap_iter(it, out);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_csv_create");
  return rc;
}

int mxc_data_iter_image_record_create(int n_params, const char *const *keys,
                                      const char *const *vals,
                                      mxc_data_iter *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_image_record_create", "out");
  mxc__iter *it = NULL;
  int rc = mxc__iter_image_record_create(n_params, keys, vals, &it);
  if (rc == MXC_OK) rc = wrap_iter(it, out);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_image_record_create");
  return rc;
}

/* ---- shared entry points ---- */

void mxc_data_iter_free(mxc_data_iter it) {
  API_GUARD();
  if (!it) return;
  (void)mxc__handle_free((uintptr_t)it, MXC__HANDLE_DATA_ITER,
                         "mxc_data_iter_free: it", dtor_iter);
}

int mxc_data_iter_next(mxc_data_iter it, int *out_has_batch) {
  API_GUARD();
  API_CHECK_OUT(out_has_batch, "mxc_data_iter_next", "out_has_batch");
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_next: it", &w));
  int rc = mxc__iter_next(w, out_has_batch);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_next");
  return rc;
}

/* A new public handle on one array of the current batch. */
static int current(mxc_data_iter it, int want_label, const char *fn,
                   mxc_ndarray *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, fn, &w));
  const mxc__ndarray *a = NULL;
  int rc = mxc__iter_current(w, want_label, &a);
  if (rc != MXC_OK) {
    mxc__error_prefix(fn);
    return rc;
  }
  mxc__ndarray *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(a, &v));
  return api_wrap_array(v, out);
}

int mxc_data_iter_data(mxc_data_iter it, mxc_ndarray *out) {
  API_GUARD();
  return current(it, 0, "mxc_data_iter_data", out);
}

int mxc_data_iter_label(mxc_data_iter it, mxc_ndarray *out) {
  API_GUARD();
  return current(it, 1, "mxc_data_iter_label", out);
}

int mxc_data_iter_pad(mxc_data_iter it, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_pad", "out");
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_pad: it", &w));
  int rc = mxc__iter_pad(w, out);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_pad");
  return rc;
}

int mxc_data_iter_reset(mxc_data_iter it) {
  API_GUARD();
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_reset: it", &w));
  int rc = mxc__iter_reset(w);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_reset");
  return rc;
}

int mxc_data_iter_set_parts(mxc_data_iter it, int64_t num_parts,
                            int64_t part_index) {
  API_GUARD();
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_set_parts: it", &w));
  int rc = mxc__iter_set_parts(w, num_parts, part_index);
  if (rc != MXC_OK) mxc__error_prefix("mxc_data_iter_set_parts");
  return rc;
}

int mxc_data_iter_num_examples(mxc_data_iter it, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_data_iter_num_examples", "out");
  mxc__iter *w = NULL;
  MXC_FORWARD_IF_ERROR(api_iter(it, "mxc_data_iter_num_examples: it", &w));
  int64_t n = 0;
  int rc = mxc__iter_num_examples(w, &n);
  if (rc != MXC_OK) {
    mxc__error_prefix("mxc_data_iter_num_examples");
    return rc;
  }
  *out = n;
  return MXC_OK;
}
