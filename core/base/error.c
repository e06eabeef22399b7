#include "core/base/error.h"

#include <stdio.h>
#include <string.h>

/* One message buffer per thread: mxc_last_error() hands out a pointer into
 * it, valid until the same thread's next failure. */
static _Thread_local char tls_msg[MXC__ERROR_MAX];
static _Thread_local int tls_code;

int mxc__error_setf(int code, const char *file, int line, const char *fmt,
                    ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tls_msg, sizeof tls_msg, fmt, ap);
  va_end(ap);
#ifdef MXC_DEBUG
  if (n >= 0 && (size_t)n < sizeof tls_msg) {
    snprintf(tls_msg + n, sizeof tls_msg - (size_t)n, " [%s:%d]", file, line);
  }
#else
  (void)n;
  (void)file;
  (void)line;
#endif
  tls_code = code;
  return code;
}

int mxc__error_set_raw(int code, const char *msg) {
  snprintf(tls_msg, sizeof tls_msg, "%s", msg ? msg : "");
  tls_code = code;
  return code;
}

void mxc__error_prefix(const char *prefix) {
  char tmp[MXC__ERROR_MAX];
  size_t plen = strlen(prefix);
  if (plen > MXC__ERROR_MAX - 3) plen = MXC__ERROR_MAX - 3;
  memcpy(tmp, prefix, plen);
  tmp[plen] = ':';
  tmp[plen + 1] = ' ';
  size_t rest = MXC__ERROR_MAX - plen - 3;
  size_t mlen = strnlen(tls_msg, rest);
  memcpy(tmp + plen + 2, tls_msg, mlen);
  tmp[plen + 2 + mlen] = '\0';
  memcpy(tls_msg, tmp, sizeof tls_msg);
}

const char *mxc__error_msg(void) { return tls_msg; }
int mxc__error_code(void) { return tls_code; }

void mxc__error_clear(void) {
  tls_msg[0] = '\0';
  tls_code = MXC_OK;
}
