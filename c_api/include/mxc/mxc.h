/*
 * mxc: a deep-learning runtime with a stable C ABI.
 *
 * This header is the whole public interface. Everything in it is a promise:
 * an existing function's signature and meaning never change within a major
 * version; new behaviour arrives as new functions (see docs/c-api.md).
 *
 * General rules that every function below follows unless its comment says
 * otherwise:
 *  - Fallible functions return MXC_OK (0) or a positive MXC_ERR_* code.
 *    mxc_last_error() then describes the failure for the calling thread.
 *  - On failure, out-parameters are left untouched and nothing is leaked.
 *  - Free functions return void and accept NULL.
 *  - Handles are opaque. A handle of the wrong kind, or one already freed,
 *    is reported as MXC_ERR_INVALID_HANDLE instead of being dereferenced.
 *    A handle freed by one thread while another thread's call is using it
 *    (a caller race) never makes that call read freed memory: the call
 *    either fails with MXC_ERR_INVALID_HANDLE or completes on the whole
 *    object, which is destroyed after the call returns (since 1.1).
 *  - Calls made from inside mxc's own callbacks (pushed functions, monitors,
 *    the log callback) follow each callback's rules; a forbidden call fails
 *    with MXC_ERR_REENTRANT instead of deadlocking (since 1.1).
 *  - Input strings and buffers are copied; the library keeps no reference
 *    to caller memory after a call returns unless the comment says so.
 *  - Every function may be called from any thread.
 *  - Nothing aborts the process or prints on bad input.
 */
#ifndef MXC_MXC_H_
#define MXC_MXC_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define MXC_API
#elif defined(__GNUC__)
#define MXC_API __attribute__((visibility("default")))
#else
#define MXC_API
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                  */
/* ------------------------------------------------------------------------ */

#define MXC_VERSION_MAJOR 1
#define MXC_VERSION_MINOR 1
#define MXC_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH. */
#define MXC_VERSION_NUMBER \
  (MXC_VERSION_MAJOR * 10000 + MXC_VERSION_MINOR * 100 + MXC_VERSION_PATCH)

/* The version of the library actually loaded, as MXC_VERSION_NUMBER. */
MXC_API int mxc_version(void);

/* The loaded library's version as "MAJOR.MINOR.PATCH". The string is static:
 * never free it. */
MXC_API const char *mxc_version_string(void);

/* Build features ("CUDA", "OPENBLAS", "DLPACK", "ASAN", "TSAN", ...).
 * Three features report a run-time choice instead: exactly one of
 * "GEMM_OPENBLAS", "GEMM_ONEDNN" and "GEMM_PORTABLE" is enabled, the GEMM
 * float32 matrix products use in this process (OpenBLAS unless the kernels
 * it picked for this CPU are weaker than the CPU's ISA; the environment
 * variable MXC_GEMM=auto|openblas|onednn|portable, read once, overrides;
 * see docs/threads.md). mxc_feature_count() gives how many names
 * mxc_feature_name() knows; mxc_feature_name(i) returns a static string
 * (never free it) or NULL when i is out of range. */
MXC_API int mxc_feature_count(void);
MXC_API const char *mxc_feature_name(int index);

/* *out_enabled = 1 when the build has the named feature, 0 when the feature
 * is known but absent. "CUDA" is a run-time answer too: 1 when the CUDA
 * plug-in loaded and sees at least one GPU (asking loads it; see
 * mxc_device_check). Unknown names: MXC_ERR_NOT_FOUND. */
MXC_API int mxc_feature_enabled(const char *name, int *out_enabled);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

#define MXC_OK 0
#define MXC_ERR_INVALID_ARGUMENT 1 /* a NULL or out-of-range argument */
#define MXC_ERR_INVALID_HANDLE 2   /* wrong kind of handle, or freed */
#define MXC_ERR_SHAPE 3            /* shapes do not fit */
#define MXC_ERR_DTYPE 4            /* unknown or mismatched data type */
#define MXC_ERR_STYPE 5            /* unsupported storage type */
#define MXC_ERR_OOM 6              /* an allocation failed */
#define MXC_ERR_NOT_FOUND 7        /* a named thing does not exist */
#define MXC_ERR_IO 8               /* reading or writing a file failed */
#define MXC_ERR_UNSUPPORTED 9      /* valid but not available in this build */
#define MXC_ERR_INTERNAL 10        /* a bug in mxc; please report it */
#define MXC_ERR_OPERATOR 11        /* async work failed with a non-mxc code */
/* A call that is not allowed where it was made: from inside an mxc
 * callback whose rules forbid it (waiting from inside a pushed function,
 * running an executor from its own monitor, ...); the message names the
 * rule. Nothing was done. Since 1.1. */
#define MXC_ERR_REENTRANT 12

/* The message of the last failure in the calling thread: what was wrong,
 * which argument, what was expected. Never NULL ("" when no failure has
 * happened yet). The string lives in thread-local storage and stays valid
 * until the next failing mxc call in the same thread; copy it to keep it. */
MXC_API const char *mxc_last_error(void);

/* The code of the last failure in the calling thread (MXC_OK if none). */
MXC_API int mxc_last_error_code(void);

/* A static, human-readable name for an MXC_ERR_* code ("MXC_ERR_SHAPE").
 * Unknown codes give "MXC_ERR_UNKNOWN". Never free the result. */
MXC_API const char *mxc_error_name(int code);

/* Records a failure for the calling thread, as a failing mxc call does:
 * mxc_last_error_code() becomes code and mxc_last_error() message (copied;
 * NULL reads as ""; longer than 1023 bytes is cut). Returns code, so that
 * a callback mxc calls (a block's forward function, a KVStore updater, a
 * fit listener) can fail with its own reason:
 *     return mxc_set_last_error(MXC_ERR_INVALID_ARGUMENT, "bad width");
 * and the mxc call that ran it reports that message. code MXC_OK clears
 * the thread's failure and returns MXC_OK; a negative code is
 * MXC_ERR_INVALID_ARGUMENT (recorded as such). Thread-safe: it touches
 * only the calling thread's state. Since 1.1. */
MXC_API int mxc_set_last_error(int code, const char *message);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

/* mxc reports conditions that are not errors (an operator run through
 * dense temporaries because it has no kernel for the given storage types,
 * see "Sparse arrays"; a GPU call run on the CPU because its operator has
 * no GPU kernel, see mxc_op_invoke) as one-line messages, never on
 * stdout. By default
 * each goes to stderr as "[mxc] WARNING: message". */
#define MXC_LOG_INFO 1
#define MXC_LOG_WARNING 2

/* message: one line without a trailing newline, valid only during the
 * call. user_data: as given to mxc_set_log_callback. */
typedef void (*mxc_log_fn)(int level, const char *message, void *user_data);

/* Sends every later message to fn(level, message, user_data); fn NULL
 * restores the default (stderr). The callback may be called from any
 * thread, engine worker threads included, and concurrently: it must be
 * thread-safe and should return quickly. From inside the callback,
 * mxc_set_log_callback and every call that waits for the engine
 * (mxc_wait_all, mxc_ndarray_wait_*, host copies, mxc_set_num_threads,
 * ...) fail with MXC_ERR_REENTRANT (they could wait for the callback
 * itself); other calls work, and a message they log goes to stderr
 * instead of the callback (no recursion). When this function returns, no
 * call of the previous callback is running any more, so its user_data may
 * be released. MXC_OK, or MXC_ERR_REENTRANT from inside the callback
 * (since 1.1; 1.0 deadlocked). */
MXC_API int mxc_set_log_callback(mxc_log_fn fn, void *user_data);

/* ------------------------------------------------------------------------ */
/* Data types, storage types, devices                                        */
/* ------------------------------------------------------------------------ */

/* Values match Apache MXNet's type flags, so saved graphs stay readable.
 * Integer semantics (docs/dtypes.md), the same in every operator:
 * integer add, subtract, multiply, negate and abs wrap modulo 2^bits
 * (two's complement, as numpy); a floating value stored into an integer
 * dtype (Cast, a scalar operand, an operator computing in floating point)
 * truncates toward zero and saturates at the dtype's range, infinities
 * included, and NaN gives 0; an integer stored into a narrower integer
 * dtype keeps its low bits; into bool, any nonzero value (NaN too) is 1.
 * Shapes: every extent >= 0, and the product of the non-zero extents times
 * the element size fits in int64 (so (0, 2^62) int8 is a valid empty
 * array); shapes breaking this, from any source, are MXC_ERR_SHAPE. */
#define MXC_DTYPE_FLOAT32 0
#define MXC_DTYPE_FLOAT64 1
#define MXC_DTYPE_FLOAT16 2
#define MXC_DTYPE_UINT8 3
#define MXC_DTYPE_INT32 4
#define MXC_DTYPE_INT8 5
#define MXC_DTYPE_INT64 6
#define MXC_DTYPE_BOOL 7
#define MXC_DTYPE_BFLOAT16 12

/* Size in bytes of one element of dtype, or 0 when dtype is unknown. */
MXC_API int mxc_dtype_size(int dtype);

/* Static name of a dtype ("float32"), or NULL when unknown. */
MXC_API const char *mxc_dtype_name(int dtype);

#define MXC_STYPE_DEFAULT 0 /* dense */
#define MXC_STYPE_ROW_SPARSE 1
#define MXC_STYPE_CSR 2

#define MXC_DEVICE_CPU 1
#define MXC_DEVICE_GPU 2

/* Arrays may have at most this many dimensions. */
#define MXC_MAX_NDIM 8

/* *out_count = how many devices of dev_type this process can use: 1 for
 * MXC_DEVICE_CPU (every CPU core is one device to mxc), and for
 * MXC_DEVICE_GPU the number of GPUs visible to the CUDA plug-in, 0 when the
 * plug-in, the driver or a GPU is missing (that is not an error:
 * mxc_device_check says why). The first GPU query loads the plug-in
 * (libmxc_cuda.so.1, or the file named by the environment variable
 * MXC_CUDA_PLUGIN), once per process. An unknown dev_type is
 * MXC_ERR_INVALID_ARGUMENT. Thread-safe. Since 1.1. */
MXC_API int mxc_device_count(int dev_type, int *out_count);

/* MXC_OK when device (dev_type, dev_id) can be used by this process. For a
 * GPU that cannot, MXC_ERR_UNSUPPORTED and mxc_last_error() says why: the
 * CUDA plug-in is not installed or cannot be loaded (the dynamic loader's
 * message names a missing dependency), it is of another version, the
 * driver is missing or too old, no GPU is visible, dev_id is out of range,
 * or the GPU's compute capability is older than the plug-in's code. An
 * unknown dev_type or a negative id is MXC_ERR_INVALID_ARGUMENT. Every
 * function taking a device makes the same check. Thread-safe; takes and
 * keeps nothing. Since 1.1. */
MXC_API int mxc_device_check(int dev_type, int dev_id);

/* ------------------------------------------------------------------------ */
/* Library-wide settings                                                     */
/* ------------------------------------------------------------------------ */

/* Seeds every random generator of the library. Random operators pushed
 * after this call produce the same numbers for the same seed whatever the
 * number of worker threads. */
MXC_API int mxc_random_seed(uint64_t seed);

/* Sets the number of CPU worker threads of the threaded engine (1..1024).
 * Waits for all pending work first. With MXC_ENGINE=naive it only records
 * the value. */
MXC_API int mxc_set_num_threads(int num_threads);

/* *out = the current number of CPU worker threads. */
MXC_API int mxc_get_num_threads(int *out);

/* *out = 1 when the engine runs everything synchronously (MXC_ENGINE=naive),
 * 0 for the threaded engine. */
MXC_API int mxc_engine_is_naive(int *out);

/* ------------------------------------------------------------------------ */
/* NDArray                                                                   */
/* ------------------------------------------------------------------------ */

/* An n-dimensional array: a view (shape, dtype, offset) on reference-counted
 * storage shared by all views of it. Freeing a handle never frees storage
 * that another view or pending work still uses. */
typedef struct mxc_ndarray_s *mxc_ndarray;

/* Creates a dense array of the given shape and dtype on a device.
 * shape: ndim extents (ndim in 0..MXC_MAX_NDIM; 0 makes a scalar; extents
 * >= 0; zero-size arrays are allowed). The element count and byte size
 * must not overflow int64. shape is copied.
 * dev_type: MXC_DEVICE_CPU, or MXC_DEVICE_GPU (MXC_ERR_UNSUPPORTED in a
 * build without CUDA). dev_id: >= 0.
 * delay_alloc: nonzero to allocate storage only when first written.
 * The contents are unspecified until written.
 * On success *out is a new array owned by the caller; free it with
 * mxc_ndarray_free. */
MXC_API int mxc_ndarray_create(const int64_t *shape, int ndim, int dtype,
                               int dev_type, int dev_id, int delay_alloc,
                               mxc_ndarray *out);

/* Releases the caller's handle. Storage is returned to the pool once no
 * other view uses it and all work pushed on it has finished; freeing does
 * not wait. Accepts NULL. Freeing a handle twice is reported through
 * mxc_last_error (best effort) but never crashes. */
MXC_API void mxc_ndarray_free(mxc_ndarray arr);

/* *out_ndim = number of dimensions; *out_shape = a borrowed pointer to the
 * extents, valid until arr is freed. Either out-parameter may be NULL. */
MXC_API int mxc_ndarray_shape(mxc_ndarray arr, int *out_ndim,
                              const int64_t **out_shape);

/* *out = number of elements (product of the extents; 1 for a scalar). */
MXC_API int mxc_ndarray_size(mxc_ndarray arr, int64_t *out);

MXC_API int mxc_ndarray_dtype(mxc_ndarray arr, int *out_dtype);
MXC_API int mxc_ndarray_stype(mxc_ndarray arr, int *out_stype);
MXC_API int mxc_ndarray_device(mxc_ndarray arr, int *out_dev_type,
                               int *out_dev_id);

/* Copies nbytes from host memory into arr, waiting until the copy is done.
 * nbytes must equal size * dtype size of arr; data must not be NULL unless
 * nbytes is 0. Work already pushed on arr is ordered before the copy. */
MXC_API int mxc_ndarray_copy_from_host(mxc_ndarray arr, const void *data,
                                       size_t nbytes);

/* Copies arr into host memory, waiting for pending writes to arr first.
 * nbytes must equal size * dtype size. Reports the failure of any
 * asynchronous operation that was to write arr (see mxc_wait_all for the
 * code) and clears it. */
MXC_API int mxc_ndarray_copy_to_host(mxc_ndarray arr, void *data,
                                     size_t nbytes);

/* Asynchronously copies src into dst (same shape and dtype). Returns once
 * the copy is pushed; later work on dst sees the copy. */
MXC_API int mxc_ndarray_copy(mxc_ndarray src, mxc_ndarray dst);

/* Views. Each returns in *out a new handle owned by the caller (free with
 * mxc_ndarray_free) that shares storage and dependencies with arr.
 * slice: rows [begin, end) along axis 0, 0 <= begin <= end <= shape[0].
 * at: row index along axis 0 (result has one dimension fewer).
 * reshape: same element count; a single extent may be -1 (inferred). */
MXC_API int mxc_ndarray_slice(mxc_ndarray arr, int64_t begin, int64_t end,
                              mxc_ndarray *out);
MXC_API int mxc_ndarray_at(mxc_ndarray arr, int64_t index, mxc_ndarray *out);
MXC_API int mxc_ndarray_reshape(mxc_ndarray arr, const int64_t *shape,
                                int ndim, mxc_ndarray *out);

/* Wait until all pushed writes to arr (wait_to_read), or all pushed reads
 * and writes (wait_to_write), have finished. A failure of such work is
 * returned (see mxc_wait_all for the code; the message names the failing
 * operation) and then cleared from arr, whose contents are unspecified
 * after a failure. */
MXC_API int mxc_ndarray_wait_to_read(mxc_ndarray arr);
MXC_API int mxc_ndarray_wait_to_write(mxc_ndarray arr);

/* Waits until all work pushed by any thread before the call has finished.
 * Returns the first asynchronous failure since the previous mxc_wait_all
 * and clears every pending failure. The code of an asynchronous failure is
 * the one the failing operation returned (MXC_ERR_OOM, MXC_ERR_SHAPE, ...,
 * or MXC_ERR_OPERATOR when it returned a code outside the MXC_ERR_*
 * range); the message starts "operator 'NAME' failed: ". */
MXC_API int mxc_wait_all(void);

/* ------------------------------------------------------------------------ */
/* Save and load (format: docs/ndarray-format.md)                             */
/* ------------------------------------------------------------------------ */

/* Writes n arrays (n >= 0) to path, atomically: a temporary file in the same
 * directory is written, flushed and renamed over path, so readers see
 * either the old file or the complete new one. names may be NULL (unnamed
 * arrays) or n UTF-8 strings. Waits for pending writes to the arrays. */
MXC_API int mxc_ndarray_save(const char *path, const mxc_ndarray *arrays,
                             const char *const *names, int n);

/* A list of loaded arrays with their names. */
typedef struct mxc_ndarray_list_s *mxc_ndarray_list;

/* Reads a file written by mxc_ndarray_save, or an Apache MXNet NDArray
 * list (.params; every layout MXNet wrote, legacy v0 to v3, dense, csr and
 * row_sparse; names kept as written, "arg:"/"aux:" prefixes included). A
 * truncated, corrupted or foreign file gives MXC_ERR_IO with the position
 * and the problem.
 * On success *out is a new list owned by the caller; free it with
 * mxc_ndarray_list_free. */
