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
 * come from one source package, so a mismatch means a broken install),
 * and so is one built from other mxc sources (mxc_version): the kernels
 * read the operator families' parameter structs.
 *
 * Errors: functions return MXC_OK or an MXC_ERR_* code and, on failure,
 * write a NUL-terminated reason of at most why_len bytes into `why`, which
 * the loader turns into the thread's error message.
 *
 * Streams (ABI 2): a stream is the plug-in's opaque queue of device work
 * on one device (a CUDA stream, with its pinned staging buffer).
 * libmxc's engine gives each GPU worker thread a stream of its own; work
 * enqueued on one stream runs in order, work on two streams in any order,
 * so libmxc's engine orders it: an operation counts as done only once an
 * event recorded on its stream after its work completed (event_sync
 * returned MXC_OK), or, where no event can be had, after stream_sync of
 * that stream. Errors of asynchronous work (a faulting kernel) are
 * reported by that event_sync (or stream_sync). A stream is used by one
 * thread at a time (its worker); an event too (recorded by the worker,
 * then handed to the thread that waits for it).
 *
 * Thread-safety: open runs once, before any other function except that
 * the kernel table may be read before open. The others may be called from
 * any thread at the same time (a given stream from one thread at a
 * time). */
#ifndef MXC_CORE_BASE_GPU_PLUGIN_H_
#define MXC_CORE_BASE_GPU_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

/* ABI 2 (streams): kernels and copies are enqueued on a stream the
 * caller owns (stream_create) and complete at stream_sync, or at the
 * event_sync of an event recorded after them. The event functions were
 * appended to the table of ABI 2 without a new version: both libraries
 * come from one source package and the loader accepts only a table at
 * least as large as its own, of the same mxc version (a plug-in without
 * them is refused as a mixed install). */
#define MXC__GPU_PLUGIN_ABI 2
#define MXC__GPU_PLUGIN_ENTRY "mxc_gpu_plugin_v2"
/* The library file looked up by the dynamic loader's rules (the Debian
 * package libmxc-cuda1 installs it beside libmxc.so.1); the environment
 * variable MXC_CUDA_PLUGIN, read once, names another file. */
#define MXC__GPU_PLUGIN_FILE "libmxc_cuda.so.1"
#define MXC__GPU_NAME_MAX 256 /* as cudaDeviceProp.name */

#define MXC__GPU_STR2(x) #x
#define MXC__GPU_STR(x) MXC__GPU_STR2(x)
/* The mxc version a plug-in reports and the loader expects. */
#define MXC__GPU_MXC_VERSION                                         \
  MXC__GPU_STR(MXC_VERSION_MAJOR) "." MXC__GPU_STR(MXC_VERSION_MINOR) \
      "." MXC__GPU_STR(MXC_VERSION_PATCH)

/* Host pointers in a copy: the device id for host memory. */
#define MXC__GPU_HOST (-1)

/* event_query: the work before the event is still running. Not an
 * MXC_ERR_* code (those are positive). */
#define MXC__GPU_NOT_READY (-1)

/* One array of a kernel call: device memory of the call's device,
 * compact row-major. */
typedef struct mxc__gpu_array {
  void *ptr;
  int64_t size; /* elements */
  int ndim;
  int64_t dims[MXC_MAX_NDIM];
  int dtype; /* MXC_DTYPE_* */
  /* Sparse arrays, in calls of a kernel with an `stypes` function only
   * (every other kernel gets dense arrays, stype 0): MXC_STYPE_CSR with
   * dims/ndim/size the logical (rows, cols) matrix, ptr its nnz stored
   * values (dtype), aux[0] its indptr (dims[0] + 1 entries) and aux[1]
   * its column indices (nnz entries), both of index_dtype
   * (MXC_DTYPE_INT32 or INT64), all in device memory and well-formed
   * (libmxc checks a CSR array before it reaches a GPU). */
  int stype;
  int index_dtype;
  int64_t nnz;
  void *aux[2];
} mxc__gpu_array;

/* Write modes of an output, as the operator framework's (core/op/op.h). */
#define MXC__GPU_REQ_NULL 0
#define MXC__GPU_REQ_WRITE 1
#define MXC__GPU_REQ_INPLACE 2 /* write; the output shares an input's memory */
#define MXC__GPU_REQ_ADD 3

/* The counters a random operator (MXC__RES_RANDOM) reserved at push time,
 * in the pushing thread (core/op/invoke.c): core/resource/random.h's
 * mxc__rng_slice, copied field by field because core/base sits below
 * core/resource. All zero for other operators. */
