/* The NCCL table of the CUDA plug-in: what libmxc.so.1's KVStore
 * (core/kvstore/nccl.c) and libmxc_cuda.so.1 (backends/cuda/nccl.c) agree
 * on, so that "dist_sync" stores sum GPU values on the GPUs themselves
 * (docs/kvstore.md, "NCCL").
 *
 * Why a second entry point of the CUDA plug-in rather than rows of its
 * main table (gpu_plugin.h): the KVStore is the only user, NCCL is
 * optional inside an optional library, and a table of its own keeps the
 * GPU table's ABI untouched. libmxc opens the same file as the GPU loader
 * (MXC_CUDA_PLUGIN, else libmxc_cuda.so.1; dlopen returns the loaded
 * library) and looks up MXC__NCCL_PLUGIN_ENTRY; a plug-in without it (an
 * older one, the fake of tests/gpu in some modes) means "no NCCL", and the
 * store stages GPU values through host memory as before.
 *
 * NCCL itself (libnccl.so.2) is opened by the plug-in on first use, never
 * linked (backends/cuda/dynlib.h; MXC_NCCL_LIBRARY names another file).
 *
 * Threads: open may be called from any thread; every other function is
 * called by the store's communication thread alone (core/kvstore/dist.c),
 * which is also the only thread using a communicator.
 *
 * Errors: functions return MXC_OK or an MXC_ERR_* code and, on failure,
 * write a NUL-terminated reason of at most why_len bytes into why. */
#ifndef MXC_CORE_BASE_NCCL_PLUGIN_H_
#define MXC_CORE_BASE_NCCL_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

#define MXC__NCCL_PLUGIN_ABI 1
#define MXC__NCCL_PLUGIN_ENTRY "mxc_nccl_plugin_v1"
/* ncclUniqueId's size (NCCL_UNIQUE_ID_BYTES, stable since NCCL 2.0). */
#define MXC__NCCL_ID_BYTES 128

#define MXC__NCCL_STR2(x) #x
#define MXC__NCCL_STR(x) MXC__NCCL_STR2(x)
#define MXC__NCCL_MXC_VERSION                                          \
  MXC__NCCL_STR(MXC_VERSION_MAJOR) "." MXC__NCCL_STR(MXC_VERSION_MINOR) \
      "." MXC__NCCL_STR(MXC_VERSION_PATCH)

typedef struct mxc__nccl_plugin {
  uint32_t abi;  /* MXC__NCCL_PLUGIN_ABI */
  uint32_t size; /* sizeof(mxc__nccl_plugin) where the plug-in was built */
  const char *mxc_version; /* MXC__NCCL_MXC_VERSION of its sources */
  /* Opens NCCL (once per process) and checks its version: MXC_OK with
   * "NCCL 2.28.9" in version (len bytes), or MXC_ERR_UNSUPPORTED saying
   * why (library missing, a symbol missing, a version too old). */
  int (*open)(char *version, size_t len, char *why, size_t why_len);
  /* ncclGetUniqueId: the id rank 0 hands every rank (id: ID_BYTES). */
  int (*unique_id)(unsigned char *id, char *why, size_t why_len);
  /* ncclCommInitRank on gpu(dev) with a stream of its own for the
   * collectives: *comm, or an error (no communicator is left behind). */
  int (*comm_init)(const unsigned char *id, int nranks, int rank, int dev,
                   void **comm, char *why, size_t why_len);
  /* recv (count elements of dtype, device memory of the communicator's
   * GPU) becomes the sum over the ranks of each rank's send (send == recv:
   * in place; otherwise they do not overlap); then host (NULL, or count
   * elements of host memory) gets a copy. dtype: MXC_DTYPE_FLOAT32,
   * FLOAT64, INT32, INT64. Returns once all of it is complete, or with
   * the first error: the stream's, or NCCL's asynchronous one
   * (ncclCommGetAsyncError, polled while waiting, so that a peer's failure
   * NCCL detects ends the wait). After an error the communicator is
   * aborted and every later call fails. */
  int (*allreduce)(void *comm, const void *send, void *recv, int64_t count,
                   int dtype, void *host, char *why, size_t why_len);
  /* Frees the communicator (abort 1: ncclCommAbort, which never waits
   * for the peers; 0: ncclCommDestroy after its work). Accepts NULL. */
  void (*comm_destroy)(void *comm, int abort);
} mxc__nccl_plugin;

typedef const mxc__nccl_plugin *(*mxc__nccl_plugin_entry_fn)(void);
MXC_API const mxc__nccl_plugin *mxc_nccl_plugin_v1(void);

#endif /* MXC_CORE_BASE_NCCL_PLUGIN_H_ */
