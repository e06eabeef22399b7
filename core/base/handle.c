#include "core/base/handle.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/error.h"

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
} slot;

static _Atomic(slot *) g_segs[MAX_SEGS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_free_head;  /* 1-based; 0 = empty; under g_lock */
static uint32_t g_used_slots; /* slots ever handed out; under g_lock */
static atomic_llong g_live;

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

int mxc__handle_new(int kind, void *obj, uintptr_t *out) {
  /* Kinds come from mxc's own code, never from the caller; kind 0 would
   * make the slot look free. */
  MXC__ASSERT(kind > MXC__HANDLE_NONE && kind < MXC__HANDLE_KIND_COUNT);
  pthread_mutex_lock(&g_lock);
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
    if (seg >= MAX_SEGS) {
      pthread_mutex_unlock(&g_lock);
      return mxc__error_set(MXC_ERR_OOM, "too many live handles");
    }
    if (atomic_load(&g_segs[seg]) == NULL) {
      slot *fresh = mxc__calloc_permanent(SEG_SLOTS, sizeof(slot));
      if (!fresh) {
        pthread_mutex_unlock(&g_lock);
        return mxc__error_set(MXC_ERR_OOM,
                              "out of memory growing the handle table");
      }
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
  pthread_mutex_unlock(&g_lock);
  atomic_fetch_add_explicit(&g_live, 1, memory_order_relaxed);
  *out = (uintptr_t)((gen & 0xffffffffu) << 32 | idx);
  return MXC_OK;
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
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_acquire);
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

int mxc__handle_get(uintptr_t h, int kind, const char *what, void **out) {
  slot *s;
  MXC_FORWARD_IF_ERROR(lookup(h, kind, what, &s));
  *out = atomic_load_explicit(&s->obj, memory_order_relaxed);
  return MXC_OK;
}

int mxc__handle_release(uintptr_t h, int kind, const char *what,
                        void **out_obj) {
  pthread_mutex_lock(&g_lock);
  slot *s;
  int rc = lookup(h, kind, what, &s);
  if (rc != MXC_OK) {
    pthread_mutex_unlock(&g_lock);
    return rc;
  }
  void *obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
  uint64_t gen = atomic_load(&s->tag) >> 8;
  atomic_store_explicit(&s->tag, gen << 8, memory_order_release);
  /* lookup found it live, so it cannot already be on the free list. */
  MXC__ASSERT(g_free_head != (uint32_t)((uint64_t)h & 0xffffffffu));
  s->next_free = g_free_head;
  g_free_head = (uint32_t)((uint64_t)h & 0xffffffffu);
  pthread_mutex_unlock(&g_lock);
  long long was = atomic_fetch_sub_explicit(&g_live, 1, memory_order_relaxed);
  MXC__ASSERT_MSG(was > 0, "more handles released than made");
  (void)was;
  *out_obj = obj;
  return MXC_OK;
}

int64_t mxc__handle_live(void) { return atomic_load(&g_live); }
