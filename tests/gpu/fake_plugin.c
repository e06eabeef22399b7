/* A fake GPU plug-in for host tests of the plug-in interface
 * (core/base/gpu_plugin.h): every way a GPU can be unavailable, chosen by
 * the environment variable MXC_FAKE_GPU, and "device memory" that the host
 * cannot touch.
 *
 * Device memory: each block is a memfd mapped twice, once PROT_NONE (the
 * pointer mxc gets, so any host access to device memory faults at once,
 * as it would on a real GPU) and once read-write (what the fake's copy
 * uses). Copies translate a device pointer, possibly inside a block (array
 * views have offsets), to its read-write alias.
 *
 * Modes (MXC_FAKE_GPU): ok (2 devices, compute capability 9.0), old_cc
 * (device 1 has 5.2), many (20 devices), no_device, no_driver, old_driver,
 * bad_abi, old_version, null_table, oom (device memory runs out after 64
 * KiB in use), copy_fail (every copy fails as after a faulting kernel),
 * stream_fail (no stream can be created),
 * conform (2 devices, only the kernels that compute: relu, add, _copy,
 * the cuBLAS kernels' plans run on the host, tests/gpu/blas_host.h, the
 * linalg kernels' plans, tests/gpu/la_host.h,
 * train2.h's plans, tests/gpu/train2_host.h, and the random kernels'
 * plan, tests/gpu/rng_host.h).
 * Kernels (below) are host loops, for every mode.
 *
 * Streams (ABI 2, below): real queues, each served by a host
 * thread that runs its work after a random delay (up to
 * MXC_FAKE_GPU_DELAY_US microseconds, default 300), so that a missing
 * wait or a wrong order shows as a wrong value or a fault on the host.
 * Events are markers in a stream's queue (below). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/base/gpu_plugin.h"
#include "tests/gpu/fuse_host.h"
#include "tests/gpu/blas_host.h"
#include "tests/gpu/la_host.h"
#include "tests/gpu/train2_host.h"
#include "tests/gpu/rng_host.h"
#include "tests/gpu/sdot_host.h"

#define MAX_BLOCKS 4096
#define OOM_LIMIT (64 << 10)

typedef struct block {
  char *dev, *host;
  size_t n;
  int id;
} block;

static block g_blocks[MAX_BLOCKS];
static int g_n_blocks;
static size_t g_in_use;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int mode_is(const char *m) {
  const char *v = getenv("MXC_FAKE_GPU");
  return v && strcmp(v, m) == 0;
}

static int fake_open(int *n_devices, char *why, size_t why_len) {
  if (mode_is("no_driver")) {
    snprintf(why, why_len, "the CUDA driver (libcuda.so.1) is not installed");
    return MXC_ERR_UNSUPPORTED;
  }
  if (mode_is("old_driver")) {
    snprintf(why, why_len,
             "the CUDA driver supports CUDA 12.2; the plug-in needs 13.0");
    return MXC_ERR_UNSUPPORTED;
  }
  *n_devices = mode_is("no_device") ? 0 : mode_is("many") ? 20 : 2;
  return MXC_OK;
}

static int fake_props(int dev, mxc__gpu_props *out, char *why,
                      size_t why_len) {
  (void)why, (void)why_len;
  snprintf(out->name, sizeof out->name, "mxc fake GPU %d", dev);
  out->cc = mode_is("old_cc") && dev == 1 ? 52 : 90;
  out->total_bytes = (uint64_t)1 << 30;
  return MXC_OK;
}

/* The block holding p (device side), or NULL. Under g_lock. */
static block *find(const void *p) {
  for (int i = 0; i < g_n_blocks; ++i) {
    block *b = &g_blocks[i];
    if ((const char *)p >= b->dev && (const char *)p < b->dev + b->n) {
      return b;
    }
  }
  return NULL;
}

static int map_block(block *b, size_t n) {
  int fd = memfd_create("mxc-fake-gpu", MFD_CLOEXEC);
  if (fd < 0) return 0;
  int ok = ftruncate(fd, (off_t)n) == 0;
  void *dev = ok ? mmap(NULL, n, PROT_NONE, MAP_SHARED, fd, 0) : MAP_FAILED;
  void *host = ok ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (dev == MAP_FAILED || host == MAP_FAILED) {
    if (dev != MAP_FAILED) munmap(dev, n);
    if (host != MAP_FAILED) munmap(host, n);
    return 0;
  }
  b->dev = dev, b->host = host, b->n = n;
  return 1;
}

