/* fit() through a KVStore (core/nn/fit_dist.c): data-parallel training in
 * one argument. Every worker of the store runs the same fit on its part of
 * the training data; after each backward pass the gradients are summed
 * over the workers by the store, and every worker makes the same optimizer
 * step with the global batch, so parameters stay identical (mxc.h,
 * mxc_fit_set_kvstore, says what the caller sees).
 *
 * Every function accepts d == NULL (no store): then nothing is
 * communicated (agree returns the caller's own answer, one worker of rank
 * 0). Thread-safety: the fit's thread alone, like the fit. */
#ifndef MXC_CORE_NN_FIT_DIST_H_
#define MXC_CORE_NN_FIT_DIST_H_

#include "core/io/iter.h"
#include "core/kvstore/kvstore.h"
#include "core/nn/nn.h"

typedef struct mxc__fit_dist mxc__fit_dist;

/* A new state over kv (one more reference to it). */
int mxc__fit_dist_new(mxc__kvstore *kv, mxc__fit_dist **out);
void mxc__fit_dist_free(mxc__fit_dist *d); /* accepts NULL */

int mxc__fit_dist_rank(const mxc__fit_dist *d);
int mxc__fit_dist_workers(const mxc__fit_dist *d);

/* Makes the training iterator read part rank of workers (right after its
 * reset, at an epoch's start); nothing with one worker. */
int mxc__fit_dist_shard(const mxc__fit_dist *d, mxc__iter *train);

/* *all = 1 when `mine` is nonzero on every worker: batches and epochs go
 * on only together, so that every worker makes the same collectives. */
int mxc__fit_dist_agree(mxc__fit_dist *d, int mine, int *all);

/* After a backward pass of net: every gradient becomes the sum over the
 * workers (asynchronous, ordered by the engine before the optimizer's
 * step). The first call also makes every parameter (and auxiliary state)
 * rank 0's value. */
int mxc__fit_dist_sum_grads(mxc__fit_dist *d, mxc__block *net);

#endif /* MXC_CORE_NN_FIT_DIST_H_ */
