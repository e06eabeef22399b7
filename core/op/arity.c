#include "core/op/arity.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

/* Names are made a chunk at a time and never freed: callers keep them as
 * static strings. 16 bytes hold "arg" and any int (GCC checks the
 * format against the int range) with its NUL. */
#define NAME_BYTES 16
#define CHUNK 1024
#define N_CHUNKS (MXC__OP_MAX_ARITY / CHUNK)

typedef char name_chunk[CHUNK][NAME_BYTES];

static _Atomic(name_chunk *) g_chunks[N_CHUNKS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static name_chunk *make_chunk(int c) {
  pthread_mutex_lock(&g_mu);
  name_chunk *ch = atomic_load_explicit(&g_chunks[c], memory_order_relaxed);
  if (!ch) {
    /* Permanent: not counted as live by the leak checks of tests. */
    ch = mxc__calloc_permanent(1, sizeof *ch);
    for (int k = 0; ch && k < CHUNK; ++k) {
      snprintf((*ch)[k], NAME_BYTES, "arg%d", c * CHUNK + k);
    }
    if (ch) atomic_store_explicit(&g_chunks[c], ch, memory_order_release);
  }
  pthread_mutex_unlock(&g_mu);
  return ch;
}

const char *mxc__op_arg_name(int i) {
  if (i < 0 || i >= MXC__OP_MAX_ARITY) return "arg?";
  int c = i / CHUNK;
  name_chunk *ch = atomic_load_explicit(&g_chunks[c], memory_order_acquire);
  if (!ch) ch = make_chunk(c);
  return ch ? (*ch)[i % CHUNK] : "arg?";
}
