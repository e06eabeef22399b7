#include "core/base/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_llong g_attempts;
static atomic_llong g_live;
/* Countdown to the injected failure; 0 = disarmed. */
static atomic_llong g_fault_countdown;
static atomic_int g_fault_persist;
static atomic_int g_fault_fired;

/* Returns 1 when this allocation attempt must fail. */
static int fault_step(void) {
  atomic_fetch_add_explicit(&g_attempts, 1, memory_order_relaxed);
  if (atomic_load_explicit(&g_fault_countdown, memory_order_relaxed) == 0) {
    return 0;
  }
  long long left =
      atomic_fetch_sub_explicit(&g_fault_countdown, 1, memory_order_relaxed) - 1;
  if (left == 0) {
    if (atomic_load_explicit(&g_fault_persist, memory_order_relaxed)) {
      atomic_store(&g_fault_countdown, 1); /* keeps failing */
    }
    atomic_store(&g_fault_fired, 1);
    return 1;
  }
  if (left < 0) { /* raced past zero: disarmed concurrently */
    atomic_store(&g_fault_countdown, 0);
  }
  return 0;
}

static void *count_live(void *p) {
  if (p) atomic_fetch_add_explicit(&g_live, 1, memory_order_relaxed);
  return p;
}

void *mxc__malloc(size_t n) {
  if (fault_step()) return NULL;
  return count_live(malloc(n ? n : 1));
}

void *mxc__calloc(size_t count, size_t size) {
  if (fault_step()) return NULL;
  if (count == 0 || size == 0) count = size = 1;
  return count_live(calloc(count, size));
}

void *mxc__calloc_permanent(size_t count, size_t size) {
  if (fault_step()) return NULL;
  if (count == 0 || size == 0) count = size = 1;
  return calloc(count, size);
}

void *mxc__realloc(void *p, size_t n) {
  if (p == NULL) return mxc__malloc(n);
  if (fault_step()) return NULL;
  return realloc(p, n ? n : 1); /* live count unchanged */
}

void *mxc__aligned_alloc(size_t align, size_t n) {
  if (fault_step()) return NULL;
  void *p = NULL;
  if (posix_memalign(&p, align, n ? n : 1) != 0) return NULL;
  return count_live(p);
}

void mxc__free(void *p) {
  if (p == NULL) return;
  atomic_fetch_sub_explicit(&g_live, 1, memory_order_relaxed);
  free(p);
}

char *mxc__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = mxc__malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void mxc__fault_alloc_arm(int64_t n, int persist) {
  atomic_store(&g_fault_fired, 0);
  atomic_store(&g_fault_persist, persist ? 1 : 0);
  atomic_store(&g_fault_countdown, n > 0 ? (long long)n : 0);
}

int mxc__fault_alloc_fired(void) { return atomic_load(&g_fault_fired); }
int64_t mxc__alloc_attempts(void) { return atomic_load(&g_attempts); }
int64_t mxc__alloc_live(void) { return atomic_load(&g_live); }
