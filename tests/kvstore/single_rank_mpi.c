/* An MPI plug-in (core/kvstore/mpi_plugin.h) for a job of one rank,
 * without MPI: a "dist_sync" store in one process, so that the store's
 * dist paths (the NCCL one among them) run in an ordinary test binary,
 * under the sanitizers, and on the GPU machine of scripts/gpu_check.sh,
 * which has no MPI. With one rank every sum is the rank's own value and a
 * broadcast or a barrier has nothing to do. Used with PMI_RANK=0 (the
 * store's launcher check) and MXC_MPI_PLUGIN naming this file. */
#include <string.h>
#include <unistd.h>

#include "core/kvstore/mpi_plugin.h"

static const char *single_library(void) { return "one rank, no MPI (test)"; }

static int single_init(int *rank, int *size, char *why, size_t why_len) {
  (void)why, (void)why_len;
  *rank = 0;
  *size = 1;
  return MXC_OK;
}

static size_t bytes_of(int64_t count, int dtype) {
  size_t each = dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_INT32 ? 4 : 8;
  return (size_t)count * each;
}

static int single_allreduce(const void *src, void *buf, void *also,
                            int64_t count, int dtype, char *why,
                            size_t why_len) {
  (void)why, (void)why_len;
  size_t n = bytes_of(count, dtype);
  if (src != buf) memcpy(buf, src, n);
  if (also && also != buf) memmove(also, buf, n);
  return MXC_OK;
}

static int single_allreduce_mpi(void *buf, int64_t count, int dtype,
                                char *why, size_t why_len) {
  (void)buf, (void)count, (void)dtype, (void)why, (void)why_len;
  return MXC_OK;
}

static int single_broadcast(void *buf, int64_t nbytes, int root, char *why,
                            size_t why_len) {
  (void)buf, (void)nbytes, (void)root, (void)why, (void)why_len;
  return MXC_OK;
}

static int single_barrier(char *why, size_t why_len) {
  (void)why, (void)why_len;
  return MXC_OK;
}

static void single_abort(int code) { _exit(code); }
static void single_finalize(void) {}

static const mxc__mpi_plugin k_table = {
    .abi = MXC__MPI_PLUGIN_ABI,
    .size = sizeof(mxc__mpi_plugin),
    .mxc_version = MXC__MPI_MXC_VERSION,
    .library = single_library,
    .init = single_init,
    .allreduce = single_allreduce,
    .allreduce_mpi = single_allreduce_mpi,
    .broadcast = single_broadcast,
    .barrier = single_barrier,
    .abort = single_abort,
    .finalize = single_finalize,
};

const mxc__mpi_plugin *mxc_mpi_plugin_v1(void) { return &k_table; }
