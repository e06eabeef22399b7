/* The CUDA plug-in, libmxc_cuda.so.1: the table of core/base/gpu_plugin.h
 * over the CUDA runtime.
 *
 * The runtime is linked statically (libcudart_static.a), so the plug-in's
 * only run-time need is the driver, libcuda.so.1, which the runtime opens
 * itself: a machine without the driver loads the plug-in fine and gets a
 * clear reason from open() instead of a dynamic loader error.
 *
 * Devices: every call names its device and sets it as the calling
 * thread's current device first (cudaSetDevice is a thread-local switch,
 * cheap once the device's context exists): the legacy copy and direct
 * kernel calls may come from any thread.
 *
 * Streams (ABI 2, streams.c): the engine's GPU workers each own a
 * stream; kernels launched through `launch` and copies through
 * `copy_async` are enqueued there and complete at `stream_sync`, or at
 * the `event_sync` of an event recorded after them (the engine's way). */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "backends/cuda/accepts.h"
#include "backends/cuda/bcast.h"
#include "backends/cuda/blas.h"
#include "backends/cuda/cast.h"
#include "backends/cuda/dense2.h"
#include "backends/cuda/dnn.h"
#include "backends/cuda/dnn_rnn.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/fuse.h"
#include "backends/cuda/half_types.h"
#include "backends/cuda/la.h"
#include "backends/cuda/loss.h"
#include "backends/cuda/math_rows.h"
#include "backends/cuda/nn3.h"
#include "backends/cuda/rng.h"
#include "backends/cuda/sdot.h"
#include "backends/cuda/shape_rows.h"
#include "backends/cuda/streams.h"
#include "backends/cuda/sum.h"
#include "backends/cuda/train.h"
#include "backends/cuda/train2.h"
#include "core/base/gpu_plugin.h"

/* mxc's GPU code targets compute capability 8.0 and newer (Ampere,
 * Hopper): older devices are refused by id. */
#define MIN_CC 80

static void say(char *why, size_t why_len, const char *what,
                cudaError_t e) {
  snprintf(why, why_len, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
}

/* The driver must speak the runtime's major version (CUDA's minor version
 * compatibility covers the rest). */
static int check_driver(char *why, size_t why_len) {
  int drv = 0, rt = 0;
  if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0) {
    snprintf(why, why_len,
             "the NVIDIA driver (libcuda.so.1) is not installed or cannot "
             "be loaded");
    return MXC_ERR_UNSUPPORTED;
  }
  (void)cudaRuntimeGetVersion(&rt);
  if (drv / 1000 < rt / 1000) {
    snprintf(why, why_len,
             "the NVIDIA driver supports CUDA %d.%d; the plug-in was built "
             "with CUDA %d.%d (update the driver)",
             drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    return MXC_ERR_UNSUPPORTED;
  }
  return MXC_OK;
}

static int plugin_open(int *n_devices, char *why, size_t why_len) {
  int rc = check_driver(why, why_len);
  if (rc != MXC_OK) return rc;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice) {
    (void)cudaGetLastError(); /* not sticky, but leave nothing behind */
    n = 0;
  } else if (e != cudaSuccess) {
    say(why, why_len, "cudaGetDeviceCount", e);
    return MXC_ERR_UNSUPPORTED;
  }
  *n_devices = n;
  return MXC_OK;
}

static int plugin_props(int dev, mxc__gpu_props *out, char *why,
                        size_t why_len) {
  struct cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, dev);
  if (e != cudaSuccess) {
    say(why, why_len, "cudaGetDeviceProperties", e);
    return MXC_ERR_UNSUPPORTED;
  }
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->cc = p.major * 10 + p.minor;
  out->total_bytes = p.totalGlobalMem;
  return MXC_OK;
}

/* cudaMalloc's blocks are 256-byte aligned, as the interface promises. */
static void *plugin_alloc(int dev, size_t nbytes) {
  void *p = NULL;
  if (cudaSetDevice(dev) != cudaSuccess || cudaMalloc(&p, nbytes) != cudaSuccess) {
    /* Out of memory is not sticky: clear it so the next call is clean. */
    (void)cudaGetLastError();
    return NULL;
  }
  return p;
}

static void plugin_free(int dev, void *ptr) {
  if (cudaSetDevice(dev) == cudaSuccess) (void)cudaFree(ptr);
}

