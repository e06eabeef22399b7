/* LibSVM reader: lines come from the chunked text reader; each non-blank
 * line is parsed straight into the batch's CSR buffers. The contract and
 * format are in libsvm.h. */
#include "core/io/libsvm.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/io/text_lines.h"

struct mxc__libsvm {
  mxc__libsvm_config cfg;
  mxc__text_lines in;
  int failed;      /* an error stopped the reader; only reset clears it */
  int64_t max_col; /* largest 0-based index of any valid line read; -1 */
  /* The batch. indptr/label_indptr hold batch_size + 1 entries; indices
   * and values share ent_cap; rows, nnz and nlab count what is filled. */
  int64_t *indptr, *label_indptr, *indices;
  float *values, *labels;
  size_t ent_cap, lab_cap;
  int64_t rows, nnz, nlab, first_line;
  /* Sharding: example e (0-based over the epoch's non-blank lines) is
   * read when e % num_parts == part_index; e counts all of them. */
  int64_t num_parts, part_index, example;
};

/* Length of the token at p (up to a space or the end), capped for
 * quoting it in messages. */
static int tok_len(const char *p) {
  int n = 0;
  while (p[n] && !mxc__text_is_space(p[n]) && n < 40) ++n;
  return n;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int grow_entries(mxc__libsvm *r) {
  size_t cap = r->ent_cap ? r->ent_cap * 2 : 256;
  MXC_RETURN_ERROR_IF(cap > SIZE_MAX / sizeof(int64_t), MXC_ERR_OOM,
                      "libsvm: out of memory reading '%s'", r->in.path);
  int64_t *ix = mxc__realloc(r->indices, cap * sizeof *ix);
  MXC_RETURN_ERROR_IF(!ix, MXC_ERR_OOM, "libsvm: out of memory reading '%s'",
                      r->in.path);
  r->indices = ix;
  float *v = mxc__realloc(r->values, cap * sizeof *v);
  MXC_RETURN_ERROR_IF(!v, MXC_ERR_OOM, "libsvm: out of memory reading '%s'",
                      r->in.path);
  r->values = v;
  r->ent_cap = cap; /* only once both arrays hold cap entries */
  return MXC_OK;
}

static int push_label(mxc__libsvm *r, float v) {
  if ((size_t)r->nlab == r->lab_cap) {
    size_t cap = r->lab_cap ? r->lab_cap * 2 : 64;
    float *l = cap > SIZE_MAX / sizeof(float)
                   ? NULL
                   : mxc__realloc(r->labels, cap * sizeof *l);
    MXC_RETURN_ERROR_IF(!l, MXC_ERR_OOM, "libsvm: out of memory reading '%s'",
                        r->in.path);
    r->labels = l;
    r->lab_cap = cap;
  }
  r->labels[r->nlab++] = v;
  return MXC_OK;
}

/* Parses the label field at *pp and advances *pp past it. */
static int parse_labels(mxc__libsvm *r, const char **pp) {
  const char *p = *pp;
  if (r->cfg.multi_label) {
    const char *q = p;
    while (*q && !mxc__text_is_space(*q) && *q != ':') ++q;
    if (*q == ':') return MXC_OK; /* starts with a feature: no labels */
  }
  for (;;) {
    float v = 0;
    const char *e = NULL;
    if (!mxc__text_parse_f32(p, &v, &e)) {
      return mxc__text_bad_line(&r->in, "bad label '%.*s' (expected a number%s)", tok_len(p),
                      p, r->cfg.multi_label ? " list l1,l2,..." : "");
    }
    MXC_FORWARD_IF_ERROR(push_label(r, v));
    p = e;
    if (r->cfg.multi_label && *p == ',') {
      ++p;
      continue;
    }
    break;
  }
  if (*p == ':' && !r->cfg.multi_label) {
    return mxc__text_bad_line(&r->in, "missing label: the line starts with the feature "
                       "'%.*s' (expected 'label index:value ...')",
                    tok_len(*pp), *pp);
  }
  if (*p && !mxc__text_is_space(*p)) {
    return mxc__text_bad_line(&r->in, "bad label '%.*s' (expected a number%s)", tok_len(*pp),
                    *pp, r->cfg.multi_label ? " list l1,l2,..." : "");
  }
  *pp = p;
  return MXC_OK;
}

/* Parses one "index:value" token at p into *idx (file numbering), *val;
 * *end is set past it. */
static int parse_feature(const mxc__libsvm *r, const char *p, int64_t *idx,
                         float *val, const char **end) {
  const char *tok = p;
  if (!is_digit(*p)) {
    return mxc__text_bad_line(&r->in, "expected 'index:value', got '%.*s'", tok_len(tok),
                    tok);
  }
  int64_t x = 0;
  for (; is_digit(*p); ++p) {
    int d = *p - '0';
    /* Keep x + 1 representable: the inferred column count is max + 1. */
    if (x > (INT64_MAX - 1 - d) / 10) {
      return mxc__text_bad_line(&r->in, "index in '%.*s' is too large (at most %lld)",
                      tok_len(tok), tok, (long long)(INT64_MAX - 1));
    }
    x = x * 10 + d;
  }
  if (*p != ':') {
    return mxc__text_bad_line(&r->in, "missing ':' in '%.*s' (expected index:value)",
                    tok_len(tok), tok);
  }
  ++p;
  if (!mxc__text_parse_f32(p, val, end) ||
      (**end && !mxc__text_is_space(**end))) {
    return mxc__text_bad_line(&r->in, "bad value in '%.*s' (expected index:number, the "
                       "number within float32 range)",
                    tok_len(tok), tok);
  }
  *idx = x;
  return MXC_OK;
}

/* Parses the features of a line (after its label) into the batch. */
static int parse_features(mxc__libsvm *r, const char *p) {
  const int64_t base = r->cfg.one_based ? 1 : 0;
  int64_t prev = -1; /* previous 0-based index on this line */
  for (;;) {
    while (mxc__text_is_space(*p)) ++p;
    if (!*p) break;
    int64_t fidx = 0;
    float v = 0;
    const char *e = NULL;
    MXC_FORWARD_IF_ERROR(parse_feature(r, p, &fidx, &v, &e));
    if (fidx < base) {
      return mxc__text_bad_line(&r->in, "index 0 in '%.*s', but indices are 1-based",
                      tok_len(p), p);
    }
    int64_t idx = fidx - base;
    if (idx <= prev) {
      return mxc__text_bad_line(&r->in, "index %lld is not greater than the previous index "
                         "%lld (indices must strictly increase within a "
                         "line)",
                      (long long)fidx, (long long)(prev + base));
    }
    if (r->cfg.num_cols > 0 && idx >= r->cfg.num_cols) {
      return mxc__text_bad_line(&r->in, "index %lld is out of range for %lld columns "
                         "(%s indices go up to %lld)",
                      (long long)fidx, (long long)r->cfg.num_cols,
                      base ? "1-based" : "0-based",
                      (long long)(r->cfg.num_cols - 1 + base));
    }
    if ((size_t)r->nnz == r->ent_cap) MXC_FORWARD_IF_ERROR(grow_entries(r));
    r->indices[r->nnz] = idx;
    r->values[r->nnz] = v;
    ++r->nnz;
    prev = idx;
    p = e;
  }
  if (prev > r->max_col) r->max_col = prev;
  return MXC_OK;
}

/* Reads lines until the batch is full or the file ends. */
static int fill(mxc__libsvm *r) {
  r->rows = r->nnz = r->nlab = 0;
  r->first_line = 0;
  while (r->rows < r->cfg.batch_size) {
    char *line = NULL;
    size_t len = 0;
    int have = 0;
    MXC_FORWARD_IF_ERROR(mxc__text_lines_next(&r->in, &line, &len, &have));
    if (!have) break;
    char *hash = memchr(line, '#', len);
    if (hash) *hash = '\0';
    const char *p = line;
    while (mxc__text_is_space(*p)) ++p;
    if (!*p) continue; /* blank or comment-only */
    if (r->example++ % r->num_parts != r->part_index) continue;
    if (r->rows == 0) r->first_line = r->in.line;
    MXC_FORWARD_IF_ERROR(parse_labels(r, &p));
    MXC_FORWARD_IF_ERROR(parse_features(r, p));
    ++r->rows;
    r->indptr[r->rows] = r->nnz;
    r->label_indptr[r->rows] = r->nlab;
  }
  return MXC_OK;
}

int mxc__libsvm_next(mxc__libsvm *r, mxc__libsvm_batch *out) {
  MXC_RETURN_ERROR_IF(!r || !out, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__libsvm_next: reader and out must not be NULL");
  MXC_RETURN_ERROR_IF(r->failed, MXC_ERR_IO,
                      "libsvm: reading '%s' failed earlier; reset the reader "
                      "to read it again",
                      r->in.path);
  int rc = fill(r);
  if (rc != MXC_OK) {
    r->failed = 1;
    return rc;
  }
  out->rows = r->rows;
  out->num_cols = r->cfg.num_cols > 0 ? r->cfg.num_cols : r->max_col + 1;
  out->nnz = r->nnz;
  out->indptr = r->indptr;
  out->indices = r->indices;
  out->values = r->values;
  out->label_indptr = r->label_indptr;
  out->labels = r->labels;
  out->first_line = r->first_line;
  return MXC_OK;
}

int mxc__libsvm_reset(mxc__libsvm *r) {
  MXC_RETURN_ERROR_IF(!r, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__libsvm_reset: reader must not be NULL");
  r->rows = r->nnz = r->nlab = r->example = 0;
  int rc = mxc__text_lines_rewind(&r->in);
  r->failed = rc != MXC_OK;
  return rc;
}

void mxc__libsvm_set_parts(mxc__libsvm *r, int64_t num_parts,
                           int64_t part_index) {
  r->num_parts = num_parts;
  r->part_index = part_index;
  r->example = 0;
}

static int check_config(const char *path, const mxc__libsvm_config *cfg) {
  MXC_RETURN_ERROR_IF(!path || !cfg, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__libsvm_open: path and cfg must not be NULL");
  MXC_RETURN_ERROR_IF(
      cfg->batch_size < 1 ||
          (uint64_t)cfg->batch_size >= SIZE_MAX / sizeof(int64_t),
      MXC_ERR_INVALID_ARGUMENT,
      "mxc__libsvm_open: batch_size is %lld, expected at least 1 (and small "
      "enough to allocate)",
      (long long)cfg->batch_size);
  MXC_RETURN_ERROR_IF(cfg->num_cols < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__libsvm_open: num_cols is %lld, expected > 0 or 0 "
                      "to infer it",
                      (long long)cfg->num_cols);
  return MXC_OK;
}

int mxc__libsvm_open(const char *path, const mxc__libsvm_config *cfg,
                     mxc__libsvm **out) {
  MXC_FORWARD_IF_ERROR(check_config(path, cfg));
  MXC_RETURN_ERROR_IF(!out, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__libsvm_open: out must not be NULL");
  mxc__libsvm *r = mxc__calloc(1, sizeof *r);
  MXC_RETURN_ERROR_IF(!r, MXC_ERR_OOM, "libsvm: out of memory opening '%s'",
                      path);
  r->cfg = *cfg;
  r->max_col = -1;
  r->num_parts = 1;
  size_t n = (size_t)cfg->batch_size + 1;
  r->indptr = mxc__calloc(n, sizeof(int64_t));
  r->label_indptr = mxc__calloc(n, sizeof(int64_t));
  if (!r->indptr || !r->label_indptr) {
    mxc__libsvm_free(r);
    return mxc__error_set(MXC_ERR_OOM, "libsvm: out of memory opening '%s' "
                          "(batch_size %lld)",
                          path, (long long)cfg->batch_size);
  }
  int rc = mxc__text_lines_open(path, cfg->chunk_bytes, "libsvm", &r->in);
  if (rc != MXC_OK) {
    mxc__libsvm_free(r);
    return rc;
  }
  *out = r;
  return MXC_OK;
}

size_t mxc__libsvm_buffer_bytes(const mxc__libsvm *r) {
  if (!r) return 0;
  size_t ptrs = 2 * ((size_t)r->cfg.batch_size + 1) * sizeof(int64_t);
  return sizeof *r + r->in.cap + 1 + ptrs +
         r->ent_cap * (sizeof(int64_t) + sizeof(float)) +
         r->lab_cap * sizeof(float);
}

void mxc__libsvm_free(mxc__libsvm *r) {
  if (!r) return;
  mxc__text_lines_close(&r->in);
  mxc__free(r->indptr);
  mxc__free(r->label_indptr);
  mxc__free(r->indices);
  mxc__free(r->values);
  mxc__free(r->labels);
  mxc__free(r);
}
