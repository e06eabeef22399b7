/* Save/load. The layout is specified in docs/ndarray-format.md; keep the
 * two in step. All integers are little-endian. */
#include "core/ndarray/io.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/crc32.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/file.h"
#include "core/ndarray/mxnet_format.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mxc's file format writes host bytes: little-endian hosts only"
#endif

static const char k_magic[8] = {'M', 'X', 'C', 'N', 'D', 'A', 'R', 'R'};
#define FORMAT_VERSION 1u
#define MAX_NAME_LEN 65535u
#define HEADER_BYTES 28u    /* magic, version, flags, count, header crc */
#define MIN_ENTRY_BYTES 28u /* name_len, stype, dtype, ndim, nbytes, crc */

static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* ---- save ------------------------------------------------------------ */

/* Writes bytes and folds them into *crc. */
static int put(mxc__file *f, uint32_t *crc, const void *p, size_t n) {
  *crc = mxc__crc32(*crc, p, n);
  return mxc__file_write(f, p, n);
}

static int save_entry(mxc__file *f, const mxc__ndarray *a, const char *name) {
  uint32_t crc = 0;
  unsigned char b[8];
  size_t name_len = strlen(name);
  put_u32(b, (uint32_t)name_len);
  MXC_FORWARD_IF_ERROR(put(f, &crc, b, 4));
  MXC_FORWARD_IF_ERROR(put(f, &crc, name, name_len));
  uint32_t fields[3] = {(uint32_t)a->stype, (uint32_t)a->dtype,
                        (uint32_t)a->shape.ndim};
  for (int i = 0; i < 3; ++i) {
    put_u32(b, fields[i]);
    MXC_FORWARD_IF_ERROR(put(f, &crc, b, 4));
  }
  for (int i = 0; i < a->shape.ndim; ++i) {
    put_u64(b, (uint64_t)a->shape.dims[i]);
    MXC_FORWARD_IF_ERROR(put(f, &crc, b, 8));
  }
  size_t nbytes = mxc__ndarray_nbytes(a);
  put_u64(b, nbytes);
  MXC_FORWARD_IF_ERROR(put(f, &crc, b, 8));
  if (nbytes) {
    const void *data;
    void *owned;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_host_bytes(a, &data, &owned));
    int rc = put(f, &crc, data, nbytes);
    mxc__free(owned);
    MXC_FORWARD_IF_ERROR(rc);
  }
  put_u32(b, crc);
  return mxc__file_write(f, b, 4);
}

static int check_save_args(const char *path, mxc__ndarray *const *arrays,
                           const char *const *names, int n) {
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "save: path is NULL or empty");
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "save: count %d is negative", n);
  MXC_RETURN_ERROR_IF(n > 0 && !arrays, MXC_ERR_INVALID_ARGUMENT,
                      "save: arrays is NULL but count is %d", n);
  for (int i = 0; names && i < n; ++i) {
    MXC_RETURN_ERROR_IF(!names[i], MXC_ERR_INVALID_ARGUMENT,
                        "save: names[%d] is NULL; pass \"\" for no name", i);
    MXC_RETURN_ERROR_IF(strlen(names[i]) > MAX_NAME_LEN,
                        MXC_ERR_INVALID_ARGUMENT,
                        "save: names[%d] is longer than %u bytes", i,
                        MAX_NAME_LEN);
  }
  return MXC_OK;
}

/* What the chosen format can hold. */
static int check_save_format(mxc__ndarray *const *arrays, int n, int format) {
  MXC_RETURN_ERROR_IF(
      format != MXC_FILE_FORMAT_MXC && format != MXC_FILE_FORMAT_MXNET,
      MXC_ERR_INVALID_ARGUMENT,
      "save: format %d is unknown; expected MXC_FILE_FORMAT_MXC (0) or "
      "MXC_FILE_FORMAT_MXNET (1)",
      format);
  if (format == MXC_FILE_FORMAT_MXNET) {
    return mxc__mxnet_check_save(arrays, n);
  }
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(arrays[i]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                        "save: array %d is sparse; the mxc format holds "
                        "dense arrays only (MXC_FILE_FORMAT_MXNET holds "
                        "csr and row_sparse)",
                        i);
  }
  return MXC_OK;
}

static int save_all(mxc__file *f, mxc__ndarray *const *arrays,
                    const char *const *names, int n) {
  unsigned char h[HEADER_BYTES];
  memcpy(h, k_magic, 8);
  put_u32(h + 8, FORMAT_VERSION);
  put_u32(h + 12, 0); /* flags: reserved */
  put_u64(h + 16, (uint64_t)n);
  put_u32(h + 24, mxc__crc32(0, h, 24));
  MXC_FORWARD_IF_ERROR(mxc__file_write(f, h, sizeof h));
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(save_entry(f, arrays[i], names ? names[i] : ""));
  }
  return MXC_OK;
}

