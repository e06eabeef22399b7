/* The image record iterator (image_iter.h).
 *
 * Work is one example: task t of an epoch is row t % B of batch t / B and
 * reads record order[t % n] of the part. Worker threads claim tasks in
 * order, at most prefetch_buffer batches ahead of the consumer, and write
 * straight into that batch's arrays (new arrays no engine work knows
 * yet). A ring of prefetch_buffer slots holds the batches in flight; the
 * consumer takes a slot's arrays once all B rows are done. Everything the
 * workers and the consumer share is guarded by one mutex: a claim or a
 * completion is a few instructions under it, the decode runs outside. */
#include "core/io/image_iter.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/shape.h"
#include "core/io/image_aug.h"
#include "core/io/image_mean.h"
#include "core/io/recordio.h"

/* Bounds on the thread and prefetch options: far above any useful value,
 * low enough that a typo cannot start thousands of threads. */
#define MAX_THREADS 64
#define MAX_PREFETCH 256

typedef struct img_opts {
  char *rec_path;
  char *mean_img_path; /* NULL or "": none */
  int mean_rgb_given;  /* a mean_r/g/b parameter was given */
  mxc__aug_param aug;
  int64_t batch, label_width, threads, prefetch, num_parts, part_index;
  int64_t shuffle, round_batch, seed;
} img_opts;

typedef struct slot {
  int64_t batch; /* -1: free */
  int64_t done;  /* rows finished */
  mxc__ndarray *data, *label;
  int code; /* first failure of a row, with its message */
  char msg[MXC__ERROR_MAX];
} slot;

typedef struct img_iter img_iter;

typedef struct worker {
  img_iter *it;
  mxc__recordio *rec;
  pthread_t thread;
  int started;
} worker;

struct img_iter {
  img_opts o;
  float *mean_img; /* the mean image (o.aug.mean_img points here), or NULL */
  uint64_t *offsets_all; /* of every record of the file, file order */
  int64_t n_all;         /* records in the file */
  const uint64_t *offsets; /* of the part's records: offsets_all + first */
  int64_t n;               /* records in the part */
  int64_t first;           /* the file index of the part's first record */
  int64_t *order;
  uint64_t epoch;
  int64_t n_batches;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  slot *slots;
  int64_t consumer;  /* the next batch next() hands out */
  int64_t next_task; /* the next task a worker claims */
  int64_t active;    /* tasks being worked on */
  int stop;
  worker *workers;
  mxc__ndarray *data, *label; /* the current batch */
  int64_t pad;
};

/* ---- options ---- */

enum { OPT_STR, OPT_I64, OPT_F32, OPT_SHAPE };

typedef struct opt_def {
  const char *name;
  int kind;
  size_t offset;
  double lo, hi;
} opt_def;

#define OPT(n, k, f, lo, hi) {n, k, offsetof(img_opts, f), lo, hi}
static const opt_def kOpts[] = {
    OPT("path_imgrec", OPT_STR, rec_path, 0, 0),
    OPT("path_imgidx", OPT_STR, rec_path, 0, 0), /* accepted, not needed */
    OPT("data_shape", OPT_SHAPE, aug, 0, 0),
    OPT("batch_size", OPT_I64, batch, 1, 1 << 20),
    OPT("label_width", OPT_I64, label_width, 1, 1 << 16),
    OPT("shuffle", OPT_I64, shuffle, 0, 1),
    OPT("seed", OPT_I64, seed, 0, 9.2e18),
    OPT("round_batch", OPT_I64, round_batch, 0, 1),
    OPT("preprocess_threads", OPT_I64, threads, 1, MAX_THREADS),
    OPT("prefetch_buffer", OPT_I64, prefetch, 1, MAX_PREFETCH),
    OPT("num_parts", OPT_I64, num_parts, 1, 1 << 30),
    OPT("part_index", OPT_I64, part_index, 0, 1 << 30),
    OPT("resize", OPT_I64, aug.resize, -1, 1 << 15),
    OPT("pad", OPT_I64, aug.pad, 0, 1 << 12),
    OPT("rand_crop", OPT_I64, aug.rand_crop, 0, 1),
    OPT("rand_mirror", OPT_I64, aug.rand_mirror, 0, 1),
    OPT("max_rotate_angle", OPT_F32, aug.max_rotate_angle, 0, 180),
    OPT("fill_value", OPT_F32, aug.fill_value, 0, 255),
    OPT("brightness", OPT_F32, aug.brightness, 0, 1),
    OPT("contrast", OPT_F32, aug.contrast, 0, 1),
    OPT("saturation", OPT_F32, aug.saturation, 0, 1),
    OPT("mean_img", OPT_STR, mean_img_path, 0, 0),
    OPT("mean_r", OPT_F32, aug.mean[0], -1e6, 1e6),
    OPT("mean_g", OPT_F32, aug.mean[1], -1e6, 1e6),
    OPT("mean_b", OPT_F32, aug.mean[2], -1e6, 1e6),
    OPT("std_r", OPT_F32, aug.std[0], 1e-6, 1e6),
    OPT("std_g", OPT_F32, aug.std[1], 1e-6, 1e6),
    OPT("std_b", OPT_F32, aug.std[2], 1e-6, 1e6),
    OPT("scale", OPT_F32, aug.scale, -1e6, 1e6),
};
#define N_OPTS ((int)(sizeof kOpts / sizeof kOpts[0]))

