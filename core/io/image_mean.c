/* The mean image of the image record iterator (image_mean.h). */
#include "core/io/image_mean.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/shape.h"
#include "core/io/image.h"
#include "core/ndarray/io.h"
#include "mxc/mxc.h"

#define MEAN_KEY "mean_img"

int mxc__image_record_at(mxc__recordio *r, uint64_t off, const char *what,
                         mxc__image_header *h, const unsigned char **payload,
                         size_t *size) {
  int has = 0;
  MXC_FORWARD_IF_ERROR(mxc__recordio_seek(r, off));
  MXC_FORWARD_IF_ERROR(mxc__recordio_next(r, &has));
  MXC_RETURN_ERROR_IF(!has, MXC_ERR_IO, "%s: missing", what);
  size_t n;
  const unsigned char *d = mxc__recordio_data(r, &n);
  MXC_FORWARD_IF_ERROR(mxc__image_header_parse(d, n, h));
  *payload = d + h->payload_offset;
  *size = n - h->payload_offset;
  return MXC_OK;
}

/* ---- loading ---- */

/* "(3,12,14)" into buf. */
static const char *shape_str(const int64_t *dims, int ndim, char *buf,
                             size_t cap) {
  size_t at = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < ndim && at < cap; ++i) {
    at += (size_t)snprintf(buf + at, cap - at, "%s%" PRId64, i ? "," : "",
                           dims[i]);
  }
  if (at < cap) snprintf(buf + at, cap - at, ")");
  return buf;
}

/* The list's "mean_img" array, checked against data_shape. */
static int find_mean(const mxc__ndarray_list *l, const char *path,
                     const mxc__aug_param *aug, const mxc__ndarray **out) {
  const mxc__ndarray *a = NULL;
  for (int i = 0; i < l->n && !a; ++i) {
    if (!strcmp(l->names[i], MEAN_KEY)) a = l->arrays[i];
  }
  MXC_RETURN_ERROR_IF(!a, MXC_ERR_IO,
                      "mean_img: '%s' holds no array named \"" MEAN_KEY "\"",
                      path);
  MXC_RETURN_ERROR_IF(a->dtype != MXC_DTYPE_FLOAT32 ||
                          a->stype != MXC_STYPE_DEFAULT,
                      MXC_ERR_DTYPE,
                      "mean_img: '%s' holds a %s %s array; expected dense "
                      "float32",
                      path, mxc__stype_name(a->stype),
                      mxc__dtype_name(a->dtype));
  const int64_t want[3] = {aug->c, aug->h, aug->w};
  int same = a->shape.ndim == 3 && !memcmp(a->shape.dims, want, sizeof want);
  char got_s[160], want_s[64];
  MXC_RETURN_ERROR_IF(!same, MXC_ERR_SHAPE,
                      "mean_img: '%s' holds an array of shape %s; expected "
                      "data_shape %s",
                      path,
                      shape_str(a->shape.dims, a->shape.ndim, got_s,
                                sizeof got_s),
                      shape_str(want, 3, want_s, sizeof want_s));
  *out = a;
  return MXC_OK;
}

static int load_mean(const char *path, const mxc__aug_param *aug,
                     float *mean) {
  mxc__ndarray_list *l = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &l));
  const mxc__ndarray *a = NULL;
  int rc = find_mean(l, path, aug, &a);
  if (rc == MXC_OK) {
    rc = mxc__ndarray_copy_to_host(
        a, mean, (size_t)(aug->c * aug->h * aug->w) * sizeof *mean);
  }
  mxc__ndarray_list_free(l);
  return rc;
}

/* ---- computing ---- */

/* aug with every random step and the normalization off. */
static mxc__aug_param plain_steps(const mxc__aug_param *aug) {
  mxc__aug_param p = *aug;
  p.rand_crop = p.rand_mirror = 0;
  p.max_rotate_angle = p.brightness = p.contrast = p.saturation = 0;
  for (int c = 0; c < 3; ++c) {
    p.mean[c] = 0;
    p.std[c] = 1;
  }
  p.scale = 1;
  p.mean_img = NULL;
  return p;
}

