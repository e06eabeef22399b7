/* Runs a model trained in Apache MXNet with mxc's predictor API: loads an
 * MXNet checkpoint (PREFIX-symbol.json + PREFIX-EEEE.params), classifies
 * the 10,000 Fashion-MNIST test images and prints the accuracy and the
 * images per second.
 *
 *   bazel run -c opt //examples:predict_fashion_mnist -- \
 *       [--prefix P] [--epoch N] [--data DIR] [--batch B] [--threads T]
 *
 * Defaults: the shared model ../shared/mxnet-models/mentalblood_fashion-mnist
 * (beside the source tree), epoch 39, /usr/share/datasets/fashion-mnist,
 * batches of 100, one thread. With --threads T, T predictors share one
 * copy of the weights (mxc_predictor_clone) and each thread classifies
 * every T-th batch; a last, smaller batch goes through a reshaped
 * predictor (mxc_predictor_reshape). The model was trained on pixels/255
 * normalised with the data set's mean 0.2860 and deviation 0.3530.
 *
 * Only the public API is used. The three lines an MXNet user needs are in
 * classify(): mxc_predictor_set_input, mxc_predictor_forward and
 * mxc_predictor_get_output, after mxc_predictor_create_from_checkpoint in
 * main(). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

#define CLASSES 10
#define PIXELS 784

typedef struct options {
  char prefix[1024];
  int epoch, batch, threads;
  const char *data;
} options;

/* The test set in memory: n images (normalised) and their labels. */
typedef struct test_set {
  int64_t n;
  float *x, *labels;
} test_set;

static int fail(const char *what) {
  fprintf(stderr, "predict_fashion_mnist: %s failed: %s\n", what,
          mxc_last_error());
  return 1;
}

/* ---- options -------------------------------------------------------------- */

static void default_prefix(char *out, size_t n) {
  const char *ws = getenv("BUILD_WORKSPACE_DIRECTORY");
  snprintf(out, n, "%s/../shared/mxnet-models/mentalblood_fashion-mnist",
           ws ? ws : ".");
}

static int parse(int argc, char **argv, options *o) {
  default_prefix(o->prefix, sizeof o->prefix);
  o->epoch = 39;
  o->batch = 100;
  o->threads = 1;
  o->data = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--prefix")) {
      snprintf(o->prefix, sizeof o->prefix, "%s", argv[i + 1]);
    } else if (!strcmp(argv[i], "--epoch")) {
      o->epoch = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "--data")) {
      o->data = argv[i + 1];
    } else if (!strcmp(argv[i], "--batch")) {
      o->batch = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "--threads")) {
      o->threads = atoi(argv[i + 1]);
    } else {
      return 0;
    }
  }
  return (argc % 2) == 1 && o->batch > 0 && o->threads > 0 &&
         o->threads <= 64;
}

/* ---- the test set --------------------------------------------------------- */

/* Appends the real (unpadded) rows of the iterator's current batch. */
static int append_batch(mxc_data_iter it, test_set *t) {
  mxc_ndarray d = NULL, l = NULL;
  int64_t pad = 0, rows = 0;
  int rc = mxc_data_iter_data(it, &d);
  if (rc == MXC_OK) rc = mxc_data_iter_label(it, &l);
  if (rc == MXC_OK) rc = mxc_data_iter_pad(it, &pad);
  if (rc == MXC_OK) rc = mxc_ndarray_size(l, &rows);
  float *x = malloc((size_t)rows * PIXELS * sizeof *x);
  float *y = malloc((size_t)rows * sizeof *y);
  if (rc == MXC_OK && x && y) {
    rc = mxc_ndarray_copy_to_host(d, x, (size_t)rows * PIXELS * sizeof *x);
  }
  if (rc == MXC_OK && x && y) {
    rc = mxc_ndarray_copy_to_host(l, y, (size_t)rows * sizeof *y);
  }
  if (rc == MXC_OK && x && y) {
    memcpy(t->x + t->n * PIXELS, x, (size_t)(rows - pad) * PIXELS * 4);
    memcpy(t->labels + t->n, y, (size_t)(rows - pad) * 4);
    t->n += rows - pad;
  }
  free(x);
  free(y);
  mxc_ndarray_free(d);
  mxc_ndarray_free(l);
  return rc != MXC_OK ? rc : (x && y ? MXC_OK : MXC_ERR_OOM);
}

static int load_test_set(const char *dir, test_set *t) {
  char img[1200], lab[1200];
  snprintf(img, sizeof img, "%s/t10k-images-idx3-ubyte.gz", dir);
  snprintf(lab, sizeof lab, "%s/t10k-labels-idx1-ubyte.gz", dir);
  mxc_data_iter it = NULL;
  int64_t total = 0;
  int has = 0;
  if (mxc_data_iter_idx_create(img, lab, 1000, 0, 0, 1, 1, MXC_LAST_BATCH_PAD,
                               &it) != MXC_OK ||
      mxc_data_iter_num_examples(it, &total) != MXC_OK) {
    mxc_data_iter_free(it);
    return fail("reading the Fashion-MNIST test set");
  }
  t->x = malloc((size_t)total * PIXELS * sizeof *t->x);
  t->labels = malloc((size_t)total * sizeof *t->labels);
  int rc = t->x && t->labels ? MXC_OK : MXC_ERR_OOM;
  while (rc == MXC_OK && mxc_data_iter_next(it, &has) == MXC_OK && has) {
    rc = append_batch(it, t);
  }
  mxc_data_iter_free(it);
  if (rc != MXC_OK) return fail("reading the Fashion-MNIST test set");
  for (int64_t i = 0; i < t->n * PIXELS; ++i) {
    t->x[i] = (t->x[i] - 0.2860f) / 0.3530f;
  }
  return 0;
}

