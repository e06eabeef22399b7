/* MXNet's NDArray list format; docs/mxnet-format.md is the specification.
 * All integers are little-endian (MXNet writes host bytes, and every host
 * it ran on was little-endian). */
#include "core/ndarray/mxnet_format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "MXNet's format is read and written as host bytes: little-endian only"
#endif

/* Per-array magics. A legacy (v0) array has none: its first uint32 is the
 * ndim of its shape, so any value other than these three is read as one. */
#define MAGIC_V1 0xF993FAC8u /* int64 extents */
#define MAGIC_V2 0xF993FAC9u /* + storage type (sparse arrays) */
#define MAGIC_V3 0xF993FACAu /* numpy shape semantics: 0-d, unknown = -1 */
/* The smallest array: a legacy placeholder, its uint32 ndim 0 alone. */
#define MIN_ARRAY_BYTES 4u
#define DEV_CPU 1 /* MXNet's Context::kCPU, written as the device type */
/* A csr array never written has an empty indptr in the file, but mxc
 * materialises rows + 1 zeros: bytes the file does not justify, so they
 * are capped (2M rows of int64 indices). */
#define MAX_UNWRITTEN_INDPTR_BYTES (UINT64_C(1) << 24)

/* ---- the cursor ------------------------------------------------------- */

typedef struct cursor {
  const unsigned char *mem; /* memory source, or NULL to read f */
  mxc__file *f;
  const char *name; /* the path (or a label), for messages */
  uint64_t pos, size;
  int idx; /* the array being read, -1 outside the arrays */
} cursor;

static int fail(const cursor *c, uint64_t at, const char *fmt, ...)
    MXC__PRINTF(3, 4);

/* MXC_ERR_IO naming the input, the array and the offset of the bad field. */
static int fail(const cursor *c, uint64_t at, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->idx < 0) {
    return mxc__error_set(MXC_ERR_IO, "load '%s': at offset %llu: %s", c->name,
                          (unsigned long long)at, msg);
  }
  return mxc__error_set(MXC_ERR_IO, "load '%s': array %d at offset %llu: %s",
                        c->name, c->idx, (unsigned long long)at, msg);
}

static uint64_t left(const cursor *c) { return c->size - c->pos; }

/* Reads exactly n bytes, checked against the size before reading. */
static int take(cursor *c, void *dst, uint64_t n, const char *what) {
  if (n > left(c)) {
    return fail(c, c->pos,
                "file is truncated: %s needs %llu bytes, %llu are left", what,
                (unsigned long long)n, (unsigned long long)left(c));
  }
  if (n == 0) return MXC_OK;
  if (c->mem) {
    memcpy(dst, c->mem + c->pos, (size_t)n);
  } else {
    size_t got;
    MXC_FORWARD_IF_ERROR(mxc__file_read(c->f, dst, (size_t)n, &got));
    if (got != n) {
      return fail(c, c->pos + got,
                  "file is truncated: it ended while reading %s (it shrank "
                  "while being read)",
                  what);
    }
  }
  c->pos += n;
  return MXC_OK;
}

static int take_u32(cursor *c, uint32_t *v, const char *what) {
  return take(c, v, 4, what);
}
static int take_i32(cursor *c, int32_t *v, const char *what) {
  return take(c, v, 4, what);
}
static int take_u64(cursor *c, uint64_t *v, const char *what) {
  return take(c, v, 8, what);
}

/* ---- one array: metadata ---------------------------------------------- */

typedef struct meta {
  int version;        /* 0 (legacy), 1, 2 or 3 */
  int stype;          /* MXC_STYPE_* */
  int none;           /* MXNet's placeholder array: no shape, no data */
  int dtype;          /* of the values */
  mxc__shape shape;   /* logical shape */
  mxc__shape sshape;  /* sparse: shape of the stored values */
  int aux_dtype[2];   /* sparse: index arrays */
  mxc__shape aux_shape[2];
} meta;

/* Validates extents read at offset `at` and fills *s; sets *none for the
 * shapes MXNet uses for "no array" (ndim 0 before v3, an unknown -1
 * extent in v3). The element count must fit int64. */
