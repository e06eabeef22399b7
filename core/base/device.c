#include "core/base/device.h"

#include "core/base/error.h"
#include "core/base/gpu.h"

int mxc__have_cuda(void) { return mxc__gpu_count() > 0; }

int mxc__device_check(int type, int id, const char *what) {
  MXC_RETURN_ERROR_IF(type != MXC_DEVICE_CPU && type != MXC_DEVICE_GPU,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: unknown device type %d; expected MXC_DEVICE_CPU "
                      "(1) or MXC_DEVICE_GPU (2)",
                      what, type);
  MXC_RETURN_ERROR_IF(id < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: device id %d is negative", what, id);
  /* CPU ids other than 0 name the same memory; accept them as MXNet did. */
  return type == MXC_DEVICE_GPU ? mxc__gpu_check(id, what) : MXC_OK;
}

int mxc__device_count(int type, int *out) {
  MXC_RETURN_ERROR_IF(type != MXC_DEVICE_CPU && type != MXC_DEVICE_GPU,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_device_count: unknown device type %d; expected "
                      "MXC_DEVICE_CPU (1) or MXC_DEVICE_GPU (2)",
                      type);
  /* No GPU is a count of 0, not an error, so that callers can probe for
   * GPUs without handling a failure (mxc__gpu_status says why). */
  *out = type == MXC_DEVICE_CPU ? 1 : mxc__gpu_count();
  return MXC_OK;
}