static void *fake_alloc(int dev, size_t nbytes) {
  void *out = NULL;
  pthread_mutex_lock(&g_lock);
  int room = g_n_blocks < MAX_BLOCKS &&
             !(mode_is("oom") && g_in_use + nbytes > OOM_LIMIT);
  if (room && map_block(&g_blocks[g_n_blocks], nbytes)) {
    g_blocks[g_n_blocks].id = dev;
    out = g_blocks[g_n_blocks++].dev;
    g_in_use += nbytes;
  }
  pthread_mutex_unlock(&g_lock);
  return out;
}

static void fake_free(int dev, void *ptr) {
  pthread_mutex_lock(&g_lock);
  block *b = find(ptr);
  if (!b || b->dev != ptr || b->id != dev) {
    fprintf(stderr, "fake GPU: free of %p on gpu(%d), not a block start\n",
            ptr, dev);
    abort();
  }
  munmap(b->dev, b->n);
  munmap(b->host, b->n);
  g_in_use -= b->n;
  *b = g_blocks[--g_n_blocks];
  pthread_mutex_unlock(&g_lock);
}

/* The host alias of [p, p+n) on gpu(dev), or NULL when that range is not
 * inside one block of that device. Under g_lock. */
static char *alias(const void *p, int dev, size_t n) {
  block *b = find(p);
  if (!b || b->id != dev || (size_t)(b->dev + b->n - (const char *)p) < n) {
    return NULL;
  }
  return b->host + ((const char *)p - b->dev);
}

static int fake_copy(void *dst, int dst_dev, const void *src, int src_dev,
                     size_t nbytes, char *why, size_t why_len) {
  if (mode_is("copy_fail")) {
    snprintf(why, why_len, "an illegal memory access was encountered");
    return MXC_ERR_INTERNAL;
  }
  pthread_mutex_lock(&g_lock);
  char *d = dst_dev == MXC__GPU_HOST ? dst : alias(dst, dst_dev, nbytes);
  const char *s = src_dev == MXC__GPU_HOST ? src : alias(src, src_dev, nbytes);
  if (d && s) memmove(d, s, nbytes);
  pthread_mutex_unlock(&g_lock);
  if (!d || !s) {
    snprintf(why, why_len, "fake GPU: copy outside device memory");
    return MXC_ERR_INTERNAL;
  }
  return MXC_OK;
}

/* ---- kernels: host loops over the read-write aliases, so the whole
 * dispatch (registry, invoke, executor, engine) is tested without a GPU.
 * relu, add and _copy in float32; `failing` fails like a faulting
 * kernel. ---- */

/* The read-write alias of array a (device memory of gpu(dev)); NULL when
 * it is not device memory of that device. */
static float *host_of(const mxc__gpu_array *a, int dev) {
  pthread_mutex_lock(&g_lock);
  float *p = a->size ? (float *)alias(a->ptr, dev, (size_t)a->size * 4)
                     : (float *)a->ptr;
  pthread_mutex_unlock(&g_lock);
  return p;
}

/* The kernel body for output 0 from inputs x (and y), element i. */
typedef float (*elem_fn)(const float *x, const float *y, int64_t i);

static float relu_at(const float *x, const float *y, int64_t i) {
  (void)y;
  return x[i] > 0 || x[i] != x[i] ? x[i] : 0;
}
static float add_at(const float *x, const float *y, int64_t i) {
  return x[i] + y[i];
}
static float copy_at(const float *x, const float *y, int64_t i) {
  (void)y;
  return x[i];
}

static int run_elem(const mxc__gpu_call *c, elem_fn f, char *why,
                    size_t why_len) {
  float *o = host_of(&c->out[0], c->dev);
  const float *x = host_of(&c->in[0], c->dev);
  const float *y = c->n_in > 1 ? host_of(&c->in[1], c->dev) : x;
  if (!o || !x || !y) {
    snprintf(why, why_len, "fake GPU: an array is not on gpu(%d)", c->dev);
    return MXC_ERR_INTERNAL;
  }
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  for (int64_t i = 0; i < c->out[0].size; ++i) {
    float v = f(x, y, i);
    o[i] = add ? o[i] + v : v;
  }
  return MXC_OK;
}

static int run_relu(const mxc__gpu_call *c, char *why, size_t why_len) {
  return run_elem(c, relu_at, why, why_len);
}
static int run_add(const mxc__gpu_call *c, char *why, size_t why_len) {
  return run_elem(c, add_at, why, why_len);
}
static int run_copy(const mxc__gpu_call *c, char *why, size_t why_len) {
  return run_elem(c, copy_at, why, why_len);
}
static int run_failing(const mxc__gpu_call *c, char *why, size_t why_len) {
  (void)c;
  snprintf(why, why_len, "an illegal memory access was encountered");
  return MXC_ERR_INTERNAL;
}

/* An asynchronous fault: the work itself "runs" and fails later, on the
 * stream, like a kernel that reads out of bounds (the launch succeeded). */
