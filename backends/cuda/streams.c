/* The plug-in's streams (streams.h). */
#include "backends/cuda/streams.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/cuda/cuda_rt.h"
#include "backends/cuda/stage.h"

typedef struct cuda_stream {
  int dev;
  cudaStream_t s;
  cudaEvent_t slot_free[2]; /* recorded after a slot's DMA */
  void *pinned;             /* 2 * MXC__CUDA_STAGING_CHUNK, on first use */
  mxc__stage stage;
  char *why; /* the current copy's reason buffer, for the callbacks */
  size_t why_len;
} cuda_stream;

static void release(cuda_stream *st) {
  for (int i = 0; i < 2; ++i) {
    if (st->slot_free[i]) (void)cudaEventDestroy(st->slot_free[i]);
  }
  if (st->pinned) (void)cudaFreeHost(st->pinned);
  if (st->s) (void)cudaStreamDestroy(st->s);
  free(st);
}

/* Blocking with respect to the legacy default stream (no
 * cudaStreamNonBlocking): work a kernel file might still enqueue there
 * (a cudaMemset without a stream) stays ordered with the engine's
 * streams, at the price of serializing them for that moment. */
static int make(cuda_stream *st, char *why, size_t len) {
  cudaError_t e = cudaSetDevice(st->dev);
  if (e == cudaSuccess) e = cudaStreamCreate(&st->s);
  for (int i = 0; e == cudaSuccess && i < 2; ++i) {
    e = cudaEventCreateWithFlags(&st->slot_free[i], cudaEventDisableTiming);
  }
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "creating a stream", e);
}

int mxc__cuda_stream_create(int dev, void **out, char *why, size_t len) {
  cuda_stream *st = calloc(1, sizeof *st);
  if (!st) {
    snprintf(why, len, "out of host memory for a stream");
    return MXC_ERR_OOM;
  }
  st->dev = dev;
  int rc = make(st, why, len);
  if (rc != MXC_OK) {
    release(st);
    return rc;
  }
  *out = st;
  return MXC_OK;
}

void mxc__cuda_stream_destroy(void *stream) {
  cuda_stream *st = stream;
  if (!st) return;
  if (cudaSetDevice(st->dev) == cudaSuccess) {
    (void)cudaStreamSynchronize(st->s);
  }
  (void)cudaGetLastError();
  release(st);
}

int mxc__cuda_stream_sync(void *stream, char *why, size_t len) {
  cuda_stream *st = stream;
  cudaError_t e = cudaStreamSynchronize(st->s);
  if (e == cudaSuccess) return MXC_OK;
  char what[64];
  snprintf(what, sizeof what, "work on a stream of gpu(%d)", st->dev);
  return mxc__cuda_rt_fail(why, len, what, e);
}

/* ---- staging callbacks (stage.h) ---- */

static int stage_dma(void *ctx, void *dst, const void *src, size_t n,
                     int to_device) {
  cuda_stream *st = ctx;
  cudaError_t e = cudaMemcpyAsync(
      dst, src, n, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
      st->s);
  return e == cudaSuccess
             ? MXC_OK
             : mxc__cuda_rt_fail(st->why, st->why_len, "cudaMemcpyAsync", e);
}

static int stage_mark(void *ctx, int slot) {
  cuda_stream *st = ctx;
  cudaError_t e = cudaEventRecord(st->slot_free[slot], st->s);
  return e == cudaSuccess
             ? MXC_OK
             : mxc__cuda_rt_fail(st->why, st->why_len, "cudaEventRecord", e);
}

static int stage_wait(void *ctx, int slot) {
  cuda_stream *st = ctx;
  cudaError_t e = cudaEventSynchronize(st->slot_free[slot]);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(st->why, st->why_len,
                                              "a copy through staging", e);
}

/* The staging buffer, allocated pinned on the first copy that needs it
 * and kept with the stream. */
static int ensure_pinned(cuda_stream *st, char *why, size_t len) {
  if (st->pinned) return MXC_OK;
  cudaError_t e = cudaMallocHost(&st->pinned, 2 * MXC__CUDA_STAGING_CHUNK);
  if (e != cudaSuccess) {
    st->pinned = NULL;
    return mxc__cuda_rt_fail(why, len, "pinned staging buffer", e);
  }
  mxc__stage g = {st,
                  {st->pinned, (char *)st->pinned + MXC__CUDA_STAGING_CHUNK},
                  MXC__CUDA_STAGING_CHUNK,
                  {0, 0},
                  stage_dma,
                  stage_mark,
                  stage_wait};
  st->stage = g;
  return MXC_OK;
}

/* 1 when host memory at p is pinned (or registered) with CUDA. */
static int is_pinned(const void *p) {
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeHost;
}

static int copy_staged(cuda_stream *st, void *dst, int dst_dev, const void *src,
                       size_t n, char *why, size_t len) {
  int rc = ensure_pinned(st, why, len);
  if (rc != MXC_OK) return rc;
  st->why = why;
  st->why_len = len;
  return dst_dev == MXC__GPU_HOST
             ? mxc__stage_to_host(&st->stage, dst, src, n)
             : mxc__stage_to_device(&st->stage, dst, src, n);
}

