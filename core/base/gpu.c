/* Loading the GPU plug-in, once, and the checks every GPU id goes
 * through. */
#include "core/base/gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/base/log.h"
#include "core/base/plugin.h"

#define STATUS_MAX 768

/* Two stages, each written once under its pthread_once and read-only
 * afterwards: the library and its table (read when the operator registry
 * is built, to attach the kernels), then the runtime and the devices (at
 * the first GPU query). status says why a stage failed. */
static struct {
  const mxc__gpu_plugin *table; /* NULL: not loaded */
  const mxc__gpu_plugin *p;     /* NULL: no GPU can be used */
  int n;                        /* visible devices, <= MXC__MAX_GPUS */
  mxc__gpu_props props[MXC__MAX_GPUS];
  char status[STATUS_MAX];
} g;
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* dlsym returns an object pointer; POSIX guarantees the conversion to
 * the entry's function type. */
static const void *call_entry(void *sym) {
  mxc__gpu_plugin_entry_fn entry;
  *(void **)&entry = sym;
  return entry();
}

/* Local symbols: the plug-in's CUDA runtime is its own business. */
static const mxc__plugin_spec k_spec = {
    .library = "the CUDA plug-in",
    .kind = "GPU",
    .package = "libmxc-cuda1",
    .env = "MXC_CUDA_PLUGIN",
    .file = MXC__GPU_PLUGIN_FILE,
    .entry = MXC__GPU_PLUGIN_ENTRY,
    .abi = MXC__GPU_PLUGIN_ABI,
    .size = sizeof(mxc__gpu_plugin),
    .version_offset = offsetof(mxc__gpu_plugin, mxc_version),
    .version = MXC__GPU_MXC_VERSION,
    .dl_flags = RTLD_LOCAL,
    .call_entry = call_entry,
};

/* Opens the runtime, reads every device's properties; 0 on failure with
 * g.status set. */
static int open_devices(const mxc__gpu_plugin *p) {
  char why[STATUS_MAX / 2] = "";
  int n = 0;
  if (p->open(&n, why, sizeof why) != MXC_OK) {
    snprintf(g.status, sizeof g.status, "%s", why);
    return 0;
  }
  if (n <= 0) {
    snprintf(g.status, sizeof g.status,
             "the CUDA driver reports no GPU (CUDA_VISIBLE_DEVICES=%s)",
             getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES")
                                            : "unset");
    return 0;
  }
  if (n > MXC__MAX_GPUS) {
    mxc__log(MXC_LOG_WARNING, "%d GPUs visible; mxc uses the first %d", n,
             MXC__MAX_GPUS);
    n = MXC__MAX_GPUS;
  }
  for (int i = 0; i < n; ++i) {
    if (p->props(i, &g.props[i], why, sizeof why) != MXC_OK) {
      snprintf(g.status, sizeof g.status, "gpu(%d): %s", i, why);
      return 0;
    }
    g.props[i].name[MXC__GPU_NAME_MAX - 1] = '\0';
  }
  g.n = n;
  return 1;
}

/* A loaded plug-in stays for the process: device memory and kernels may
 * outlive any reference count we could keep. */
static void load_table(void) {
  g.table = mxc__plugin_open(&k_spec, mxc__plugin_path(&k_spec), g.status,
                             sizeof g.status);
}

const mxc__gpu_plugin *mxc__gpu_table(void) {
  pthread_once(&g_table_once, load_table);
  return g.table;
}

static void load(void) {
  const mxc__gpu_plugin *p = mxc__gpu_table();
  if (p && open_devices(p)) g.p = p;
}

static void ensure_loaded(void) { pthread_once(&g_once, load); }

int mxc__gpu_count(void) {
  ensure_loaded();
  return g.p ? g.n : 0;
}

const char *mxc__gpu_status(void) {
  ensure_loaded();
  return g.p ? "" : g.status;
}

int mxc__gpu_check(int id, const char *what) {
  ensure_loaded();
  MXC_RETURN_ERROR_IF(!g.p, MXC_ERR_UNSUPPORTED,
                      "%s: gpu(%d) requested, but no GPU can be used: %s",
                      what, id, g.status);
  MXC_RETURN_ERROR_IF(id >= g.n, MXC_ERR_UNSUPPORTED,
                      "%s: gpu(%d) requested, but %d GPU(s) are visible "
                      "(ids 0 to %d)",
                      what, id, g.n, g.n - 1);
  const mxc__gpu_props *d = &g.props[id];
  MXC_RETURN_ERROR_IF(d->cc < g.p->min_cc, MXC_ERR_UNSUPPORTED,
                      "%s: gpu(%d) (%s) has compute capability %d.%d; the "
                      "CUDA plug-in's code needs %d.%d or newer",
                      what, id, d->name, d->cc / 10, d->cc % 10,
                      g.p->min_cc / 10, g.p->min_cc % 10);
  return MXC_OK;
}

