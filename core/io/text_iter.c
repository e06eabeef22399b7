/* Data iterators over LibSVM and CSV text files (libsvm.h, csv.h) behind
 * the shared iterator interface (iter.h).
 *
 * The readers stream: each next reads one batch of rows from the file, so
 * memory stays bounded by a batch whatever the file's size. Two things the
 * IDX iterator gets from holding the whole data set need care here:
 *  - Padding the last batch "from the epoch's start": the epoch's first
 *    batch (at most batch_size rows) is kept as the head, and pad row k of
 *    the last batch is head row k % head_rows. With fewer rows in the file
 *    than a batch the head is the whole file, so this cycles through it,
 *    exactly as the IDX iterator's (cursor + k) % n does.
 *  - The number of examples is known only once an epoch has been read to
 *    its end.
 *  - Sharding is the readers' (round robin over the rows, libsvm.h and
 *    csv.h): the head and the padding come from the part's own rows.
 * Each batch is a pair of new arrays filled here before anyone else can
 * see them (so no engine ordering is needed to write them); arrays handed
 * out for earlier batches never change.
 *
 * Invariant: data == NULL iff label == NULL or the iterator has no labels,
 * and data != NULL exactly while there is a current batch. */
#include "core/io/text_iter.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/shape.h"
#include "core/io/csv.h"
#include "core/io/libsvm.h"

typedef struct text_iter {
  mxc__libsvm *svm; /* exactly one of svm and csv is set */
  mxc__csv *csv;
  int64_t batch;
  int64_t cols; /* libsvm: num_features; csv: data columns (0 until read) */
  int last_batch;
  int64_t seen;  /* rows read this epoch */
  int64_t total; /* rows per epoch; -1 until an epoch has been read */
  int ended;     /* this epoch is over: next reports 0 until reset */
  int failed;    /* a next failed after the reader moved: reset needed */
  /* The head: the epoch's first batch. libsvm: CSR in h_indptr (rows + 1),
   * h_indices and h_values; csv: h_dense (rows x cols). h_labels: rows x
   * h_label_width. Buffers only grow (capacities in bytes). */
  int64_t h_rows, h_label_width;
  int64_t *h_indptr, *h_indices;
  float *h_values, *h_dense, *h_labels;
  size_t cap_indptr, cap_indices, cap_values, cap_dense, cap_labels;
  /* The current batch (see the invariant above). */
  mxc__ndarray *data, *label;
  int64_t pad;
} text_iter;

static const mxc__device k_cpu = {MXC_DEVICE_CPU, 0};

/* ---- the head ---- */

/* *out = a buffer of at least `need` bytes: old itself when its capacity
 * *cap suffices, else old grown (and *cap updated). On failure old is
 * unchanged (and still owned by the iterator). */
static int grow(void *old, size_t *cap, size_t need, void **out) {
  if (need <= *cap) {
    *out = old;
    return MXC_OK;
  }
  void *q = mxc__realloc(old, need);
  MXC_RETURN_ERROR_IF(!q, MXC_ERR_OOM,
                      "out of memory keeping a batch to pad the last one");
  *out = q;
  *cap = need;
  return MXC_OK;
}

#define GROW(it, field, cap, need)                                     \
  do {                                                                 \
    void *grown_ = NULL;                                               \
    MXC_FORWARD_IF_ERROR(grow((it)->field, &(it)->cap, (need), &grown_)); \
    (it)->field = grown_;                                              \
  } while (0)

static int save_labels(text_iter *it, const float *labels, int64_t rows,
                       int64_t width) {
  size_t n = (size_t)(rows * width) * sizeof(float);
  GROW(it, h_labels, cap_labels, n);
  if (n) memcpy(it->h_labels, labels, n);
  it->h_label_width = width;
  return MXC_OK;
}

static int save_svm_head(text_iter *it, const mxc__libsvm_batch *b) {
  size_t ni = (size_t)b->nnz * sizeof(int64_t);
  size_t nv = (size_t)b->nnz * sizeof(float);
  size_t np = (size_t)(b->rows + 1) * sizeof(int64_t);
  GROW(it, h_indptr, cap_indptr, np);
  GROW(it, h_indices, cap_indices, ni);
  GROW(it, h_values, cap_values, nv);
  MXC_FORWARD_IF_ERROR(save_labels(it, b->labels, b->rows, 1));
  memcpy(it->h_indptr, b->indptr, np);
  if (ni) memcpy(it->h_indices, b->indices, ni);
  if (nv) memcpy(it->h_values, b->values, nv);
  it->h_rows = b->rows;
  return MXC_OK;
}

