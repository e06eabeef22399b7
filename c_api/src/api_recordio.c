/* RecordIO files (core/io/recordio.h) and image decoding (core/io/image.h):
 * handle conversion and argument checks. */
#include <string.h>

#include "api_internal.h"
#include "core/io/image.h"
#include "core/io/recordio.h"

static int api_rec(mxc_recordio h, const char *what, mxc__recordio **out) {
  void *p;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_RECORDIO, what, &p));
  *out = p;
  return MXC_OK;
}

/* A reader or writer as the function needs (fn names it). */
static int api_rec_kind(mxc_recordio h, int writer, const char *fn,
                        mxc__recordio **out) {
  MXC_FORWARD_IF_ERROR(api_rec(h, fn, out));
  MXC_RETURN_ERROR_IF(mxc__recordio_is_writer(*out) != writer,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: the handle was opened for %s; expected one opened "
                      "with mode \"%s\"",
                      fn, writer ? "reading" : "writing", writer ? "w" : "r");
  return MXC_OK;
}

static void dtor_rec(void *p) { mxc__recordio_free(p); }

int mxc_recordio_open(const char *path, const char *idx_path,
                      const char *mode, mxc_recordio *out) {
  API_GUARD();
  const char *fn = "mxc_recordio_open";
  API_CHECK_OUT(out, fn, "out");
  MXC_RETURN_ERROR_IF(!path || !mode, MXC_ERR_INVALID_ARGUMENT,
                      "%s: %s is NULL", fn, path ? "mode" : "path");
  int writing = strcmp(mode, "w") == 0;
  MXC_RETURN_ERROR_IF(!writing && strcmp(mode, "r") != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: mode \"%s\"; expected \"r\" or \"w\"", fn, mode);
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(mxc__recordio_open(path, idx_path, writing, &r));
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_RECORDIO, r, dtor_rec, 0, &h);
  if (rc != MXC_OK) {
    mxc__recordio_free(r);
    return rc;
  }
  *out = (mxc_recordio)h;
  return MXC_OK;
}

void mxc_recordio_free(mxc_recordio rec) {
  API_GUARD();
  if (!rec) return;
  (void)mxc__handle_free((uintptr_t)rec, MXC__HANDLE_RECORDIO,
                         "mxc_recordio_free: rec", dtor_rec);
}

static int64_t current_size(const mxc__recordio *r) {
  size_t n;
  (void)mxc__recordio_data(r, &n);
  return (int64_t)n;
}

int mxc_recordio_read(mxc_recordio rec, int64_t *out_size) {
  API_GUARD();
  const char *fn = "mxc_recordio_read";
  API_CHECK_OUT(out_size, fn, "out_size");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 0, fn, &r));
  int has;
  MXC_FORWARD_IF_ERROR(mxc__recordio_next(r, &has));
  *out_size = has ? current_size(r) : -1;
  return MXC_OK;
}

int mxc_recordio_read_key(mxc_recordio rec, int64_t key, int64_t *out_size) {
  API_GUARD();
  const char *fn = "mxc_recordio_read_key";
  API_CHECK_OUT(out_size, fn, "out_size");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 0, fn, &r));
  MXC_FORWARD_IF_ERROR(mxc__recordio_read_key(r, key));
  *out_size = current_size(r);
  return MXC_OK;
}

int mxc_recordio_data(mxc_recordio rec, const void **out_data,
                      int64_t *out_size) {
  API_GUARD();
  const char *fn = "mxc_recordio_data";
  API_CHECK_OUT(out_data, fn, "out_data");
  API_CHECK_OUT(out_size, fn, "out_size");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 0, fn, &r));
  size_t n;
  const void *d = mxc__recordio_data(r, &n);
  *out_data = n ? d : NULL;
  *out_size = (int64_t)n;
  return MXC_OK;
}

int mxc_recordio_copy(mxc_recordio rec, void *buf, int64_t buf_size) {
  API_GUARD();
  const char *fn = "mxc_recordio_copy";
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 0, fn, &r));
  size_t n;
  const void *d = mxc__recordio_data(r, &n);
  MXC_RETURN_ERROR_IF(buf_size < 0 || (uint64_t)buf_size < n ||
                          (n && !buf),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: a buffer of %lld bytes%s for a record of %zu bytes",
                      fn, (long long)buf_size, buf ? "" : " (NULL)", n);
  if (n) memcpy(buf, d, n);
  return MXC_OK;
}

static int check_bytes(const void *data, int64_t size, const char *fn) {
  MXC_RETURN_ERROR_IF(size < 0 || (size > 0 && !data),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: data %s with size %lld; expected size >= 0 and "
                      "data non-NULL when size > 0",
                      fn, data ? "non-NULL" : "NULL", (long long)size);
  return MXC_OK;
}

int mxc_recordio_write(mxc_recordio rec, const void *data, int64_t size) {
  API_GUARD();
  const char *fn = "mxc_recordio_write";
  MXC_FORWARD_IF_ERROR(check_bytes(data, size, fn));
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 1, fn, &r));
  return mxc__recordio_write(r, data, (size_t)size, NULL);
}

int mxc_recordio_write_key(mxc_recordio rec, int64_t key, const void *data,
                           int64_t size) {
  API_GUARD();
  const char *fn = "mxc_recordio_write_key";
  MXC_FORWARD_IF_ERROR(check_bytes(data, size, fn));
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 1, fn, &r));
  return mxc__recordio_write_key(r, key, data, (size_t)size);
}

