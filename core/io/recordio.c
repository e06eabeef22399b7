/* RecordIO reader and writer (recordio.h has the format). */
#include "core/io/recordio.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/file.h"

/* One index entry; `order` is its line number, so that among equal keys
 * the later line wins (as a dict built from the file would). */
typedef struct idx_entry {
  int64_t key;
  uint64_t offset;
  int64_t order;
} idx_entry;

struct mxc__recordio {
  mxc__file *f;
  mxc__file *idx_f; /* writers with an index */
  char *path;
  int writing;
  int failed;     /* writers: an earlier write failed; the file is damaged */
  uint64_t pos;   /* next record (read) / end of file (write) */
  uint64_t size;  /* readers: the file's size at open */
  char *rec;      /* the current record */
  size_t rec_len, rec_cap;
  idx_entry *idx; /* file order; `sorted` is the same entries by key */
  idx_entry *sorted;
  int64_t n_idx, cap_idx;
};

static uint32_t get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le64(const unsigned char *p) {
  return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(unsigned char *p, uint64_t v) {
  put_le32(p, (uint32_t)v);
  put_le32(p + 4, (uint32_t)(v >> 32));
}

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* ---- the index ---- */

static int idx_push(mxc__recordio *r, int64_t key, uint64_t offset) {
  if (r->n_idx == r->cap_idx) {
    int64_t cap = r->cap_idx ? 2 * r->cap_idx : 64;
    idx_entry *p = mxc__realloc(r->idx, (size_t)cap * sizeof *p);
    MXC_RETURN_ERROR_IF(!p, MXC_ERR_OOM, "out of memory indexing '%s'",
                        r->path);
    r->idx = p;
    r->cap_idx = cap;
  }
  r->idx[r->n_idx] = (idx_entry){key, offset, r->n_idx};
  r->n_idx++;
  return MXC_OK;
}

/* Parses one line "key<space or tab>offset"; 0 when it is not one. */
static int parse_idx_line(const char *line, int64_t *key, uint64_t *off) {
  char *end;
  if (*line == '\0' || *line == ' ' || *line == '\t') return 0;
  long long k = strtoll(line, &end, 10);
  if (end == line || (*end != '\t' && *end != ' ')) return 0;
  const char *p = end + strspn(end, " \t");
  if (*p < '0' || *p > '9') return 0;
  unsigned long long o = strtoull(p, &end, 10);
  if (*(end + strspn(end, " \t\r")) != '\0') return 0;
  *key = k;
  *off = o;
  return 1;
}

static int check_idx_offset(const mxc__recordio *r, const char *idx_path,
                            int64_t line, uint64_t off) {
  MXC_RETURN_ERROR_IF(off % 4 != 0 || off >= r->size, MXC_ERR_IO,
                      "index '%s' line %" PRId64 ": offset %" PRIu64
                      " is not a record start of '%s' (expected a multiple "
                      "of 4 below its size %" PRIu64 ")",
                      idx_path, line, off, r->path, r->size);
  return MXC_OK;
}

static int parse_idx_text(mxc__recordio *r, const char *idx_path,
                          char *text) {
  int64_t line_no = 0;
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    line_no++;
    if (line[strspn(line, " \t\r")] == '\0') continue; /* blank */
    int64_t key;
    uint64_t off;
    MXC_RETURN_ERROR_IF(!parse_idx_line(line, &key, &off), MXC_ERR_IO,
                        "index '%s' line %" PRId64 ": expected "
                        "\"key<TAB>offset\" with decimal integers",
                        idx_path, line_no);
    MXC_FORWARD_IF_ERROR(check_idx_offset(r, idx_path, line_no, off));
    MXC_FORWARD_IF_ERROR(idx_push(r, key, off));
  }
  return MXC_OK;
}

