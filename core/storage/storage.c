/* Per-device pooled storage allocator (see storage.h).
 *
 * Layout:
 *  - A backend (a small table of function pointers) per device type gets
 *    raw memory from the system. The CPU backend wraps mxc__aligned_alloc;
 *    the GPU one takes device memory from the CUDA plug-in
 *    (core/base/gpu.h).
 *  - A pool per device (all CPU ids share one, since they name the same
 *    memory; one per GPU id) keeps freed blocks in per-size-class stacks
 *    and the statistics, all under one mutex that is never held across a
 *    backend call (except for the rare growth of a stack, which uses the
 *    host allocator).
 *
 * Size classes: 64 bytes, then four classes per power of two:
 * 2^k * {1.25, 1.5, 1.75, 2} for k >= 6. A request n > 64 lies in
 * (2^k, 2^(k+1)] and gets the first class >= n, which exceeds n by less
 * than 2^(k-2) < n/4: waste is under 25%. Requests above MAX_REQUEST
 * (a quarter of the address space) are refused with MXC_ERR_OOM before
 * any arithmetic that could overflow.
 *
 * The stacks hold pointers in arrays owned by the pool rather than links
 * written into the cached blocks, so the same code works for device memory
 * that the host cannot touch. */
#include "core/storage/storage.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/profiler/profiler.h"

#define ALIGNMENT 64
#define MIN_CLASS_LOG2 6 /* the smallest class is 64 bytes */
#define SIZE_BITS (sizeof(size_t) * CHAR_BIT)
/* Largest request served; class sizes never exceed it, so no overflow. */
#define MAX_REQUEST ((size_t)1 << (SIZE_BITS - 2))
/* Class 0 is 64 bytes; then 4 per octave from (64,128] to (MAX/2, MAX]. */
#define NUM_CLASSES (1 + 4 * (SIZE_BITS - 2 - MIN_CLASS_LOG2))
#define NUM_POOLS (1 + MXC__MAX_GPUS) /* pool 0: CPU; pool 1 + i: gpu(i) */
#define STACK_INITIAL_CAP 8

/* Raw memory of one device type. alloc returns ALIGNMENT-aligned memory
 * of at least nbytes (nbytes > 0) or NULL; release takes what alloc gave. */
typedef struct storage_backend {
  const char *name; /* for messages: "cpu", "gpu" */
  void *(*alloc)(int dev_id, size_t nbytes);
  void (*release)(int dev_id, void *ptr);
} storage_backend;

static void *cpu_alloc(int dev_id, size_t nbytes) {
  (void)dev_id;
  return mxc__aligned_alloc(ALIGNMENT, nbytes);
}

static void cpu_release(int dev_id, void *ptr) {
  (void)dev_id;
  mxc__free(ptr);
}

static const storage_backend k_cpu_backend = {"cpu", cpu_alloc, cpu_release};

/* Device memory is 256-byte aligned (the plug-in's promise), which covers
 * ALIGNMENT. Only ids mxc__device_check accepted get here. */
static void *gpu_alloc(int dev_id, size_t nbytes) {
  return mxc__gpu_alloc(dev_id, nbytes);
}

static void gpu_release(int dev_id, void *ptr) { mxc__gpu_free(dev_id, ptr); }

static const storage_backend k_gpu_backend = {"gpu", gpu_alloc, gpu_release};

/* Indexed by MXC_DEVICE_*. */
static const storage_backend *const k_backends[] = {
    [MXC_DEVICE_CPU] = &k_cpu_backend,
    [MXC_DEVICE_GPU] = &k_gpu_backend,
};

/* Cached blocks of one size class: ptrs[0..count) are free blocks. */
typedef struct class_stack {
  void **ptrs;
  size_t count;
  size_t cap;
} class_stack;

/* Invariants (under lock): bytes_cached == sum over classes of
 * count * class size; peak_in_use >= bytes_in_use. */
typedef struct pool {
  pthread_mutex_t lock;
  class_stack stacks[NUM_CLASSES];
  size_t bytes_in_use;
  size_t bytes_cached;
  size_t peak_in_use;
  int64_t alloc_count;
  int64_t pool_hits;
} pool;

