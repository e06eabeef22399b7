/* Memory scopes (scope.h) and the handle debugging that names where
 * leaked handles were made. A scope's list and counters change under the
 * handle table's lock (handle_owner.h): its own thread adds and moves
 * handles, any thread may free one of them or read the counters. */
#include "core/base/scope.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/base/handle_owner.h"
#include "core/base/strbuf.h"

struct mxc__scope {
  uintptr_t *hs;       /* handles registered, in order; 0: left the scope */
  uint32_t n, cap;     /* entries used / allocated */
  int64_t live, bytes; /* handles registered now and their bytes */
  mxc__scope *parent;  /* the enclosing scope of the same thread */
  const void *thread;  /* the owning thread (the address of its tls_top) */
  int depth;           /* 1 for an outermost scope */
  uintptr_t self;      /* the scope's own handle */
};

static _Thread_local mxc__scope *tls_top; /* innermost open scope */
static _Thread_local const char *tls_tag; /* interned caller tag */

mxc__scope *mxc__scope_current(void) { return tls_top; }

static int is_mine(const mxc__scope *s) {
  return s->thread == (const void *)&tls_top;
}

/* ---- the list of a scope (under the table lock) ---- */

/* Drops the entries of handles that left s (freed or moved out). */
static void compact(mxc__scope *s) {
  uint32_t j = 0;
  for (uint32_t i = 0; i < s->n; ++i) {
    int kind;
    mxc__handle_owner *o =
        s->hs[i] ? mxc__handle_owner_of(s->hs[i], &kind) : NULL;
    if (o == NULL || o->scope != s) continue;
    o->pos = j;
    s->hs[j++] = s->hs[i];
  }
  s->n = j;
}

int mxc__scope_reserve(mxc__scope *s) {
  if (s == NULL || s->n < s->cap) return MXC_OK;
  /* Handles freed by hand leave holes: reuse them before growing, so a
   * loop that frees what it makes keeps its scope small. */
  if (s->live <= (int64_t)(s->n / 2)) compact(s);
  if (s->n < s->cap) return MXC_OK;
  MXC_RETURN_ERROR_IF(s->cap >= (1u << 30), MXC_ERR_OOM,
                      "too many handles in one scope (%u)", s->cap);
  uint32_t cap = s->cap ? s->cap * 2 : 64;
  uintptr_t *hs = mxc__realloc(s->hs, cap * sizeof *hs);
  MXC_RETURN_ERROR_IF(hs == NULL, MXC_ERR_OOM,
                      "out of memory registering a handle in its scope");
  s->hs = hs;
  s->cap = cap;
  return MXC_OK;
}

void mxc__scope_add(mxc__scope *s, uintptr_t h, mxc__handle_owner *o) {
  o->scope = s;
  if (s == NULL) return;
  o->pos = s->n;
  s->hs[s->n++] = h;
  s->live++;
  s->bytes += o->bytes;
}

void mxc__scope_remove(mxc__handle_owner *o) {
  mxc__scope *s = o->scope;
  if (s == NULL) return;
  s->hs[o->pos] = 0;
  s->live--;
  s->bytes -= o->bytes;
  o->scope = NULL;
}

/* ---- begin and end ---- */

static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_exit_key;
static int g_exit_key_ok;

static void end_top(void);

/* A thread that exits with scopes open has them ended: their handles
 * would otherwise be owned by no one. */
static void end_at_exit(void *unused) {
  (void)unused;
  while (tls_top != NULL) end_top();
}

static void make_exit_key(void) {
  g_exit_key_ok = pthread_key_create(&g_exit_key, end_at_exit) == 0;
}

static void watch_thread_exit(void) {
  pthread_once(&g_exit_once, make_exit_key);
  if (g_exit_key_ok) (void)pthread_setspecific(g_exit_key, &tls_top);
}

int mxc__scope_begin(uintptr_t *out) {
  mxc__scope *s = mxc__calloc(1, sizeof *s);
  MXC_RETURN_ERROR_IF(s == NULL, MXC_ERR_OOM, "out of memory opening a scope");
  s->parent = tls_top; /* all set before the handle publishes s */
  s->thread = &tls_top;
  s->depth = tls_top ? tls_top->depth + 1 : 1;
  int rc = mxc__handle_new(MXC__HANDLE_SCOPE, s, &s->self);
  if (rc != MXC_OK) {
    mxc__free(s);
    return rc;
  }
  watch_thread_exit();
  tls_top = s;
  *out = s->self;
  return MXC_OK;
}

/* Takes the last entry off s's list: a handle to free, or 0 when the
 * list is empty. */
