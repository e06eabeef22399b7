/* The cache of run-time fused kernels: (program text, device) -> what
 * compiling it made (for the plug-in, a loaded CUDA library and its
 * kernel), so that each program is compiled once per device.
 *
 * Bounded: at most `cap` entries are kept; a new one evicts the least
 * recently used entry that no call is using (a call holds its entry from
 * lookup to release, i.e. while its kernel runs). While every entry is in
 * use the cache grows past cap by those (at most one per calling thread).
 *
 * One compilation per key: a thread that finds the key being compiled by
 * another waits for it and shares the result; a failed compilation is not
 * kept (the next lookup tries again) but its waiters get its reason.
 *
 * Generic and plain C (no CUDA): the plug-in gives the compile and free
 * functions, the host tests count compilations with their own.
 *
 * Thread-safety: every function may be called from any thread at once,
 * except that mxc__fuse_cache_clear must not run while a lookup holds an
 * entry. */
#ifndef MXC_BACKENDS_CUDA_FUSE_CACHE_H_
#define MXC_BACKENDS_CUDA_FUSE_CACHE_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the value of (text, dev): MXC_OK and *value, or an MXC_ERR_* code
 * with the reason in why (why_len bytes). */
typedef int (*mxc__fuse_compile_fn)(void *ctx, const char *text, int dev,
                                    void **value, char *why, size_t why_len);
/* Releases a value the compile function made. */
typedef void (*mxc__fuse_free_fn)(void *ctx, void *value);

typedef struct mxc__fuse_entry mxc__fuse_entry;

typedef struct mxc__fuse_cache {
  /* Set by the owner before first use. */
  mxc__fuse_compile_fn compile;
  mxc__fuse_free_fn free_value;
  void *ctx;
  int cap;
  /* State: zero, but mu and cv (PTHREAD_*_INITIALIZER). */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  mxc__fuse_entry *head; /* most recently used first */
  int n;
  int64_t compiles; /* compile calls made, for tests and statistics */
} mxc__fuse_cache;

/* The value of (text, dev), compiled on a miss: MXC_OK with *entry held
 * (mxc__fuse_cache_value reads it; mxc__fuse_cache_release lets it go),
 * or the compile function's error and reason (nothing held). */
int mxc__fuse_cache_get(mxc__fuse_cache *c, const char *text, int dev,
                        mxc__fuse_entry **entry, char *why, size_t why_len);

void *mxc__fuse_cache_value(const mxc__fuse_entry *e);

void mxc__fuse_cache_release(mxc__fuse_cache *c, mxc__fuse_entry *e);

/* Entries kept now, and compile calls made so far. */
int mxc__fuse_cache_size(mxc__fuse_cache *c);
int64_t mxc__fuse_cache_compiles(mxc__fuse_cache *c);

/* Frees every entry (their values through free_value). */
void mxc__fuse_cache_clear(mxc__fuse_cache *c);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_FUSE_CACHE_H_ */