static int save_csv_head(text_iter *it, const mxc__csv_batch *b) {
  size_t nd = (size_t)(b->rows * b->cols) * sizeof(float);
  GROW(it, h_dense, cap_dense, nd);
  MXC_FORWARD_IF_ERROR(save_labels(it, b->labels, b->rows, b->label_width));
  if (nd) memcpy(it->h_dense, b->data, nd);
  it->h_rows = b->rows;
  return MXC_OK;
}

/* ---- building a batch ---- */

/* A new dense float32 array of shape (rows) or (rows, width > 1). */
static int new_dense(int64_t rows, int64_t width, mxc__ndarray **out) {
  int64_t dims[2] = {rows, width};
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(dims, width == 1 ? 1 : 2,
                                       sizeof(float), "batch shape", &s));
  return mxc__ndarray_create(&s, MXC_DTYPE_FLOAT32, k_cpu, 0, out);
}

/* Labels: the reader's rows, then pad rows from the head. */
static int make_labels(const text_iter *it, const float *labels, int64_t rows,
                       int64_t width, int64_t pad, mxc__ndarray **out) {
  mxc__ndarray *l = NULL;
  MXC_FORWARD_IF_ERROR(new_dense(rows + pad, width, &l));
  float *dst = mxc__ndarray_ptr(l);
  const size_t row = (size_t)width * sizeof *dst;
  if (rows > 0 && width > 0) memcpy(dst, labels, (size_t)rows * row);
  for (int64_t k = 0; k < pad; ++k) {
    memcpy(dst + (rows + k) * width, it->h_labels + (k % it->h_rows) * width,
           row);
  }
  *out = l;
  return MXC_OK;
}

/* Appends head row r at position nnz of (indices, values); returns the new
 * nnz. */
static int64_t append_head_row(const text_iter *it, int64_t r,
                               int64_t *restrict indices,
                               float *restrict values, int64_t nnz) {
  int64_t lo = it->h_indptr[r], n = it->h_indptr[r + 1] - lo;
  /* An empty head (no stored values yet) has NULL arrays: no pointer
   * arithmetic on them, even with a zero offset. */
  if (n == 0) return nnz;
  memcpy(indices + nnz, it->h_indices + lo, (size_t)n * sizeof *indices);
  memcpy(values + nnz, it->h_values + lo, (size_t)n * sizeof *values);
  return nnz + n;
}

/* A CSR (batch, cols) float32 array with int64 indices: the reader's rows,
 * then pad head rows. The reader guarantees every index < cols and
 * strictly increasing within a row, so the result is valid by
 * construction. */
static int svm_data(const text_iter *it, const mxc__libsvm_batch *b,
                    int64_t pad, mxc__ndarray **out) {
  int64_t nnz = b->nnz;
  for (int64_t k = 0; k < pad; ++k) {
    int64_t r = k % it->h_rows;
    nnz += it->h_indptr[r + 1] - it->h_indptr[r];
  }
  int64_t dims[2] = {b->rows + pad, it->cols};
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(
      mxc__shape_make(dims, 2, sizeof(float), "libsvm batch shape", &s));
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create_sparse(
      MXC_STYPE_CSR, &s, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, k_cpu, &a));
  int rc = mxc__sparse_alloc(a, nnz);
  if (rc != MXC_OK) {
    mxc__ndarray_free(a);
    return rc;
  }
  float *values = mxc__sparse_data(a).ptr;
  int64_t *indptr = mxc__sparse_aux(a, 0).ptr;
  int64_t *indices = mxc__sparse_aux(a, 1).ptr;
  memcpy(indptr, b->indptr, (size_t)(b->rows + 1) * sizeof *indptr);
  if (b->nnz) {
    memcpy(indices, b->indices, (size_t)b->nnz * sizeof *indices);
    memcpy(values, b->values, (size_t)b->nnz * sizeof *values);
  }
  int64_t at = b->nnz;
  for (int64_t k = 0; k < pad; ++k) {
    at = append_head_row(it, k % it->h_rows, indices, values, at);
    indptr[b->rows + k + 1] = at;
  }
  mxc__sparse_set_valid(a);
  *out = a;
  return MXC_OK;
}

/* A dense (batch, cols) float32 array: the reader's rows, then pad head
 * rows. */
static int csv_data(const text_iter *it, const mxc__csv_batch *b, int64_t pad,
                    mxc__ndarray **out) {
  int64_t dims[2] = {b->rows + pad, b->cols};
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(
      mxc__shape_make(dims, 2, sizeof(float), "csv batch shape", &s));
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&s, MXC_DTYPE_FLOAT32, k_cpu, 0, &a));
  float *dst = mxc__ndarray_ptr(a);
  const size_t row = (size_t)b->cols * sizeof *dst;
  if (b->rows > 0 && b->cols > 0) memcpy(dst, b->data, (size_t)b->rows * row);
  for (int64_t k = 0; k < pad; ++k) {
    memcpy(dst + (b->rows + k) * b->cols,
           it->h_dense + (k % it->h_rows) * b->cols, row);
  }
  *out = a;
  return MXC_OK;
}

