/* The data pipeline (issue 18): mxc's image record iterator against
 * PyTorch's DataLoader on the same JPEG files, then the cost of a
 * training step that waits on the iterator. Public API only.
 *
 * The data set (scripts/make_bench_images.py, in the cache folder
 * $MXC_BENCH_CACHE/data-N, made on first use): N synthetic color JPEGs,
 * shorter side 256, quality 90, in 10 class folders, packed as they are by
 * mxc-im2rec into bench.rec. Both sides do the same work per image:
 * decode, a random 224 x 224 crop, a random horizontal flip, conversion to
 * float32 CHW and per-channel normalization with ImageNet's mean and std;
 * batch 64, shuffled, T decoding threads (mxc's preprocess_threads,
 * DataLoader's num_workers with one torch thread each).
 *
 * Prints name=value lines:
 *   cpu, data_threads (T), data_images (N), data_batch
 *   image_iter_images_per_s         best of --epochs timed epochs (after
 *   image_iter_median_images_per_s  --warmup epochs), whole epochs
 *   image_iter_torch_images_per_s   the same for PyTorch (bench/data_torch.py,
 *   image_iter_torch_median_...     run in the same invocation)
 *   image_iter_ratio_vs_torch       mxc / torch images per second (best
 *                                   epochs; goal >= 1.5)
 *   train_step_ms_from_iter         a small CNN's training step (below) fed
 *   train_step_ms_in_memory         by the iterator / on one batch held in
 *   data_wait_ms_per_step           memory; the time next() blocked per
 *   train_step_ratio_iter_vs_memory step, and the ratio (goal: 1, no wait)
 * Both sides must see every image once per epoch with the same labels
 * (image counts and label sums are compared) and make the same values of
 * them up to where the random crops fall (the first epoch's mean per
 * channel, image_iter_mean_r/g/b, and standard deviation, image_iter_std,
 * against PyTorch's): exit status 1 otherwise. The first epoch copies its
 * batches out for that, so it should be a warm-up one (--quick's is not).
 *
 * The training step: conv 5x5/2 (16) - relu - max pool 2 - conv 3x3 (32) -
 * relu - max pool 2 - conv 3x3 (64) - relu - global average pool - fully
 * connected (10) - softmax, on the iterator's 3 x 224 x 224 batches:
 * copy the batch into the executor, forward, backward, sgd_mom_update of
 * every parameter, and the loss (which waits for the forward, as a
 * training loop's metric does; the backward and the updates overlap with
 * the next batch's wait).
 *
 * Usage: data [--images N (2000)] [--threads T (the CPU count)]
 *             [--batch B (64)] [--epochs E (3)] [--warmup W (1)]
 *             [--steps S (20)] [--quick (48 images, batch 16, one epoch,
 *             no warm-up, 2 steps: a smoke run)] [--no-torch]
 *             [--python PATH]
 * Run as `bazel run -c opt //bench:data` or bazel-bin/bench/data. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_NAME "bench data"
#include "bench/bench_params.h"
#include "bench/bench_util.h"
#include "bench/resnet_util.h"

#define CROP 224
#define MAX_EPOCHS 100
#define SEED 7
#define MEAN_TOL 0.1 /* see same_values */
#define STD_TOL 0.05

typedef struct opts {
  int images, threads, batch, epochs, warmup, steps, torch;
  const char *python, *argv0;
  char dir[BENCH_PATH]; /* the data set's cache folder */
} opts;

/* Sums over the values of an epoch's images, per channel. */
typedef struct moments {
  double sum[3], sq[3];
  int64_t n; /* values per channel */
} moments;

/* What one side measured over its timed epochs. */
typedef struct epochs {
  double best, median; /* images per second */
  int64_t images;      /* per epoch */
  double label_sum;    /* of the last epoch */
  moments m;           /* of the first epoch */
} epochs;

static void die(const char *what) {
  fprintf(stderr, "bench data: %s\n", what);
  exit(1);
}

/* ---- the command line ---------------------------------------------------- */

static int parse_int(const char *v, int lo, int hi) {
  char *end = NULL;
  long x = v ? strtol(v, &end, 10) : 0;
  if (v == NULL || *end != '\0' || x < lo || x > hi) {
    fprintf(stderr, "bench data: '%s': expected %d..%d\n", v ? v : "", lo, hi);
    exit(1);
  }
  return (int)x;
}