/* Adds record i's plain crop (into tmp) to sum. */
static int add_record(mxc__recordio *r, const mxc__image_records *recs,
                      int64_t i, const mxc__aug_param *p, float *tmp,
                      double *sum) {
  char what[300];
  mxc__record_what(what, sizeof what, "mean_img: ", recs->rec_path, i);
  mxc__image_header h;
  const unsigned char *payload;
  size_t size;
  MXC_FORWARD_IF_ERROR(
      mxc__image_record_at(r, recs->offsets[i], what, &h, &payload, &size));
  mxc__image im;
  MXC_FORWARD_IF_ERROR(mxc__image_decode(payload, size, (int)p->c, what, &im));
  const float u[7] = {0};
  int rc = mxc__image_augment(&im, p, u, tmp);
  mxc__image_release(&im);
  MXC_FORWARD_IF_ERROR(rc);
  for (int64_t k = 0; k < p->c * p->h * p->w; ++k) sum[k] += tmp[k];
  return MXC_OK;
}

static int compute_mean(const mxc__image_records *recs,
                        const mxc__aug_param *aug, float *mean) {
  const mxc__aug_param p = plain_steps(aug);
  const int64_t n = p.c * p.h * p.w;
  double *sum = mxc__calloc((size_t)n, sizeof *sum);
  float *tmp = mxc__malloc((size_t)n * sizeof *tmp);
  mxc__recordio *r = NULL;
  int rc = sum && tmp ? MXC_OK
                      : mxc__error_set(MXC_ERR_OOM, "mean_img: out of memory");
  if (rc == MXC_OK) rc = mxc__recordio_open(recs->rec_path, NULL, 0, &r);
  for (int64_t i = 0; rc == MXC_OK && i < recs->n; ++i) {
    rc = add_record(r, recs, i, &p, tmp, sum);
  }
  for (int64_t k = 0; rc == MXC_OK && k < n; ++k) {
    mean[k] = (float)(sum[k] / (double)recs->n);
  }
  mxc__recordio_free(r);
  mxc__free(tmp);
  mxc__free(sum);
  return rc;
}

/* Saves mean as the file's one array, named "mean_img", in MXNet's
 * format (so MXNet reads it too). */
static int save_mean(const char *path, const mxc__aug_param *aug,
                     const float *mean) {
  const int64_t dims[3] = {aug->c, aug->h, aug->w};
  const mxc__device cpu = {MXC_DEVICE_CPU, 0};
  mxc__shape s;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(dims, 3, 4, "mean_img", &s));
  mxc__ndarray *a = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&s, MXC_DTYPE_FLOAT32, cpu, 0, &a));
  int rc = mxc__ndarray_copy_from_host(
      a, mean, (size_t)mxc__shape_size(&s) * sizeof *mean);
  const char *name = MEAN_KEY;
  if (rc == MXC_OK) {
    rc = mxc__ndarray_save_format(path, &a, &name, 1, MXC_FILE_FORMAT_MXNET);
  }
  mxc__ndarray_free(a);
  return rc;
}

int mxc__image_mean_get(const char *mean_path, const mxc__image_records *recs,
                        const mxc__aug_param *aug, float **out) {
  const int64_t n = aug->c * aug->h * aug->w; /* checked by data_shape */
  float *mean = mxc__malloc((size_t)n * sizeof *mean);
  MXC_RETURN_ERROR_IF(!mean, MXC_ERR_OOM, "mean_img: out of memory");
  int rc;
  if (access(mean_path, F_OK) == 0) {
    rc = load_mean(mean_path, aug, mean);
  } else {
    rc = compute_mean(recs, aug, mean);
    if (rc == MXC_OK) rc = save_mean(mean_path, aug, mean);
  }
  if (rc != MXC_OK) {
    mxc__free(mean);
    return rc;
  }
  *out = mean;
  return MXC_OK;
}
