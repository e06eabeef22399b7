/* Copies of pageable host memory through a pinned staging buffer of two
 * halves ("slots"), as plain C over three callbacks, so that the chunk
 * order and the waits (the part that goes wrong silently: a slot
 * overwritten while a DMA still reads it) are host-tested with a fake
 * asynchronous queue (tests/gpu:test_cuda_stage) and driven by CUDA in
 * streams.c.
 *
 * To the device: for each chunk, wait until its slot is free (the DMA of
 * the chunk before last is done), memcpy the chunk into the slot, enqueue
 * the DMA slot -> device, mark the slot. Returns with up to two DMAs in
 * flight: the slots stay busy until their marks pass (the stream's next
 * sync, or the next copy's wait).
 * To the host: for each chunk, wait for its slot, enqueue the DMA
 * device -> slot, mark it; then wait for the previous chunk's mark and
 * memcpy it out of its slot. Returns when every byte is in host memory.
 *
 * Thread-safety: one mxc__stage is used by one thread at a time (its
 * stream's). */
#ifndef MXC_BACKENDS_CUDA_STAGE_H_
#define MXC_BACKENDS_CUDA_STAGE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxc__stage {
  void *ctx;     /* for the callbacks (the stream) */
  void *slot[2]; /* pinned host memory, chunk bytes each */
  size_t chunk;  /* > 0 */
  int busy[2];   /* a mark of the slot may not have passed yet */
  /* Enqueues an asynchronous copy of n bytes (one side is a slot). */
  int (*dma)(void *ctx, void *dst, const void *src, size_t n, int to_device);
  /* Enqueues the slot's mark after the work enqueued so far. */
  int (*mark)(void *ctx, int slot);
  /* Blocks until the slot's last mark has passed. */
  int (*wait)(void *ctx, int slot);
} mxc__stage;

/* MXC_OK or the first failing callback's code (the callbacks write their
 * own reason). */
int mxc__stage_to_device(mxc__stage *st, void *dst, const void *src, size_t n);
int mxc__stage_to_host(mxc__stage *st, void *dst, const void *src, size_t n);

/* Waits for both slots (before the buffer is freed or reused). */
int mxc__stage_drain(mxc__stage *st);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_STAGE_H_ */