static void opts_default(img_opts *o) {
  memset(o, 0, sizeof *o);
  o->label_width = 1;
  o->round_batch = 1;
  o->threads = 2;
  o->prefetch = 4;
  o->num_parts = 1;
  o->aug.fill_value = 255;
  o->aug.scale = 1;
  for (int c = 0; c < 3; ++c) o->aug.std[c] = 1;
}

static int parse_number(const opt_def *d, const char *v, double *out) {
  char *end;
  double x = strtod(v, &end);
  if (end != v && *end == '\0' && x >= d->lo && x <= d->hi) {
    *out = x;
    return MXC_OK;
  }
  if (!strcmp(v, "true") || !strcmp(v, "True")) return *out = 1, MXC_OK;
  if (!strcmp(v, "false") || !strcmp(v, "False")) return *out = 0, MXC_OK;
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "image record iter: %s = \"%s\"; expected a number "
                        "in [%g, %g]",
                        d->name, v, d->lo, d->hi);
}

/* "(3, 224, 224)" or "3,224,224": channels 1 or 3, sides 1..32768. */
static int parse_shape(const char *v, mxc__aug_param *a) {
  long long c, h, w;
  char tail;
  const char *p = v + strspn(v, " (");
  int got = sscanf(p, "%lld , %lld , %lld %c", &c, &h, &w, &tail);
  int ok = got >= 3 && (got == 3 || tail == ')') && (c == 1 || c == 3) &&
           h >= 1 && w >= 1 && h <= 32768 && w <= 32768;
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: data_shape = \"%s\"; expected "
                      "(channels, height, width) with channels 1 or 3 and "
                      "sides 1..32768",
                      v);
  a->c = c;
  a->h = h;
  a->w = w;
  return MXC_OK;
}

static int set_opt(img_opts *o, const opt_def *d, const char *v) {
  char *field = (char *)o + d->offset;
  if (d->kind == OPT_SHAPE) return parse_shape(v, &o->aug);
  if (d->kind == OPT_STR) {
    if (!strcmp(d->name, "path_imgidx")) return MXC_OK;
    char *s = mxc__strdup(v);
    MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "image record iter: out of memory");
    mxc__free(*(char **)field);
    *(char **)field = s;
    return MXC_OK;
  }
  double x = 0;
  MXC_FORWARD_IF_ERROR(parse_number(d, v, &x));
  if (!strncmp(d->name, "mean_", 5)) o->mean_rgb_given = 1;
  if (d->kind == OPT_F32) *(float *)field = (float)x;
  else if (!strncmp(d->name, "rand_", 5)) *(int *)field = (int)x;
  else *(int64_t *)field = (int64_t)x;
  return MXC_OK;
}