static void set_quick(opts *o) {
  o->images = 48;
  o->batch = 16;
  o->epochs = 1;
  o->warmup = 0;
  o->steps = 2;
}

/* Options taking a number; returns 0 when a is not one of them. */
static int parse_number_opt(opts *o, const char *a, const char *v) {
  static const struct {
    const char *name;
    size_t field;
    int lo, hi;
  } table[] = {
      {"--images", offsetof(opts, images), 1, 10000000},
      {"--threads", offsetof(opts, threads), 1, 1024},
      {"--batch", offsetof(opts, batch), 1, 4096},
      {"--epochs", offsetof(opts, epochs), 1, MAX_EPOCHS},
      {"--warmup", offsetof(opts, warmup), 0, MAX_EPOCHS},
      {"--steps", offsetof(opts, steps), 1, 100000},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (strcmp(a, table[i].name) == 0) {
      *(int *)((char *)o + table[i].field) =
          parse_int(v, table[i].lo, table[i].hi);
      return 1;
    }
  }
  return 0;
}

static void opts_default(opts *o, const char *argv0) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  memset(o, 0, sizeof *o);
  o->images = 2000;
  o->threads = cpus > 0 ? (int)cpus : 1;
  o->batch = 64;
  o->epochs = 3;
  o->warmup = 1;
  o->steps = 20;
  o->torch = 1;
  o->python = bench_python();
  o->argv0 = argv0;
}

static void parse(int argc, char **argv, opts *o) {
  opts_default(o, argv[0]);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      set_quick(o);
    } else if (strcmp(a, "--no-torch") == 0) {
      o->torch = 0;
    } else if (strcmp(a, "--python") == 0 && v != NULL) {
      o->python = argv[++i];
    } else if (parse_number_opt(o, a, v)) {
      ++i;
    } else {
      fprintf(stderr, "bench data: unknown option or missing value: %s\n", a);
      exit(1);
    }
  }
}

/* ---- the data set -------------------------------------------------------- */

/* Runs scripts/make_bench_images.py (at once when the cache is up to date)
 * into <cache>/data-N. */
static void make_data(opts *o) {
  char cache[BENCH_PATH], script[BENCH_PATH], im2rec[BENCH_PATH];
  bench_cache_dir(cache);
  snprintf(o->dir, sizeof o->dir, "%.4000s/data-%d", cache, o->images);
  bench_find(o->argv0, "scripts/make_bench_images.py", script);
  bench_find(o->argv0, "examples/mxc-im2rec", im2rec);
  char cmd[4 * BENCH_PATH];
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' --count %d --im2rec '%s' >&2",
           o->python, script, o->dir, o->images, im2rec);
  int status = system(cmd);
  if (status != 0) {
    fprintf(stderr,
            "bench data: '%s' failed (status %d): it needs Debian's "
            "python3-numpy and python3-pil\n",
            cmd, status);
    exit(1);
  }
}

/* ---- mxc's iterator ------------------------------------------------------ */

static mxc_data_iter open_iter(const opts *o) {
  char rec[BENCH_PATH + 16], batch[16], threads[16], shape[32], seed[16];
  snprintf(rec, sizeof rec, "%s/bench.rec", o->dir);
  snprintf(batch, sizeof batch, "%d", o->batch);
  snprintf(threads, sizeof threads, "%d", o->threads);
  snprintf(shape, sizeof shape, "(3,%d,%d)", CROP, CROP);
  snprintf(seed, sizeof seed, "%d", SEED);
  const char *kv[][2] = {
      {"path_imgrec", rec},
      {"data_shape", shape},
      {"batch_size", batch},
      {"shuffle", "1"},
      {"seed", seed},
      {"rand_crop", "1"},
      {"rand_mirror", "1"},
      {"preprocess_threads", threads},
      {"prefetch_buffer", "4"},
      /* ImageNet's mean and std (torchvision's, times 255). */
      {"mean_r", "123.675"},
      {"mean_g", "116.28"},
      {"mean_b", "103.53"},
      {"std_r", "58.395"},
      {"std_g", "57.12"},
      {"std_b", "57.375"},
  };
  enum { N = sizeof kv / sizeof kv[0] };
  const char *keys[N], *vals[N];
  for (int i = 0; i < N; ++i) {
    keys[i] = kv[i][0];
    vals[i] = kv[i][1];
  }
  mxc_data_iter it = NULL;
  check(mxc_data_iter_image_record_create(N, keys, vals, &it),
        "mxc_data_iter_image_record_create");
  return it;
}

