/* The data-iterator interface shared by every kind of iterator (IDX,
 * LibSVM, CSV): an implementation pointer and its operations.
 *
 * The entry points below give every kind the same semantics: a current
 * batch after a successful next that reported one, none before the first
 * next, after the end of the epoch and after reset. Each kind provides a
 * constructor (data_iter.h, text_iter.h) that returns an mxc__iter.
 *
 * Ownership: an mxc__iter owns its implementation and its current batch;
 * mxc__iter_current lends an array until the next call of next, reset or
 * free (callers that keep it take a view). Each batch is a new pair of
 * arrays, so views of earlier batches never change.
 *
 * Thread-safety: one iterator must not be used from two threads at once
 * (it has a cursor); different iterators are independent. */
#ifndef MXC_CORE_IO_ITER_H_
#define MXC_CORE_IO_ITER_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"

typedef struct mxc__iter_ops {
  /* Advances; *out_has = 1 with a new current batch, 0 at the end. */
  int (*next)(void *impl, int *out_has);
  /* Starts the next epoch (no current batch afterwards). */
  int (*reset)(void *impl);
  /* The current batch: *data NULL when there is none; *label may be NULL
   * with a batch when the iterator has no labels. Borrowed pointers. */
  void (*current)(const void *impl, const mxc__ndarray **data,
                  const mxc__ndarray **label, int64_t *pad);
  /* Examples per epoch; may fail when not yet known. */
  int (*num_examples)(const void *impl, int64_t *out);
  void (*free)(void *impl);
  /* Names the iterator's batches in a profile ("idx_iter_next"). */
  const char *name;
  /* Restricts every later epoch to part part_index of num_parts (checked
   * by mxc__iter_set_parts: 1 <= num_parts, 0 <= part_index < num_parts),
   * called only at an epoch's start. On failure the part is unchanged.
   * NULL: the kind cannot be sharded (MXC_ERR_UNSUPPORTED). */
  int (*set_parts)(void *impl, int64_t num_parts, int64_t part_index);
} mxc__iter_ops;

typedef struct mxc__iter mxc__iter;

/* A new iterator over impl. Takes impl over: on failure it is freed with
 * ops->free and *out is untouched. */
int mxc__iter_new(const mxc__iter_ops *ops, void *impl, mxc__iter **out);

/* Frees the iterator and its implementation; NULL is a no-op. */
void mxc__iter_free(mxc__iter *it);

/* Advances: *out_has = 1 with a new current batch, 0 at the end. */
int mxc__iter_next(mxc__iter *it, int *out_has);

/* Starts the next epoch. */
int mxc__iter_reset(mxc__iter *it);

/* *out = the current batch's data (want_label 0) or labels (want_label
 * 1), borrowed. Fails without a current batch (MXC_ERR_INVALID_ARGUMENT)
 * and for labels when the iterator has none (MXC_ERR_NOT_FOUND). */
int mxc__iter_current(const mxc__iter *it, int want_label,
                      const mxc__ndarray **out);

/* Pad rows of the current batch; fails without a current batch. */
int mxc__iter_pad(const mxc__iter *it, int64_t *out);

/* Examples per epoch; may fail when not yet known. */
int mxc__iter_num_examples(const mxc__iter *it, int64_t *out);

/* The largest num_parts (so part arithmetic stays within int64). */
#define MXC__ITER_MAX_PARTS ((int64_t)1 << 30)

/* Makes the iterator read part part_index of num_parts of its data set
 * (each kind says which examples a part holds; the parts are disjoint and
 * together hold every example once). Allowed only at the start of an
 * epoch: before the first next, or right after a successful reset; later
 * it is MXC_ERR_INVALID_ARGUMENT, as are num_parts < 1 and part_index
 * outside [0, num_parts) and num_parts > MXC__ITER_MAX_PARTS. It takes
 * effect at once, for the epoch about to start and every later one; on
 * failure the part is unchanged. */
int mxc__iter_set_parts(mxc__iter *it, int64_t num_parts, int64_t part_index);

/* [*lo, *hi) = the contiguous part part_index of num_parts of n items,
 * [n*k/p, n*(k+1)/p): sizes differ by at most one and the parts tile
 * [0, n). Any n >= 0 with a part checked as mxc__iter_set_parts does. */
void mxc__iter_part_range(int64_t n, int64_t num_parts, int64_t part_index,
                          int64_t *lo, int64_t *hi);

/* perm = the visiting order of one epoch over n examples: the identity
 * when shuffle is 0, else a Fisher-Yates permutation where step i draws
 * from Philox at counter (i, epoch) under key seed, so the order is a pure
 * function of (seed, epoch), independent of the global random stream. */
void mxc__iter_order(int64_t *perm, int64_t n, int shuffle, uint64_t seed,
                     uint64_t epoch);

#endif /* MXC_CORE_IO_ITER_H_ */