MXC_API int mxc_ndarray_load(const char *path, mxc_ndarray_list *out);

MXC_API void mxc_ndarray_list_free(mxc_ndarray_list list);

/* *out = number of arrays in list. */
MXC_API int mxc_ndarray_list_size(mxc_ndarray_list list, int *out);

/* *out = a new handle (owned by the caller, free with mxc_ndarray_free) on
 * the index-th array; the list keeps its own reference. */
MXC_API int mxc_ndarray_list_get(mxc_ndarray_list list, int index,
                                 mxc_ndarray *out);

/* *out = the index-th name, borrowed: valid until list is freed. Unnamed
 * arrays have the name "". */
MXC_API int mxc_ndarray_list_name(mxc_ndarray_list list, int index,
                                  const char **out);

/* File formats of mxc_ndarray_save_format. mxc_ndarray_load and
 * mxc_executor_load_params read both, telling them apart by their first
 * bytes. */
#define MXC_FILE_FORMAT_MXC 0   /* mxc's own (docs/ndarray-format.md) */
#define MXC_FILE_FORMAT_MXNET 1 /* Apache MXNet's NDArray list, the .params
                                   of MXNet checkpoints (docs/mxnet-format.md) */

/* mxc_ndarray_save in a chosen format (MXC_FILE_FORMAT_*), atomically as
 * mxc_ndarray_save. MXC_FILE_FORMAT_MXNET holds dense, csr and row_sparse
 * arrays of every dtype and is read by every MXNet since 0.11 (its v2
 * layout); when an array is 0-d the file uses MXNet's v3 layout, which
 * MXNet reads only under numpy shape semantics and which holds dense arrays
 * only (a sparse array beside a 0-d one is MXC_ERR_STYPE). names NULL
 * writes an unnamed list. An unknown format is MXC_ERR_INVALID_ARGUMENT.
 * arrays and names are borrowed for the call; nothing is kept. Waits for
 * pending writes to the arrays. Thread-safe: concurrent saves to different
 * paths are independent; concurrent saves to one path leave one complete
 * file. Since 1.1. */
MXC_API int mxc_ndarray_save_format(const char *path,
                                    const mxc_ndarray *arrays,
                                    const char *const *names, int n,
                                    int format);

/* ------------------------------------------------------------------------ */
/* DLPack (zero-copy exchange; include <dlpack/dlpack.h> to use)             */
/* ------------------------------------------------------------------------ */

struct DLManagedTensor;

/* Exports arr without copying, after waiting for pending writes to it.
 * On success *out is owned by the caller, who must eventually call
 * (*out)->deleter(*out); the storage stays alive until then, even if arr is
 * freed. Writing through the exported pointer while mxc work on the array
 * is pending is a data race: wait first. Dense arrays only. */
MXC_API int mxc_ndarray_to_dlpack(mxc_ndarray arr,
                                  struct DLManagedTensor **out);

/* Imports a DLPack tensor without copying. Accepted: a kDLCPU tensor, or a
 * kDLCUDA one on a GPU mxc can use (device_id N becomes gpu(N); otherwise
 * MXC_ERR_UNSUPPORTED with the reason), a dtype mxc knows, compact
 * row-major layout (strides NULL or row-major). CUDA memory is taken as it
 * is: the producer's work writing it must be complete or enqueued on the
 * legacy default stream (which mxc's GPU streams wait for), as with
 * torch.utils.dlpack.to_dlpack of a tensor computed on torch's default
 * stream.
 * On success mxc owns tensor: it calls tensor->deleter (if not NULL) once
 * the array and every view of it are freed and their work has finished;
 * *out is a new handle owned by the caller. On failure the caller keeps
 * ownership of tensor and nothing is called. */
MXC_API int mxc_ndarray_from_dlpack(struct DLManagedTensor *tensor,
                                    mxc_ndarray *out);

/* ------------------------------------------------------------------------ */
/* Pushing user functions to the engine                                      */
/* ------------------------------------------------------------------------ */

/* Context handed to a pushed function while it runs. Valid only during the
 * call (synchronous functions) or until mxc_opctx_complete (asynchronous
 * ones). It is a handle like the others: a context used after that, a
 * second mxc_opctx_complete, or a handle of another kind given as a
 * context fails with MXC_ERR_INVALID_HANDLE (NULL: MXC_ERR_INVALID_ARGUMENT)
 * and touches nothing.
 *
 * What a pushed function (and its on_free) may call: any mxc function
 * except those that wait for the engine (mxc_wait_all, mxc_ndarray_wait_*,
 * host copies, save, nnz and other calls documented as waiting,
 * mxc_set_num_threads), which fail with MXC_ERR_REENTRANT there because
 * they could wait for the function itself; the same holds on the engine's
 * worker threads and in a DLPack deleter run by mxc. Pushing more work,
 * invoking operators and freeing arrays, including the function's own
 * (their storage stays alive until the function has ended), work. An
 * asynchronous function's completion must not wait, in another thread,
 * for work that depends on the function (a deadlock mxc cannot see).
 * Since 1.1 for the errors; 1.0 could deadlock or crash. */
typedef struct mxc_opctx_s *mxc_opctx;

/* A synchronous function: returns MXC_OK or an error code; it may call
 * mxc_opctx_set_error to give a message. It runs on an engine thread (or the
 * pushing thread with MXC_ENGINE=naive) once every earlier write to its read
 * arrays and every earlier read or write of its write arrays has finished. */
typedef int (*mxc_engine_fn)(void *user_data, mxc_opctx ctx);

/* An asynchronous function: starts work and returns; the work later calls
 * mxc_opctx_complete exactly once, from any thread. */
typedef void (*mxc_engine_async_fn)(void *user_data, mxc_opctx ctx);

/* Called once after the function ran (or was skipped because an input had
 * failed), to release user_data. May be NULL. */
typedef void (*mxc_free_fn)(void *user_data);

/* Pushes fn to run asynchronously with read access to reads[0..n_reads) and
 * write access to writes[0..n_writes). The array handles are not kept: the
 * caller may free them at once; storage stays alive until fn has run.
 * An array both read and written counts as written. priority: higher runs
 * earlier among ready work (a hint). name: copied, used in error messages
 * (may be NULL: "user_fn"). If a read array carries a failure, fn is
 * skipped and the failure passes to the write arrays. If fn fails, its
 * write arrays carry the failure to later work and waits.
 * On failure to push nothing runs, and on_free is not called. */
MXC_API int mxc_engine_push(mxc_engine_fn fn, void *user_data,
                            mxc_free_fn on_free, const mxc_ndarray *reads,
                            int n_reads, const mxc_ndarray *writes,
                            int n_writes, int priority, const char *name);

/* As mxc_engine_push for an asynchronous function. */
MXC_API int mxc_engine_push_async(mxc_engine_async_fn fn, void *user_data,
                                  mxc_free_fn on_free,
                                  const mxc_ndarray *reads, int n_reads,
                                  const mxc_ndarray *writes, int n_writes,
                                  int priority, const char *name);

/* Inside a pushed function: *out_data = the data pointer of array index,
 * where indices 0..n_reads-1 are the read arrays and n_reads.. the write
 * arrays, in push order; *out_nbytes (may be NULL) = its size in bytes. */
MXC_API int mxc_opctx_data(mxc_opctx ctx, int index, void **out_data,
                           size_t *out_nbytes);

/* Inside a synchronous pushed function: attaches a message to the failure
 * the function is about to return. The message is copied. */
MXC_API int mxc_opctx_set_error(mxc_opctx ctx, const char *message);

/* Ends an asynchronous function: code MXC_OK or an error code, message (may
 * be NULL) copied. Call exactly once; ctx is invalid afterwards. */
MXC_API int mxc_opctx_complete(mxc_opctx ctx, int code, const char *message);

/* ------------------------------------------------------------------------ */
/* Storage statistics                                                        */
/* ------------------------------------------------------------------------ */

#define MXC_STORAGE_BYTES_IN_USE 0  /* bytes handed to arrays now */
#define MXC_STORAGE_BYTES_CACHED 1  /* bytes kept by the pool for reuse */
#define MXC_STORAGE_PEAK_IN_USE 2   /* highest BYTES_IN_USE so far */
#define MXC_STORAGE_ALLOC_COUNT 3   /* allocations served */
#define MXC_STORAGE_POOL_HITS 4     /* allocations served from the cache */

/* *out = the statistic `stat` (MXC_STORAGE_*) of a device's allocator. */
MXC_API int mxc_storage_stat(int dev_type, int dev_id, int stat,
                             int64_t *out);

/* Returns every cached block of a device's pool to the system. */
MXC_API int mxc_storage_release_cached(int dev_type, int dev_id);

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */
/* ------------------------------------------------------------------------ */

/* An operator of the registry. Operator handles are static: valid for the
 * life of the process, never freed, shareable between threads. */
typedef const struct mxc_op_s *mxc_op;

/* Output write modes for mxc_op_invoke. */
#define MXC_REQ_NULL 0  /* leave this output alone */
#define MXC_REQ_WRITE 1 /* overwrite it */
#define MXC_REQ_ADD 3   /* add the result to it (gradient accumulation) */

/* *out = number of public operators. */
MXC_API int mxc_op_count(int *out);

/* *out = the index-th operator (0 <= index < count), sorted by name. */
MXC_API int mxc_op_at(int index, mxc_op *out);

/* *out = the operator with this name or alias; MXC_ERR_NOT_FOUND names it
 * otherwise. */
MXC_API int mxc_op_find(const char *name, mxc_op *out);

/* *out = the operator's canonical name / documentation (static strings,
 * never freed). */
MXC_API int mxc_op_name(mxc_op op, const char **out);
MXC_API int mxc_op_doc(mxc_op op, const char **out);

/* Parameters: *out = count; then for each index: name, type ("int",
 * "float", "boolean", "{'max', 'avg'}", "Shape(tuple)", "dtype", "int or
 * None", "float or None"), default value as a string (NULL when the
 * parameter is required) and documentation. All strings are static. Any out-pointer may be NULL. */
MXC_API int mxc_op_num_params(mxc_op op, int *out);
MXC_API int mxc_op_param(mxc_op op, int index, const char **out_name,
                         const char **out_type, const char **out_default,
                         const char **out_doc);

/* Declared inputs: *out_n names; *out_variadic = 1 when the actual count
 * comes from a parameter (then the one name describes every input, e.g.
 * "args"). Input names are static. */
MXC_API int mxc_op_inputs(mxc_op op, int *out_n, int *out_variadic);
MXC_API int mxc_op_input_name(mxc_op op, int index, const char **out);

/* Input and visible output counts for the given parameters (keys/vals: n
 * UTF-8 strings each; n may be 0). */
MXC_API int mxc_op_num_inputs(mxc_op op, const char *const *keys,
                              const char *const *vals, int n, int *out);
MXC_API int mxc_op_num_outputs(mxc_op op, const char *const *keys,
                               const char *const *vals, int n, int *out);

/* Invokes an operator imperatively. Parameters are n_params string
 * key/value pairs (copied). inputs: n_inputs arrays. outputs: n_outputs
 * slots (the count mxc_op_num_outputs gives): a NULL slot receives a new
 * array owned by the caller (free with mxc_ndarray_free); a non-NULL slot
 * is written according to reqs[i] (MXC_REQ_*; reqs may be NULL for all
 * MXC_REQ_WRITE). Parameter, arity, shape and dtype errors are reported
 * here, before anything runs, and leave outputs untouched. The computation
 * itself runs asynchronously (a call on small arrays whose earlier work is
 * done may run in the calling thread before it returns); either way a
 * failure inside it surfaces at the next wait on an output. n_inputs and
 * n_outputs may each be up to 1 << 20 (a sanity bound, not a design cap:
 * variadic operators such as Concat, add_n, stack and split take as many
 * arrays as memory allows below it).
 * Devices: every array of a call must be on one device (else
 * MXC_ERR_INVALID_ARGUMENT). A dense call on gpu(N) whose operator has no
 * GPU kernel for its dtypes runs on the CPU (device fallback): the inputs
 * are copied to host memory, the CPU kernel runs there and the outputs
 * (and inputs the operator updates) are copied back, all ordered by the
 * engine like any call; created outputs are on gpu(N) and MXC_REQ_ADD
 * adds onto the GPU output's values. Each distinct case (operator, dtypes,
 * device) logs one MXC_LOG_WARNING line (see "Logging"); the environment
 * variable MXC_DEVICE_FALLBACK_LOG=0 silences it, MXC_DEVICE_FALLBACK=0
 * refuses such calls instead (MXC_ERR_UNSUPPORTED). A failing copy or
 * CPU kernel surfaces at the next wait, naming the operator. */
MXC_API int mxc_op_invoke(mxc_op op, const char *const *keys,
                          const char *const *vals, int n_params,
                          const mxc_ndarray *inputs, int n_inputs,
                          mxc_ndarray *outputs, int n_outputs,
                          const int *reqs);

/* Sets whether operators invoked from the calling thread run in training
 * mode (Dropout active, BatchNorm using batch statistics). *out_prev (may
 * be NULL) receives the previous mode. Per thread; default 0. */
MXC_API int mxc_set_training(int is_train, int *out_prev);

/* ------------------------------------------------------------------------ */
/* Custom operators                                                          */
/* ------------------------------------------------------------------------ */

/* Operators whose computation is user code, as MXNet's custom operators:
 * register callbacks under a name, then invoke the operator "Custom" with
 * the parameter op_type=NAME (imperatively, under autograd, or as a graph
 * node {"op": "Custom", "attrs": {"op_type": NAME, ...}}). Every other
 * parameter of the call is passed to the callbacks as strings.
 *
 * Callbacks run like operator kernels: on an engine worker (or in the
 * calling thread), possibly concurrently for different calls, so they
 * must be thread-safe with respect to their user_data. Calls into mxc
 * from a callback follow the rules of pushed functions (mxc_engine_push):
 * creating arrays and invoking operators work (asynchronously); waiting
 * (mxc_wait_all, mxc_ndarray_wait_*, copies to host of pending arrays)
 * fails with MXC_ERR_REENTRANT instead of deadlocking. Registering and
 * unregistering work from anywhere, callbacks included. */

/* One array as a callback sees it: row-major data of `dtype` (MXC_DTYPE_*)
 * with ndim extents; valid during the callback only. */
typedef struct mxc_custom_tensor {
  void *data;
  int ndim;
  const int64_t *shape;
  int dtype;
} mxc_custom_tensor;

/* What every callback gets besides its arrays (valid during the call):
 * the user_data of the registration, the call's parameters other than
 * op_type (n_kw UTF-8 key/value pairs), whether it runs in training mode,
 * and a buffer of msg_len bytes where a failing callback may write a
 * NUL-terminated reason (the operator error quotes it). */
typedef struct mxc_custom_call {
  void *user_data;
  int n_kw;
  const char *const *keys;
  const char *const *vals;
  int is_train;
  char *msg;
  size_t msg_len;
} mxc_custom_call;

/* Shape inference, called when every input shape is known: in_ndim/in_dims
 * and out_ndim/out_dims hold n_in and n_out shapes, MXC_MAX_NDIM extents
 * each (array i at dims + i * MXC_MAX_NDIM); unknown output shapes have
 * ndim -1. Fill every output shape (ndim 0..MXC_MAX_NDIM, extents >= 0).
 * Return 0, or nonzero for bad shapes (an MXC_ERR_SHAPE naming the
 * operator and the reason written to msg). */
typedef int (*mxc_custom_infer_shape_fn)(const mxc_custom_call *call,
                                         int n_in, const int *in_ndim,
                                         const int64_t *in_dims, int n_out,
                                         int *out_ndim, int64_t *out_dims);

/* Forward: compute out[i] from in; req[i] is MXC_REQ_WRITE (overwrite),
 * MXC_REQ_ADD (add into out[i]) or MXC_REQ_NULL (leave it). Inputs must
 * not be written. Return 0, or nonzero on failure. */
typedef int (*mxc_custom_forward_fn)(const mxc_custom_call *call, int n_in,
                                     const mxc_custom_tensor *in, int n_out,
                                     const mxc_custom_tensor *out,
                                     const int *req);

/* Backward: given the gradients of the outputs (ograd, n_out), the
 * forward's inputs (in, n_in) and outputs (out, n_out), write the
 * gradients of the inputs into igrad (n_in, per req as in forward).
 * Return 0, or nonzero on failure. */
typedef int (*mxc_custom_backward_fn)(const mxc_custom_call *call, int n_in,
                                      int n_out,
                                      const mxc_custom_tensor *ograd,
                                      const mxc_custom_tensor *in,
                                      const mxc_custom_tensor *out,
                                      const mxc_custom_tensor *igrad,
                                      const int *req);

/* A custom operator. num_inputs/num_outputs: 1..64. infer_shape NULL:
 * every output is shaped like input 0. Output dtypes are input 0's (every
 * input must share it). backward NULL: the operator has no gradient
 * (autograd and executor backward report an error naming it). destroy
 * (may be NULL) is called once with user_data when the operator is
 * unregistered and no call is running any more (by the thread finishing
 * the last call), never if it stays registered until the process ends. */
typedef struct mxc_custom_op_def {
  int num_inputs;
  int num_outputs;
  mxc_custom_infer_shape_fn infer_shape;
  mxc_custom_forward_fn forward;
  mxc_custom_backward_fn backward;
  void (*destroy)(void *user_data);
  void *user_data;
} mxc_custom_op_def;

