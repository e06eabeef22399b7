/* Reordered weights (onednn.h): a convolution or inner product whose
 * primitive wants its weights in a blocked layout would reorder the
 * user's plain weights on every call, as much memory traffic as a small
 * layer's whole product. This cache keeps the reordered copy, keyed on
 * the weights' address, their write version and the layout wanted.
 *
 * Invalidation: the version is the engine variable's write stamp
 * (mxc__engine_var_version), which changes whenever a write to the array
 * is pushed or waited for, so new weights (an optimizer step, a
 * copy_from_host, load_params) miss and replace the entry of the same
 * address and layout; arrays whose memory is written behind the engine
 * (DLPack, imported memory) have version 0 and are never cached. An
 * entry in use is never replaced or evicted (a reference count); the
 * least recently used idle entries go when the cache holds more than
 * its byte bound. Entries of arrays that were freed stay until then:
 * the bound is what a process pays at most for them.
 *
 * The table is static and the buffers are oneDNN memory objects that
 * allocate for themselves, so a warm cache holds no blocks of mxc's
 * allocator (tests that count live blocks across runs see none appear). */
#include <pthread.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/error.h"

#define SLOTS 256
/* ResNet-50's weights are ~100 MB in float32: two such networks. */
#define DEFAULT_BYTES ((size_t)256 << 20)

typedef struct wentry {
  const void *ptr; /* the user's weights; NULL: free slot */
  uint64_t version;
  dnnl_memory_desc_t want;
  dnnl_memory_t mem; /* owns the reordered copy */
  size_t bytes;
  int refs;
  uint64_t last_use;
} wentry;

static struct {
  pthread_mutex_t mu;
  wentry e[SLOTS];
  size_t bytes, cap;
  uint64_t clock;
  int64_t hits, misses;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cap = DEFAULT_BYTES};

static int find_locked(const void *ptr, const dnnl_memory_desc_t *want) {
  for (int i = 0; i < SLOTS; ++i) {
    if (g.e[i].ptr == ptr && dnnl_memory_desc_equal(&g.e[i].want, want)) {
      return i;
    }
  }
  return -1;
}

/* Empties slot i (idle); its memory goes to *garbage (freed unlocked). */
static void drop_locked(int i, dnnl_memory_t *garbage) {
  *garbage = g.e[i].mem;
  g.bytes -= g.e[i].bytes;
  memset(&g.e[i], 0, sizeof g.e[i]);
}

static int lru_idle_locked(void) {
  int lru = -1;
  for (int i = 0; i < SLOTS; ++i) {
    if (g.e[i].ptr && g.e[i].refs == 0 &&
        (lru < 0 || g.e[i].last_use < g.e[lru].last_use)) {
      lru = i;
    }
  }
  return lru;
}

/* A slot for `bytes` more, evicting idle entries (their memory freed
 * here, with the lock held: oneDNN does not call back into us); -1 when
 * busy entries fill the cache. */
static int make_room_locked(size_t bytes) {
  for (;;) {
    int empty = -1;
    for (int i = 0; i < SLOTS && empty < 0; ++i) {
      if (!g.e[i].ptr) empty = i;
    }
    if (empty >= 0 && g.bytes + bytes <= g.cap) return empty;
    int v = lru_idle_locked();
    if (v < 0) return -1;
    dnnl_memory_t garbage;
    drop_locked(v, &garbage);
    dnnl_memory_destroy(garbage);
  }
}

/* A hit: the entry's memory, held. */
static int lookup(const void *ptr, uint64_t version,
                  const dnnl_memory_desc_t *want, mxc__dnnl_wref *ref) {
  dnnl_memory_t garbage = NULL;
  pthread_mutex_lock(&g.mu);
  int i = find_locked(ptr, want);
  if (i >= 0 && g.e[i].version == version) {
    g.e[i].refs++;
    g.e[i].last_use = ++g.clock;
    g.hits++;
    ref->mem = g.e[i].mem;
  } else {
    if (i >= 0 && g.e[i].refs == 0) drop_locked(i, &garbage); /* stale */
    g.misses++;
    i = -1;
  }
  pthread_mutex_unlock(&g.mu);
  if (garbage) dnnl_memory_destroy(garbage);
  ref->slot = i;
  return i >= 0;
}

/* Keeps ref's fresh copy in the cache when there is room. */
static void keep(const void *ptr, uint64_t version,
                 const dnnl_memory_desc_t *want, size_t n,
                 mxc__dnnl_wref *ref) {
  if (n > g.cap) return; /* bigger than the whole cache */
  pthread_mutex_lock(&g.mu);
  int i = find_locked(ptr, want) < 0 ? make_room_locked(n) : -1;
  if (i >= 0) {
    wentry e = {ptr, version, *want, ref->mem, n, 1, ++g.clock};
    g.e[i] = e;
    g.bytes += n;
    ref->slot = i;
  }
  pthread_mutex_unlock(&g.mu);
}

int mxc__dnnl_weights_get(const mxc__op *op, const dnnl_memory_desc_t *plain,
                          const void *ptr, uint64_t version,
                          const dnnl_memory_desc_t *want,
                          mxc__dnnl_wref *ref) {
  if (lookup(ptr, version, want, ref)) return MXC_OK;
  dnnl_engine_t eng;
  MXC_FORWARD_IF_ERROR(mxc__dnnl_engine(&eng));
  MXC_FORWARD_IF_ERROR(mxc__dnnl_check(
      dnnl_memory_create(&ref->mem, want, eng, DNNL_MEMORY_ALLOCATE), op,
      "dnnl_memory_create (reordered weights)"));
  void *buf = NULL;
  int rc = mxc__dnnl_check(dnnl_memory_get_data_handle(ref->mem, &buf), op,
                           "dnnl_memory_get_data_handle");
  if (rc == MXC_OK) rc = mxc__dnnl_reorder(op, plain, (void *)ptr, want, buf, 0);
  if (rc != MXC_OK) {
    dnnl_memory_destroy(ref->mem);
    ref->mem = NULL;
    return rc;
  }
  keep(ptr, version, want, dnnl_memory_desc_get_size(want), ref);
  return MXC_OK;
}

void mxc__dnnl_weights_put(mxc__dnnl_wref *ref) {
  if (!ref->mem) return;
  if (ref->slot < 0) {
    dnnl_memory_destroy(ref->mem);
  } else {
    pthread_mutex_lock(&g.mu);
    g.e[ref->slot].refs--;
    pthread_mutex_unlock(&g.mu);
  }
  ref->mem = NULL;
}

void mxc__dnnl_weights_stats(int *entries, int64_t *hits, int64_t *misses) {
  pthread_mutex_lock(&g.mu);
  int n = 0;
  for (int i = 0; i < SLOTS; ++i) n += g.e[i].ptr != NULL;
  *entries = n;
  *hits = g.hits;
  *misses = g.misses;
  pthread_mutex_unlock(&g.mu);
}
