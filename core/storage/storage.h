/* Per-device pooled storage allocator.
 *
 * Blocks are 64-byte aligned. Size classes: 64 bytes, then four per power
 * of two (2^k * 1.25, 1.5, 1.75, 2), so a block wastes under 25%. All CPU
 * ids share one pool (they name the same memory); each GPU has its own.
 * Freed blocks are cached in size classes and handed out again, so
 * steady-state training allocates nothing from the system.
 * MXC_STORAGE_POOL=0 (read at first use) turns caching off: every
 * free returns memory at once, which lets sanitizers see each block (and
 * blocks are then exactly the requested size, at least one byte, instead
 * of a size class). MXC_STORAGE_POOL_MAX_CACHED (bytes, optional K/M/G
 * suffix; read at first use) caps the bytes cached per device; a free that
 * would exceed it returns the block to the system. Unset or malformed: no
 * cap. When the system is out of memory, the device's cached blocks are
 * released and the allocation is tried once more.
 * All memory comes from mxc__aligned_alloc (core/base/alloc.h), so fault
 * injection reaches it.
 *
 * Thread-safety: all functions may be called from any thread. */
#ifndef MXC_CORE_STORAGE_STORAGE_H_
#define MXC_CORE_STORAGE_STORAGE_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/device.h"

typedef struct mxc__storage_block {
  void *ptr;         /* 64-byte aligned; non-NULL even for 0 bytes */
  size_t size;       /* bytes requested */
  size_t class_size; /* bytes actually reserved (the size class; with the
                        pool off, max(size, 1)) */
  mxc__device dev;
} mxc__storage_block;

/* Allocates nbytes (0 allowed) on dev. *out untouched on failure
 * (MXC_ERR_OOM, or MXC_ERR_UNSUPPORTED for a device without support). */
int mxc__storage_alloc(mxc__device dev, size_t nbytes,
                       mxc__storage_block *out);

/* Returns a block to its pool (or to the system when pooling is off).
 * Accepts a block whose ptr is NULL (no-op) and clears *b. */
void mxc__storage_free(mxc__storage_block *b);

/* *out = statistic `stat` (MXC_STORAGE_* from <mxc/mxc.h>) of dev. */
int mxc__storage_stat(mxc__device dev, int stat, int64_t *out);

/* Frees every cached block of dev. */
int mxc__storage_release_cached(mxc__device dev);

/* 1 when pooling is on (MXC_STORAGE_POOL is not "0"). */
int mxc__storage_pool_enabled(void);

#endif /* MXC_CORE_STORAGE_STORAGE_H_ */
