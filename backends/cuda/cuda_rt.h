/* The CUDA runtime calls every kernel file of the plug-in shares: one
 * error formatter, the device switch, the grid size of a grid-stride
 * kernel, and the end of a kernel call (launch check, then completion).
 *
 * Why one place: the end of a call is where the engine's per-GPU streams
 * plug in (a kernel then runs on its worker's stream instead of the legacy
 * default stream); every kernel reaching it through mxc__cuda_finish keeps
 * that change to this file.
 *
 * Callable from C and from nvcc's C++ (.cu files). Thread-safety: every
 * function may be called from any thread; each acts on the calling thread's
 * current device. */
#ifndef MXC_BACKENDS_CUDA_CUDA_RT_H_
#define MXC_BACKENDS_CUDA_CUDA_RT_H_

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes "WHAT: <runtime's message> (<error name>)" into why (len bytes),
 * clears a non-sticky error so that the thread's next call does not report
 * it again, and returns MXC_ERR_INTERNAL. */
int mxc__cuda_rt_fail(char *why, size_t len, const char *what, cudaError_t e);

/* Makes dev the calling thread's device: MXC_OK, or the runtime's reason. */
int mxc__cuda_use_device(int dev, char *why, size_t len);

/* The stream the calling thread's kernel call runs on: launches, library
 * handles (cublasSetStream, cudnnSetStream), memsets and copies of a
 * kernel use it. The engine worker's stream during a call made through
 * the table's launch with a stream (streams.c sets it around run), else
 * the legacy default stream (0): direct calls, the naive engine. */
cudaStream_t mxc__cuda_stream(void);

/* Sets the calling thread's stream (0: the legacy default stream). For
 * streams.c's launch only. */
void mxc__cuda_set_stream(cudaStream_t s);

/* Threads per block of the grid-stride kernels. */
#define MXC__CUDA_THREADS 256

/* blocks, capped where more blocks only add scheduling (a grid-stride
 * kernel's threads then loop). */
unsigned mxc__cuda_grid_cap(long long blocks);

/* Blocks of MXC__CUDA_THREADS for a grid-stride loop over n > 0 elements. */
unsigned mxc__cuda_grid_blocks(long long n);

/* Waits until the work queued so far on the call's stream is complete,
 * whether or not the call failed: a workspace shared between streams (the
 * cuDNN kernels' per-device workspace) is in use until then. Returns rc
 * unchanged (why untouched) when rc is not MXC_OK, else MXC_OK or the
 * runtime's reason naming what. */
int mxc__cuda_wait(int rc, const char *what, char *why, size_t len);

#ifdef __CUDACC__
/* A grid-stride kernel's launch over n elements on the call's stream:
 * kernel<<<MXC__CUDA_GRID(n)>>>(...). */
#define MXC__CUDA_GRID(n) \
  mxc__cuda_grid_blocks(n), MXC__CUDA_THREADS, 0, mxc__cuda_stream()
#endif

/* Ends one kernel call after its launches: checks them (an invalid launch
 * configuration is reported here). On an engine worker's stream that is
 * all: completion is the engine's business (it waits for an event
 * recorded after the call, and an asynchronous fault surfaces there). On the legacy default stream
 * (direct calls) it also waits until they are complete
 * (core/base/gpu_plugin.h). what names the work in the reason ("sum
 * kernel"). */
int mxc__cuda_finish(const char *what, char *why, size_t len);

/* ---- per-thread, per-device library objects ----
 *
 * Library handles (cublasHandle_t, cusparseHandle_t, cudnnHandle_t) must
 * not be used by two threads at once, and engine workers call kernels
 * concurrently: each (library, thread, device) gets its own object (a
 * handle and whatever buffers go with it), created on the first call that
 * needs it and destroyed when the thread exits. Written once here for
 * blas.c, sdot.c and dnn_lib.c. The bookkeeping makes no CUDA call itself
 * (tests/gpu:test_cuda_dnn_call checks it with fake libraries). */

/* Devices with per-thread objects: ids 0 to 63; more are refused. */
#define MXC__CUDA_MAX_DEVICES 64

/* A library's objects, described by a static descriptor (its address
 * identifies the library; it must outlive every thread that used it). */
typedef struct mxc__cuda_tls_lib {
  const char *name; /* for messages: "cuBLAS" */
  size_t size;      /* bytes of one object, zeroed before create */
  /* Makes the object for device dev (current on the calling thread):
   * MXC_OK, or an error with the library's message in why. On failure
   * it leaves nothing to destroy. */
  int (*create)(void *obj, int dev, char *why, size_t len);
  /* Releases what create made, at the exit of the thread that made it
   * (dev is not made current: destroy does that where it needs it). */
  void (*destroy)(void *obj, int dev);
  /* Binds the object to the calling thread's stream of this call
   * (mxc__cuda_stream(): cublasSetStream, ...), on every lookup; NULL
   * when the library has no such binding. */
  int (*bind)(void *obj, cudaStream_t s, char *why, size_t len);
} mxc__cuda_tls_lib;

/* The calling thread's object of lib for device dev in *out, created on
 * first use and bound to the call's stream (lib->bind) each time.
 * MXC_OK; MXC_ERR_UNSUPPORTED for dev outside 0..MXC__CUDA_MAX_DEVICES-1
 * or when create fails (why: "<name> could not be initialised on
 * gpu(N): <create's message>"; nothing is kept, the next call tries
 * again); MXC_ERR_OOM; bind's error. *out stays valid until the thread
 * exits and is for the calling thread only. Thread-safety: any thread;
 * nothing is shared between threads. */
int mxc__cuda_tls_slot(const mxc__cuda_tls_lib *lib, int dev, void **out,
                       char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_CUDA_RT_H_ */
