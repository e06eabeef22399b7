/* The library's log: one-line messages to a settable callback (the public
 * mxc_set_log_callback), by default one line on stderr. mxc never prints
 * anything else and never writes to stdout.
 *
 * Thread-safety: mxc__log may be called from any thread, engine workers
 * included. The callback runs while a read lock is held, so that once
 * mxc__log_set returns no call of the previous callback is still running
 * (its user_data may then be freed); in exchange a callback may not call
 * mxc__log_set (the public mxc_set_log_callback) itself: that is refused
 * with MXC_ERR_REENTRANT (it would wait for itself). A message logged from
 * inside the callback (it called an API function that logs) goes to
 * stderr instead of recursing into the callback. */
#ifndef MXC_CORE_BASE_LOG_H_
#define MXC_CORE_BASE_LOG_H_

#include "core/base/error.h"
#include "core/base/callback.h"

/* fn NULL restores the default logger. Fails only from inside the
 * callback (MXC_ERR_REENTRANT). */
int mxc__log_set(mxc_log_fn fn, void *user_data);

/* Formats a message (at most MXC__LOG_MAX - 1 bytes, longer ones are cut)
 * and hands it to the callback with `level` (MXC_LOG_*). Never allocates,
 * never fails. */
#define MXC__LOG_MAX 1024
void mxc__log(int level, const char *fmt, ...) MXC__PRINTF(2, 3);

#endif /* MXC_CORE_BASE_LOG_H_ */
