/* Devices: a (type, id) pair from the public MXC_DEVICE_* constants. */
#ifndef MXC_CORE_BASE_DEVICE_H_
#define MXC_CORE_BASE_DEVICE_H_

#include "mxc/mxc.h"

typedef struct mxc__device {
  int type;
  int id;
} mxc__device;

/* MXC_OK for a device this process can use. A GPU that cannot be used
 * (no plug-in, driver or device; see core/base/gpu.h) is
 * MXC_ERR_UNSUPPORTED naming the reason; an unknown type or negative id is
 * MXC_ERR_INVALID_ARGUMENT. `what` names the argument. */
int mxc__device_check(int type, int id, const char *what);

/* *out = devices of `type` this process can use (see mxc_device_count):
 * 1 CPU; the GPUs the CUDA plug-in sees, 0 without one. */
int mxc__device_count(int type, int *out);

/* 1 when the CUDA plug-in loaded and sees at least one GPU. */
int mxc__have_cuda(void);

#endif /* MXC_CORE_BASE_DEVICE_H_ */
