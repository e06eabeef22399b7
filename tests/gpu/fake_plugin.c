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
 * conform (2 devices, only the kernels that compute: relu, add, _copy,
 * and the cuBLAS kernels' plans run on the host, tests/gpu/blas_host.h).
 * Kernels (below) are host loops, for every mode. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/base/gpu_plugin.h"
#include "tests/gpu/fuse_host.h"
#include "tests/gpu/blas_host.h"

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

static const mxc__gpu_kernel k_kernels[] = {
    {"relu", NULL, run_relu},
    {"add", NULL, run_add},
    {"_copy", NULL, run_copy},
    {"sigmoid", NULL, run_failing},
};

static const mxc__gpu_plugin k_plugin = {
    MXC__GPU_PLUGIN_ABI, sizeof(mxc__gpu_plugin), "fake", 80, fake_open,
    fake_props, fake_alloc, fake_free, fake_copy, MXC__GPU_MXC_VERSION,
    k_kernels, (int)(sizeof k_kernels / sizeof k_kernels[0]),
};

static const mxc__gpu_plugin k_other_abi = {
    MXC__GPU_PLUGIN_ABI + 98, sizeof(mxc__gpu_plugin), "fake", 80, fake_open,
    fake_props, fake_alloc, fake_free, fake_copy, MXC__GPU_MXC_VERSION,
    k_kernels, 0,
};

static const mxc__gpu_plugin k_other_version = {
    MXC__GPU_PLUGIN_ABI, sizeof(mxc__gpu_plugin), "fake", 80, fake_open,
    fake_props, fake_alloc, fake_free, fake_copy, "0.9.0", k_kernels, 0,
};

#define FAKE_BLAS_RUN(fn, op, name)                                  \
  static int fn(const mxc__gpu_call *c, char *why, size_t why_len) { \
    return mxct_blas_fake_run(op, c, host_of, why, why_len);         \
  }
MXCT_BLAS_FAKE_OPS(FAKE_BLAS_RUN)
#undef FAKE_BLAS_RUN

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

static const mxc__gpu_kernel k_conform_kernels[] = {
    {"_fused_elemwise", NULL, run_fused},
    {"relu", NULL, run_relu},
    {"add", NULL, run_add},
    {"_copy", NULL, run_copy},
#define FAKE_BLAS_ROW(fn, op, name) {name, NULL, fn},
    MXCT_BLAS_FAKE_OPS(FAKE_BLAS_ROW)
#undef FAKE_BLAS_ROW
};

/* Mode conform: the kernels that compute (the conformance harness). */
static const mxc__gpu_plugin k_conform = {
    MXC__GPU_PLUGIN_ABI, sizeof(mxc__gpu_plugin), "fake", 80, fake_open,
    fake_props, fake_alloc, fake_free, fake_copy, MXC__GPU_MXC_VERSION,
    k_conform_kernels,
    (int)(sizeof k_conform_kernels / sizeof k_conform_kernels[0]),
};

const mxc__gpu_plugin *mxc_gpu_plugin_v1(void) {
  if (mode_is("null_table")) return NULL;
  if (mode_is("conform")) return &k_conform;
  if (mode_is("old_version")) return &k_other_version;
  return mode_is("bad_abi") ? &k_other_abi : &k_plugin;
}

/* For the tests: blocks of device memory not yet freed. */
MXC_API int mxc_fake_gpu_live_blocks(void);
int mxc_fake_gpu_live_blocks(void) {
  pthread_mutex_lock(&g_lock);
  int n = g_n_blocks;
  pthread_mutex_unlock(&g_lock);
  return n;
}