/* The sum of the current batch's labels but the padding; *out_n: how many. */
static double batch_labels(mxc_data_iter it, int batch, int64_t *out_n) {
  mxc_ndarray label = NULL;
  int64_t pad = 0;
  check(mxc_data_iter_label(it, &label), "mxc_data_iter_label");
  check(mxc_data_iter_pad(it, &pad), "mxc_data_iter_pad");
  float *y = malloc((size_t)batch * sizeof *y);
  if (y == NULL) die("out of memory for the labels");
  check(mxc_ndarray_copy_to_host(label, y, (size_t)batch * sizeof *y),
        "copying the labels");
  double sum = 0;
  for (int64_t i = 0; i < batch - pad; ++i) sum += y[i];
  free(y);
  mxc_ndarray_free(label);
  *out_n = batch - pad;
  return sum;
}

/* Adds the first n images of a batch of `batch` to *m. */
static void batch_moments(mxc_ndarray data, int batch, int64_t n, moments *m) {
  const int64_t plane = (int64_t)CROP * CROP;
  size_t bytes = (size_t)((int64_t)batch * 3 * plane) * sizeof(float);
  float *x = malloc(bytes);
  if (x == NULL) die("out of memory for a batch");
  check(mxc_ndarray_copy_to_host(data, x, bytes), "copying the batch");
  for (int64_t i = 0; i < n * 3; ++i) {
    for (int64_t k = 0; k < plane; ++k) {
      double v = x[i * plane + k];
      m->sum[i % 3] += v;
      m->sq[i % 3] += v * v;
    }
  }
  m->n += n * plane;
  free(x);
}

/* One epoch from the current position: seconds, images (padding not
 * counted) and their label sum; with m non-NULL also the moments of the
 * images (untimed work, but inside the epoch's time). The batch's data
 * are complete when next returns (the workers wrote them), so taking the
 * handle is enough. */
static double iter_epoch(mxc_data_iter it, int batch, epochs *r, moments *m) {
  r->images = 0;
  r->label_sum = 0;
  double t0 = now_s();
  int has = 0;
  for (;;) {
    check(mxc_data_iter_next(it, &has), "mxc_data_iter_next");
    if (!has) break;
    mxc_ndarray data = NULL;
    check(mxc_data_iter_data(it, &data), "mxc_data_iter_data");
    int64_t n = 0;
    r->label_sum += batch_labels(it, batch, &n);
    r->images += n;
    if (m != NULL) batch_moments(data, batch, n, m);
    mxc_ndarray_free(data);
  }
  return now_s() - t0;
}

/* Warm-up epochs (the first starts when the iterator is created), then
 * the timed ones, each from reset to its last batch. The first epoch
 * also collects the moments. */
static epochs run_iter(const opts *o) {
  mxc_data_iter it = open_iter(o);
  epochs r;
  memset(&r, 0, sizeof r);
  double rate[MAX_EPOCHS];
  for (int e = 0; e < o->warmup + o->epochs; ++e) {
    if (e > 0) check(mxc_data_iter_reset(it), "mxc_data_iter_reset");
    double s = iter_epoch(it, o->batch, &r, e == 0 ? &r.m : NULL);
    if (e >= o->warmup) rate[e - o->warmup] = (double)r.images / s;
  }
  mxc_data_iter_free(it);
  r.median = bench_median(rate, o->epochs);
  r.best = rate[o->epochs - 1];
  return r;
}

/* ---- PyTorch ------------------------------------------------------------- */

/* Runs bench/data_torch.py; 0 when it ran (its figures are in kvs). */
static int run_torch(const opts *o, bench_kvs *kvs) {
  char script[BENCH_PATH];
  bench_find(o->argv0, "bench/data_torch.py", script);
  if (access(script, R_OK) != 0) {
    fprintf(stderr, "bench data: %s not found; skipping PyTorch\n", script);
    return -1;
  }
  char cmd[4 * BENCH_PATH];
  snprintf(cmd, sizeof cmd,
           "'%s' '%s' --root '%s/images' --threads %d --batch-size %d "
           "--crop %d --epochs %d --warmup %d --seed %d",
           o->python, script, o->dir, o->threads, o->batch, CROP, o->epochs,
           o->warmup, SEED);
  int status = bench_run_peer(cmd, kvs);
  if (status != 0) {
    fprintf(stderr,
            "bench data: the PyTorch peer failed (status %d; it "
            "needs python3-torch and python3-torchvision); skipping it\n",
            status);
  }
  return status == 0 ? 0 : -1;
}