/* Registers a custom operator under name (UTF-8, 1..127 bytes; copied).
 * *def is copied; the callbacks and user_data must stay usable until
 * destroy is called (or for ever without destroy). Errors:
 * MXC_ERR_INVALID_ARGUMENT for a NULL or bad name, a NULL def or forward,
 * counts out of range, or a name already registered (unregister it
 * first); nothing is registered then (and destroy is not called).
 * Thread-safe. Since 1.1. */
MXC_API int mxc_custom_op_register(const char *name,
                                   const mxc_custom_op_def *def);

/* Unregisters name: later calls of Custom with op_type=name fail with
 * MXC_ERR_NOT_FOUND (graphs and recorded gradients that use it included);
 * calls already running finish normally, then destroy runs. The name may
 * be registered again at once. MXC_ERR_NOT_FOUND when name is not
 * registered. Thread-safe. Since 1.1. */
MXC_API int mxc_custom_op_unregister(const char *name);

/* ------------------------------------------------------------------------ */
/* Data iterators                                                            */
/* ------------------------------------------------------------------------ */

/* An iterator over batches of a data set. Thread-safety: the one exception
 * to "any function from any thread": calls on the same iterator must not
 * overlap (it has a cursor); use one iterator per thread or serialize the
 * calls. Different iterators may be used concurrently. */
typedef struct mxc_data_iter_s *mxc_data_iter;

/* What happens to the last, incomplete batch of an epoch. */
#define MXC_LAST_BATCH_PAD 0     /* fill it up from the epoch's start */
#define MXC_LAST_BATCH_DISCARD 1 /* skip it */

/* An iterator over IDX files (the MNIST format), plain or gzip-compressed
 * (recognized by content, not by name): images_path holds a 3-d file
 * (count, rows, cols), labels_path a 1-d file of count labels, of any IDX
 * element type. Both files are read completely here; a missing,
 * truncated or corrupt file, or mismatched counts, give MXC_ERR_IO naming
 * the file and the problem.
 * batch_size > 0. shuffle != 0 visits the examples of each epoch in a
 * permutation that depends only on (seed, epoch number); otherwise in file
 * order. flat != 0 gives data batches of shape (batch_size, rows * cols),
 * flat == 0 (batch_size, 1, rows, cols). scale != 0 multiplies pixel
 * values by 1/255. last_batch is MXC_LAST_BATCH_PAD or
 * MXC_LAST_BATCH_DISCARD. Data and labels are float32 CPU arrays.
 * The paths are not kept. On success *out is a new iterator owned by the
 * caller, positioned before the first batch of epoch 0; free it with
 * mxc_data_iter_free. */
MXC_API int mxc_data_iter_idx_create(const char *images_path,
                                     const char *labels_path,
                                     int64_t batch_size, int shuffle,
                                     uint64_t seed, int flat, int scale,
                                     int last_batch, mxc_data_iter *out);

/* Frees an iterator. Arrays obtained from it stay valid (each holds its
 * own reference). Accepts NULL. */
MXC_API void mxc_data_iter_free(mxc_data_iter it);

/* Advances to the next batch of the epoch: *out_has_batch = 1 when there
 * is one, 0 at the end of the epoch (then there is no current batch until
 * mxc_data_iter_reset). Each batch is a new pair of arrays: arrays obtained
 * for earlier batches keep their contents. */
MXC_API int mxc_data_iter_next(mxc_data_iter it, int *out_has_batch);

/* *out = a new handle on the current batch's data (owned by the caller;
 * free it with mxc_ndarray_free). It
 * stays valid and unchanged after next, reset and free of the iterator.
 * MXC_ERR_INVALID_ARGUMENT when there is no current batch. */
MXC_API int mxc_data_iter_data(mxc_data_iter it, mxc_ndarray *out);

/* *out = a new handle on the current batch's labels, shape (batch_size);
 * ownership and errors as mxc_data_iter_data. */
MXC_API int mxc_data_iter_label(mxc_data_iter it, mxc_ndarray *out);

/* *out = how many trailing examples of the current batch are padding
 * (repeated from the start of the epoch's order; 0 except for the last
 * batch with MXC_LAST_BATCH_PAD). MXC_ERR_INVALID_ARGUMENT when there is
 * no current batch. */
MXC_API int mxc_data_iter_pad(mxc_data_iter it, int64_t *out);

/* Starts the next epoch: positions the iterator before its first batch
 * and, with shuffling, draws the epoch's permutation. */
MXC_API int mxc_data_iter_reset(mxc_data_iter it);

/* *out = number of examples in the data set (in the iterator's part,
 * once mxc_data_iter_set_parts has chosen one). */
MXC_API int mxc_data_iter_num_examples(mxc_data_iter it, int64_t *out);

/* Shards the data set, as MXNet's num_parts / part_index: from now on
 * the iterator reads only part part_index of num_parts. For every kind of
 * iterator the num_parts parts are disjoint and together hold every
 * example of the data set exactly once:
 *  - IDX and image record iterators: the contiguous range of examples
 *    [n*part_index/num_parts, n*(part_index+1)/num_parts) of the file's
 *    n, in file order; shuffling permutes within the part (still a
 *    function of seed and epoch only); mxc_data_iter_num_examples gives
 *    the part's size. The image record iterator refuses a part without
 *    records (MXC_ERR_IO; the part stays as it was); an empty IDX part
 *    gives epochs without batches.
 *  - LibSVM and CSV iterators (streamed): round robin, the file's data
 *    rows e = 0, 1, ... (blank lines, comments and headers not counted)
 *    with e % num_parts == part_index, the others stepped over unparsed
 *    (so their errors are not seen by this part); a CSV label file stays
 *    in step. No pass over the file is needed to know its size.
 * Batches, padding (from the start of the part's epoch) and
 * MXC_LAST_BATCH_DISCARD / round_batch apply to the part as if it were
 * the whole data set. Call it before the first mxc_data_iter_next or
 * right after a successful mxc_data_iter_reset (at an epoch's start); it
 * applies to that epoch and every later one. A new iterator reads part 0
 * of 1 (the image record iterator: its num_parts / part_index
 * parameters, which this call replaces).
 * it: borrowed, not kept; calls on one iterator must not overlap, as for
 * every iterator call. Errors: MXC_ERR_INVALID_ARGUMENT for num_parts
 * outside [1, 2^30], part_index outside [0, num_parts), or a call after
 * the epoch's first mxc_data_iter_next (a message says which); the part
 * is then unchanged. Since 1.1. */
MXC_API int mxc_data_iter_set_parts(mxc_data_iter it, int64_t num_parts,
                                    int64_t part_index);

/* Iterators over text files: LibSVM (sparse features) and CSV (dense).
 * Both stream the file: each mxc_data_iter_next reads the next batch_size
 * rows, so memory stays bounded by one batch however large the file is.
 * Rows come in file order (no shuffling). They share mxc_data_iter_next,
 * _data, _label, _pad, _reset and _free with the IDX iterator, with the
 * same ownership: _data and _label give a new handle per call (owned by
 * the caller, free with mxc_ndarray_free) on the current batch, which
 * stays valid and unchanged after next, reset and free of the iterator.
 * Differences from the IDX iterator:
 *  - MXC_LAST_BATCH_PAD fills the last, short batch with the first rows of
 *    the file (cycling through them when the file has fewer rows than a
 *    batch); mxc_data_iter_pad says how many.
 *  - mxc_data_iter_num_examples is known once an epoch has been read to
 *    its end (with MXC_LAST_BATCH_DISCARD the discarded rows count too);
 *    before that it fails with MXC_ERR_UNSUPPORTED.
 *  - A malformed line is found when its batch is read: mxc_data_iter_next
 *    fails with MXC_ERR_IO and a message "...: FILE:LINE: what was wrong".
 *    After any failed next, every next fails until mxc_data_iter_reset
 *    (the file position is lost); the current batch stays as it was.
 * Thread-safety as for every iterator (calls on one iterator must not
 * overlap). The paths are copied. On success *out is a new iterator owned
 * by the caller, positioned before the first batch; free it with
 * mxc_data_iter_free. A missing file is MXC_ERR_IO; bad arguments are
 * MXC_ERR_INVALID_ARGUMENT. */

/* LibSVM lines "label idx:val idx:val ...": one numeric label, then
 * features with decimal indices strictly increasing within the line and
 * float32 values; spaces or tabs between tokens; '#' starts a comment;
 * blank lines are skipped. Indices are 0-based, or 1-based with
 * one_based != 0, and must be < num_features (> 0), else the line is an
 * error. Data batches are CSR float32 arrays of shape (batch_size,
 * num_features) with int64 indices, already checked well formed; labels
 * are dense float32 arrays of shape (batch_size). */
MXC_API int mxc_data_iter_libsvm_create(const char *path,
                                        int64_t num_features,
                                        int64_t batch_size, int one_based,
                                        int last_batch, mxc_data_iter *out);

/* CSV rows of float32 numbers separated by ',' (no quoting, no empty
 * fields), every row with the same number of fields: num_cols, or with
 * num_cols == 0 the count of the first row. header != 0 skips the first
 * line of the data file (and of the label file). Labels, optional: either
 * label_col >= 0, that column of each row (the data are the other
 * columns), or label_path != NULL, a second CSV file whose k-th row holds
 * the k-th data row's labels (the same count in every row; the files must
 * have the same number of rows); label_col = -1 and label_path = NULL for
 * none, and then mxc_data_iter_label fails with MXC_ERR_NOT_FOUND.
 * Data batches are dense float32 (batch_size, columns); labels float32
 * (batch_size) for one label per row, else (batch_size, labels per row). */
MXC_API int mxc_data_iter_csv_create(const char *data_path,
                                     const char *label_path, int64_t num_cols,
                                     int64_t batch_size, int header,
                                     int64_t label_col, int last_batch,
                                     mxc_data_iter *out);

/* An iterator over a RecordIO file of image records (im2rec's layout: a
 * header with the label(s), then a JPEG or PNG image), with MXNet
 * ImageRecordIter's parameters and meaning, given as n_params string
 * key/value pairs (copied; MXNet's spelling):
 *   path_imgrec (required)   the .rec file; path_imgidx is accepted and
 *                            not needed (offsets come from a scan of the
 *                            record headers);
 *   data_shape (required)    "(C, H, W)", C 1 (gray) or 3 (RGB);
 *   batch_size (required);   label_width (1): labels per example;
 *   shuffle (0), seed (0):   a new order per epoch from (seed, epoch);
 *   round_batch (1):         1 fills the last batch from the epoch's start
 *                            (reported as pad), 0 drops it;
 *   num_parts (1), part_index (0): this worker reads records
 *                            [n*part_index/num_parts, n*(part_index+1)/
 *                            num_parts) of the file's n (or later
 *                            mxc_data_iter_set_parts);
 *   preprocess_threads (2), prefetch_buffer (4): decoding threads, and
 *                            how many batches they may run ahead;
 *   resize (-1): shorter side scaled to this first; pad (0): a border of
 *   fill_value pixels added before cropping; rand_crop (0),
 *   rand_mirror (0), max_rotate_angle (0, degrees), fill_value (255),
 *   brightness, contrast, saturation (0: jitter strengths in [0, 1]),
 *   mean_r/g/b (0), std_r/g/b (1), scale (1): out = (v - mean) / std *
 *   scale per channel (gray uses the _r values);
 *   mean_img (none):         a file (path copied) holding an array named
 *                            "mean_img" of shape data_shape (float32,
 *                            MXNet's NDArray format or mxc's), subtracted
 *                            per pixel instead of mean_r/g/b (giving both
 *                            is MXC_ERR_INVALID_ARGUMENT); when the file
 *                            does not exist, the mean over every record
 *                            of the file (deterministic steps only: no
 *                            random augmentation, no normalization) is
 *                            computed here and saved there atomically. A
 *                            file without that array is MXC_ERR_IO,
 *                            another dtype MXC_ERR_DTYPE, another shape
 *                            MXC_ERR_SHAPE (the message names the file
 *                            and both shapes).
 * Data batches are float32 (batch_size, C, H, W), labels float32
 * (batch_size) or (batch_size, label_width). The augmentation is defined
 * exactly in core/io/image_aug.h; an example's result depends only on
 * (seed, epoch, record index), so batches are the same for any thread
 * count. Unknown keys and bad values are MXC_ERR_INVALID_ARGUMENT naming
 * them; an unreadable file MXC_ERR_IO; a record that cannot be decoded
 * fails the mxc_data_iter_next that reaches its batch with MXC_ERR_IO
 * naming the record. On success *out is a new iterator owned by the
 * caller (free it with mxc_data_iter_free, which stops its threads). One
 * thread at a time per iterator, like every iterator. Since 1.1. */
MXC_API int mxc_data_iter_image_record_create(int n_params,
                                              const char *const *keys,
                                              const char *const *vals,
                                              mxc_data_iter *out);

/* ------------------------------------------------------------------------ */
/* Training: initializers and metrics                                        */
/* ------------------------------------------------------------------------ */

/* Fills a dense float32 or float64 array by `method` with string
 * parameters keys[i] = vals[i] (n_params >= 0; keys and vals may be NULL
 * when it is 0; each key at most once). Methods and their keys:
 *  - "zeros", "ones": no parameters.
 *  - "constant": value (required).
 *  - "uniform": U(-scale, scale); scale >= 0, default 0.07.
 *  - "normal": N(0, sigma^2); sigma >= 0, default 0.01.
 *  - "xavier" (as MXNet's Xavier): rnd_type "uniform" (default) or
 *    "gaussian", factor_type "avg" (default), "in" or "out", magnitude > 0
 *    (default 3). fan_in = shape[1] * prod(shape[2:]), fan_out = shape[0] *
 *    prod(shape[2:]); factor = fan_in, fan_out or their mean; scale =
 *    sqrt(magnitude / factor); values U(-scale, scale) or N(0, scale^2).
 *  - "msra" (as MXNet's MSRAPrelu): xavier gaussian with factor_type
 *    (default "avg") and magnitude 2 / (1 + slope^2); slope default 0
 *    (magnitude 2; MXNet's own default slope is 0.25).
 * xavier and msra need at least 2 dimensions (MXC_ERR_SHAPE otherwise).
 * Random values come from the stream of mxc_random_seed, reserved at call
 * time in the calling thread: the same seed and sequence of calls give the
 * same values whatever the engine kind or thread count.
 * Asynchronous: returns once the fill is scheduled as a write of arr; later
 * reads (copies, operators, waits) see the values. Errors: unknown method
 * MXC_ERR_NOT_FOUND; unknown key (the message lists the method's keys) or
 * bad value MXC_ERR_INVALID_ARGUMENT; other dtypes MXC_ERR_DTYPE; sparse
 * arrays MXC_ERR_STYPE. On failure nothing is scheduled and no random
 * numbers are consumed. The strings are not kept. */
MXC_API int mxc_init_array(mxc_ndarray arr, const char *method,
                           const char *const *keys, const char *const *vals,
                           int n_params);

/* Classification accuracy. pred is (N, K) scores, whose per-row argmax
 * (the first maximum on ties) is the predicted class, or (N) class ids;
 * label is (N). Both are rounded to the nearest integer before comparing.
 * Dtypes float32, float64, int32, int64, int8, uint8. Synchronous: waits
 * for pending writes of both arrays and reports their failures.
 * On success *out_correct = matching rows, *out_count = N. Shape
 * mismatches give MXC_ERR_SHAPE naming both shapes. Outputs untouched on
 * failure. */
MXC_API int mxc_metric_accuracy(mxc_ndarray pred, mxc_ndarray label,
                                int64_t *out_correct, int64_t *out_count);

/* Cross-entropy of predicted probabilities. prob is (N, K), label (N) with
 * values that round to a class in [0, K) (MXC_ERR_INVALID_ARGUMENT
 * otherwise, naming the row); eps finite and >= 0. On success *out_sum =
 * sum over rows i of -log(max(prob[i, label_i], eps)) (divide by
 * *out_count = N for the mean). Dtypes, waiting and errors as
 * mxc_metric_accuracy. Outputs untouched on failure. */
MXC_API int mxc_metric_cross_entropy(mxc_ndarray prob, mxc_ndarray label,
                                     double eps, double *out_sum,
                                     int64_t *out_count);

/* ------------------------------------------------------------------------ */
/* Sparse arrays (CSR and row_sparse)                                        */
/* ------------------------------------------------------------------------ */

