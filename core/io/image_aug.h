/* Image augmentation for the image record iterator: MXNet
 * ImageRecordIter's default augmenter, defined exactly so that a numpy
 * reference (scripts/image_iter_ref.py) can reproduce it, and driven by
 * counter-based random numbers so that an example's augmentation depends
 * only on (seed, epoch, record index), never on threads or timing.
 *
 * Steps, on float pixel values (0..255) in HWC layout:
 *  1. resize > 0: scale so the shorter side is `resize` (the longer one
 *     rounded), bilinear;
 *  2. max_rotate_angle > 0: rotate about the image centre by an angle
 *     uniform in [-a, a] degrees, same size, bilinear, fill_value outside;
 *  3. pad > 0: a border of `pad` pixels of fill_value on every side; then
 *     an image smaller than the crop in either side is scaled up (aspect
 *     kept, sides rounded up) until it covers it;
 *  4. crop data_shape's (H, W): at a uniform offset with rand_crop, else
 *     centred (offset (h - H) / 2 rounded down);
 *  5. rand_mirror: a horizontal flip with probability 1/2;
 *  6. brightness b: values times 1 + b * (2u - 1); contrast c: values
 *     moved away from the crop's mean luma by 1 + c * (2u - 1); saturation
 *     s (3 channels): each pixel moved away from its own luma by
 *     1 + s * (2u - 1); then clipped to [0, 255] (only if any of the three
 *     is set);
 *  7. (v - mean_c) / std_c * scale, into CHW float32; with a mean image,
 *     (v - mean_img[c, y, x]) / std_c * scale.
 *
 * Bilinear sampling maps output pixel centres onto input ones: source
 * coordinate (i + 0.5) * in / out - 0.5, clamped to [0, in - 1].
 * Luma is 0.299 R + 0.587 G + 0.114 B.
 *
 * Random numbers: Philox4x32-10 under key (seed low, seed high ^
 * MXC__AUG_KEY_TAG) at counters (index low, index high, epoch, block):
 * block 0 gives crop y, crop x, mirror, angle; block 1 brightness,
 * contrast, saturation. Each word w becomes u = (w >> 8) / 2^24 in [0, 1);
 * an offset in [0, n) is floor(u * n). Every draw is made whether or not
 * its step is on, so turning one on never changes another's numbers.
 *
 * Thread-safety: pure functions; any thread. */
#ifndef MXC_CORE_IO_IMAGE_AUG_H_
#define MXC_CORE_IO_IMAGE_AUG_H_

#include <stdint.h>

#include "core/io/image.h"

#define MXC__AUG_KEY_TAG 0x41554721U /* "AUG!": apart from shuffling's key */

typedef struct mxc__aug_param {
  int64_t c, h, w; /* data_shape */
  int64_t resize;  /* <= 0: none */
  int64_t pad;     /* border added before cropping */
  int rand_crop, rand_mirror;
  float max_rotate_angle, fill_value;
  float brightness, contrast, saturation;
  float mean[3], std[3], scale;
  /* NULL, or a mean image of c * h * w floats (CHW, image_mean.h) that
   * step 7 subtracts per pixel instead of mean[c]; borrowed. */
  const float *mean_img;
} mxc__aug_param;

/* The seven uniform draws of one example (see above). */
void mxc__aug_draws(uint64_t seed, uint64_t epoch, int64_t index,
                    float u[7]);

/* Augments one decoded image (src->c == p->c) into dst (p->c * p->h * p->w
 * floats, CHW). MXC_ERR_OOM possible (intermediate images). */
int mxc__image_augment(const mxc__image *src, const mxc__aug_param *p,
                       const float u[7], float *dst);

#endif /* MXC_CORE_IO_IMAGE_AUG_H_ */
