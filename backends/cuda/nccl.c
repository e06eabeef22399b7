/* The plug-in's NCCL table (core/base/nccl_plugin.h): what the KVStore's
 * dist_sync pushes of GPU values run on (docs/kvstore.md, "NCCL").
 *
 * NCCL is opened on first use through dynlib.h (never linked: the
 * plug-in loads without it, and the store then stages GPU values through
 * host memory). MXC_NCCL_LIBRARY, read once, names the file to open
 * instead of libnccl.so.2 (a wheel's copy; the tests name a missing file).
 * The types come from the toolkit's nccl.h (NCCL 2.28 here); the calls
 * used exist since NCCL 2.4 (ncclCommAbort and ncclCommGetAsyncError came
 * then), which is the oldest version accepted.
 *
 * A communicator has a stream of its own on its GPU, created non-blocking
 * so that the legacy default stream's work never waits for a collective
 * that waits for other ranks. Only the KVStore's communication thread
 * calls these functions. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/dynlib.h"
#include "core/base/nccl_plugin.h"

/* The oldest NCCL accepted (see above), as ncclGetVersion codes it from
 * 2.9 on: major * 10000 + minor * 100 + patch. */
#define MIN_VERSION 20400

static const char *const k_symbols[] = {
    "ncclGetVersion",        "ncclGetUniqueId", "ncclCommInitRank",
    "ncclAllReduce",         "ncclCommGetAsyncError",
    "ncclCommAbort",         "ncclCommDestroy", "ncclGetErrorString",
    NULL};
enum {
  F_VERSION, F_UNIQUE_ID, F_INIT, F_ALLREDUCE, F_ASYNC_ERROR, F_ABORT,
  F_DESTROY, F_ERROR_STRING
};
static void *g_fns[sizeof k_symbols / sizeof k_symbols[0]];
static const char *g_files[] = {"libnccl.so.2", NULL};

static mxc__cuda_dynlib g_nccl = {
    .what = "NCCL",
    .install = "NVIDIA's NCCL 2 for CUDA 13 (the CUDA repository's "
               "libnccl2 package, or the nvidia-nccl-cu13 wheel's lib "
               "folder)",
    .files = g_files,
    .symbols = k_symbols,
    .fns = g_fns,
    .mu = PTHREAD_MUTEX_INITIALIZER,
};

#define FN(i, name) ((__typeof__(&name))g_fns[i])

typedef struct comm {
  ncclComm_t c;
  cudaStream_t s;
  int dev;
  int broken; /* after an error: aborted, every call fails */
} comm;

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

static void read_env(void) {
  const char *env = getenv("MXC_NCCL_LIBRARY");
  if (env && *env) g_files[0] = env;
}

/* ncclGetVersion's code as (major, minor, patch): 2.9 and later code it
 * as X*10000 + Y*100 + Z, earlier ones as X*1000 + Y*100 + Z. */
static int version_norm(int code) {
  return code >= 10000 ? code : code / 1000 * 10000 + code % 1000;
}

static int nccl_open(char *version, size_t len, char *why, size_t why_len) {
  pthread_once(&g_env_once, read_env);
  int rc = mxc__cuda_dynlib_load(&g_nccl, why, why_len);
  if (rc != MXC_OK) return rc;
  int code = 0;
  if (FN(F_VERSION, ncclGetVersion)(&code) != ncclSuccess) code = 0;
  int v = version_norm(code);
  snprintf(version, len, "NCCL %d.%d.%d", v / 10000, v / 100 % 100,
           v % 100);
  if (v >= MIN_VERSION && v < 30000) return MXC_OK;
  snprintf(why, why_len,
           "%s (%s) is not NCCL 2.4 or a later 2.x, which the plug-in "
           "needs; install %s",
           version, g_files[0], g_nccl.install);
  return MXC_ERR_UNSUPPORTED;
}

static int nccl_fail(char *why, size_t len, const char *what,
                     ncclResult_t r) {
  snprintf(why, len, "%s: %s (ncclResult_t %d)", what,
           FN(F_ERROR_STRING, ncclGetErrorString)(r), (int)r);
  return MXC_ERR_INTERNAL;
}

static int nccl_unique_id(unsigned char *id, char *why, size_t why_len) {
  ncclUniqueId u;
  ncclResult_t r = FN(F_UNIQUE_ID, ncclGetUniqueId)(&u);
  if (r != ncclSuccess) return nccl_fail(why, why_len, "ncclGetUniqueId", r);
  memcpy(id, u.internal, MXC__NCCL_ID_BYTES);
  return MXC_OK;
}

static int nccl_comm_init(const unsigned char *id, int nranks, int rank,
                          int dev, void **out, char *why, size_t why_len) {
  *out = NULL;
  int rc = mxc__cuda_use_device(dev, why, why_len);
  if (rc != MXC_OK) return rc;
  comm *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(why, why_len, "out of memory for an NCCL communicator");
    return MXC_ERR_OOM;
  }
  c->dev = dev;
  cudaError_t e = cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    free(c);
    return mxc__cuda_rt_fail(why, why_len, "NCCL's stream", e);
  }
  ncclUniqueId u;
  memcpy(u.internal, id, MXC__NCCL_ID_BYTES);
  ncclResult_t r = FN(F_INIT, ncclCommInitRank)(&c->c, nranks, u, rank);
  if (r != ncclSuccess) {
    (void)cudaStreamDestroy(c->s);
    free(c);
    return nccl_fail(why, why_len, "ncclCommInitRank", r);
  }
  *out = c;
  return MXC_OK;
}

