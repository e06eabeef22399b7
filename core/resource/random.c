/* Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror and
 * Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the
 * global stream that hands out disjoint counter ranges (see random.h). */
#include "core/resource/random.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>

#include "core/base/assert.h"
#include "core/resource/philox_impl.h"

/* ---- the generator (its rounds are in philox_impl.h, shared with the
 * CUDA plug-in) ---- */

void mxc__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                        uint32_t out[4]) {
  mxc__philox_block(ctr, key, out);
}

/* ---- the global stream ---- */

/* The key and the counter change together on seed, so one lock guards both
 * (an atomic counter alone could pair a new counter with an old key). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_seed = MXC__RANDOM_DEFAULT_SEED; /* under g_lock */
static uint64_t g_next_block;                      /* under g_lock */

void mxc__random_seed(uint64_t seed) {
  pthread_mutex_lock(&g_lock);
  g_seed = seed;
  g_next_block = 0;
  pthread_mutex_unlock(&g_lock);
}

void mxc__random_get_state(uint64_t *seed, uint64_t *next_block) {
  pthread_mutex_lock(&g_lock);
  *seed = g_seed;
  *next_block = g_next_block;
  pthread_mutex_unlock(&g_lock);
}

void mxc__random_set_state(uint64_t seed, uint64_t next_block) {
  pthread_mutex_lock(&g_lock);
  g_seed = seed;
  g_next_block = next_block;
  pthread_mutex_unlock(&g_lock);
}

/* Blocks of 4 words for n values of w words, computed without forming
 * n * w (which could overflow int64 for huge n). */
static uint64_t blocks_for(int64_t n_values, int words_per_value) {
  if (n_values <= 0 || words_per_value < 1 || words_per_value > 4) return 0;
  uint64_t n = (uint64_t)n_values, w = (uint64_t)words_per_value;
  return (n / 4) * w + ((n % 4) * w + 3) / 4;
}

mxc__rng_slice mxc__random_reserve(int64_t n_values, int words_per_value) {
  mxc__rng_slice s;
  s.n_blocks = blocks_for(n_values, words_per_value);
  pthread_mutex_lock(&g_lock);
  s.key[0] = (uint32_t)g_seed;
  s.key[1] = (uint32_t)(g_seed >> 32);
  s.block = g_next_block;
  g_next_block += s.n_blocks;
  pthread_mutex_unlock(&g_lock);
  return s;
}

/* ---- reading words of a slice ---- */

/* The last block computed, so that consecutive words cost one Philox call
 * per four words. */
typedef struct block_cache {
  const mxc__rng_slice *s;
  uint64_t index; /* block index within the slice; UINT64_MAX: none yet */
  uint32_t w[4];
} block_cache;

static block_cache cache_init(const mxc__rng_slice *s) {
  block_cache c = {s, UINT64_MAX, {0, 0, 0, 0}};
  return c;
}

/* Word `wi` (numbered from 0 over the slice). */
static uint32_t word_at(block_cache *c, uint64_t wi) {
  uint64_t blk = wi >> 2;
  if (blk != c->index) {
    mxc__philox_slice_block(c->s->key, c->s->block, blk, c->w);
    c->index = blk;
  }
  return c->w[wi & 3];
}

/* Values [begin, begin + n) of words_per_value words each stay inside
 * the words the slice reserved: past them, two slices would draw the same
 * counters and their streams would overlap. */
static void check_range(const mxc__rng_slice *s, int64_t begin, int64_t n,
                        uint64_t words_per_value) {
  MXC__ASSERT(s != NULL && begin >= 0 && n >= 0);
  MXC__ASSERT(n == 0 ||
              (uint64_t)(begin + n) * words_per_value <= s->n_blocks * 4);
}

/* ---- fills ---- */

void mxc__rng_u32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                  uint32_t *out) {
  check_range(s, begin, n, 1);
  block_cache c = cache_init(s);
  for (int64_t j = 0; j < n; j++) out[j] = word_at(&c, (uint64_t)(begin + j));
}

/* lo + (hi - lo) * u, computed in double (so hi - lo cannot overflow), can
 * still round up to hi in float; the largest float below hi replaces it. */
void mxc__rng_uniform_f32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                          float lo, float hi, float *out) {
  check_range(s, begin, n, 1);
  block_cache c = cache_init(s);
  double span = (double)hi - (double)lo;
  float below_hi = nextafterf(hi, -INFINITY);
  for (int64_t j = 0; j < n; j++) {
    out[j] = mxc__philox_uniform_f32(word_at(&c, (uint64_t)(begin + j)), lo,
                                     hi, span, below_hi);
  }
}

void mxc__rng_uniform_f64(const mxc__rng_slice *s, int64_t begin, int64_t n,
                          double lo, double hi, double *out) {
  check_range(s, begin, n, 2);
  block_cache c = cache_init(s);
  double span = hi - lo;
  double below_hi = nextafter(hi, -INFINITY);
  for (int64_t j = 0; j < n; j++) {
    uint64_t wi = 2 * (uint64_t)(begin + j);
    out[j] = mxc__philox_uniform_f64(word_at(&c, wi), word_at(&c, wi + 1), lo,
                                     hi, span, below_hi);
  }
}

/* Pair p of a normal_f32 fill: words 2p, 2p+1. */
static void normal_pair_f32(block_cache *c, uint64_t p, double z[2]) {
  mxc__philox_normal_pair_f32(word_at(c, 2 * p), word_at(c, 2 * p + 1), z);
}

/* Pair p of a normal_f64 fill: block p. */
static void normal_pair_f64(block_cache *c, uint64_t p, double z[2]) {
  uint32_t w[4];
  for (int k = 0; k < 4; ++k) w[k] = word_at(c, 4 * p + (uint64_t)k);
  mxc__philox_normal_pair_f64(w, z);
}

typedef void (*normal_pair_fn)(block_cache *c, uint64_t p, double z[2]);

/* Values [begin, begin + n) into out32 or out64 (the other is NULL): value
 * i is element i % 2 of pair i / 2. A pair is computed once when both of
 * its values are in range. Pairs use 2 words per value (f32: 2 words per
 * pair, rounded up; f64: a block per pair), hence the range check with 2. */
static void normal_fill(const mxc__rng_slice *s, int64_t begin, int64_t n,
                        normal_pair_fn pair, double mean, double stddev,
                        float *out32, double *out64) {
  check_range(s, begin, n, 2);
  block_cache c = cache_init(s);
  double z[2] = {0.0, 0.0};
  uint64_t have = UINT64_MAX; /* the pair held in z; none yet */
  for (int64_t j = 0; j < n; j++) {
    uint64_t i = (uint64_t)(begin + j);
    if (i / 2 != have) {
      have = i / 2;
      pair(&c, have, z);
    }
    double v = mxc__philox_affine(mean, stddev, z[i & 1]);
    if (out32) {
      out32[j] = (float)v;
    } else {
      out64[j] = v;
    }
  }
}

void mxc__rng_normal_f32(const mxc__rng_slice *s, int64_t begin, int64_t n,
                         float mean, float stddev, float *out) {
  normal_fill(s, begin, n, normal_pair_f32, mean, stddev, out, NULL);
}

void mxc__rng_normal_f64(const mxc__rng_slice *s, int64_t begin, int64_t n,
                         double mean, double stddev, double *out) {
  normal_fill(s, begin, n, normal_pair_f64, mean, stddev, NULL, out);
}
