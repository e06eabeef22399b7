/* Counter-based random numbers (Philox4x32-10).
 *
 * Random operators never carry generator state into their kernels. At push
 * time (in the pushing thread, in push order) an operator reserves a range
 * of counters from the global stream with mxc__random_reserve; the kernel
 * then computes element i from (key, base counter + i) alone. So the
 * numbers depend only on the seed and the order of pushes, never on how
 * many threads split the work or in which order they run.
 *
 * Thread-safety: reserve and seed may be called from any thread; the fill
 * functions are pure and may be run concurrently on disjoint ranges. */
#ifndef MXC_CORE_RESOURCE_RANDOM_H_
#define MXC_CORE_RESOURCE_RANDOM_H_

#include <stdint.h>

/* One Philox4x32 round function application with 10 rounds. */
void mxc__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                        uint32_t out[4]);

/* A reserved slice of the stream: 4 * n_blocks 32-bit words. */
typedef struct mxc__rng_slice {
  uint32_t key[2];
  uint64_t block; /* first counter (counter words 0-1; words 2-3 are 0) */
  uint64_t n_blocks;
} mxc__rng_slice;

/* Re-seeds the global stream and resets its counter. */
void mxc__random_seed(uint64_t seed);

/* Reserves enough counters for n_values values of `words_per_value` 32-bit
 * words each (1 for float32/uint32, 2 for float64/uint64 and for normal
 * pairs). */
mxc__rng_slice mxc__random_reserve(int64_t n_values, int words_per_value);

/* Fill out[0..n) with values begin..begin+n of the slice (values are
 * numbered from 0 over the whole slice, so disjoint ranges of one slice can
 * be filled by different threads with identical results). */
void mxc__rng_uniform_f32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                          float lo, float hi, float *out);
void mxc__rng_uniform_f64(const mxc__rng_slice *s, int64_t begin, int64_t n,
                          double lo, double hi, double *out);
void mxc__rng_normal_f32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                         float mean, float stddev, float *out);
void mxc__rng_normal_f64(const mxc__rng_slice *s, int64_t begin, int64_t n,
                         double mean, double stddev, double *out);
void mxc__rng_u32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                  uint32_t *out);

#endif /* MXC_CORE_RESOURCE_RANDOM_H_ */