const mxc__gpu_props *mxc__gpu_props_of(int id) {
  MXC__ASSERT(g.p && id >= 0 && id < g.n);
  return &g.props[id];
}

void *mxc__gpu_alloc(int id, size_t nbytes) {
  MXC__ASSERT(g.p && id >= 0 && id < g.n && nbytes > 0);
  return g.p->mem_alloc(id, nbytes);
}

void mxc__gpu_free(int id, void *ptr) {
  MXC__ASSERT(g.p && id >= 0 && id < g.n);
  if (ptr) g.p->mem_free(id, ptr);
}

/* The calling thread's stream (an engine GPU worker's), with its
 * device. */
static _Thread_local struct {
  int id;
  void *stream;
} tls_stream = {-1, NULL};

void mxc__gpu_set_thread_stream(int id, void *stream) {
  tls_stream.id = stream ? id : -1;
  tls_stream.stream = stream;
}

void *mxc__gpu_thread_stream(int id) {
  return tls_stream.id == id && id >= 0 ? tls_stream.stream : NULL;
}

int mxc__gpu_copy(void *dst, int dst_dev, const void *src, int src_dev,
                  size_t nbytes) {
  MXC__ASSERT(g.p);
  if (nbytes == 0) return MXC_OK;
  char why[STATUS_MAX / 2] = "";
  void *s =
      mxc__gpu_thread_stream(dst_dev != MXC__GPU_HOST ? dst_dev : src_dev);
  int rc = s ? g.p->copy_async(dst, dst_dev, src, src_dev, nbytes, s, why,
                               sizeof why)
             : g.p->copy(dst, dst_dev, src, src_dev, nbytes, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "copy of %zu bytes (device %d to %d): %s",
                      nbytes, src_dev, dst_dev, why);
  return MXC_OK;
}

int mxc__gpu_stream_create(int id, void **out) {
  *out = NULL;
  /* The engine makes streams for any gpu(N) pushed to, which only arrays
   * of a usable GPU should be: refuse the others with the reason. */
  MXC_FORWARD_IF_ERROR(mxc__gpu_check(id, "stream"));
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->stream_create(id, out, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "gpu(%d): cannot create a stream: %s",
                      id, why);
  return MXC_OK;
}

void mxc__gpu_stream_destroy(void *stream) {
  if (stream) g.p->stream_destroy(stream);
}

int mxc__gpu_stream_sync(void *stream) {
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->stream_sync(stream, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "%s", why);
  return MXC_OK;
}

int mxc__gpu_has_events(void) {
  ensure_loaded();
  const mxc__gpu_plugin *p = g.p;
  return p && p->event_create && p->event_destroy && p->event_record &&
         p->event_query && p->event_sync && p->stream_wait_event;
}

int mxc__gpu_event_create(int id, void **out) {
  *out = NULL;
  MXC_FORWARD_IF_ERROR(mxc__gpu_check(id, "event"));
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->event_create(id, out, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "gpu(%d): cannot create an event: %s",
                      id, why);
  return MXC_OK;
}

void mxc__gpu_event_destroy(void *event) {
  if (event) g.p->event_destroy(event);
}

int mxc__gpu_event_record(void *event, void *stream) {
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->event_record(event, stream, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "%s", why);
  return MXC_OK;
}

int mxc__gpu_event_sync(void *event) {
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->event_sync(event, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "%s", why);
  return MXC_OK;
}

int mxc__gpu_event_query(void *event) {
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->event_query(event, why, sizeof why);
  if (rc == MXC__GPU_NOT_READY) return rc;
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "%s", why);
  return MXC_OK;
}

int mxc__gpu_stream_wait_event(void *stream, void *event) {
  char why[STATUS_MAX / 2] = "";
  int rc = g.p->stream_wait_event(stream, event, why, sizeof why);
  MXC_RETURN_ERROR_IF(rc != MXC_OK, rc, "%s", why);
  return MXC_OK;
}

int mxc__gpu_launch(const mxc__gpu_kernel *k, const mxc__gpu_call *c, char *why,
                    size_t why_len) {
  MXC__ASSERT(g.p);
  return g.p->launch(k, c, mxc__gpu_thread_stream(c->dev), why, why_len);
}
