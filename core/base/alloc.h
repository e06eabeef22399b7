/* The one heap allocator of mxc.
 *
 * No mxc code calls malloc/free directly: everything goes through these
 * functions, so that tests can (a) count live blocks to prove that nothing
 * leaks, and (b) make the N-th allocation fail to walk every error path,
 * in the spirit of SQLite's faultsim. */
#ifndef MXC_CORE_BASE_ALLOC_H_
#define MXC_CORE_BASE_ALLOC_H_

#include <stddef.h>
#include <stdint.h>

void *mxc__malloc(size_t n);
void *mxc__calloc(size_t count, size_t size);
/* realloc(NULL, n) allocates; n must be > 0. On failure p is untouched. */
void *mxc__realloc(void *p, size_t n);
/* align: a power of two >= sizeof(void *). Free with mxc__free. */
void *mxc__aligned_alloc(size_t align, size_t n);
void mxc__free(void *p);
/* For tables that live as long as the process (never freed): subject to
 * fault injection but not counted in mxc__alloc_live. */
void *mxc__calloc_permanent(size_t count, size_t size);
/* Copy of a NUL-terminated string, or NULL on OOM. */
char *mxc__strdup(const char *s);

/* ---- for tests ---- */

/* Arms allocation fault injection: the n-th allocation attempt from now
 * (n >= 1) fails, and with `persist` every one after it too. n <= 0
 * disarms. */
void mxc__fault_alloc_arm(int64_t n, int persist);
/* 1 when an injected allocation failure has happened since arming. */
int mxc__fault_alloc_fired(void);
/* Allocation attempts since process start. */
int64_t mxc__alloc_attempts(void);
/* Blocks allocated and not yet freed. */
int64_t mxc__alloc_live(void);

#endif /* MXC_CORE_BASE_ALLOC_H_ */
