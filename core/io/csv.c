/* CSV reader: a data file (and optionally a label file) read line by line
 * through the chunked text reader, each row parsed into a scratch row and
 * copied into the batch. The contract and format are in csv.h. */
#include "core/io/csv.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/io/text_lines.h"

/* One CSV file being read. */
typedef struct csv_src {
  mxc__text_lines in;
  int header;
  int64_t width; /* fields per row; 0 until the first row fixes it */
  float *row;    /* width values of the row just read */
} csv_src;

struct mxc__csv {
  mxc__csv_config cfg;
  csv_src data, label; /* label used only with cfg.label_path */
  int failed;          /* an error stopped the reader; reset clears it */
  int64_t cols;        /* data columns per batch row; 0 until known */
  int64_t label_width;
  float *batch_data, *batch_labels; /* batch_size rows each, once known */
  int64_t rows, first_line;
  /* Sharding: row e (0-based over the epoch's data rows) is read when
   * e % num_parts == part_index; e counts all of them. */
  int64_t num_parts, part_index, example;
};

/* Length of the field at p (up to ',' or the end), capped for messages. */
static int field_len(const char *p) {
  int n = 0;
  while (p[n] && p[n] != ',' && n < 40) ++n;
  return n;
}

static int64_t count_fields(const char *line, size_t len) {
  int64_t n = 1;
  for (size_t i = 0; i < len; ++i) n += line[i] == ',';
  return n;
}

/* Parses exactly s->width fields of line into s->row. */
static int parse_fields(csv_src *s, const char *p) {
  for (int64_t k = 0; k < s->width; ++k) {
    while (mxc__text_is_space(*p)) ++p;
    const char *field = p;
    if (*p == ',' || *p == '\0') {
      return mxc__text_bad_line(&s->in, "field %lld is empty (expected a number)",
                      (long long)k + 1);
    }
    const char *e = NULL;
    int ok = mxc__text_parse_f32(p, &s->row[k], &e);
    if (ok) {
      p = e;
      while (mxc__text_is_space(*p)) ++p;
      ok = *p == (k + 1 < s->width ? ',' : '\0');
    }
    if (!ok) {
      return mxc__text_bad_line(&s->in, "field %lld is '%.*s', expected a number within "
                         "float32 range",
                      (long long)k + 1, field_len(field), field);
    }
    ++p; /* past the ',' (or the final NUL: the loop ends then) */
  }
  return MXC_OK;
}

/* The next line of s holding a row (not the header, not blank): *have =
 * 0 at end of file. */
static int next_line(csv_src *s, char **line, size_t *len, int *have) {
  for (;;) {
    MXC_FORWARD_IF_ERROR(mxc__text_lines_next(&s->in, line, len, have));
    if (!*have) return MXC_OK;
    if (s->header && s->in.line == 1) continue;
    const char *p = *line;
    while (mxc__text_is_space(*p)) ++p;
    if (*p) return MXC_OK; /* else a blank line */
  }
}

/* Parses a row's line into s->row. The first row fixes the width unless
 * it was given. */
static int parse_row(csv_src *s, const char *line, size_t len) {
  int64_t n = count_fields(line, len);
  if (s->width == 0) {
    MXC_RETURN_ERROR_IF((uint64_t)n > SIZE_MAX / sizeof(float), MXC_ERR_OOM,
                        "csv: out of memory reading '%s'", s->in.path);
    s->row = mxc__malloc((size_t)n * sizeof(float));
    MXC_RETURN_ERROR_IF(!s->row, MXC_ERR_OOM,
                        "csv: out of memory reading '%s'", s->in.path);
    s->width = n;
  } else if (n != s->width) {
    return mxc__text_bad_line(&s->in,
                              "the row has %lld fields, expected %lld like "
                              "every row of the file (ragged rows are not "
                              "allowed)",
                              (long long)n, (long long)s->width);
  }
  return parse_fields(s, line);
}

/* Reads the next row of s into s->row: *have = 0 at end of file. */
static int next_row(csv_src *s, int *have) {
  char *line = NULL;
  size_t len = 0;
  MXC_FORWARD_IF_ERROR(next_line(s, &line, &len, have));
  return *have ? parse_row(s, line, len) : MXC_OK;
}

/* Allocates batch_size rows of width floats into *out (once). */
static int batch_buffer(const mxc__csv *r, const csv_src *s, int64_t width,
                        float **out) {
  if (*out) return MXC_OK;
  uint64_t bs = (uint64_t)r->cfg.batch_size;
  MXC_RETURN_ERROR_IF(bs > SIZE_MAX / sizeof(float) / (uint64_t)width,
                      MXC_ERR_OOM,
                      "csv: a batch of %lld x %lld floats for '%s' is too "
                      "large",
                      (long long)bs, (long long)width, s->in.path);
  *out = mxc__malloc((size_t)bs * (size_t)width * sizeof(float));
  MXC_RETURN_ERROR_IF(!*out, MXC_ERR_OOM,
                      "csv: out of memory for a batch of %lld x %lld floats "
                      "('%s')",
                      (long long)bs, (long long)width, s->in.path);
  return MXC_OK;
}

