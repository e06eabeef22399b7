/* Streaming reader of LibSVM-format text files, producing CSR batches.
 *
 * Format, one example per line:
 *     label idx:val idx:val ...        e.g.  "1 3:0.5 10:-2"
 * - label: a number (int or float). With multi_label, a comma-separated
 *   list "l1,l2,..." of zero or more numbers; zero labels is written by
 *   starting the line with a feature (or with nothing but a comment).
 * - idx: decimal digits; 0-based, or 1-based with one_based (idx 0 is then
 *   an error). Indices must strictly increase within a line.
 * - val: a float32 number in C strtof syntax (so "inf", "nan" and hex
 *   floats are accepted too); a value outside the float32 range is an
 *   error, one too small for it rounds to 0 or a denormal.
 * - Tokens are separated by spaces or tabs; "#" starts a comment running
 *   to the end of the line; blank (or comment-only) lines are skipped.
 *   "\r\n" line ends are accepted.
 *
 * Memory is bounded: the file is read in chunks of chunk_bytes (default
 * 1 MiB; a line and its newline must fit in one chunk), plus the file
 * layer's own 64 KiB buffer, and the batch buffers hold one batch, growing
 * only to the largest batch's number of stored entries.
 *
 * Columns: with num_cols > 0 every index must be < num_cols, and a line
 * holding a larger one (in any batch, however late) fails naming the file
 * and line. With num_cols == 0 a batch's num_cols is the largest index + 1
 * seen so far by this reader, over all batches read (resets included), so
 * it never decreases; the first epoch's batches may therefore report fewer
 * columns than later ones.
 *
 * Errors: every malformed line (bad number, missing ':' or value, index
 * out of range, not increasing, too large for int64, missing label, wrong
 * label count, line too long) is MXC_ERR_IO with "libsvm: FILE:LINE: what
 * was wrong" -- IO like every other malformed-file error in core/io, since
 * the caller's arguments were fine and the file's content was not. Bad
 * configurations are MXC_ERR_INVALID_ARGUMENT. After any error in
 * mxc__libsvm_next the reader stops (its position is lost) and every next
 * call fails until mxc__libsvm_reset.
 *
 * Thread-safety: one reader must not be used from two threads at once. */
#ifndef MXC_CORE_IO_LIBSVM_H_
#define MXC_CORE_IO_LIBSVM_H_

#include <stddef.h>
#include <stdint.h>

typedef struct mxc__libsvm_config {
  int64_t batch_size; /* >= 1: rows per batch (the last may be shorter) */
  int64_t num_cols;   /* > 0: the column count; 0: inferred (see above) */
  int one_based;      /* indices in the file start at 1 */
  int multi_label;    /* labels are "l1,l2,..." lists of any length */
  size_t chunk_bytes; /* read buffer size; 0: 1 MiB */
} mxc__libsvm_config;

/* One batch in CSR form. All pointers are owned by the reader and valid
 * until the next call to next, reset or free. */
typedef struct mxc__libsvm_batch {
  int64_t rows;     /* 0 at the end of the epoch */
  int64_t num_cols; /* see "Columns" above */
  int64_t nnz;
  const int64_t *indptr;  /* rows + 1 entries, indptr[0] == 0 */
  const int64_t *indices; /* nnz 0-based column indices */
  const float *values;    /* nnz values */
  /* Labels of row r: labels[label_indptr[r] .. label_indptr[r + 1]);
   * without multi_label exactly one per row (label_indptr[r] == r). */
  const int64_t *label_indptr;
  const float *labels;
  int64_t first_line; /* file line number of the batch's first row */
} mxc__libsvm_batch;

typedef struct mxc__libsvm mxc__libsvm;

/* Opens path (the file must exist). *out is untouched on failure. */
int mxc__libsvm_open(const char *path, const mxc__libsvm_config *cfg,
                     mxc__libsvm **out);

/* Reads the next batch into *out (out->rows == 0 at the end of the epoch).
 * On failure *out is untouched and the reader needs a reset. */
int mxc__libsvm_next(mxc__libsvm *r, mxc__libsvm_batch *out);

/* Starts a new epoch at the first line (clears a previous error). */
int mxc__libsvm_reset(mxc__libsvm *r);

/* Reads only the examples e (0-based, counting the non-blank lines of the
 * file) with e % num_parts == part_index, skipping the others unparsed:
 * round robin, so no pass over the file is needed to know its size (see
 * docs/data.md). Call before the first next or right after a reset (the
 * count restarts here). 1 <= num_parts and 0 <= part_index < num_parts,
 * checked by the caller. A reader starts with the whole file (1, 0). */
void mxc__libsvm_set_parts(mxc__libsvm *r, int64_t num_parts,
                           int64_t part_index);

/* Bytes the reader holds in buffers now (chunk + batch buffers): for
 * checking that memory does not grow with the file. */
size_t mxc__libsvm_buffer_bytes(const mxc__libsvm *r);

/* Accepts NULL. */
void mxc__libsvm_free(mxc__libsvm *r);

#endif /* MXC_CORE_IO_LIBSVM_H_ */
