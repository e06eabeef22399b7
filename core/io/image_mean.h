/* The mean image of the image record iterator's mean_img parameter, with
 * MXNet ImageRecordIter's meaning: a file holding one float32 array of
 * shape data_shape (C, H, W), named "mean_img", in MXNet's NDArray list
 * format (mxc's own format is read too). When the file exists it is
 * loaded; when it does not, the mean is computed and saved there.
 *
 * The computed mean covers every record of the .rec file, whatever part
 * the iterator reads: workers of one job then agree on the mean and write
 * the same bytes (the save is atomic, so workers racing to create it see
 * either no file or a whole one). Each record is decoded and put through
 * the augmentation's deterministic steps only: resize, pad, the scaling
 * up of small images and the centre crop (no rotation, random crop,
 * mirror or jitter, and no normalization), as MXNet makes it once without
 * random augmentation. Pixels are summed in double, divided by the record
 * count, then rounded to float32.
 *
 * Thread-safety: any thread; one call per path at a time is not needed. */
#ifndef MXC_CORE_IO_IMAGE_MEAN_H_
#define MXC_CORE_IO_IMAGE_MEAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/io/image_aug.h"
#include "core/io/recordio.h"

/* Reads the image record at byte offset off of r: its header into *h and
 * its image bytes as *payload / *size (borrowed until r reads again).
 * `what` names the record in messages (MXC_ERR_IO when it is missing). */
int mxc__image_record_at(mxc__recordio *r, uint64_t off, const char *what,
                         mxc__image_header *h, const unsigned char **payload,
                         size_t *size);

/* The records a mean is computed over: offsets[0..n) of rec_path. */
typedef struct mxc__image_records {
  const char *rec_path;
  const uint64_t *offsets;
  int64_t n;
} mxc__image_records;

/* *out = a new C * H * W float buffer (CHW, mxc__free) holding the mean
 * image of mean_path for data_shape (aug->c, aug->h, aug->w): loaded when
 * the file exists, else computed over recs with aug's deterministic steps
 * and saved there (MXNet format). Errors name the file: MXC_ERR_IO for an
 * unreadable file or one without a "mean_img" array, MXC_ERR_DTYPE for a
 * dtype other than float32, MXC_ERR_SHAPE for a shape other than
 * data_shape (both shapes given); a record that cannot be decoded while
 * computing is MXC_ERR_IO naming it. */
int mxc__image_mean_get(const char *mean_path, const mxc__image_records *recs,
                        const mxc__aug_param *aug, float **out);

#endif /* MXC_CORE_IO_IMAGE_MEAN_H_ */