static int parse_opt(img_opts *o, const char *k, const char *v) {
  MXC_RETURN_ERROR_IF(!k || !v, MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: a NULL %s", k ? "value" : "key");
  for (int i = 0; i < N_OPTS; ++i) {
    if (!strcmp(kOpts[i].name, k)) return set_opt(o, &kOpts[i], v);
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "image record iter: unknown parameter \"%s\" (see "
                        "mxc_data_iter_image_record_create for the list)",
                        k);
}

static int check_opts(const img_opts *o) {
  MXC_RETURN_ERROR_IF(!o->rec_path || o->aug.c == 0 || o->batch == 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: path_imgrec, data_shape and "
                      "batch_size are required");
  MXC_RETURN_ERROR_IF(o->part_index >= o->num_parts, MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: part_index %" PRId64 " with "
                      "num_parts %" PRId64 "; expected part_index < num_parts",
                      o->part_index, o->num_parts);
  MXC_RETURN_ERROR_IF(o->mean_img_path && *o->mean_img_path &&
                          o->mean_rgb_given,
                      MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: mean_img and mean_r/g/b are both "
                      "given; expected one way of subtracting a mean (a "
                      "mean image, or one value per channel)");
  return MXC_OK;
}

static int parse_opts(int n, const char *const *keys, const char *const *vals,
                      img_opts *o) {
  opts_default(o);
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "image record iter: %d parameters with keys %s and "
                      "values %s", n, keys ? "non-NULL" : "NULL",
                      vals ? "non-NULL" : "NULL");
  for (int i = 0; i < n; ++i) MXC_FORWARD_IF_ERROR(parse_opt(o, keys[i], vals[i]));
  return check_opts(o);
}

/* ---- the part's records ---- */

/* Offsets of every record (headers read, data seeked over). */
static int scan_offsets(img_iter *it, mxc__recordio *r) {
  int64_t cap = 1024, n = 0;
  uint64_t *off = mxc__malloc((size_t)cap * sizeof *off);
  MXC_RETURN_ERROR_IF(!off, MXC_ERR_OOM, "image record iter: out of memory");
  for (;;) {
    int has = 0;
    uint64_t start;
    int rc = mxc__recordio_skip(r, &start, &has);
    if (rc == MXC_OK && has && n == cap) {
      uint64_t *p = mxc__realloc(off, (size_t)(cap *= 2) * sizeof *off);
      rc = p ? (off = p, MXC_OK)
             : mxc__error_set(MXC_ERR_OOM, "image record iter: out of memory");
    }
    if (rc != MXC_OK) return mxc__free(off), rc;
    if (!has) break;
    off[n++] = start;
  }
  it->offsets_all = off;
  it->n_all = n;
  return MXC_OK;
}

/* Selects part part_index of num_parts: records [lo, hi) of the file
 * (iter.h's mxc__iter_part_range). An empty part is an error (a worker
 * with nothing to read is a misconfigured job), and leaves the part as
 * it was. Before the workers start, or under mu with them drained: no
 * worker reads these fields while it runs. */
static int select_part(img_iter *it, int64_t num_parts, int64_t part_index) {
  int64_t lo, hi;
  mxc__iter_part_range(it->n_all, num_parts, part_index, &lo, &hi);
  MXC_RETURN_ERROR_IF(lo == hi, MXC_ERR_IO,
                      "image record iter: '%s' part %" PRId64 " of %" PRId64
                      " holds no records (the file has %" PRId64 ")",
                      it->o.rec_path, part_index, num_parts, it->n_all);
  it->o.num_parts = num_parts;
  it->o.part_index = part_index;
  it->offsets = it->offsets_all + lo;
  it->n = hi - lo;
  it->first = lo;
  int64_t b = it->o.batch;
  it->n_batches = it->o.round_batch ? (it->n + b - 1) / b : it->n / b;
  return MXC_OK;
}

/* ---- one example ---- */