/* Prints (and records in kvs) the first epoch's mean per channel and
 * standard deviation of all values: image_iter_mean_r= ...
 * image_iter_std=. */
static void print_moments(const moments *m, bench_kvs *kvs) {
  static const char *const keys[] = {"image_iter_mean_r", "image_iter_mean_g",
                                     "image_iter_mean_b"};
  double sum = 0, sq = 0, n = (double)m->n;
  for (int c = 0; c < 3; ++c) {
    bench_kvs_set(kvs, keys[c], m->sum[c] / n);
    printf("%s=%.4f\n", keys[c], m->sum[c] / n);
    sum += m->sum[c];
    sq += m->sq[c];
  }
  double std = sqrt(sq / (3 * n) - (sum / (3 * n)) * (sum / (3 * n)));
  bench_kvs_set(kvs, "image_iter_std", std);
  printf("image_iter_std=%.4f\n", std);
}

/* The same normalized values on both sides, up to where the random crops
 * fall: per-channel means within MEAN_TOL, standard deviations within
 * STD_TOL (relative). A different mean, std or channel order is off by
 * far more. */
static int same_values(const bench_kvs *kvs) {
  static const char *const keys[] = {"mean_r", "mean_g", "mean_b", "std"};
  int ok = 1;
  for (int i = 0; i < 4; ++i) {
    char mk[64], tk[64];
    snprintf(mk, sizeof mk, "image_iter_%s", keys[i]);
    snprintf(tk, sizeof tk, "image_iter_torch_%s", keys[i]);
    double m = bench_kvs_get(kvs, mk), t = bench_kvs_get(kvs, tk);
    double d = i < 3 ? fabs(m - t) : fabs(m / t - 1);
    if (!(d <= (i < 3 ? MEAN_TOL : STD_TOL))) {
      fprintf(stderr, "bench data: FAIL: %s=%g but %s=%g\n", mk, m, tk, t);
      ok = 0;
    }
  }
  return ok;
}

/* Both sides must have read the whole set with the same labels and made
 * the same values of it. */
static int same_data(const epochs *m, const bench_kvs *kvs) {
  double n = bench_kvs_get(kvs, "image_iter_torch_epoch_images");
  double sum = bench_kvs_get(kvs, "image_iter_torch_label_sum");
  if (n == (double)m->images && sum == m->label_sum) return same_values(kvs);
  fprintf(stderr,
          "bench data: FAIL: mxc read %lld images (label sum %.0f) "
          "per epoch, PyTorch %.0f (label sum %.0f)\n",
          (long long)m->images, m->label_sum, n, sum);
  return 0;
}

/* Prints the iterator's figures and PyTorch's ratio; 1 on a mismatch. */
static int iter_section(const opts *o) {
  static bench_kvs kvs;
  epochs m = run_iter(o);
  printf("image_iter_images_per_s=%.1f\n", m.best);
  printf("image_iter_median_images_per_s=%.1f\n", m.median);
  printf("image_iter_epoch_images=%lld\n", (long long)m.images);
  print_moments(&m.m, &kvs);
  if (m.images != o->images) {
    fprintf(stderr, "bench data: FAIL: %lld images per epoch, not %d\n",
            (long long)m.images, o->images);
    return 1;
  }
  if (!o->torch || run_torch(o, &kvs) != 0) return 0;
  double t = bench_kvs_get(&kvs, "image_iter_torch_images_per_s");
  printf("image_iter_ratio_vs_torch=%.3f\n", m.best / t);
  printf("image_iter_ratio_vs_torch_goal=1.5\n");
  fflush(stdout);
  return same_data(&m, &kvs) ? 0 : 1;
}

/* ---- the training step --------------------------------------------------- */

/* One layer of the CNN: operator, node name, parameters (key, value). */
typedef struct layer {
  const char *op, *name;
  int n;
  const char *kv[8];
} layer;