static int make_shape(cursor *c, uint64_t at, int version, const int64_t *dims,
                      int ndim, mxc__shape *s, int *none) {
  *none = version < 3 && ndim == 0;
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    if (version == 3 && dims[i] == -1) *none = 1;
    if (dims[i] < 0 && !(version == 3 && dims[i] == -1)) {
      return fail(c, at, "extent %d is %lld; extents must be >= 0", i,
                  (long long)dims[i]);
    }
    /* mxc's shape invariant (core/base/shape.h): zero extents aside, the
     * product must fit, even when another extent is 0. */
    if (dims[i] > 0 && !mxc__mul_i64(count, dims[i], &count)) {
      return fail(c, at, "the product of the non-zero extents overflows "
                  "int64");
    }
  }
  s->ndim = ndim;
  for (int i = 0; i < ndim; ++i) s->dims[i] = dims[i];
  return MXC_OK;
}

/* A v1..v3 shape: int32 ndim, then ndim int64 extents. */
static int read_shape(cursor *c, int version, mxc__shape *s, int *none) {
  uint64_t at = c->pos;
  int32_t ndim;
  MXC_FORWARD_IF_ERROR(take_i32(c, &ndim, "a shape's ndim"));
  if (version == 3 && ndim == -1) { /* unknown ndim: no array */
    s->ndim = 0;
    *none = 1;
    return MXC_OK;
  }
  if (ndim < 0 || ndim > MXC_MAX_NDIM) {
    return fail(c, at, "shape ndim %d is invalid; expected 0..%d", ndim,
                MXC_MAX_NDIM);
  }
  int64_t dims[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(take(c, dims, 8u * (uint64_t)ndim, "shape extents"));
  return make_shape(c, at, version, dims, ndim, s, none);
}

/* A legacy shape: the ndim was the array's first uint32; uint32 extents. */
static int read_legacy_shape(cursor *c, uint32_t ndim, mxc__shape *s,
                             int *none) {
  uint64_t at = c->pos - 4;
  uint32_t raw[MXC_MAX_NDIM];
  int64_t dims[MXC_MAX_NDIM];
  MXC_FORWARD_IF_ERROR(take(c, raw, 4u * ndim, "legacy shape extents"));
  for (uint32_t i = 0; i < ndim; ++i) dims[i] = raw[i];
  return make_shape(c, at, 0, dims, (int)ndim, s, none);
}

static int read_dtype(cursor *c, int *dtype, const char *what) {
  uint64_t at = c->pos;
  int32_t flag;
  MXC_FORWARD_IF_ERROR(take_i32(c, &flag, what));
  if (mxc__dtype_size(flag) == 0) {
    return fail(c, at,
                "%s %d is not one mxc supports: float32 0, float64 1, "
                "float16 2, uint8 3, int32 4, int8 5, int64 6, bool 7, "
                "bfloat16 12",
                what, flag);
  }
  *dtype = flag;
  return MXC_OK;
}

/* Context (device type, device id): where the array lived when saved.
 * mxc loads every array on the CPU, as MXNet does without that device. */
static int skip_context(cursor *c) {
  int32_t ctx[2];
  return take(c, ctx, sizeof ctx, "the device context");
}

static int read_aux_meta(cursor *c, meta *m, int k) {
  uint64_t at = c->pos;
  MXC_FORWARD_IF_ERROR(read_dtype(c, &m->aux_dtype[k], "index dtype flag"));
  if (m->aux_dtype[k] != MXC_DTYPE_INT32 &&
      m->aux_dtype[k] != MXC_DTYPE_INT64) {
    return fail(c, at, "index dtype %s is invalid; expected int32 or int64",
                mxc__dtype_name(m->aux_dtype[k]));
  }
  int none = 0;
  MXC_FORWARD_IF_ERROR(read_shape(c, m->version, &m->aux_shape[k], &none));
  if (none || m->aux_shape[k].ndim != 1) {
    return fail(c, at + 4, "index array %d must be 1-d", k);
  }
  return MXC_OK;
}

/* The fields after the v2/v3 magic up to the data. */
static int read_meta_v2(cursor *c, meta *m) {
  uint64_t at = c->pos;
  int32_t stype;
  MXC_FORWARD_IF_ERROR(take_i32(c, &stype, "the storage type"));
  if (stype < MXC_STYPE_DEFAULT || stype > MXC_STYPE_CSR) {
    return fail(c, at,
                "storage type %d is invalid; expected 0 (dense), "
                "1 (row_sparse) or 2 (csr)",
                stype);
  }
  m->stype = stype;
  int nad = mxc__sparse_n_aux(stype), snone = 0;
  if (nad) MXC_FORWARD_IF_ERROR(read_shape(c, m->version, &m->sshape, &snone));
  MXC_FORWARD_IF_ERROR(read_shape(c, m->version, &m->shape, &m->none));
  if (m->none) return MXC_OK;
  if (snone) return fail(c, at + 4, "a sparse array without storage shape");
  MXC_FORWARD_IF_ERROR(skip_context(c));
  MXC_FORWARD_IF_ERROR(read_dtype(c, &m->dtype, "dtype flag"));
  for (int k = 0; k < nad; ++k) MXC_FORWARD_IF_ERROR(read_aux_meta(c, m, k));
  return MXC_OK;
}

static int read_meta(cursor *c, meta *m) {
  memset(m, 0, sizeof *m);
  uint64_t at = c->pos;
  uint32_t magic;
  MXC_FORWARD_IF_ERROR(take_u32(c, &magic, "an array's magic"));
  if (magic == MAGIC_V2 || magic == MAGIC_V3) {
    m->version = magic == MAGIC_V3 ? 3 : 2;
    return read_meta_v2(c, m);
  }
  if (magic == MAGIC_V1) {
    m->version = 1;
    MXC_FORWARD_IF_ERROR(read_shape(c, 1, &m->shape, &m->none));
  } else if (magic <= MXC_MAX_NDIM) {
    MXC_FORWARD_IF_ERROR(read_legacy_shape(c, magic, &m->shape, &m->none));
  } else {
    return fail(c, at,
                "0x%08x is not an array magic (v1 0x%08x, v2 0x%08x, v3 "
                "0x%08x) nor a legacy ndim 0..%d",
                magic, MAGIC_V1, MAGIC_V2, MAGIC_V3, MXC_MAX_NDIM);
  }
  if (m->none) return MXC_OK;
  MXC_FORWARD_IF_ERROR(skip_context(c));
  return read_dtype(c, &m->dtype, "dtype flag");
}

/* ---- one array: data -------------------------------------------------- */

/* *out = bytes of `count` elements of dtype, checked against what is left
 * (so nothing is allocated for data the file does not hold). */
static int data_bytes(cursor *c, const mxc__shape *s, int dtype,
                      const char *what, uint64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < s->ndim; ++i) (void)mxc__mul_i64(n, s->dims[i], &n);
  int64_t bytes;
  if (!mxc__mul_i64(n, (int64_t)mxc__dtype_size(dtype), &bytes) ||
      (uint64_t)bytes > left(c)) {
    return fail(c, c->pos,
                "file is truncated or corrupted: %s of %lld elements need "
                "more than the %llu bytes left",
                what, (long long)n, (unsigned long long)left(c));
  }
  *out = (uint64_t)bytes;
  return MXC_OK;
}

