/* Data-parallel loops inside kernels: a small persistent pool of helper
 * threads that a kernel running on an engine worker (or any thread) can
 * borrow to split a loop.
 *
 * One loop at a time uses the pool. A second caller that finds it busy
 * (another kernel on another engine worker, or a nested call from inside
 * a loop body) runs its loop alone in its own thread instead of waiting:
 * no deadlock is possible and the machine is never oversubscribed by more
 * than the pool's helpers. Thread-safe; callable from any thread. */
#ifndef MXC_CORE_OP_PARALLEL_H_
#define MXC_CORE_OP_PARALLEL_H_

#include <stdint.h>

/* The size threshold of the element-wise, broadcast and reduction
 * kernels (ops/elemwise, ops/binary, ops/reduce, ops/fused, core/op/vmath):
 * loops over fewer elements than MXC__PAR_MIN_ELEMS stay on the calling
 * thread; longer ones are split into chunks of MXC__PAR_GRAIN_ELEMS.
 * Why these values: handing a loop to the pool wakes a sleeping helper
 * (a condition variable: a few microseconds before it runs, plus the
 * cache misses of touching the job), while these kernels stream memory
 * at roughly a nanosecond per element, so 64 Ki elements (256 KiB of
 * float32, about one L2 cache) are tens of microseconds of work: the
 * smallest size where the second core clearly pays for the hand-off. A
 * 16 Ki-element chunk (64 KiB of float32) is long enough to amortize
 * taking it (one atomic add) and leaves at least 4 chunks to balance. */
#define MXC__PAR_MIN_ELEMS ((int64_t)65536)
#define MXC__PAR_GRAIN_ELEMS ((int64_t)16384)

/* A loop body over [begin, end): MXC_OK or an error status with its
 * message set (mxc__error_set) in the calling thread. */
typedef int (*mxc__parallel_fn)(void *arg, int64_t begin, int64_t end);

/* Runs fn over [0, n) in chunks of `grain` indices (the last may be
 * shorter), on up to max_threads threads, the calling one included. Each
 * range starts at a multiple of grain; when one thread does everything,
 * fn gets the whole of [0, n) in one call. Chunks run in no particular order and concurrently, so fn must only
 * write what its own range owns. Returns when every chunk has finished:
 * MXC_OK, or the first failure's status with its message recorded in the
 * calling thread (chunks not yet started after a failure are skipped).
 * n <= 0 does nothing; grain < 1 counts as 1. */
int mxc__parallel_for(int64_t n, int64_t grain, int max_threads,
                      mxc__parallel_fn fn, void *arg);

/* The number of threads kernels should split large loops over: the
 * engine's CPU worker count (mxc_set_num_threads, MXC_NUM_THREADS,
 * default the number of online CPUs), at least 1. */
int mxc__parallel_threads(void);

/* Claims the pool for a library with threads of its own (oneDNN's
 * OpenMP team), so that the machine runs one thread budget: when the
 * pool is idle and want > 1, marks it busy and returns want, capped at
 * mxc__parallel_threads(); otherwise (pool busy, or want <= 1) returns 1
 * and claims nothing. A caller granted n > 1 runs its work on n threads
 * and then calls mxc__parallel_release(n); meanwhile other kernels'
 * loops run alone, as when a loop holds the pool. Thread-safe. */
int mxc__parallel_claim(int want);
/* Claims the whole pool, waiting while another caller holds it; returns
 * mxc__parallel_threads() (1: no pool, nothing claimed). For work that
 * must always run on the same number of threads and never beside another
 * such call (the oneDNN backend's primitives). Never call it from inside
 * a pool loop or while holding a claim: it would wait for itself. */
int mxc__parallel_claim_wait(void);

/* Ends a claim that returned granted (nothing to do for 1). */
void mxc__parallel_release(int granted);

#endif /* MXC_CORE_OP_PARALLEL_H_ */