static uintptr_t pop_entry(mxc__scope *s) {
  uintptr_t h = 0;
  mxc__handle_lock();
  while (h == 0 && s->n > 0) h = s->hs[--s->n];
  mxc__handle_unlock();
  return h;
}

static void scope_dtor(void *p) {
  mxc__scope *s = p;
  mxc__free(s->hs);
  mxc__free(s);
}

/* Ends the calling thread's innermost scope. Handles are freed newest
 * first, outside the lock (a destructor may free more handles). One
 * freed meanwhile by another thread is skipped by mxc__handle_drop. */
static void end_top(void) {
  mxc__scope *s = tls_top;
  for (uintptr_t h; (h = pop_entry(s)) != 0;) (void)mxc__handle_drop(h);
  tls_top = s->parent;
  (void)mxc__handle_free(s->self, MXC__HANDLE_SCOPE, "scope", scope_dtor);
}

int mxc__scope_end(uintptr_t h, const char *what) {
  void *p;
  MXC_FORWARD_IF_ERROR(mxc__handle_get(h, MXC__HANDLE_SCOPE, what, &p));
  mxc__scope *s = p;
  MXC_RETURN_ERROR_IF(!is_mine(s), MXC_ERR_INVALID_ARGUMENT,
                      "%s: the scope was begun on another thread; scopes "
                      "belong to their thread: end it there",
                      what);
  MXC_RETURN_ERROR_IF(s != tls_top, MXC_ERR_INVALID_ARGUMENT,
                      "%s: not the innermost open scope of this thread "
                      "(depth %d of %d); end the scopes begun inside it first",
                      what, s->depth, tls_top->depth);
  end_top();
  return MXC_OK;
}

/* ---- moving handles out ---- */

/* Under the lock: moves h from its scope to the enclosing one (or none). */
static int move_out(uintptr_t h, int detach, const char *what) {
  int kind;
  mxc__handle_owner *o = mxc__handle_owner_of(h, &kind);
  MXC_RETURN_ERROR_IF(o == NULL, MXC_ERR_INVALID_HANDLE,
                      "%s: handle was already freed (or is invalid); "
                      "expected a live handle returned by mxc",
                      what);
  mxc__scope *from = o->scope;
  if (from == NULL) return MXC_OK;
  MXC_RETURN_ERROR_IF(!is_mine(from), MXC_ERR_INVALID_ARGUMENT,
                      "%s: the handle is in a scope of another thread; "
                      "move it out on that thread",
                      what);
  mxc__scope *to = detach ? NULL : from->parent;
  MXC_FORWARD_IF_ERROR(mxc__scope_reserve(to));
  mxc__scope_remove(o);
  mxc__scope_add(to, h, o);
  return MXC_OK;
}