static int run_async_fault(const mxc__gpu_call *c, char *why, size_t why_len) {
  (void)c;
  snprintf(why, why_len,
           "an illegal memory access was encountered (asynchronous)");
  return MXC_ERR_INTERNAL;
}

/* LeakyReLU (ABI 3: a row that declines calls by their parameters):
 * leaky runs here, every other act_type is declined by accepts, so that
 * libmxc runs it on the CPU; a call that reaches run anyway fails. The
 * parameter struct mirrors ops/nn/activation.c's leaky_param. */
typedef struct fake_leaky_param {
  int act_type; /* elu, gelu, leaky, prelu, selu, rrelu */
  double slope, lower_bound, upper_bound;
} fake_leaky_param;
#define FAKE_LK_LEAKY 2

static int accepts_leaky(const mxc__gpu_call *c, char *why, size_t why_len) {
  const fake_leaky_param *p = c->param;
  if (p && p->act_type == FAKE_LK_LEAKY) return 1;
  snprintf(why, why_len, "fake GPU: LeakyReLU takes act_type leaky only");
  return 0;
}

static int run_leaky(const mxc__gpu_call *c, char *why, size_t why_len) {
  const fake_leaky_param *p = c->param;
  float *o = host_of(&c->out[0], c->dev);
  const float *x = host_of(&c->in[0], c->dev);
  if (!p || p->act_type != FAKE_LK_LEAKY || c->n_in != 1 || !o || !x) {
    snprintf(why, why_len, "fake GPU: LeakyReLU run with a call its "
             "accepts declines");
    return MXC_ERR_INTERNAL;
  }
  for (int64_t i = 0; i < c->out[0].size; ++i) {
    double v = x[i];
    o[i] = (float)(v > 0 ? v : p->slope * v);
  }
  return MXC_OK;
}

static int run_fused(const mxc__gpu_call *c, char *why, size_t why_len);
static int accepts_fused(const mxc__gpu_call *c, char *why, size_t why_len);

static const mxc__gpu_kernel k_kernels[] = {
    {"relu", NULL, run_relu},
    {"add", NULL, run_add},
    {"_copy", NULL, run_copy},
    {"sigmoid", NULL, run_failing},
    {"exp", NULL, run_async_fault},
    {"LeakyReLU", NULL, run_leaky},
    {"_fused_elemwise", NULL, run_fused},
};

/* The rows that decline calls by their parameters (mode conform: the
 * fused row's alone, the first entry). */
static const mxc__gpu_accepts k_accepts[] = {
    {"_fused_elemwise", accepts_fused},
    {"LeakyReLU", accepts_leaky},
};

/* ---- sparse kernels (every mode): dot with a CSR lhs, the cuSPARSE
 * kernel's plan (backends/cuda/sdot_plan.h) run by the host stand-in for
 * cusparseSpMM (tests/gpu/sdot_host.h) on the arrays' read-write aliases,
 * so that CSR arrays in device memory go through libmxc's sparse GPU
 * dispatch end to end. ---- */

/* The read-write alias of n bytes at p on gpu(dev); p itself for n = 0
 * (never dereferenced); NULL when it is not device memory there. */
static void *alias_bytes(const void *p, int dev, size_t n) {
  if (n == 0) return (void *)p;
  pthread_mutex_lock(&g_lock);
  char *h = alias(p, dev, n);
  pthread_mutex_unlock(&g_lock);
  return h;
}

static int run_sdot(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__sdot_plan p;
  int rc = mxc__sdot_plan_make(c, &p, why, why_len);
  if (rc != MXC_OK || p.kind == MXC__SDOT_NOTHING) return rc;
  size_t es = p.f64 ? 8 : 4, is = p.index64 ? 8 : 4;
  const mxc__gpu_array *a = &c->in[0], *b = &c->in[1], *o = &c->out[0];
  void *ip = alias_bytes(a->aux[0], c->dev, (size_t)(p.a_rows + 1) * is);
  void *ix = alias_bytes(a->aux[1], c->dev, (size_t)p.nnz * is);
  void *v = alias_bytes(a->ptr, c->dev, (size_t)p.nnz * es);
  void *bh = alias_bytes(b->ptr, c->dev, (size_t)b->size * es);
  void *ch = alias_bytes(o->ptr, c->dev, (size_t)o->size * es);
  if (!ip || !ix || !v || !bh || !ch) {
    snprintf(why, why_len, "fake GPU: a sparse dot array is not on gpu(%d)",
             c->dev);
    return MXC_ERR_INTERNAL;
  }
  const char *bad =
      mxct_sdot_host_run(&p, ip, ix, v, bh, b->size, ch, o->size);
  if (bad) {
    snprintf(why, why_len, "fake GPU: cuSPARSE would refuse: %s", bad);
    return MXC_ERR_INTERNAL;
  }
  return MXC_OK;
}

