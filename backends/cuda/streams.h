/* The plug-in's streams (core/base/gpu_plugin.h, ABI 2): one CUDA stream
 * per engine worker, with a pinned staging buffer for copies of host
 * memory that is not pinned, and the launch that makes a call's stream
 * the thread's current one (cuda_rt.h's mxc__cuda_stream).
 *
 * Why staging: cudaMemcpyAsync from pageable memory is synchronous for
 * the host and goes through the driver's own small staging buffers; a
 * per-stream pinned buffer, reused, lets a host-to-device copy of up to
 * one chunk return before the DMA is done, and lets big copies overlap
 * the host memcpy of one chunk with the DMA of the other (two halves,
 * each with an event saying when it is free again).
 *
 * Thread-safety: a stream is used by one thread at a time (its engine
 * worker, or the thread destroying it). Creating and destroying streams
 * may happen on any thread. */
#ifndef MXC_BACKENDS_CUDA_STREAMS_H_
#define MXC_BACKENDS_CUDA_STREAMS_H_

#include <stddef.h>

#include "core/base/gpu_plugin.h"

/* Bytes of one staging half; copies of pageable memory go in chunks of
 * this size. */
#define MXC__CUDA_STAGING_CHUNK ((size_t)4 << 20)

int mxc__cuda_stream_create(int dev, void **out, char *why, size_t len);
void mxc__cuda_stream_destroy(void *stream);
int mxc__cuda_stream_sync(void *stream, char *why, size_t len);
int mxc__cuda_copy_async(void *dst, int dst_dev, const void *src, int src_dev,
                         size_t nbytes, void *stream, char *why, size_t len);
int mxc__cuda_launch(const mxc__gpu_kernel *k, const mxc__gpu_call *c,
                     void *stream, char *why, size_t len);

/* Events (cudaEventDisableTiming): the engine records one after each
 * operation and completes the operation when it is reached. An event is
 * used by one thread at a time (recorded by a worker, then waited for by
 * the thread that completes the operation). */
int mxc__cuda_event_create(int dev, void **out, char *why, size_t len);
void mxc__cuda_event_destroy(void *event);
int mxc__cuda_event_record(void *event, void *stream, char *why, size_t len);
int mxc__cuda_event_query(void *event, char *why, size_t len);
int mxc__cuda_event_sync(void *event, char *why, size_t len);
int mxc__cuda_stream_wait_event(void *stream, void *event, char *why,
                                size_t len);

#endif /* MXC_BACKENDS_CUDA_STREAMS_H_ */
