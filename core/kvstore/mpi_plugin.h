/* The MPI plug-in's binary interface: what libmxc.so.1 and
 * libmxc_mpi.so.1 agree on (the design of core/base/gpu_plugin.h).
 *
 * Why a plug-in: libmxc.so.1 must work, with no MPI dependency, on
 * machines without MPI (most of its users); "dist_sync" stores need MPI.
 * The MPI code lives in its own library, built against Debian's Open MPI
 * and loaded with dlopen when the first "dist_sync" store is made
 * (core/kvstore/dist.c). Neither library links the other: the plug-in
 * calls no mxc__ function and libmxc names no MPI symbol.
 *
 * The plug-in exports one function, MXC__MPI_PLUGIN_ENTRY, returning a
 * static table that starts with its ABI version and size; a table of
 * another ABI version, or built from other mxc sources, is refused with a
 * message.
 *
 * Threads: every function except `launched` is called from one thread,
 * the store's communication thread, which calls init first and finalize
 * last (MPI_THREAD_FUNNELED: only that thread calls MPI).
 *
 * Errors: functions return MXC_OK or an MXC_ERR_* code and, on failure,
 * write a NUL-terminated reason of at most why_len bytes into why. */
#ifndef MXC_CORE_KVSTORE_MPI_PLUGIN_H_
#define MXC_CORE_KVSTORE_MPI_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

/* 2 (2026-11-29): allreduce takes a source and a second destination. A
 * plug-in of ABI 1 (from the same mxc version's earlier sources) is
 * refused rather than called with the wrong arguments. */
#define MXC__MPI_PLUGIN_ABI 2
#define MXC__MPI_PLUGIN_ENTRY "mxc_mpi_plugin_v1"
/* Looked up by the dynamic loader's rules (the Debian package
 * libmxc-mpi1 installs it beside libmxc.so.1); MXC_MPI_PLUGIN, read once,
 * names another file. */
#define MXC__MPI_PLUGIN_FILE "libmxc_mpi.so.1"

#define MXC__MPI_STR2(x) #x
#define MXC__MPI_STR(x) MXC__MPI_STR2(x)
#define MXC__MPI_MXC_VERSION                                         \
  MXC__MPI_STR(MXC_VERSION_MAJOR) "." MXC__MPI_STR(MXC_VERSION_MINOR) \
      "." MXC__MPI_STR(MXC_VERSION_PATCH)

typedef struct mxc__mpi_plugin {
  uint32_t abi;  /* MXC__MPI_PLUGIN_ABI */
  uint32_t size; /* sizeof(mxc__mpi_plugin) where the plug-in was built */
  const char *mxc_version; /* MXC__MPI_MXC_VERSION of its sources */
  /* The MPI library it runs on ("Open MPI v4.1.4, ..."). */
  const char *(*library)(void);
  /* Initialises MPI with MPI_THREAD_FUNNELED or more on the calling
   * thread; *rank and *size of the world. MXC_ERR_UNSUPPORTED when MPI
   * cannot start. */
  int (*init)(int *rank, int *size, char *why, size_t why_len);
  /* buf (count elements of dtype: MXC_DTYPE_FLOAT32, FLOAT64, INT32,
   * INT64) becomes the sum over the ranks of each rank's src (read only;
   * src == buf sums in place, as MPI_IN_PLACE; otherwise the two do not
   * overlap), computed in an order fixed by count and the number of ranks
   * alone, once per element, so every rank receives the same bits (a
   * ring: reduce-scatter, then all-gather). also (NULL, or count elements
   * that do not overlap buf; it may be src) receives the same sums. */
  int (*allreduce)(const void *src, void *buf, void *also, int64_t count,
                   int dtype, char *why, size_t why_len);
  /* MPI_Allreduce itself on the same buffer (for bench/dist). */
  int (*allreduce_mpi)(void *buf, int64_t count, int dtype, char *why,
                       size_t why_len);
  /* buf (nbytes) becomes root's. */
  int (*broadcast)(void *buf, int64_t nbytes, int root, char *why,
                   size_t why_len);
  int (*barrier)(char *why, size_t why_len);
  /* MPI_Abort of the whole job with this exit code (does not return). */
  void (*abort)(int code);
  void (*finalize)(void);
} mxc__mpi_plugin;

typedef const mxc__mpi_plugin *(*mxc__mpi_plugin_entry_fn)(void);
MXC_API const mxc__mpi_plugin *mxc_mpi_plugin_v1(void);

#endif /* MXC_CORE_KVSTORE_MPI_PLUGIN_H_ */