static int cmp_entry(const void *a, const void *b) {
  const idx_entry *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static int sort_idx(mxc__recordio *r) {
  if (r->n_idx == 0) return MXC_OK;
  r->sorted = mxc__malloc((size_t)r->n_idx * sizeof *r->sorted);
  MXC_RETURN_ERROR_IF(!r->sorted, MXC_ERR_OOM, "out of memory indexing '%s'",
                      r->path);
  memcpy(r->sorted, r->idx, (size_t)r->n_idx * sizeof *r->sorted);
  qsort(r->sorted, (size_t)r->n_idx, sizeof *r->sorted, cmp_entry);
  return MXC_OK;
}

/* Reads a whole text file (its size bounds the allocation); a NUL byte
 * in it is an error, since the parser would stop there silently. */
static int read_text_file(const char *path, char **out) {
  mxc__file *f;
  MXC_FORWARD_IF_ERROR(mxc__file_open_read(path, &f));
  uint64_t n = 0;
  int rc = mxc__file_size(f, &n);
  char *text = rc == MXC_OK && n < SIZE_MAX ? mxc__malloc((size_t)n + 1) : NULL;
  if (rc == MXC_OK && !text) {
    rc = mxc__error_set(MXC_ERR_OOM, "out of memory reading '%s'", path);
  }
  size_t got = 0;
  if (rc == MXC_OK) rc = mxc__file_read(f, text, (size_t)n, &got);
  mxc__file_close(f);
  if (rc != MXC_OK) {
    mxc__free(text);
    return rc;
  }
  text[got] = '\0';
  if (memchr(text, '\0', got)) {
    mxc__free(text);
    return mxc__error_set(MXC_ERR_IO, "'%s' holds a NUL byte: expected text",
                          path);
  }
  *out = text;
  return MXC_OK;
}

static int load_idx(mxc__recordio *r, const char *idx_path) {
  char *text = NULL;
  MXC_FORWARD_IF_ERROR(read_text_file(idx_path, &text));
  int rc = parse_idx_text(r, idx_path, text);
  mxc__free(text);
  MXC_FORWARD_IF_ERROR(rc);
  return sort_idx(r);
}

/* ---- open and close ---- */

static int open_reader(mxc__recordio *r, const char *idx_path) {
  MXC_FORWARD_IF_ERROR(mxc__file_open_read(r->path, &r->f));
  MXC_FORWARD_IF_ERROR(mxc__file_size(r->f, &r->size));
  return idx_path ? load_idx(r, idx_path) : MXC_OK;
}

static int open_writer(mxc__recordio *r, const char *idx_path) {
  MXC_FORWARD_IF_ERROR(mxc__file_open_write(r->path, &r->f));
  return idx_path ? mxc__file_open_write(idx_path, &r->idx_f) : MXC_OK;
}

int mxc__recordio_open(const char *path, const char *idx_path, int writing,
                       mxc__recordio **out) {
  mxc__recordio *r = mxc__calloc(1, sizeof *r);
  char *p = mxc__strdup(path);
  if (!r || !p) {
    mxc__free(r);
    mxc__free(p);
    return mxc__error_set(MXC_ERR_OOM, "out of memory opening '%s'", path);
  }
  r->path = p;
  r->writing = writing;
  int rc = writing ? open_writer(r, idx_path) : open_reader(r, idx_path);
  if (rc != MXC_OK) {
    mxc__recordio_free(r);
    return rc;
  }
  *out = r;
  return MXC_OK;
}

void mxc__recordio_free(mxc__recordio *r) {
  if (!r) return;
  (void)mxc__file_close(r->f);
  (void)mxc__file_close(r->idx_f);
  mxc__free(r->path);
  mxc__free(r->rec);
  mxc__free(r->idx);
  mxc__free(r->sorted);
  mxc__free(r);
}

/* ---- reading ---- */

static int rec_reserve(mxc__recordio *r, size_t need) {
  if (need == 0) need = 1; /* r->rec non-NULL: offsets from it are defined */
  if (need <= r->rec_cap) return MXC_OK;
  size_t cap = r->rec_cap ? r->rec_cap : 256;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
  char *p = mxc__realloc(r->rec, cap);
  MXC_RETURN_ERROR_IF(!p, MXC_ERR_OOM,
                      "out of memory reading a record of %zu bytes from '%s'",
                      need, r->path);
  r->rec = p;
  r->rec_cap = cap;
  return MXC_OK;
}

static int read_exact(mxc__recordio *r, void *buf, size_t n, uint64_t at,
                      const char *what) {
  size_t got;
  MXC_FORWARD_IF_ERROR(mxc__file_read(r->f, buf, n, &got));
  MXC_RETURN_ERROR_IF(got != n, MXC_ERR_IO,
                      "'%s' is truncated: %s at byte %" PRIu64
                      " needs %zu bytes, the file has %zu",
                      r->path, what, at, n, got);
  return MXC_OK;
}

/* Reads and checks one part's header at r->pos. *eof: a clean end of
 * file where a record would start (only allowed for the first part). */
static int read_part_header(mxc__recordio *r, int part, uint32_t *cflag,
                            uint32_t *len, int *eof) {
  unsigned char h[8];
  size_t got;
  MXC_FORWARD_IF_ERROR(mxc__file_read(r->f, h, 1, &got));
  *eof = got == 0 && part == 0;
  if (*eof) return MXC_OK;
  MXC_RETURN_ERROR_IF(got == 0, MXC_ERR_IO,
                      "'%s' is truncated: a record continues past its end at "
                      "byte %" PRIu64, r->path, r->pos);
  MXC_FORWARD_IF_ERROR(read_exact(r, h + 1, 7, r->pos, "a record header"));
  uint32_t magic = get_le32(h), lrec = get_le32(h + 4);
  MXC_RETURN_ERROR_IF(magic != MXC__RECORDIO_MAGIC, MXC_ERR_IO,
                      "'%s': no record at byte %" PRIu64 " (found 0x%08x "
                      "where the magic 0x%08x starts a record)",
                      r->path, r->pos, magic, MXC__RECORDIO_MAGIC);
  *cflag = lrec >> 29;
  *len = lrec & MXC__RECORDIO_MAX_PART;
  return MXC_OK;
}

/* The flags' order: a record is 0, or 1 (2)* 3. */
static int check_part(const mxc__recordio *r, int part, uint32_t cflag,
                      uint32_t len) {
  int ok = part == 0 ? cflag <= 1 : cflag == 2 || cflag == 3;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_IO,
                      "'%s': the record part at byte %" PRIu64 " has "
                      "continuation flag %u; expected %s",
                      r->path, r->pos, cflag,
                      part == 0 ? "0 (whole) or 1 (first part)"
                                : "2 (middle) or 3 (last part)");
  uint64_t end = r->pos + 8 + pad4(len);
  MXC_RETURN_ERROR_IF(end > r->size, MXC_ERR_IO,
                      "'%s' is truncated: the record part at byte %" PRIu64
                      " claims %u bytes but the file ends at byte %" PRIu64,
                      r->path, r->pos, len, r->size);
  return MXC_OK;
}