static int nccl_type(int dtype, ncclDataType_t *t) {
  switch (dtype) {
    case MXC_DTYPE_FLOAT32: *t = ncclFloat32; return 1;
    case MXC_DTYPE_FLOAT64: *t = ncclFloat64; return 1;
    case MXC_DTYPE_INT32: *t = ncclInt32; return 1;
    case MXC_DTYPE_INT64: *t = ncclInt64; return 1;
    default: return 0;
  }
}

static size_t type_bytes(int dtype) {
  return dtype == MXC_DTYPE_FLOAT32 || dtype == MXC_DTYPE_INT32 ? 4 : 8;
}

/* Waits for c's stream, polling NCCL's asynchronous error: a collective
 * whose peer failed (as NCCL sees it) ends the wait with that error,
 * where cudaStreamSynchronize would block for ever. The KVStore's
 * watchdog bounds the rest (a peer that never joins). */
static int wait_stream(comm *c, const char *what, char *why, size_t len) {
  struct timespec nap = {0, 20000};
  for (;;) {
    cudaError_t e = cudaStreamQuery(c->s);
    if (e == cudaSuccess) return MXC_OK;
    if (e != cudaErrorNotReady) return mxc__cuda_rt_fail(why, len, what, e);
    ncclResult_t ae = ncclSuccess;
    ncclResult_t r = FN(F_ASYNC_ERROR, ncclCommGetAsyncError)(c->c, &ae);
    if (r != ncclSuccess) return nccl_fail(why, len, what, r);
    if (ae != ncclSuccess && ae != ncclInProgress) {
      return nccl_fail(why, len, what, ae);
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 1000000) nap.tv_nsec *= 2;
  }
}

/* The collective, then (once it is complete, so that a copy into
 * pageable memory, which CUDA makes synchronous, never blocks on a
 * collective waiting for peers) the copy to host memory. */
static int reduce_and_copy(comm *c, const void *send, void *recv,
                           int64_t count, int dtype, void *host, char *why,
                           size_t len) {
  ncclDataType_t t;
  if (!nccl_type(dtype, &t)) {
    snprintf(why, len, "NCCL allreduce: dtype %d; expected float32, "
             "float64, int32 or int64", dtype);
    return MXC_ERR_UNSUPPORTED;
  }
  ncclResult_t r = FN(F_ALLREDUCE, ncclAllReduce)(send, recv, (size_t)count,
                                                  t, ncclSum, c->c, c->s);
  if (r != ncclSuccess) return nccl_fail(why, len, "ncclAllReduce", r);
  int rc = wait_stream(c, "ncclAllReduce", why, len);
  if (rc != MXC_OK || !host) return rc;
  size_t bytes = (size_t)count * type_bytes(dtype);
  cudaError_t e =
      cudaMemcpyAsync(host, recv, bytes, cudaMemcpyDeviceToHost, c->s);
  if (e != cudaSuccess) return mxc__cuda_rt_fail(why, len, "the sum's copy", e);
  return wait_stream(c, "the sum's copy to host memory", why, len);
}

static int nccl_allreduce(void *cm, const void *send, void *recv,
                          int64_t count, int dtype, void *host, char *why,
                          size_t why_len) {
  comm *c = cm;
  if (c->broken) {
    snprintf(why, why_len, "the NCCL communicator failed earlier and was "
             "aborted");
    return MXC_ERR_INTERNAL;
  }
  int rc = mxc__cuda_use_device(c->dev, why, why_len);
  if (rc == MXC_OK) {
    rc = reduce_and_copy(c, send, recv, count, dtype, host, why, why_len);
  }
  if (rc != MXC_OK && rc != MXC_ERR_UNSUPPORTED) {
    (void)FN(F_ABORT, ncclCommAbort)(c->c);
    c->broken = 1;
  }
  return rc;
}

static void nccl_comm_destroy(void *cm, int abort) {
  comm *c = cm;
  if (!c) return;
  char why[64];
  (void)mxc__cuda_use_device(c->dev, why, sizeof why);
  if (!c->broken) {
    if (abort) {
      (void)FN(F_ABORT, ncclCommAbort)(c->c);
    } else {
      (void)FN(F_DESTROY, ncclCommDestroy)(c->c);
    }
  }
  (void)cudaStreamDestroy(c->s);
  free(c);
}

static const mxc__nccl_plugin k_table = {
    .abi = MXC__NCCL_PLUGIN_ABI,
    .size = sizeof(mxc__nccl_plugin),
    .mxc_version = MXC__NCCL_MXC_VERSION,
    .open = nccl_open,
    .unique_id = nccl_unique_id,
    .comm_init = nccl_comm_init,
    .allreduce = nccl_allreduce,
    .comm_destroy = nccl_comm_destroy,
};

const mxc__nccl_plugin *mxc_nccl_plugin_v1(void) { return &k_table; }
