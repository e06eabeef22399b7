/* The primitive cache (onednn.h): creating a oneDNN primitive compiles
 * (JIT) code for its shapes, far more than running it on small arrays,
 * so each kernel keys its primitive on everything that decides it (the
 * operator, direction, shapes, parameters, post-ops and thread count) and
 * reuses it.
 *
 * A fixed table of entries under one mutex, looked up by a 64-bit hash of
 * the key and then the key's bytes. Entries are reference counted: a get
 * holds its entry until put, so eviction (least recently used among the
 * idle entries, once the table is full) never destroys a primitive in
 * use; when every entry is busy the new primitive is handed out
 * uncached and destroyed at its put. Primitives themselves may execute
 * concurrently on several threads (oneDNN's contract). */
#include <pthread.h>
#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/base/alloc.h"
#include "core/base/error.h"

/* The table's size and default bound: a ResNet-50 has ~60 distinct
 * convolution shapes, forward and backward plus reorders ~250. */
#define SLOTS 512
#define DEFAULT_CAPACITY 512

struct mxc__dnnl_prim {
  dnnl_primitive_t prim;
  const_dnnl_primitive_desc_t pd;
  uint64_t hash;
  uint64_t last_use;
  int refs;   /* gets not yet put (under g.mu) */
  int cached; /* a slot of the table (else a heap entry of one call) */
  size_t n;
  unsigned char key[MXC__DNNL_KEY_MAX];
};

/* The table lives as long as the process (mxc__calloc_permanent, made at
 * the first miss): entries are reused in place, and the primitives
 * themselves are oneDNN's allocations, so a warm cache holds no blocks
 * of mxc's allocator (tests counting live blocks see no growth). */
static struct {
  pthread_mutex_t mu;
  mxc__dnnl_prim *slot; /* SLOTS entries; prim NULL: free */
  int entries, capacity;
  uint64_t clock;
  int64_t hits, misses;
} g = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, DEFAULT_CAPACITY, 0, 0, 0};

/* ---- keys ---- */

void mxc__dnnl_key_init(mxc__dnnl_key *k, const char *what) {
  k->n = 0;
  k->overflow = 0;
  mxc__dnnl_key_bytes(k, what, strlen(what) + 1);
}

void mxc__dnnl_key_bytes(mxc__dnnl_key *k, const void *p, size_t n) {
  if (k->overflow || n > sizeof k->b - k->n) {
    k->overflow = 1;
    return;
  }
  memcpy(k->b + k->n, p, n);
  k->n += n;
}

void mxc__dnnl_key_i64(mxc__dnnl_key *k, int64_t v) {
  mxc__dnnl_key_bytes(k, &v, sizeof v);
}

void mxc__dnnl_key_shape(mxc__dnnl_key *k, const mxc__shape *s) {
  mxc__dnnl_key_i64(k, s->ndim);
  for (int i = 0; i < s->ndim; ++i) mxc__dnnl_key_i64(k, s->dims[i]);
}

/* The fields of a memory description that decide a primitive: a plain
 * description is fully given by its dims and strides. */
void mxc__dnnl_key_md(mxc__dnnl_key *k, const dnnl_memory_desc_t *md) {
  mxc__dnnl_key_i64(k, md->ndims);
  mxc__dnnl_key_i64(k, md->data_type);
  mxc__dnnl_key_i64(k, md->format_kind);
  mxc__dnnl_key_bytes(k, md->dims, sizeof md->dims[0] * (size_t)md->ndims);
  if (md->format_kind == dnnl_blocked) {
    mxc__dnnl_key_bytes(k, &md->format_desc.blocking,
                        sizeof md->format_desc.blocking);
  }
  mxc__dnnl_key_bytes(k, md->padded_dims,
                      sizeof md->padded_dims[0] * (size_t)md->ndims);
  mxc__dnnl_key_bytes(k, &md->extra, sizeof md->extra);
}