static int read_dense(cursor *c, const meta *m, mxc__ndarray **out) {
  uint64_t nbytes;
  MXC_FORWARD_IF_ERROR(data_bytes(c, &m->shape, m->dtype, "the data", &nbytes));
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  mxc__ndarray *a;
  int made = mxc__ndarray_create(&m->shape, m->dtype, cpu, 0, &a);
  /* A shape read from the file that mxc cannot hold (its byte size for the
   * dtype overflows) is a bad file, like any other bad field. */
  if (made != MXC_OK && made != MXC_ERR_OOM) {
    return fail(c, c->pos, "%s", mxc__error_msg());
  }
  MXC_FORWARD_IF_ERROR(made);
  /* A fresh array has no pending work: its storage is written directly. */
  int rc = take(c, mxc__ndarray_ptr(a), nbytes, "the data");
  if (rc != MXC_OK) {
    mxc__ndarray_free(a);
    return rc;
  }
  *out = a;
  return MXC_OK;
}

/* The storage and index shapes must describe the logical shape: csr
 * values (nnz), indptr (rows + 1, or 0 when nnz is 0: an array never
 * written), indices (nnz); row_sparse values (nnz, d1, ...), rows (nnz). */
static int check_sparse(cursor *c, uint64_t at, const meta *m) {
  const mxc__shape *s = &m->shape, *ss = &m->sshape;
  int ok = ss->ndim >= 1;
  int64_t nnz = ok ? ss->dims[0] : 0;
  if (m->stype == MXC_STYPE_CSR) {
    int64_t ip = m->aux_shape[0].dims[0];
    ok = ok && s->ndim == 2 && ss->ndim == 1 &&
         m->aux_shape[1].dims[0] == nnz &&
         (ip == s->dims[0] + 1 || (ip == 0 && nnz == 0)) &&
         m->aux_dtype[0] == m->aux_dtype[1];
  } else {
    ok = ok && ss->ndim == s->ndim && m->aux_shape[0].dims[0] == nnz;
    for (int i = 1; ok && i < s->ndim; ++i) ok = ss->dims[i] == s->dims[i];
  }
  if (!ok) {
    return fail(c, at,
                "%s array's storage shape, index shapes or index dtypes do "
                "not match its shape",
                mxc__stype_name(m->stype));
  }
  if (m->stype == MXC_STYPE_CSR && m->aux_shape[0].dims[0] == 0 &&
      (uint64_t)s->dims[0] >=
          MAX_UNWRITTEN_INDPTR_BYTES / mxc__dtype_size(m->aux_dtype[0])) {
    return fail(c, at,
                "an unwritten csr array of %lld rows: more than mxc loads "
                "without an indptr in the file",
                (long long)s->dims[0]);
  }
  return MXC_OK;
}

