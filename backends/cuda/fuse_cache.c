/* The fused-kernel cache (fuse_cache.h): a list in recency order, which
 * is short (cap entries) and searched by hash before text. */
#include "backends/cuda/fuse_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"

enum { COMPILING, READY, FAILED };

struct mxc__fuse_entry {
  mxc__fuse_entry *prev, *next;
  uint64_t hash;
  int dev;
  int state;
  int refs;   /* lookups holding it (waiters included) */
  int linked; /* in the list (a failed one is taken out) */
  int rc;     /* FAILED: the compile function's code and reason */
  char why[512];
  void *value;
  char *text;
};

/* FNV-1a: a cheap filter before the text compare. */
static uint64_t hash_of(const char *s, int dev) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)dev;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void unlink_entry(mxc__fuse_cache *c, mxc__fuse_entry *e) {
  if (e->prev) e->prev->next = e->next;
  if (e->next) e->next->prev = e->prev;
  if (c->head == e) c->head = e->next;
  e->prev = e->next = NULL;
  e->linked = 0;
  --c->n;
}

static void push_front(mxc__fuse_cache *c, mxc__fuse_entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  e->linked = 1;
  ++c->n;
}

static void free_entry(mxc__fuse_cache *c, mxc__fuse_entry *e) {
  if (e->state == READY && c->free_value) c->free_value(c->ctx, e->value);
  free(e->text);
  free(e);
}

static mxc__fuse_entry *find(mxc__fuse_cache *c, const char *text, int dev,
                             uint64_t h) {
  for (mxc__fuse_entry *e = c->head; e; e = e->next) {
    if (e->hash == h && e->dev == dev && !strcmp(e->text, text)) return e;
  }
  return NULL;
}

/* Makes room for one more: drops the least recently used idle entry. */
static void evict(mxc__fuse_cache *c) {
  if (c->n < c->cap || !c->head) return;
  mxc__fuse_entry *last = c->head;
  while (last->next) last = last->next;
  for (mxc__fuse_entry *e = last; e; e = e->prev) {
    if (e->refs == 0 && e->state == READY) {
      unlink_entry(c, e);
      free_entry(c, e);
      return;
    }
  }
}

/* Waits for e (held) to be compiled by another thread; its result. */
static int wait_ready(mxc__fuse_cache *c, mxc__fuse_entry *e, char *why,
                      size_t len) {
  while (e->state == COMPILING) pthread_cond_wait(&c->cv, &c->mu);
  if (e->state == READY) return MXC_OK;
  snprintf(why, len, "%s", e->why);
  return e->rc;
}

/* Compiles e (held, COMPILING, in the list) with the lock released. */
static int compile_entry(mxc__fuse_cache *c, mxc__fuse_entry *e, char *why,
                         size_t len) {
  ++c->compiles;
  pthread_mutex_unlock(&c->mu);
  void *value = NULL;
  int rc = c->compile(c->ctx, e->text, e->dev, &value, e->why, sizeof e->why);
  pthread_mutex_lock(&c->mu);
  e->value = value;
  e->rc = rc;
  e->state = rc == MXC_OK ? READY : FAILED;
  if (rc != MXC_OK) {
    snprintf(why, len, "%s", e->why);
    unlink_entry(c, e); /* the next lookup tries again */
  }
  pthread_cond_broadcast(&c->cv);
  return rc;
}

static mxc__fuse_entry *new_entry(const char *text, int dev, uint64_t h) {
  mxc__fuse_entry *e = calloc(1, sizeof *e);
  size_t n = strlen(text) + 1;
  if (e) e->text = malloc(n);
  if (!e || !e->text) {
    free(e);
    return NULL;
  }
  memcpy(e->text, text, n);
  e->hash = h;
  e->dev = dev;
  e->state = COMPILING;
  e->refs = 1;
  return e;
}

int mxc__fuse_cache_get(mxc__fuse_cache *c, const char *text, int dev,
                        mxc__fuse_entry **entry, char *why, size_t why_len) {
  uint64_t h = hash_of(text, dev);
  *entry = NULL;
  pthread_mutex_lock(&c->mu);
  mxc__fuse_entry *e = find(c, text, dev, h);
  int rc;
  if (e) {
    ++e->refs;
    unlink_entry(c, e);
    push_front(c, e);
    rc = wait_ready(c, e, why, why_len);
  } else if ((e = new_entry(text, dev, h)) != NULL) {
    evict(c);
    push_front(c, e);
    rc = compile_entry(c, e, why, why_len);
  } else {
    snprintf(why, why_len, "out of memory for a fused kernel cache entry");
    rc = MXC_ERR_OOM;
  }
  pthread_mutex_unlock(&c->mu);
  if (rc == MXC_OK) {
    *entry = e;
  } else if (e) {
    mxc__fuse_cache_release(c, e);
  }
  return rc;
}

void *mxc__fuse_cache_value(const mxc__fuse_entry *e) { return e->value; }

void mxc__fuse_cache_release(mxc__fuse_cache *c, mxc__fuse_entry *e) {
  pthread_mutex_lock(&c->mu);
  int last = --e->refs == 0;
  /* A failed entry is out of the list: its last holder frees it; a kept
   * one past the bound (all were busy when it came) goes when idle. */
  if (last && !e->linked) {
    free_entry(c, e);
  } else if (last && c->n > c->cap) {
    evict(c);
  }
  pthread_mutex_unlock(&c->mu);
}

int mxc__fuse_cache_size(mxc__fuse_cache *c) {
  pthread_mutex_lock(&c->mu);
  int n = c->n;
  pthread_mutex_unlock(&c->mu);
  return n;
}

int64_t mxc__fuse_cache_compiles(mxc__fuse_cache *c) {
  pthread_mutex_lock(&c->mu);
  int64_t n = c->compiles;
  pthread_mutex_unlock(&c->mu);
  return n;
}

void mxc__fuse_cache_clear(mxc__fuse_cache *c) {
  pthread_mutex_lock(&c->mu);
  while (c->head) {
    mxc__fuse_entry *e = c->head;
    unlink_entry(c, e);
    free_entry(c, e);
  }
  pthread_mutex_unlock(&c->mu);
}