static const mxc__gpu_sparse_kernel k_sparse_kernels[] = {
    {{"dot", mxc__sdot_dtypes, run_sdot}, mxc__sdot_stypes},
};

/* ---- streams (ABI 2): a queue per stream, served by a host thread that
 * runs each piece of work after a random delay. The engine must wait for
 * a stream (stream_sync) before it counts the work done: a dependent that
 * ran earlier would read stale values, a copy to the host would not be
 * there yet, and freed memory would make the work fail ("outside device
 * memory"), which the next sync reports. ---- */

struct fake_event;

typedef struct fake_work {
  struct fake_work *next;
  /* An event's marker (exec NULL): reached when served; or, with wait
   * set, a stream_wait_event: the stream holds until the event reaches
   * gen. */
  struct fake_event *ev;
  unsigned long long gen;
  int wait;
  int (*exec)(struct fake_work *w, char *why, size_t why_len);
  /* A kernel: the row and a deep copy of the call (param is the caller's:
   * valid until its stream_sync; the arrays are not). */
  const mxc__gpu_kernel *k;
  mxc__gpu_call c;
  mxc__gpu_array *arrays;
  int *req;
  /* A copy. */
  void *dst;
  const void *src;
  int dst_dev, src_dev;
  size_t n;
} fake_work;

typedef struct fake_stream {
  int dev;
  pthread_t tid;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  fake_work *head, *tail;
  int pending; /* queued or running */
  int queued;  /* of which kernels and copies (not markers) */
  int stop;
  int err; /* first error of the work since the last sync */
  char why[256];
  unsigned seed;
} fake_stream;

static int g_live_streams;

/* ---- events: a marker queued on the stream; it is reached when the
 * stream serves it, that is after every piece of work queued before it.
 * Its result is the first error of the stream's work since the previous
 * marker (or stream_sync): each error belongs to the work between two
 * records, so the engine's attribution is checked exactly (CUDA's
 * asynchronous faults are sticky for the whole context instead; the fake
 * keeps the stream usable, as its stream_sync does). ---- */

typedef struct fake_event {
  int dev;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  unsigned long long recorded; /* records so far */
  unsigned long long reached;  /* the last record the stream served */
  int err;
  char why[256];
} fake_event;

static int g_live_events;
/* Test knobs and counters (functions at the end of the file). */
static int g_hold;          /* streams serve nothing while set */
static int g_fail_events;   /* event_create fails while set */
static int g_max_queued;    /* most kernels and copies queued on a stream */
static int g_queued;        /* kernels and copies queued on all streams */
static int g_stream_waits;  /* stream_wait_event calls that queued a wait */
static pthread_cond_t g_hold_cv = PTHREAD_COND_INITIALIZER;

static void mark_reached(fake_event *ev, unsigned long long gen, int err,
                         const char *why) {
  pthread_mutex_lock(&ev->mu);
  ev->reached = gen;
  ev->err = err;
  snprintf(ev->why, sizeof ev->why, "%s", err ? why : "");
  pthread_cond_broadcast(&ev->cv);
  pthread_mutex_unlock(&ev->mu);
}

/* Blocks until ev has reached gen. */
static void wait_reached(fake_event *ev, unsigned long long gen) {
  pthread_mutex_lock(&ev->mu);
  while (ev->reached < gen) pthread_cond_wait(&ev->cv, &ev->mu);
  pthread_mutex_unlock(&ev->mu);
}

