/* The image record iterator's augmenter (image_aug.h has the definition
 * this code follows step by step). */
#include "core/io/image_aug.h"

#include <math.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/resource/random.h"

/* A float image, HWC. */
typedef struct fimg {
  int64_t h, w;
  int c;
  float *v;
} fimg;

static int fimg_new(int64_t h, int64_t w, int c, fimg *out) {
  out->v = mxc__malloc((size_t)(h * w * c) * sizeof(float));
  MXC_RETURN_ERROR_IF(!out->v, MXC_ERR_OOM,
                      "image augmentation: out of memory for %lld x %lld",
                      (long long)h, (long long)w);
  out->h = h;
  out->w = w;
  out->c = c;
  return MXC_OK;
}

/* Replaces *img with next (freeing the old pixels). */
static void fimg_swap(fimg *img, fimg *next) {
  mxc__free(img->v);
  *img = *next;
}

static float unit(uint32_t w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

void mxc__aug_draws(uint64_t seed, uint64_t epoch, int64_t index,
                    float u[7]) {
  const uint32_t key[2] = {(uint32_t)seed,
                           (uint32_t)(seed >> 32) ^ MXC__AUG_KEY_TAG};
  uint32_t r[8];
  for (uint32_t b = 0; b < 2; ++b) {
    const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)((uint64_t)index >> 32),
                             (uint32_t)epoch, b};
    mxc__philox4x32_10(ctr, key, r + 4 * b);
  }
  for (int i = 0; i < 7; ++i) u[i] = unit(r[i]);
}

/* Source coordinate and weight for output index i of out along a side of
 * length in. */
static void src_coord(int64_t i, int64_t in, int64_t out, int64_t *i0,
                      int64_t *i1, float *t) {
  float s = ((float)i + 0.5f) * (float)in / (float)out - 0.5f;
  if (s < 0.0f) s = 0.0f;
  if (s > (float)(in - 1)) s = (float)(in - 1);
  *i0 = (int64_t)s;
  *i1 = *i0 + 1 < in ? *i0 + 1 : *i0;
  *t = s - (float)*i0;
}

static int resize_to(fimg *img, int64_t h, int64_t w) {
  fimg o = {0, 0, 0, NULL};
  MXC_FORWARD_IF_ERROR(fimg_new(h, w, img->c, &o));
  for (int64_t i = 0; i < h; ++i) {
    int64_t y0, y1;
    float ty;
    src_coord(i, img->h, h, &y0, &y1, &ty);
    for (int64_t j = 0; j < w; ++j) {
      int64_t x0, x1;
      float tx;
      src_coord(j, img->w, w, &x0, &x1, &tx);
      for (int c = 0; c < img->c; ++c) {
        const float *v = img->v;
        int64_t W = img->w, C = img->c;
        float top = (1 - tx) * v[(y0 * W + x0) * C + c] + tx * v[(y0 * W + x1) * C + c];
        float bot = (1 - tx) * v[(y1 * W + x0) * C + c] + tx * v[(y1 * W + x1) * C + c];
        o.v[(i * w + j) * img->c + c] = (1 - ty) * top + ty * bot;
      }
    }
  }
  fimg_swap(img, &o);
  return MXC_OK;
}

/* Bilinear sample at (y, x), fill outside [0, h-1] x [0, w-1]. */
static float sample(const fimg *img, float y, float x, int c, float fill) {
  if (y < 0 || x < 0 || y > (float)(img->h - 1) || x > (float)(img->w - 1)) {
    return fill;
  }
  int64_t y0 = (int64_t)y, x0 = (int64_t)x;
  int64_t y1 = y0 + 1 < img->h ? y0 + 1 : y0, x1 = x0 + 1 < img->w ? x0 + 1 : x0;
  float ty = y - (float)y0, tx = x - (float)x0;
  const float *v = img->v;
  int64_t W = img->w, C = img->c;
  float top = (1 - tx) * v[(y0 * W + x0) * C + c] + tx * v[(y0 * W + x1) * C + c];
  float bot = (1 - tx) * v[(y1 * W + x0) * C + c] + tx * v[(y1 * W + x1) * C + c];
  return (1 - ty) * top + ty * bot;
}

static int rotate(fimg *img, float degrees, float fill) {
  fimg o = {0, 0, 0, NULL};
  MXC_FORWARD_IF_ERROR(fimg_new(img->h, img->w, img->c, &o));
  float a = degrees * (float)(M_PI / 180.0), ca = cosf(a), sa = sinf(a);
  float cy = (float)(img->h - 1) * 0.5f, cx = (float)(img->w - 1) * 0.5f;
  for (int64_t i = 0; i < img->h; ++i) {
    for (int64_t j = 0; j < img->w; ++j) {
      float dy = (float)i - cy, dx = (float)j - cx;
      float sy = ca * dy - sa * dx + cy, sx = sa * dy + ca * dx + cx;
      for (int c = 0; c < img->c; ++c) {
        o.v[(i * img->w + j) * img->c + c] = sample(img, sy, sx, c, fill);
      }
    }
  }
  fimg_swap(img, &o);
  return MXC_OK;
}

