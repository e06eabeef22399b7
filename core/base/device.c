#include "core/base/device.h"

#include "core/base/error.h"

int mxc__have_cuda(void) {
#ifdef MXC_USE_CUDA
  return 1;
#else
  return 0;
#endif
}

int mxc__device_check(int type, int id, const char *what) {
  MXC_RETURN_ERROR_IF(type != MXC_DEVICE_CPU && type != MXC_DEVICE_GPU,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: unknown device type %d; expected MXC_DEVICE_CPU "
                      "(1) or MXC_DEVICE_GPU (2)",
                      what, type);
  MXC_RETURN_ERROR_IF(id < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: device id %d is negative", what, id);
  MXC_RETURN_ERROR_IF(type == MXC_DEVICE_GPU && !mxc__have_cuda(),
                      MXC_ERR_UNSUPPORTED,
                      "%s: gpu(%d) requested, but this build of mxc has no "
                      "CUDA support",
                      what, id);
  /* CPU ids other than 0 name the same memory; accept them as MXNet did. */
  return MXC_OK;
}

int mxc__device_count(int type, int *out) {
  MXC_RETURN_ERROR_IF(type != MXC_DEVICE_CPU && type != MXC_DEVICE_GPU,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_device_count: unknown device type %d; expected "
                      "MXC_DEVICE_CPU (1) or MXC_DEVICE_GPU (2)",
                      type);
  /* No build has a GPU backend yet: its count is 0, not an error, so that
   * callers can probe for GPUs without handling a failure. */
  *out = type == MXC_DEVICE_CPU ? 1 : 0;
  return MXC_OK;
}