typedef struct mxc__gpu_rng {
  uint32_t key[2];
  uint64_t block; /* first counter */
  uint64_t n_blocks;
} mxc__gpu_rng;

/* Everything one kernel call gets. */
typedef struct mxc__gpu_call {
  int dev;
  /* The operator's parsed parameters: its family's struct (ops/<family>),
   * which the plug-in may read because both libraries come from one
   * source version (the loader checks it); NULL for operators without. */
  const void *param;
  const mxc__gpu_array *in;
  int n_in;
  const mxc__gpu_array *out;
  int n_out;
  const int *req; /* per output: MXC__GPU_REQ_* */
  /* 1 when the operator runs in training mode (the opctx's is_train):
   * BatchNorm uses batch statistics then. */
  int is_train;
  /* The call's random slice: a GPU sampler computes from it the values the
   * CPU's kernel would (core/resource/philox_impl.h). Both libraries come
   * from one source version (the loader checks it). */
  mxc__gpu_rng rng;
} mxc__gpu_call;

/* A kernel of one operator. */
typedef struct mxc__gpu_kernel {
  const char *op; /* the operator's canonical name */
  /* 1 when the kernel handles a call with these dtypes: n_in inputs, then
   * n_out outputs (-1: not decided yet). NULL: float32 everywhere. */
  int (*supports)(const int *dtypes, int n_in, int n_out);
  /* Runs the call on gpu(c->dev), on the calling thread's current stream
   * (the table's launch sets it; libmxc never calls run directly). On a
   * stream it may return before the work is done; on the legacy default
   * stream (a direct call) it returns when the results are in device
   * memory. */
  int (*run)(const mxc__gpu_call *c, char *why, size_t why_len);
} mxc__gpu_kernel;

/* A dense row's second opinion (the plug-in's `accepts` table, below):
 * 1 when the kernel of operator op takes call c, judged by its
 * parameters (c->param), shapes, write modes and training mode, without
 * touching a device; 0 when it declines, with the reason in why (what the
 * call has and what the kernel takes). libmxc asks it where it chooses
 * the row (core/op/invoke.c: every imperative call, executor node and
 * autograd step) and runs a declined call through the CPU fallback
 * (core/op/device_fallback.c), so that a parameter form the GPU has no
 * code for (LeakyReLU's prelu, Pooling's lp) never fails in run; the
 * fused operator's program runs unfused instead (core/op/fusion.h).
 * In c every array's ptr and aux are NULL and dtypes may be -1 (not
 * decided yet); c->dev is -1 and every array's ndim and size are -1 when
 * the caller asks before shapes and a device are known (a graph pass:
 * answer by the parameters alone, 1 when in doubt). Called on the
 * pushing thread, from any thread at once; it may cache, and must not
 * wait for device work. */
typedef int (*mxc__gpu_accepts_fn)(const mxc__gpu_call *c, char *why,
                                   size_t why_len);

typedef struct mxc__gpu_accepts {
  const char *op; /* the operator of a row of `kernels` */
  mxc__gpu_accepts_fn accepts;
} mxc__gpu_accepts;

/* 1 when the arrays of a call given to an accepts function have their
 * shapes (a query from a graph pass has none: every ndim is -1). */
static inline int mxc__gpu_call_has_shapes(const mxc__gpu_call *c) {
  return c->n_in + c->n_out == 0 ||
         (c->n_in > 0 ? c->in[0].ndim : c->out[0].ndim) >= 0;
}

/* A kernel of one operator for calls with sparse arrays (the plug-in's
 * sparse_kernels): k as a dense row (its run gets the sparse arrays as
 * mxc__gpu_array's sparse fields say), and the storage types it takes.
 * An operator may have a dense row and sparse rows: libmxc runs a sparse
 * row only for calls with a sparse array, the first whose stypes and
 * dtypes accept it. */
