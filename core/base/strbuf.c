#include "core/base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"

void mxc__sbuf_init(mxc__sbuf *b) { memset(b, 0, sizeof *b); }

/* Room for n more bytes plus the terminating NUL. */
static int reserve(mxc__sbuf *b, size_t n) {
  if (b->oom) return 0;
  if (b->len + n + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1) cap *= 2;
  char *p = mxc__realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void mxc__sbuf_addn(mxc__sbuf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void mxc__sbuf_add(mxc__sbuf *b, const char *s) {
  mxc__sbuf_addn(b, s, strlen(s));
}

void mxc__sbuf_printf(mxc__sbuf *b, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    mxc__sbuf_addn(b, small, (size_t)n);
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

int mxc__sbuf_finish(mxc__sbuf *b, const char *what, char **out) {
  /* An empty text still needs its NUL. */
  if (reserve(b, 0)) b->p[b->len] = '\0';
  if (b->oom) {
    mxc__sbuf_free(b);
    return mxc__error_set(MXC_ERR_OOM, "%s: out of memory", what);
  }
  *out = b->p;
  mxc__sbuf_init(b);
  return MXC_OK;
}

void mxc__sbuf_free(mxc__sbuf *b) {
  mxc__free(b->p);
  mxc__sbuf_init(b);
}