/* ---- the iterator ---- */

static void drop_batch(text_iter *it) {
  mxc__ndarray_free(it->data);
  mxc__ndarray_free(it->label);
  it->data = it->label = NULL;
  it->pad = 0;
}

/* The epoch is over: rows == 0 from the reader, or a short batch that
 * last_batch discards. */
static void end_epoch(text_iter *it, int *out_has) {
  drop_batch(it);
  it->ended = 1;
  it->total = it->seen;
  *out_has = 0;
}

/* Installs a new batch, replacing the current one. */
static void install(text_iter *it, mxc__ndarray *data, mxc__ndarray *label,
                    int64_t pad) {
  drop_batch(it);
  it->data = data;
  it->label = label;
  it->pad = pad;
}

/* After reading b: 1 when the epoch ends here instead of giving a batch. */
static int takes_end(text_iter *it, int64_t rows) {
  it->seen += rows;
  return rows == 0 ||
         (rows < it->batch && it->last_batch == MXC_LAST_BATCH_DISCARD);
}

static int svm_step(text_iter *it, int *out_has) {
  mxc__libsvm_batch b;
  MXC_FORWARD_IF_ERROR(mxc__libsvm_next(it->svm, &b));
  if (takes_end(it, b.rows)) {
    end_epoch(it, out_has);
    return MXC_OK;
  }
  if (it->seen == b.rows) MXC_FORWARD_IF_ERROR(save_svm_head(it, &b));
  int64_t pad = it->batch - b.rows;
  mxc__ndarray *data = NULL, *label = NULL;
  MXC_FORWARD_IF_ERROR(svm_data(it, &b, pad, &data));
  int rc = make_labels(it, b.labels, b.rows, 1, pad, &label);
  if (rc != MXC_OK) {
    mxc__ndarray_free(data);
    return rc;
  }
  install(it, data, label, pad);
  *out_has = 1;
  return MXC_OK;
}

static int csv_step(text_iter *it, int *out_has) {
  mxc__csv_batch b;
  MXC_FORWARD_IF_ERROR(mxc__csv_next(it->csv, &b));
  if (takes_end(it, b.rows)) {
    end_epoch(it, out_has);
    return MXC_OK;
  }
  it->cols = b.cols;
  if (it->seen == b.rows) MXC_FORWARD_IF_ERROR(save_csv_head(it, &b));
  int64_t pad = it->batch - b.rows;
  mxc__ndarray *data = NULL, *label = NULL;
  MXC_FORWARD_IF_ERROR(csv_data(it, &b, pad, &data));
  if (b.label_width > 0) {
    int rc = make_labels(it, b.labels, b.rows, b.label_width, pad, &label);
    if (rc != MXC_OK) {
      mxc__ndarray_free(data);
      return rc;
    }
  }
  install(it, data, label, pad);
  *out_has = 1;
  return MXC_OK;
}

static int text_next(void *impl, int *out_has) {
  text_iter *it = impl;
  MXC_RETURN_ERROR_IF(it->failed, MXC_ERR_INVALID_ARGUMENT,
                      "an earlier next failed and the file position is "
                      "lost; call mxc_data_iter_reset to start over");
  if (it->ended) {
    *out_has = 0;
    return MXC_OK;
  }
  /* The reader has moved (or stopped) whatever happens below, so a
   * failure leaves the current batch as it was but needs a reset. */
  int rc = it->svm ? svm_step(it, out_has) : csv_step(it, out_has);
  if (rc != MXC_OK) it->failed = 1;
  return rc;
}

static int text_reset(void *impl) {
  text_iter *it = impl;
  MXC_FORWARD_IF_ERROR(it->svm ? mxc__libsvm_reset(it->svm)
                               : mxc__csv_reset(it->csv));
  drop_batch(it);
  it->seen = 0;
  it->ended = it->failed = 0;
  return MXC_OK;
}

static void text_current(const void *impl, const mxc__ndarray **data,
                         const mxc__ndarray **label, int64_t *pad) {
  const text_iter *it = impl;
  *data = it->data;
  *label = it->label;
  *pad = it->pad;
}

static int text_num_examples(const void *impl, int64_t *out) {
  const text_iter *it = impl;
  MXC_RETURN_ERROR_IF(it->total < 0, MXC_ERR_UNSUPPORTED,
                      "a text file iterator knows its number of examples "
                      "only once an epoch has been read to its end");
  *out = it->total;
  return MXC_OK;
}

static void text_free(void *impl) {
  text_iter *it = impl;
  if (!it) return;
  drop_batch(it);
  mxc__libsvm_free(it->svm);
  mxc__csv_free(it->csv);
  mxc__free(it->h_indptr);
  mxc__free(it->h_indices);
  mxc__free(it->h_values);
  mxc__free(it->h_dense);
  mxc__free(it->h_labels);
  mxc__free(it);
}