static pool g_pools[NUM_POOLS];
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
/* Written once under g_init_once, read-only afterwards. */
static int g_pool_on = 1;
static size_t g_max_cached = SIZE_MAX;

/* ---- configuration ---- */

/* "4096", "64K", "512M", "2G" (binary multiples); 0 on a malformed value,
 * which leaves the cap unset. */
static int parse_bytes(const char *s, size_t *out) {
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || strchr(s, '-') != NULL) return 0; /* strtoull wraps "-1" */
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return 0;
  }
  if (*end != '\0' || v > (SIZE_MAX >> shift)) return 0;
  *out = (size_t)v << shift;
  return 1;
}

static void storage_init(void) {
  const char *on = getenv("MXC_STORAGE_POOL");
  g_pool_on = !(on && strcmp(on, "0") == 0);
  const char *cap = getenv("MXC_STORAGE_POOL_MAX_CACHED");
  size_t v;
  if (cap && parse_bytes(cap, &v)) g_max_cached = v;
  for (int i = 0; i < NUM_POOLS; i++) {
    pthread_mutex_init(&g_pools[i].lock, NULL);
  }
}

static void ensure_init(void) { pthread_once(&g_init_once, storage_init); }

int mxc__storage_pool_enabled(void) {
  ensure_init();
  return g_pool_on;
}

/* ---- size classes ---- */

/* floor(log2(x)), x > 0. */
static unsigned floor_log2(size_t x) {
#if defined(__GNUC__)
  return 63u - (unsigned)__builtin_clzll((unsigned long long)x);
#else
  unsigned r = 0;
  while (x >>= 1) r++;
  return r;
#endif
}

/* Class index of a request 0 < n <= MAX_REQUEST (0 maps to class 0). */
static size_t class_index(size_t n) {
  if (n <= ((size_t)1 << MIN_CLASS_LOG2)) return 0;
  unsigned k = floor_log2(n - 1); /* 2^k < n <= 2^(k+1) */
  size_t base = (size_t)1 << k;
  unsigned step_log2 = k - 2;     /* four steps per octave */
  size_t j = ((n - base) + ((size_t)1 << step_log2) - 1) >> step_log2;
  return 1 + (size_t)(k - MIN_CLASS_LOG2) * 4 + (j - 1); /* j in 1..4 */
}

static size_t class_size(size_t index) {
  if (index == 0) return (size_t)1 << MIN_CLASS_LOG2;
  unsigned k = MIN_CLASS_LOG2 + (unsigned)((index - 1) / 4);
  size_t j = 1 + (index - 1) % 4;
  return ((size_t)1 << k) + (j << (k - 2));
}

/* ---- pools ---- */

static int pool_for(mxc__device dev, const char *what, pool **out_pool,
                    const storage_backend **out_backend) {
  MXC_FORWARD_IF_ERROR(mxc__device_check(dev.type, dev.id, what));
  const storage_backend *be = k_backends[dev.type];
  /* The device check keeps GPU ids below the plug-in's count, which is at
   * most MXC__MAX_GPUS. */
  MXC__ASSERT(dev.type != MXC_DEVICE_GPU || dev.id < MXC__MAX_GPUS);
  int index = dev.type == MXC_DEVICE_GPU ? 1 + dev.id : 0;
  ensure_init();
  *out_pool = &g_pools[index];
  *out_backend = be;
  return MXC_OK;
}

/* Under p->lock. */
static void account_alloc(pool *p, size_t bytes, int hit) {
  p->bytes_in_use += bytes;
  if (p->bytes_in_use > p->peak_in_use) p->peak_in_use = p->bytes_in_use;
  p->alloc_count++;
  if (hit) p->pool_hits++;
}

/* Pops a cached block of class `index`, or returns NULL. */
static void *pool_take(pool *p, size_t index, size_t bytes) {
  void *ptr = NULL;
  pthread_mutex_lock(&p->lock);
  class_stack *s = &p->stacks[index];
  if (s->count > 0) {
    /* See the invariants at struct pool. */
    MXC__ASSERT(p->bytes_cached >= bytes);
    ptr = s->ptrs[--s->count];
    p->bytes_cached -= bytes;
    account_alloc(p, bytes, 1);
  }
  pthread_mutex_unlock(&p->lock);
  return ptr;
}