/* Copies the data row just read into batch row r->rows. */
static int take_data_row(mxc__csv *r) {
  csv_src *s = &r->data;
  const int64_t lc = r->cfg.label_col;
  if (r->cols == 0) {
    if (lc >= s->width) {
      return mxc__text_bad_line(&s->in, "label_col %lld is out of range for rows of %lld "
                         "fields",
                      (long long)lc, (long long)s->width);
    }
    if (lc >= 0 && s->width == 1) {
      return mxc__text_bad_line(&s->in, "the only field is the label column: no data "
                         "columns left");
    }
    r->cols = s->width - (lc >= 0);
    if (lc >= 0) r->label_width = 1;
  }
  MXC_FORWARD_IF_ERROR(batch_buffer(r, s, r->cols, &r->batch_data));
  if (lc >= 0) {
    MXC_FORWARD_IF_ERROR(batch_buffer(r, s, 1, &r->batch_labels));
  }
  float *dst = r->batch_data + r->rows * r->cols;
  if (lc < 0) {
    memcpy(dst, s->row, (size_t)r->cols * sizeof(float));
    return MXC_OK;
  }
  memcpy(dst, s->row, (size_t)lc * sizeof(float));
  memcpy(dst + lc, s->row + lc + 1,
         (size_t)(s->width - lc - 1) * sizeof(float));
  r->batch_labels[r->rows] = s->row[lc];
  return MXC_OK;
}

/* No label row for the data row just read. */
static int labels_short(const mxc__csv *r) {
  return mxc__error_set(MXC_ERR_IO,
                        "csv: '%s' has fewer rows than '%s': no labels for "
                        "the row at %s:%lld",
                        r->label.in.path, r->data.in.path, r->data.in.path,
                        (long long)r->data.in.line);
}

/* Reads the label-file row for the data row just read. */
static int take_label_row(mxc__csv *r) {
  int have = 0;
  MXC_FORWARD_IF_ERROR(next_row(&r->label, &have));
  if (!have) return labels_short(r);
  r->label_width = r->label.width;
  MXC_FORWARD_IF_ERROR(
      batch_buffer(r, &r->label, r->label_width, &r->batch_labels));
  memcpy(r->batch_labels + r->rows * r->label_width, r->label.row,
         (size_t)r->label_width * sizeof(float));
  return MXC_OK;
}

/* Steps over the label-file row of a data row of another part, unparsed
 * like that row. */
static int skip_label_row(mxc__csv *r) {
  char *line = NULL;
  size_t len = 0;
  int have = 0;
  MXC_FORWARD_IF_ERROR(next_line(&r->label, &line, &len, &have));
  return have ? MXC_OK : labels_short(r);
}

/* Reads the next data row of this part into r->data.row (*have = 0 at
 * the end of the file), stepping over the other parts' rows (and their
 * label rows) without parsing them. */
static int next_own_row(mxc__csv *r, int *have) {
  for (;;) {
    char *line = NULL;
    size_t len = 0;
    MXC_FORWARD_IF_ERROR(next_line(&r->data, &line, &len, have));
    if (!*have) return MXC_OK;
    if (r->example++ % r->num_parts == r->part_index) {
      return parse_row(&r->data, line, len);
    }
    if (r->cfg.label_path) MXC_FORWARD_IF_ERROR(skip_label_row(r));
  }
}

/* At the end of the data file the label file must be at its end too. */
static int check_label_end(mxc__csv *r) {
  int have = 0;
  MXC_FORWARD_IF_ERROR(next_row(&r->label, &have));
  MXC_RETURN_ERROR_IF(have, MXC_ERR_IO,
                      "csv: '%s' has more rows than '%s': %s:%lld has no data "
                      "row",
                      r->label.in.path, r->data.in.path, r->label.in.path,
                      (long long)r->label.in.line);
  return MXC_OK;
}

static int fill(mxc__csv *r) {
  r->rows = 0;
  r->first_line = 0;
  while (r->rows < r->cfg.batch_size) {
    int have = 0;
    MXC_FORWARD_IF_ERROR(next_own_row(r, &have));
    if (!have) {
      if (r->cfg.label_path) MXC_FORWARD_IF_ERROR(check_label_end(r));
      break;
    }
    if (r->rows == 0) r->first_line = r->data.in.line;
    MXC_FORWARD_IF_ERROR(take_data_row(r));
    if (r->cfg.label_path) MXC_FORWARD_IF_ERROR(take_label_row(r));
    ++r->rows;
  }
  return MXC_OK;
}