static uint64_t hash_of(const unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* ---- entries ---- */

static void release_locked(mxc__dnnl_prim *p) {
  mxc__dnnl_prim_destroy(p->prim);
  p->prim = NULL;
  p->pd = NULL;
  g.entries--;
}

static int find_locked(const mxc__dnnl_key *k, uint64_t h) {
  for (int i = 0; g.slot && i < SLOTS; ++i) {
    mxc__dnnl_prim *p = &g.slot[i];
    if (p->prim && p->hash == h && p->n == k->n &&
        !memcmp(p->key, k->b, k->n)) {
      return i;
    }
  }
  return -1;
}

/* A free slot, evicting the least recently used idle entry when the
 * table holds `capacity` entries; -1 when all are busy (or the table
 * could not be made). */
static int free_slot_locked(void) {
  if (!g.slot) g.slot = mxc__calloc_permanent(SLOTS, sizeof *g.slot);
  if (!g.slot) return -1;
  int empty = -1, lru = -1;
  for (int i = 0; i < SLOTS; ++i) {
    mxc__dnnl_prim *p = &g.slot[i];
    if (!p->prim) {
      if (empty < 0) empty = i;
    } else if (p->refs == 0 &&
               (lru < 0 || p->last_use < g.slot[lru].last_use)) {
      lru = i;
    }
  }
  if (empty >= 0 && g.entries < g.capacity) return empty;
  if (lru < 0) return -1;
  release_locked(&g.slot[lru]);
  return lru;
}

static mxc__dnnl_prim *hold_locked(int i) {
  g.slot[i].refs++;
  g.slot[i].last_use = ++g.clock;
  return &g.slot[i];
}

/* Puts the fresh primitive in the table, or hands back the entry another
 * thread added for the same key meanwhile (prim is then destroyed), or,
 * with every slot busy, a heap entry for this call alone. */
static int insert(const mxc__dnnl_key *k, uint64_t h, dnnl_primitive_t prim,
                  const_dnnl_primitive_desc_t pd, mxc__dnnl_prim **out) {
  pthread_mutex_lock(&g.mu);
  int i = k->overflow ? -1 : find_locked(k, h);
  if (i >= 0) {
    *out = hold_locked(i);
    pthread_mutex_unlock(&g.mu);
    mxc__dnnl_prim_destroy(prim);
    return MXC_OK;
  }
  i = k->overflow ? -1 : free_slot_locked();
  mxc__dnnl_prim *p = i >= 0 ? &g.slot[i] : mxc__calloc(1, sizeof *p);
  if (p) {
    p->prim = prim;
    p->pd = pd;
    p->hash = h;
    p->refs = 1;
    p->cached = i >= 0;
    p->last_use = ++g.clock;
    p->n = k->n;
    memcpy(p->key, k->b, k->n);
    g.entries += i >= 0;
  }
  pthread_mutex_unlock(&g.mu);
  if (!p) {
    mxc__dnnl_prim_destroy(prim);
    return mxc__error_set(MXC_ERR_OOM,
                          "oneDNN backend: out of memory holding a primitive");
  }
  *out = p;
  return MXC_OK;
}

int mxc__dnnl_cache_get(const mxc__dnnl_key *k, mxc__dnnl_build_fn build,
                        void *arg, mxc__dnnl_prim **out) {
  uint64_t h = hash_of(k->b, k->n);
  pthread_mutex_lock(&g.mu);
  int i = k->overflow ? -1 : find_locked(k, h);
  if (i >= 0) {
    g.hits++;
    *out = hold_locked(i);
    pthread_mutex_unlock(&g.mu);
    return MXC_OK;
  }
  g.misses++;
  pthread_mutex_unlock(&g.mu);
  dnnl_primitive_t prim = NULL;
  const_dnnl_primitive_desc_t pd = NULL;
  int brc = build(arg, &prim);
  /* A primitive oneDNN will not make (unimplemented, or arguments it
   * rejects that the reference accepts, such as geometry beyond its
   * limits): the caller runs the reference kernel. */
  if (brc != MXC_OK) return brc == MXC_ERR_OOM ? brc : MXC_ERR_UNSUPPORTED;
  int rc = mxc__dnnl_check(dnnl_primitive_get_primitive_desc(prim, &pd), NULL,
                           "dnnl_primitive_get_primitive_desc");
  if (rc != MXC_OK) {
    mxc__dnnl_prim_destroy(prim);
    return rc;
  }
  return insert(k, h, prim, pd, out);
}

void mxc__dnnl_cache_put(mxc__dnnl_prim *p) {
  if (!p) return;
  pthread_mutex_lock(&g.mu);
  int gone = --p->refs == 0 && !p->cached;
  pthread_mutex_unlock(&g.mu);
  if (gone) {
    mxc__dnnl_prim_destroy(p->prim);
    mxc__free(p);
  }
}

dnnl_primitive_t mxc__dnnl_prim_get(const mxc__dnnl_prim *p) {
  return p->prim;
}

const_dnnl_primitive_desc_t mxc__dnnl_prim_pd(const mxc__dnnl_prim *p) {
  return p->pd;
}

void mxc__dnnl_cache_stats_get(mxc__dnnl_cache_stats *out) {
  pthread_mutex_lock(&g.mu);
  out->entries = g.entries;
  out->capacity = g.capacity;
  out->hits = g.hits;
  out->misses = g.misses;
  pthread_mutex_unlock(&g.mu);
}

void mxc__dnnl_cache_set_capacity(int capacity) {
  if (capacity < 1) capacity = 1;
  if (capacity > SLOTS) capacity = SLOTS;
  pthread_mutex_lock(&g.mu);
  g.capacity = capacity;
  for (int i = 0; g.slot && i < SLOTS && g.entries > capacity; ++i) {
    if (g.slot[i].prim && g.slot[i].refs == 0) release_locked(&g.slot[i]);
  }
  pthread_mutex_unlock(&g.mu);
}