/* Under p->lock: room for one more pointer, growing the array if needed.
 * 0 when growth fails (the caller then frees the block instead). */
static int stack_reserve_one(class_stack *s) {
  if (s->count < s->cap) return 1;
  size_t cap = s->cap ? s->cap * 2 : STACK_INITIAL_CAP;
  void **grown = mxc__realloc(s->ptrs, cap * sizeof *grown);
  if (grown == NULL) return 0;
  s->ptrs = grown;
  s->cap = cap;
  return 1;
}

/* Takes every cached block (and the stacks' arrays) out of p, then frees
 * them outside the lock. Returns the number of bytes released. */
static size_t pool_release_all(pool *p, const storage_backend *be,
                               int dev_id) {
  /* Moved out wholesale so that the lock is held only for a copy. */
  class_stack taken[NUM_CLASSES];
  pthread_mutex_lock(&p->lock);
  size_t released = p->bytes_cached;
  memcpy(taken, p->stacks, sizeof taken);
  memset(p->stacks, 0, sizeof p->stacks);
  p->bytes_cached = 0;
  pthread_mutex_unlock(&p->lock);
  for (size_t c = 0; c < NUM_CLASSES; c++) {
    for (size_t i = 0; i < taken[c].count; i++) {
      be->release(dev_id, taken[c].ptrs[i]);
    }
    mxc__free(taken[c].ptrs);
  }
  return released;
}

/* Gets fresh memory from the backend. When the system is out of memory
 * while the pool still caches blocks (of other classes), those are given
 * back and the request is tried once more. */
static void *system_alloc(pool *p, const storage_backend *be, int dev_id,
                          size_t bytes) {
  void *ptr = be->alloc(dev_id, bytes);
  if (ptr == NULL && g_pool_on && pool_release_all(p, be, dev_id) > 0) {
    ptr = be->alloc(dev_id, bytes);
  }
  return ptr;
}

/* The profiler's memory counter of p ("memory cpu(0)") after a change of
 * delta bytes, charged to the operator being invoked on this thread. */
static void prof_memory(pool *p, const storage_backend *be, mxc__device dev,
                        int64_t delta) {
  pthread_mutex_lock(&p->lock);
  int64_t in_use = (int64_t)p->bytes_in_use;
  pthread_mutex_unlock(&p->lock);
  char name[MXC__PROF_NAME_MAX];
  snprintf(name, sizeof name, "memory %s(%d)", be->name, dev.id);
  mxc__prof_counter(MXC__PROF_MEMORY, name, in_use, delta, mxc__prof_attrib());
}

int mxc__storage_alloc(mxc__device dev, size_t nbytes,
                       mxc__storage_block *out) {
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__storage_alloc: out is NULL");
  pool *p;
  const storage_backend *be;
  MXC_FORWARD_IF_ERROR(pool_for(dev, "storage device", &p, &be));
  MXC_RETURN_ERROR_IF(nbytes > MAX_REQUEST, MXC_ERR_OOM,
                      "out of memory: cannot allocate %zu bytes on %s(%d): "
                      "more than the largest block size (%zu bytes)",
                      nbytes, be->name, dev.id, MAX_REQUEST);
  /* Pool off: reserve exactly what was asked for (at least one byte, so
   * that every block is unique), so ASan catches overruns past nbytes. */
  size_t index = class_index(nbytes);
  /* The class table covers every request up to MAX_REQUEST. */
  MXC__ASSERT(index < NUM_CLASSES && class_size(index) >= nbytes);
  size_t bytes = g_pool_on ? class_size(index) : (nbytes ? nbytes : 1);
  void *ptr = g_pool_on ? pool_take(p, index, bytes) : NULL;
  if (ptr == NULL) {
    ptr = system_alloc(p, be, dev.id, bytes);
    MXC_RETURN_ERROR_IF(ptr == NULL, MXC_ERR_OOM,
                        "out of memory: cannot allocate %zu bytes (size "
                        "class %zu) on %s(%d)",
                        nbytes, bytes, be->name, dev.id);
    pthread_mutex_lock(&p->lock);
    account_alloc(p, bytes, 0);
    pthread_mutex_unlock(&p->lock);
  }
  out->ptr = ptr;
  out->size = nbytes;
  out->class_size = bytes;
  out->dev = dev;
  if (mxc__prof_on(MXC__PROF_MEMORY)) prof_memory(p, be, dev, (int64_t)bytes);
  return MXC_OK;
}

