/* Per-thread event buffers and their registry (see profiler.h).
 *
 * A buffer is a list of fixed blocks. Its thread (the only writer) fills
 * the tail block and publishes each event by bumping `count` with a
 * release store; a new block is linked (release) before the first event
 * in it is published. Readers hold g_mu, load `count` with acquire and
 * walk from `head`, so they see complete events only and never a slot
 * that moves. A reader frees a block only once every event in it is read
 * and its `next` is set: the writer has moved past it for good.
 *
 * A thread's buffer outlives the thread (its events are still to be
 * dumped): a key destructor marks it dead, and the first clear after
 * every event in it was read frees it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/profiler/profiler.h"

#define BLOCK_EVENTS 256

typedef struct block {
  struct block *_Atomic next;
  mxc__prof_event ev[BLOCK_EVENTS];
} block;

struct mxc__prof_buf {
  mxc__prof_buf *next_buf; /* the registry's list; under g_mu */
  int tid;                 /* the track id of the trace */
  char name[MXC__PROF_NAME_MAX]; /* under g_mu */
  atomic_int dead;               /* its thread exited */
  atomic_llong count;            /* events published */
  /* The writer's side. */
  block *tail;
  int tail_used;
  /* The readers' side, under g_mu. */
  block *head;
  long long head_first; /* index of head->ev[0] */
  long long read;       /* events before this one are read */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static mxc__prof_buf *g_bufs; /* newest first */
static int g_next_tid = 1;
static atomic_llong g_dropped;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static _Thread_local mxc__prof_buf *tls_buf;
static _Thread_local char tls_name[MXC__PROF_NAME_MAX];

static void on_thread_exit(void *arg) {
  mxc__prof_buf *b = arg;
  tls_buf = NULL; /* an event recorded after this registers anew */
  atomic_store_explicit(&b->dead, 1, memory_order_release);
}

static void make_key(void) {
  /* Without a key, buffers of exited threads are kept until exit: a
   * bounded leak, not a failure. */
  if (pthread_key_create(&g_key, on_thread_exit) != 0) g_key = 0;
}

static void copy_name(char *dst, const char *src) {
  size_t n = strnlen(src, MXC__PROF_NAME_MAX - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The track's default name: the process's first thread is "main". */
static void default_name(char *dst, int tid) {
  if ((pid_t)syscall(SYS_gettid) == getpid()) {
    copy_name(dst, "main thread");
  } else {
    char tmp[MXC__PROF_NAME_MAX];
    snprintf(tmp, sizeof tmp, "thread %d", tid);
    copy_name(dst, tmp);
  }
}

static mxc__prof_buf *buf_register(void) {
  pthread_once(&g_key_once, make_key);
  mxc__prof_buf *b = mxc__calloc(1, sizeof *b);
  block *first = mxc__malloc(sizeof *first);
  if (!b || !first) {
    mxc__free(b);
    mxc__free(first);
    return NULL;
  }
  atomic_init(&first->next, NULL);
  b->head = b->tail = first;
  pthread_mutex_lock(&g_mu);
  b->tid = g_next_tid++;
  if (tls_name[0]) {
    copy_name(b->name, tls_name);
  } else {
    default_name(b->name, b->tid);
  }
  b->next_buf = g_bufs;
  g_bufs = b;
  pthread_mutex_unlock(&g_mu);
  if (g_key) pthread_setspecific(g_key, b);
  tls_buf = b;
  return b;
}

static int drop(void) {
  atomic_fetch_add_explicit(&g_dropped, 1, memory_order_relaxed);
  return 0;
}

/* Room for one more event in b's tail block; 0 on OOM. */
static int reserve(mxc__prof_buf *b) {
  if (b->tail_used < BLOCK_EVENTS) return 1;
  block *nb = mxc__malloc(sizeof *nb);
  if (!nb) return 0;
  atomic_init(&nb->next, NULL);
  atomic_store_explicit(&b->tail->next, nb, memory_order_release);
  b->tail = nb;
  b->tail_used = 0;
  return 1;
}

int mxc__prof_record(const mxc__prof_event *ev) {
  mxc__prof_buf *b = tls_buf ? tls_buf : buf_register();
  if (!b || !reserve(b)) return drop();
  b->tail->ev[b->tail_used++] = *ev;
  long long n = atomic_load_explicit(&b->count, memory_order_relaxed);
  atomic_store_explicit(&b->count, n + 1, memory_order_release);
  return 1;
}

void mxc__prof_thread_name(const char *name) {
  copy_name(tls_name, name);
  if (tls_buf) {
    pthread_mutex_lock(&g_mu);
    copy_name(tls_buf->name, name);
    pthread_mutex_unlock(&g_mu);
  }
}

/* ---- readers ------------------------------------------------------------- */

/* Calls fn on b's unread events. Under g_mu. */
static void visit_buf(mxc__prof_buf *b, mxc__prof_visit_fn fn, void *ctx) {
  long long n = atomic_load_explicit(&b->count, memory_order_acquire);
  const block *blk = b->head;
  long long first = b->head_first;
  for (long long i = b->read; i < n; ++i) {
    while (i >= first + BLOCK_EVENTS) {
      blk = atomic_load_explicit(&blk->next, memory_order_acquire);
      first += BLOCK_EVENTS;
    }
    fn(ctx, b->tid, b->name, &blk->ev[i - first]);
  }
}

void mxc__prof_visit(mxc__prof_track_fn track, mxc__prof_visit_fn fn,
                     void *ctx) {
  pthread_mutex_lock(&g_mu);
  for (mxc__prof_buf *b = g_bufs; track && b; b = b->next_buf) {
    track(ctx, b->tid, b->name);
  }
  for (mxc__prof_buf *b = g_bufs; b; b = b->next_buf) visit_buf(b, fn, ctx);
  pthread_mutex_unlock(&g_mu);
}

/* Marks b read and frees the blocks its writer has left. Returns 1 when
 * b itself can go (its thread exited and nothing is left to read). */
static int clear_buf(mxc__prof_buf *b) {
  int dead = atomic_load_explicit(&b->dead, memory_order_acquire);
  b->read = atomic_load_explicit(&b->count, memory_order_acquire);
  for (;;) {
    block *next = atomic_load_explicit(&b->head->next, memory_order_acquire);
    if (!next || b->head_first + BLOCK_EVENTS > b->read) break;
    mxc__free(b->head);
    b->head = next;
    b->head_first += BLOCK_EVENTS;
  }
  return dead;
}

static void free_chain(block *blk) {
  while (blk) {
    block *next = atomic_load_explicit(&blk->next, memory_order_acquire);
    mxc__free(blk);
    blk = next;
  }
}

void mxc__prof_clear(void) {
  pthread_mutex_lock(&g_mu);
  mxc__prof_buf **link = &g_bufs;
  while (*link) {
    mxc__prof_buf *b = *link;
    if (clear_buf(b)) {
      *link = b->next_buf;
      free_chain(b->head);
      mxc__free(b);
    } else {
      link = &b->next_buf;
    }
  }
  atomic_store_explicit(&g_dropped, 0, memory_order_relaxed);
  pthread_mutex_unlock(&g_mu);
}

int64_t mxc__prof_dropped(void) {
  return atomic_load_explicit(&g_dropped, memory_order_relaxed);
}
