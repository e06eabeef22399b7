/* Line-by-line reading of text files with bounded memory, shared by the
 * LibSVM and CSV readers.
 *
 * The file is read through core/base/file.h (so injected I/O failures reach
 * it) into one buffer of `chunk` bytes that never grows: a line (with its
 * newline) must fit in it, and a longer one is an error naming the file and
 * line. Lines may end with "\n" or "\r\n"; the last line needs no
 * terminator. Each returned line is NUL-terminated in place inside the
 * buffer and valid until the next call.
 *
 * Thread-safety: one reader must not be used from two threads at once. */
#ifndef MXC_CORE_IO_TEXT_LINES_H_
#define MXC_CORE_IO_TEXT_LINES_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/base/file.h"

#define MXC__TEXT_CHUNK_DEFAULT ((size_t)1 << 20)

typedef struct mxc__text_lines {
  const char *who; /* message prefix ("libsvm", "csv"): a string literal */
  char *path;      /* owned copy, for messages */
  mxc__file *f;    /* NULL after a failed rewind */
  char *buf;       /* cap + 1 bytes: room for the NUL ending the last line */
  size_t cap;
  size_t begin, end; /* unread bytes are buf[begin, end) */
  int eof;           /* the file has no bytes beyond buf[end] */
  int64_t line;      /* 1-based number of the line last returned */
} mxc__text_lines;

/* Opens path; chunk == 0 means MXC__TEXT_CHUNK_DEFAULT. *out is untouched
 * on failure (MXC_ERR_IO naming the path, MXC_ERR_OOM). */
int mxc__text_lines_open(const char *path, size_t chunk, const char *who,
                         mxc__text_lines *out);

/* Next line: *have = 1 with *line and *len set, or *have = 0 at end of file.
 * Errors (MXC_ERR_IO): read failure, a line longer than the chunk, a NUL
 * byte inside a line. */
int mxc__text_lines_next(mxc__text_lines *t, char **line, size_t *len,
                         int *have);

/* Starts again at the first line (reopens the file). On failure the reader
 * has no file and next fails until a rewind succeeds. */
int mxc__text_lines_rewind(mxc__text_lines *t);

/* Releases everything; accepts a zeroed struct. */
void mxc__text_lines_close(mxc__text_lines *t);

/* ---- parsing helpers ---- */

/* Space, tab, CR, VT or FF (not newline: lines have none). */
int mxc__text_is_space(char c);

/* Records MXC_ERR_IO "WHO: PATH:LINE: <message>" for the line t returned
 * last (the one format for malformed lines of every text reader) and
 * returns MXC_ERR_IO. */
int mxc__text_bad_line(const mxc__text_lines *t, const char *fmt, ...)
    MXC__PRINTF(2, 3);

/* Parses a float32 at s (no leading space allowed): *end is set past it.
 * Returns 0 when s holds no number or one outside the float32 range. */
int mxc__text_parse_f32(const char *s, float *out, const char **end);

#endif /* MXC_CORE_IO_TEXT_LINES_H_ */