/* Unified addressing (every 64-bit platform the plug-in runs on) lets
 * cudaMemcpyDefault find each side's memory; copies between two devices
 * take the peer path. The legacy default stream orders them after all
 * earlier work of the device, and cudaMemcpy returns when the data is
 * safe to use on the host. */
static int plugin_copy(void *dst, int dst_dev, const void *src, int src_dev,
                       size_t nbytes, char *why, size_t why_len) {
  cudaError_t e;
  if (dst_dev != MXC__GPU_HOST && src_dev != MXC__GPU_HOST &&
      dst_dev != src_dev) {
    e = cudaMemcpyPeer(dst, dst_dev, src, src_dev, nbytes);
  } else {
    e = cudaSetDevice(dst_dev != MXC__GPU_HOST ? dst_dev : src_dev);
    if (e == cudaSuccess) e = cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault);
  }
  if (e != cudaSuccess) {
    say(why, why_len, "cudaMemcpy", e);
    return MXC_ERR_INTERNAL;
  }
  return MXC_OK;
}

/* ---- kernels: one table row per operator ---- */

#define RUN_FN(kind, name, n_in)                                        \
  static int run_##kind(const mxc__gpu_call *c, char *why, size_t n) { \
    return mxc__cuda_elementwise(MXC__CUDA_##kind, c, why, n);          \
  }
MXC__CUDA_ELEMENTWISE(RUN_FN)
#undef RUN_FN

static const mxc__gpu_kernel k_kernels[] = {
#define ROW(kind, name, n_in) {name, mxc__half_supports_same, run_##kind},
    MXC__CUDA_ELEMENTWISE(ROW)
#undef ROW
    MXC__CUDA_BLAS_ROWS
    MXC__CUDA_DNN_ROWS
    MXC__CUDA_RNN_ROWS
    MXC__CUDA_TRAIN_ROWS
    MXC__CUDA_BCAST_ROWS
    MXC__CUDA_SUM_ROWS
    MXC__CUDA_TRAIN2_ROWS
    MXC__CUDA_FUSE_ROWS
    MXC__CUDA_RNG_ROWS
    MXC__CUDA_CAST_ROWS
    MXC__CUDA_LOSS_ROWS
    MXC__CUDA_DENSE2_ROWS
    MXC__CUDA_MATH_ROWS
    MXC__CUDA_NN3_ROWS
    MXC__CUDA_LA_ROWS
    MXC__CUDA_SHAPE_ROWS
};

/* Kernels for calls with sparse arrays (mxc__gpu_sparse_kernel). */
static const mxc__gpu_sparse_kernel k_sparse_kernels[] = {
    MXC__CUDA_SPARSE_ROWS
};

/* Rows that decline calls by their parameters (accepts.h). */
static const mxc__gpu_accepts k_accepts[] = {MXC__CUDA_ACCEPTS_ROWS};

static const mxc__gpu_plugin k_plugin = {
    .abi = MXC__GPU_PLUGIN_ABI,
    .size = sizeof(mxc__gpu_plugin),
    .name = "cuda",
    .min_cc = MIN_CC,
    .open = plugin_open,
    .props = plugin_props,
    .mem_alloc = plugin_alloc,
    .mem_free = plugin_free,
    .copy = plugin_copy,
    .mxc_version = MXC__GPU_MXC_VERSION,
    .kernels = k_kernels,
    .n_kernels = (int)(sizeof k_kernels / sizeof k_kernels[0]),
    .stream_create = mxc__cuda_stream_create,
    .stream_destroy = mxc__cuda_stream_destroy,
    .stream_sync = mxc__cuda_stream_sync,
    .copy_async = mxc__cuda_copy_async,
    .launch = mxc__cuda_launch,
    .event_create = mxc__cuda_event_create,
    .event_destroy = mxc__cuda_event_destroy,
    .event_record = mxc__cuda_event_record,
    .event_query = mxc__cuda_event_query,
    .event_sync = mxc__cuda_event_sync,
    .stream_wait_event = mxc__cuda_stream_wait_event,
    .sparse_kernels = k_sparse_kernels,
    .n_sparse_kernels =
        (int)(sizeof k_sparse_kernels / sizeof k_sparse_kernels[0]),
    .accepts = k_accepts,
    .n_accepts = (int)(sizeof k_accepts / sizeof k_accepts[0]),
};

const mxc__gpu_plugin *mxc_gpu_plugin_v2(void) { return &k_plugin; }