int mxc__scope_keep(uintptr_t h, int detach, const char *what) {
  MXC_RETURN_ERROR_IF(h == 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: handle is NULL; expected a live handle", what);
  mxc__handle_lock();
  int rc = move_out(h, detach, what);
  mxc__handle_unlock();
  return rc;
}

int mxc__scope_of(uintptr_t h, const char *what, uintptr_t *out) {
  MXC_RETURN_ERROR_IF(h == 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: handle is NULL; expected a live handle", what);
  int kind;
  mxc__handle_lock();
  mxc__handle_owner *o = mxc__handle_owner_of(h, &kind);
  uintptr_t s = o != NULL && o->scope != NULL ? o->scope->self : 0;
  mxc__handle_unlock();
  MXC_RETURN_ERROR_IF(o == NULL, MXC_ERR_INVALID_HANDLE,
                      "%s: handle was already freed (or is invalid); "
                      "expected a live handle returned by mxc",
                      what);
  *out = s;
  return MXC_OK;
}

/* ---- statistics and the dump ---- */

int mxc__scope_stats(uintptr_t h, const char *what, int64_t *out_handles,
                     int64_t *out_bytes) {
  if (h == 0) {
    *out_handles = mxc__handle_live();
    *out_bytes = mxc__handle_live_bytes();
    return MXC_OK;
  }
  void *p;
  MXC_FORWARD_IF_ERROR(mxc__handle_get(h, MXC__HANDLE_SCOPE, what, &p));
  mxc__scope *s = p;
  mxc__handle_lock();
  *out_handles = s->live;
  *out_bytes = s->bytes;
  mxc__handle_unlock();
  return MXC_OK;
}

typedef struct dump_ctx {
  const mxc__scope *only; /* NULL: every owned handle */
  mxc__sbuf *b;
} dump_ctx;

static void dump_one(uintptr_t h, int kind, const mxc__handle_owner *o,
                     void *ud) {
  dump_ctx *c = ud;
  if (c->only != NULL && o->scope != c->only) return;
  mxc__sbuf_printf(c->b, "%s 0x%llx: %lld bytes, made by %s",
                   mxc__handle_kind_name(kind), (unsigned long long)h,
                   (long long)o->bytes, o->site);
  if (o->tag != NULL) mxc__sbuf_printf(c->b, " at %s", o->tag);
  if (o->scope != NULL) {
    mxc__sbuf_printf(c->b, ", in a scope of depth %d\n", o->scope->depth);
  } else {
    mxc__sbuf_add(c->b, ", in no scope\n");
  }
}

int mxc__scope_dump(uintptr_t h, const char *what, char **out) {
  dump_ctx c = {NULL, NULL};
  if (h != 0) {
    void *p;
    MXC_FORWARD_IF_ERROR(mxc__handle_get(h, MXC__HANDLE_SCOPE, what, &p));
    c.only = p;
  }
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  c.b = &b;
  mxc__handle_lock();
  mxc__handle_visit(dump_one, &c);
  mxc__handle_unlock();
  mxc__sbuf_add(&b, ""); /* an empty dump is "", not NULL */
  return mxc__sbuf_finish(&b, what, out);
}

/* ---- handle debugging: caller tags ---- */

#define TAG_MAX_LEN 511
#define TAG_SLOTS 8192 /* open addressing, at most half full */

static atomic_int g_debug = -1; /* -1: not read from the environment yet */
static pthread_mutex_t g_tag_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *g_tags[TAG_SLOTS]; /* under g_tag_lock */
static int g_n_tags;                  /* under g_tag_lock */

void mxc__handle_debug_set(int on) { atomic_store(&g_debug, on ? 1 : 0); }

int mxc__handle_debug_enabled(void) {
  int v = atomic_load_explicit(&g_debug, memory_order_relaxed);
  if (MXC__LIKELY(v >= 0)) return v;
  const char *env = getenv("MXC_DEBUG_HANDLES");
  int want = env != NULL && strcmp(env, "1") == 0;
  (void)atomic_compare_exchange_strong(&g_debug, &v, want);
  return atomic_load(&g_debug);
}

const char *mxc__scope_tag(void) {
  return tls_tag != NULL && mxc__handle_debug_enabled() ? tls_tag : NULL;
}

static uint32_t tag_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* Under g_tag_lock: the one stored copy of tag's first n bytes (tags are
 * kept for the process: handles point at them), or NULL when the table is
 * full or memory is out. */
static const char *intern_locked(const char *tag, size_t n) {
  uint32_t i = tag_hash(tag, n) & (TAG_SLOTS - 1);
  for (; g_tags[i] != NULL; i = (i + 1) & (TAG_SLOTS - 1)) {
    if (strncmp(g_tags[i], tag, n) == 0 && g_tags[i][n] == '\0') {
      return g_tags[i];
    }
  }
  if (g_n_tags >= TAG_SLOTS / 2) return NULL;
  char *copy = mxc__calloc_permanent(n + 1, 1);
  if (copy == NULL) return NULL;
  memcpy(copy, tag, n);
  g_tags[i] = copy;
  g_n_tags++;
  return copy;
}

/* *out = the stored copy of tag (NULL for NULL); fn names the caller. */
static int intern(const char *tag, const char *fn, const char **out) {
  if (tag == NULL) {
    *out = NULL;
    return MXC_OK;
  }
  size_t n = strnlen(tag, TAG_MAX_LEN);
  pthread_mutex_lock(&g_tag_lock);
  const char *t = intern_locked(tag, n);
  pthread_mutex_unlock(&g_tag_lock);
  MXC_RETURN_ERROR_IF(t == NULL, MXC_ERR_OOM,
                      "%s: %d distinct tags are kept at most; tags should "
                      "name code locations, not values",
                      fn, TAG_SLOTS / 2);
  *out = t;
  return MXC_OK;
}

int mxc__handle_tag_set(const char *tag) {
  return intern(tag, "mxc_handle_tag_set", &tls_tag);
}

int mxc__handle_tag(uintptr_t h, const char *tag, const char *what) {
  MXC_RETURN_ERROR_IF(h == 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: handle is NULL; expected a live handle", what);
  const char *t;
  MXC_FORWARD_IF_ERROR(intern(tag, what, &t));
  int kind;
  mxc__handle_lock();
  mxc__handle_owner *o = mxc__handle_owner_of(h, &kind);
  if (o != NULL) o->tag = t;
  mxc__handle_unlock();
  MXC_RETURN_ERROR_IF(o == NULL, MXC_ERR_INVALID_HANDLE,
                      "%s: handle was already freed (or is invalid); "
                      "expected a live handle returned by mxc",
                      what);
  return MXC_OK;
}
