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

/* Copy between host (MXC__GPU_HOST) and device memory, or between two
 * devices. On a thread with a stream of the device that does the copy
 * (the destination's, or the source's for a copy to the host; see
 * mxc__gpu_thread_stream) it is enqueued there and complete only after
 * mxc__gpu_stream_sync of that stream, or the sync of an event recorded
 * after it (the engine's GPU workers record one after each function);
 * elsewhere it is complete on return.
 * MXC_ERR_INTERNAL with the plug-in's reason when the runtime reports an
 * error. */
int mxc__gpu_copy(void *dst, int dst_dev, const void *src, int src_dev,
                  size_t nbytes);

/* ---- streams (core/base/gpu_plugin.h, ABI 2), for the engine ---- */

/* A new stream on gpu(id) in *out; MXC_ERR_UNSUPPORTED with the reason
 * when gpu(id) cannot be used (mxc__gpu_check), else the error names the
 * device and the plug-in's reason. */
int mxc__gpu_stream_create(int id, void **out);
/* Waits for the stream's work, then frees it. NULL: nothing. */
void mxc__gpu_stream_destroy(void *stream);
/* Waits for the work enqueued on stream so far: MXC_OK, or the first
 * error of that work with the runtime's message as the thread's error. */
int mxc__gpu_stream_sync(void *stream);

/* ---- events (core/base/gpu_plugin.h), for the engine's completion ---- */

/* 1 when the plug-in's table has the event functions. */
int mxc__gpu_has_events(void);
/* A new event of gpu(id) (usable: mxc__gpu_check) in *out; else the error
 * names the device and the plug-in's reason. */
int mxc__gpu_event_create(int id, void **out);
/* Frees it. NULL: nothing. */
void mxc__gpu_event_destroy(void *event);
/* Marks the work enqueued on stream so far (see the table's
 * event_record); the plug-in's reason as the thread's error. */
int mxc__gpu_event_record(void *event, void *stream);
/* Blocks until the work before the event's last record is complete:
 * MXC_OK, or that work's error with the runtime's message as the thread's
 * error. */
int mxc__gpu_event_sync(void *event);
/* MXC_OK (complete), MXC__GPU_NOT_READY, or the error as event_sync. */
int mxc__gpu_event_query(void *event);
/* Later work on stream waits on the device for the event's last record. */
int mxc__gpu_stream_wait_event(void *stream, void *event);

/* Makes stream (of gpu(id)) the calling thread's stream: kernels
 * (mxc__gpu_launch) and copies (mxc__gpu_copy) of gpu(id) this thread
 * runs are enqueued on it. stream NULL: none (synchronous calls). Each
 * engine GPU worker sets its own once. */
void mxc__gpu_set_thread_stream(int id, void *stream);
/* The calling thread's stream when it is one of gpu(id), else NULL. */
void *mxc__gpu_thread_stream(int id);

/* Runs kernel k of the plug-in's table for c on the calling thread's
 * stream of gpu(c->dev), if any: then the work may still be running on
 * return, and is done after mxc__gpu_stream_sync (or the sync of an
 * event recorded after it). Returns the kernel's
 * code, its reason in why. */
int mxc__gpu_launch(const mxc__gpu_kernel *k, const mxc__gpu_call *c,
                    char *why, size_t why_len);

#endif /* MXC_CORE_BASE_GPU_H_ */