static int read_example(img_iter *it, mxc__recordio *r, int64_t rec,
                        uint64_t epoch, float *data, float *label) {
  char what[300];
  mxc__record_what(what, sizeof what, "", it->o.rec_path, it->first + rec);
  mxc__image_header h;
  const unsigned char *payload;
  size_t size;
  MXC_FORWARD_IF_ERROR(mxc__image_record_at(r, it->offsets[rec], what, &h,
                                            &payload, &size));
  uint32_t n_labels = h.flag ? h.flag : 1;
  MXC_RETURN_ERROR_IF(n_labels < (uint64_t)it->o.label_width, MXC_ERR_IO,
                      "%s: %u labels; label_width is %" PRId64, what, n_labels,
                      it->o.label_width);
  for (int64_t k = 0; k < it->o.label_width; ++k) {
    label[k] = mxc__image_header_label(&h, (uint32_t)k);
  }
  mxc__image im;
  MXC_FORWARD_IF_ERROR(
      mxc__image_decode(payload, size, (int)it->o.aug.c, what, &im));
  float u[7];
  mxc__aug_draws((uint64_t)it->o.seed, epoch, it->first + rec, u);
  int rc = mxc__image_augment(&im, &it->o.aug, u, data);
  mxc__image_release(&im);
  return rc;
}

/* ---- batches in flight ---- */

static int new_batch(const img_iter *it, slot *s) {
  const mxc__device cpu = {MXC_DEVICE_CPU, 0};
  const mxc__aug_param *a = &it->o.aug;
  int64_t dd[4] = {it->o.batch, a->c, a->h, a->w};
  int64_t ld[2] = {it->o.batch, it->o.label_width};
  mxc__shape ds, ls;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(dd, 4, 4, "image record iter", &ds));
  MXC_FORWARD_IF_ERROR(mxc__shape_make(ld, it->o.label_width == 1 ? 1 : 2, 4,
                                       "image record iter", &ls));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&ds, MXC_DTYPE_FLOAT32, cpu, 0,
                                           &s->data));
  int rc = mxc__ndarray_create(&ls, MXC_DTYPE_FLOAT32, cpu, 0, &s->label);
  if (rc != MXC_OK) {
    mxc__ndarray_free(s->data);
    s->data = NULL;
  }
  return rc;
}

static void slot_clear(slot *s) {
  mxc__ndarray_free(s->data);
  mxc__ndarray_free(s->label);
  s->data = s->label = NULL;
  s->batch = -1;
  s->done = 0;
  s->code = MXC_OK;
}

/* The slot of batch b, its arrays made on its first claim (under mu). */
static slot *slot_of(img_iter *it, int64_t b) {
  slot *s = &it->slots[b % it->o.prefetch];
  if (s->batch != b) {
    slot_clear(s);
    s->batch = b;
    s->code = new_batch(it, s);
    if (s->code != MXC_OK) snprintf(s->msg, sizeof s->msg, "%s", mxc__error_msg());
  }
  return s;
}

static int claimable(const img_iter *it) {
  int64_t b = it->next_task / it->o.batch;
  return b < it->n_batches && b < it->consumer + it->o.prefetch;
}

/* Runs task t of slot s outside the lock; records a failure in s. `rc` is
 * s->code as read under the lock: another worker of the same batch may set
 * s->code while this one runs, so it is never read here without mu. */
static void run_task(img_iter *it, mxc__recordio *r, slot *s, int64_t t,
                     uint64_t epoch, int64_t rec, int rc) {
  int64_t row = t % it->o.batch;
  const mxc__aug_param *a = &it->o.aug;
  if (rc == MXC_OK) {
    float *d = (float *)mxc__ndarray_ptr(s->data) + row * a->c * a->h * a->w;
    float *l = (float *)mxc__ndarray_ptr(s->label) + row * it->o.label_width;
    rc = read_example(it, r, rec, epoch, d, l);
  }
  pthread_mutex_lock(&it->mu);
  if (rc != MXC_OK && s->code == MXC_OK) {
    s->code = rc;
    snprintf(s->msg, sizeof s->msg, "%s", mxc__error_msg());
  }
  s->done++;
  it->active--;
  pthread_cond_broadcast(&it->cv_done);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  img_iter *it = w->it;
  pthread_mutex_lock(&it->mu);
  for (;;) {
    while (!it->stop && !claimable(it)) pthread_cond_wait(&it->cv_work, &it->mu);
    if (it->stop) break;
    int64_t t = it->next_task++;
    slot *s = slot_of(it, t / it->o.batch);
    int64_t rec = it->order[t % it->n];
    it->active++;
    uint64_t epoch = it->epoch;
    int code = s->code;
    pthread_mutex_unlock(&it->mu);
    run_task(it, w->rec, s, t, epoch, rec, code); /* returns with mu held */
  }
  pthread_mutex_unlock(&it->mu);
  return NULL;
}

