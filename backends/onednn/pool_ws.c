/* Max-pooling workspaces kept from a training forward for its backward
 * (onednn.h). oneDNN's max-pooling backward needs the forward's
 * workspace (where each window's maximum was); without one kept, the
 * backward ran the forward again on its data, a whole pass over the
 * pooling's input per step (2.6% of a ResNet-18 training step).
 *
 * An entry is keyed on the data's address, its write version and the
 * pooling's geometry (the primitive key without the thread count). The
 * version is the engine variable's process-unique write stamp
 * (mxc__engine_var_version; 0: unknown, never kept), so a backward whose
 * data carries the same stamp reads exactly what the forward read, and
 * the maxima it is given are that data's: data written in between (an
 * in-place update, a copy_from_host) misses and the backward recomputes.
 * A hit hands the workspace over and empties the slot: one backward per
 * forward, a second one recomputes.
 *
 * A training forward whose backward never runs (forward(is_train=1) for
 * evaluation) leaves its entry until the same data and geometry come
 * again (replaced) or the least recently kept entry is evicted to make
 * room: SLOTS entries and DEFAULT_BYTES at most, what a process pays for
 * them. Buffers are oneDNN memory objects that allocate for themselves,
 * as the weights cache's (weights.c): a kept workspace holds no block of
 * mxc's allocator. MXC_ONEDNN_POOL_WS=0 in the environment keeps none (the
 * backward recomputes, as before; for comparisons). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

#define SLOTS 16
/* ResNet-18's max pooling at batch 32: 6.4 M outputs, a byte or an int
 * each; the bound leaves room for several such networks. */
#define DEFAULT_BYTES ((size_t)256 << 20)

typedef struct ws_entry {
  const void *data; /* NULL: free slot */
  uint64_t version;
  mxc__dnnl_key key;
  dnnl_memory_t mem;
  size_t bytes;
  uint64_t kept_at;
} ws_entry;

static struct {
  pthread_mutex_t mu;
  ws_entry e[SLOTS];
  size_t bytes;
  uint64_t clock;
  int64_t hits, misses;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int same_key(const mxc__dnnl_key *a, const mxc__dnnl_key *b) {
  return a->n == b->n && memcmp(a->b, b->b, a->n) == 0;
}

static int find_locked(const mxc__dnnl_key *k, const void *data) {
  for (int i = 0; i < SLOTS; ++i) {
    if (g.e[i].data == data && same_key(&g.e[i].key, k)) return i;
  }
  return -1;
}

/* Empties slot i; its memory is returned for the caller to destroy
 * after unlocking. */
static dnnl_memory_t drop_locked(int i) {
  dnnl_memory_t m = g.e[i].mem;
  g.bytes -= g.e[i].bytes;
  g.e[i].data = NULL;
  g.e[i].mem = NULL;
  g.e[i].bytes = 0;
  return m;
}

static int oldest_locked(void) {
  int o = -1;
  for (int i = 0; i < SLOTS; ++i) {
    if (g.e[i].data && (o < 0 || g.e[i].kept_at < g.e[o].kept_at)) o = i;
  }
  return o;
}

/* A free slot with room for `bytes` more: the entry of the same data and
 * geometry (stale now) goes first, then the oldest ones. The memory
 * dropped goes to garbage[] (at most SLOTS), destroyed unlocked. */
static int make_room_locked(const mxc__dnnl_key *k, const void *data,
                            size_t bytes, dnnl_memory_t *garbage, int *n) {
  int i = find_locked(k, data);
  if (i >= 0) garbage[(*n)++] = drop_locked(i);
  for (;;) {
    int empty = -1;
    for (i = 0; i < SLOTS && empty < 0; ++i) {
      if (!g.e[i].data) empty = i;
    }
    if (empty >= 0 && g.bytes + bytes <= DEFAULT_BYTES) return empty;
    int o = oldest_locked();
    if (o < 0) return -1;
    garbage[(*n)++] = drop_locked(o);
  }
}

static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static int g_wanted = 1;

static void read_env(void) {
  const char *v = getenv("MXC_ONEDNN_POOL_WS");
  g_wanted = !(v && strcmp(v, "0") == 0);
}

int mxc__dnnl_pool_ws_wanted(void) {
  pthread_once(&g_env_once, read_env);
  return g_wanted;
}

int mxc__dnnl_pool_ws_new(const mxc__op *op, const dnnl_memory_desc_t *md,
                          dnnl_memory_t *out) {
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  return mxc__dnnl_check(dnnl_memory_create(out, md, eng, DNNL_MEMORY_ALLOCATE),
                         op, "dnnl_memory_create (pooling workspace)");
}

void mxc__dnnl_pool_ws_keep(const mxc__dnnl_key *k, const void *data,
                            uint64_t version, dnnl_memory_t mem) {
  const dnnl_memory_desc_t *md = NULL;
  size_t bytes = 0;
  if (dnnl_memory_get_memory_desc(mem, &md) == dnnl_success) {
    bytes = dnnl_memory_desc_get_size(md);
  }
  if (version == 0 || k->overflow || bytes == 0 || bytes > DEFAULT_BYTES) {
    dnnl_memory_destroy(mem);
    return;
  }
  dnnl_memory_t garbage[SLOTS + 1];
  int n = 0;
  pthread_mutex_lock(&g.mu);
  int i = make_room_locked(k, data, bytes, garbage, &n);
  if (i >= 0) {
    ws_entry *e = &g.e[i];
    e->data = data;
    e->version = version;
    e->key = *k;
    e->mem = mem;
    e->bytes = bytes;
    e->kept_at = ++g.clock;
    g.bytes += bytes;
  } else {
    garbage[n++] = mem;
  }
  pthread_mutex_unlock(&g.mu);
  for (int j = 0; j < n; ++j) dnnl_memory_destroy(garbage[j]);
}

/* Whether mem is laid out as `want`. */
static int has_md(dnnl_memory_t mem, const dnnl_memory_desc_t *want) {
  const dnnl_memory_desc_t *md = NULL;
  return dnnl_memory_get_memory_desc(mem, &md) == dnnl_success &&
         dnnl_memory_desc_equal(md, want);
}

dnnl_memory_t mxc__dnnl_pool_ws_take(const mxc__dnnl_key *k, const void *data,
                                     uint64_t version,
                                     const dnnl_memory_desc_t *want) {
  dnnl_memory_t got = NULL, stale = NULL;
  pthread_mutex_lock(&g.mu);
  int i = version != 0 && !k->overflow ? find_locked(k, data) : -1;
  if (i >= 0) {
    /* Either way the entry is done: handed over, or of older data. */
    int fresh = g.e[i].version == version && has_md(g.e[i].mem, want);
    dnnl_memory_t m = drop_locked(i);
    if (fresh) {
      got = m;
    } else {
      stale = m;
    }
  }
  if (got) {
    g.hits++;
  } else {
    g.misses++;
  }
  pthread_mutex_unlock(&g.mu);
  if (stale) dnnl_memory_destroy(stale);
  return got;
}

void mxc__dnnl_pool_ws_stats(int *entries, int64_t *hits, int64_t *misses) {
  pthread_mutex_lock(&g.mu);
  int n = 0;
  for (int i = 0; i < SLOTS; ++i) n += g.e[i].data != NULL;
  *entries = n;
  *hits = g.hits;
  *misses = g.misses;
  pthread_mutex_unlock(&g.mu);
}
