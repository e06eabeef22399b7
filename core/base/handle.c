#include "core/base/handle.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"
#include "core/base/handle_owner.h"

#define SEG_BITS 12
#define SEG_SLOTS (1u << SEG_BITS)
#define MAX_SEGS (1u << 16)

/* tag = generation << 8 | kind; kind 0 marks a free slot. A slot's
 * generation only grows, so a released handle never matches again (until
 * the 32-bit generation wraps). */
typedef struct slot {
  _Atomic uint64_t tag;
  _Atomic(void *) obj;
  uint32_t next_free; /* 1-based index of the next free slot; under g_lock */
  /* A freed handle's object waiting for open guards (mxc__handle_free):
   * the slot stays off the free list until its destructor ran, so that
   * deferring needs no allocation. */
  mxc__retire_node rn;
  mxc__handle_owner own; /* owned handles (zero otherwise); under g_lock */
} slot;

static _Atomic(slot *) g_segs[MAX_SEGS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_free_head;  /* 1-based; 0 = empty; under g_lock */
static uint32_t g_used_slots; /* slots ever handed out; under g_lock */
static atomic_llong g_live;
static atomic_llong g_live_bytes; /* the owned handles' bytes */
static _Thread_local const char *tls_site; /* the open public call */

static const char *const k_kind_names[MXC__HANDLE_KIND_COUNT] = {
    [MXC__HANDLE_NONE] = "(none)",
    [MXC__HANDLE_NDARRAY] = "mxc_ndarray",
    [MXC__HANDLE_NDARRAY_LIST] = "mxc_ndarray_list",
    [MXC__HANDLE_DATA_ITER] = "mxc_data_iter",
    [MXC__HANDLE_SYMBOL] = "mxc_symbol",
    [MXC__HANDLE_EXECUTOR] = "mxc_executor",
    [MXC__HANDLE_STR_LIST] = "mxc_str_list",
    [MXC__HANDLE_INFER] = "mxc_infer",
    [MXC__HANDLE_OPCTX] = "mxc_opctx",
    [MXC__HANDLE_PREDICTOR] = "mxc_predictor",
    [MXC__HANDLE_RECORDIO] = "mxc_recordio",
    [MXC__HANDLE_KVSTORE] = "mxc_kvstore",
    [MXC__HANDLE_SCOPE] = "mxc_scope",
    [MXC__HANDLE_BLOCK] = "mxc_block",
    [MXC__HANDLE_OPTIMIZER] = "mxc_optimizer",
    [MXC__HANDLE_FIT] = "mxc_fit",
};

_Static_assert(sizeof k_kind_names / sizeof k_kind_names[0] ==
                   MXC__HANDLE_KIND_COUNT,
               "every handle kind needs a name");

const char *mxc__handle_kind_name(int kind) {
  if (kind < 0 || kind >= MXC__HANDLE_KIND_COUNT || !k_kind_names[kind]) {
    return "(unknown)";
  }
  return k_kind_names[kind];
}

static slot *slot_at(uint32_t index1) {
  uint32_t i = index1 - 1;
  uint32_t seg = i >> SEG_BITS;
  if (index1 == 0 || seg >= MAX_SEGS) return NULL;
  slot *s = atomic_load_explicit(&g_segs[seg], memory_order_acquire);
  return s ? &s[i & (SEG_SLOTS - 1)] : NULL;
}

/* Under g_lock: a free slot holding obj as a live handle of kind;
 * *out = the handle. */
static int take_slot(int kind, void *obj, uintptr_t *out, slot **out_slot) {
  /* Kinds come from mxc's own code, never from the caller; kind 0 would
   * make the slot look free. */
  MXC__ASSERT(kind > MXC__HANDLE_NONE && kind < MXC__HANDLE_KIND_COUNT);
  uint32_t idx = g_free_head;
  slot *s;
  if (idx != 0) {
    s = slot_at(idx);
    /* The free list holds slots once made and now free. */
    MXC__ASSERT(s != NULL && idx <= g_used_slots);
    MXC__ASSERT_MSG((atomic_load(&s->tag) & 0xff) == 0,
                    "a live handle slot is on the free list");
    g_free_head = s->next_free;
  } else {
    uint32_t seg = g_used_slots >> SEG_BITS;
    MXC_RETURN_ERROR_IF(seg >= MAX_SEGS, MXC_ERR_OOM, "too many live handles");
    if (atomic_load(&g_segs[seg]) == NULL) {
      slot *fresh = mxc__calloc_permanent(SEG_SLOTS, sizeof(slot));
      MXC_RETURN_ERROR_IF(!fresh, MXC_ERR_OOM,
                          "out of memory growing the handle table");
      atomic_store_explicit(&g_segs[seg], fresh, memory_order_release);
    }
    idx = ++g_used_slots;
    s = slot_at(idx);
    MXC__ASSERT(s != NULL && atomic_load(&s->tag) == 0); /* never used */
  }
  uint64_t gen = (atomic_load(&s->tag) >> 8) + 1;
  if ((gen & 0xffffffffu) == 0) gen++; /* keep the encoded handle nonzero */
  atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
  atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                        memory_order_release);
  atomic_fetch_add_explicit(&g_live, 1, memory_order_relaxed);
  *out = (uintptr_t)((gen & 0xffffffffu) << 32 | idx);
  *out_slot = s;
  return MXC_OK;
}