/* ---- the iterator interface ---- */

static void drop_current(img_iter *it) {
  mxc__ndarray_free(it->data);
  mxc__ndarray_free(it->label);
  it->data = it->label = NULL;
  it->pad = 0;
}

/* Hands out batch it->consumer (under mu, its rows all done). */
static int take_batch(img_iter *it, slot *s) {
  int rc = s->code;
  if (rc != MXC_OK) {
    mxc__error_set_raw(rc, s->msg);
    slot_clear(s);
  } else {
    it->data = s->data;
    it->label = s->label;
    s->data = s->label = NULL;
    slot_clear(s);
    int64_t end = (it->consumer + 1) * it->o.batch;
    it->pad = end > it->n ? end - it->n : 0;
  }
  it->consumer++;
  pthread_cond_broadcast(&it->cv_work);
  return rc;
}

static int img_next(void *impl, int *out_has) {
  img_iter *it = impl;
  drop_current(it);
  pthread_mutex_lock(&it->mu);
  int rc = MXC_OK;
  *out_has = it->consumer < it->n_batches;
  if (*out_has) {
    slot *s = &it->slots[it->consumer % it->o.prefetch];
    while (s->batch != it->consumer || s->done < it->o.batch) {
      pthread_cond_wait(&it->cv_done, &it->mu);
    }
    rc = take_batch(it, s);
  }
  pthread_mutex_unlock(&it->mu);
  if (rc != MXC_OK) *out_has = 0;
  return rc;
}

static void start_epoch(img_iter *it) {
  mxc__iter_order(it->order, it->n, (int)it->o.shuffle, (uint64_t)it->o.seed,
                  it->epoch);
  it->consumer = 0;
  it->next_task = 0;
}

/* Stops the epoch's work (under mu): nothing left to claim, the tasks
 * running finished, the batches in flight dropped. The workers then wait
 * for start_epoch. */
static void drain(img_iter *it) {
  it->next_task = it->n_batches * it->o.batch;
  while (it->active > 0) pthread_cond_wait(&it->cv_done, &it->mu);
  for (int64_t i = 0; i < it->o.prefetch; ++i) slot_clear(&it->slots[i]);
}

static int img_reset(void *impl) {
  img_iter *it = impl;
  drop_current(it);
  pthread_mutex_lock(&it->mu);
  drain(it);
  it->epoch++;
  start_epoch(it);
  pthread_cond_broadcast(&it->cv_work);
  pthread_mutex_unlock(&it->mu);
  return MXC_OK;
}

/* At an epoch's start (iter.c checks) the workers may already be
 * prefetching the old part's first batches: drop them, switch, and start
 * the same epoch over on the new part. */
static int img_set_parts(void *impl, int64_t num_parts, int64_t part_index) {
  img_iter *it = impl;
  drop_current(it);
  pthread_mutex_lock(&it->mu);
  drain(it);
  int rc = select_part(it, num_parts, part_index);
  start_epoch(it);
  pthread_cond_broadcast(&it->cv_work);
  pthread_mutex_unlock(&it->mu);
  return rc;
}

static void img_current(const void *impl, const mxc__ndarray **data,
                        const mxc__ndarray **label, int64_t *pad) {
  const img_iter *it = impl;
  *data = it->data;
  *label = it->label;
  *pad = it->pad;
}

static int img_num_examples(const void *impl, int64_t *out) {
  *out = ((const img_iter *)impl)->n;
  return MXC_OK;
}

static void stop_workers(img_iter *it) {
  pthread_mutex_lock(&it->mu);
  it->stop = 1;
  pthread_cond_broadcast(&it->cv_work);
  pthread_mutex_unlock(&it->mu);
  for (int64_t i = 0; i < it->o.threads; ++i) {
    if (it->workers[i].started) pthread_join(it->workers[i].thread, NULL);
  }
}