int mxc__ndarray_save(const char *path, mxc__ndarray *const *arrays,
                      const char *const *names, int n) {
  return mxc__ndarray_save_format(path, arrays, names, n, MXC_FILE_FORMAT_MXC);
}

/* What mxc__file_replace's writer needs for one save. */
typedef struct save_job {
  mxc__ndarray *const *arrays;
  const char *const *names;
  int n, format;
} save_job;

static int write_arrays(mxc__file *f, void *ctx) {
  const save_job *j = ctx;
  return j->format == MXC_FILE_FORMAT_MXNET
             ? mxc__mxnet_write(f, j->arrays, j->names, j->n)
             : save_all(f, j->arrays, j->names, j->n);
}

int mxc__ndarray_save_format(const char *path, mxc__ndarray *const *arrays,
                             const char *const *names, int n, int format) {
  MXC_FORWARD_IF_ERROR(check_save_args(path, arrays, names, n));
  MXC_FORWARD_IF_ERROR(check_save_format(arrays, n, format));
  /* Pending writes must land first; a failed one is reported here. Sparse
   * arrays are read through pushed work (mxc__sparse_part_sync). */
  for (int i = 0; i < n; ++i) {
    if (arrays[i]->stype != MXC_STYPE_DEFAULT) continue;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(arrays[i]));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_wait(arrays[i], 0));
  }
  save_job job = {arrays, names, n, format};
  return mxc__file_replace(path, write_arrays, &job);
}

/* ---- load ------------------------------------------------------------ */

typedef struct reader {
  mxc__file *f;              /* the source: a file, or (f NULL) memory */
  const unsigned char *mem;  /* memory source: mem[0..mem_n) */
  size_t mem_n;
  const char *path;
  uint64_t pos;       /* bytes consumed */
  uint64_t file_size; /* for plausibility checks before allocating */
  uint32_t crc;
} reader;

/* Reads up to n bytes from the source; *got < n only at its end. */
static int src_read(reader *r, void *p, size_t n, size_t *got) {
  if (r->f) return mxc__file_read(r->f, p, n, got);
  size_t left = r->mem_n - (size_t)r->pos;
  *got = n < left ? n : left;
  if (*got) memcpy(p, r->mem + r->pos, *got);
  return MXC_OK;
}

/* Reads exactly n bytes; end of file is a clear MXC_ERR_IO. */
static int take(reader *r, void *p, size_t n, const char *what) {
  size_t got;
  MXC_FORWARD_IF_ERROR(src_read(r, p, n, &got));
  MXC_RETURN_ERROR_IF(got != n, MXC_ERR_IO,
                      "load '%s': file is truncated: unexpected end of file "
                      "at byte %llu while reading %s",
                      r->path, (unsigned long long)(r->pos + got), what);
  r->crc = mxc__crc32(r->crc, p, n);
  r->pos += n;
  return MXC_OK;
}

static int take_u32(reader *r, uint32_t *v, const char *what) {
  unsigned char b[4];
  MXC_FORWARD_IF_ERROR(take(r, b, 4, what));
  *v = get_u32(b);
  return MXC_OK;
}

static int take_u64(reader *r, uint64_t *v, const char *what) {
  unsigned char b[8];
  MXC_FORWARD_IF_ERROR(take(r, b, 8, what));
  *v = get_u64(b);
  return MXC_OK;
}

/* head: the first 8 bytes, read already (format detection). */
static int read_header(reader *r, const unsigned char *head, uint64_t *count) {
  unsigned char h[HEADER_BYTES];
  memcpy(h, head, 8);
  MXC_RETURN_ERROR_IF(memcmp(h, k_magic, 8) != 0, MXC_ERR_IO,
                      "load '%s': at offset 0: bad magic bytes: neither an "
                      "mxc array file (MXCNDARR) nor an MXNet NDArray list "
                      "(0x112)",
                      r->path);
  MXC_RETURN_ERROR_IF(r->file_size < HEADER_BYTES, MXC_ERR_IO,
                      "load '%s': at offset %llu: file is truncated: "
                      "shorter than the %u-byte header",
                      r->path, (unsigned long long)r->file_size, HEADER_BYTES);
  MXC_FORWARD_IF_ERROR(take(r, h + 8, sizeof h - 8, "the file header"));
  uint32_t version = get_u32(h + 8);
  MXC_RETURN_ERROR_IF(version != FORMAT_VERSION, MXC_ERR_IO,
                      "load '%s': format version %u is not supported; this "
                      "library reads version %u",
                      r->path, version, FORMAT_VERSION);
  MXC_RETURN_ERROR_IF(get_u32(h + 24) != mxc__crc32(0, h, 24), MXC_ERR_IO,
                      "load '%s': header checksum mismatch (file corrupted)",
                      r->path);
  *count = get_u64(h + 16);
  uint64_t room = (r->file_size - HEADER_BYTES) / MIN_ENTRY_BYTES;
  MXC_RETURN_ERROR_IF(*count > room || *count > (uint64_t)INT32_MAX,
                      MXC_ERR_IO,
                      "load '%s': header claims %llu arrays, more than the "
                      "%llu-byte file can hold (file truncated or corrupted)",
                      r->path, (unsigned long long)*count,
                      (unsigned long long)r->file_size);
  return MXC_OK;
}