int mxc__csv_next(mxc__csv *r, mxc__csv_batch *out) {
  MXC_RETURN_ERROR_IF(!r || !out, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_next: reader and out must not be NULL");
  MXC_RETURN_ERROR_IF(r->failed, MXC_ERR_IO,
                      "csv: reading '%s' failed earlier; reset the reader to "
                      "read it again",
                      r->data.in.path);
  int rc = fill(r);
  if (rc != MXC_OK) {
    r->failed = 1;
    return rc;
  }
  out->rows = r->rows;
  out->cols = r->cols;
  out->data = r->batch_data;
  out->label_width = r->label_width;
  out->labels = r->label_width ? r->batch_labels : NULL;
  out->first_line = r->first_line;
  return MXC_OK;
}

int mxc__csv_reset(mxc__csv *r) {
  MXC_RETURN_ERROR_IF(!r, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_reset: reader must not be NULL");
  r->rows = r->example = 0;
  int rc = mxc__text_lines_rewind(&r->data.in);
  if (rc == MXC_OK && r->cfg.label_path) {
    rc = mxc__text_lines_rewind(&r->label.in);
  }
  r->failed = rc != MXC_OK;
  return rc;
}

void mxc__csv_set_parts(mxc__csv *r, int64_t num_parts, int64_t part_index) {
  r->num_parts = num_parts;
  r->part_index = part_index;
  r->example = 0;
}

static int check_config(const char *path, const mxc__csv_config *cfg) {
  MXC_RETURN_ERROR_IF(!path || !cfg, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: path and cfg must not be NULL");
  MXC_RETURN_ERROR_IF(cfg->batch_size < 1, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: batch_size is %lld, expected at least 1",
                      (long long)cfg->batch_size);
  MXC_RETURN_ERROR_IF(cfg->num_cols < 0, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: num_cols is %lld, expected > 0 or 0 to "
                      "infer it",
                      (long long)cfg->num_cols);
  MXC_RETURN_ERROR_IF(
      cfg->label_col < -1 ||
          (cfg->num_cols > 0 && cfg->label_col >= cfg->num_cols),
      MXC_ERR_INVALID_ARGUMENT,
      "mxc__csv_open: label_col is %lld, expected -1 (none) or a column "
      "index below num_cols (%lld)",
      (long long)cfg->label_col, (long long)cfg->num_cols);
  MXC_RETURN_ERROR_IF(cfg->label_col == 0 && cfg->num_cols == 1,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: num_cols 1 with a label column leaves "
                      "no data columns");
  MXC_RETURN_ERROR_IF(cfg->label_col >= 0 && cfg->label_path,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: give either label_col or label_path, "
                      "not both");
  return MXC_OK;
}

int mxc__csv_open(const char *path, const mxc__csv_config *cfg,
                  mxc__csv **out) {
  MXC_FORWARD_IF_ERROR(check_config(path, cfg));
  MXC_RETURN_ERROR_IF(!out, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__csv_open: out must not be NULL");
  mxc__csv *r = mxc__calloc(1, sizeof *r);
  MXC_RETURN_ERROR_IF(!r, MXC_ERR_OOM, "csv: out of memory opening '%s'",
                      path);
  r->cfg = *cfg;
  r->num_parts = 1;
  r->data.header = cfg->header;
  r->data.width = cfg->num_cols;
  r->label.header = cfg->label_header;
  int rc = mxc__text_lines_open(path, cfg->chunk_bytes, "csv", &r->data.in);
  if (rc == MXC_OK && cfg->num_cols > 0) {
    r->data.row = mxc__malloc((size_t)cfg->num_cols * sizeof(float));
    if (!r->data.row) {
      rc = mxc__error_set(MXC_ERR_OOM, "csv: out of memory opening '%s'",
                          path);
    }
  }
  if (rc == MXC_OK && cfg->label_path) {
    rc = mxc__text_lines_open(cfg->label_path, cfg->chunk_bytes, "csv",
                              &r->label.in);
  }
  if (rc != MXC_OK) {
    mxc__csv_free(r);
    return rc;
  }
  r->cfg.label_path = NULL; /* the caller's string need not outlive open */
  if (cfg->label_path) r->cfg.label_path = r->label.in.path;
  *out = r;
  return MXC_OK;
}

size_t mxc__csv_buffer_bytes(const mxc__csv *r) {
  if (!r) return 0;
  size_t n = sizeof *r + r->data.in.cap + 1 + r->label.in.cap +
             (r->label.in.cap ? 1 : 0);
  n += (size_t)(r->data.width + r->label.width) * sizeof(float);
  size_t bs = (size_t)r->cfg.batch_size;
  if (r->batch_data) n += bs * (size_t)r->cols * sizeof(float);
  if (r->batch_labels) n += bs * (size_t)r->label_width * sizeof(float);
  return n;
}

void mxc__csv_free(mxc__csv *r) {
  if (!r) return;
  mxc__text_lines_close(&r->data.in);
  mxc__text_lines_close(&r->label.in);
  mxc__free(r->data.row);
  mxc__free(r->label.row);
  mxc__free(r->batch_data);
  mxc__free(r->batch_labels);
  mxc__free(r);
}
