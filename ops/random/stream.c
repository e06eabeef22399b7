/* Random words for the sampling operators: sub-streams derived from a
 * reserved slice, and checks on what a slice holds (see internal.h). */
#include "ops/random/internal.h"

/* Counter word 3 of the block that derives a sub-stream key. Slices of the
 * global stream always have counter words 2-3 equal to 0, so a derivation
 * never reproduces a block that some slice hands out as random words. */
#define SUBSTREAM_MAGIC UINT32_C(0x5B57EA4D)

mxc__substream mxc__substream_of(const mxc__rng_slice *s, uint32_t tag) {
  /* The slice's first block is unique among all reservations under one
   * seed (every reservation takes at least one block), so (key, block)
   * identifies this call; Philox scrambles it into a fresh key. Keys of
   * two calls coincide with probability 2^-64. */
  uint32_t ctr[4] = {(uint32_t)s->block, (uint32_t)(s->block >> 32), tag,
                     SUBSTREAM_MAGIC};
  uint32_t w[4];
  mxc__philox4x32_10(ctr, s->key, w);
  mxc__substream ss = {{w[0], w[1]}};
  return ss;
}

void mxc__substream_block(const mxc__substream *ss, uint64_t value,
                          uint32_t attempt, uint32_t out[4]) {
  uint32_t ctr[4] = {(uint32_t)value, (uint32_t)(value >> 32), attempt, 0};
  mxc__philox4x32_10(ctr, ss->key, out);
}

int mxc__rng_check(const char *op_name, const mxc__rng_slice *s,
                   int64_t n_values, int words_per_value) {
  uint64_t need =
      (uint64_t)(n_values > 0 ? n_values : 0) * (uint64_t)words_per_value;
  MXC_RETURN_ERROR_IF(need > s->n_blocks * 4, MXC_ERR_INTERNAL,
                      "operator '%s': the random slice holds %llu words but "
                      "%llu are needed (was MXC__RES_RANDOM declared?)",
                      op_name, (unsigned long long)(s->n_blocks * 4),
                      (unsigned long long)need);
  return MXC_OK;
}