/* Appends one part's data (and the magic a continued part dropped). */
static int read_part_data(mxc__recordio *r, uint32_t cflag, uint32_t len) {
  size_t keep = cflag == 1 || cflag == 2 ? 4 : 0;
  MXC_FORWARD_IF_ERROR(rec_reserve(r, r->rec_len + len + keep));
  MXC_FORWARD_IF_ERROR(
      read_exact(r, r->rec + r->rec_len, len, r->pos, "a record part"));
  unsigned char pad[4];
  size_t n_pad = pad4(len) - len;
  MXC_FORWARD_IF_ERROR(read_exact(r, pad, n_pad, r->pos, "a record's padding"));
  r->rec_len += len;
  if (keep) put_le32((unsigned char *)r->rec + r->rec_len, MXC__RECORDIO_MAGIC);
  r->rec_len += keep;
  r->pos += 8 + pad4(len);
  return MXC_OK;
}

/* Moves past the part whose header was just read without reading its
 * data. */
static int skip_part(mxc__recordio *r, uint32_t len) {
  r->pos += 8 + pad4(len);
  return mxc__file_seek(r->f, r->pos);
}

/* Walks the parts of the record at r->pos, reading their data into the
 * current record (read != 0) or seeking over it. */
static int walk_record(mxc__recordio *r, int read, int *has) {
  MXC_RETURN_ERROR_IF(r->writing, MXC_ERR_INVALID_ARGUMENT,
                      "'%s' is open for writing, not reading", r->path);
  for (int part = 0;; ++part) {
    uint32_t cflag = 0, len = 0;
    int eof;
    MXC_FORWARD_IF_ERROR(read_part_header(r, part, &cflag, &len, &eof));
    if (eof) {
      *has = 0;
      return MXC_OK;
    }
    MXC_FORWARD_IF_ERROR(check_part(r, part, cflag, len));
    MXC_FORWARD_IF_ERROR(read ? read_part_data(r, cflag, len)
                              : skip_part(r, len));
    if (cflag == 0 || cflag == 3) break;
  }
  *has = 1;
  return MXC_OK;
}

int mxc__recordio_next(mxc__recordio *r, int *has) {
  r->rec_len = 0;
  return walk_record(r, 1, has);
}

int mxc__recordio_skip(mxc__recordio *r, uint64_t *start, int *has) {
  *start = r->pos;
  return walk_record(r, 0, has);
}