int mxc__handle_new(int kind, void *obj, uintptr_t *out) {
  slot *s;
  pthread_mutex_lock(&g_lock);
  int rc = take_slot(kind, obj, out, &s);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int mxc__handle_new_owned(int kind, void *obj, void (*dtor)(void *),
                          int64_t bytes, uintptr_t *out) {
  MXC__ASSERT(dtor != NULL);
  mxc__scope *sc = mxc__scope_current();
  mxc__handle_owner own = {dtor, bytes, tls_site ? tls_site : "(unknown)",
                           mxc__scope_tag(), NULL, 0};
  slot *s;
  pthread_mutex_lock(&g_lock);
  /* Room in the scope first: once the handle exists nothing may fail. */
  int rc = mxc__scope_reserve(sc);
  if (rc == MXC_OK) rc = take_slot(kind, obj, out, &s);
  if (rc == MXC_OK) {
    s->own = own;
    mxc__scope_add(sc, *out, &s->own);
    atomic_fetch_add_explicit(&g_live_bytes, bytes, memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* The live slot of handle h, or NULL; sets no error. */
static slot *find_live(uintptr_t h) {
  uint64_t v = (uint64_t)h;
  slot *s = h ? slot_at((uint32_t)(v & 0xffffffffu)) : NULL;
  if (s == NULL) return NULL;
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_seq_cst);
  if ((uint32_t)(tag >> 8) != (uint32_t)(v >> 32) || (tag & 0xff) == 0) {
    return NULL;
  }
  return s;
}

void mxc__handle_lock(void) { pthread_mutex_lock(&g_lock); }
void mxc__handle_unlock(void) { pthread_mutex_unlock(&g_lock); }

mxc__handle_owner *mxc__handle_owner_of(uintptr_t h, int *out_kind) {
  slot *s = find_live(h);
  if (s == NULL || s->own.dtor == NULL) return NULL;
  *out_kind = (int)(atomic_load(&s->tag) & 0xff);
  return &s->own;
}

void mxc__handle_visit(mxc__handle_visit_fn fn, void *ud) {
  for (uint32_t idx = 1; idx <= g_used_slots; ++idx) {
    slot *s = slot_at(idx);
    uint64_t tag = atomic_load(&s->tag);
    if ((tag & 0xff) == 0 || s->own.dtor == NULL) continue;
    fn((uintptr_t)((tag >> 8 & 0xffffffffu) << 32 | idx), (int)(tag & 0xff),
       &s->own, ud);
  }
}

static int lookup(uintptr_t h, int kind, const char *what, slot **out) {
  MXC_RETURN_ERROR_IF(h == 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: handle is NULL; expected a live %s", what,
                      mxc__handle_kind_name(kind));
  uint64_t v = (uint64_t)h;
  slot *s = slot_at((uint32_t)(v & 0xffffffffu));
  MXC_RETURN_ERROR_IF(s == NULL, MXC_ERR_INVALID_HANDLE,
                      "%s: not a handle made by mxc; expected a live %s",
                      what, mxc__handle_kind_name(kind));
  /* seq_cst pairs with the guard's seq_cst store (see retire). */
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_seq_cst);
  uint32_t gen = (uint32_t)(v >> 32);
  int live_kind = (int)(tag & 0xff);
  MXC_RETURN_ERROR_IF((uint32_t)(tag >> 8) != gen || live_kind == 0,
                      MXC_ERR_INVALID_HANDLE,
                      "%s: handle was already freed (or is invalid); "
                      "expected a live %s",
                      what, mxc__handle_kind_name(kind));
  MXC_RETURN_ERROR_IF(live_kind != kind, MXC_ERR_INVALID_HANDLE,
                      "%s: handle is a %s; expected a %s", what,
                      mxc__handle_kind_name(live_kind),
                      mxc__handle_kind_name(kind));
  *out = s;
  return MXC_OK;
}

static _Thread_local int tls_depth; /* open guards of this thread */
static atomic_llong g_unguarded;

int mxc__handle_get(uintptr_t h, int kind, const char *what, void **out) {
  if (MXC__UNLIKELY(tls_depth == 0)) {
    atomic_fetch_add_explicit(&g_unguarded, 1, memory_order_relaxed);
  }
  slot *s;
  MXC_FORWARD_IF_ERROR(lookup(h, kind, what, &s));
  *out = atomic_load_explicit(&s->obj, memory_order_relaxed);
  return MXC_OK;
}

/* Under g_lock: invalidates live slot s, which leaves its scope. */
static void invalidate_slot(slot *s) {
  uint64_t gen = atomic_load(&s->tag) >> 8;
  /* seq_cst: pairs with the guards' pins (see mxc__handle_retire). */
  atomic_store_explicit(&s->tag, gen << 8, memory_order_seq_cst);
  long long was = atomic_fetch_sub_explicit(&g_live, 1, memory_order_relaxed);
  MXC__ASSERT_MSG(was > 0, "more handles released than made");
  (void)was;
  if (s->own.dtor != NULL) {
    mxc__scope_remove(&s->own);
    atomic_fetch_sub_explicit(&g_live_bytes, s->own.bytes,
                              memory_order_relaxed);
    s->own = (mxc__handle_owner){0};
  }
}

/* Under g_lock: invalidates live handle h; *out = its slot. */
static int invalidate(uintptr_t h, int kind, const char *what, slot **out) {
  slot *s;
  MXC_FORWARD_IF_ERROR(lookup(h, kind, what, &s));
  invalidate_slot(s);
  *out = s;
  return MXC_OK;
}

/* Under g_lock: puts the invalidated slot index1 on the free list. */
static void push_free(uint32_t index1) {
  slot *s = slot_at(index1);
  /* An invalidated slot is never on the free list already. */
  MXC__ASSERT(s != NULL && g_free_head != index1);
  s->next_free = g_free_head;
  g_free_head = index1;
}

int mxc__handle_release(uintptr_t h, int kind, const char *what,
                        void **out_obj) {
  pthread_mutex_lock(&g_lock);
  slot *s;
  int rc = invalidate(h, kind, what, &s);
  if (rc == MXC_OK) {
    /* Read before the slot goes back on the free list: once it is there
     * (and the lock is released) another thread's mxc__handle_new may
     * take it and store its own object. Reading after the unlock handed
     * a user block's caller another thread's new array, now and then
     * (bindings/go TestUserBlockFromManyGoroutines, 2026-11-29). */
    *out_obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
    push_free((uint32_t)((uint64_t)h & 0xffffffffu));
  }
  pthread_mutex_unlock(&g_lock);
  if (rc == MXC_OK && mxc__handle_release_hook) mxc__handle_release_hook();
  return rc;
}

void (*mxc__handle_release_hook)(void);

int64_t mxc__handle_live(void) { return atomic_load(&g_live); }

int64_t mxc__handle_live_bytes(void) { return atomic_load(&g_live_bytes); }

static void retire(mxc__retire_node *n, void *obj, void (*dtor)(void *),
                   uint32_t slot_index1);

int mxc__handle_free(uintptr_t h, int kind, const char *what,
                     void (*dtor)(void *)) {
  pthread_mutex_lock(&g_lock);
  slot *s;
  int rc = invalidate(h, kind, what, &s);
  pthread_mutex_unlock(&g_lock);
  MXC_FORWARD_IF_ERROR(rc);
  retire(&s->rn, atomic_load_explicit(&s->obj, memory_order_relaxed), dtor,
         (uint32_t)((uint64_t)h & 0xffffffffu));
  return MXC_OK;
}

int mxc__handle_drop(uintptr_t h) {
  pthread_mutex_lock(&g_lock);
  slot *s = find_live(h);
  void (*dtor)(void *) = s ? s->own.dtor : NULL;
  if (dtor != NULL) invalidate_slot(s);
  pthread_mutex_unlock(&g_lock);
  if (dtor == NULL) return 0;
  retire(&s->rn, atomic_load_explicit(&s->obj, memory_order_relaxed), dtor,
         (uint32_t)((uint64_t)h & 0xffffffffu));
  return 1;
}

int64_t mxc__handle_unguarded_gets(void) {
  return atomic_load_explicit(&g_unguarded, memory_order_relaxed);
}

/* ---- guards and deferred destruction ----------------------------------
 *
 * Each thread that opens a guard gets a record (kept for the process,
 * reused after the thread exits) whose `pin` is 0 while it is outside any
 * guard, else the global epoch read when its outermost guard opened.
 * Retiring an object bumps the epoch to E after the handle was
 * invalidated: a guard that opened at epoch >= E read the epoch after the
 * invalidation and so cannot find the handle; guards with pin < E may
 * hold the object. The Dekker pattern (guard: store pin, then load the
 * handle's tag; retire: store tag, then load every pin, all seq_cst)
 * makes sure that a retire that sees pin 0 is not missing a guard that
 * found the handle live. A pin read as 0 from a guard's release store
 * also orders that guard's reads before the destructor. */

typedef struct guard_rec {
  _Atomic uint64_t pin;
  atomic_int used;
  struct guard_rec *next; /* immutable once published */
} guard_rec;

static _Atomic(guard_rec *) g_recs;
static _Atomic uint64_t g_epoch = 1;
static atomic_llong g_anon; /* guards of threads without a record (OOM) */
static _Thread_local guard_rec *tls_rec;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static int g_key_ok;
static pthread_mutex_t g_retired_lock = PTHREAD_MUTEX_INITIALIZER;
static mxc__retire_node *g_retired; /* under g_retired_lock */
static atomic_llong g_n_retired;

static void rec_release(void *p) {
  guard_rec *r = p;
  atomic_store_explicit(&r->pin, 0, memory_order_release);
  atomic_store_explicit(&r->used, 0, memory_order_release);
}

static void make_key(void) {
  g_key_ok = pthread_key_create(&g_key, rec_release) == 0;
}

/* The calling thread's record: a free one reused, or a new one. NULL
 * only when out of memory. */
static guard_rec *rec_acquire(void) {
  pthread_once(&g_key_once, make_key);
  guard_rec *r = atomic_load_explicit(&g_recs, memory_order_acquire);
  for (; r != NULL; r = r->next) {
    int unused = 0;
    if (atomic_compare_exchange_strong(&r->used, &unused, 1)) break;
  }
  if (r == NULL) {
    r = mxc__calloc_permanent(1, sizeof *r);
    if (r == NULL) return NULL;
    atomic_store(&r->used, 1);
    guard_rec *head = atomic_load(&g_recs);
    do {
      r->next = head;
    } while (!atomic_compare_exchange_weak(&g_recs, &head, r));
  }
  /* The record goes back to the pool when the thread exits; without the
   * key it stays the thread's for good (harmless: pin 0 blocks nothing). */
  if (g_key_ok) (void)pthread_setspecific(g_key, r);
  tls_rec = r;
  return r;
}

void mxc__handle_guard_enter(void) {
  if (tls_depth++ > 0) return;
  guard_rec *r = tls_rec ? tls_rec : rec_acquire();
  if (MXC__UNLIKELY(r == NULL)) {
    atomic_fetch_add(&g_anon, 1); /* blocks every reclamation */
    return;
  }
  uint64_t e = atomic_load_explicit(&g_epoch, memory_order_acquire);
  atomic_store_explicit(&r->pin, e, memory_order_seq_cst);
}

const char *mxc__handle_guard_enter_at(const char *site) {
  const char *outer = tls_site;
  tls_site = site;
  mxc__handle_guard_enter();
  return outer;
}

void mxc__handle_guard_leave_to(const char *outer_site) {
  tls_site = outer_site;
  mxc__handle_guard_leave();
}

void mxc__handle_guard_leave(void) {
  MXC__ASSERT_MSG(tls_depth > 0, "handle guard left more often than entered");
  if (--tls_depth > 0) return;
  if (MXC__LIKELY(tls_rec != NULL)) {
    atomic_store_explicit(&tls_rec->pin, 0, memory_order_release);
  } else {
    atomic_fetch_sub(&g_anon, 1);
  }
  if (atomic_load_explicit(&g_n_retired, memory_order_relaxed) != 0) {
    mxc__handle_reclaim();
  }
}

/* The smallest pin of an open guard other than the calling thread's
 * outermost one (UINT64_MAX: none). The caller's own guard is skipped
 * when it is its only one: the caller is the thread retiring or
 * reclaiming and holds no object it retires. A nested guard (an API call
 * from a callback) may be inside a call that still uses the object. */
static uint64_t min_pin(void) {
  if (atomic_load_explicit(&g_anon, memory_order_seq_cst) != 0) return 0;
  uint64_t m = UINT64_MAX;
  /* depth 0: no pin of ours to skip (and at thread exit the record may
   * already be another thread's: scopes ended then free objects). */
  guard_rec *self = tls_depth == 1 ? tls_rec : NULL;
  for (guard_rec *r = atomic_load_explicit(&g_recs, memory_order_acquire);
       r != NULL; r = r->next) {
    if (r == self) continue;
    uint64_t p = atomic_load_explicit(&r->pin, memory_order_seq_cst);
    if (p != 0 && p < m) m = p;
  }
  return m;
}

/* Destroys n's object; a handle's slot then becomes reusable. */
static void destroy(mxc__retire_node *n) {
  uint32_t index1 = n->slot_index1;
  n->dtor(n->obj); /* may free n (a record holding its own node) */
  if (index1 != 0) {
    pthread_mutex_lock(&g_lock);
    push_free(index1);
    pthread_mutex_unlock(&g_lock);
  }
}

static void retire(mxc__retire_node *n, void *obj, void (*dtor)(void *),
                   uint32_t slot_index1) {
  n->obj = obj;
  n->dtor = dtor;
  n->slot_index1 = slot_index1;
  n->epoch = atomic_fetch_add_explicit(&g_epoch, 1, memory_order_seq_cst) + 1;
  if (min_pin() >= n->epoch) { /* no open guard can hold obj */
    destroy(n);
    return;
  }
  pthread_mutex_lock(&g_retired_lock);
  n->next = g_retired;
  g_retired = n;
  atomic_fetch_add_explicit(&g_n_retired, 1, memory_order_relaxed);
  pthread_mutex_unlock(&g_retired_lock);
}

void mxc__handle_retire(mxc__retire_node *node, void *obj,
                        void (*dtor)(void *)) {
  retire(node, obj, dtor, 0);
}

void mxc__handle_reclaim(void) {
  mxc__retire_node *ready = NULL;
  pthread_mutex_lock(&g_retired_lock);
  uint64_t m = min_pin();
  for (mxc__retire_node **p = &g_retired; *p != NULL;) {
    mxc__retire_node *n = *p;
    if (n->epoch <= m) {
      *p = n->next;
      n->next = ready;
      ready = n;
      atomic_fetch_sub_explicit(&g_n_retired, 1, memory_order_relaxed);
    } else {
      p = &n->next;
    }
  }
  pthread_mutex_unlock(&g_retired_lock);
  /* Outside the lock: a destructor may free (retire) more. */
  while (ready != NULL) {
    mxc__retire_node *n = ready;
    ready = n->next;
    destroy(n);
  }
}

int64_t mxc__handle_deferred(void) {
  return atomic_load_explicit(&g_n_retired, memory_order_relaxed);
}
