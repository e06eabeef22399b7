/* The image record iterator: MXNet ImageRecordIter's parameters and
 * meaning over a RecordIO file of image records (im2rec's layout).
 *
 * Batches are float32 (batch_size, C, H, W) data and (batch_size) labels
 * (label_width 1) or (batch_size, label_width). Records are decoded
 * (image.h) and augmented (image_aug.h) on preprocess_threads worker
 * threads, up to prefetch_buffer batches ahead of the consumer, so that
 * training does not wait on data when decoding is faster than compute.
 *
 * Determinism: an example's pixels depend only on (seed, epoch, record
 * index) and the epoch's order only on (seed, epoch) (iter.h), so the
 * batches are the same whatever the thread count or timing.
 *
 * Sharding: num_parts / part_index give worker part_index the records
 * [n * part_index / num_parts, n * (part_index + 1) / num_parts) of the
 * file's n records (in file order): disjoint parts whose union is the
 * file. Shuffling permutes within the part.
 *
 * Last batch: round_batch 1 (the default) fills it from the start of the
 * epoch's order and reports the filler rows as pad; round_batch 0 drops
 * it.
 *
 * Errors: a record that cannot be decoded, has fewer labels than
 * label_width, or fails to augment fails the `next` that reaches its
 * batch with MXC_ERR_IO naming the file and record; the iterator can
 * then be reset or freed.
 *
 * Thread-safety: one iterator is used by one thread at a time (the
 * workers are internal). */
#ifndef MXC_CORE_IO_IMAGE_ITER_H_
#define MXC_CORE_IO_IMAGE_ITER_H_

#include "core/io/iter.h"

/* Creates the iterator from n string key/value pairs (MXNet's names; see
 * mxc_data_iter_image_record_create in mxc.h for the list). */
int mxc__iter_image_record_create(int n, const char *const *keys,
                                  const char *const *vals, mxc__iter **out);

#endif /* MXC_CORE_IO_IMAGE_ITER_H_ */
