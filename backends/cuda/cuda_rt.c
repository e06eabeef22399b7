/* The plug-in's shared runtime calls (cuda_rt.h). */
#include "backends/cuda/cuda_rt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mxc/mxc.h"

/* A grid wider than this only adds scheduling work: the grid-stride loops
 * give each thread several elements instead. */
#define CUDA_RT_MAX_BLOCKS (65535LL * 16)

int mxc__cuda_rt_fail(char *why, size_t len, const char *what, cudaError_t e) {
  snprintf(why, len, "%s: %s (%s)", what, cudaGetErrorString(e),
           cudaGetErrorName(e));
  (void)cudaGetLastError();
  return MXC_ERR_INTERNAL;
}

/* The calling thread's stream: set by streams.c's launch around a kernel
 * call, so that every kernel file reaches it without an argument. */
static _Thread_local cudaStream_t tls_stream;

cudaStream_t mxc__cuda_stream(void) { return tls_stream; }

void mxc__cuda_set_stream(cudaStream_t s) { tls_stream = s; }

int mxc__cuda_use_device(int dev, char *why, size_t len) {
  cudaError_t e = cudaSetDevice(dev);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaSetDevice", e);
}

unsigned mxc__cuda_grid_cap(long long blocks) {
  return (unsigned)(blocks < CUDA_RT_MAX_BLOCKS ? blocks : CUDA_RT_MAX_BLOCKS);
}

unsigned mxc__cuda_grid_blocks(long long n) {
  return mxc__cuda_grid_cap((n + MXC__CUDA_THREADS - 1) / MXC__CUDA_THREADS);
}

int mxc__cuda_finish(const char *what, char *why, size_t len) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    char launch[128];
    snprintf(launch, sizeof launch, "launching %s", what);
    return mxc__cuda_rt_fail(why, len, launch, e);
  }
  if (tls_stream != 0) return MXC_OK; /* the engine waits for an event */
  return mxc__cuda_wait(MXC_OK, what, why, len);
}

int mxc__cuda_wait(int rc, const char *what, char *why, size_t len) {
  cudaError_t e = cudaStreamSynchronize(mxc__cuda_stream());
  if (rc != MXC_OK || e == cudaSuccess) return rc;
  return mxc__cuda_rt_fail(why, len, what, e);
}

/* ---- per-thread, per-device library objects (cuda_rt.h) ----
 *
 * One key for every library: its value is the thread's list of objects,
 * (library, device) each, newest first; a thread holds a few (libraries
 * times devices it used), so a list walk is cheap. */

typedef struct tls_entry {
  const mxc__cuda_tls_lib *lib;
  int dev;
  void *obj;
  struct tls_entry *next;
} tls_entry;

static pthread_key_t g_tls_key;
static pthread_once_t g_tls_once = PTHREAD_ONCE_INIT;
static int g_tls_key_rc;

/* At thread exit: every object the thread made, by its library's
 * destroy. */
static void tls_free(void *head) {
  tls_entry *e = head;
  while (e) {
    tls_entry *next = e->next;
    e->lib->destroy(e->obj, e->dev);
    free(e->obj);
    free(e);
    e = next;
  }
}

static void tls_init(void) {
  g_tls_key_rc = pthread_key_create(&g_tls_key, tls_free);
}

static tls_entry *tls_find(const mxc__cuda_tls_lib *lib, int dev) {
  tls_entry *e = pthread_getspecific(g_tls_key);
  while (e && !(e->lib == lib && e->dev == dev)) e = e->next;
  return e;
}

/* A new object of lib for dev, made by create and put first in the
 * thread's list; on failure nothing is kept. */
static int tls_add(const mxc__cuda_tls_lib *lib, int dev, tls_entry **out,
                   char *why, size_t len) {
  tls_entry *e = calloc(1, sizeof *e);
  void *obj = e ? calloc(1, lib->size ? lib->size : 1) : NULL;
  if (!obj) {
    free(e);
    snprintf(why, len, "%s on gpu(%d): out of host memory", lib->name, dev);
    return MXC_ERR_OOM;
  }
  char msg[384] = "";
  int rc = lib->create(obj, dev, msg, sizeof msg);
  if (rc != MXC_OK) {
    free(obj);
    free(e);
    snprintf(why, len, "%s could not be initialised on gpu(%d): %s",
             lib->name, dev, msg);
    return rc == MXC_ERR_OOM ? rc : MXC_ERR_UNSUPPORTED;
  }
  *e = (tls_entry){lib, dev, obj, pthread_getspecific(g_tls_key)};
  if (pthread_setspecific(g_tls_key, e) != 0) {
    lib->destroy(obj, dev);
    free(obj);
    free(e);
    snprintf(why, len, "%s on gpu(%d): out of host memory", lib->name, dev);
    return MXC_ERR_OOM;
  }
  *out = e;
  return MXC_OK;
}

int mxc__cuda_tls_slot(const mxc__cuda_tls_lib *lib, int dev, void **out,
                       char *why, size_t len) {
  if (dev < 0 || dev >= MXC__CUDA_MAX_DEVICES) {
    snprintf(why, len, "gpu(%d): the %s kernels serve gpu(0) to gpu(%d)", dev,
             lib->name, MXC__CUDA_MAX_DEVICES - 1);
    return MXC_ERR_UNSUPPORTED;
  }
  (void)pthread_once(&g_tls_once, tls_init);
  if (g_tls_key_rc != 0) {
    snprintf(why, len, "%s: no thread-local key (pthread_key_create: %d)",
             lib->name, g_tls_key_rc);
    return MXC_ERR_INTERNAL;
  }
  tls_entry *e = tls_find(lib, dev);
  int rc = e ? MXC_OK : tls_add(lib, dev, &e, why, len);
  /* The object is this thread's; the stream is this call's (the engine
   * worker's, or the legacy default stream for direct calls). */
  if (rc == MXC_OK && lib->bind) rc = lib->bind(e->obj, tls_stream, why, len);
  if (rc == MXC_OK) *out = e->obj;
  return rc;
}
