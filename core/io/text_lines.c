#include "core/io/text_lines.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

int mxc__text_lines_open(const char *path, size_t chunk, const char *who,
                         mxc__text_lines *out) {
  if (chunk == 0) chunk = MXC__TEXT_CHUNK_DEFAULT;
  MXC_RETURN_ERROR_IF(chunk > SIZE_MAX / 2, MXC_ERR_INVALID_ARGUMENT,
                      "%s: chunk size %zu is too large", who, chunk);
  mxc__text_lines t;
  memset(&t, 0, sizeof t);
  t.who = who;
  t.cap = chunk;
  t.path = mxc__strdup(path);
  t.buf = mxc__malloc(chunk + 1);
  if (!t.path || !t.buf) {
    mxc__text_lines_close(&t);
    return mxc__error_set(MXC_ERR_OOM, "%s: out of memory opening '%s'", who,
                          path);
  }
  int rc = mxc__file_open_read(path, &t.f);
  if (rc != MXC_OK) {
    mxc__text_lines_close(&t);
    return rc;
  }
  *out = t;
  return MXC_OK;
}

/* Hands out buf[begin, begin + len) as a line and consumes `used` bytes. */
static int emit(mxc__text_lines *t, size_t len, size_t used, char **line,
                size_t *out_len) {
  char *s = t->buf + t->begin;
  s[len] = '\0';
  ++t->line;
  t->begin += used;
  if (len > 0 && s[len - 1] == '\r') s[--len] = '\0';
  MXC_RETURN_ERROR_IF(memchr(s, '\0', len) != NULL, MXC_ERR_IO,
                      "%s: %s:%lld: the line contains a NUL byte (not a text "
                      "file?)",
                      t->who, t->path, (long long)t->line);
  *line = s;
  *out_len = len;
  return MXC_OK;
}

int mxc__text_lines_next(mxc__text_lines *t, char **line, size_t *len,
                         int *have) {
  MXC_RETURN_ERROR_IF(!t->f, MXC_ERR_IO,
                      "%s: '%s' is not open (an earlier reset failed); reset "
                      "again",
                      t->who, t->path);
  size_t scanned = t->begin; /* bytes before this hold no newline */
  for (;;) {
    char *nl = memchr(t->buf + scanned, '\n', t->end - scanned);
    if (nl) {
      size_t n = (size_t)(nl - (t->buf + t->begin));
      MXC_FORWARD_IF_ERROR(emit(t, n, n + 1, line, len));
      *have = 1;
      return MXC_OK;
    }
    if (t->eof) {
      *have = t->begin < t->end;
      if (*have) {
        size_t n = t->end - t->begin;
        MXC_FORWARD_IF_ERROR(emit(t, n, n, line, len));
      }
      return MXC_OK;
    }
    /* No complete line buffered: move the partial one to the front and
     * read more after it. */
    size_t part = t->end - t->begin;
    memmove(t->buf, t->buf + t->begin, part);
    t->begin = 0;
    t->end = part;
    scanned = part;
    MXC_RETURN_ERROR_IF(part == t->cap, MXC_ERR_IO,
                        "%s: %s:%lld: the line is longer than the reader's "
                        "%zu-byte buffer (chunk size)",
                        t->who, t->path, (long long)t->line + 1, t->cap);
    size_t got = 0;
    MXC_FORWARD_IF_ERROR(
        mxc__file_read(t->f, t->buf + part, t->cap - part, &got));
    if (got < t->cap - part) t->eof = 1; /* short reads happen only at EOF */
    t->end += got;
  }
}

int mxc__text_lines_rewind(mxc__text_lines *t) {
  mxc__file_close(t->f);
  t->f = NULL;
  t->begin = t->end = 0;
  t->eof = 0;
  t->line = 0;
  return mxc__file_open_read(t->path, &t->f);
}

void mxc__text_lines_close(mxc__text_lines *t) {
  mxc__file_close(t->f);
  mxc__free(t->buf);
  mxc__free(t->path);
  memset(t, 0, sizeof *t);
}

int mxc__text_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int mxc__text_parse_f32(const char *s, float *out, const char **end) {
  if (*s == '\0' || mxc__text_is_space(*s)) return 0;
  char *e = NULL;
  errno = 0;
  float v = strtof(s, &e);
  if (e == s) return 0;
  /* Overflow gives +-HUGE_VALF with ERANGE; underflow (tiny values rounding
   * to zero or a denormal) is accepted. */
  if (errno == ERANGE && isinf(v)) return 0;
  *out = v;
  *end = e;
  return 1;
}

int mxc__text_bad_line(const mxc__text_lines *t, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mxc__error_set(MXC_ERR_IO, "%s: %s:%lld: %s", t->who, t->path,
                        (long long)t->line, msg);
}