static void img_free(void *impl) {
  img_iter *it = impl;
  if (!it) return;
  if (it->workers) {
    stop_workers(it);
    for (int64_t i = 0; i < it->o.threads; ++i) {
      mxc__recordio_free(it->workers[i].rec);
    }
  }
  for (int64_t i = 0; it->slots && i < it->o.prefetch; ++i) {
    slot_clear(&it->slots[i]);
  }
  drop_current(it);
  pthread_cond_destroy(&it->cv_work);
  pthread_cond_destroy(&it->cv_done);
  pthread_mutex_destroy(&it->mu);
  mxc__free(it->workers);
  mxc__free(it->slots);
  mxc__free(it->order);
  mxc__free(it->offsets_all);
  mxc__free(it->mean_img);
  mxc__free(it->o.mean_img_path);
  mxc__free(it->o.rec_path);
  mxc__free(it);
}

static const mxc__iter_ops kImageIterOps = {
    img_next, img_reset, img_current, img_num_examples, img_free,
    "image_record_iter_next", img_set_parts};

/* ---- creation ---- */

/* order holds n_all entries: any part fits (img_set_parts). */
static int alloc_state(img_iter *it) {
  it->order = mxc__calloc((size_t)it->n_all, sizeof *it->order);
  it->slots = mxc__calloc((size_t)it->o.prefetch, sizeof *it->slots);
  it->workers = mxc__calloc((size_t)it->o.threads, sizeof *it->workers);
  MXC_RETURN_ERROR_IF(!it->order || !it->slots || !it->workers, MXC_ERR_OOM,
                      "image record iter: out of memory");
  for (int64_t i = 0; i < it->o.prefetch; ++i) it->slots[i].batch = -1;
  return MXC_OK;
}

static int start_workers(img_iter *it) {
  for (int64_t i = 0; i < it->o.threads; ++i) {
    worker *w = &it->workers[i];
    w->it = it;
    MXC_FORWARD_IF_ERROR(mxc__recordio_open(it->o.rec_path, NULL, 0, &w->rec));
  }
  start_epoch(it);
  for (int64_t i = 0; i < it->o.threads; ++i) {
    worker *w = &it->workers[i];
    MXC_RETURN_ERROR_IF(pthread_create(&w->thread, NULL, worker_main, w) != 0,
                        MXC_ERR_OOM,
                        "image record iter: cannot start a worker thread");
    w->started = 1;
  }
  return MXC_OK;
}

static int open_part(img_iter *it) {
  mxc__recordio *r;
  MXC_FORWARD_IF_ERROR(mxc__recordio_open(it->o.rec_path, NULL, 0, &r));
  int rc = scan_offsets(it, r);
  mxc__recordio_free(r);
  MXC_FORWARD_IF_ERROR(rc);
  return select_part(it, it->o.num_parts, it->o.part_index);
}

/* The mean image, before the workers start (they read it). */
static int load_mean(img_iter *it) {
  if (!it->o.mean_img_path || !*it->o.mean_img_path) return MXC_OK;
  const mxc__image_records recs = {it->o.rec_path, it->offsets_all,
                                   it->n_all};
  MXC_FORWARD_IF_ERROR(mxc__image_mean_get(it->o.mean_img_path, &recs,
                                           &it->o.aug, &it->mean_img));
  it->o.aug.mean_img = it->mean_img;
  return MXC_OK;
}

static int image_iter_new(int n, const char *const *keys,
                          const char *const *vals, img_iter *it) {
  pthread_mutex_init(&it->mu, NULL);
  pthread_cond_init(&it->cv_work, NULL);
  pthread_cond_init(&it->cv_done, NULL);
  MXC_FORWARD_IF_ERROR(parse_opts(n, keys, vals, &it->o));
  MXC_FORWARD_IF_ERROR(open_part(it));
  MXC_FORWARD_IF_ERROR(load_mean(it));
  MXC_FORWARD_IF_ERROR(alloc_state(it));
  return start_workers(it);
}

int mxc__iter_image_record_create(int n, const char *const *keys,
                                  const char *const *vals, mxc__iter **out) {
  img_iter *it = mxc__calloc(1, sizeof *it);
  MXC_RETURN_ERROR_IF(!it, MXC_ERR_OOM, "image record iter: out of memory");
  int rc = image_iter_new(n, keys, vals, it);
  if (rc != MXC_OK) {
    img_free(it);
    return rc;
  }
  return mxc__iter_new(&kImageIterOps, it, out);
}