/* Called at an epoch's start (iter.c checks), so the reader is at its
 * first line: the new part applies to this epoch, whose size is unknown
 * again until it has been read. */
static int text_set_parts(void *impl, int64_t num_parts, int64_t part_index) {
  text_iter *it = impl;
  if (it->svm) mxc__libsvm_set_parts(it->svm, num_parts, part_index);
  else mxc__csv_set_parts(it->csv, num_parts, part_index);
  it->total = -1;
  return MXC_OK;
}

static const mxc__iter_ops k_text_ops = {
    text_next, text_reset,        text_current,  text_num_examples,
    text_free, "text_iter_next", text_set_parts};

/* ---- creation ---- */

/* The caller (the C API) has checked out; these are the library's own
 * argument checks, the same for both kinds. */
static int check_common(const char *path, const char *path_name,
                        int64_t batch_size, int last_batch) {
  MXC_RETURN_ERROR_IF(!path, MXC_ERR_INVALID_ARGUMENT, "%s is NULL",
                      path_name);
  MXC_RETURN_ERROR_IF(batch_size <= 0, MXC_ERR_INVALID_ARGUMENT,
                      "batch_size is %lld; expected > 0",
                      (long long)batch_size);
  MXC_RETURN_ERROR_IF(
      last_batch != MXC_LAST_BATCH_PAD && last_batch != MXC_LAST_BATCH_DISCARD,
      MXC_ERR_INVALID_ARGUMENT,
      "last_batch is %d; expected MXC_LAST_BATCH_PAD (0) or "
      "MXC_LAST_BATCH_DISCARD (1)", last_batch);
  return MXC_OK;
}

static int new_iter(int64_t batch_size, int last_batch, text_iter **out) {
  text_iter *it = mxc__calloc(1, sizeof *it);
  MXC_RETURN_ERROR_IF(!it, MXC_ERR_OOM,
                      "out of memory creating a data iterator");
  it->batch = batch_size;
  it->last_batch = last_batch;
  it->total = -1;
  *out = it;
  return MXC_OK;
}

int mxc__iter_libsvm_create(const char *path, int64_t num_features,
                            int64_t batch_size, int one_based, int last_batch,
                            mxc__iter **out) {
  MXC_FORWARD_IF_ERROR(check_common(path, "path", batch_size, last_batch));
  MXC_RETURN_ERROR_IF(num_features <= 0, MXC_ERR_INVALID_ARGUMENT,
                      "num_features is %lld; expected > 0 (the number of "
                      "columns of every batch)", (long long)num_features);
  int64_t cells;
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(batch_size, num_features, &cells),
                      MXC_ERR_INVALID_ARGUMENT,
                      "batch_size %lld x num_features %lld overflows",
                      (long long)batch_size, (long long)num_features);
  text_iter *it = NULL;
  MXC_FORWARD_IF_ERROR(new_iter(batch_size, last_batch, &it));
  it->cols = num_features;
  mxc__libsvm_config cfg = {batch_size, num_features, one_based != 0, 0, 0};
  int rc = mxc__libsvm_open(path, &cfg, &it->svm);
  if (rc != MXC_OK) {
    text_free(it);
    return rc;
  }
  return mxc__iter_new(&k_text_ops, it, out);
}

int mxc__iter_csv_create(const char *data_path, const char *label_path,
                         int64_t num_cols, int64_t batch_size, int header,
                         int64_t label_col, int last_batch, mxc__iter **out) {
  MXC_FORWARD_IF_ERROR(
      check_common(data_path, "data_path", batch_size, last_batch));
  MXC_RETURN_ERROR_IF(num_cols < 0, MXC_ERR_INVALID_ARGUMENT,
                      "num_cols is %lld; expected >= 0 (0: inferred)",
                      (long long)num_cols);
  MXC_RETURN_ERROR_IF(label_col < -1, MXC_ERR_INVALID_ARGUMENT,
                      "label_col is %lld; expected -1 (none) or a column "
                      "index", (long long)label_col);
  MXC_RETURN_ERROR_IF(label_col >= 0 && label_path, MXC_ERR_INVALID_ARGUMENT,
                      "label_col is %lld and label_path is set; expected at "
                      "most one source of labels", (long long)label_col);
  text_iter *it = NULL;
  MXC_FORWARD_IF_ERROR(new_iter(batch_size, last_batch, &it));
  mxc__csv_config cfg = {batch_size, num_cols, header != 0, label_col,
                         label_path, header != 0, 0};
  int rc = mxc__csv_open(data_path, &cfg, &it->csv);
  if (rc != MXC_OK) {
    text_free(it);
    return rc;
  }
  return mxc__iter_new(&k_text_ops, it, out);
}
