/* A growable string for writers (JSON, DOT). Allocation failures are
 * sticky: appends after one do nothing, and mxc__sbuf_finish reports
 * MXC_ERR_OOM, so writers need not check every append. */
#ifndef MXC_CORE_BASE_STRBUF_H_
#define MXC_CORE_BASE_STRBUF_H_

#include <stddef.h>

#include "core/base/error.h"

typedef struct mxc__sbuf {
  char *p;
  size_t len, cap;
  int oom;
} mxc__sbuf;

/* An empty buffer (no allocation until the first append). */
void mxc__sbuf_init(mxc__sbuf *b);
void mxc__sbuf_add(mxc__sbuf *b, const char *s);
void mxc__sbuf_addn(mxc__sbuf *b, const char *s, size_t n);
void mxc__sbuf_printf(mxc__sbuf *b, const char *fmt, ...) MXC__PRINTF(2, 3);
/* On success *out = the NUL-terminated text (mxc__free it); on failure
 * MXC_ERR_OOM naming `what`. The buffer is empty afterwards either way. */
int mxc__sbuf_finish(mxc__sbuf *b, const char *what, char **out);
void mxc__sbuf_free(mxc__sbuf *b);

#endif /* MXC_CORE_BASE_STRBUF_H_ */