typedef struct mxc__gpu_sparse_kernel {
  mxc__gpu_kernel k;
  /* 1 when the kernel handles these storage types (MXC_STYPE_*: n_in
   * inputs, then n_out outputs, -1 not decided yet). */
  int (*stypes)(const int *stypes, int n_in, int n_out);
} mxc__gpu_sparse_kernel;

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
   * for host memory) on the legacy default stream, returning when the
   * copy is complete. */
  int (*copy)(void *dst, int dst_dev, const void *src, int src_dev,
              size_t nbytes, char *why, size_t why_len);
  /* "MAJOR.MINOR.PATCH" of the mxc sources it was built from: kernels read
   * internal parameter structs, so only the same version is accepted. */
  const char *mxc_version;
  /* Its kernels (static table), attached to the operators by name when
   * the registry is built; reading them does not open the runtime. */
  const mxc__gpu_kernel *kernels;
  int n_kernels;
  /* ---- ABI 2: streams ---- */
  /* A new stream on dev in *out, with its resources (a pinned staging
   * buffer is made on first use). MXC_ERR_* and the reason on failure. */
  int (*stream_create)(int dev, void **out, char *why, size_t why_len);
  /* Waits for the stream's work (errors ignored), then frees it. */
  void (*stream_destroy)(void *stream);
  /* Waits until every piece of work enqueued on the stream so far is
   * complete (never the whole device). MXC_OK, or the first error of that
   * work with the runtime's message (reported once). */
  int (*stream_sync)(void *stream, char *why, size_t why_len);
  /* As copy, enqueued on stream (which belongs to dst_dev, or to src_dev
   * when dst is host memory). It may return before the copy is done:
   * both sides must stay valid and untouched until stream_sync returned
   * (or event_sync of an event recorded after the copy).
   * Host memory that is not pinned goes through the stream's pinned
   * staging buffer. */
  int (*copy_async)(void *dst, int dst_dev, const void *src, int src_dev,
                    size_t nbytes, void *stream, char *why, size_t why_len);
  /* Runs kernel k (a row of kernels) for c on stream (of device c->dev),
   * made the calling thread's current stream around k->run so that the
   * kernel's launches, library handles and copies use it: run may then
   * return before the work is done, and the caller waits (stream_sync, or
   * event_sync of an event recorded after it) before it reads the outputs
   * or frees anything the call names (param included; the arrays c points
   * to may go at once).
   * stream NULL: the legacy default stream, complete on return (the
   * naive engine, threads without a stream). */
  int (*launch)(const mxc__gpu_kernel *k, const mxc__gpu_call *c,
                void *stream, char *why, size_t why_len);
  /* ---- ABI 2: events (CUDA events without timing) ---- */
  /* A new event of device dev in *out; MXC_ERR_* and the reason on
   * failure. A new event counts as complete. */
  int (*event_create)(int dev, void **out, char *why, size_t why_len);
  /* Frees an event no stream waits for any more (any thread). */
  void (*event_destroy)(void *event);
  /* Marks the work enqueued on stream (of the event's device) so far: the
   * event completes once that work has. Recording again moves the mark
   * (the event must not be waited for meanwhile). */
  int (*event_record)(void *event, void *stream, char *why, size_t why_len);
  /* MXC_OK when the work before the event's last record is complete,
   * MXC__GPU_NOT_READY while it runs, else the error of that work with
   * the runtime's message. Never blocks. */
  int (*event_query)(void *event, char *why, size_t why_len);
  /* Blocks until the work before the event's last record is complete:
   * MXC_OK, or the error of that work with the runtime's message. CUDA's
   * asynchronous faults are sticky for the whole device context: after
   * one, every later event of the device reports it too. */
  int (*event_sync)(void *event, char *why, size_t why_len);
  /* Work enqueued on stream after this call starts only once the event's
   * last record (made before this call) is complete, on the device,
   * without blocking the host (cudaStreamWaitEvent). The event may belong
   * to another device. */
  int (*stream_wait_event)(void *stream, void *event, char *why,
                           size_t why_len);
  /* ---- appended: kernels for sparse arrays (static table; launched
   * through launch with &row->k). libmxc reads them only from a table
   * whose size covers them. ---- */
  const mxc__gpu_sparse_kernel *sparse_kernels;
  int n_sparse_kernels;
  /* ---- appended: rows that decline calls by their parameters (static
   * table, at most one entry per operator; operators without one take
   * every call their row's supports takes). Kept apart from the rows so
   * that the rows' layout, and every table written before it, stays as
   * it was; libmxc reads it only from a table whose size covers it (the
   * loader refuses smaller tables of this version anyway). ---- */
  const mxc__gpu_accepts *accepts;
  int n_accepts;
} mxc__gpu_plugin;

/* The entry point's type, and its declaration for the plug-in that
 * defines it (libmxc never does: it finds it with dlsym). */
typedef const mxc__gpu_plugin *(*mxc__gpu_plugin_entry_fn)(void);
MXC_API const mxc__gpu_plugin *mxc_gpu_plugin_v2(void);

#endif /* MXC_CORE_BASE_GPU_PLUGIN_H_ */