typedef struct sparse_bufs {
  void *data, *aux[2];
} sparse_bufs;

static void sparse_bufs_free(sparse_bufs *b) {
  mxc__free(b->data);
  mxc__free(b->aux[0]);
  mxc__free(b->aux[1]);
}

/* Reads the values and index arrays into host buffers, each checked
 * against what is left before it is allocated. */
static int read_sparse_bufs(cursor *c, const meta *m, sparse_bufs *b) {
  uint64_t n;
  MXC_FORWARD_IF_ERROR(data_bytes(c, &m->sshape, m->dtype, "the values", &n));
  b->data = mxc__malloc(n ? n : 1);
  MXC_RETURN_ERROR_IF(!b->data, MXC_ERR_OOM, "load '%s': out of memory",
                      c->name);
  MXC_FORWARD_IF_ERROR(take(c, b->data, n, "the values"));
  for (int k = 0; k < mxc__sparse_n_aux(m->stype); ++k) {
    MXC_FORWARD_IF_ERROR(data_bytes(c, &m->aux_shape[k], m->aux_dtype[k],
                                    "an index array", &n));
    b->aux[k] = mxc__malloc(n ? n : 1);
    MXC_RETURN_ERROR_IF(!b->aux[k], MXC_ERR_OOM, "load '%s': out of memory",
                        c->name);
    MXC_FORWARD_IF_ERROR(take(c, b->aux[k], n, "an index array"));
  }
  return MXC_OK;
}