static cudaError_t copy_direct(cuda_stream *st, void *dst, int dst_dev,
                               const void *src, int src_dev, size_t n) {
  if (dst_dev != MXC__GPU_HOST && src_dev != MXC__GPU_HOST &&
      dst_dev != src_dev) {
    return cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, n, st->s);
  }
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, st->s);
}

int mxc__cuda_copy_async(void *dst, int dst_dev, const void *src, int src_dev,
                         size_t nbytes, void *stream, char *why, size_t len) {
  cuda_stream *st = stream;
  cudaError_t e = cudaSetDevice(st->dev);
  if (e != cudaSuccess) return mxc__cuda_rt_fail(why, len, "cudaSetDevice", e);
  const void *host = dst_dev == MXC__GPU_HOST   ? dst
                     : src_dev == MXC__GPU_HOST ? src
                                                : NULL;
  if (host && !is_pinned(host)) {
    return copy_staged(st, dst, dst_dev, src, nbytes, why, len);
  }
  e = copy_direct(st, dst, dst_dev, src, src_dev, nbytes);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaMemcpyAsync", e);
}

int mxc__cuda_launch(const mxc__gpu_kernel *k, const mxc__gpu_call *c,
                     void *stream, char *why, size_t len) {
  const cuda_stream *st = stream;
  if (st && st->dev != c->dev) {
    snprintf(why, len, "a call on gpu(%d) got a stream of gpu(%d)", c->dev,
             st->dev);
    return MXC_ERR_INTERNAL;
  }
  mxc__cuda_set_stream(st ? st->s : 0);
  int rc = k->run(c, why, len);
  mxc__cuda_set_stream(0);
  return rc;
}

/* ---- events (core/base/gpu_plugin.h, ABI 2) ---- */

typedef struct cuda_event {
  int dev;
  cudaEvent_t e;
} cuda_event;

/* Without timing: recording and waiting stay cheap (no timestamp). */
int mxc__cuda_event_create(int dev, void **out, char *why, size_t len) {
  cuda_event *ev = calloc(1, sizeof *ev);
  if (!ev) {
    snprintf(why, len, "out of host memory for an event");
    return MXC_ERR_OOM;
  }
  ev->dev = dev;
  cudaError_t e = cudaSetDevice(dev);
  if (e == cudaSuccess) {
    e = cudaEventCreateWithFlags(&ev->e, cudaEventDisableTiming);
  }
  if (e != cudaSuccess) {
    free(ev);
    return mxc__cuda_rt_fail(why, len, "creating an event", e);
  }
  *out = ev;
  return MXC_OK;
}

void mxc__cuda_event_destroy(void *event) {
  cuda_event *ev = event;
  if (!ev) return;
  (void)cudaEventDestroy(ev->e);
  (void)cudaGetLastError();
  free(ev);
}

int mxc__cuda_event_record(void *event, void *stream, char *why, size_t len) {
  cuda_event *ev = event;
  const cuda_stream *st = stream;
  if (ev->dev != st->dev) {
    snprintf(why, len, "an event of gpu(%d) recorded on a stream of gpu(%d)",
             ev->dev, st->dev);
    return MXC_ERR_INTERNAL;
  }
  cudaError_t e = cudaSetDevice(st->dev);
  if (e == cudaSuccess) e = cudaEventRecord(ev->e, st->s);
  return e == cudaSuccess ? MXC_OK
                          : mxc__cuda_rt_fail(why, len, "cudaEventRecord", e);
}

/* The result of the work before the event, named by its device. */
static int event_fail(const cuda_event *ev, char *why, size_t len,
                      cudaError_t e) {
  char what[64];
  snprintf(what, sizeof what, "work on a stream of gpu(%d)", ev->dev);
  return mxc__cuda_rt_fail(why, len, what, e);
}

int mxc__cuda_event_query(void *event, char *why, size_t len) {
  cuda_event *ev = event;
  cudaError_t e = cudaEventQuery(ev->e);
  if (e == cudaSuccess) return MXC_OK;
  if (e == cudaErrorNotReady) return MXC__GPU_NOT_READY;
  return event_fail(ev, why, len, e);
}

int mxc__cuda_event_sync(void *event, char *why, size_t len) {
  cuda_event *ev = event;
  cudaError_t e = cudaEventSynchronize(ev->e);
  return e == cudaSuccess ? MXC_OK : event_fail(ev, why, len, e);
}

int mxc__cuda_stream_wait_event(void *stream, void *event, char *why,
                                size_t len) {
  cuda_stream *st = stream;
  const cuda_event *ev = event;
  cudaError_t e = cudaSetDevice(st->dev);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(st->s, ev->e, 0);
  return e == cudaSuccess
             ? MXC_OK
             : mxc__cuda_rt_fail(why, len, "cudaStreamWaitEvent", e);
}
