/* Storage statistics. */
#include "api_internal.h"
#include "core/storage/storage.h"

int mxc_storage_stat(int dev_type, int dev_id, int stat, int64_t *out) {
  API_CHECK_OUT(out, "mxc_storage_stat", "out");
  MXC_FORWARD_IF_ERROR(
      mxc__device_check(dev_type, dev_id, "mxc_storage_stat: device"));
  mxc__device dev = {dev_type, dev_id};
  return mxc__storage_stat(dev, stat, out);
}

int mxc_storage_release_cached(int dev_type, int dev_id) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev_type, dev_id,
                                         "mxc_storage_release_cached: device"));
  mxc__device dev = {dev_type, dev_id};
  return mxc__storage_release_cached(dev);
}