static int read_sparse(cursor *c, uint64_t at, const meta *m,
                       mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(check_sparse(c, at, m));
  sparse_bufs b = {NULL, {NULL, NULL}};
  int rc = read_sparse_bufs(c, m, &b);
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  int64_t nnz = m->sshape.dims[0];
  int empty_indptr = m->stype == MXC_STYPE_CSR && m->aux_shape[0].dims[0] == 0;
  if (rc == MXC_OK && m->stype == MXC_STYPE_CSR) {
    rc = mxc__ndarray_create_csr_host(&m->shape, m->dtype, m->aux_dtype[0], cpu,
                                      b.data, empty_indptr ? NULL : b.aux[0],
                                      b.aux[1], nnz, out);
  } else if (rc == MXC_OK) {
    rc = mxc__ndarray_create_rsp_host(&m->shape, m->dtype, m->aux_dtype[0], cpu,
                                      b.data, b.aux[0], nnz, out);
  }
  sparse_bufs_free(&b);
  /* The sizes were consistent, so what the constructor refuses (nnz
   * beyond the shape, int32 indices for too large a shape) is a bad file. */
  if (rc != MXC_OK && rc != MXC_ERR_IO && rc != MXC_ERR_OOM) {
    return fail(c, at, "%s", mxc__error_msg());
  }
  return rc;
}

/* MXNet's placeholder ("none") array has no shape and no data; mxc has no
 * such array, so it loads as an empty float32 array of shape (0). */
static int make_none(mxc__ndarray **out) {
  mxc__shape s = {1, {0}};
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  return mxc__ndarray_create(&s, MXC_DTYPE_FLOAT32, cpu, 0, out);
}

static int read_array(cursor *c, mxc__ndarray **out) {
  uint64_t at = c->pos;
  meta m;
  MXC_FORWARD_IF_ERROR(read_meta(c, &m));
  if (m.none) return make_none(out);
  if (m.stype != MXC_STYPE_DEFAULT) return read_sparse(c, at, &m, out);
  return read_dense(c, &m, out);
}

/* ---- the list --------------------------------------------------------- */

static int read_string(cursor *c, char **out) {
  uint64_t at = c->pos, len;
  MXC_FORWARD_IF_ERROR(take_u64(c, &len, "a name's length"));
  if (len > left(c)) {
    return fail(c, at,
                "file is truncated or corrupted: a name of %llu bytes, "
                "%llu bytes are left",
                (unsigned long long)len, (unsigned long long)left(c));
  }
  char *s = mxc__malloc((size_t)len + 1);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "load '%s': out of memory", c->name);
  int rc = take(c, s, len, "a name");
  s[rc == MXC_OK ? len : 0] = '\0';
  if (rc == MXC_OK && memchr(s, '\0', (size_t)len)) {
    rc = fail(c, at + 8, "a name contains a NUL byte");
  }
  if (rc != MXC_OK) {
    mxc__free(s);
    return rc;
  }
  *out = s;
  return MXC_OK;
}

/* Names follow the arrays: a count (0: an unnamed list, or one per array)
 * and the strings. Unnamed arrays get "". */
static int read_names(cursor *c, mxc__ndarray_list *list) {
  uint64_t at = c->pos, count;
  MXC_FORWARD_IF_ERROR(take_u64(c, &count, "the name count"));
  if (count != 0 && count != (uint64_t)list->n) {
    return fail(c, at, "the file has %llu names for %d arrays",
                (unsigned long long)count, list->n);
  }
  for (int i = 0; i < list->n; ++i) {
    if (count) {
      MXC_FORWARD_IF_ERROR(read_string(c, &list->names[i]));
    } else {
      list->names[i] = mxc__strdup("");
      MXC_RETURN_ERROR_IF(!list->names[i], MXC_ERR_OOM,
                          "load '%s': out of memory", c->name);
    }
  }
  return MXC_OK;
}

static int read_header(cursor *c, uint64_t *count) {
  uint64_t magic, reserved;
  if (c->pos == 0) {
    MXC_FORWARD_IF_ERROR(take_u64(c, &magic, "the list magic"));
    if (magic != MXC__MXNET_LIST_MAGIC) {
      return fail(c, 0, "bad magic bytes: not an MXNet NDArray list");
    }
  }
  MXC_FORWARD_IF_ERROR(take_u64(c, &reserved, "the reserved field"));
  uint64_t at = c->pos;
  MXC_FORWARD_IF_ERROR(take_u64(c, count, "the array count"));
  if (*count > left(c) / MIN_ARRAY_BYTES || *count > (uint64_t)INT32_MAX) {
    return fail(c, at,
                "file is truncated or corrupted: %llu arrays cannot fit in "
                "the %llu bytes left",
                (unsigned long long)*count, (unsigned long long)left(c));
  }
  return MXC_OK;
}

