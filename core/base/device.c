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
