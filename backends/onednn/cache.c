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
#define SLOTS 1024
#define DEFAULT_CAPACITY 512

struct mxc__dnnl_prim {
  dnnl_primitive_t prim;
  const_dnnl_primitive_desc_t pd;
  uint64_t hash;
  uint64_t last_use;
  int refs;   /* gets not yet put (under g.mu) */
  int cached; /* in the table */
  size_t n;
  unsigned char *key;
};

static struct {
  pthread_mutex_t mu;
  mxc__dnnl_prim *slot[SLOTS];
  int entries, capacity;
  uint64_t clock;
  int64_t hits, misses;
} g = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0, DEFAULT_CAPACITY, 0, 0, 0};

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

static void prim_free(mxc__dnnl_prim *p) {
  if (p->prim) dnnl_primitive_destroy(p->prim);
  mxc__free(p->key);
  mxc__free(p);
}

static int find_locked(const mxc__dnnl_key *k, uint64_t h) {
  for (int i = 0; i < SLOTS; ++i) {
    mxc__dnnl_prim *p = g.slot[i];
    if (p && p->hash == h && p->n == k->n && !memcmp(p->key, k->b, k->n)) {
      return i;
    }
  }
  return -1;
}

/* A free slot, evicting the least recently used idle entry when the
 * table holds `capacity` entries; -1 when all are busy. */
static int free_slot_locked(void) {
  int empty = -1, lru = -1;
  for (int i = 0; i < SLOTS; ++i) {
    mxc__dnnl_prim *p = g.slot[i];
    if (!p) {
      if (empty < 0) empty = i;
    } else if (p->refs == 0 &&
               (lru < 0 || p->last_use < g.slot[lru]->last_use)) {
      lru = i;
    }
  }
  if (empty >= 0 && g.entries < g.capacity) return empty;
  if (lru < 0) return -1;
  prim_free(g.slot[lru]);
  g.slot[lru] = NULL;
  g.entries--;
  return lru;
}

static int build_entry(const mxc__dnnl_key *k, uint64_t h,
                       mxc__dnnl_build_fn build, void *arg,
                       mxc__dnnl_prim **out) {
  mxc__dnnl_prim *p = mxc__calloc(1, sizeof *p);
  unsigned char *key = mxc__malloc(k->n ? k->n : 1);
  if (!p || !key) {
    mxc__free(p);
    mxc__free(key);
    return mxc__error_set(MXC_ERR_OOM,
                          "oneDNN backend: out of memory caching a primitive");
  }
  memcpy(key, k->b, k->n);
  p->key = key;
  p->n = k->n;
  p->hash = h;
  p->refs = 1;
  int rc = build(arg, &p->prim);
  if (rc == MXC_OK) {
    rc = mxc__dnnl_check(dnnl_primitive_get_primitive_desc(p->prim, &p->pd),
                         NULL, "dnnl_primitive_get_primitive_desc");
  }
  if (rc != MXC_OK) {
    prim_free(p);
    return rc;
  }
  *out = p;
  return MXC_OK;
}

/* Puts a fresh entry p in the table, or hands back one another thread
 * added for the same key meanwhile (p is then freed). */
static mxc__dnnl_prim *insert_locked(mxc__dnnl_prim *p,
                                     const mxc__dnnl_key *k) {
  int i = find_locked(k, p->hash);
  if (i >= 0) {
    prim_free(p);
    g.slot[i]->refs++;
    g.slot[i]->last_use = ++g.clock;
    return g.slot[i];
  }
  i = free_slot_locked();
  if (i >= 0) {
    p->cached = 1;
    p->last_use = ++g.clock;
    g.slot[i] = p;
    g.entries++;
  }
  return p;
}

int mxc__dnnl_cache_get(const mxc__dnnl_key *k, mxc__dnnl_build_fn build,
                        void *arg, mxc__dnnl_prim **out) {
  uint64_t h = hash_of(k->b, k->n);
  if (!k->overflow) {
    pthread_mutex_lock(&g.mu);
    int i = find_locked(k, h);
    if (i >= 0) {
      g.slot[i]->refs++;
      g.slot[i]->last_use = ++g.clock;
      g.hits++;
      *out = g.slot[i];
      pthread_mutex_unlock(&g.mu);
      return MXC_OK;
    }
    g.misses++;
    pthread_mutex_unlock(&g.mu);
  }
  mxc__dnnl_prim *p = NULL;
  MXC_FORWARD_IF_ERROR(build_entry(k, h, build, arg, &p));
  if (!k->overflow) {
    pthread_mutex_lock(&g.mu);
    p = insert_locked(p, k);
    pthread_mutex_unlock(&g.mu);
  }
  *out = p;
  return MXC_OK;
}

void mxc__dnnl_cache_put(mxc__dnnl_prim *p) {
  if (!p) return;
  pthread_mutex_lock(&g.mu);
  int gone = --p->refs == 0 && !p->cached;
  pthread_mutex_unlock(&g.mu);
  if (gone) prim_free(p);
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
  for (int i = 0; i < SLOTS && g.entries > capacity; ++i) {
    mxc__dnnl_prim *p = g.slot[i];
    if (p && p->refs == 0) {
      prim_free(p);
      g.slot[i] = NULL;
      g.entries--;
    }
  }
  pthread_mutex_unlock(&g.mu);
}