static int read_list(cursor *c, mxc__ndarray_list *list) {
  uint64_t count;
  MXC_FORWARD_IF_ERROR(read_header(c, &count));
  size_t slots = count ? (size_t)count : 1;
  list->arrays = mxc__calloc(slots, sizeof *list->arrays);
  list->names = mxc__calloc(slots, sizeof *list->names);
  MXC_RETURN_ERROR_IF(!list->arrays || !list->names, MXC_ERR_OOM,
                      "load '%s': out of memory", c->name);
  for (uint64_t i = 0; i < count; ++i) {
    c->idx = (int)i;
    MXC_FORWARD_IF_ERROR(read_array(c, &list->arrays[i]));
    list->n = (int)i + 1; /* names[i] stays NULL until read_names */
  }
  c->idx = -1;
  MXC_FORWARD_IF_ERROR(read_names(c, list));
  if (left(c) != 0) {
    return fail(c, c->pos, "%llu unexpected bytes after the names",
                (unsigned long long)left(c));
  }
  return MXC_OK;
}

static int load(cursor *c, mxc__ndarray_list **out) {
  mxc__ndarray_list *list = mxc__calloc(1, sizeof *list);
  MXC_RETURN_ERROR_IF(!list, MXC_ERR_OOM, "load '%s': out of memory",
                      c->name);
  int rc = read_list(c, list);
  if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
    return rc;
  }
  *out = list;
  return MXC_OK;
}

int mxc__mxnet_load_mem(const void *buf, size_t n, const char *name,
                        mxc__ndarray_list **out) {
  cursor c = {buf, NULL, name ? name : "(memory)", 0, n, -1};
  MXC_RETURN_ERROR_IF(!buf && n, MXC_ERR_INVALID_ARGUMENT,
                      "load: buffer is NULL but has %zu bytes", n);
  return load(&c, out);
}

int mxc__mxnet_load_file(mxc__file *f, const char *path, uint64_t size,
                         uint64_t consumed, mxc__ndarray_list **out) {
  cursor c = {NULL, f, path, consumed, size, -1};
  return load(&c, out);
}

/* ---- writing ---------------------------------------------------------- */

/* v3 when some array is 0-d (v2 cannot say "scalar": its ndim 0 means no
 * array), else v2, which every MXNet since 0.11 reads. */
static int file_version(mxc__ndarray *const *arrays, int n) {
  for (int i = 0; i < n; ++i) {
    if (arrays[i]->shape.ndim == 0) return 3;
  }
  return 2;
}

int mxc__mxnet_check_save(mxc__ndarray *const *arrays, int n) {
  if (file_version(arrays, n) != 3) return MXC_OK;
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(
        arrays[i]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
        "save: array %d is %s, but another array is 0-d, which MXNet's "
        "format holds only in its v3 layout, and v3 holds only dense arrays",
        i, mxc__stype_name(arrays[i]->stype));
  }
  return MXC_OK;
}

static int put_u32(mxc__file *f, uint32_t v) {
  return mxc__file_write(f, &v, 4);
}
static int put_i32(mxc__file *f, int32_t v) { return mxc__file_write(f, &v, 4); }
static int put_u64(mxc__file *f, uint64_t v) {
  return mxc__file_write(f, &v, 8);
}

/* Empty arrays may have no storage pointer at all. */
static int put_bytes(mxc__file *f, const void *p, size_t n) {
  return n ? mxc__file_write(f, p, n) : MXC_OK;
}

static int put_shape(mxc__file *f, const mxc__shape *s) {
  MXC_FORWARD_IF_ERROR(put_i32(f, s->ndim));
  return put_bytes(f, s->dims, 8u * (size_t)s->ndim);
}