static int pad_border(fimg *img, int64_t pad, float fill) {
  fimg o = {0, 0, 0, NULL};
  MXC_FORWARD_IF_ERROR(fimg_new(img->h + 2 * pad, img->w + 2 * pad, img->c, &o));
  for (int64_t i = 0; i < o.h * o.w * o.c; ++i) o.v[i] = fill;
  size_t row = (size_t)(img->w * img->c) * sizeof(float);
  for (int64_t i = 0; i < img->h; ++i) {
    memcpy(o.v + ((i + pad) * o.w + pad) * o.c, img->v + i * img->w * img->c, row);
  }
  fimg_swap(img, &o);
  return MXC_OK;
}

/* Steps 1-3: the geometry before the crop. */
static int resize_steps(fimg *img, const mxc__aug_param *p, const float u[7]) {
  if (p->resize > 0) {
    int64_t s = img->h < img->w ? img->h : img->w;
    int64_t h = (int64_t)((double)img->h * (double)p->resize / (double)s + 0.5);
    int64_t w = (int64_t)((double)img->w * (double)p->resize / (double)s + 0.5);
    MXC_FORWARD_IF_ERROR(resize_to(img, h < 1 ? 1 : h, w < 1 ? 1 : w));
  }
  if (p->max_rotate_angle > 0) {
    float deg = p->max_rotate_angle * (2 * u[3] - 1);
    MXC_FORWARD_IF_ERROR(rotate(img, deg, p->fill_value));
  }
  if (p->pad > 0) MXC_FORWARD_IF_ERROR(pad_border(img, p->pad, p->fill_value));
  if (img->h < p->h || img->w < p->w) {
    double f = fmax((double)p->h / (double)img->h, (double)p->w / (double)img->w);
    int64_t h = (int64_t)ceil((double)img->h * f), w = (int64_t)ceil((double)img->w * f);
    MXC_FORWARD_IF_ERROR(resize_to(img, h < p->h ? p->h : h, w < p->w ? p->w : w));
  }
  return MXC_OK;
}

static float luma(const float *px) {
  return 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
}

/* Step 6 on the crop: n pixels of c channels, HWC. */
static void jitter(float *v, int64_t n, int c, const mxc__aug_param *p,
                   const float u[7]) {
  if (p->brightness <= 0 && p->contrast <= 0 && p->saturation <= 0) return;
  float fb = p->brightness > 0 ? 1 + p->brightness * (2 * u[4] - 1) : 1;
  for (int64_t i = 0; i < n * c; ++i) v[i] *= fb;
  if (p->contrast > 0) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += c == 3 ? luma(v + 3 * i) : v[i];
    float m = (float)(sum / (double)n), fc = 1 + p->contrast * (2 * u[5] - 1);
    for (int64_t i = 0; i < n * c; ++i) v[i] = (v[i] - m) * fc + m;
  }
  if (p->saturation > 0 && c == 3) {
    float fs = 1 + p->saturation * (2 * u[6] - 1);
    for (int64_t i = 0; i < n; ++i) {
      float g = luma(v + 3 * i);
      for (int k = 0; k < 3; ++k) v[3 * i + k] = (v[3 * i + k] - g) * fs + g;
    }
  }
  for (int64_t i = 0; i < n * c; ++i) v[i] = v[i] < 0 ? 0 : v[i] > 255 ? 255 : v[i];
}

/* Steps 4, 5: the crop (mirrored or not) into crop (HWC). */
static void crop_into(const fimg *img, const mxc__aug_param *p,
                      const float u[7], float *crop) {
  int64_t y0 = (img->h - p->h) / 2, x0 = (img->w - p->w) / 2;
  if (p->rand_crop) {
    y0 = (int64_t)(u[0] * (float)(img->h - p->h + 1));
    x0 = (int64_t)(u[1] * (float)(img->w - p->w + 1));
  }
  int mirror = p->rand_mirror && u[2] < 0.5f;
  for (int64_t i = 0; i < p->h; ++i) {
    for (int64_t j = 0; j < p->w; ++j) {
      int64_t sj = x0 + (mirror ? p->w - 1 - j : j);
      memcpy(crop + (i * p->w + j) * img->c,
             img->v + ((y0 + i) * img->w + sj) * img->c,
             (size_t)img->c * sizeof(float));
    }
  }
}

/* Step 7: HWC crop of n pixels into CHW dst. */
static void normalize(const float *crop, int64_t n, int c,
                      const mxc__aug_param *p, float *dst) {
  for (int k = 0; k < c; ++k) {
    const float *mi = p->mean_img ? p->mean_img + k * n : NULL;
    float m = p->mean[k], s = p->scale / p->std[k];
    for (int64_t i = 0; i < n; ++i) {
      dst[k * n + i] = (crop[i * c + k] - (mi ? mi[i] : m)) * s;
    }
  }
}

int mxc__image_augment(const mxc__image *src, const mxc__aug_param *p,
                       const float u[7], float *dst) {
  fimg img = {0, 0, 0, NULL}, crop = {0, 0, 0, NULL};
  MXC_FORWARD_IF_ERROR(fimg_new(src->h, src->w, src->c, &img));
  for (int64_t i = 0; i < src->h * src->w * src->c; ++i) img.v[i] = src->px[i];
  int rc = resize_steps(&img, p, u);
  if (rc == MXC_OK) rc = fimg_new(p->h, p->w, src->c, &crop);
  if (rc != MXC_OK) {
    mxc__free(img.v);
    return rc;
  }
  crop_into(&img, p, u, crop.v);
  mxc__free(img.v);
  int64_t n = p->h * p->w;
  jitter(crop.v, n, src->c, p, u);
  normalize(crop.v, n, src->c, p, dst);
  mxc__free(crop.v);
  return MXC_OK;
}