/* A sparse array is an mxc_ndarray whose stype is MXC_STYPE_CSR or
 * MXC_STYPE_ROW_SPARSE; its shape, size and dtype (that of the stored
 * values) read as for dense arrays, and it is freed, waited on and copied
 * (mxc_ndarray_copy, to a sparse array of the same storage type, shape and
 * dtype) like one. Only non-zero entries are stored:
 *  - CSR, shape (rows, cols): data holds nnz values, indptr rows + 1
 *    offsets, indices nnz column indices; row r holds the columns
 *    indices[indptr[r] .. indptr[r+1]) with the matching values;
 *  - row_sparse, shape (rows, d1, ...): data holds nnz rows (shape (nnz,
 *    d1, ...), the storage shape), indices their nnz row indices.
 * Index arrays are int64 or int32 (the index dtype; int32 only when the
 * extents and nnz fit it). A well-formed array has indptr[0] = 0,
 * indptr non-decreasing, indptr[rows] = nnz, column indices in [0, cols)
 * and strictly increasing within each row, row indices in [0, rows) and
 * strictly increasing (see mxc_ndarray_check_format). Operators check
 * their sparse inputs and fail with MXC_ERR_INVALID_ARGUMENT naming the
 * first bad position instead of reading out of bounds.
 * Slices, reshapes, host copies, DLPack export and mxc_engine_push refuse
 * sparse arrays with MXC_ERR_STYPE; cast_storage them to dense first.
 * Executors accept sparse arguments and gradients (see "Executors").
 * mxc_op_invoke runs an operator's sparse kernel when it has
 * one for the storage types of the call; otherwise (storage fallback) the
 * sparse inputs are converted to dense temporaries, the dense kernel runs,
 * outputs it creates are dense and sparse given outputs receive the
 * result cast back (MXC_REQ_ADD adds through a dense copy). Each distinct
 * fallback (operator, input and output storage types) logs one
 * MXC_LOG_WARNING line naming them and the parameters (see "Logging");
 * the environment variable MXC_STORAGE_FALLBACK_LOG=0 silences it.
 * Devices: row_sparse arrays live on the CPU; CSR arrays may also live on
 * gpu(N) (MXC_ERR_UNSUPPORTED where no GPU can be used), created there
 * from host buffers (checked in full first: a GPU CSR array is always
 * well-formed) or copied there with mxc_ndarray_copy (from a CPU or GPU
 * CSR array); mxc_ndarray_nnz, _sparse_data and _aux work on them (the
 * parts are dense arrays on the same GPU). On a GPU only `dot` of a CSR
 * lhs and a dense rhs (transpose_a allowed) has a sparse kernel; other
 * calls with sparse arrays there fail with MXC_ERR_UNSUPPORTED naming the
 * operator and storage types (no storage fallback off the CPU).
 * Thread-safety as for dense arrays. */

/* Aux arrays (mxc_ndarray_aux `which`). */
#define MXC_CSR_INDPTR 0
#define MXC_CSR_INDICES 1
#define MXC_ROW_SPARSE_INDICES 0

/* Creates a CSR array of shape (shape[0], shape[1]) from host buffers,
 * copying them: data (nnz values of dtype), indptr (shape[0] + 1 values)
 * and indices (nnz values), both of index_dtype (MXC_DTYPE_INT64 or
 * MXC_DTYPE_INT32). nnz in 0..shape[0] * shape[1]. data and indices may be
 * NULL when nnz is 0; indptr may be NULL when nnz is 0, which makes an
 * all-zero array. Sizes are checked here (MXC_ERR_INVALID_ARGUMENT,
 * MXC_ERR_SHAPE, MXC_ERR_DTYPE); the index values are not, until
 * mxc_ndarray_check_format or the first operator that reads them.
 * On success *out is a new array owned by the caller (mxc_ndarray_free). */
MXC_API int mxc_ndarray_create_csr(const int64_t *shape, int dtype,
                                   int index_dtype, const void *data,
                                   const void *indptr, const void *indices,
                                   int64_t nnz, int dev_type, int dev_id,
                                   mxc_ndarray *out);

/* Creates a row_sparse array of the given shape (ndim in 1..MXC_MAX_NDIM)
 * from host buffers, copying them: data (nnz rows of shape[1..] values of
 * dtype) and row_idx (nnz values of index_dtype). nnz in 0..shape[0];
 * data and row_idx may be NULL when nnz is 0 (an all-zero array). Checks
 * and ownership as mxc_ndarray_create_csr. */
MXC_API int mxc_ndarray_create_row_sparse(const int64_t *shape, int ndim,
                                          int dtype, int index_dtype,
                                          const void *data,
                                          const void *row_idx, int64_t nnz,
                                          int dev_type, int dev_id,
                                          mxc_ndarray *out);

/* *out = number of stored entries (CSR: values; row_sparse: rows), after
 * waiting for pending writes to arr (their failures are reported as by
 * mxc_ndarray_wait_to_read). Dense arrays: MXC_ERR_STYPE. */
MXC_API int mxc_ndarray_nnz(mxc_ndarray arr, int64_t *out);

/* *out = a new dense array (owned by the caller) holding a copy of the
 * stored values: shape (nnz) for CSR, the storage shape (nnz, d1, ...) for
 * row_sparse. Waits for pending writes to arr first. Dense arrays:
 * MXC_ERR_STYPE. */
MXC_API int mxc_ndarray_sparse_data(mxc_ndarray arr, mxc_ndarray *out);

/* *out = a new dense array (owned by the caller, of the index dtype)
 * holding a copy of aux array `which`: MXC_CSR_INDPTR or MXC_CSR_INDICES
 * for CSR, MXC_ROW_SPARSE_INDICES for row_sparse (other values:
 * MXC_ERR_INVALID_ARGUMENT). Waits for pending writes to arr first.
 * Dense arrays: MXC_ERR_STYPE. */
MXC_API int mxc_ndarray_aux(mxc_ndarray arr, int which, mxc_ndarray *out);

/* Checks that arr is well formed, after pending writes to it. full = 0:
 * the ends of indptr only (constant time); nonzero: every rule above.
 * A violation is MXC_ERR_INVALID_ARGUMENT whose message names the first
 * bad position ("csr indices[7] = 3 (row 2) is not greater than
 * indices[6] = 3 ..."); it does not mark arr as failed. Dense arrays are
 * always well formed (MXC_OK). */
MXC_API int mxc_ndarray_check_format(mxc_ndarray arr, int full);

/* *out = a new array (owned by the caller) holding arr's values in
 * storage type stype (MXC_STYPE_*), the same as the operator cast_storage
 * (stype "default", "row_sparse" or "csr") through mxc_op_invoke.
 * Asynchronous: returns once the cast is pushed; its failures (for
 * example a malformed sparse arr) are reported by the next wait on *out.
 * CSR needs a 2-d arr (MXC_ERR_SHAPE); new sparse arrays have int64
 * indices. Not recorded by autograd. */
MXC_API int mxc_ndarray_cast_storage(mxc_ndarray arr, int stype,
                                     mxc_ndarray *out);

/* ------------------------------------------------------------------------ */
/* Strings and string lists returned by the library                         */
/* ------------------------------------------------------------------------ */

/* Frees a string the library returned through a `char **` out-parameter
 * (JSON, DOT, attribute values, debug text). Accepts NULL. */
MXC_API void mxc_string_free(char *s);

/* An immutable list of strings (argument names, output names, attribute
 * keys). Owned by the caller; free with mxc_str_list_free. */
typedef struct mxc_str_list_s *mxc_str_list;

MXC_API void mxc_str_list_free(mxc_str_list list);
MXC_API int mxc_str_list_size(mxc_str_list list, int *out);
/* *out = the index-th string, valid until the list is freed. */
MXC_API int mxc_str_list_get(mxc_str_list list, int index, const char **out);

/* ------------------------------------------------------------------------ */
/* Symbols: computation graphs                                               */
/* ------------------------------------------------------------------------ */

/* A symbol is a list of outputs of a graph of operator applications and
 * variables. Symbols are values: every function below that "makes" a
 * symbol returns a new handle owned by the caller (free it with
 * mxc_symbol_free) and leaves its arguments unchanged; graphs are shared
 * between symbols internally and freed with the last symbol using them.
 * Thread-safety: reading a symbol (listing, inference, JSON, binding) may
 * happen from any number of threads at once; mxc_symbol_set_attr must not
 * overlap with other uses of symbols sharing that node. */
typedef struct mxc_symbol_s *mxc_symbol;

/* A variable (a free input of a graph, to be bound to an array). Names
 * must be non-empty. Attributes understood by the library: "__shape__"
 * (e.g. "(128,784)", 0 = unknown dimension), "__dtype__" (a dtype number
 * as a string), "__lr_mult__", "__wd_mult__", "__init__"; other keys are
 * kept and saved. mxc_symbol_variable_ex sets n_attrs attributes at once
 * (keys/vals may be NULL when n_attrs is 0). */
MXC_API int mxc_symbol_variable(const char *name, mxc_symbol *out);
MXC_API int mxc_symbol_variable_ex(const char *name, const char *const *keys,
                                   const char *const *vals, int n_attrs,
                                   mxc_symbol *out);

/* Applies operator `op` with string parameters (n_params pairs) to inputs.
 * name: the node's name, or NULL for an automatic one (the lower-case
 * operator name and a process-wide counter: "fullyconnected0").
 * inputs: n_inputs single-output symbols. input_names: NULL to give
 * inputs positionally (the first n_inputs operator inputs), or n_inputs
 * operator input names ("data", "weight", ...) to give them by name.
 * Operator inputs not given become new variables named
 * "<name>_<input name>" ("fc1_weight", "bn1_moving_mean"). Errors: unknown
 * parameter or bad value, too many inputs, an unknown or repeated input
 * name, or an input symbol with more than one output
 * (MXC_ERR_INVALID_ARGUMENT, naming the operator and the input). */
MXC_API int mxc_symbol_create(mxc_op op, const char *const *keys,
                              const char *const *vals, int n_params,
                              const char *name, const char *const *input_names,
                              const mxc_symbol *inputs, int n_inputs,
                              mxc_symbol *out);

/* A new symbol in which free variables of sym are replaced by args (each
 * with one output): by variable name when names is non-NULL, otherwise
 * positionally in mxc_symbol_list_arguments order. A name that is not an
 * argument of sym is MXC_ERR_NOT_FOUND. */
MXC_API int mxc_symbol_compose(mxc_symbol sym, const char *const *names,
                               const mxc_symbol *args, int n_args,
                               mxc_symbol *out);

MXC_API void mxc_symbol_free(mxc_symbol sym);

/* A deep copy: a new graph with the same structure, names and attributes
 * (set_attr on the copy does not affect sym). */
MXC_API int mxc_symbol_copy(mxc_symbol sym, mxc_symbol *out);

/* A symbol whose outputs are the outputs of syms[0..n) in order (n >= 1). */
MXC_API int mxc_symbol_group(const mxc_symbol *syms, int n, mxc_symbol *out);

MXC_API int mxc_symbol_num_outputs(mxc_symbol sym, int *out);

/* A single-output symbol for output `index` of sym. */
MXC_API int mxc_symbol_output(mxc_symbol sym, int index, mxc_symbol *out);

/* A symbol whose outputs are every output of every node of sym (variables
 * included), in topological order; its output names ("fc1_output",
 * "fc1_weight") select one with mxc_symbol_output_by_name. */
MXC_API int mxc_symbol_internals(mxc_symbol sym, mxc_symbol *out);
MXC_API int mxc_symbol_output_by_name(mxc_symbol sym, const char *name,
                                      mxc_symbol *out);

/* *out = the name of a single-output symbol's node (a new string: free
 * with mxc_string_free). MXC_ERR_INVALID_ARGUMENT for groups. */
MXC_API int mxc_symbol_name(mxc_symbol sym, char **out);

/* Arguments (variables that are not auxiliary states), in the order
 * executors take them (depth-first, inputs before the node); outputs
 * ("<node>_output", or "<node>_<output name>" for multi-output
 * operators); auxiliary states (variables feeding operators' auxiliary
 * inputs, such as BatchNorm's moving statistics). */
MXC_API int mxc_symbol_list_arguments(mxc_symbol sym, mxc_str_list *out);
MXC_API int mxc_symbol_list_outputs(mxc_symbol sym, mxc_str_list *out);
MXC_API int mxc_symbol_list_auxiliary_states(mxc_symbol sym,
                                             mxc_str_list *out);

/* Attributes of a single-output symbol's node. set_attr adds or replaces
 * (operator parameters cannot be changed this way: MXC_ERR_INVALID_ARGUMENT).
 * get_attr: *out_found = 0 and *out = NULL when absent, else *out = a new
 * string (mxc_string_free). attr_keys lists the node's attribute keys. */
MXC_API int mxc_symbol_set_attr(mxc_symbol sym, const char *key,
                                const char *val);
MXC_API int mxc_symbol_get_attr(mxc_symbol sym, const char *key,
                                int *out_found, char **out);
MXC_API int mxc_symbol_attr_keys(mxc_symbol sym, mxc_str_list *out);

/* JSON in the Apache MXNet 1.x (NNVM) format: "nodes" (op, name, attrs,
 * inputs as [node, output, version]), "arg_nodes", "node_row_ptr",
 * "heads" and "attrs": {"mxnet_version": ["int", 10900]}. Loading also
 * accepts 0.x files ("param"/"attr" instead of "attrs") and applies the
 * upgrades MXNet applies to files of older versions (old attribute keys
 * such as lr_mult become "__lr_mult__", the moving statistics a 0.8
 * BatchNorm omits become variables, legacy operator names such as _Plus
 * resolve to current ones); to_json writes the upgraded graph. An
 * operator this build lacks is MXC_ERR_NOT_FOUND naming it; malformed JSON is
 * MXC_ERR_INVALID_ARGUMENT with the byte offset. to_json: *out is a new
 * string (mxc_string_free). save/load: a file path; I/O errors are
 * MXC_ERR_IO; save replaces the file atomically. */
MXC_API int mxc_symbol_to_json(mxc_symbol sym, char **out);
MXC_API int mxc_symbol_from_json(const char *json, mxc_symbol *out);
MXC_API int mxc_symbol_save(mxc_symbol sym, const char *path);
MXC_API int mxc_symbol_load(const char *path, mxc_symbol *out);

/* Graphviz DOT text of the graph (*out: mxc_string_free). When n_shapes >
 * 0, the named arguments have the given shapes (as mxc_symbol_infer_shape)
 * and edges are labelled with inferred shapes. */
MXC_API int mxc_symbol_to_dot(mxc_symbol sym, int n_shapes,
                              const char *const *names, const int *ndims,
                              const int64_t *dims, char **out);

/* ---- inference ---- */

/* The result of an inference: shapes, dtypes and storage types of a
 * symbol's arguments, outputs and auxiliary states. Owned by the caller;
 * free with mxc_infer_free. */
typedef struct mxc_infer_s *mxc_infer;

#define MXC_INFER_ARGS 0
#define MXC_INFER_OUTPUTS 1
#define MXC_INFER_AUX 2

/* Shape inference from the shapes of some arguments. The arguments are
 * given by name (names non-NULL) or positionally in list_arguments order;
 * argument i has ndims[i] dimensions, taken in turn from dims (so dims
 * holds sum(ndims) values). Variables' "__shape__" attributes count as
 * given. partial == 0: every shape must be deduced (MXC_ERR_SHAPE names
 * the first argument left unknown); partial != 0: unknown shapes are
 * reported with ndim -1. An inconsistency is MXC_ERR_SHAPE naming the
 * node, its operator, the input and both shapes. */
MXC_API int mxc_symbol_infer_shape(mxc_symbol sym, int n,
                                   const char *const *names, const int *ndims,
                                   const int64_t *dims, int partial,
                                   mxc_infer *out);

/* Type inference from the dtypes of some arguments (names as above;
 * "__dtype__" attributes count as given). Conflicts are MXC_ERR_DTYPE
 * naming the node and both types; partial as above. */
MXC_API int mxc_symbol_infer_type(mxc_symbol sym, int n,
                                  const char *const *names, const int *dtypes,
                                  int partial, mxc_infer *out);

/* Storage-type inference (MXC_STYPE_*) from the storage types of some
 * arguments (others: the variable's "__storage_type__" attribute, else
 * dense). Each node keeps its sparse kernel where the operator has one
 * for the inferred input types; otherwise it falls back to dense (its
 * outputs are dense), as mxc_op_invoke does. A bad "__storage_type__" is
 * MXC_ERR_STYPE naming the variable. */
MXC_API int mxc_symbol_infer_storage_type(mxc_symbol sym, int n,
                                          const char *const *names,
                                          const int *stypes, mxc_infer *out);

MXC_API void mxc_infer_free(mxc_infer inf);
/* *out = number of entries in group (MXC_INFER_ARGS/OUTPUTS/AUX). */
MXC_API int mxc_infer_count(mxc_infer inf, int group, int *out);
/* Shape of entry index of group: *out_ndim (-1 when unknown) and
 * out_dims[0..ndim) (out_dims holds MXC_MAX_NDIM values). Only meaningful
 * for results of infer_shape (others report ndim -1). */
MXC_API int mxc_infer_shape(mxc_infer inf, int group, int index,
                            int *out_ndim, int64_t *out_dims);
/* dtype (infer_type results) or storage type (infer_storage_type
 * results) of an entry; -1 when unknown. */
MXC_API int mxc_infer_dtype(mxc_infer inf, int group, int index, int *out);
MXC_API int mxc_infer_stype(mxc_infer inf, int group, int index, int *out);

/* ------------------------------------------------------------------------ */
/* Executors: a bound symbol that runs forward and backward                  */
/* ------------------------------------------------------------------------ */

/* An executor owns the arrays of one binding of a symbol: arguments,
 * their gradients, auxiliary states, outputs and a planned set of
 * intermediate buffers. Work is pushed to the engine node by node, so
 * independent branches run in parallel; forward/backward return once the
 * work is scheduled, and failures surface at the next wait on an output or
 * gradient (naming the operator). Thread-safety: calls on one executor
 * must not overlap (it has state: the last forward's values); different
 * executors may run concurrently, also when they share parameter arrays
 * (reshape), with the engine ordering the accesses.
 * Sparse arrays: arguments and gradient arrays may be csr or row_sparse
 * (auxiliary states and head gradients are dense). Storage types are
 * inferred over the graph (mxc_symbol_infer_storage_type): nodes with a
 * sparse kernel for their inputs run it, others fall back to dense; a
 * gradient takes its array's storage type (a row_sparse weight gradient
 * of dot(csr, W) or Embedding holds only the rows used). grad_req add
 * into a sparse gradient array is refused (MXC_ERR_STYPE naming the
 * argument). simple_bind creates sparse arguments from a variable's
 * "__storage_type__" attribute and gradients from "__grad_stype__" or,
 * without it, from the inferred storage type of the gradient. Graphs
 * with any sparse value are not fused. */
