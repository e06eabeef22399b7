/* The log callback (core/base/log.c does the work). */
#include "api_internal.h"
#include "core/base/log.h"

int mxc_set_log_callback(mxc_log_fn fn, void *user_data) {
  return mxc__log_set(fn, user_data);
}
