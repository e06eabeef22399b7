/* Batch iterator over IDX files. */
#include "core/io/data_iter.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/shape.h"

/* Fills it->perm with the epoch's order (iter.h). */
static void make_perm(mxc__data_iter *it) {
  mxc__iter_order(it->perm, it->n, it->shuffle, it->seed, it->epoch);
}

static int check_args(const char *images_path, const char *labels_path,
                      int64_t batch, int last_batch) {
  MXC_RETURN_ERROR_IF(!images_path || !labels_path, MXC_ERR_INVALID_ARGUMENT,
                      "data iter: %s path is NULL",
                      images_path ? "labels" : "images");
  MXC_RETURN_ERROR_IF(batch <= 0, MXC_ERR_INVALID_ARGUMENT,
                      "data iter: batch_size is %lld; expected > 0",
                      (long long)batch);
  MXC_RETURN_ERROR_IF(
      last_batch != MXC_LAST_BATCH_PAD && last_batch != MXC_LAST_BATCH_DISCARD,
      MXC_ERR_INVALID_ARGUMENT,
      "data iter: last_batch is %d; expected MXC_LAST_BATCH_PAD (0) or "
      "MXC_LAST_BATCH_DISCARD (1)", last_batch);
  return MXC_OK;
}

/* Images must be (n, rows, cols) and labels (n). */
static int check_files(const mxc__data_iter *it, const char *images_path,
                       const char *labels_path) {
  MXC_RETURN_ERROR_IF(it->images.ndim != 3, MXC_ERR_IO,
                      "data iter: '%s' has %d dimensions; images need 3 "
                      "(count, rows, cols)", images_path, it->images.ndim);
  MXC_RETURN_ERROR_IF(it->labels.ndim != 1, MXC_ERR_IO,
                      "data iter: '%s' has %d dimensions; labels need 1",
                      labels_path, it->labels.ndim);
  MXC_RETURN_ERROR_IF(it->images.dims[0] != it->labels.dims[0], MXC_ERR_IO,
                      "data iter: '%s' has %lld images but '%s' has %lld "
                      "labels", images_path, (long long)it->images.dims[0],
                      labels_path, (long long)it->labels.dims[0]);
  return MXC_OK;
}

static int load(mxc__data_iter *it, const char *images_path,
                const char *labels_path) {
  MXC_FORWARD_IF_ERROR(mxc__idx_read(images_path, &it->images));
  MXC_FORWARD_IF_ERROR(mxc__idx_read(labels_path, &it->labels));
  MXC_FORWARD_IF_ERROR(check_files(it, images_path, labels_path));
  it->n = it->n_all = it->images.dims[0];
  /* With zero images the reader's overflow check did not cover this. */
  MXC_RETURN_ERROR_IF(
      !mxc__mul_i64(it->images.dims[1], it->images.dims[2], &it->row_elems),
      MXC_ERR_IO, "data iter: '%s': image size overflows", images_path);
  it->perm = mxc__malloc(sizeof *it->perm * (size_t)(it->n ? it->n : 1));
  MXC_RETURN_ERROR_IF(!it->perm, MXC_ERR_OOM, "data iter: out of memory");
  make_perm(it);
  return MXC_OK;
}

int mxc__data_iter_create(const char *images_path, const char *labels_path,
                          int64_t batch, int shuffle, uint64_t seed, int flat,
                          int scale, int last_batch, mxc__data_iter **out) {
  MXC_FORWARD_IF_ERROR(
      check_args(images_path, labels_path, batch, last_batch));
  mxc__data_iter *it = mxc__calloc(1, sizeof *it);
  MXC_RETURN_ERROR_IF(!it, MXC_ERR_OOM, "data iter: out of memory");
  it->batch = batch;
  it->shuffle = shuffle != 0;
  it->seed = seed;
  it->flat = flat != 0;
  it->scale = scale != 0;
  it->last_batch = last_batch;
  int rc = load(it, images_path, labels_path);
  if (rc != MXC_OK) {
    mxc__data_iter_free(it);
    return rc;
  }
  *out = it;
  return MXC_OK;
}

static void drop_batch(mxc__data_iter *it) {
  mxc__ndarray_free(it->data);
  mxc__ndarray_free(it->label);
  it->data = it->label = NULL;
  it->pad = 0;
}