int mxc_recordio_flush(mxc_recordio rec) {
  API_GUARD();
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec(rec, "mxc_recordio_flush: rec", &r));
  return mxc__recordio_flush(r);
}

int mxc_recordio_num_keys(mxc_recordio rec, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_recordio_num_keys", "out");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec(rec, "mxc_recordio_num_keys: rec", &r));
  *out = mxc__recordio_num_keys(r);
  return MXC_OK;
}

int mxc_recordio_key(mxc_recordio rec, int64_t i, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_recordio_key", "out");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec(rec, "mxc_recordio_key: rec", &r));
  int64_t n = mxc__recordio_num_keys(r);
  MXC_RETURN_ERROR_IF(i < 0 || i >= n, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_recordio_key: index %lld; expected 0 <= i < %lld",
                      (long long)i, (long long)n);
  *out = mxc__recordio_key_at(r, i);
  return MXC_OK;
}

int mxc_recordio_tell(mxc_recordio rec, int64_t *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_recordio_tell", "out");
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec(rec, "mxc_recordio_tell: rec", &r));
  *out = (int64_t)mxc__recordio_tell(r);
  return MXC_OK;
}

int mxc_recordio_seek(mxc_recordio rec, int64_t pos) {
  API_GUARD();
  const char *fn = "mxc_recordio_seek";
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(api_rec_kind(rec, 0, fn, &r));
  MXC_RETURN_ERROR_IF(pos < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: pos %lld; expected >= 0", fn, (long long)pos);
  return mxc__recordio_seek(r, (uint64_t)pos);
}

static int check_pack(const float *labels, int n_labels, const void *payload,
                      int64_t payload_size, int64_t *out_needed) {
  const char *fn = "mxc_recordio_pack_image";
  API_CHECK_OUT(out_needed, fn, "out_needed");
  MXC_RETURN_ERROR_IF(n_labels < 0 || (n_labels > 0 && !labels),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_labels %d with labels %s; expected n_labels >= 0 "
                      "and labels non-NULL when n_labels > 0",
                      fn, n_labels, labels ? "non-NULL" : "NULL");
  return check_bytes(payload, payload_size, fn);
}

int mxc_recordio_pack_image(const float *labels, int n_labels, int64_t id,
                            int64_t id2, const void *payload,
                            int64_t payload_size, void *out, int64_t out_size,
                            int64_t *out_needed) {
  MXC_FORWARD_IF_ERROR(
      check_pack(labels, n_labels, payload, payload_size, out_needed));
  size_t need = mxc__image_record_size(n_labels, (size_t)payload_size);
  MXC_RETURN_ERROR_IF(need == 0 || need > INT64_MAX, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_recordio_pack_image: %d labels and %lld bytes "
                      "overflow a record's size", n_labels,
                      (long long)payload_size);
  *out_needed = (int64_t)need;
  MXC_RETURN_ERROR_IF(out_size < 0 || (uint64_t)out_size < need || !out,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_recordio_pack_image: out %s with %lld bytes; the "
                      "record needs %zu",
                      out ? "non-NULL" : "NULL", (long long)out_size, need);
  mxc__image_record_pack(labels, n_labels, (uint64_t)id, (uint64_t)id2,
                         payload, (size_t)payload_size, out);
  return MXC_OK;
}

static void give_labels(const mxc__image_header *h, float *labels, int max) {
  uint32_t n = h->flag ? h->flag : 1;
  for (uint32_t i = 0; i < n && (int64_t)i < max; ++i) {
    labels[i] = mxc__image_header_label(h, i);
  }
}

int mxc_recordio_unpack_image(const void *rec, int64_t size, float *labels,
                              int max_labels, int *out_n_labels,
                              int64_t *out_id, int64_t *out_id2,
                              int64_t *out_payload_offset) {
  const char *fn = "mxc_recordio_unpack_image";
  API_CHECK_OUT(out_n_labels, fn, "out_n_labels");
  API_CHECK_OUT(out_payload_offset, fn, "out_payload_offset");
  MXC_FORWARD_IF_ERROR(check_bytes(rec, size, fn));
  MXC_RETURN_ERROR_IF(max_labels < 0 || (max_labels > 0 && !labels),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: max_labels %d with labels %s", fn, max_labels,
                      labels ? "non-NULL" : "NULL");
  mxc__image_header h;
  MXC_FORWARD_IF_ERROR(mxc__image_header_parse(rec, (size_t)size, &h));
  MXC_RETURN_ERROR_IF(h.flag > INT32_MAX, MXC_ERR_IO,
                      "%s: the header claims %u labels", fn, h.flag);
  give_labels(&h, labels, max_labels);
  *out_n_labels = h.flag ? (int)h.flag : 1;
  if (out_id) *out_id = (int64_t)h.id;
  if (out_id2) *out_id2 = (int64_t)h.id2;
  *out_payload_offset = (int64_t)h.payload_offset;
  return MXC_OK;
}

int mxc_image_decode(const void *buf, int64_t size, int channels, int dtype,
                     mxc_ndarray *out) {
  API_GUARD();
  const char *fn = "mxc_image_decode";
  API_CHECK_OUT(out, fn, "out");
  MXC_FORWARD_IF_ERROR(check_bytes(buf, size, fn));
  mxc__ndarray *a;
  MXC_FORWARD_IF_ERROR(
      mxc__image_decode_array(buf, (size_t)size, channels, dtype, fn, &a));
  return api_wrap_array(a, out);
}