/* Reads one entry's metadata and validates it against the file size. */
static int read_meta(reader *r, int idx, char **name, mxc__shape *shape,
                     int *dtype) {
  uint32_t name_len, stype, dt, ndim;
  MXC_FORWARD_IF_ERROR(take_u32(r, &name_len, "a name length"));
  MXC_RETURN_ERROR_IF(name_len > MAX_NAME_LEN ||
                          name_len > r->file_size - r->pos,
                      MXC_ERR_IO,
                      "load '%s': array %d: name length %u is invalid (file "
                      "truncated or corrupted)",
                      r->path, idx, name_len);
  char *s = mxc__malloc((size_t)name_len + 1);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "load '%s': out of memory", r->path);
  int rc = take(r, s, name_len, "a name");
  s[name_len] = '\0';
  if (rc == MXC_OK) rc = take_u32(r, &stype, "a storage type");
  if (rc == MXC_OK) rc = take_u32(r, &dt, "a dtype");
  if (rc == MXC_OK) rc = take_u32(r, &ndim, "ndim");
  if (rc == MXC_OK && stype != MXC_STYPE_DEFAULT) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "load '%s': array %d ('%s'): storage type %u is not "
                        "supported by this version",
                        r->path, idx, s, stype);
  }
  if (rc == MXC_OK && (mxc__dtype_size((int)dt) == 0 || ndim > MXC_MAX_NDIM)) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "load '%s': array %d ('%s'): invalid dtype %u or ndim "
                        "%u (file corrupted)",
                        r->path, idx, s, dt, ndim);
  }
  int64_t dims[MXC_MAX_NDIM];
  for (uint32_t i = 0; rc == MXC_OK && i < ndim; ++i) {
    uint64_t d = 0;
    rc = take_u64(r, &d, "an extent");
    dims[i] = (int64_t)d;
  }
  if (rc == MXC_OK) {
    rc = mxc__shape_make(dims, (int)ndim, mxc__dtype_size((int)dt), "load",
                         shape);
    if (rc != MXC_OK) {
      rc = mxc__error_set(MXC_ERR_IO,
                          "load '%s': array %d ('%s'): invalid shape (file "
                          "corrupted)",
                          r->path, idx, s);
    }
  }
  if (rc != MXC_OK) {
    mxc__free(s);
    return rc;
  }
  *name = s;
  *dtype = (int)dt;
  return MXC_OK;
}

static int read_entry(reader *r, int idx, mxc__ndarray **arr, char **name) {
  r->crc = 0;
  mxc__shape shape;
  int dtype = 0;
  MXC_FORWARD_IF_ERROR(read_meta(r, idx, name, &shape, &dtype));
  uint64_t nbytes;
  int rc = take_u64(r, &nbytes, "a byte count");
  uint64_t want = (uint64_t)mxc__shape_size(&shape) * mxc__dtype_size(dtype);
  if (rc == MXC_OK && (nbytes != want || nbytes > r->file_size - r->pos)) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "load '%s': array %d ('%s'): byte count %llu does not "
                        "match its shape (%llu) or the file size (file "
                        "truncated or corrupted)",
                        r->path, idx, *name, (unsigned long long)nbytes,
                        (unsigned long long)want);
  }
  mxc__ndarray *a = NULL;
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  if (rc == MXC_OK) rc = mxc__ndarray_create(&shape, dtype, cpu, 0, &a);
  /* A fresh array has no pending work: its storage is written directly. */
  if (rc == MXC_OK && nbytes) rc = take(r, mxc__ndarray_ptr(a), nbytes, "data");
  uint32_t computed = r->crc, stored = 0;
  if (rc == MXC_OK) rc = take_u32(r, &stored, "a checksum");
  if (rc == MXC_OK && stored != computed) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "load '%s': array %d ('%s'): checksum mismatch "
                        "(stored 0x%08x, computed 0x%08x): file corrupted",
                        r->path, idx, *name, stored, computed);
  }
  if (rc != MXC_OK) {
    mxc__ndarray_free(a);
    mxc__free(*name);
    return rc;
  }
  *arr = a;
  return MXC_OK;
}

