/* IDX reader. The whole (compressed or plain) file is read through the
 * core/base/file.h layer, so injected I/O failures reach it; gzip is
 * inflated from memory with zlib, whose allocations go through mxc__malloc
 * so allocation fault injection and leak counting cover them too. */
#include "core/io/idx.h"

#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/file.h"
#include "core/base/shape.h"

/* Deflate cannot expand data by more than about 1032:1, so a gzip file of
 * N bytes cannot hold more than this many bytes per compressed byte. A
 * header claiming more is corrupt, and is refused before allocating. */
#define MAX_DEFLATE_RATIO 1032u

typedef struct src {
  const char *path;
  const unsigned char *raw; /* the file's bytes */
  size_t raw_n;
  size_t pos; /* plain files: next byte to read */
  int gz;
  int ended; /* gzip: the stream's end (and trailer) was reached */
  z_stream z;
} src;

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  if (size && items > SIZE_MAX / size) return Z_NULL;
  return mxc__malloc((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p) {
  (void)opaque;
  mxc__free(p);
}

/* Reads the whole file into a new buffer *out of *out_n bytes. */
static int read_file(const char *path, unsigned char **out, size_t *out_n) {
  mxc__file *f = NULL;
  MXC_FORWARD_IF_ERROR(mxc__file_open_read(path, &f));
  uint64_t size = 0;
  int rc = mxc__file_size(f, &size);
  if (rc == MXC_OK && size > (uint64_t)(SIZE_MAX / 2)) {
    rc = mxc__error_set(MXC_ERR_IO, "idx: '%s' is too large", path);
  }
  unsigned char *buf = NULL;
  if (rc == MXC_OK) {
    buf = mxc__malloc(size ? (size_t)size : 1);
    if (!buf) rc = mxc__error_set(MXC_ERR_OOM, "idx: out of memory");
  }
  size_t got = 0;
  if (rc == MXC_OK) rc = mxc__file_read(f, buf, (size_t)size, &got);
  if (rc == MXC_OK && got != size) {
    rc = mxc__error_set(MXC_ERR_IO, "idx: '%s' shrank while being read",
                        path);
  }
  mxc__file_close(f);
  if (rc != MXC_OK) {
    mxc__free(buf);
    return rc;
  }
  *out = buf;
  *out_n = (size_t)size;
  return MXC_OK;
}

static int truncated(const src *s, const char *what) {
  return mxc__error_set(MXC_ERR_IO, "idx: '%s' is truncated (in the %s)",
                        s->path, what);
}

/* One inflate step; maps zlib's failures to mxc errors. */
static int gz_step(src *s, const char *what) {
  if (s->z.avail_in == 0) {
    size_t left = s->raw_n - (size_t)(s->z.next_in - s->raw);
    s->z.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
  }
  uInt in_before = s->z.avail_in, out_before = s->z.avail_out;
  int zr = inflate(&s->z, Z_NO_FLUSH);
  if (zr == Z_STREAM_END) {
    s->ended = 1;
    return MXC_OK;
  }
  if (zr == Z_MEM_ERROR) return mxc__error_set(MXC_ERR_OOM, "idx: out of memory");
  if (zr == Z_OK && (s->z.avail_in != in_before ||
                     s->z.avail_out != out_before)) {
    return MXC_OK;
  }
  if (zr == Z_OK || zr == Z_BUF_ERROR) return truncated(s, what);
  return mxc__error_set(MXC_ERR_IO, "idx: '%s': corrupt gzip data (%s)",
                        s->path, s->z.msg ? s->z.msg : "unknown error");
}

/* Fills dst with up to n decompressed bytes; *got < n only at the end of
 * the gzip stream. */
static int gz_fill(src *s, unsigned char *dst, size_t n, size_t *got,
                   const char *what) {
  size_t done = 0;
  while (done < n && !s->ended) {
    size_t want = n - done;
    s->z.next_out = dst + done;
    s->z.avail_out = want > UINT_MAX ? UINT_MAX : (uInt)want;
    uInt before = s->z.avail_out;
    int rc = gz_step(s, what);
    done += before - s->z.avail_out;
    MXC_FORWARD_IF_ERROR(rc);
  }
  *got = done;
  return MXC_OK;
}

/* Reads exactly n bytes, or fails with "truncated". */
static int src_read(src *s, void *dst, size_t n, const char *what) {
  if (!s->gz) {
    if (s->raw_n - s->pos < n) return truncated(s, what);
    memcpy(dst, s->raw + s->pos, n);
    s->pos += n;
    return MXC_OK;
  }
  size_t got = 0;
  MXC_FORWARD_IF_ERROR(gz_fill(s, dst, n, &got, what));
  if (got < n) return truncated(s, what);
  return MXC_OK;
}

static int elem_size_of(int type) {
  switch (type) {
    case 0x08: case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

/* Reads and checks magic, type and extents into *h (count included). */
static int read_header(src *s, mxc__idx *h) {
  unsigned char m[4] = {0};
  MXC_FORWARD_IF_ERROR(src_read(s, m, 4, "magic number"));
  MXC_RETURN_ERROR_IF(m[0] != 0 || m[1] != 0, MXC_ERR_IO,
                      "idx: '%s' is not an IDX file (bad magic number)",
                      s->path);
  h->type = m[2];
  h->elem_size = elem_size_of(m[2]);
  MXC_RETURN_ERROR_IF(h->elem_size == 0, MXC_ERR_IO,
                      "idx: '%s': unknown element type 0x%02x", s->path, m[2]);
  MXC_RETURN_ERROR_IF(m[3] < 1 || m[3] > MXC_MAX_NDIM, MXC_ERR_IO,
                      "idx: '%s': %d dimensions; expected 1..%d", s->path,
                      m[3], MXC_MAX_NDIM);
  h->ndim = m[3];
  h->count = 1;
  for (int i = 0; i < h->ndim; ++i) {
    unsigned char d[4] = {0};
    MXC_FORWARD_IF_ERROR(src_read(s, d, 4, "dimensions"));
    h->dims[i] = be32(d);
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(h->count, h->dims[i], &h->count),
                        MXC_ERR_IO, "idx: '%s': dimensions overflow",
                        s->path);
  }
  int64_t bytes = 0;
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(h->count, h->elem_size, &bytes),
                      MXC_ERR_IO, "idx: '%s': dimensions overflow", s->path);
  return MXC_OK;
}

/* Plain files: the data must be exactly the rest of the file; it stays in
 * the file buffer, which becomes the idx's block. */
static int check_plain_size(const src *s, const mxc__idx *h) {
  uint64_t bytes = (uint64_t)h->count * (uint64_t)h->elem_size;
  uint64_t left = s->raw_n - s->pos;
  MXC_RETURN_ERROR_IF(bytes > left, MXC_ERR_IO,
                      "idx: '%s' is truncated: the header implies %llu data "
                      "bytes, the file has %llu",
                      s->path, (unsigned long long)bytes,
                      (unsigned long long)left);
  MXC_RETURN_ERROR_IF(bytes < left, MXC_ERR_IO,
                      "idx: '%s': %llu bytes of trailing garbage", s->path,
                      (unsigned long long)(left - bytes));
  return MXC_OK;
}

/* Gzip: refuse sizes the compressed file cannot hold, then inflate the
 * data into a new block and require the stream to end right after it. */
static int inflate_data(src *s, mxc__idx *h, unsigned char **out_block) {
  uint64_t bytes = (uint64_t)h->count * (uint64_t)h->elem_size;
  MXC_RETURN_ERROR_IF(bytes / MAX_DEFLATE_RATIO > s->raw_n, MXC_ERR_IO,
                      "idx: '%s': the header implies %llu data bytes, more "
                      "than %zu compressed bytes can hold (corrupt header)",
                      s->path, (unsigned long long)bytes, s->raw_n);
  unsigned char *block = mxc__malloc(bytes ? (size_t)bytes : 1);
  MXC_RETURN_ERROR_IF(!block, MXC_ERR_OOM, "idx: out of memory");
  int rc = src_read(s, block, (size_t)bytes, "data");
  unsigned char extra = 0;
  size_t got = 0;
  if (rc == MXC_OK) rc = gz_fill(s, &extra, 1, &got, "gzip trailer");
  if (rc == MXC_OK && got) {
    rc = mxc__error_set(MXC_ERR_IO, "idx: '%s': data continues past the "
                        "size the header implies", s->path);
  }
  if (rc != MXC_OK) {
    mxc__free(block);
    return rc;
  }
  *out_block = block;
  return MXC_OK;
}

/* IDX is big-endian; convert each element to host order in place. */
static void to_host_order(unsigned char *p, int64_t count, int elem_size) {
  for (int64_t i = 0; i < count; ++i, p += elem_size) {
    for (int a = 0, b = elem_size - 1; a < b; ++a, --b) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
  }
}

/* Parses the file bytes in s; on success *h owns its block (which may be
 * s->raw itself for plain files). */
static int parse(src *s, mxc__idx *h) {
  MXC_FORWARD_IF_ERROR(read_header(s, h));
  unsigned char *data = NULL;
  if (s->gz) {
    MXC_FORWARD_IF_ERROR(inflate_data(s, h, &data));
    h->block = data;
  } else {
    MXC_FORWARD_IF_ERROR(check_plain_size(s, h));
    data = (unsigned char *)s->raw + s->pos;
    h->block = (void *)s->raw;
  }
  to_host_order(data, h->count, h->elem_size);
  h->data = data;
  return MXC_OK;
}

static int parse_gz(src *s, mxc__idx *h) {
  s->z.zalloc = z_alloc;
  s->z.zfree = z_free;
  s->z.next_in = (Bytef *)s->raw;
  s->z.avail_in = 0; /* gz_step feeds the input */
  int zr = inflateInit2(&s->z, 16 + MAX_WBITS); /* 16: gzip wrapper */
  MXC_RETURN_ERROR_IF(zr == Z_MEM_ERROR, MXC_ERR_OOM, "idx: out of memory");
  MXC_RETURN_ERROR_IF(zr != Z_OK, MXC_ERR_INTERNAL,
                      "idx: inflateInit2 failed (%d)", zr);
  int rc = parse(s, h);
  inflateEnd(&s->z);
  return rc;
}

int mxc__idx_read(const char *path, mxc__idx *out) {
  MXC_RETURN_ERROR_IF(!path || !*path, MXC_ERR_INVALID_ARGUMENT,
                      "idx: path is NULL or empty");
  unsigned char *raw = NULL;
  size_t raw_n = 0;
  MXC_FORWARD_IF_ERROR(read_file(path, &raw, &raw_n));
  src s;
  memset(&s, 0, sizeof s);
  s.path = path;
  s.raw = raw;
  s.raw_n = raw_n;
  s.gz = raw_n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
  mxc__idx h;
  memset(&h, 0, sizeof h);
  int rc = s.gz ? parse_gz(&s, &h) : parse(&s, &h);
  /* The file buffer is kept only when it became the idx's block. */
  if (rc != MXC_OK || h.block != raw) mxc__free(raw);
  if (rc != MXC_OK) return rc;
  *out = h;
  return MXC_OK;
}

void mxc__idx_free(mxc__idx *idx) {
  if (!idx) return;
  mxc__free(idx->block);
  memset(idx, 0, sizeof *idx);
}

/* Reads element i of a given C type (host order, possibly unaligned). */
#define IDX_CONVERT(T)                                       \
  for (int64_t i = 0; i < n; ++i) {                          \
    T v;                                                     \
    memcpy(&v, idx->data + (size_t)(begin + i) * sizeof v, sizeof v); \
    out[i] = (float)v * scale;                               \
  }

void mxc__idx_to_f32(const mxc__idx *idx, int64_t begin, int64_t n,
                     float scale, float *out) {
  switch (idx->type) {
    case 0x08: IDX_CONVERT(uint8_t); break;
    case 0x09: IDX_CONVERT(int8_t); break;
    case 0x0B: IDX_CONVERT(int16_t); break;
    case 0x0C: IDX_CONVERT(int32_t); break;
    case 0x0D: IDX_CONVERT(float); break;
    case 0x0E: IDX_CONVERT(double); break;
    default: break;
  }
}