/* Under p->lock: 1 when the block was cached. */
static int pool_put(pool *p, void *ptr, size_t bytes) {
  if (!g_pool_on || bytes > g_max_cached - p->bytes_cached) return 0;
  size_t index = class_index(bytes);
  /* Pooled blocks are whole classes: a block returns to its own stack. */
  MXC__ASSERT(class_size(index) == bytes);
  class_stack *s = &p->stacks[index];
  if (!stack_reserve_one(s)) return 0;
  s->ptrs[s->count++] = ptr;
  p->bytes_cached += bytes;
  return 1;
}

void mxc__storage_free(mxc__storage_block *b) {
  if (b == NULL) return;
  pool *p;
  const storage_backend *be;
  /* A block with a bad device never came from mxc__storage_alloc; there
   * is nothing safe to do with its pointer. */
  if (b->ptr != NULL && pool_for(b->dev, "storage device", &p, &be) == MXC_OK) {
    pthread_mutex_lock(&p->lock);
    /* A block is freed once, and only one this pool handed out. */
    MXC__ASSERT_MSG(p->bytes_in_use >= b->class_size,
                    "storage block freed twice or not from this pool");
    p->bytes_in_use -= b->class_size;
    int cached = pool_put(p, b->ptr, b->class_size);
    pthread_mutex_unlock(&p->lock);
    if (!cached) be->release(b->dev.id, b->ptr);
    if (mxc__prof_on(MXC__PROF_MEMORY)) {
      prof_memory(p, be, b->dev, -(int64_t)b->class_size);
    }
  }
  memset(b, 0, sizeof *b);
}

int mxc__storage_stat(mxc__device dev, int stat, int64_t *out) {
  MXC_RETURN_ERROR_IF(out == NULL, MXC_ERR_INVALID_ARGUMENT,
                      "mxc__storage_stat: out is NULL");
  MXC_RETURN_ERROR_IF(stat < MXC_STORAGE_BYTES_IN_USE ||
                          stat > MXC_STORAGE_POOL_HITS,
                      MXC_ERR_INVALID_ARGUMENT,
                      "unknown storage statistic %d; expected one of "
                      "MXC_STORAGE_BYTES_IN_USE (0), BYTES_CACHED (1), "
                      "PEAK_IN_USE (2), ALLOC_COUNT (3), POOL_HITS (4)",
                      stat);
  pool *p;
  const storage_backend *be;
  MXC_FORWARD_IF_ERROR(pool_for(dev, "storage device", &p, &be));
  int64_t v = 0;
  pthread_mutex_lock(&p->lock);
  switch (stat) {
    case MXC_STORAGE_BYTES_IN_USE: v = (int64_t)p->bytes_in_use; break;
    case MXC_STORAGE_BYTES_CACHED: v = (int64_t)p->bytes_cached; break;
    case MXC_STORAGE_PEAK_IN_USE: v = (int64_t)p->peak_in_use; break;
    case MXC_STORAGE_ALLOC_COUNT: v = p->alloc_count; break;
    case MXC_STORAGE_POOL_HITS: v = p->pool_hits; break;
  }
  pthread_mutex_unlock(&p->lock);
  *out = v;
  return MXC_OK;
}

int mxc__storage_release_cached(mxc__device dev) {
  pool *p;
  const storage_backend *be;
  MXC_FORWARD_IF_ERROR(pool_for(dev, "storage device", &p, &be));
  pool_release_all(p, be, dev.id);
  return MXC_OK;
}