static int load_entries(reader *r, mxc__ndarray_list *list, uint64_t count) {
  list->arrays = mxc__calloc(count ? count : 1, sizeof *list->arrays);
  list->names = mxc__calloc(count ? count : 1, sizeof *list->names);
  MXC_RETURN_ERROR_IF(!list->arrays || !list->names, MXC_ERR_OOM,
                      "load '%s': out of memory", r->path);
  for (uint64_t i = 0; i < count; ++i) {
    MXC_FORWARD_IF_ERROR(
        read_entry(r, (int)i, &list->arrays[i], &list->names[i]));
    list->n = (int)i + 1;
  }
  unsigned char extra;
  size_t got;
  MXC_FORWARD_IF_ERROR(src_read(r, &extra, 1, &got));
  MXC_RETURN_ERROR_IF(got != 0, MXC_ERR_IO,
                      "load '%s': unexpected bytes after the last array at "
                      "byte %llu (file corrupted)",
                      r->path, (unsigned long long)r->pos);
  return MXC_OK;
}

/* The mxc format after its first 8 bytes (head). */
static int load_mxc(reader *r, const unsigned char *head,
                    mxc__ndarray_list *list) {
  uint64_t count = 0;
  MXC_FORWARD_IF_ERROR(read_header(r, head, &count));
  return load_entries(r, list, count);
}

int mxc__ndarray_load(const char *path, mxc__ndarray_list **out) {
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "load: path is NULL or empty");
  reader r;
  memset(&r, 0, sizeof r);
  r.path = path;
  MXC_FORWARD_IF_ERROR(mxc__file_open_read(path, &r.f));
  mxc__ndarray_list *list = mxc__calloc(1, sizeof *list);
  int rc = list ? mxc__file_size(r.f, &r.file_size)
                : mxc__error_set(MXC_ERR_OOM, "load '%s': out of memory", path);
  unsigned char head[8];
  if (rc == MXC_OK && r.file_size < 8) {
    rc = mxc__error_set(MXC_ERR_IO,
                        "load '%s': at offset 0: file is truncated: %llu "
                        "bytes, shorter than any array file's magic",
                        path, (unsigned long long)r.file_size);
  }
  if (rc == MXC_OK) rc = take(&r, head, 8, "the magic bytes");
  if (rc == MXC_OK && get_u64(head) == MXC__MXNET_LIST_MAGIC) {
    mxc__ndarray_list_free(list);
    list = NULL;
    rc = mxc__mxnet_load_file(r.f, path, r.file_size, 8, &list);
  } else if (rc == MXC_OK) {
    rc = load_mxc(&r, head, list);
  }
  mxc__file_close(r.f);
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
    return rc;
  }
  *out = list;
  return MXC_OK;
}

int mxc__ndarray_load_mem(const void *buf, size_t n, const char *name,
                          mxc__ndarray_list **out) {
  MXC_RETURN_ERROR_IF(!buf && n > 0, MXC_ERR_INVALID_ARGUMENT,
                      "load '%s': the buffer is NULL but its size is %zu",
                      name, n);
  MXC_RETURN_ERROR_IF(n < 8, MXC_ERR_IO,
                      "load '%s': at offset 0: truncated: %zu bytes, shorter "
                      "than any array file's magic",
                      name, n);
  if (get_u64(buf) == MXC__MXNET_LIST_MAGIC) {
    return mxc__mxnet_load_mem(buf, n, name, out);
  }
  reader r;
  memset(&r, 0, sizeof r);
  r.mem = buf;
  r.mem_n = n;
  r.path = name;
  r.file_size = n;
  mxc__ndarray_list *list = mxc__calloc(1, sizeof *list);
  MXC_RETURN_ERROR_IF(!list, MXC_ERR_OOM, "load '%s': out of memory", name);
  unsigned char head[8];
  int rc = take(&r, head, 8, "the magic bytes");
  if (rc == MXC_OK) rc = load_mxc(&r, head, list);
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
    return rc;
  }
  *out = list;
  return MXC_OK;
}

void mxc__ndarray_list_free(mxc__ndarray_list *list) {
  if (!list) return;
  for (int i = 0; i < list->n; ++i) {
    mxc__ndarray_free(list->arrays[i]);
    mxc__free(list->names[i]);
  }
  mxc__free(list->arrays);
  mxc__free(list->names);
  mxc__free(list);
}
