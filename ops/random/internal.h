/* Shared pieces of the random-sampling and optimizer families.
 *
 * Random numbers. core/op/invoke.c reserves, for an operator with
 * MXC__RES_RANDOM, (elements of all outputs + elements of all inputs + 1)
 * values of 4 words each: ctx->rng.n_blocks = that count of Philox blocks,
 * i.e. 4 * (n + 1) 32-bit words. Samplers that need a fixed number of words
 * per output value (uniform, normal, exponential, randint: at most 2;
 * multinomial and shuffle: 2 per draw) read them straight from the slice,
 * value i of the output taking value i of the slice (mxc__rng_check
 * verifies the slice is large enough).
 *
 * Rejection samplers (gamma, poisson) need a variable number of draws. They
 * use a sub-stream instead: a Philox key derived from the slice's key and
 * first block (unique per push and seed), under which value i, attempt j
 * reads the block at counter (i, j). The budget of attempts per value is
 * fixed, so the numbers never depend on which thread ran which value, and
 * the slice itself is used only as the unique identity of the call. */
#ifndef MXC_OPS_RANDOM_INTERNAL_H_
#define MXC_OPS_RANDOM_INTERNAL_H_

#include <stdint.h>

#include "core/resource/philox_impl.h"
#include "core/resource/random.h"
#include "core/op/common.h"
#include "core/op/op.h"
#include "ops/random/sample_params.h"

/* ---- random streams (stream.c) ---- */

typedef struct mxc__substream {
  uint32_t key[2];
} mxc__substream;

/* The sub-stream of a slice; `tag` separates sub-streams of one call. */
mxc__substream mxc__substream_of(const mxc__rng_slice *s, uint32_t tag);

/* The 4 words of value `value`, attempt `attempt` of a sub-stream. */
void mxc__substream_block(const mxc__substream *ss, uint64_t value,
                          uint32_t attempt, uint32_t out[4]);

/* [0, 1) with 53 bits from two words (philox_impl.h). */
static inline double mxc__unit53(uint32_t hi, uint32_t lo) {
  return mxc__philox_unit_f64(hi, lo);
}

/* (0, 1] with 53 bits: never 0, so log() of it is finite. */
static inline double mxc__unit53_pos(uint32_t hi, uint32_t lo) {
  return mxc__philox_unit_f64_pos(hi, lo);
}

/* floor(r * span / 2^64): an integer in [0, span) from 64 random bits.
 * The bias is at most span / 2^64, far below anything measurable. */
static inline uint64_t mxc__mulhi64(uint64_t r, uint64_t span) {
  return mxc__philox_mulhi64(r, span);
}

/* MXC_ERR_INTERNAL naming op when the slice holds fewer than
 * n_values * words_per_value words (a reservation that changed). */
int mxc__rng_check(const char *op_name, const mxc__rng_slice *s,
                   int64_t n_values, int words_per_value);

/* ---- samplers without inputs (sample.c) ---- */

/* Parameter definitions of the head, for a struct `st` whose first member
 * is a mxc__sample_head named `head`. */
/* clang-format off */
#define MXC__SAMPLE_HEAD_DEFS(st, dtype_doc)                                 \
  {"shape", MXC__P_TUPLE, offsetof(st, head.shape), "None",                  \
   "Shape of the output; None takes the shape of the given output array.",  \
   1, 0, NULL},                                                              \
  {"dtype", MXC__P_DTYPE, offsetof(st, head.dtype), "None", dtype_doc,       \
   1, 0, NULL}
/* clang-format on */

/* Output shape from the 'shape' parameter (or the given output). */
int mxc__sample_infer_shape(const mxc__op *op, const void *param,
                            mxc__shape *in, int n_in, mxc__shape *out,
                            int n_out);
/* Checks the 'shape' parameter: extents >= 0, at most MXC_MAX_NDIM. */
int mxc__sample_check_head(const char *op_name, const mxc__sample_head *h);
/* Output dtype of a float sampler: the 'dtype' parameter, else the given
 * output's dtype, else float32; float32 and float64 only. */
int mxc__sample_infer_type_float(const mxc__op *op, const void *param, int *in,
                                 int n_in, int *out, int n_out);

/* Fills values [begin, begin + m) of a sampler into buf. */
typedef void (*mxc__sample_gen_fn)(const mxc__opctx *ctx, const void *param,
                                   int dtype, int64_t begin, int64_t m,
                                   double *buf);
/* Runs a float sampler over out[0] in chunks of MXC__SAMPLE_CHUNK values,
 * after checking that the slice holds words_per_value words per value
 * (0 for samplers on sub-streams). */
int mxc__sample_run(const mxc__op *op, const mxc__opctx *ctx, const void *param,
                    const mxc__blob *out, mxc__req req, int words_per_value,
                    mxc__sample_gen_fn gen);

/* Registration of each file's descriptors. */
int mxc__random_register_basic(mxc__registry *r);
int mxc__random_register_rejection(mxc__registry *r);
int mxc__random_register_discrete(mxc__registry *r);
int mxc__random_register_optimizer(mxc__registry *r); /* optimizer.c */

/* Writes values buf[0..m) (doubles) to elements begin.. of a float32 or
 * float64 blob according to req. */
void mxc__sample_emit(const mxc__blob *out, mxc__req req, int64_t begin,
                      const double *buf, int64_t m);

/* Values per chunk that samplers generate at a time on the stack. */
#define MXC__SAMPLE_CHUNK 256

#endif /* MXC_OPS_RANDOM_INTERNAL_H_ */