int mxc__recordio_seek(mxc__recordio *r, uint64_t pos) {
  MXC_RETURN_ERROR_IF(r->writing, MXC_ERR_INVALID_ARGUMENT,
                      "cannot seek in '%s': it is open for writing", r->path);
  MXC_RETURN_ERROR_IF(pos % 4 != 0 || pos > r->size, MXC_ERR_INVALID_ARGUMENT,
                      "cannot seek to byte %" PRIu64 " of '%s': expected a "
                      "multiple of 4 up to its size %" PRIu64,
                      pos, r->path, r->size);
  MXC_FORWARD_IF_ERROR(mxc__file_seek(r->f, pos));
  r->pos = pos;
  r->rec_len = 0;
  return MXC_OK;
}

static const idx_entry *find_key(const mxc__recordio *r, int64_t key) {
  int64_t lo = 0, hi = r->n_idx; /* the first entry with key > key */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (r->sorted[mid].key <= key) lo = mid + 1; else hi = mid;
  }
  return lo > 0 && r->sorted[lo - 1].key == key ? &r->sorted[lo - 1] : NULL;
}

int mxc__recordio_read_key(mxc__recordio *r, int64_t key) {
  MXC_RETURN_ERROR_IF(r->writing || !r->sorted, MXC_ERR_INVALID_ARGUMENT,
                      "cannot read '%s' by key: %s", r->path,
                      r->writing ? "it is open for writing"
                                 : "it was opened without an index (or an "
                                   "empty one)");
  const idx_entry *e = find_key(r, key);
  MXC_RETURN_ERROR_IF(!e, MXC_ERR_NOT_FOUND,
                      "key %" PRId64 " is not in the index of '%s'", key,
                      r->path);
  MXC_FORWARD_IF_ERROR(mxc__recordio_seek(r, e->offset));
  int has;
  MXC_FORWARD_IF_ERROR(mxc__recordio_next(r, &has));
  MXC_RETURN_ERROR_IF(!has, MXC_ERR_IO,
                      "'%s': the index puts key %" PRId64 " at byte %" PRIu64
                      ", the end of the file", r->path, key, e->offset);
  return MXC_OK;
}

const void *mxc__recordio_data(const mxc__recordio *r, size_t *size) {
  *size = r->rec_len;
  return r->rec;
}

/* ---- writing ---- */

static int write_part(mxc__recordio *r, uint32_t cflag, const void *data,
                      size_t len) {
  unsigned char h[8], pad[4] = {0, 0, 0, 0};
  put_le32(h, MXC__RECORDIO_MAGIC);
  put_le32(h + 4, cflag << 29 | (uint32_t)len);
  MXC_FORWARD_IF_ERROR(mxc__file_write(r->f, h, sizeof h));
  MXC_FORWARD_IF_ERROR(mxc__file_write(r->f, data, len));
  MXC_FORWARD_IF_ERROR(mxc__file_write(r->f, pad, pad4(len) - len));
  r->pos += 8 + pad4(len);
  return MXC_OK;
}

/* Splits data at every aligned magic word (dropped; the reader restores
 * it), so the magic appears in the file only at part starts. */
static int write_parts(mxc__recordio *r, const unsigned char *p, size_t n) {
  size_t from = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    if (get_le32(p + i) != MXC__RECORDIO_MAGIC) continue;
    MXC_FORWARD_IF_ERROR(write_part(r, from == 0 ? 1 : 2, p + from, i - from));
    from = i + 4;
  }
  return write_part(r, from ? 3 : 0, p + from, n - from);
}

static int check_writable(const mxc__recordio *r, size_t size) {
  MXC_RETURN_ERROR_IF(!r->writing, MXC_ERR_INVALID_ARGUMENT,
                      "'%s' is open for reading, not writing", r->path);
  MXC_RETURN_ERROR_IF(r->failed, MXC_ERR_IO,
                      "'%s': an earlier write failed, the file is incomplete",
                      r->path);
  MXC_RETURN_ERROR_IF(size > MXC__RECORDIO_MAX_PART, MXC_ERR_INVALID_ARGUMENT,
                      "a record of %zu bytes for '%s': RecordIO records are "
                      "at most %u bytes", size, r->path, MXC__RECORDIO_MAX_PART);
  return MXC_OK;
}

int mxc__recordio_write(mxc__recordio *r, const void *data, size_t size,
                        uint64_t *offset) {
  MXC_FORWARD_IF_ERROR(check_writable(r, size));
  uint64_t start = r->pos;
  int rc = write_parts(r, size ? data : "", size); /* data may be NULL */
  r->failed = rc != MXC_OK;
  MXC_FORWARD_IF_ERROR(rc);
  if (offset) *offset = start;
  return MXC_OK;
}

