/* Memory scopes and handle introspection (core/base/scope.h): argument
 * checks and forwarding. */
#include "api_internal.h"
#include "core/base/scope.h"

int mxc_scope_begin(mxc_scope *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_scope_begin", "out");
  uintptr_t h;
  MXC_FORWARD_IF_ERROR(mxc__scope_begin(&h));
  *out = (mxc_scope)h;
  return MXC_OK;
}

int mxc_scope_end(mxc_scope scope) {
  API_GUARD();
  return mxc__scope_end((uintptr_t)scope, "mxc_scope_end: scope");
}

int mxc_scope_keep(const void *handle) {
  API_GUARD();
  return mxc__scope_keep((uintptr_t)handle, 0, "mxc_scope_keep: handle");
}

int mxc_scope_detach(const void *handle) {
  API_GUARD();
  return mxc__scope_keep((uintptr_t)handle, 1, "mxc_scope_detach: handle");
}

int mxc_handle_scope(const void *handle, mxc_scope *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_handle_scope", "out");
  uintptr_t s;
  MXC_FORWARD_IF_ERROR(
      mxc__scope_of((uintptr_t)handle, "mxc_handle_scope: handle", &s));
  *out = (mxc_scope)s;
  return MXC_OK;
}

int mxc_scope_stats(mxc_scope scope, int64_t *out_handles,
                    int64_t *out_bytes) {
  API_GUARD();
  int64_t handles, bytes;
  MXC_FORWARD_IF_ERROR(mxc__scope_stats(
      (uintptr_t)scope, "mxc_scope_stats: scope", &handles, &bytes));
  if (out_handles) *out_handles = handles;
  if (out_bytes) *out_bytes = bytes;
  return MXC_OK;
}

int mxc_handle_dump(mxc_scope scope, char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_handle_dump", "out");
  return mxc__scope_dump((uintptr_t)scope, "mxc_handle_dump: scope", out);
}

int mxc_handle_debug_set(int enabled) {
  mxc__handle_debug_set(enabled);
  return MXC_OK;
}

int mxc_handle_debug_enabled(int *out) {
  API_CHECK_OUT(out, "mxc_handle_debug_enabled", "out");
  *out = mxc__handle_debug_enabled();
  return MXC_OK;
}

int mxc_handle_tag_set(const char *tag) { return mxc__handle_tag_set(tag); }

int mxc_handle_tag(const void *handle, const char *tag) {
  API_GUARD();
  return mxc__handle_tag((uintptr_t)handle, tag, "mxc_handle_tag: handle");
}