/* Blocks while a test holds the streams. */
static void wait_unheld(void) {
  pthread_mutex_lock(&g_lock);
  while (g_hold) pthread_cond_wait(&g_hold_cv, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

static int delay_us(void) {
  const char *v = getenv("MXC_FAKE_GPU_DELAY_US");
  return v && *v ? atoi(v) : 300;
}

static void work_free(fake_work *w) {
  free(w->arrays);
  free(w->req);
  free(w);
}

/* A marker: takes the stream's first error since the previous one. */
static void serve_marker(fake_stream *st, fake_work *w) {
  if (w->wait) {
    wait_reached(w->ev, w->gen);
    return;
  }
  pthread_mutex_lock(&st->mu);
  int err = st->err;
  char why[256];
  snprintf(why, sizeof why, "%s", st->why);
  st->err = MXC_OK;
  pthread_mutex_unlock(&st->mu);
  mark_reached(w->ev, w->gen, err, why);
}

/* Runs w after the delay; records its failure as the stream's. */
static void serve_one(fake_stream *st, fake_work *w) {
  wait_unheld();
  int d = delay_us();
  if (d > 0) usleep((useconds_t)(rand_r(&st->seed) % (unsigned)d));
  char why[256] = "";
  int rc = MXC_OK;
  if (w->exec) {
    rc = w->exec(w, why, sizeof why);
  } else {
    serve_marker(st, w);
  }
  pthread_mutex_lock(&st->mu);
  if (rc != MXC_OK && st->err == MXC_OK) {
    st->err = rc;
    snprintf(st->why, sizeof st->why, "%s", why);
  }
  if (w->exec) {
    st->queued--;
    pthread_mutex_lock(&g_lock);
    g_queued--;
    pthread_mutex_unlock(&g_lock);
  }
  st->head = w->next;
  if (!st->head) st->tail = NULL;
  st->pending--;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  work_free(w);
}

static void *stream_main(void *arg) {
  fake_stream *st = arg;
  pthread_mutex_lock(&st->mu);
  for (;;) {
    while (!st->head && !st->stop) pthread_cond_wait(&st->cv, &st->mu);
    if (!st->head) break;
    fake_work *w = st->head; /* stays queued (in order) while it runs */
    pthread_mutex_unlock(&st->mu);
    serve_one(st, w);
    pthread_mutex_lock(&st->mu);
  }
  pthread_mutex_unlock(&st->mu);
  return NULL;
}

static void enqueue(fake_stream *st, fake_work *w) {
  /* Read before queuing: once queued, w may be served and freed. */
  int is_work = w->exec != NULL;
  pthread_mutex_lock(&st->mu);
  w->next = NULL;
  if (st->tail) {
    st->tail->next = w;
  } else {
    st->head = w;
  }
  st->tail = w;
  st->pending++;
  int queued = is_work ? ++st->queued : 0;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  pthread_mutex_lock(&g_lock);
  if (queued > g_max_queued) g_max_queued = queued;
  g_queued += is_work;
  pthread_mutex_unlock(&g_lock);
}

static int fake_stream_create(int dev, void **out, char *why, size_t why_len) {
  if (mode_is("stream_fail")) {
    snprintf(why, why_len, "out of memory (fake: no streams in this mode)");
    return MXC_ERR_OOM;
  }
  fake_stream *st = calloc(1, sizeof *st);
  if (!st) {
    snprintf(why, why_len, "fake GPU: out of memory for a stream");
    return MXC_ERR_OOM;
  }
  st->dev = dev;
  st->seed = (unsigned)(uintptr_t)st;
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  if (pthread_create(&st->tid, NULL, stream_main, st) != 0) {
    free(st);
    snprintf(why, why_len, "fake GPU: cannot start a stream thread");
    return MXC_ERR_INTERNAL;
  }
  pthread_mutex_lock(&g_lock);
  g_live_streams++;
  pthread_mutex_unlock(&g_lock);
  *out = st;
  return MXC_OK;
}

/* Waits until the stream is idle; returns (and clears) its first error. */
static int fake_stream_sync(void *stream, char *why, size_t why_len) {
  fake_stream *st = stream;
  pthread_mutex_lock(&st->mu);
  while (st->pending > 0) pthread_cond_wait(&st->cv, &st->mu);
  int rc = st->err;
  if (rc != MXC_OK) snprintf(why, why_len, "%s", st->why);
  st->err = MXC_OK;
  pthread_mutex_unlock(&st->mu);
  return rc;
}

static void fake_stream_destroy(void *stream) {
  fake_stream *st = stream;
  char why[256];
  (void)fake_stream_sync(st, why, sizeof why);
  pthread_mutex_lock(&st->mu);
  st->stop = 1;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  pthread_join(st->tid, NULL);
  pthread_cond_destroy(&st->cv);
  pthread_mutex_destroy(&st->mu);
  free(st);
  pthread_mutex_lock(&g_lock);
  g_live_streams--;
  pthread_mutex_unlock(&g_lock);
}

static int exec_copy(fake_work *w, char *why, size_t why_len) {
  return fake_copy(w->dst, w->dst_dev, w->src, w->src_dev, w->n, why,
                   why_len);
}

static int fake_copy_async(void *dst, int dst_dev, const void *src,
                           int src_dev, size_t nbytes, void *stream,
                           char *why, size_t why_len) {
  fake_work *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, why_len, "fake GPU: out of memory queuing a copy");
    return MXC_ERR_OOM;
  }
  w->exec = exec_copy;
  w->dst = dst, w->src = src, w->n = nbytes;
  w->dst_dev = dst_dev, w->src_dev = src_dev;
  enqueue(stream, w);
  return MXC_OK;
}

static int exec_kernel(fake_work *w, char *why, size_t why_len) {
  return w->k->run(&w->c, why, why_len);
}