typedef struct mxc_executor_s *mxc_executor;

/* Bind flags. */
#define MXC_BIND_DEFAULT 0
#define MXC_BIND_NO_MEMORY_PLAN 1 /* one buffer per intermediate value */
#define MXC_BIND_NO_FUSION 2      /* do not fuse element-wise chains */
/* Run every node on the reference CPU kernels, not oneDNN's (as
 * MXC_ONEDNN=0 does for the whole process). Since 1.1. */
#define MXC_BIND_NO_ONEDNN 4

/* Do not run the inference graph passes. They run, unless this flag is
 * given, when no argument has a gradient request: Dropout, _copy and
 * BlockGrad bypassed, BatchNorm folded into the Convolution or
 * FullyConnected before it, activations and residual additions fused
 * into the convolution (docs/inference-passes.md). Results equal the
 * unoptimised graph's up to float rounding; bound arrays are never
 * modified (folded weights live in the executor and follow later writes
 * to the arrays they come from); a forward with is_train != 0 runs the
 * graph as written. Since 1.1. */
#define MXC_BIND_NO_INFER_PASSES 8

/* Inference executors (those the passes above run for) on a CPU that
 * computes bfloat16 natively (AVX512_BF16 or AMX-BF16): keep the values
 * passed between oneDNN convolutions and poolings as bfloat16, and run
 * those layers in bfloat16 (weights rounded once, at the first forward).
 * Arguments and outputs stay float32; results differ from float32 by
 * bfloat16 rounding (about 3 significant digits). Ignored on other CPUs,
 * with MXC_BIND_NO_ONEDNN and with MXC_BIND_NO_INFER_PASSES;
 * mxc_executor_debug_str marks the values it applied to ("bf16").
 * Since 1.1. */
#define MXC_BIND_BF16 16

/* Binds sym to arrays on device (dev_type, dev_id). args: one array per
 * argument in list_arguments order (n_args must match); arg_grads: NULL,
 * or one slot per argument, NULL where no gradient is wanted; grad_reqs:
 * NULL (MXC_REQ_WRITE wherever arg_grads gives an array) or one
 * MXC_REQ_NULL / MXC_REQ_WRITE / MXC_REQ_ADD per argument. aux: n_aux
 * arrays in list_auxiliary_states order. Shapes and dtypes are inferred
 * from the arrays; mismatches are MXC_ERR_SHAPE / MXC_ERR_DTYPE naming the
 * argument. The executor keeps its own references to the arrays (the
 * caller may free its handles); values are shared, not copied: writing an
 * argument array changes the next forward. flags: MXC_BIND_*. *out is a
 * new executor owned by the caller (mxc_executor_free). */
MXC_API int mxc_executor_bind(mxc_symbol sym, int dev_type, int dev_id,
                              int n_args, const mxc_ndarray *args,
                              const mxc_ndarray *arg_grads,
                              const int *grad_reqs, int n_aux,
                              const mxc_ndarray *aux, int flags,
                              mxc_executor *out);

/* Binds sym allocating every array: shapes of some arguments by name
 * (names/ndims/dims as mxc_symbol_infer_shape; the rest are inferred),
 * dtypes: NULL (float32, or the variable's "__dtype__") or one per given
 * name. Every argument gets grad_req default_req (MXC_REQ_*) except the
 * n_reqs named in req_names, which get reqs[i]; arguments with a request
 * other than MXC_REQ_NULL get gradient arrays. Arguments, gradients and
 * auxiliary states start as zeros. */
MXC_API int mxc_executor_simple_bind(mxc_symbol sym, int dev_type, int dev_id,
                                     int n_shapes, const char *const *names,
                                     const int *ndims, const int64_t *dims,
                                     const int *dtypes, int default_req,
                                     int n_reqs, const char *const *req_names,
                                     const int *reqs, int flags,
                                     mxc_executor *out);

MXC_API void mxc_executor_free(mxc_executor ex);

/* Runs the graph forward; is_train selects training behaviour (Dropout,
 * BatchNorm batch statistics) and keeps what backward needs. */
MXC_API int mxc_executor_forward(mxc_executor ex, int is_train);

/* Runs the gradient after a forward with is_train != 0, writing (or
 * adding, per grad_req) argument gradients. head_grads: n arrays, one per
 * output, shaped like the outputs; n == 0 (head_grads may be NULL) uses
 * ones for every output (loss operators such as SoftmaxOutput ignore head
 * gradients). Error before a training forward: MXC_ERR_INVALID_ARGUMENT. */
MXC_API int mxc_executor_backward(mxc_executor ex, int n,
                                  const mxc_ndarray *head_grads);

/* Arrays of the executor, as new handles owned by the caller (free with
 * mxc_ndarray_free; the array lives on while either holds it). outputs:
 * 0 <= index < num_outputs. arg/grad/aux by name: MXC_ERR_NOT_FOUND for
 * an unknown name or an argument without a gradient array. */
MXC_API int mxc_executor_num_outputs(mxc_executor ex, int *out);
MXC_API int mxc_executor_output(mxc_executor ex, int index, mxc_ndarray *out);
MXC_API int mxc_executor_arg(mxc_executor ex, const char *name,
                             mxc_ndarray *out);
MXC_API int mxc_executor_grad(mxc_executor ex, const char *name,
                              mxc_ndarray *out);
MXC_API int mxc_executor_aux(mxc_executor ex, const char *name,
                             mxc_ndarray *out);

/* A new executor for new shapes of some arguments (names/ndims/dims as
 * simple_bind), typically a new batch size. Arguments and auxiliary
 * states whose shapes do not change are shared with ex (same arrays, so
 * training one trains the other); changed ones get new zero arrays, as do
 * their gradients. Same flags and grad_reqs as ex. ex stays valid. */
MXC_API int mxc_executor_reshape(mxc_executor ex, int n,
                                 const char *const *names, const int *ndims,
                                 const int64_t *dims, mxc_executor *out);

/* Monitor: with fn set, forward and backward wait for each node and call
 * fn(user_data, "<node>_<output>", array) on the calling thread for each
 * of its outputs; array is borrowed for the call (copy it to keep it).
 * fn NULL turns monitoring off. */
typedef void (*mxc_monitor_fn)(void *user_data, const char *name,
                               mxc_ndarray array);
MXC_API int mxc_executor_set_monitor(mxc_executor ex, mxc_monitor_fn fn,
                                     void *user_data);

/* Memory of intermediate values: *out_planned = bytes allocated for them
 * under the memory plan; *out_unshared = bytes they would take with one
 * buffer each. Either pointer may be NULL. */
MXC_API int mxc_executor_memory(mxc_executor ex, int64_t *out_planned,
                                int64_t *out_unshared);

/* A readable description of the bound graph: nodes in execution order with
 * shapes, fused regions, in-place and shared buffers, and the byte totals
 * of mxc_executor_memory. *out: mxc_string_free. */
MXC_API int mxc_executor_debug_str(mxc_executor ex, char **out);

/* Saves arguments (as "arg:<name>") and auxiliary states ("aux:<name>") in
 * the mxc_ndarray_save format. exclude: n_exclude argument names not to
 * save (data and labels). */
MXC_API int mxc_executor_save_params(mxc_executor ex, const char *path,
                                     int n_exclude,
                                     const char *const *exclude);

/* Copies "arg:"/"aux:" arrays of a file (mxc's format or MXNet's
 * .params) into the executor's arrays (names without a prefix are taken as
 * arguments). A shape or dtype mismatch is
 * an error naming the parameter; names the executor lacks are an error
 * unless allow_extra != 0. Nothing is changed on failure. */
MXC_API int mxc_executor_load_params(mxc_executor ex, const char *path,
                                     int allow_extra);

/* ------------------------------------------------------------------------ */
/* Checkpoints as Apache MXNet writes them                                   */
/* ------------------------------------------------------------------------ */

/* A checkpoint is two files: PREFIX-symbol.json (the graph, as
 * mxc_symbol_save) and PREFIX-EEEE.params (the epoch, at least 4 digits
 * with leading zeros, e.g. "model-0007.params") holding the arguments as
 * "arg:NAME" and the auxiliary states as "aux:NAME".
 *
 * mxc_checkpoint_load reads both: *out_sym = a new symbol (free with
 * mxc_symbol_free); *out_args and *out_aux = new lists (free with
 * mxc_ndarray_list_free) with the "arg:" / "aux:" prefixes removed from the
 * names (a name without a prefix counts as an argument). The params file
 * may be in MXNet's format or mxc's. prefix is borrowed for the call;
 * epoch must be >= 0. Errors: MXC_ERR_IO for a missing, truncated or
 * corrupted file (naming it), the symbol errors of mxc_symbol_load;
 * on failure the out-parameters are untouched and nothing leaks.
 * Thread-safe (it only reads the files). Since 1.1. */
MXC_API int mxc_checkpoint_load(const char *prefix, int epoch,
                                mxc_symbol *out_sym,
                                mxc_ndarray_list *out_args,
                                mxc_ndarray_list *out_aux);

/* Writes sym to PREFIX-symbol.json and the n_args arguments (arg_names[i]
 * for args[i]) and n_aux auxiliary states to PREFIX-EEEE.params in MXNet's
 * format (MXC_FILE_FORMAT_MXNET), so that MXNet's load_checkpoint and
 * Module/Gluon imports read them. Each file is replaced atomically (the
 * params first: a failure leaves the previous symbol file in place). Names
 * are given without prefixes and must be non-NULL; arrays and names are
 * borrowed for the call. Waits for pending writes to the arrays.
 * Thread-safety as mxc_ndarray_save_format. Since 1.1. */
MXC_API int mxc_checkpoint_save(const char *prefix, int epoch, mxc_symbol sym,
                                int n_args, const char *const *arg_names,
                                const mxc_ndarray *args, int n_aux,
                                const char *const *aux_names,
                                const mxc_ndarray *aux);

/* ------------------------------------------------------------------------ */
/* Predictors: inference from an exported model                             */
/* ------------------------------------------------------------------------ */

/* A predictor runs one model for inference: an MXNet graph (JSON) with its
 * parameters, bound for given input shapes, with no gradients. It is what
 * Apache MXNet's c_predict_api offered (MXPredCreate, MXPredSetInput,
 * MXPredForward, MXPredGetOutput, MXPredReshape, MXPredFree), plus weights
 * shared between predictors and copies of inputs straight from arrays.
 *
 * Binding: shapes are inferred from the input shapes and the parameters'
 * shapes. Each argument of the graph is then an input (a new array of its
 * own, zeros until set), a parameter ("arg:NAME", or NAME without a
 * prefix), or, when the name ends in "label" and the params lack it (the
 * label of a loss head such as SoftmaxOutput, which inference does not
 * read), zeros. Any other argument, or an auxiliary state missing from the
 * params ("aux:NAME"), is MXC_ERR_NOT_FOUND naming it. Parameters the
 * chosen outputs do not use are ignored. A parameter whose shape does not
 * fit the inputs is MXC_ERR_SHAPE naming the node and both shapes.
 *
 * Weights and threads: a predictor holds a reference to its weights (the
 * graph and the parameter arrays on the device), which are never written
 * after creation. mxc_predictor_clone and mxc_predictor_reshape make
 * predictors that share those weights, so N threads can each run their
 * own predictor with one copy of the model in memory. Each predictor must
 * be used by one thread at a time (calls on one predictor must not
 * overlap: it holds its inputs and the last forward's outputs); different
 * predictors, also ones sharing weights, may run concurrently on any
 * threads. Freeing one predictor never affects the others: the weights
 * are released with the last predictor using them.
 *
 * Ownership: every create, clone and reshape returns a new predictor
 * owned by the caller (free with mxc_predictor_free). Names, shapes, JSON
 * text and params bytes are borrowed for the call only (copied or parsed
 * before it returns). On failure *out is untouched and nothing leaks. */
typedef struct mxc_predictor_s *mxc_predictor;

/* Creates a predictor from MXNet JSON text (symbol_json, NUL-terminated,
 * as mxc_symbol_from_json) and the bytes of a params file (params_size
 * bytes at params, in MXNet's .params format or mxc's array format, told
 * apart by content; the bytes are read before the call returns). Device:
 * (dev_type, dev_id) as mxc_ndarray_create; the parameters are copied
 * there. Inputs: n_inputs >= 1 arguments named input_names[i] with
 * input_ndims[i] dimensions each, their extents taken in turn from
 * input_dims (as mxc_symbol_infer_shape); input_dtypes NULL (float32) or
 * one MXC_DTYPE_* per input. Outputs: n_outputs == 0 (output_names may be
 * NULL) for the graph's outputs, or n_outputs names, each an output of
 * the graph or of any inner node ("fc1_output", or "fc1" for its first
 * output), in the order given. Errors: MXC_ERR_INVALID_ARGUMENT (NULL or
 * malformed JSON, bad counts), MXC_ERR_IO naming the offset for params
 * bytes that are truncated or corrupted, MXC_ERR_NOT_FOUND for an unknown
 * input, output, operator or a missing parameter, MXC_ERR_SHAPE and
 * MXC_ERR_DTYPE from binding. Thread-safe. Since 1.1. */
MXC_API int mxc_predictor_create(const char *symbol_json, const void *params,
                                 size_t params_size, int dev_type, int dev_id,
                                 int n_inputs, const char *const *input_names,
                                 const int *input_ndims,
                                 const int64_t *input_dims,
                                 const int *input_dtypes, int n_outputs,
                                 const char *const *output_names,
                                 mxc_predictor *out);

/* As mxc_predictor_create, from a checkpoint's files (PREFIX-symbol.json
 * and PREFIX-EEEE.params, see mxc_checkpoint_load): the usual way to run
 * a model exported by MXNet's save_checkpoint or HybridBlock.export.
 * prefix is borrowed for the call; epoch >= 0. MXC_ERR_IO names a missing
 * or corrupted file. Thread-safe. Since 1.1. */
MXC_API int mxc_predictor_create_from_checkpoint(
    const char *prefix, int epoch, int dev_type, int dev_id, int n_inputs,
    const char *const *input_names, const int *input_ndims,
    const int64_t *input_dims, const int *input_dtypes, int n_outputs,
    const char *const *output_names, mxc_predictor *out);

/* A new predictor sharing pred's weights, with the same inputs, outputs
 * and device, and inputs of its own (zeros). For one predictor per thread:
 * clone on any thread, then give each clone to one thread. pred must not
 * be in use by another thread during the call. Since 1.1. */
MXC_API int mxc_predictor_clone(mxc_predictor pred, mxc_predictor *out);

/* A new predictor sharing pred's weights for other input shapes
 * (typically another batch size): the n named inputs (each an input of
 * pred; names/ndims/dims as mxc_predictor_create) take the new shapes,
 * the others keep theirs; dtypes and outputs are pred's. n == 0 is a
 * clone. pred stays valid and unchanged. A parameter that would need
 * another shape is MXC_ERR_SHAPE. Same thread rule as clone. Since 1.1. */
MXC_API int mxc_predictor_reshape(mxc_predictor pred, int n,
                                  const char *const *names, const int *ndims,
                                  const int64_t *dims, mxc_predictor *out);

/* Frees a predictor (NULL is ignored); its weights go with the last
 * predictor sharing them. Arrays obtained from mxc_predictor_output stay
 * valid. pred must not be in use by another thread. Since 1.1. */
MXC_API void mxc_predictor_free(mxc_predictor pred);

/* Copies nbytes of host memory at data into the input named name; nbytes
 * must equal the input's size in bytes (elements times the dtype's size;
 * MXC_ERR_SHAPE says both otherwise), and data is read before the call
 * returns (it waits for the copy). An unknown name is MXC_ERR_NOT_FOUND
 * listing the inputs. Since 1.1. */
MXC_API int mxc_predictor_set_input(mxc_predictor pred, const char *name,
                                    const void *data, size_t nbytes);

/* Copies array arr (dense, the input's shape and dtype: MXC_ERR_SHAPE /
 * MXC_ERR_DTYPE otherwise) into the input named name. Asynchronous: the
 * copy is ordered before the next forward; arr stays the caller's and may
 * be freed or written at once (later writes do not reach the input).
 * Since 1.1. */
MXC_API int mxc_predictor_set_input_array(mxc_predictor pred,
                                          const char *name, mxc_ndarray arr);

/* Runs the model on the current inputs. Returns once the work is
 * scheduled; mxc_predictor_get_output (or a wait on an output array)
 * waits for it and reports an operator's failure. Since 1.1. */
MXC_API int mxc_predictor_forward(mxc_predictor pred);

/* *out = the number of outputs. Since 1.1. */
MXC_API int mxc_predictor_num_outputs(mxc_predictor pred, int *out);

/* Shape and dtype of output index (0 <= index < num_outputs): *out_ndim
 * and out_dims[0..ndim) (out_dims holds MXC_MAX_NDIM values), *out_dtype
 * (may be NULL). Known from creation on, before any forward. Since 1.1. */
MXC_API int mxc_predictor_output_shape(mxc_predictor pred, int index,
                                       int *out_ndim, int64_t *out_dims,
                                       int *out_dtype);

/* Copies output index into host memory data of exactly nbytes (the
 * output's size in bytes; MXC_ERR_SHAPE says both otherwise), after
 * waiting for the forward that computes it. Since 1.1. */
