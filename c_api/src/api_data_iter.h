/* The public data-iterator handle over any kind of iterator.
 *
 * mxc_data_iter handles (MXC__HANDLE_DATA_ITER) point to an api_iter: an
 * implementation pointer and its operations. The shared entry points
 * (mxc_data_iter_next, _data, _label, _pad, _reset, _num_examples, _free)
 * live in api_data_iter.c and dispatch through the table, so every kind
 * of iterator (IDX, LibSVM, CSV) has the same semantics there: a current
 * batch after a successful next that reported one, none before the first
 * next, after the end of the epoch and after reset. */
#ifndef MXC_C_API_SRC_API_DATA_ITER_H_
#define MXC_C_API_SRC_API_DATA_ITER_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"
#include "mxc/mxc.h"

typedef struct api_iter_ops {
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
} api_iter_ops;

/* Gives impl a new public handle. Takes impl over: on failure it is freed
 * with ops->free and *out is untouched. */
int api_iter_wrap(const api_iter_ops *ops, void *impl, mxc_data_iter *out);

#endif /* MXC_C_API_SRC_API_DATA_ITER_H_ */
