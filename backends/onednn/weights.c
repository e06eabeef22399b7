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
 * its byte bound. */
#include <pthread.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/alloc.h"
#include "core/base/error.h"

#define SLOTS 256
/* ResNet-50's weights are ~100 MB; a few networks' worth. */
#define DEFAULT_BYTES ((size_t)1 << 30)

typedef struct wentry {
  const void *ptr; /* the user's weights; NULL: free slot */
  uint64_t version;
  dnnl_memory_desc_t want;
  void *buf;
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

/* Empties slot i (idle); its buffer goes to *garbage (freed unlocked). */
static void drop_locked(int i, void **garbage) {
  *garbage = g.e[i].buf;
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

/* A slot for `bytes` more, evicting idle entries (their buffers freed
 * here, with the lock held: free does not call back into us); -1 when
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
    void *garbage;
    drop_locked(v, &garbage);
    mxc__free(garbage);
  }
}

/* A hit: the entry's buffer, held. */
static int lookup(const void *ptr, uint64_t version,
                  const dnnl_memory_desc_t *want, void **buf) {
  void *garbage = NULL;
  pthread_mutex_lock(&g.mu);
  int i = find_locked(ptr, want);
  if (i >= 0 && g.e[i].version == version) {
    g.e[i].refs++;
    g.e[i].last_use = ++g.clock;
    g.hits++;
    *buf = g.e[i].buf;
  } else {
    if (i >= 0 && g.e[i].refs == 0) drop_locked(i, &garbage); /* stale */
    g.misses++;
    i = -1;
  }
  pthread_mutex_unlock(&g.mu);
  mxc__free(garbage);
  return i;
}

int mxc__dnnl_weights_get(const mxc__op *op, const dnnl_memory_desc_t *plain,
                          const void *ptr, uint64_t version,
                          const dnnl_memory_desc_t *want, void **buf,
                          int *slot) {
  *slot = lookup(ptr, version, want, buf);
  if (*slot >= 0) return MXC_OK;
  size_t n = dnnl_memory_desc_get_size(want);
  *buf = mxc__aligned_alloc(64, n ? n : 64);
  MXC_RETURN_ERROR_IF(!*buf, MXC_ERR_OOM,
                      "operator '%s' (oneDNN backend): out of memory for "
                      "%zu bytes of reordered weights",
                      op->name, n);
  int rc = mxc__dnnl_reorder(op, plain, (void *)ptr, want, *buf, 0);
  if (rc != MXC_OK || n > g.cap) { /* n > cap: bigger than the cache */
    if (rc != MXC_OK) mxc__free(*buf);
    return rc;
  }
  pthread_mutex_lock(&g.mu);
  int i = find_locked(ptr, want) < 0 ? make_room_locked(n) : -1;
  if (i >= 0) {
    wentry e = {ptr, version, *want, *buf, n, 1, ++g.clock};
    g.e[i] = e;
    g.bytes += n;
    *slot = i;
  }
  pthread_mutex_unlock(&g.mu);
  return MXC_OK;
}

void mxc__dnnl_weights_put(void *buf, int slot) {
  if (slot < 0) {
    mxc__free(buf);
    return;
  }
  pthread_mutex_lock(&g.mu);
  g.e[slot].refs--;
  pthread_mutex_unlock(&g.mu);
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