MXC_API int mxc_predictor_get_output(mxc_predictor pred, int index,
                                     void *data, size_t nbytes);

/* *out = a new handle (free with mxc_ndarray_free) on output index,
 * without copying: it shows the values of the latest forward (each forward
 * overwrites them) and keeps the array alive after the predictor is freed.
 * Since 1.1. */
MXC_API int mxc_predictor_output(mxc_predictor pred, int index,
                                 mxc_ndarray *out);

/* ------------------------------------------------------------------------ */
/* RecordIO                                                                  */
/* ------------------------------------------------------------------------ */

/* MXNet's record files (`.rec`, as written by im2rec and MXNet's
 * MXRecordIO / MXIndexedRecordIO), with their optional text index (`.idx`:
 * one "key<TAB>byte offset" line per record). Records are byte strings of
 * up to 2^29 - 1 bytes; the framing (magic word, length and continuation
 * flags, records split where their data holds the magic word, padding to 4
 * bytes) is the library's business. A damaged or truncated file, or an
 * index that points outside it, is MXC_ERR_IO naming the file and the
 * byte offset; nothing read from a file is trusted before it is checked,
 * so a bad file cannot make the library allocate more than its size.
 *
 * One handle is used by one thread at a time (like an iterator); distinct
 * handles, also on the same file, are independent. Since 1.1. */
typedef struct mxc_recordio_s *mxc_recordio;

/* Opens path. mode "r": reading, from the first record; "w": creates or
 * truncates path for writing. idx_path: NULL for none; with "r" the index
 * is read now (then mxc_recordio_read_key works), with "w" it is created
 * and mxc_recordio_write_key adds its lines. The paths are copied. On
 * success *out is a new handle owned by the caller; free it with
 * mxc_recordio_free. Since 1.1. */
MXC_API int mxc_recordio_open(const char *path, const char *idx_path,
                              const char *mode, mxc_recordio *out);

/* Flushes a writer (best effort: call mxc_recordio_flush first to see
 * errors) and closes the files. Accepts NULL. Since 1.1. */
MXC_API void mxc_recordio_free(mxc_recordio rec);

/* Readers: reads the next record, which becomes the current record, and
 * sets *out_size to its length in bytes, or to -1 at the end of the file
 * (no current record then). Since 1.1. */
MXC_API int mxc_recordio_read(mxc_recordio rec, int64_t *out_size);

/* Readers opened with an index: reads the record listed under key (the
 * last line wins when a key repeats), which becomes the current record;
 * *out_size = its length. MXC_ERR_NOT_FOUND for a key not in the index.
 * The next mxc_recordio_read continues after it. Since 1.1. */
MXC_API int mxc_recordio_read_key(mxc_recordio rec, int64_t key,
                                  int64_t *out_size);

/* The current record: *out_data borrowed, valid until the next read,
 * seek or free of rec (NULL with *out_size 0 when there is none). Since
 * 1.1. */
MXC_API int mxc_recordio_data(mxc_recordio rec, const void **out_data,
                              int64_t *out_size);

/* Copies the current record into buf (caller-owned, buf_size bytes, at
 * least the record's size: MXC_ERR_INVALID_ARGUMENT otherwise). Since
 * 1.1. */
MXC_API int mxc_recordio_copy(mxc_recordio rec, void *buf, int64_t buf_size);

/* Writers: appends size bytes (copied; data may be NULL when size is 0) as
 * one record. After a failed write the writer refuses more (the file is
 * incomplete). Since 1.1. */
MXC_API int mxc_recordio_write(mxc_recordio rec, const void *data,
                               int64_t size);

/* Writers opened with an index: appends a record and its index line
 * "key<TAB>offset". Since 1.1. */
MXC_API int mxc_recordio_write_key(mxc_recordio rec, int64_t key,
                                   const void *data, int64_t size);

/* Writers: hands everything written so far to the OS; reports the write
 * errors mxc_recordio_free cannot. Readers: nothing. Since 1.1. */
MXC_API int mxc_recordio_flush(mxc_recordio rec);

/* The index's keys, in the order of its lines (readers) or as written
 * (writers): *out = how many; mxc_recordio_key gives key i (0 <= i <
 * count). Since 1.1. */
MXC_API int mxc_recordio_num_keys(mxc_recordio rec, int64_t *out);
MXC_API int mxc_recordio_key(mxc_recordio rec, int64_t i, int64_t *out);

/* *out = the byte offset of the next record (readers) or of the end of the
 * file (writers): what an index line records. Since 1.1. */
MXC_API int mxc_recordio_tell(mxc_recordio rec, int64_t *out);

/* Readers: the next read starts at byte pos, which must start a record
 * (a multiple of 4, at most the file's size; a value from
 * mxc_recordio_tell or the index). Since 1.1. */
MXC_API int mxc_recordio_seek(mxc_recordio rec, int64_t pos);

/* Image records (im2rec's layout): a 24-byte header (flag, label, id, id2)
 * then, when there is not exactly one label, the labels as float32, then
 * the encoded image.
 *
 * Packs n_labels labels (n_labels >= 0; labels may be NULL when it is 0),
 * id, id2 and payload_size bytes of payload into out (out_size bytes;
 * out may be NULL when out_size is 0). *out_needed = the record's size,
 * also when out is too small (then MXC_ERR_INVALID_ARGUMENT and nothing
 * is written): call once with out_size 0 to learn the size. One label
 * goes into the header (flag 0), as im2rec writes it. Since 1.1. */
MXC_API int mxc_recordio_pack_image(const float *labels, int n_labels,
                                    int64_t id, int64_t id2,
                                    const void *payload, int64_t payload_size,
                                    void *out, int64_t out_size,
                                    int64_t *out_needed);

/* Unpacks an image record of size bytes (rec: caller-owned, only read):
 * *out_n_labels = its number of labels (1 for flag 0), the first
 * min(count, max_labels) of them written to labels (may be NULL when
 * max_labels is 0); *out_id / *out_id2 (may be NULL) its ids (uint64 in
 * the file, returned bit for bit); *out_payload_offset = where the image
 * starts in rec. A record too short for what its header claims is
 * MXC_ERR_IO. Since 1.1. */
MXC_API int mxc_recordio_unpack_image(const void *rec, int64_t size,
                                      float *labels, int max_labels,
                                      int *out_n_labels, int64_t *out_id,
                                      int64_t *out_id2,
                                      int64_t *out_payload_offset);

/* Decodes a JPEG or PNG image held in memory (buf: size bytes, caller-
 * owned, only read; the format is told by content) into a new CPU array
 * of shape (channels, height, width): channels 1 (gray) or 3 (RGB),
 * converted by the codec (libjpeg-turbo, libpng) whatever the image holds;
 * dtype MXC_DTYPE_UINT8 or MXC_DTYPE_FLOAT32 (pixel values 0..255 either
 * way). A corrupt, truncated or unsupported image, or one larger than
 * 32768 pixels a side or 2^28 pixels, is MXC_ERR_IO with the codec's
 * message. On success *out is a new array owned by the caller (free it
 * with mxc_ndarray_free). Any thread. Since 1.1. */
MXC_API int mxc_image_decode(const void *buf, int64_t size, int channels,
                             int dtype, mxc_ndarray *out);

/* ------------------------------------------------------------------------ */
/* Imperative autograd                                                       */
/* ------------------------------------------------------------------------ */

/* While recording is on (per thread), mxc_op_invoke records each call
 * whose inputs depend on marked variables, so that gradients can be
 * computed afterwards. Training mode is separate (mxc_set_training).
 * *out_prev (may be NULL) receives the previous state. */
MXC_API int mxc_autograd_set_recording(int recording, int *out_prev);
MXC_API int mxc_autograd_is_recording(int *out);

/* Marks n arrays as variables to differentiate: grads[i] receives the
 * gradient of vars[i] (same shape and dtype) written or added according
 * to reqs[i] (MXC_REQ_*; reqs NULL = MXC_REQ_WRITE). Marking again
 * replaces the earlier buffer. The library keeps references to grads.
 * Sparse arrays: vars may be csr or row_sparse (e.g. a csr input marked
 * with MXC_REQ_NULL); operators without a sparse kernel reach them
 * through the storage fallback. grads may be dense or row_sparse (csr:
 * MXC_ERR_STYPE). A row_sparse buffer with MXC_REQ_WRITE is written by the
 * operator computing the gradient (row_sparse straight from a sparse
 * kernel such as dot(csr.T, dense) or Embedding's backward, else through
 * the fallback); with MXC_REQ_ADD the gradient is added in dense and the
 * sum cast back to row_sparse (rows with only zeros are then dropped). */
MXC_API int mxc_autograd_mark_variables(int n, const mxc_ndarray *vars,
                                        const int *reqs,
                                        const mxc_ndarray *grads);

/* Computes gradients of heads with respect to every marked variable they
 * depend on, into the variables' gradient buffers. head_grads: NULL or n
 * slots (NULL slot = ones). retain_graph == 0 frees the recorded history
 * of the heads afterwards (a second backward is then an error). An array
 * that was not computed under recording from a marked variable is
 * MXC_ERR_INVALID_ARGUMENT. Asynchronous like operators. */
MXC_API int mxc_autograd_backward(int n, const mxc_ndarray *heads,
                                  const mxc_ndarray *head_grads,
                                  int retain_graph);

/* *out = a new handle on the gradient buffer of a marked variable
 * (MXC_ERR_NOT_FOUND if arr is not marked). */
MXC_API int mxc_autograd_get_grad(mxc_ndarray arr, mxc_ndarray *out);

/* *out = a new handle sharing arr's values but cut from the recorded
 * history (no gradient flows through it). */
MXC_API int mxc_ndarray_detach(mxc_ndarray arr, mxc_ndarray *out);

/* ------------------------------------------------------------------------ */
/* Layers: blocks, losses and optimizers                                     */
/* ------------------------------------------------------------------------ */

/* A block (Gluon's model) is a layer, a loss, a container of blocks or a
 * block whose forward pass the caller writes, with named parameters. Its
 * forward pass calls operators like mxc_op_invoke: recorded when autograd
 * records in the calling thread (mxc_autograd_set_recording), in training
 * behaviour (Dropout, BatchNorm's batch statistics) when mxc_set_training
 * says so. Parameters are made at the first forward pass, when the input
 * fixes their shapes (deferred initialization): each is created on the
 * input's device (float64 for float64 input, else float32), filled by its
 * initializer and marked as an autograd variable with a gradient buffer
 * (written by each backward pass), so a recorded forward pass, a loss,
 * mxc_autograd_backward and mxc_optimizer_step train the block.
 *
 * A block handle holds one reference to the block; a container holds its
 * own references to its children, so a child's handle may be freed
 * after mxc_block_add. A block and the blocks in it are used by one thread
 * at a time; handles may be freed from any thread.
 *
 * Kinds and keys of mxc_block_create (values are strings; tuples as "3"
 * or "(3,3)"; booleans "1"/"0"/"true"/"false"; initializers name an
 * mxc_init_array method without parameters; parameter names are
 * "<name>_<what>"):
 *  - "dense": units (required), activation (relu, sigmoid, tanh, softrelu,
 *    softsign; default none), use_bias (1), flatten (1: all axes after the
 *    first are features; 0: the last axis), in_units (0: from the input),
 *    weight_initializer, bias_initializer ("zeros"). Parameters weight
 *    (units, in_units), bias (units). FullyConnected.
 *  - "conv1d", "conv2d": channels, kernel_size (required), strides (1),
 *    padding (0), dilation (1), groups (1), activation, use_bias (1),
 *    in_channels (0: from the input), weight_initializer,
 *    bias_initializer. Input (batch, channels, [height,] width). Weight
 *    (channels, in_channels / groups, kernel...), bias (channels).
 *  - "maxpool1d", "maxpool2d", "avgpool1d", "avgpool2d": pool_size (2),
 *    strides (pool_size), padding (0), ceil_mode (0), count_include_pad
 *    (1). "global_maxpool1d", "global_maxpool2d", "global_avgpool1d",
 *    "global_avgpool2d": no keys.
 *  - "batchnorm": axis (1), momentum (0.9), epsilon (1e-5), scale (1),
 *    center (1; 0 is not supported yet), use_global_stats (0),
 *    in_channels, gamma_initializer ("ones"), beta_initializer ("zeros"),
 *    running_mean_initializer ("zeros"), running_variance_initializer
 *    ("ones"). Parameters gamma, beta, running_mean, running_var (the last
 *    two are updated by training forward passes and have no gradient).
 *  - "layernorm": axis (-1), epsilon (1e-5), scale, center, in_channels,
 *    gamma_initializer, beta_initializer.
 *  - "dropout": rate (0.5), axes (()). "activation": activation
 *    (required). "flatten": no keys.
 *  - "embedding": input_dim, output_dim (required), weight_initializer.
 *  - "lstm", "gru" (Gluon's rnn.LSTM / rnn.GRU over the RNN operator):
 *    hidden_size (required), num_layers (1), layout ("TNC": input
 *    (sequence, batch, features); "NTC": (batch, sequence, features)),
 *    bidirectional (0), dropout (0: between layers, in training),
 *    input_size (0: from the input), i2h_weight_initializer,
 *    h2h_weight_initializer, i2h_bias_initializer ("zeros"),
 *    h2h_bias_initializer ("zeros"). Output (.., D * hidden_size), D = 2
 *    when bidirectional, from zero begin states (the final states are not
 *    returned). Parameters per layer k and direction (l forward, r
 *    reverse), in this order: lk_i2h_weight (G * hidden_size, in),
 *    lk_h2h_weight (G * hidden_size, hidden_size), lk_i2h_bias,
 *    lk_h2h_bias (G * hidden_size), then rk_...; G = 4 (LSTM gates i, f,
 *    g, o) or 3 (GRU gates r, z, n); in = the input size for k = 0, else
 *    D * hidden_size. MXNet Gluon's names and layout, so its parameter
 *    files load. Exported graphs pack them with Reshape + Concat and make
 *    the begin states from the input, so they run at any batch size.
 *  - "sequential": no keys; mxc_block_add appends children; the first
 *    child takes the inputs, each next one the previous output.
 *  - Losses take (prediction, label) and give one value per example, the
 *    mean over all axes but the first, times "weight" (1) if given:
 *    "softmax_cross_entropy_loss" (axis -1, sparse_label 1, from_logits 0),
 *    "l2_loss" (0.5 (p - y)^2), "l1_loss" (|p - y|),
 *    "sigmoid_binary_cross_entropy_loss" (from logits; from_sigmoid 0).
 *    Labels are reshaped to the prediction's shape where they have as many
 *    elements (sparse labels: one class index per example). */
typedef struct mxc_block_s *mxc_block;

/* A new block of `kind` (see above) with n configuration strings
 * keys[i] = vals[i] (copied). name (copied; may be NULL or ""): the
 * prefix of its parameter names; NULL or "" gives the kind's name and a
 * process-wide count ("dense0", "dense1", ...). An unknown kind or key, a
 * missing required key or a value the kind or its operator refuses is
 * MXC_ERR_INVALID_ARGUMENT naming it. *out: owned by the caller; free
 * with mxc_block_free. Thread-safe. Since 1.1. */
MXC_API int mxc_block_create(const char *kind, const char *name,
                             const char *const *keys,
                             const char *const *vals, int n, mxc_block *out);

/* A block's forward pass written by the caller: reads in[0..n_in) and
 * stores in *out a new array it made (from mxc_block_forward of child
 * blocks, mxc_op_invoke, ...), whose ownership passes to mxc. self and
 * in[] are borrowed for the call: never free them. Returns MXC_OK, or an
 * error code (mxc_block_forward then fails with it). Runs on the thread
 * that called mxc_block_forward; for a hybridized block also once per
 * trace, on a copy of the input, with autograd recording (see
 * mxc_block_hybridize). */
typedef int (*mxc_block_forward_fn)(void *user_data, mxc_block self,
                                    int n_in, const mxc_ndarray *in,
                                    mxc_ndarray *out);

/* A new block whose forward pass is fn(user_data, ...), with children
 * added by mxc_block_add (its parameters are theirs; mxc_block_child
 * reaches them from fn). free_fn (may be NULL) runs once with user_data
 * when the block is destroyed, also when this call fails. name as for
 * mxc_block_create. *out: owned by the caller. Since 1.1. */
MXC_API int mxc_block_create_user(const char *name, mxc_block_forward_fn fn,
                                  void *user_data, mxc_free_fn free_fn,
                                  mxc_block *out);

/* Drops this handle's reference (NULL accepted); the block lives on while
 * a container or optimizer holds it. Since 1.1. */
MXC_API void mxc_block_free(mxc_block block);

/* Appends child to block (a "sequential" or user block; one more
 * reference to child). A child containing block is refused (a cycle).
 * Since 1.1. */
MXC_API int mxc_block_add(mxc_block block, mxc_block child);

/* *out = the number of children / a new handle on child `index` (owned
 * by the caller; free it with mxc_block_free). Since 1.1. */
MXC_API int mxc_block_num_children(mxc_block block, int *out);
MXC_API int mxc_block_child(mxc_block block, int index, mxc_block *out);

/* *out = the block's name, borrowed: valid while the block lives.
 * Since 1.1. */
MXC_API int mxc_block_name(mxc_block block, const char **out);

/* Sets the initializer of every parameter of block and its descendants
 * that has none of its own: method and n parameter strings as for
 * mxc_init_array (copied; checked when parameters are made, at the next
 * forward pass). force != 0 also drops parameters already made, so that
 * the next forward pass makes and fills them again. A forward pass of a
 * block whose parameters have no initializer is MXC_ERR_INVALID_ARGUMENT.
 * Since 1.1. */