/* clang-format off */
static const layer kLayers[] = {
    {"Convolution", "conv1", 4,
     {"kernel", "(5,5)", "stride", "(2,2)", "pad", "(2,2)", "num_filter", "16"}},
    {"Activation", "relu1", 1, {"act_type", "relu"}},
    {"Pooling", "pool1", 3,
     {"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)"}},
    {"Convolution", "conv2", 3,
     {"kernel", "(3,3)", "pad", "(1,1)", "num_filter", "32"}},
    {"Activation", "relu2", 1, {"act_type", "relu"}},
    {"Pooling", "pool2", 3,
     {"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)"}},
    {"Convolution", "conv3", 3,
     {"kernel", "(3,3)", "pad", "(1,1)", "num_filter", "64"}},
    {"Activation", "relu3", 1, {"act_type", "relu"}},
    {"Pooling", "pool3", 3,
     {"pool_type", "avg", "kernel", "(1,1)", "global_pool", "True"}},
    {"Flatten", "flatten", 0, {NULL}},
    {"FullyConnected", "fc", 1, {"num_hidden", "10"}},
};
/* clang-format on */

/* *cur = op(*cur [, extra]); consumes *cur. */
static void apply(const layer *l, mxc_symbol *cur, mxc_symbol extra) {
  const char *keys[4], *vals[4];
  for (int i = 0; i < l->n; ++i) {
    keys[i] = l->kv[2 * i];
    vals[i] = l->kv[2 * i + 1];
  }
  mxc_op op = NULL;
  check(mxc_op_find(l->op, &op), l->op);
  mxc_symbol in[2] = {*cur, extra}, next = NULL;
  check(mxc_symbol_create(op, keys, vals, l->n, l->name, NULL, in,
                          extra ? 2 : 1, &next),
        l->name);
  mxc_symbol_free(*cur);
  *cur = next;
}

static mxc_symbol build_cnn(void) {
  mxc_symbol cur = NULL, label = NULL;
  check(mxc_symbol_variable("data", &cur), "mxc_symbol_variable");
  check(mxc_symbol_variable("softmax_label", &label), "mxc_symbol_variable");
  for (size_t i = 0; i < sizeof kLayers / sizeof kLayers[0]; ++i) {
    apply(&kLayers[i], &cur, NULL);
  }
  static const layer softmax = {"SoftmaxOutput", "softmax", 0, {NULL}};
  apply(&softmax, &cur, label);
  mxc_symbol_free(label);
  return cur;
}

/* The bound network and what a step needs. */
typedef struct net {
  mxc_executor ex;
  mxc_ndarray data, label, out;
  bench_params p; /* Xavier weights and zero biases (seeded), zero momenta */
} net;

static void net_create(int batch, net *nt) {
  memset(nt, 0, sizeof *nt);
  mxc_symbol sym = build_cnn();
  const char *names[2] = {"data", "softmax_label"};
  int ndims[2] = {4, 1};
  int64_t dims[5] = {batch, 3, CROP, CROP, batch};
  int reqs[2] = {MXC_REQ_NULL, MXC_REQ_NULL};
  check(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 2, names, ndims, dims,
                                 NULL, MXC_REQ_WRITE, 2, names, reqs,
                                 MXC_BIND_DEFAULT, &nt->ex),
        "mxc_executor_simple_bind");
  check(mxc_random_seed(SEED), "mxc_random_seed");
  bench_params_collect(&nt->p, nt->ex, sym, 1);
  mxc_symbol_free(sym);
  check(mxc_executor_arg(nt->ex, "data", &nt->data), "mxc_executor_arg");
  check(mxc_executor_arg(nt->ex, "softmax_label", &nt->label), "label");
  check(mxc_executor_output(nt->ex, 0, &nt->out), "mxc_executor_output");
}

static void net_free(net *nt) {
  bench_params_free(&nt->p);
  mxc_ndarray_free(nt->data);
  mxc_ndarray_free(nt->label);
  mxc_ndarray_free(nt->out);
  mxc_executor_free(nt->ex);
}

/* Copies the batch in, forward, backward, SGD with momentum; returns the
 * batch's mean loss (waiting for the forward only). */
