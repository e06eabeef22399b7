/* Counter-based random numbers (Philox4x32-10).
 *
 * Random operators never carry generator state into their kernels. At push
 * time (in the pushing thread, in push order) an operator reserves a range
 * of counters from the global stream with mxc__random_reserve; the kernel
 * then computes element i from (key, base counter + i) alone. So the
 * numbers depend only on the seed and the order of pushes, never on how
 * many threads split the work or in which order they run.
 *
 * The per-value functions (the Philox block, words as uniforms, the
 * Box-Muller pair, ...) are in philox_impl.h, which the CUDA plug-in's
 * kernels include too: a GPU draw computes what these fills compute.
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

/* The seed of a stream that was never seeded ("mxc_seed" in ASCII). */
#define MXC__RANDOM_DEFAULT_SEED UINT64_C(0x6D78635F73656564)

/* Re-seeds the global stream and resets its counter. The key is the seed
 * itself: key[0] = low 32 bits, key[1] = high 32 bits. */
void mxc__random_seed(uint64_t seed);

/* The global stream's position (seed and next counter block), and setting
 * it back: training checkpoints save it, so that a resumed run draws the
 * numbers an uninterrupted one would (Dropout, random initializers). */
void mxc__random_get_state(uint64_t *seed, uint64_t *next_block);
void mxc__random_set_state(uint64_t seed, uint64_t next_block);

/* Reserves enough counters for n_values values of `words_per_value` 32-bit
 * words each (1 for float32/uint32, 2 for float64/uint64 and for normal
 * pairs). words_per_value must be 1..4; n_values <= 0 or another
 * words_per_value reserves nothing (n_blocks 0). Serialized with
 * mxc__random_seed, so a slice never mixes the key of one seed with the
 * counter of another. */
mxc__rng_slice mxc__random_reserve(int64_t n_values, int words_per_value);

/* Value layout (fixed, so any split of [0, n) gives the same numbers):
 *  - u32, uniform_f32: value i is word i (word w = word w % 4 of block
 *    w / 4). uniform_f32 uses its top 24 bits: lo + (hi - lo) * m / 2^24,
 *    clamped below hi where rounding would reach it ([lo, hi) for lo < hi).
 *  - uniform_f64: value i is words 2i, 2i+1 (53 bits).
 *  - normal_f32: values 2p and 2p+1 are the Box-Muller pair (cos, sin) of
 *    words 2p, 2p+1; normal_f64: of block p (53 bits from words 0-1 for the
 *    radius, from words 2-3 for the angle). The radius uses (m + 1) / 2^b,
 *    never 0, so log never sees 0. Reserve normals with words_per_value 2.
 * A range must lie inside the slice's reserved words (asserted in debug
 * builds). */

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