MXC_API int mxc_block_initialize(mxc_block block, const char *method,
                                 const char *const *keys,
                                 const char *const *vals, int n, int force);

/* The forward pass on in[0..n_in) (1 for layers, 2 for losses, 1 to 64
 * for sequential and user blocks): *out = a new array owned by the
 * caller, with autograd history when recorded. Inputs are borrowed.
 * Since 1.1. */
MXC_API int mxc_block_forward(mxc_block block, int n_in,
                              const mxc_ndarray *in, mxc_ndarray *out);

/* Parameters of block and its descendants, depth first (a block's own
 * before its children's), the order of saving and of optimizer states.
 * *out_name: borrowed, valid while the block lives. mxc_block_param and
 * mxc_block_param_grad: *out = a new handle on the values / gradient
 * buffer (owned by the caller; writing into it changes the parameter),
 * MXC_ERR_INVALID_ARGUMENT before the first forward pass made it, and
 * MXC_ERR_NOT_FOUND for the gradient of an auxiliary state
 * (BatchNorm's running statistics). Since 1.1. */
MXC_API int mxc_block_num_params(mxc_block block, int *out);
MXC_API int mxc_block_param_name(mxc_block block, int index,
                                 const char **out_name);
MXC_API int mxc_block_param(mxc_block block, int index, mxc_ndarray *out);
MXC_API int mxc_block_param_grad(mxc_block block, int index,
                                 mxc_ndarray *out);

/* Saves every parameter by name (mxc_ndarray_save's format, atomically)
 * / loads them back. Load checks that the file has every parameter, with
 * a fitting shape and dtype, before it changes anything; parameters not
 * made yet are made from the file. Since 1.1. */
MXC_API int mxc_block_save_params(mxc_block block, const char *path);
MXC_API int mxc_block_load_params(mxc_block block, const char *path);

/* Hybridizes block (active != 0) or turns it back (0). A hybridized
 * block's forward passes that are not recorded (autograd off in the
 * calling thread) and take one input run through an executor: the
 * block's graph bound once per input shape, dtype and device over the
 * block's own parameter arrays (so optimizer steps and loaded parameters
 * are seen), with fusion, the memory plan and, in inference mode, the
 * inference passes (results equal the imperative ones up to float
 * rounding). Recorded forward passes run imperatively, so training by
 * hand (mxc_autograd_*) is unchanged; mxc_fit_run trains a hybridized
 * net through the executor instead (the graph bound with the
 * parameters' gradient buffers, the loss's gradient as head gradient;
 * losses equal the imperative run's up to float reordering, except that
 * Dropout draws differently). The graph of built-in layers and sequential blocks of them
 * is their symbol (as mxc_block_export writes it). A user block (or a
 * container holding one) is traced, as Gluon's hybrid_forward is: its
 * forward function runs once, recorded by autograd in inference mode, on
 * a copy of the input, and the operator calls it made (its own and its
 * children's) become the graph; arrays it uses must be its input,
 * results of recorded operator calls or parameters of its children (an
 * array made inside the function, or a block not added with
 * mxc_block_add, makes that forward pass fail with MXC_ERR_UNSUPPORTED).
 * Like any trace, the graph freezes what that pass did: branches on
 * values and shapes computed from the batch size. The binding (and a
 * trace) is made again after the input's shape changes or parameters
 * were remade (mxc_block_initialize with force). Losses (two inputs) are
 * MXC_ERR_UNSUPPORTED. The first forward pass, which makes the
 * parameters, runs imperatively. block: borrowed; used by one thread at
 * a time. Since 1.1. */
MXC_API int mxc_block_hybridize(mxc_block block, int active);

/* Exports block as an MXNet checkpoint (see "Checkpoints"):
 * PREFIX-symbol.json, a graph with one input "data" whose nodes are
 * named as Gluon's export names them ("<block>_fwd", parameters by their
 * names with __shape__ and __dtype__), and PREFIX-EEEE.params holding the
 * parameters as "arg:NAME" and auxiliary states (BatchNorm's running
 * statistics) as "aux:NAME", which mxc_predictor_create_from_checkpoint
 * and MXNet's SymbolBlock.imports / Module load. Built-in layers and
 * sequential blocks of them, after a forward pass made their parameters;
 * a user block (or a container holding one) exports the graph traced by
 * its last hybridized forward pass (operator nodes named
 * "<block>_<operator><k>"): before one it is MXC_ERR_UNSUPPORTED, as are
 * losses. epoch >= 0; prefix borrowed for the call. Since 1.1. */
MXC_API int mxc_block_export(mxc_block block, const char *prefix, int epoch);

/* An optimizer (see mxc_optimizer_create). */
typedef struct mxc_optimizer_s *mxc_optimizer;

/* An optimizer: the registry's update operator update_op ("sgd_update",
 * "sgd_mom_update", "nag_mom_update", "adam_update", "rmsprop_update",
 * "adagrad_update", "ftrl_update", "signum_update", ...) applied to every
 * parameter of block that has a gradient. n parameter strings (copied) are
 * the operator's (lr, wd, momentum, beta1, clip_gradient, ...); lr
 * defaults to 0.01 and may change (mxc_optimizer_set_lr); rescale_grad
 * (default 1) is divided by the batch size at each step. The operator's
 * other inputs are states per parameter, made as zeros at the first step.
 * Holds a reference to block. *out: owned by the caller; free with
 * mxc_optimizer_free. Since 1.1. */
MXC_API int mxc_optimizer_create(mxc_block block, const char *update_op,
                                 const char *const *keys,
                                 const char *const *vals, int n,
                                 mxc_optimizer *out);
MXC_API void mxc_optimizer_free(mxc_optimizer opt);

/* One update of every parameter from its gradient buffer (asynchronous,
 * like operators), with rescale_grad / batch_size (batch_size >= 1).
 * Parameters must have been made by a forward pass. The optimizer and its
 * block are used by one thread at a time. Since 1.1. */
MXC_API int mxc_optimizer_step(mxc_optimizer opt, int64_t batch_size);

/* The learning rate of the next steps (finite, >= 0). Since 1.1. */
MXC_API int mxc_optimizer_set_lr(mxc_optimizer opt, double lr);
MXC_API int mxc_optimizer_get_lr(mxc_optimizer opt, double *out);

/* ------------------------------------------------------------------------ */
/* Training loops: fit()                                                     */
/* ------------------------------------------------------------------------ */

/* A fit trains a block (net) with a loss block and an optimizer of net
 * over data iterators: each batch is a recorded forward pass of net and
 * loss in training mode (a hybridized net's through its executor, see
 * mxc_block_hybridize), a backward pass and an optimizer step with the
 * batch's rows as batch size (the learning rate set by the schedule
 * first); after each epoch the validation iterator (if any) is evaluated
 * in inference mode, early stopping is checked, a CSV row and a
 * checkpoint are written when configured, and listeners are told.
 * Metrics: the mean loss over examples (pad rows of the last batch left
 * out) and, when net's output is (batch, classes) and labels (batch), the
 * accuracy.
 *
 * Keys of mxc_fit_create (values are strings):
 *  - epochs (1): epochs to reach, counting those of a resumed checkpoint.
 *  - batches_per_epoch (0: all): at most this many training batches per
 *    epoch (short runs, smoke tests).
 *  - progress ("auto"): "1" writes a progress line to stdout (epoch,
 *    batch, live loss and accuracy, samples/s; validation results at the
 *    end of an epoch), "0" nothing, "auto" only when stdout is a terminal.
 *    The only output mxc ever writes.
 *  - lr_scheduler ("none"): the rate of update k (0-based) from the
 *    optimizer's rate at the start, base: "factor" base * factor^floor(k /
 *    step); "multifactor" base * factor^(steps passed: k >= s for s in
 *    steps, e.g. "(100,200)"); "cosine" final_lr + (base - final_lr) (1 +
 *    cos(pi k / max_update)) / 2, final_lr from max_update on. Keys
 *    factor (1), step, steps, max_update, final_lr (0).
 *  - early_stopping_patience (0: off), early_stopping_min_delta (0),
 *    monitor ("val_loss"; val_accuracy, train_loss, train_accuracy):
 *    training stops after `patience` epochs without an improvement
 *    greater than min_delta.
 *  - csv: a file getting a header and one row per epoch (epoch,
 *    train_loss, train_accuracy, val_loss, val_accuracy, lr,
 *    samples_per_sec, seconds); appended to when resuming.
 *  - checkpoint_prefix, checkpoint_period (1): after every period-th
 *    epoch E, PREFIX-EEEE.fit (as mxc_fit_save_checkpoint).
 *  - resume: a checkpoint file loaded when mxc_fit_run starts.
 *  - tensorboard: a directory (created if missing) getting a TensorBoard
 *    event file, events.out.tfevents.SECONDS.HOST, with the scalars
 *    train_loss, train_accuracy, val_loss, val_accuracy and lr at step E
 *    after each epoch E (tests/nn/read_tfevents.py reads it).
 *  - shard_by_rank ("1"): with a store of several workers
 *    (mxc_fit_set_kvstore), each reads its part of the training data;
 *    "0" uses the training iterator as given.
 * A fit is used by one thread at a time. */
typedef struct mxc_fit_s *mxc_fit;

#define MXC_FIT_BATCH_END 1 /* after each training batch */
#define MXC_FIT_EPOCH_END 2 /* after each epoch (evaluation, checkpoint) */
#define MXC_FIT_TRAIN_END 3 /* when mxc_fit_run ends without error */

/* A listener: called on the thread running mxc_fit_run after each event;
 * fit is borrowed for the call (read values, stop the run). Returning
 * anything but MXC_OK ends the run, which returns that code. */
typedef int (*mxc_fit_listener_fn)(void *user_data, int event, mxc_fit fit);

/* A new fit of net, with loss (a block of two inputs: net's output and
 * the label) and opt (an optimizer created on net), configured by n key
 * strings (copied; see above). Holds references to net, loss and opt (the
 * caller may free its handles). Unknown keys, bad values and an optimizer
 * of another block are MXC_ERR_INVALID_ARGUMENT. *out: owned by the
 * caller; free with mxc_fit_free. Since 1.1. */
MXC_API int mxc_fit_create(mxc_block net, mxc_block loss, mxc_optimizer opt,
                           const char *const *keys, const char *const *vals,
                           int n, mxc_fit *out);
MXC_API void mxc_fit_free(mxc_fit fit);

/* Adds a listener; free_fn(user_data) (may be NULL) runs when the fit is
 * freed, also when this call fails. Since 1.1. */
MXC_API int mxc_fit_add_listener(mxc_fit fit, mxc_fit_listener_fn fn,
                                 void *user_data, mxc_free_fn free_fn);

/* Trains on train (an iterator with labels; reset at each epoch) and
 * evaluates on val (may be NULL) until the epochs are reached, early
 * stopping or mxc_fit_stop. Iterators are borrowed for the call. A second
 * run continues from where the first stopped (raise "epochs" by
 * creating another fit, or resume). Since 1.1. */
MXC_API int mxc_fit_run(mxc_fit fit, mxc_data_iter train, mxc_data_iter val);

/* *out = a value of the run: "epoch" (epochs done), "batch" (in the
 * current epoch), "num_update", "lr", "train_loss", "train_accuracy"
 * (of the current epoch so far), "val_loss", "val_accuracy" (of the last
 * evaluation; NaN without one), "samples_per_sec", "best" (early
 * stopping), "epochs", "rank" and "num_workers" (0 and 1 without a
 * store, see mxc_fit_set_kvstore). MXC_ERR_NOT_FOUND for other names.
 * Since 1.1. */
MXC_API int mxc_fit_value(mxc_fit fit, const char *name, double *out);

/* Ends the run after the current batch (for listeners). Since 1.1. */
MXC_API int mxc_fit_stop(mxc_fit fit);

/* Writes / reads a training checkpoint: one file (mxc_ndarray_save's
 * format) with every parameter ("param:NAME"), every optimizer state
 * ("state:NAME:K"), the progress (epochs and updates done, early-stopping
 * state, the schedule's base rate) and the position of mxc's random
 * stream, so that a run resumed from it makes the same updates as an
 * uninterrupted one, bit for bit. Loading checks every entry against the
 * network and optimizer before it changes anything; parameters not made
 * yet are made from the file. Since 1.1. */
MXC_API int mxc_fit_save_checkpoint(mxc_fit fit, const char *path);
MXC_API int mxc_fit_load_checkpoint(mxc_fit fit, const char *path);

/* ------------------------------------------------------------------------ */
/* Profiler                                                                  */
/* ------------------------------------------------------------------------ */

/* The profiler records what the library does, per thread, as timed events:
 * imperative operator runs and executor node runs (with their arrays'
 * shapes), every function the engine runs, waits on the engine, copies,
 * storage allocations (a bytes-in-use counter per device), data iterator
 * batches, and the caller's own ranges, markers and counters. The trace
 * is the Chrome trace event format, which chrome://tracing and Perfetto
 * (ui.perfetto.dev) open: one track per thread, engine workers named
 * "engine cpu worker N". Statistics sum it per name.
 *
 * Off (the default) it costs each hook one predictable branch. Setting
 * the environment variable MXC_PROFILER_AUTOSTART=1 starts it when the
 * library loads and writes the trace at exit to MXC_PROFILER_FILENAME
 * (default "profile.json"), without touching a program's code.
 *
 * Every function below may be called from any thread. Events are kept in
 * memory until dumped with finished != 0, read with reset != 0, or a new
 * session starts (MXC_PROFILER_RUN after MXC_PROFILER_STOP). Since 1.1. */

/* Profiler states (mxc_profiler_set_state). */
#define MXC_PROFILER_STOP 0  /* not recording; the next run starts afresh */
#define MXC_PROFILER_RUN 1   /* recording */
#define MXC_PROFILER_PAUSE 2 /* not recording; a run continues the session */

/* Statistics formats (mxc_profiler_stats). */
#define MXC_PROFILER_TABLE 0
#define MXC_PROFILER_JSON 1

/* Sets one configuration key to value (both copied; NUL-terminated):
 *  "filename"            where mxc_profiler_dump writes (default
 *                        "profile.json");
 *  "profile_imperative"  imperative operator runs (category "operator");
 *  "profile_symbolic"    executor node runs ("executor");
 *  "profile_engine"      every function the engine runs ("engine"; off by
 *                        default: it repeats each operator's span);
 *  "profile_wait"        threads blocked in waits ("wait");
 *  "profile_copy"        array copies ("copy");
 *  "profile_memory"      storage allocations ("memory");
 *  "profile_io"          data iterator batches ("io");
 *  "profile_user"        the caller's ranges, markers and counters ("user");
 *  "profile_all"         every category above.
 * The "profile" keys take "1"/"true" or "0"/"false"; each defaults to on
 * except profile_engine. Takes effect at once, also while running. An
 * unknown key or bad value is MXC_ERR_INVALID_ARGUMENT. Since 1.1. */
MXC_API int mxc_profiler_set_config(const char *key, const char *value);

/* Sets the state (MXC_PROFILER_*); MXC_ERR_INVALID_ARGUMENT for other
 * values. RUN after STOP discards earlier events and restarts the trace's
 * clock. Since 1.1. */
MXC_API int mxc_profiler_set_state(int state);
/* *out = the current state. Since 1.1. */
MXC_API int mxc_profiler_get_state(int *out);

/* Writes the trace of the events recorded so far to the configured file
 * (replaced atomically; MXC_ERR_IO names the path). finished != 0: also
 * stops the profiler and discards the events (on success). Other threads
 * may go on recording meanwhile. Since 1.1. */
MXC_API int mxc_profiler_dump(int finished);

/* *out = the trace as a new string, the same JSON mxc_profiler_dump
 * writes (free it with mxc_string_free). Nothing is discarded. Since 1.1. */
MXC_API int mxc_profiler_dumps(char **out);

/* *out = statistics of the events recorded so far as a new string (free
 * with mxc_string_free): per category and name, calls and total / min /
 * max / mean time, with the bytes of storage allocated by that
 * operator's calls; per counter its samples, maximum and last value; and
 * allocations per operator. format: MXC_PROFILER_TABLE (aligned text) or
 * MXC_PROFILER_JSON ({"events", "dropped", "spans": {category: {name:
 * {"calls", "total_ns", "min_ns", "max_ns", "mean_ns", "alloc_bytes"}}},
 * "counters": {name: {"samples", "max", "last"}}, "allocations": {name:
 * {"count", "bytes"}}}). reset != 0 discards the events afterwards.
 * Since 1.1. */
MXC_API int mxc_profiler_stats(int format, int reset, char **out);

/* Opens a range named name (copied; at most 47 bytes are kept) on the
 * calling thread; mxc_profiler_range_end closes the innermost open one.
 * A closed range is recorded as a span of the thread's track if user
 * events are being recorded then. Up to 16 ranges nest per thread; more,
 * or an end without a begin, is MXC_ERR_INVALID_ARGUMENT. Pairs must be
 * on one thread. Since 1.1. */
MXC_API int mxc_profiler_range_begin(const char *name);
MXC_API int mxc_profiler_range_end(void);

/* Records an instant marker named name (copied) on the calling thread's
 * track. Since 1.1. */
MXC_API int mxc_profiler_mark(const char *name);

/* Records value for the counter named name (copied): a counter track of
 * the trace. Since 1.1. */
MXC_API int mxc_profiler_counter(const char *name, int64_t value);

