/* The log callback (see log.h). */
#include "core/base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* Readers (mxc__log) hold the lock shared while they call the callback;
 * mxc__log_set takes it exclusively. fn == NULL means the default. */
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static mxc_log_fn g_fn;
static void *g_user;

void mxc__log_set(mxc_log_fn fn, void *user_data) {
  pthread_rwlock_wrlock(&g_lock);
  g_fn = fn;
  g_user = fn ? user_data : NULL;
  pthread_rwlock_unlock(&g_lock);
}

static const char *level_name(int level) {
  switch (level) {
    case MXC_LOG_INFO:
      return "INFO";
    case MXC_LOG_WARNING:
      return "WARNING";
    default:
      return "LOG";
  }
}

void mxc__log(int level, const char *fmt, ...) {
  char msg[MXC__LOG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_rwlock_rdlock(&g_lock);
  if (g_fn) {
    g_fn(level, msg, g_user);
  } else {
    /* One fprintf per line: stdio locks the stream for the call, so lines
     * from different threads do not interleave. */
    fprintf(stderr, "[mxc] %s: %s\n", level_name(level), msg);
  }
  pthread_rwlock_unlock(&g_lock);
}