/* A copy of c that outlives the caller's arrays. */
static fake_work *copy_call(const mxc__gpu_kernel *k, const mxc__gpu_call *c) {
  fake_work *w = calloc(1, sizeof *w);
  int n = c->n_in + c->n_out;
  if (w) w->arrays = calloc((size_t)(n ? n : 1), sizeof *w->arrays);
  if (w) w->req = calloc((size_t)(c->n_out ? c->n_out : 1), sizeof *w->req);
  if (!w || !w->arrays || !w->req) {
    if (w) work_free(w);
    return NULL;
  }
  if (c->n_in) memcpy(w->arrays, c->in, (size_t)c->n_in * sizeof *c->in);
  if (c->n_out) {
    memcpy(w->arrays + c->n_in, c->out, (size_t)c->n_out * sizeof *c->out);
    memcpy(w->req, c->req, (size_t)c->n_out * sizeof *c->req);
  }
  w->exec = exec_kernel;
  w->k = k;
  w->c = *c;
  w->c.in = w->arrays;
  w->c.out = w->arrays + c->n_in;
  w->c.req = w->req;
  return w;
}

/* Without a stream the kernel runs here (synchronous, as ABI 1); with
 * one it is queued there and may fail later (at stream_sync). */
static int fake_launch(const mxc__gpu_kernel *k, const mxc__gpu_call *c,
                       void *stream, char *why, size_t why_len) {
  fake_stream *st = stream;
  if (!st) return k->run(c, why, why_len);
  if (st->dev != c->dev) {
    snprintf(why, why_len, "fake GPU: a call on gpu(%d) got a stream of "
             "gpu(%d)", c->dev, st->dev);
    return MXC_ERR_INTERNAL;
  }
  fake_work *w = copy_call(k, c);
  if (!w) {
    snprintf(why, why_len, "fake GPU: out of memory queuing a kernel");
    return MXC_ERR_OOM;
  }
  enqueue(st, w);
  return MXC_OK;
}

/* ---- events (ABI 2) ---- */

static int fake_event_create(int dev, void **out, char *why, size_t why_len) {
  pthread_mutex_lock(&g_lock);
  int fail = g_fail_events;
  pthread_mutex_unlock(&g_lock);
  fake_event *ev = fail ? NULL : calloc(1, sizeof *ev);
  if (!ev) {
    snprintf(why, why_len, "fake GPU: out of memory for an event");
    return MXC_ERR_OOM;
  }
  ev->dev = dev;
  pthread_mutex_init(&ev->mu, NULL);
  pthread_cond_init(&ev->cv, NULL);
  pthread_mutex_lock(&g_lock);
  g_live_events++;
  pthread_mutex_unlock(&g_lock);
  *out = ev;
  return MXC_OK;
}

static void fake_event_destroy(void *event) {
  fake_event *ev = event;
  pthread_cond_destroy(&ev->cv);
  pthread_mutex_destroy(&ev->mu);
  free(ev);
  pthread_mutex_lock(&g_lock);
  g_live_events--;
  pthread_mutex_unlock(&g_lock);
}

/* Queues a marker of ev (wait 0) or a wait for it (wait 1) on st. */
static int queue_marker(fake_stream *st, fake_event *ev, int wait, char *why,
                        size_t why_len) {
  fake_work *w = calloc(1, sizeof *w);
  if (!w) {
    snprintf(why, why_len, "fake GPU: out of memory queuing an event");
    return MXC_ERR_OOM;
  }
  w->ev = ev;
  w->wait = wait;
  pthread_mutex_lock(&ev->mu);
  w->gen = wait ? ev->recorded : ++ev->recorded;
  pthread_mutex_unlock(&ev->mu);
  enqueue(st, w);
  return MXC_OK;
}

static int fake_event_record(void *event, void *stream, char *why,
                             size_t why_len) {
  fake_event *ev = event;
  fake_stream *st = stream;
  if (ev->dev != st->dev) {
    snprintf(why, why_len, "fake GPU: an event of gpu(%d) recorded on a "
             "stream of gpu(%d)", ev->dev, st->dev);
    return MXC_ERR_INTERNAL;
  }
  return queue_marker(st, ev, 0, why, why_len);
}

/* ev's result once its last record is reached, else NOT_READY. */
static int event_result(fake_event *ev, char *why, size_t why_len) {
  if (ev->reached < ev->recorded) return MXC__GPU_NOT_READY;
  if (ev->err != MXC_OK) snprintf(why, why_len, "%s", ev->why);
  return ev->err;
}

static int fake_event_query(void *event, char *why, size_t why_len) {
  fake_event *ev = event;
  pthread_mutex_lock(&ev->mu);
  int rc = event_result(ev, why, why_len);
  pthread_mutex_unlock(&ev->mu);
  return rc;
}

static int fake_event_sync(void *event, char *why, size_t why_len) {
  fake_event *ev = event;
  pthread_mutex_lock(&ev->mu);
  while (ev->reached < ev->recorded) pthread_cond_wait(&ev->cv, &ev->mu);
  int rc = event_result(ev, why, why_len);
  pthread_mutex_unlock(&ev->mu);
  return rc;
}

