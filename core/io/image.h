/* Image decoding: JPEG through libjpeg-turbo's TurboJPEG API, PNG through
 * libpng's simplified API (the field's libraries, not home-made codecs).
 *
 * The format is told by content (JPEG starts FF D8 FF, PNG with its
 * 8-byte signature), never by a file name. Output is 8-bit, height x
 * width x channels (HWC, row-major), channels 1 (gray) or 3 (RGB),
 * whatever the file holds. The conversions are the ones MXNet's users get
 * from OpenCV (and PIL): a JPEG is decoded to gray or RGB by libjpeg
 * itself (gray is its Y channel); a PNG is read in its own channel count
 * and converted here: gray replicated to RGB, RGB to gray as ITU-R 601
 * luma (not libpng's linear-light formula), 16-bit samples scaled to 8
 * bits with rounding (not libpng's linear-to-sRGB encoding), palettes
 * expanded, alpha dropped after libpng composes it onto black.
 *
 * A file's claimed size is checked before anything is allocated: sides
 * up to MXC__IMAGE_MAX_SIDE and at most MXC__IMAGE_MAX_PIXELS pixels, so a
 * 100-byte header cannot ask for gigabytes. A corrupt, truncated or
 * unsupported image is MXC_ERR_IO naming `what` (the caller's name for
 * the image: a file, a record) and the codec's message; libjpeg-turbo's
 * warnings (recoverable corruption) count as errors too, so a damaged
 * image never silently becomes a half-gray training example.
 *
 * Thread-safety: every function may be called from any thread (each call
 * has its own codec state). */
#ifndef MXC_CORE_IO_IMAGE_H_
#define MXC_CORE_IO_IMAGE_H_

#include <stddef.h>
#include <stdint.h>

#include "core/ndarray/ndarray.h"

#define MXC__IMAGE_MAX_SIDE 32768
#define MXC__IMAGE_MAX_PIXELS ((int64_t)1 << 28)

typedef struct mxc__image {
  int64_t h, w;
  int c;       /* 1 or 3 */
  uint8_t *px; /* h * w * c bytes, owned (mxc__image_release) */
} mxc__image;

/* Decodes n bytes into *out (channels 1 or 3). */
int mxc__image_decode(const void *buf, size_t n, int channels,
                      const char *what, mxc__image *out);

/* Decodes into a new CPU array of shape (channels, height, width), dtype
 * MXC_DTYPE_UINT8 or MXC_DTYPE_FLOAT32 (pixel values 0..255 either way). */
int mxc__image_decode_array(const void *buf, size_t n, int channels,
                            int dtype, const char *what, mxc__ndarray **out);

/* Frees out->px; accepts a zeroed image. */
void mxc__image_release(mxc__image *im);

#endif /* MXC_CORE_IO_IMAGE_H_ */