/* ---- KVStore: parameter synchronisation (docs/kvstore.md) ----------
 *
 * A store maps keys to arrays it owns, with Apache MXNet's model: init
 * stores a copy of a value per key; push sums the values given for a key
 * (one per device, say) and either stores the sum or hands it to the
 * store's updater, which updates the stored array (an update operator of
 * the registry chosen by name with mxc_kvstore_set_optimizer, or a
 * callback set with mxc_kvstore_set_updater); pull copies the stored
 * array into the caller's arrays. Types: "local" sums within the process;
 * "dist_sync" also sums across the processes of an MPI job (every worker
 * applies the same update to the same sum).
 *
 * Keys: each call takes either int_keys (int64) or str_keys (UTF-8,
 * copied): exactly one of the two is non-NULL. Int and string keys are
 * separate name spaces (3 and "3" are two keys).
 *
 * Values: dense CPU or GPU arrays of float32, float64, int32 or int64, of
 * the shape and dtype the key was initialised with (see mxc_kvstore_init
 * for GPU arrays). A push's values of one
 * key are summed element by element in the order they are listed (a
 * fixed order: the same inputs always give bit-identical sums).
 *
 * Asynchrony: push, pull and the updates are engine work over the arrays
 * (a push reads its values, a pull writes its outputs, in the order of
 * all other work on them), so the calls return at once; wait on an output
 * (mxc_ndarray_wait_to_read) or mxc_wait_all to see results. A failure
 * inside that work is reported by the next wait on an array it writes,
 * naming the work ("kvstore push key 'w'") and the failure. priority:
 * higher runs earlier among work that is ready (e.g. the gradients of the
 * last layers, which backward produces first).
 *
 * Errors a call can see (unknown key, push or pull before init, a shape or
 * dtype other than the key's, an unknown optimizer or a bad parameter)
 * are returned with a message before anything is pushed.
 *
 * Thread-safety: every function may be called from any thread; calls on
 * one store are serialised. Freeing a store while another thread uses it
 * is safe (that call fails with MXC_ERR_INVALID_HANDLE or completes).
 * Since 1.1. */
typedef struct mxc_kvstore_s *mxc_kvstore;

/* Updater callback: updates `local` (the stored array of the key) from
 * `recv` (the sum of this push), typically by invoking operators (say
 * mxc_op_invoke of sgd_update with out = local), which the engine orders
 * after the sum. str_key is the key (NULL for an int key, then int_key is
 * it). The handles and str_key are borrowed for the call: the callback
 * must not free them or keep them afterwards. It runs in the thread that
 * called push, after the sums were pushed; it may call the store. Returns
 * MXC_OK, or an error code that push returns (with the callback's
 * mxc_last_error message when it set one). Since 1.1. */
typedef int (*mxc_kvstore_updater_fn)(const char *str_key, int64_t int_key,
                                      mxc_ndarray recv, mxc_ndarray local,
                                      void *user_data);

/* A new store of type "local" or "dist_sync" (copied). "dist_sync" is
 * MXC_ERR_UNSUPPORTED with the reason when this process cannot join an
 * MPI job (no MPI plug-in, or not launched by mpirun). *out is owned by
 * the caller: free it with mxc_kvstore_free. Since 1.1. */
MXC_API int mxc_kvstore_create(const char *type, mxc_kvstore *out);

/* Frees the store and its arrays (their storage is released once pushed
 * work on them finished); a fit training through the store
 * (mxc_fit_set_kvstore) keeps it until the fit is freed or set to
 * another. Accepts NULL. A "local" store never waits.
 * Freeing the process's last "dist_sync" store waits until the
 * collectives pushed so far ran, then finalizes MPI (every worker frees
 * it, as MPI_Finalize expects of every rank); a later "dist_sync" store
 * is MXC_ERR_UNSUPPORTED (MPI starts once per process). Since 1.1. */
MXC_API void mxc_kvstore_free(mxc_kvstore kv);

/* *out = the store's type ("local", "dist_sync"): a static string, never
 * freed. Since 1.1. */
MXC_API int mxc_kvstore_type(mxc_kvstore kv, const char **out);

/* *out = this worker's rank (0 .. num_workers - 1; 0 for "local").
 * Since 1.1. */
MXC_API int mxc_kvstore_rank(mxc_kvstore kv, int *out);

/* *out = the number of workers (1 for "local"). Since 1.1. */
MXC_API int mxc_kvstore_num_workers(mxc_kvstore kv, int *out);

/* Returns once every worker called it (at once for "local"). Since 1.1. */
MXC_API int mxc_kvstore_barrier(mxc_kvstore kv);

/* Stores a copy of vals[i] under key i, for i < n: keys distinct and not
 * initialised before. vals are borrowed for the call (the copy is engine
 * work reading them). Values and outputs of every store call may be CPU
 * or GPU arrays, mixed: the store keeps its arrays in host memory and sums
 * and updates there (MXNet's "local" model), so a GPU value is copied to
 * host memory first and a pull into a GPU array is a copy (both engine
 * work, ordered with the arrays' other work). With an optimizer set, the key's states are made
 * (zeros). "dist_sync": every worker holds rank 0's values; every worker
 * must init the same keys in the same order with the same shapes and
 * dtypes, which the call checks across the job, waiting for every
 * worker's init: a difference is an error on every worker (MXC_ERR_SHAPE,
 * MXC_ERR_DTYPE or MXC_ERR_INVALID_ARGUMENT, naming the key and what it
 * is here and on the other rank) and initialises nothing. Since 1.1. */
MXC_API int mxc_kvstore_init(mxc_kvstore kv, int n, const int64_t *int_keys,
                             const char *const *str_keys,
                             const mxc_ndarray *vals);

/* Pushes vals[i] for key i, for i < n; a key may appear several times
 * (its values are summed in list order). Without an updater the sum
 * becomes the stored array; with one, the updater updates the stored
 * array from it. Every key must be initialised. vals are borrowed for
 * the call. Since 1.1. */
MXC_API int mxc_kvstore_push(mxc_kvstore kv, int n, const int64_t *int_keys,
                             const char *const *str_keys,
                             const mxc_ndarray *vals, int priority);

/* Copies the stored array of key i into outs[i], for i < n (a key may
 * appear several times, one output each). Since 1.1. */
MXC_API int mxc_kvstore_pull(mxc_kvstore kv, int n, const int64_t *int_keys,
                             const char *const *str_keys,
                             const mxc_ndarray *outs, int priority);

/* mxc_kvstore_push(vals) then mxc_kvstore_pull(outs) of the same keys;
 * outs[i] may be vals[i] (in place). Both halves are checked before
 * either is pushed. Since 1.1. */
MXC_API int mxc_kvstore_pushpull(mxc_kvstore kv, int n,
                                 const int64_t *int_keys,
                                 const char *const *str_keys,
                                 const mxc_ndarray *vals,
                                 const mxc_ndarray *outs, int priority);

/* Makes the update operator `name` (an operator of the registry with
 * inputs weight, grad and states updated in place, one output: sgd_update,
 * sgd_mom_update, nag_mom_update, adam_update, rmsprop_update,
 * rmspropalex_update, adagrad_update, ftrl_update, signsgd_update,
 * signum_update) the store's updater, with n_params parameters as
 * key/value strings (copied; parsed now: "lr", "wd", "rescale_grad",
 * "momentum", ...). Each key gets the operator's states, zeros, now and
 * at its init; a push then runs name(weight = stored, grad = sum, states)
 * into the stored array. Replaces any updater or optimizer (and its
 * states). Since 1.1. */
MXC_API int mxc_kvstore_set_optimizer(mxc_kvstore kv, const char *name,
                                      const char *const *keys,
                                      const char *const *vals, int n_params);

/* Makes fn(..., user_data) the updater (see mxc_kvstore_updater_fn); fn
 * NULL removes it (pushes then store the sum). user_data is the caller's,
 * passed to every call until the updater is replaced or the store freed.
 * Replaces any optimizer (and its states). Since 1.1. */
MXC_API int mxc_kvstore_set_updater(mxc_kvstore kv, mxc_kvstore_updater_fn fn,
                                    void *user_data);

/* mxc_kvstore_set_updater with ownership of user_data passed to the
 * store: free_fn (may be NULL) runs once with user_data when the updater
 * is replaced or removed or the store freed, and only after every call of
 * fn in progress in any thread has returned (so a binding can drop its
 * reference there without racing a push). It may run later than that
 * call, on another thread leaving an mxc call; it must not call mxc.
 * With fn NULL the updater is removed and free_fn runs at once; when
 * this call fails it runs too. Since 1.1. */
MXC_API int mxc_kvstore_set_updater_ex(mxc_kvstore kv,
                                       mxc_kvstore_updater_fn fn,
                                       void *user_data, mxc_free_fn free_fn);

/* fit() through a store (see "Training loops": mxc_fit). */
/* Trains data-parallel through kv (the KVStore below), the one argument that
 * turns a fit into distributed training: every worker of the job runs the
 * same program (the same fit, blocks, optimizer and keys, from one
 * thread) with its own iterators, and:
 *  - the training iterator reads part `rank` of `num_workers` (set at
 *    each epoch's start with mxc_data_iter_set_parts; the fit key
 *    shard_by_rank "0" leaves it as given, for data sharded otherwise);
 *  - after each backward pass every gradient becomes the sum over the
 *    workers (pushpull through kv, keys "fit:NAME" per parameter), and
 *    every worker makes the same optimizer step with the global batch
 *    (its batch's rows times num_workers), so the parameters stay the
 *    same bits on every worker. The first step also makes every
 *    parameter and auxiliary state rank 0's value (parameters are made by
 *    the first forward pass, whose gradients each worker computed from
 *    its own values: seed every worker alike, mxc_random_seed, for an
 *    exact first step); auxiliary states (BatchNorm's running statistics)
 *    then follow each worker's own batches;
 *  - a batch is trained only when every worker has one, and an epoch
 *    starts only when every worker goes on (early stopping or
 *    mxc_fit_stop on any worker stops all), one small collective each;
 *  - metrics are each worker's own (train: its part; val: its validation
 *    iterator, usually the whole set, so the same on every worker);
 *    progress lines, the CSV log, TensorBoard files and checkpoints come
 *    from rank 0 alone. mxc_fit_value gives "rank" and "num_workers".
 * A "local" store of one worker trains as without a store, through it.
 * kv NULL: train alone again. The fit holds a reference to the store
 * (the caller may free its handle; a dist_sync store ends MPI when the
 * last reference goes). A store serves one fit: a second fit's first step
 * on it fails naming the key already initialised. Errors: a freed or
 * wrong handle, MXC_ERR_INVALID_HANDLE. fit and kv are borrowed for the
 * call; one thread at a time per fit, as every fit function. Since 1.1. */
MXC_API int mxc_fit_set_kvstore(mxc_fit fit, mxc_kvstore kv);

/* ------------------------------------------------------------------------ */
/* Memory scopes and handle introspection                                     */
/* ------------------------------------------------------------------------ */

/* A memory scope frees, when it ends, every handle its thread was given
 * while it was that thread's innermost open scope, so that code which
 * makes many temporary arrays need not free each one.
 *
 * Which handles: every new handle a function returns to its caller
 * (arrays, array lists, data iterators, symbols, executors, string lists,
 * inference results, predictors, RecordIO files, KVStores, blocks,
 * optimizers, fits) is registered, when it is made, in the calling
 * thread's innermost open scope, or in none when the
 * thread has no scope open. Handles lent for the duration of a callback
 * (an mxc_opctx, a monitor's array) are never registered, and neither are
 * strings (mxc_string_free) and scopes themselves.
 *
 * Ending a scope frees its registered handles, newest first, exactly as
 * the matching free function would. A handle freed by hand earlier simply
 * left its scope (no double free); one moved out with mxc_scope_keep
 * belongs to the enclosing scope, one moved out with mxc_scope_detach to
 * no scope (the caller frees it). A handle used after its scope ended is
 * the usual freed-handle error (MXC_ERR_INVALID_HANDLE). Storage shared
 * with other views, or used by pending work, lives on as after any free.
 *
 * Threads: scopes are per thread. Each thread has its own stack of open
 * scopes; begin, end, keep and detach act on the calling thread's scopes
 * and fail with MXC_ERR_INVALID_ARGUMENT for another thread's. A handle
 * made by one thread may be used and freed by others as usual; ending its
 * scope frees it for everyone (a racing call fails cleanly, see
 * Handles in docs/c-api.md). A thread that exits with scopes open has them
 * ended as it exits. Languages whose tasks move between OS threads (Go's
 * goroutines) must pin the task to its thread while a scope is open.
 *
 * All functions in this section are thread-safe in that sense. */
typedef struct mxc_scope_s *mxc_scope;

/* Opens a scope on the calling thread; it is the thread's innermost one
 * until it ends or a scope is begun inside it. *out is a new handle owned
 * by the caller, valid until mxc_scope_end (which frees it). Since 1.1. */
MXC_API int mxc_scope_begin(mxc_scope *out);

/* Ends scope: frees every handle still registered in it, then the scope
 * handle itself. scope must be the calling thread's innermost open scope:
 * a scope of another thread, or one with scopes still open inside it, is
 * MXC_ERR_INVALID_ARGUMENT (nothing is freed); an ended scope is
 * MXC_ERR_INVALID_HANDLE. Since 1.1. */
MXC_API int mxc_scope_end(mxc_scope scope);

/* Moves handle (any handle a function returned: an mxc_ndarray,
 * mxc_symbol, ... cast to const void *) out of its scope into the
 * enclosing one, for a result that must outlive the scope; out of an
 * outermost scope it belongs to no scope. A handle in no scope stays so
 * (MXC_OK). The handle is not otherwise touched. Its scope must be the
 * calling thread's (else MXC_ERR_INVALID_ARGUMENT); a freed or invalid
 * handle is MXC_ERR_INVALID_HANDLE, NULL MXC_ERR_INVALID_ARGUMENT.
 * Since 1.1. */
MXC_API int mxc_scope_keep(const void *handle);

/* As mxc_scope_keep, but out of every scope: the caller frees the handle
 * by hand (or a binding's finalizer does). Since 1.1. */
MXC_API int mxc_scope_detach(const void *handle);

/* *out = the scope handle (any kind of handle a function returned) is
 * registered in, or NULL when it is in none; the scope handle is borrowed
 * (valid until that scope ends). For a wrapper deciding whether a value
 * was made inside a scope it is ending. A freed or invalid handle is
 * MXC_ERR_INVALID_HANDLE, NULL MXC_ERR_INVALID_ARGUMENT. Thread-safe.
 * Since 1.1. */
MXC_API int mxc_handle_scope(const void *handle, mxc_scope *out);

/* Live handles and the bytes of their data: of scope (its own registered
 * handles, not those of scopes inside it), or, for scope NULL, of the
 * whole process (every live handle of any kind, scopes included; bytes of
 * every live array handle). Bytes are each array handle's data size when
 * it was made (views count their own extent, also when they share
 * storage); other kinds count 0. scope may be any thread's open scope.
 * Either out-parameter may be NULL. A snapshot: other threads may change
 * it at once. Since 1.1. */
MXC_API int mxc_scope_stats(mxc_scope scope, int64_t *out_handles,
                            int64_t *out_bytes);

/* *out = a new NUL-terminated text (free with mxc_string_free) listing the
 * live handles registered in scope (scope NULL: every live handle a
 * function returned, in a scope or not), one line each: kind, handle,
 * bytes, the public function that made it, the caller's tag when handle
 * debugging was on (mxc_handle_debug_set), and the depth of its scope,
 * e.g. "mxc_ndarray 0x100000003: 16 bytes, made by mxc_ndarray_create at
 * Train.java:42, in a scope of depth 1". For finding leaks: handles still
 * listed after the code that made them is done. scope may be any
 * thread's. Since 1.1. */
MXC_API int mxc_handle_dump(mxc_scope scope, char **out);

/* Turns handle debugging on (nonzero) or off for the process: while on,
 * every new handle records its thread's caller tag (mxc_handle_tag_set).
 * The initial state is on when the environment variable MXC_DEBUG_HANDLES
 * is "1". Thread-safe. Since 1.1. */
MXC_API int mxc_handle_debug_set(int enabled);

/* *out = 1 when handle debugging is on, else 0: bindings compute their
 * caller tags (a stack line) only then. Thread-safe. Since 1.1. */
MXC_API int mxc_handle_debug_enabled(int *out);

/* Sets the calling thread's caller tag (a short UTF-8 text naming the
 * caller's code location, e.g. "Train.java:42"), recorded by the handles
 * the thread makes while handle debugging is on; NULL clears it. tag is
 * copied (its first 511 bytes); equal tags are stored once for the life
 * of the process, and at most 4096 distinct tags are kept (beyond:
 * MXC_ERR_OOM, the previous tag stays). Since 1.1. */
MXC_API int mxc_handle_tag_set(const char *tag);

/* Sets the caller tag recorded for one live handle (any kind a function
 * returned), replacing the one it was made with; NULL clears it. For a
 * binding whose wrapper learns its caller's location only after the
 * handle exists: it tags each handle it wraps (while handle debugging is
 * on, to pay for the stack walk only then; the tag is recorded either
 * way). tag is copied as for mxc_handle_tag_set (same limits). A freed or
 * invalid handle is MXC_ERR_INVALID_HANDLE, NULL MXC_ERR_INVALID_ARGUMENT.
 * Thread-safe. Since 1.1. */
MXC_API int mxc_handle_tag(const void *handle, const char *tag);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXC_MXC_H_ */