static int put_array_head(mxc__file *f, const mxc__ndarray *a, int version,
                          const mxc__shape *sshape) {
  MXC_FORWARD_IF_ERROR(put_u32(f, version == 3 ? MAGIC_V3 : MAGIC_V2));
  MXC_FORWARD_IF_ERROR(put_i32(f, a->stype));
  if (sshape) MXC_FORWARD_IF_ERROR(put_shape(f, sshape));
  MXC_FORWARD_IF_ERROR(put_shape(f, &a->shape));
  MXC_FORWARD_IF_ERROR(put_i32(f, DEV_CPU));
  MXC_FORWARD_IF_ERROR(put_i32(f, 0)); /* device id */
  return put_i32(f, a->dtype);
}

static int put_dense(mxc__file *f, const mxc__ndarray *a, int version) {
  MXC_FORWARD_IF_ERROR(put_array_head(f, a, version, NULL));
  size_t n = mxc__ndarray_nbytes(a);
  if (n == 0) return put_bytes(f, NULL, 0);
  const void *data;
  void *owned;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_host_bytes(a, &data, &owned));
  int rc = put_bytes(f, data, n);
  mxc__free(owned);
  return rc;
}

/* parts[0] = values, parts[1..] = index arrays: dense copies. */
static int put_sparse_parts(mxc__file *f, const mxc__ndarray *a,
                            mxc__ndarray *const *parts, int nad) {
  MXC_FORWARD_IF_ERROR(put_array_head(f, a, 2, &parts[0]->shape));
  for (int k = 0; k < nad; ++k) {
    MXC_FORWARD_IF_ERROR(put_i32(f, parts[k + 1]->dtype));
    MXC_FORWARD_IF_ERROR(put_shape(f, &parts[k + 1]->shape));
  }
  for (int k = 0; k <= nad; ++k) {
    size_t n = mxc__ndarray_nbytes(parts[k]);
    MXC_FORWARD_IF_ERROR(
        put_bytes(f, n ? mxc__ndarray_ptr(parts[k]) : NULL, n));
  }
  return MXC_OK;
}

static int put_sparse(mxc__file *f, const mxc__ndarray *a) {
  int nad = mxc__sparse_n_aux(a->stype), rc = MXC_OK;
  mxc__ndarray *parts[3] = {NULL, NULL, NULL};
  for (int k = 0; k <= nad && rc == MXC_OK; ++k) {
    rc = mxc__sparse_part_sync(a, k - 1, &parts[k]);
    if (rc == MXC_OK) rc = mxc__ndarray_ensure_alloc(parts[k]);
  }
  if (rc == MXC_OK) rc = put_sparse_parts(f, a, parts, nad);
  for (int k = 0; k < 3; ++k) mxc__ndarray_free(parts[k]);
  return rc;
}

static int put_names(mxc__file *f, const char *const *names, int n) {
  MXC_FORWARD_IF_ERROR(put_u64(f, names ? (uint64_t)n : 0));
  for (int i = 0; names && i < n; ++i) {
    size_t len = strlen(names[i]);
    MXC_FORWARD_IF_ERROR(put_u64(f, len));
    MXC_FORWARD_IF_ERROR(put_bytes(f, names[i], len));
  }
  return MXC_OK;
}

int mxc__mxnet_write(mxc__file *f, mxc__ndarray *const *arrays,
                     const char *const *names, int n) {
  int version = file_version(arrays, n);
  MXC_FORWARD_IF_ERROR(put_u64(f, MXC__MXNET_LIST_MAGIC));
  MXC_FORWARD_IF_ERROR(put_u64(f, 0)); /* reserved */
  MXC_FORWARD_IF_ERROR(put_u64(f, (uint64_t)n));
  for (int i = 0; i < n; ++i) {
    const mxc__ndarray *a = arrays[i];
    MXC_FORWARD_IF_ERROR(a->stype == MXC_STYPE_DEFAULT
                             ? put_dense(f, a, version)
                             : put_sparse(f, a));
  }
  return put_names(f, names, n);
}