/* Like cudaStreamWaitEvent: the stream's later work runs only once the
 * event's last record (at the time of this call) is reached; a later
 * record of the event does not move it. */
static int fake_stream_wait_event(void *stream, void *event, char *why,
                                  size_t why_len) {
  int rc = queue_marker(stream, event, 1, why, why_len);
  pthread_mutex_lock(&g_lock);
  g_stream_waits += rc == MXC_OK;
  pthread_mutex_unlock(&g_lock);
  return rc;
}

#define FAKE_TABLE(abi_, version_, kernels_, n_, n_acc_)                  \
  {                                                                       \
    .abi = (abi_), .size = sizeof(mxc__gpu_plugin), .name = "fake",        \
    .min_cc = 80, .open = fake_open, .props = fake_props,                 \
    .mem_alloc = fake_alloc, .mem_free = fake_free, .copy = fake_copy,    \
    .mxc_version = (version_), .kernels = (kernels_), .n_kernels = (n_),     \
    .stream_create = fake_stream_create,                                  \
    .stream_destroy = fake_stream_destroy,                                \
    .stream_sync = fake_stream_sync, .copy_async = fake_copy_async,       \
    .launch = fake_launch, .event_create = fake_event_create,             \
    .event_destroy = fake_event_destroy,                                  \
    .event_record = fake_event_record, .event_query = fake_event_query,   \
    .event_sync = fake_event_sync,                                        \
    .stream_wait_event = fake_stream_wait_event,                          \
    .sparse_kernels = k_sparse_kernels, .n_sparse_kernels = 1,            \
    .accepts = k_accepts, .n_accepts = (n_acc_),                          \
  }

static const mxc__gpu_plugin k_plugin =
    FAKE_TABLE(MXC__GPU_PLUGIN_ABI, MXC__GPU_MXC_VERSION, k_kernels,
               (int)(sizeof k_kernels / sizeof k_kernels[0]), 2);

static const mxc__gpu_plugin k_other_abi =
    FAKE_TABLE(99 /* not MXC__GPU_PLUGIN_ABI */, MXC__GPU_MXC_VERSION,
               k_kernels, 0, 0);

static const mxc__gpu_plugin k_other_version =
    FAKE_TABLE(MXC__GPU_PLUGIN_ABI, "0.9.0", k_kernels, 0, 0);

#define FAKE_BLAS_RUN(fn, op, name)                                  \
  static int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return mxct_blas_fake_run(op, c, host_of, why, why_len);         \
  }
MXCT_BLAS_FAKE_OPS(FAKE_BLAS_RUN)
#undef FAKE_BLAS_RUN

/* The linalg kernels: their plans run on the host (tests/gpu/la_host.h). */
#define FAKE_LA_RUN(name, op, fn)                                      \
  static int fake_##fn(const mxc__gpu_call *c, char *why, size_t n) { \
    return mxct_la_fake_run(op, c, host_of, why, n);                   \
  }
MXC__CUDA_LA_OPS(FAKE_LA_RUN)
#undef FAKE_LA_RUN

#define FAKE_TRAIN2_RUN(fn, which, name)                                \
  static int fn(const mxc__gpu_call *c, char *why, size_t why_len) {    \
    return mxct_train2_fake_run(which, c, host_of, why, why_len);       \
  }
MXCT_TRAIN2_FAKE_OPS(FAKE_TRAIN2_RUN)
#undef FAKE_TRAIN2_RUN
#define FAKE_RNG_RUN(fn, kind, name, dtypes)                         \
  static int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return mxct_rng_fake_run(kind, c, host_of, why, why_len);        \
  }
MXCT_RNG_FAKE_OPS(FAKE_RNG_RUN)
#undef FAKE_RNG_RUN

/* _fused_elemwise: the run-time fused kernel's plan run on the host with
 * the functions the generated CUDA calls (tests/gpu/fuse_host.h), so the
 * conformance case and executors' fused nodes on a GPU device are
 * exercised without one. */
static int run_fused(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__fuse_plan p;
  int rc = mxc__fuse_plan_make(c->param, &p, why, why_len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL) return rc;
  const float *in[MXC__FUSED_MAX_INPUTS];
  float *out = host_of(&c->out[0], c->dev);
  for (int i = 0; i < c->n_in && i < MXC__FUSED_MAX_INPUTS; ++i) {
    in[i] = host_of(&c->in[i], c->dev);
    if (!in[i]) out = NULL;
  }
  if (!out || c->n_in != p.n_inputs) {
    snprintf(why, why_len, "fake GPU: fused call's arrays do not fit");
    return MXC_ERR_INTERNAL;
  }
  mxc__fuse_host_run(&p, in, out, c->out[0].size,
                     c->req[0] == MXC__GPU_REQ_ADD);
  return MXC_OK;
}