void mxc__data_iter_free(mxc__data_iter *it) {
  if (!it) return;
  drop_batch(it);
  mxc__idx_free(&it->images);
  mxc__idx_free(&it->labels);
  mxc__free(it->perm);
  mxc__free(it);
}

/* New float32 CPU arrays for one batch. */
static int new_batch_arrays(const mxc__data_iter *it, mxc__ndarray **data,
                            mxc__ndarray **label) {
  const mxc__device cpu = {MXC_DEVICE_CPU, 0};
  int64_t ddims[4] = {it->batch, it->row_elems, 0, 0};
  if (!it->flat) {
    ddims[1] = 1;
    ddims[2] = it->images.dims[1];
    ddims[3] = it->images.dims[2];
  }
  mxc__shape ds, ls;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(ddims, it->flat ? 2 : 4, 4,
                                       "data iter: batch shape", &ds));
  MXC_FORWARD_IF_ERROR(
      mxc__shape_make(&it->batch, 1, 4, "data iter: label shape", &ls));
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&ds, MXC_DTYPE_FLOAT32, cpu, 0, data));
  int rc = mxc__ndarray_create(&ls, MXC_DTYPE_FLOAT32, cpu, 0, label);
  if (rc != MXC_OK) mxc__ndarray_free(*data);
  return rc;
}

/* Copies examples into freshly created arrays. Writing through the data
 * pointer directly is safe: nothing else knows these arrays yet, so no
 * engine work can be pending on them. Slot k takes example
 * perm[(cursor + k) % n]: past the end it wraps to the epoch's start. */
static void fill_batch(const mxc__data_iter *it, mxc__ndarray *data,
                       mxc__ndarray *label) {
  float *d = mxc__ndarray_ptr(data);
  float *l = mxc__ndarray_ptr(label);
  const float scale = it->scale ? 1.0f / 255.0f : 1.0f;
  for (int64_t k = 0; k < it->batch; ++k) {
    int64_t ex = it->first + it->perm[(it->cursor + k) % it->n];
    mxc__idx_to_f32(&it->images, ex * it->row_elems, it->row_elems, scale,
                    d + k * it->row_elems);
    mxc__idx_to_f32(&it->labels, ex, 1, 1.0f, l + k);
  }
}

int mxc__data_iter_next(mxc__data_iter *it, int *out_has) {
  int64_t left = it->n - it->cursor;
  int end = left <= 0 ||
            (left < it->batch && it->last_batch == MXC_LAST_BATCH_DISCARD);
  if (end) {
    drop_batch(it);
    *out_has = 0;
    return MXC_OK;
  }
  mxc__ndarray *data = NULL, *label = NULL;
  MXC_FORWARD_IF_ERROR(new_batch_arrays(it, &data, &label));
  fill_batch(it, data, label);
  drop_batch(it);
  it->data = data;
  it->label = label;
  it->pad = left < it->batch ? it->batch - left : 0;
  it->cursor += it->batch < left ? it->batch : left;
  *out_has = 1;
  return MXC_OK;
}

void mxc__data_iter_reset(mxc__data_iter *it) {
  drop_batch(it);
  it->epoch++;
  it->cursor = 0;
  make_perm(it);
}

void mxc__data_iter_set_parts(mxc__data_iter *it, int64_t num_parts,
                              int64_t part_index) {
  int64_t lo, hi;
  mxc__iter_part_range(it->n_all, num_parts, part_index, &lo, &hi);
  drop_batch(it);
  it->first = lo;
  it->n = hi - lo;
  it->cursor = 0;
  make_perm(it);
}

/* ---- behind the shared interface (iter.h) ---- */

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

static int idx_set_parts(void *impl, int64_t num_parts, int64_t part_index) {
  mxc__data_iter_set_parts(impl, num_parts, part_index);
  return MXC_OK;
}

static const mxc__iter_ops k_idx_ops = {idx_next,         idx_reset,
                                        idx_current,      idx_num_examples,
                                        idx_free,         "idx_iter_next",
                                        idx_set_parts};

int mxc__iter_idx_create(const char *images_path, const char *labels_path,
                         int64_t batch, int shuffle, uint64_t seed, int flat,
                         int scale, int last_batch, mxc__iter **out) {
  mxc__data_iter *it = NULL;
  MXC_FORWARD_IF_ERROR(mxc__data_iter_create(images_path, labels_path, batch,
                                             shuffle, seed, flat, scale,
                                             last_batch, &it));
  return mxc__iter_new(&k_idx_ops, it, out);
}
