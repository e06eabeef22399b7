/* Batch iterator over an IDX image file and an IDX label file (MNIST).
 *
 * Images: a 3-d IDX file (n, rows, cols); labels: a 1-d file of n values.
 * Each call to next produces a fresh pair of float32 arrays (data and
 * labels), so arrays handed out for an earlier batch never change. The
 * visiting order of an epoch is the identity, or with shuffling a
 * permutation computed from (seed, epoch) alone with Philox, so a run is
 * reproducible regardless of anything else that uses random numbers.
 * Sharded (mxc__data_iter_set_parts), it reads one contiguous range of
 * the examples, and num_examples is that range's size.
 *
 * Thread-safety: one iterator must not be used from two threads at once
 * (it has a cursor); different iterators are independent. */
#ifndef MXC_CORE_IO_DATA_ITER_H_
#define MXC_CORE_IO_DATA_ITER_H_

#include <stdint.h>

#include "core/io/idx.h"
#include "core/io/iter.h"
#include "core/ndarray/ndarray.h"

typedef struct mxc__data_iter {
  mxc__idx images, labels;
  int64_t n_all;     /* examples in the files */
  int64_t first, n;  /* the part: examples [first, first + n) */
  int64_t row_elems; /* rows * cols */
  int64_t batch;
  int shuffle, flat, scale, last_batch;
  uint64_t seed, epoch;
  int64_t *perm;  /* visiting order of this epoch (n entries, 0-based in
                     the part; n_all allocated) */
  int64_t cursor; /* position in perm of the next example */
  /* The current batch (NULL before the first next and after the end). */
  mxc__ndarray *data, *label;
  int64_t pad;
} mxc__data_iter;

/* last_batch: MXC_LAST_BATCH_PAD or MXC_LAST_BATCH_DISCARD. */
int mxc__data_iter_create(const char *images_path, const char *labels_path,
                          int64_t batch, int shuffle, uint64_t seed, int flat,
                          int scale, int last_batch, mxc__data_iter **out);

void mxc__data_iter_free(mxc__data_iter *it);

/* Advances to the next batch: *out_has = 1 with a new current batch, or 0
 * at the end of the epoch (no current batch then). On failure the
 * iterator is unchanged. */
int mxc__data_iter_next(mxc__data_iter *it, int *out_has);

/* Starts the next epoch (new permutation when shuffling). */
void mxc__data_iter_reset(mxc__data_iter *it);

/* Restricts the iterator to the contiguous part part_index of num_parts
 * (iter.h's mxc__iter_part_range of the files' examples), from the
 * current epoch's start on: the cursor goes back to the part's start and
 * shuffling permutes within the part, from (seed, epoch) as before. The
 * caller has checked the arguments (mxc__iter_set_parts). */
void mxc__data_iter_set_parts(mxc__data_iter *it, int64_t num_parts,
                              int64_t part_index);

/* mxc__data_iter_create behind the shared iterator interface (iter.h). */
int mxc__iter_idx_create(const char *images_path, const char *labels_path,
                         int64_t batch, int shuffle, uint64_t seed, int flat,
                         int scale, int last_batch, mxc__iter **out);

#endif /* MXC_CORE_IO_DATA_ITER_H_ */