/* The run-time generator's answer (its plan), and a compiler that fails
 * while MXC_FAKE_NVRTC=fail, for calls with shapes on a device (as the
 * real row compiles before the push): libmxc then runs the program
 * unfused. */
static int accepts_fused(const mxc__gpu_call *c, char *why, size_t why_len) {
  mxc__fuse_plan p;
  int rc = mxc__fuse_plan_make(c->param, &p, why, why_len);
  if (rc != MXC_OK) return rc != MXC_ERR_UNSUPPORTED;
  const char *nv = getenv("MXC_FAKE_NVRTC");
  if (c->dev < 0 || !mxc__gpu_call_has_shapes(c) || !nv ||
      strcmp(nv, "fail") != 0) {
    return 1;
  }
  snprintf(why, why_len, "fake NVRTC: the fused kernel failed to compile");
  return 0;
}

static const mxc__gpu_kernel k_conform_kernels[] = {
    {"_fused_elemwise", NULL, run_fused},
    {"relu", NULL, run_relu},
    {"add", NULL, run_add},
    {"_copy", NULL, run_copy},
#define FAKE_BLAS_ROW(fn, op, name) {name, NULL, fn},
    MXCT_BLAS_FAKE_OPS(FAKE_BLAS_ROW)
#undef FAKE_BLAS_ROW
#define FAKE_LA_ROW(name, op, fn) {name, mxc__la_supports, fake_##fn},
    MXC__CUDA_LA_OPS(FAKE_LA_ROW)
#undef FAKE_LA_ROW
#define FAKE_TRAIN2_ROW(fn, which, name) {name, NULL, fn},
    MXCT_TRAIN2_FAKE_OPS(FAKE_TRAIN2_ROW)
#undef FAKE_TRAIN2_ROW
#define FAKE_RNG_ROW(fn, kind, name, dtypes) {name, dtypes, fn},
    MXCT_RNG_FAKE_OPS(FAKE_RNG_ROW)
#undef FAKE_RNG_ROW
};

/* Mode conform: the kernels that compute (the conformance harness). */
static const mxc__gpu_plugin k_conform =
    FAKE_TABLE(MXC__GPU_PLUGIN_ABI, MXC__GPU_MXC_VERSION, k_conform_kernels,
               (int)(sizeof k_conform_kernels / sizeof k_conform_kernels[0]),
               1);

const mxc__gpu_plugin *mxc_gpu_plugin_v2(void) {
  if (mode_is("null_table")) return NULL;
  if (mode_is("conform")) return &k_conform;
  if (mode_is("old_version")) return &k_other_version;
  return mode_is("bad_abi") ? &k_other_abi : &k_plugin;
}

/* For the tests: streams not yet destroyed. */
MXC_API int mxc_fake_gpu_live_streams(void);
int mxc_fake_gpu_live_streams(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_live_streams;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* For the tests: blocks of device memory not yet freed. */
MXC_API int mxc_fake_gpu_live_blocks(void);
int mxc_fake_gpu_live_blocks(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_n_blocks;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* For the tests: events not yet destroyed. */
MXC_API int mxc_fake_gpu_live_events(void);
int mxc_fake_gpu_live_events(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_live_events;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* For the tests: the most kernels and copies queued (not yet served) on
 * one stream at once since the last call, which resets it. */
MXC_API int mxc_fake_gpu_max_queued(void);
int mxc_fake_gpu_max_queued(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_max_queued;
  g_max_queued = 0;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* For the tests: kernels and copies queued or running on all streams. */
MXC_API int mxc_fake_gpu_queued(void);
int mxc_fake_gpu_queued(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_queued;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* For the tests: while on, no stream serves anything (work and markers
 * stay queued), so a test sees how much the engine enqueues without
 * waiting for the device. */
MXC_API void mxc_fake_gpu_hold(int on);
void mxc_fake_gpu_hold(int on) {
  pthread_mutex_lock(&g_lock);
  g_hold = on;
  pthread_cond_broadcast(&g_hold_cv);
  pthread_mutex_unlock(&g_lock);
}

/* For the tests: while on, event_create fails (the engine then waits for
 * its streams instead). */
MXC_API void mxc_fake_gpu_fail_events(int on);
void mxc_fake_gpu_fail_events(int on) {
  pthread_mutex_lock(&g_lock);
  g_fail_events = on;
  pthread_mutex_unlock(&g_lock);
}

/* For the tests: waits queued by stream_wait_event so far. */
MXC_API int mxc_fake_gpu_stream_waits(void);
int mxc_fake_gpu_stream_waits(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_stream_waits;
  pthread_mutex_unlock(&g_lock);
  return n;
}