int mxc__recordio_write_key(mxc__recordio *r, int64_t key, const void *data,
                            size_t size) {
  MXC_RETURN_ERROR_IF(r->writing && !r->idx_f, MXC_ERR_INVALID_ARGUMENT,
                      "cannot write a key to '%s': it was opened without an "
                      "index path", r->path);
  uint64_t off;
  MXC_FORWARD_IF_ERROR(mxc__recordio_write(r, data, size, &off));
  char line[48];
  int n = snprintf(line, sizeof line, "%" PRId64 "\t%" PRIu64 "\n", key, off);
  int rc = mxc__file_write(r->idx_f, line, (size_t)n);
  if (rc == MXC_OK) rc = idx_push(r, key, off);
  r->failed = rc != MXC_OK;
  return rc;
}

int mxc__recordio_flush(mxc__recordio *r) {
  if (!r->writing) return MXC_OK;
  int rc = mxc__file_flush(r->f);
  if (rc == MXC_OK && r->idx_f) rc = mxc__file_flush(r->idx_f);
  r->failed = r->failed || rc != MXC_OK;
  return rc;
}

int64_t mxc__recordio_num_keys(const mxc__recordio *r) { return r->n_idx; }

int64_t mxc__recordio_key_at(const mxc__recordio *r, int64_t i) {
  return r->idx[i].key;
}

uint64_t mxc__recordio_tell(const mxc__recordio *r) { return r->pos; }

int mxc__recordio_is_writer(const mxc__recordio *r) { return r->writing; }

/* ---- image records ---- */

float mxc__image_header_label(const mxc__image_header *h, uint32_t i) {
  if (h->flag == 0) return h->label;
  uint32_t bits = get_le32((const unsigned char *)h->labels + 4 * (size_t)i);
  float v;
  memcpy(&v, &bits, 4);
  return v;
}

int mxc__image_header_parse(const void *rec, size_t size,
                            mxc__image_header *out) {
  const unsigned char *p = rec;
  MXC_RETURN_ERROR_IF(size < MXC__IMAGE_HEADER_SIZE, MXC_ERR_IO,
                      "an image record of %zu bytes: expected at least the "
                      "%d-byte header", size, MXC__IMAGE_HEADER_SIZE);
  uint32_t flag = get_le32(p), bits = get_le32(p + 4);
  size_t room = (size - MXC__IMAGE_HEADER_SIZE) / 4;
  MXC_RETURN_ERROR_IF(flag > room, MXC_ERR_IO,
                      "an image record of %zu bytes claims %u labels; at "
                      "most %zu fit after the header", size, flag, room);
  memcpy(&out->label, &bits, 4);
  out->flag = flag;
  out->id = get_le64(p + 8);
  out->id2 = get_le64(p + 16);
  out->labels = flag ? p + MXC__IMAGE_HEADER_SIZE : NULL;
  out->payload_offset = MXC__IMAGE_HEADER_SIZE + (size_t)flag * 4;
  return MXC_OK;
}

size_t mxc__image_record_size(int n_labels, size_t payload_size) {
  size_t extra = n_labels == 1 ? 0 : (size_t)n_labels * 4;
  size_t head = MXC__IMAGE_HEADER_SIZE + extra;
  return n_labels < 0 || payload_size > SIZE_MAX - head ? 0
                                                          : head + payload_size;
}

void mxc__image_record_pack(const float *labels, int n_labels, uint64_t id,
                            uint64_t id2, const void *payload,
                            size_t payload_size, void *out) {
  unsigned char *p = out;
  uint32_t flag = n_labels == 1 ? 0 : (uint32_t)n_labels, bits = 0;
  if (n_labels == 1) memcpy(&bits, labels, 4);
  put_le32(p, flag);
  put_le32(p + 4, bits);
  put_le64(p + 8, id);
  put_le64(p + 16, id2);
  p += MXC__IMAGE_HEADER_SIZE;
  for (uint32_t i = 0; i < flag; ++i, p += 4) {
    uint32_t b;
    memcpy(&b, &labels[i], 4);
    put_le32(p, b);
  }
  if (payload_size) memcpy(p, payload, payload_size);
}

void mxc__record_what(char *buf, size_t n, const char *prefix,
                      const char *path, int64_t rec) {
  /* Room for the path: what the prefix, quotes and record number leave. */
  size_t room = n > 64 + strlen(prefix) ? n - 64 - strlen(prefix) : 16;
  size_t len = strlen(path);
  const char *cut = len > room ? "..." : "";
  const char *tail = len > room ? path + (len - room + 3) : path;
  snprintf(buf, n, "%s'%s%s' record %" PRId64, prefix, cut, tail, rec);
}
