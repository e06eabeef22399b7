/* Streaming reader of numeric CSV files, producing dense float32 batches.
 *
 * Format: one row per line, fields separated by ',', each field a float32
 * number (C strtof syntax, so "inf", "nan" and hex floats too; outside the
 * float32 range is an error; spaces or tabs around it allowed). No quoting, no
 * empty fields. Blank lines are skipped; "\r\n" line ends are accepted.
 * With header the first line of the file is skipped unread (whatever it
 * holds).
 *
 * Every row must have the same number of fields: num_cols if given, else
 * the count of the first row read. A ragged row, an empty field or a bad
 * number is MXC_ERR_IO "csv: FILE:LINE: what was wrong" (IO like every
 * malformed-file error in core/io); bad configurations are
 * MXC_ERR_INVALID_ARGUMENT.
 *
 * Labels, optional, either
 * - label_col >= 0: that column of each row is its label (one per row) and
 *   the data are the other columns, in order; or
 * - label_path: a second CSV file, read in step with the data file, whose
 *   k-th row (blank lines skipped, first line skipped with label_header)
 *   holds the labels of the data file's k-th row: label_width values per
 *   row, the count of its first row. The files must have the same number
 *   of rows; a difference is an error naming both files.
 *
 * Memory is bounded: each file is read in chunks of chunk_bytes (default
 * 1 MiB; a line and its newline must fit in one) plus the file layer's
 * 64 KiB buffer, and the batch buffers hold one batch.
 *
 * After any error in mxc__csv_next the reader stops and every next call
 * fails until mxc__csv_reset.
 *
 * Thread-safety: one reader must not be used from two threads at once. */
#ifndef MXC_CORE_IO_CSV_H_
#define MXC_CORE_IO_CSV_H_

#include <stddef.h>
#include <stdint.h>

typedef struct mxc__csv_config {
  int64_t batch_size;     /* >= 1: rows per batch (the last may be shorter) */
  int64_t num_cols;       /* fields per line of the data file; 0: inferred */
  int header;             /* skip the data file's first line */
  int64_t label_col;      /* -1: no label column; else its 0-based index */
  const char *label_path; /* NULL or a label CSV (not with label_col >= 0) */
  int label_header;       /* skip the label file's first line */
  size_t chunk_bytes;     /* read buffer size per file; 0: 1 MiB */
} mxc__csv_config;

/* One batch; pointers owned by the reader, valid until the next call to
 * next, reset or free. */
typedef struct mxc__csv_batch {
  int64_t rows;        /* 0 at the end of the epoch */
  int64_t cols;        /* data columns (label column excluded) */
  const float *data;   /* rows x cols, row-major */
  int64_t label_width; /* labels per row: 1 with label_col, 0 without */
  const float *labels; /* rows x label_width, or NULL without labels */
  int64_t first_line;  /* data-file line number of the first row */
} mxc__csv_batch;

typedef struct mxc__csv mxc__csv;

/* Opens the data (and label) file. *out is untouched on failure. */
int mxc__csv_open(const char *path, const mxc__csv_config *cfg,
                  mxc__csv **out);

/* Reads the next batch (out->rows == 0 at the end of the epoch). On
 * failure *out is untouched and the reader needs a reset. */
int mxc__csv_next(mxc__csv *r, mxc__csv_batch *out);

/* Starts a new epoch at the first line (clears a previous error). */
int mxc__csv_reset(mxc__csv *r);

/* Reads only the data rows e (0-based, counting the data file's rows:
 * not its header, not blank lines) with e % num_parts == part_index, and
 * their label rows; the other rows of both files are stepped over
 * unparsed (so a ragged or malformed row of another part is not seen).
 * Round robin, so no pass over the file is needed to know its size, and
 * the label file stays in step with the data file (see docs/data.md).
 * Call before the first next or right after a reset (the count restarts
 * here). 1 <= num_parts and 0 <= part_index < num_parts, checked by the
 * caller. A reader starts with the whole file (1, 0). */
void mxc__csv_set_parts(mxc__csv *r, int64_t num_parts, int64_t part_index);

/* Bytes the reader holds in buffers now (chunks + batch buffers). */
size_t mxc__csv_buffer_bytes(const mxc__csv *r);

/* Accepts NULL. */
void mxc__csv_free(mxc__csv *r);

#endif /* MXC_CORE_IO_CSV_H_ */
