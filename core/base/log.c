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

int mxc__log_set(mxc_log_fn fn, void *user_data) {
  MXC_FORWARD_IF_ERROR(mxc__cb_refuse(
      MXC__CB_LOG, NULL, "mxc_set_log_callback",
      "the callback cannot be changed while it runs (the change waits for "
      "running calls to end)"));
  pthread_rwlock_wrlock(&g_lock);
  g_fn = fn;
  g_user = fn ? user_data : NULL;
  pthread_rwlock_unlock(&g_lock);
  return MXC_OK;
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
  if (mxc__cb_inside(MXC__CB_LOG, NULL)) {
    /* Logged by an API call the callback made: taking the read lock again
     * could block behind a waiting writer, and calling the callback again
     * could recurse without end. */
    fprintf(stderr, "[mxc] %s: %s\n", level_name(level), msg);
    return;
  }
  pthread_rwlock_rdlock(&g_lock);
  if (g_fn) {
    mxc__cb_frame f;
    mxc__cb_enter(&f, MXC__CB_LOG, NULL);
    g_fn(level, msg, g_user);
    mxc__cb_leave(&f);
  } else {
    /* One fprintf per line: stdio locks the stream for the call, so lines
     * from different threads do not interleave. */
    fprintf(stderr, "[mxc] %s: %s\n", level_name(level), msg);
  }
  pthread_rwlock_unlock(&g_lock);
}
