/* The profiler: argument checks, then core/profiler. */
#include "api_internal.h"
#include "core/profiler/profiler.h"

#define CHECK_NAME(p, fn, what)                                          \
  MXC_RETURN_ERROR_IF((p) == NULL, MXC_ERR_INVALID_ARGUMENT,             \
                      "%s: %s is NULL; expected a NUL-terminated string", \
                      (fn), (what))

int mxc_profiler_set_config(const char *key, const char *value) {
  CHECK_NAME(key, "mxc_profiler_set_config", "key");
  CHECK_NAME(value, "mxc_profiler_set_config", "value");
  return mxc__prof_set_config(key, value);
}

int mxc_profiler_set_state(int state) { return mxc__prof_set_state(state); }

int mxc_profiler_get_state(int *out) {
  API_CHECK_OUT(out, "mxc_profiler_get_state", "out");
  *out = mxc__prof_state();
  return MXC_OK;
}

int mxc_profiler_dump(int finished) { return mxc__prof_dump(finished != 0); }

int mxc_profiler_dumps(char **out) {
  API_CHECK_OUT(out, "mxc_profiler_dumps", "out");
  return mxc__prof_trace(out);
}

int mxc_profiler_stats(int format, int reset, char **out) {
  API_CHECK_OUT(out, "mxc_profiler_stats", "out");
  MXC_RETURN_ERROR_IF(format != MXC_PROFILER_TABLE &&
                          format != MXC_PROFILER_JSON,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_profiler_stats: format is %d; expected "
                      "MXC_PROFILER_TABLE (0) or MXC_PROFILER_JSON (1)",
                      format);
  return mxc__prof_stats(format == MXC_PROFILER_JSON, reset != 0, out);
}

int mxc_profiler_range_begin(const char *name) {
  CHECK_NAME(name, "mxc_profiler_range_begin", "name");
  return mxc__prof_range_begin(name);
}

int mxc_profiler_range_end(void) { return mxc__prof_range_end(); }

int mxc_profiler_mark(const char *name) {
  CHECK_NAME(name, "mxc_profiler_mark", "name");
  mxc__prof_user_mark(name);
  return MXC_OK;
}

int mxc_profiler_counter(const char *name, int64_t value) {
  CHECK_NAME(name, "mxc_profiler_counter", "name");
  mxc__prof_user_counter(name, value);
  return MXC_OK;
}