static double train_step(net *nt, int batch, mxc_ndarray x, mxc_ndarray y) {
  check(mxc_ndarray_copy(x, nt->data), "copying the batch");
  check(mxc_ndarray_copy(y, nt->label), "copying the labels");
  check(mxc_executor_forward(nt->ex, 1), "mxc_executor_forward");
  check(mxc_executor_backward(nt->ex, 0, NULL), "mxc_executor_backward");
  bench_params_sgd(&nt->p, 0.01, 0.9, 1.0 / batch);
  double sum = 0;
  int64_t count = 0;
  check(mxc_metric_cross_entropy(nt->out, nt->label, 1e-12, &sum, &count),
        "the loss");
  return sum / (double)(count > 0 ? count : 1);
}

/* The iterator's next batch (a new epoch when one ends); adds the time
 * next() blocked to *wait_s. */
static void next_batch(mxc_data_iter it, mxc_ndarray *x, mxc_ndarray *y,
                       double *wait_s) {
  double t0 = now_s();
  int has = 0;
  check(mxc_data_iter_next(it, &has), "mxc_data_iter_next");
  if (!has) {
    check(mxc_data_iter_reset(it), "mxc_data_iter_reset");
    check(mxc_data_iter_next(it, &has), "mxc_data_iter_next");
  }
  *wait_s += now_s() - t0;
  check(mxc_data_iter_data(it, x), "mxc_data_iter_data");
  check(mxc_data_iter_label(it, y), "mxc_data_iter_label");
}

/* Milliseconds per step over o->steps steps fed by the iterator (after
 * one warm-up step); *wait_ms: next()'s share. Keeps the first batch in
 * *x, *y for the in-memory run. */
static double steps_from_iter(const opts *o, net *nt, double *wait_ms,
                              mxc_ndarray *x, mxc_ndarray *y) {
  mxc_data_iter it = open_iter(o);
  double wait = 0, t0 = 0;
  for (int i = 0; i <= o->steps; ++i) {
    if (i == 1) {
      check(mxc_wait_all(), "mxc_wait_all");
      t0 = now_s();
      wait = 0;
    }
    mxc_ndarray bx = NULL, by = NULL;
    next_batch(it, &bx, &by, &wait);
    train_step(nt, o->batch, bx, by);
    if (i == 0) { /* kept for steps_in_memory */
      *x = bx;
      *y = by;
    } else {
      mxc_ndarray_free(bx);
      mxc_ndarray_free(by);
    }
  }
  check(mxc_wait_all(), "mxc_wait_all");
  double ms = 1e3 * (now_s() - t0) / o->steps;
  mxc_data_iter_free(it);
  *wait_ms = 1e3 * wait / o->steps;
  return ms;
}

/* The same steps, all on one batch already in memory. */
static double steps_in_memory(const opts *o, net *nt, mxc_ndarray x,
                              mxc_ndarray y) {
  train_step(nt, o->batch, x, y);
  check(mxc_wait_all(), "mxc_wait_all");
  double t0 = now_s();
  for (int i = 0; i < o->steps; ++i) train_step(nt, o->batch, x, y);
  check(mxc_wait_all(), "mxc_wait_all");
  return 1e3 * (now_s() - t0) / o->steps;
}

static void train_section(const opts *o) {
  net nt;
  net_create(o->batch, &nt);
  mxc_ndarray x = NULL, y = NULL;
  double wait = 0, from_iter = steps_from_iter(o, &nt, &wait, &x, &y);
  double in_memory = steps_in_memory(o, &nt, x, y);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  net_free(&nt);
  printf("train_steps=%d\n", o->steps);
  printf("train_step_ms_from_iter=%.3f\n", from_iter);
  printf("train_step_ms_in_memory=%.3f\n", in_memory);
  printf("data_wait_ms_per_step=%.3f\n", wait);
  printf("train_step_ratio_iter_vs_memory=%.3f\n", from_iter / in_memory);
}

int main(int argc, char **argv) {
  opts o;
  parse(argc, argv, &o);
  make_data(&o);
  char cpu[512];
  bench_cpuinfo("model name", cpu, sizeof cpu);
  int threads = 0;
  check(mxc_get_num_threads(&threads), "mxc_get_num_threads");
  printf("cpu=%s\n", cpu);
  printf(
      "data_threads=%d mxc_threads=%d data_images=%d data_batch=%d "
      "epochs=%d warmup=%d\n",
      o.threads, threads, o.images, o.batch, o.epochs, o.warmup);
  fflush(stdout);
  if (iter_section(&o) != 0) return 1;
  train_section(&o);
  return 0;
}
