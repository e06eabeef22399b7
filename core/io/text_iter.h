/* Batch iterators over LibSVM (CSR batches) and CSV (dense batches) text
 * files, behind the shared iterator interface (iter.h).
 *
 * They stream: memory stays bounded by a batch whatever the file's size.
 * The last batch is padded (MXC_LAST_BATCH_PAD) with rows from the start
 * of the epoch, or dropped (MXC_LAST_BATCH_DISCARD). The number of
 * examples is known only once an epoch has been read to its end. After a
 * failed next the file position is lost: next fails until a reset.
 *
 * Thread-safety: as iter.h (one thread at a time per iterator). */
#ifndef MXC_CORE_IO_TEXT_ITER_H_
#define MXC_CORE_IO_TEXT_ITER_H_

#include <stdint.h>

#include "core/io/iter.h"

/* Batches of (batch_size, num_features) float32 CSR data with int64
 * indices, and float32 labels of shape (batch_size). one_based: indices
 * in the file start at 1. */
int mxc__iter_libsvm_create(const char *path, int64_t num_features,
                            int64_t batch_size, int one_based, int last_batch,
                            mxc__iter **out);

/* Batches of (batch_size, cols) dense float32 data; labels from column
 * label_col (-1: none) or from the file label_path (NULL: none), at most
 * one of the two. num_cols 0: inferred from the first row. header: the
 * first line of each file is skipped. */
int mxc__iter_csv_create(const char *data_path, const char *label_path,
                         int64_t num_cols, int64_t batch_size, int header,
                         int64_t label_col, int last_batch, mxc__iter **out);

#endif /* MXC_CORE_IO_TEXT_ITER_H_ */
