/* JPEG and PNG decoding (image.h). */
#include "core/io/image.h"

#include <png.h>
#include <string.h>
#include <turbojpeg.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/ndarray/ndarray.h"

static int is_jpeg(const unsigned char *p, size_t n) {
  return n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF;
}

static int is_png(const unsigned char *p, size_t n) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
  return n >= 8 && memcmp(p, sig, 8) == 0;
}

/* The claimed size, checked; then the pixel buffer. */
static int image_alloc(int64_t h, int64_t w, int c, const char *what,
                       mxc__image *out) {
  MXC_RETURN_ERROR_IF(h < 1 || w < 1 || h > MXC__IMAGE_MAX_SIDE ||
                          w > MXC__IMAGE_MAX_SIDE ||
                          h * w > MXC__IMAGE_MAX_PIXELS,
                      MXC_ERR_IO,
                      "%s: an image of %lld x %lld pixels; expected sides "
                      "of 1..%d and at most %lld pixels",
                      what, (long long)h, (long long)w, MXC__IMAGE_MAX_SIDE,
                      (long long)MXC__IMAGE_MAX_PIXELS);
  out->px = mxc__malloc((size_t)(h * w * c));
  MXC_RETURN_ERROR_IF(!out->px, MXC_ERR_OOM,
                      "%s: out of memory for %lld x %lld x %d pixels", what,
                      (long long)h, (long long)w, c);
  out->h = h;
  out->w = w;
  out->c = c;
  return MXC_OK;
}

static int jpeg_fail(tjhandle tj, const char *what, const char *step) {
  int rc = mxc__error_set(MXC_ERR_IO, "%s: a corrupt or unsupported JPEG "
                                      "image (%s: %s)",
                          what, step, tjGetErrorStr2(tj));
  tjDestroy(tj);
  return rc;
}

static int decode_jpeg(const unsigned char *p, size_t n, int channels,
                       const char *what, mxc__image *out) {
  tjhandle tj = tjInitDecompress();
  MXC_RETURN_ERROR_IF(!tj, MXC_ERR_OOM, "%s: cannot start a JPEG decoder",
                      what);
  int w, h, subsamp, colorspace;
  if (n > (unsigned long)-1 ||
      tjDecompressHeader3(tj, p, (unsigned long)n, &w, &h, &subsamp,
                          &colorspace) != 0) {
    return jpeg_fail(tj, what, "header");
  }
  int rc = image_alloc(h, w, channels, what, out);
  if (rc != MXC_OK) {
    tjDestroy(tj);
    return rc;
  }
  int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  if (tjDecompress2(tj, p, (unsigned long)n, out->px, w, 0, h,
                    channels == 1 ? TJPF_GRAY : TJPF_RGB, flags) != 0) {
    mxc__image_release(out);
    return jpeg_fail(tj, what, "data");
  }
  tjDestroy(tj);
  return MXC_OK;
}

static int png_fail(png_image *img, const char *what) {
  int rc = mxc__error_set(MXC_ERR_IO, "%s: a corrupt or unsupported PNG "
                                      "image (%s)",
                          what, img->message);
  png_image_free(img);
  return rc;
}

/* ITU-R 601 luma in 16-bit fixed point, rounded: what PIL and OpenCV
 * compute for gray from RGB (libpng's own conversion works in linear light
 * and differs by up to ~30 levels). */
static uint8_t luma(unsigned r, unsigned g, unsigned b) {
  return (uint8_t)((19595u * r + 38470u * g + 7471u * b + 0x8000u) >> 16);
}

/* Sample i of a row-major buffer of 8- or 16-bit samples, as 8 bits
 * (16-bit values scaled with rounding: v * 255 / 65535). */
static unsigned sample8(const void *src, int wide, int64_t i) {
  if (!wide) return ((const uint8_t *)src)[i];
  return (((const uint16_t *)src)[i] + 128u) / 257u;
}

/* n pixels of src_c channels (8 or 16 bits) into 8-bit dst_c channels. */
static void convert_px(const void *src, int src_c, int wide, int64_t n,
                       uint8_t *dst, int dst_c) {
  for (int64_t i = 0; i < n; ++i) {
    unsigned v0 = sample8(src, wide, i * src_c);
    if (src_c == 1) {
      for (int c = 0; c < dst_c; ++c) dst[i * dst_c + c] = (uint8_t)v0;
      continue;
    }
    unsigned v1 = sample8(src, wide, i * src_c + 1);
    unsigned v2 = sample8(src, wide, i * src_c + 2);
    if (dst_c == 1) {
      dst[i] = luma(v0, v1, v2);
    } else {
      dst[3 * i] = (uint8_t)v0;
      dst[3 * i + 1] = (uint8_t)v1;
      dst[3 * i + 2] = (uint8_t)v2;
    }
  }
}

