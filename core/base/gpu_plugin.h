/* The GPU plug-in's binary interface: what libmxc.so.1 and
 * libmxc_cuda.so.1 agree on.
 *
 * Why a plug-in: libmxc.so.1 must keep working, with no CUDA dependency,
 * on machines without a driver or a GPU (most of its users). The CUDA code
 * lives in its own library, loaded with dlopen on the first use of a GPU
 * device (core/base/gpu.c). Everything the two share goes through the
 * table below, so neither links against the other: the plug-in never
 * calls an mxc__ function (those are not exported), and libmxc never names
 * a CUDA symbol.
 *
 * The plug-in exports one function, MXC__GPU_PLUGIN_ENTRY (an mxc_* name,
 * like every symbol a library of this project exports), returning a
 * static table. The table starts with its ABI version and size: a plug-in
 * of another ABI version is refused with a message (the two libraries
 * come from one source package, so a mismatch means a broken install);
 * fields are only ever appended within one version, so `size` says which
 * a plug-in has.
 *
 * Errors: functions return MXC_OK or an MXC_ERR_* code and, on failure,
 * write a NUL-terminated reason of at most why_len bytes into `why`, which
 * the loader turns into the thread's error message.
 *
 * Thread-safety: open runs once, before any other function. The others
 * may be called from any thread at the same time. */
#ifndef MXC_CORE_BASE_GPU_PLUGIN_H_
#define MXC_CORE_BASE_GPU_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

#define MXC__GPU_PLUGIN_ABI 1
#define MXC__GPU_PLUGIN_ENTRY "mxc_gpu_plugin_v1"
/* The library file looked up by the dynamic loader's rules (the Debian
 * package libmxc-cuda1 installs it beside libmxc.so.1); the environment
 * variable MXC_CUDA_PLUGIN, read once, names another file. */
#define MXC__GPU_PLUGIN_FILE "libmxc_cuda.so.1"
#define MXC__GPU_NAME_MAX 256 /* as cudaDeviceProp.name */

/* Host pointers in a copy: the device id for host memory. */
#define MXC__GPU_HOST (-1)

/* One device as the plug-in sees it. */
typedef struct mxc__gpu_props {
  char name[MXC__GPU_NAME_MAX]; /* "NVIDIA H100 80GB HBM3" */
  int cc;                       /* compute capability, major*10 + minor */
  uint64_t total_bytes;         /* device memory */
} mxc__gpu_props;

typedef struct mxc__gpu_plugin {
  uint32_t abi;  /* MXC__GPU_PLUGIN_ABI */
  uint32_t size; /* sizeof(mxc__gpu_plugin) where the plug-in was built */
  const char *name;
  /* The oldest compute capability (major*10 + minor) its machine code or
   * PTX runs on: older devices are refused by id. */
  int min_cc;
  /* Opens the runtime and counts devices: MXC_OK and *n_devices >= 0, or
   * MXC_ERR_UNSUPPORTED when the driver is missing or older than the
   * runtime the plug-in was built with (the reason says which). */
  int (*open)(int *n_devices, char *why, size_t why_len);
  /* Properties of device dev (0 <= dev < n_devices). */
  int (*props)(int dev, mxc__gpu_props *out, char *why, size_t why_len);
  /* nbytes > 0 of device memory on dev, 256-byte aligned, or NULL when
   * the device is out of memory. */
  void *(*mem_alloc)(int dev, size_t nbytes);
  /* Returns what mem_alloc gave (ptr non-NULL). */
  void (*mem_free)(int dev, void *ptr);
  /* Copies nbytes from src on src_dev to dst on dst_dev (MXC__GPU_HOST
   * for host memory), returning when the copy is complete. */
  int (*copy)(void *dst, int dst_dev, const void *src, int src_dev,
              size_t nbytes, char *why, size_t why_len);
} mxc__gpu_plugin;

/* The entry point's type, and its declaration for the plug-in that
 * defines it (libmxc never does: it finds it with dlsym). */
typedef const mxc__gpu_plugin *(*mxc__gpu_plugin_entry_fn)(void);
MXC_API const mxc__gpu_plugin *mxc_gpu_plugin_v1(void);

#endif /* MXC_CORE_BASE_GPU_PLUGIN_H_ */
