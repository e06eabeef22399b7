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
 * Storage types: every chunk and view carries an stype (MXC_STYPE_*). A
 * sparse chunk (CSR, row_sparse; see "sparse arrays" below) owns no block
 * of its own: its values and aux arrays (CSR: indptr and indices;
 * row_sparse: row indices) are storage blocks held in chunk->sparse, whose
 * sizes are known only when an operator has run. Sparse outputs are
 * therefore (re)allocated inside the operator, under the engine variable
 * of the sparse chunk, which covers the values and aux blocks too; for
 * sparse chunks the "block set once" invariant below does not hold, and
 * pointers are taken only while running under the engine. Operations that
 * have no meaning for sparse arrays (slices, reshapes, host copies, DLPack,
 * dense kernels) refuse them with MXC_ERR_STYPE.
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
  /* Sparse chunks only (stype != MXC_STYPE_DEFAULT), else NULL. */
  struct mxc__sparse *sparse;
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
  /* MXC__FMT_* (core/op/op.h): PLAIN except an executor's internal values
   * that format.c chose CHANNELS_LAST; kept by clone_view only (a slice
   * or reshape of such a value would be meaningless, and none is made). */
  int fmt;
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
/* The write version of a's data (mxc__engine_var_version): 0 when
 * unknown (external memory, or exported through DLPack). */
uint64_t mxc__ndarray_version(const mxc__ndarray *a);
mxc__engine *mxc__ndarray_engine(const mxc__ndarray *a);

/* Synchronous host copies (push + wait; see mxc.h). */
int mxc__ndarray_copy_from_host(const mxc__ndarray *a, const void *src,
                                size_t nbytes);
int mxc__ndarray_copy_to_host(const mxc__ndarray *a, void *dst, size_t nbytes);

/* a's bytes, readable by the host: its own memory for a CPU array, a copy
 * for a GPU array (*owned then holds it: mxc__free it after use; NULL for
 * a CPU array). Dense arrays whose pending writes were waited for. For
 * writers of files (save), which read data on the calling thread. */
int mxc__ndarray_host_bytes(const mxc__ndarray *a, const void **out,
                            void **owned);

/* Asynchronous copy src -> dst (same shape and dtype). */
int mxc__ndarray_copy(const mxc__ndarray *src, const mxc__ndarray *dst);
/* As mxc__ndarray_copy, a dense copy that the engine runs (and reports a
 * failure of) under `name` (copied: any lifetime), e.g. the operator a
 * device fallback copies for. */
int mxc__ndarray_copy_named(const mxc__ndarray *src, const mxc__ndarray *dst,
                            const char *name);
/* The checks every copy makes (shapes and dtypes equal; any devices):
 * MXC_OK or the error naming both sides. */
int mxc__copy_check(const mxc__ndarray *src, const mxc__ndarray *dst);

int mxc__ndarray_wait(const mxc__ndarray *a, int for_write);

/* Pushes a synchronous function that reads `read` and writes `write`
 * (either may be NULL, not both) on their engine and device. name must
 * stay valid until free_fn runs. On failure nothing is pushed and free_fn
 * is not called. */
int mxc__ndarray_push(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
                      const mxc__ndarray *read, const mxc__ndarray *write,
                      int priority, const char *name);

/* As mxc__ndarray_push, for host work on sparse arrays that reaches
 * device memory only through mxc__gpu_copy (core/ndarray/sparse_sync.c):
 * it runs on the CPU workers whatever the arrays' devices, where
 * mxc__gpu_copy is synchronous (no stream), and the engine's ordering by
 * variables covers GPU work on the arrays (which completes before it
 * counts as done). */
