/* NDArray: views over shared, reference-counted chunks.
 *
 * A chunk owns one block of storage and one engine variable. Every view
 * (an mxc__ndarray: shape, dtype, byte offset) holds one reference to its
 * chunk. When the last reference goes, the chunk's variable is deleted
 * through the engine, so the storage is released only after all work
 * pushed on it has finished: freeing an array never waits and never frees
 * memory that pending work still uses.
 *
 * Invariants relied on throughout:
 *  - a view is always contiguous and row-major: slices are along axis 0;
 *  - offset + nbytes(view) <= chunk->nbytes;
 *  - chunk->block.ptr is set once (delayed allocation) and never changes
 *    while the chunk lives, so data pointers computed at push time stay
 *    valid for the pushed work.
 *
 * Storage types: every chunk and view carries an stype (MXC_STYPE_*). Dense
 * is the only one implemented so far. The sparse types keep their values
 * in this chunk and add aux arrays (CSR: indptr and indices; row_sparse:
 * row indices), each an ordinary dense chunk of its own referenced by the
 * sparse chunk, whose sizes are known only when an operator has run: sparse
 * outputs are therefore allocated inside the operator, under the engine
 * variable of the sparse chunk, which covers its aux chunks too. Operators
 * and copies refuse sparse inputs with MXC_ERR_STYPE until then.
 *
 * Thread-safety: views may be created, used and freed from any thread.
 * Reading the data of an array requires engine ordering (push a function
 * that reads its variable, or wait first). */
#ifndef MXC_CORE_NDARRAY_NDARRAY_H_
#define MXC_CORE_NDARRAY_NDARRAY_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/device.h"
#include "core/base/shape.h"
#include "core/engine/engine.h"
#include "core/storage/storage.h"

typedef struct mxc__chunk {
  atomic_int refs;
  atomic_int allocated;       /* 1 once block (or ext memory) is usable */
  pthread_mutex_t alloc_lock; /* serializes delayed allocation */
  size_t nbytes;              /* bytes the chunk must hold */
  mxc__device dev;
  int stype;
  mxc__engine *engine;
  mxc__var *var;
  mxc__storage_block block; /* pooled storage (when ext_ptr is NULL) */
  /* External memory (DLPack import): freed with ext_free(ext_arg). */
  void *ext_ptr;
  void (*ext_free)(void *);
  void *ext_arg;
} mxc__chunk;

typedef struct mxc__ndarray {
  mxc__chunk *chunk;
  mxc__shape shape;
  int dtype;
  int stype;
  size_t offset; /* bytes from the start of the chunk */
  /* Autograd information (core/autograd): NULL unless the view is a
   * marked variable or the result of a recorded operator. It belongs to
   * this view alone: every new view (clone, slice, at, reshape) starts
   * with NULL, i.e. without history. */
  void *ag;
} mxc__ndarray;

/* A new dense array with its own chunk. delay_alloc: allocate storage on
 * first use (mxc__ndarray_ensure_alloc). */
int mxc__ndarray_create(const mxc__shape *shape, int dtype, mxc__device dev,
                        int delay_alloc, mxc__ndarray **out);

/* A new array over external memory (ptr, nbytes) that calls
 * ext_free(ext_arg) when the last view is gone and its work finished. On
 * failure nothing is called; the caller still owns the memory. */
int mxc__ndarray_create_external(const mxc__shape *shape, int dtype,
                                 mxc__device dev, void *ptr,
                                 void (*ext_free)(void *), void *ext_arg,
                                 mxc__ndarray **out);

/* Drops one view. Accepts NULL. */
void mxc__ndarray_free(mxc__ndarray *a);

/* Views sharing a's chunk (see mxc.h for semantics). */
int mxc__ndarray_slice(const mxc__ndarray *a, int64_t begin, int64_t end,
                       mxc__ndarray **out);
int mxc__ndarray_at(const mxc__ndarray *a, int64_t index, mxc__ndarray **out);
int mxc__ndarray_reshape(const mxc__ndarray *a, const int64_t *dims, int ndim,
                         mxc__ndarray **out);
/* Another view identical to a (a new reference to the chunk). */
int mxc__ndarray_clone_view(const mxc__ndarray *a, mxc__ndarray **out);

int64_t mxc__ndarray_size(const mxc__ndarray *a);
size_t mxc__ndarray_nbytes(const mxc__ndarray *a);

/* Allocates delayed storage now. Safe to call concurrently. */
int mxc__ndarray_ensure_alloc(const mxc__ndarray *a);

/* The view's first byte. Storage must be allocated. */
void *mxc__ndarray_ptr(const mxc__ndarray *a);

mxc__var *mxc__ndarray_var(const mxc__ndarray *a);
mxc__engine *mxc__ndarray_engine(const mxc__ndarray *a);

/* Synchronous host copies (push + wait; see mxc.h). */
int mxc__ndarray_copy_from_host(const mxc__ndarray *a, const void *src,
                                size_t nbytes);
int mxc__ndarray_copy_to_host(const mxc__ndarray *a, void *dst, size_t nbytes);

/* Asynchronous copy src -> dst (same shape and dtype). */
int mxc__ndarray_copy(const mxc__ndarray *src, const mxc__ndarray *dst);

int mxc__ndarray_wait(const mxc__ndarray *a, int for_write);

/* Pushes a synchronous function that reads `read` and writes `write`
 * (either may be NULL, not both) on their engine and device. name must
 * stay valid until free_fn runs. On failure nothing is pushed and free_fn
 * is not called. */
int mxc__ndarray_push(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
                      const mxc__ndarray *read, const mxc__ndarray *write,
                      int priority, const char *name);

/* ---- autograd hook ----
 * core/autograd registers, before it sets any `ag` field, the function that
 * mxc__ndarray_free calls with a view's non-NULL `ag` (the layer below
 * cannot call up into autograd directly). */
void mxc__ndarray_set_ag_release(void (*fn)(void *ag));

/* Chunk references (DLPack export keeps the storage alive with these). */
void mxc__chunk_retain(mxc__chunk *c);
void mxc__chunk_release(mxc__chunk *c);

#endif /* MXC_CORE_NDARRAY_NDARRAY_H_ */