/* Reads the PNG in its own channel count (16-bit files as 16-bit linear
 * samples, which libpng then leaves unconverted) and converts here. */
static int png_read_converted(png_image *img, const char *what,
                              mxc__image *out) {
  int wide = (img->format & PNG_FORMAT_FLAG_LINEAR) != 0;
  int src_c = (img->format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
  int64_t n = out->h * out->w;
  void *tmp = mxc__malloc((size_t)(n * src_c * (wide ? 2 : 1)));
  MXC_RETURN_ERROR_IF(!tmp, MXC_ERR_OOM, "%s: out of memory decoding", what);
  img->format = (src_c == 3 ? PNG_FORMAT_FLAG_COLOR : 0) |
                (wide ? PNG_FORMAT_FLAG_LINEAR : 0);
  int ok = png_image_finish_read(img, NULL, tmp, 0, NULL);
  if (ok) convert_px(tmp, src_c, wide, n, out->px, out->c);
  mxc__free(tmp);
  return ok ? MXC_OK : MXC_ERR_IO;
}

static int decode_png(const unsigned char *p, size_t n, int channels,
                      const char *what, mxc__image *out) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, p, n)) {
    return png_fail(&img, what);
  }
  int rc = image_alloc(img.height, img.width, channels, what, out);
  if (rc != MXC_OK) {
    png_image_free(&img);
    return rc;
  }
  rc = png_read_converted(&img, what, out);
  if (rc != MXC_OK) {
    mxc__image_release(out);
    return rc == MXC_ERR_IO ? png_fail(&img, what) : rc;
  }
  png_image_free(&img);
  return MXC_OK;
}

int mxc__image_decode(const void *buf, size_t n, int channels,
                      const char *what, mxc__image *out) {
  const unsigned char *p = buf;
  MXC_RETURN_ERROR_IF(channels != 1 && channels != 3, MXC_ERR_INVALID_ARGUMENT,
                      "%s: %d channels; expected 1 (gray) or 3 (RGB)", what,
                      channels);
  memset(out, 0, sizeof *out);
  if (is_jpeg(p, n)) return decode_jpeg(p, n, channels, what, out);
  if (is_png(p, n)) return decode_png(p, n, channels, what, out);
  return mxc__error_set(MXC_ERR_IO,
                        "%s: not a JPEG or PNG image (%zu bytes starting "
                        "%02x %02x %02x)",
                        what, n, n > 0 ? p[0] : 0, n > 1 ? p[1] : 0,
                        n > 2 ? p[2] : 0);
}

void mxc__image_release(mxc__image *im) {
  mxc__free(im->px);
  im->px = NULL;
}

/* HWC bytes to a CHW array of uint8 or float32 (values 0..255). */
static void hwc_to_chw(const mxc__image *im, int dtype, void *dst) {
  int64_t plane = im->h * im->w;
  for (int c = 0; c < im->c; ++c) {
    const uint8_t *src = im->px + c;
    for (int64_t i = 0; i < plane; ++i) {
      uint8_t v = src[i * im->c];
      if (dtype == MXC_DTYPE_UINT8) ((uint8_t *)dst)[c * plane + i] = v;
      else ((float *)dst)[c * plane + i] = (float)v;
    }
  }
}

int mxc__image_decode_array(const void *buf, size_t n, int channels,
                            int dtype, const char *what, mxc__ndarray **out) {
  MXC_RETURN_ERROR_IF(dtype != MXC_DTYPE_UINT8 && dtype != MXC_DTYPE_FLOAT32,
                      MXC_ERR_DTYPE, "%s: dtype %d; expected uint8 or float32",
                      what, dtype);
  mxc__image im;
  MXC_FORWARD_IF_ERROR(mxc__image_decode(buf, n, channels, what, &im));
  int64_t dims[3] = {im.c, im.h, im.w};
  mxc__shape s;
  const mxc__device cpu = {MXC_DEVICE_CPU, 0};
  int rc = mxc__shape_make(dims, 3, dtype == MXC_DTYPE_UINT8 ? 1 : 4, what, &s);
  if (rc == MXC_OK) rc = mxc__ndarray_create(&s, dtype, cpu, 0, out);
  /* A new array: no engine work can be pending on it yet. */
  if (rc == MXC_OK) hwc_to_chw(&im, dtype, mxc__ndarray_ptr(*out));
  mxc__image_release(&im);
  return rc;
}