int mxc__ndarray_push_host(mxc__sync_fn fn, void *arg, mxc__free_fn free_fn,
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

/* ---- sparse arrays (core/ndarray/sparse.c) ----------------------------
 *
 * A CSR array of logical shape (rows, cols) stores nnz values (data, shape
 * (nnz)), indptr (rows + 1) and column indices (nnz): row r holds columns
 * indices[indptr[r] .. indptr[r+1]) with the matching values. A row_sparse
 * array of shape (rows, d1, ...) stores nnz rows (data, shape (nnz, d1,
 * ...)) and their row indices (nnz). Index arrays are int32 or int64 (the
 * array's index dtype); the view's dtype is the dtype of the values.
 *
 * Everything in mxc__sparse is read or written only under engine ordering
 * of the sparse chunk's variable (inside pushed work that reads or writes
 * it), except index_dtype, which never changes.
 *
 * Devices: row_sparse arrays are on the CPU. A CSR array may be on a GPU
 * (its blocks device memory, for the GPU's sparse kernels): it is made
 * from host buffers checked in full first, or by mxc__sparse_copy from a
 * checked array, so it is always valid; host code never reads its
 * blocks, except sparse_sync.c's copies through the plug-in. */
typedef struct mxc__sparse {
  int index_dtype;              /* MXC_DTYPE_INT32 or MXC_DTYPE_INT64 */
  int64_t nnz;                  /* csr: stored values; rsp: stored rows */
  mxc__storage_block data;      /* values */
  mxc__storage_block aux[2];    /* csr: indptr, indices; rsp: row indices */
  /* 1 once the contents are known to pass the full format check (written
   * by a kernel, or checked); atomic because concurrent readers may set it. */
  atomic_int valid;
} mxc__sparse;

/* A dense view of part of a sparse array, for kernels. */
typedef struct mxc__dense_view {
  void *ptr;
  mxc__shape shape;
  int dtype;
} mxc__dense_view;

/* Aux arrays of a storage type: 2 (csr), 1 (row_sparse), 0 (dense). */
int mxc__sparse_n_aux(int stype);

/* A new empty sparse array (nnz 0; a CSR indptr of zeros). stype
 * MXC_STYPE_CSR (shape must be 2-d) or MXC_STYPE_ROW_SPARSE (ndim >= 1);
 * index_dtype int32 or int64 (int32 only when the extents fit it). */
int mxc__ndarray_create_sparse(int stype, const mxc__shape *shape, int dtype,
                               int index_dtype, mxc__device dev,
                               mxc__ndarray **out);

/* New sparse arrays holding copies of host buffers (nnz >= 0 entries or
 * rows; buffers may be NULL only where they hold 0 elements; indices in
 * index_dtype). Sizes are checked here; values (ordering, ranges) only by
 * mxc__sparse_check, which every kernel runs before trusting them. A CSR
 * array with nnz 0 and indptr NULL is the empty (all-zero) array, as from
 * mxc__ndarray_create_sparse. */
int mxc__ndarray_create_csr_host(const mxc__shape *shape, int dtype,
                                 int index_dtype, mxc__device dev,
                                 const void *data, const void *indptr,
                                 const void *indices, int64_t nnz,
                                 mxc__ndarray **out);
int mxc__ndarray_create_rsp_host(const mxc__shape *shape, int dtype,
                                 int index_dtype, mxc__device dev,
                                 const void *data, const void *row_idx,
                                 int64_t nnz, mxc__ndarray **out);

/* The rest run under engine ordering of a's variable (see above). */

/* Replaces a's values and aux blocks by new ones for nnz entries (csr) or
 * rows (row_sparse), contents unspecified; the caller (a kernel writing a)
 * fills them all and so makes a valid array. On failure a keeps its old
 * contents. */
int mxc__sparse_alloc(const mxc__ndarray *a, int64_t nnz);

/* After filling a's new blocks: marks the contents well-formed. */
void mxc__sparse_set_valid(const mxc__ndarray *a);

int64_t mxc__sparse_nnz(const mxc__ndarray *a);
int mxc__sparse_index_dtype(const mxc__ndarray *a);
/* The values: csr (nnz), row_sparse (nnz, d1, ...) -- the storage shape. */
mxc__dense_view mxc__sparse_data(const mxc__ndarray *a);
/* Aux array `which` (0: csr indptr / rsp row indices; 1: csr indices). */
mxc__dense_view mxc__sparse_aux(const mxc__ndarray *a, int which);

/* Format check. full = 0: sizes and the ends of indptr (O(1)); full = 1:
 * also indptr non-decreasing, column indices in [0, cols) and strictly
 * increasing within each row, row indices in [0, rows) and strictly
 * increasing. MXC_ERR_INVALID_ARGUMENT naming `what` and the first bad
 * position. A full pass marks the array valid. */
int mxc__sparse_check(const mxc__ndarray *a, int full, const char *what);
/* mxc__sparse_check(a, 1) unless a is already known valid: kernels call it
 * before indexing with stored indices, so malformed input is an error and
 * never an out-of-bounds access. */
int mxc__sparse_require_valid(const mxc__ndarray *a, const char *what);
/* Index element i of an index view (int32 or int64). */
int64_t mxc__sparse_idx_get(const mxc__dense_view *v, int64_t i);
void mxc__sparse_idx_set(const mxc__dense_view *v, int64_t i, int64_t x);

/* Under engine ordering (read src, write dst; same storage type, shape
 * and dtype): dst gets src's structure and values. Either may be a GPU
 * CSR array (then from a thread without a stream: the CPU workers); a CPU
 * source going to a GPU is checked first (GPU CSR arrays are always
 * valid). */
int mxc__sparse_copy_now(const mxc__ndarray *src, const mxc__ndarray *dst);

/* Asynchronous copy between sparse arrays of the same storage type, shape
 * and dtype (index dtypes may differ): dst gets src's structure and
 * values. Called by mxc__ndarray_copy for sparse arguments. */
int mxc__sparse_copy(const mxc__ndarray *src, const mxc__ndarray *dst);

/* Frees the blocks and the struct (chunk destruction). Accepts NULL. */
void mxc__sparse_destroy(mxc__sparse *sp);

/* Synchronous reads for the C API, each pushed as a read of a and waited
 * for, so they see all work pushed on a before the call. part: -1 the
 * values, else aux `part`; *out = a new dense array holding a copy. */
int mxc__sparse_part_sync(const mxc__ndarray *a, int part,
                          mxc__ndarray **out);
int mxc__sparse_nnz_sync(const mxc__ndarray *a, int64_t *out);

/* Synchronous full or quick check pushed as a read of a and waited for
 * (the public mxc_ndarray_check_format). A format error is returned to the
 * caller and does not mark the array as failed. */
int mxc__sparse_check_sync(const mxc__ndarray *a, int full);

#endif /* MXC_CORE_NDARRAY_NDARRAY_H_ */
