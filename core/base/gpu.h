/* GPUs as devices of mxc, through the plug-in (core/base/gpu_plugin.h).
 *
 * The first call of any function here loads the plug-in, once per
 * process; what it found (how many GPUs, or why none can be used) never
 * changes afterwards. The reasons a GPU cannot be used, each with its own
 * message: the plug-in library is missing or cannot be loaded (a missing
 * dependency such as libcudart is named by the dynamic loader's message),
 * the file is not an mxc GPU plug-in or of another ABI version, the
 * driver is missing or older than the plug-in's runtime, no device is
 * visible, the id is out of range, or the device's compute capability is
 * older than the plug-in's code. All are MXC_ERR_UNSUPPORTED.
 *
 * Thread-safety: every function may be called from any thread. */
#ifndef MXC_CORE_BASE_GPU_H_
#define MXC_CORE_BASE_GPU_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

/* GPU ids the library handles (fixed-size per-device tables, such as the
 * storage pools, are sized by it); a machine with more uses the first. */
#define MXC__MAX_GPUS 16

/* The plug-in's table, loaded (once) without opening the CUDA runtime,
 * or NULL when there is no usable plug-in library (mxc__gpu_status says
 * why). For attaching its kernels when the operator registry is built;
 * the kernels run only on devices mxc__gpu_check accepted. */
const mxc__gpu_plugin *mxc__gpu_table(void);

/* MXC_OK when gpu(id) can be used, else MXC_ERR_UNSUPPORTED with the
 * reason. `what` names the argument in the message. id >= 0. */
int mxc__gpu_check(int id, const char *what);

/* GPUs visible to the plug-in (at most MXC__MAX_GPUS), including any too
 * old to use; 0 when none can be used. Never fails. */
int mxc__gpu_count(void);

/* Why no GPU can be used, or "" when the plug-in loaded and sees one or
 * more. Static storage: never free it. */
const char *mxc__gpu_status(void);

/* Properties of gpu(id), which mxc__gpu_check accepted. Borrowed, valid
 * for the process. */
const mxc__gpu_props *mxc__gpu_props_of(int id);

/* Device memory on gpu(id), which mxc__gpu_check accepted: NULL when the
 * device is out of memory (nbytes > 0). */
void *mxc__gpu_alloc(int id, size_t nbytes);
void mxc__gpu_free(int id, void *ptr);

/* Synchronous copy between host (MXC__GPU_HOST) and device memory, or
 * between two devices. MXC_ERR_INTERNAL with the plug-in's reason when
 * the runtime reports an error. */
int mxc__gpu_copy(void *dst, int dst_dev, const void *src, int src_dev,
                  size_t nbytes);

#endif /* MXC_CORE_BASE_GPU_H_ */