/* ---- classification ------------------------------------------------------- */

static int argmax(const float *v) {
  int best = 0;
  for (int k = 1; k < CLASSES; ++k) best = v[k] > v[best] ? k : best;
  return best;
}

/* Classifies images [first, first + rows) with p (bound for rows images);
 * adds the correct ones to *correct. */
static int classify(mxc_predictor p, const test_set *t, int64_t first,
                    int64_t rows, int64_t *correct) {
  float probs[1000 * CLASSES];
  float *out = rows <= 1000 ? probs : malloc((size_t)rows * CLASSES * 4);
  if (!out) return MXC_ERR_OOM;
  int rc = mxc_predictor_set_input(p, "data", t->x + first * PIXELS,
                                   (size_t)rows * PIXELS * sizeof(float));
  if (rc == MXC_OK) rc = mxc_predictor_forward(p);
  if (rc == MXC_OK) {
    rc = mxc_predictor_get_output(p, 0, out, (size_t)rows * CLASSES * 4);
  }
  for (int64_t r = 0; rc == MXC_OK && r < rows; ++r) {
    *correct += argmax(out + r * CLASSES) == (int)t->labels[first + r];
  }
  if (out != probs) free(out);
  return rc;
}

typedef struct worker {
  pthread_t th;
  mxc_predictor p;
  const test_set *t;
  int index, stride, batch;
  int64_t full_batches, correct;
  int rc;
} worker;

/* Every stride-th full batch from index on, with this thread's predictor. */
static void *work(void *arg) {
  worker *w = arg;
  for (int64_t b = w->index; w->rc == MXC_OK && b < w->full_batches;
       b += w->stride) {
    w->rc = classify(w->p, w->t, b * w->batch, w->batch, &w->correct);
  }
  /* The message is the failing thread's own (mxc_last_error is per
   * thread), so it is printed here. */
  if (w->rc != MXC_OK) fail("classifying");
  return NULL;
}

/* The images left after the full batches, through a predictor reshaped to
 * their number (sharing the weights). */
static int classify_rest(mxc_predictor p, const test_set *t, int64_t first,
                         int64_t *correct) {
  int64_t rows = t->n - first;
  if (rows == 0) return MXC_OK;
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {rows, 1, 28, 28};
  mxc_predictor r = NULL;
  int rc = mxc_predictor_reshape(p, 1, names, ndims, dims, &r);
  if (rc == MXC_OK) rc = classify(r, t, first, rows, correct);
  mxc_predictor_free(r);
  return rc;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs the workers (worker 0 uses p itself, the others clones) and the
 * rest; *correct = the correctly classified images. */
static int run_all(mxc_predictor p, const options *o, const test_set *t,
                   int64_t *correct) {
  worker w[64];
  int64_t full = t->n / o->batch;
  int rc = MXC_OK, started = 0;
  for (int i = 0; i < o->threads; ++i) {
    w[i] = (worker){.p = p, .t = t, .index = i, .stride = o->threads,
                    .batch = o->batch, .full_batches = full};
    if (i > 0 && (rc = mxc_predictor_clone(p, &w[i].p)) != MXC_OK) break;
    if (pthread_create(&w[i].th, NULL, work, &w[i]) != 0) {
      if (i > 0) mxc_predictor_free(w[i].p);
      rc = MXC_ERR_INTERNAL;
      break;
    }
    started = i + 1;
  }
  for (int i = 0; i < started; ++i) {
    pthread_join(w[i].th, NULL);
    *correct += w[i].correct;
    rc = rc != MXC_OK ? rc : w[i].rc;
    if (i > 0) mxc_predictor_free(w[i].p);
  }
  if (rc == MXC_OK) rc = classify_rest(p, t, full * o->batch, correct);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  if (!parse(argc, argv, &o)) {
    fprintf(stderr,
            "usage: predict_fashion_mnist [--prefix P] [--epoch N] "
            "[--data DIR] [--batch B] [--threads T (1..64)]\n");
    return 2;
  }
  test_set t = {0};
  if (load_test_set(o.data, &t) != 0) return 1;
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {o.batch, 1, 28, 28};
  mxc_predictor p = NULL;
  if (mxc_predictor_create_from_checkpoint(o.prefix, o.epoch, MXC_DEVICE_CPU,
                                           0, 1, names, ndims, dims, NULL, 0,
                                           NULL, &p) != MXC_OK) {
    free(t.x);
    free(t.labels);
    return fail("loading the checkpoint");
  }
  int64_t correct = 0;
  double t0 = now();
  int rc = run_all(p, &o, &t, &correct);
  double secs = now() - t0;
  mxc_predictor_free(p);
  if (rc == MXC_OK) {
    printf("%lld images, %d thread(s), batch %d: accuracy %.4f, %.0f "
           "images/s\n",
           (long long)t.n, o.threads, o.batch, (double)correct / (double)t.n,
           (double)t.n / secs);
  }
  free(t.x);
  free(t.labels);
  return rc == MXC_OK ? 0 : fail("classifying");
}
