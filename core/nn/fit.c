/* fit(): the training loop over data iterators with listeners, learning-
 * rate schedules, evaluation, early stopping, a CSV log, a progress line
 * and checkpoints that resume exactly (see nn.h and mxc.h, "Training
 * loops"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/autograd/autograd.h"
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/ndarray/io.h"
#include "core/nn/fit.h"
#include "core/nn/fit_dist.h"
#include "core/nn/internal.h"
#include "core/nn/tboard.h"
#include "core/resource/random.h"
#include "core/resource/training.h"
#include "core/train/metric.h"

enum { SCHED_NONE, SCHED_FACTOR, SCHED_MULTI, SCHED_COSINE };
#define MAX_STEPS 16

typedef struct fit_listener {
  mxc__fit_fn fn;
  void *user;
  void (*free_fn)(void *);
} fit_listener;

struct mxc__fit {
  mxc__block *net, *loss;
  mxc__optimizer *opt;
  /* configuration */
  int epochs, progress, ckpt_period, patience, monitor_loss;
  int64_t max_batches; /* batches per epoch at most; 0: all */
  char *ckpt_prefix, *resume, *csv_path, *monitor, *tb_dir;
  mxc__tb *tb; /* opened at the first epoch's end */
  double min_delta;
  int sched, n_steps;
  double factor, final_lr, base_lr;
  int64_t step, max_update, steps[MAX_STEPS];
  /* state */
  int epoch, stop, have_val;
  int hybrid_step; /* this batch's net ran through its executor */
  int64_t batch, num_update, count, correct, val_count, val_correct;
  double loss_sum, val_loss_sum, best, samples_per_sec, t0, last_print;
  int bad_epochs;
  int n_listeners;
  fit_listener *listeners;
  /* Data-parallel training through a KVStore (NULL: none); shard: the
   * training iterator reads part rank of workers. */
  mxc__fit_dist *dist;
  int shard;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- configuration ---- */

static int parse_num(const char *key, const char *s, double lo, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  MXC_RETURN_ERROR_IF(end == s || *end || !(v >= lo) || v - v != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: %s is '%s'; expected a finite number >= %g", key,
                      s, lo);
  *out = v;
  return MXC_OK;
}

static int parse_int(const char *key, const char *s, int64_t lo, int64_t *out) {
  double v = 0;
  MXC_FORWARD_IF_ERROR(parse_num(key, s, (double)lo, &v));
  MXC_RETURN_ERROR_IF(v != floor(v) || v > 2147483647.0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: %s is '%s'; expected an integer >= %lld", key, s,
                      (long long)lo);
  *out = (int64_t)v;
  return MXC_OK;
}

static int set_str(char **dst, const char *v) {
  mxc__free(*dst);
  *dst = mxc__strdup(v);
  MXC_RETURN_ERROR_IF(!*dst, MXC_ERR_OOM, "fit: out of memory");
  return MXC_OK;
}

static int parse_sched(mxc__fit *f, const char *v) {
  static const char *const names[] = {"none", "factor", "multifactor",
                                      "cosine"};
  for (int i = 0; i < 4; ++i) {
    if (!strcmp(v, names[i])) {
      f->sched = i;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "fit: lr_scheduler is '%s'; expected none, factor, "
                        "multifactor or cosine",
                        v);
}

/* "(a,b,...)" or "a,b,...": increasing update counts. */
static int parse_steps(mxc__fit *f, const char *v) {
  const char *p = v + (*v == '(' || *v == '[');
  f->n_steps = 0;
  while (*p && *p != ')' && *p != ']') {
    char *end = NULL;
    long long s = strtoll(p, &end, 10);
    MXC_RETURN_ERROR_IF(end == p || s < 1 || f->n_steps == MAX_STEPS ||
                            (f->n_steps && s <= f->steps[f->n_steps - 1]),
                        MXC_ERR_INVALID_ARGUMENT,
                        "fit: steps is '%s'; expected up to %d increasing "
                        "positive integers",
                        v, MAX_STEPS);
    f->steps[f->n_steps++] = s;
    p = end + (*end == ',');
    while (*p == ' ') ++p;
  }
  return MXC_OK;
}

static int progress_mode(const char *v, int *out) {
  if (!strcmp(v, "auto")) {
    *out = isatty(STDOUT_FILENO);
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(strcmp(v, "1") && strcmp(v, "0"),
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: progress is '%s'; expected auto, 1 or 0", v);
  *out = v[0] == '1';
  return MXC_OK;
}

/* An integer key >= lo into *out. */
static int int_key(const char *k, const char *v, int64_t lo, int *out) {
  int64_t i = 0;
  MXC_FORWARD_IF_ERROR(parse_int(k, v, lo, &i));
  *out = (int)i;
  return MXC_OK;
}

/* "1" or "0". */
static int flag_key(const char *k, const char *v, int *out) {
  MXC_RETURN_ERROR_IF(strcmp(v, "1") && strcmp(v, "0"),
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: %s is '%s'; expected 1 or 0", k, v);
  *out = v[0] == '1';
  return MXC_OK;
}

static int set_key(mxc__fit *f, const char *k, const char *v) {
  if (!strcmp(k, "epochs")) return int_key(k, v, 0, &f->epochs);
  if (!strcmp(k, "shard_by_rank")) return flag_key(k, v, &f->shard);
  if (!strcmp(k, "progress")) return progress_mode(v, &f->progress);
  if (!strcmp(k, "checkpoint_prefix")) return set_str(&f->ckpt_prefix, v);
  if (!strcmp(k, "checkpoint_period")) return int_key(k, v, 1, &f->ckpt_period);
  if (!strcmp(k, "resume")) return set_str(&f->resume, v);
  if (!strcmp(k, "csv")) return set_str(&f->csv_path, v);
  if (!strcmp(k, "tensorboard")) return set_str(&f->tb_dir, v);
  if (!strcmp(k, "batches_per_epoch")) return parse_int(k, v, 0, &f->max_batches);
  if (!strcmp(k, "early_stopping_patience")) return int_key(k, v, 0, &f->patience);
  if (!strcmp(k, "early_stopping_min_delta")) return parse_num(k, v, 0, &f->min_delta);
  if (!strcmp(k, "monitor")) return set_str(&f->monitor, v);
  if (!strcmp(k, "lr_scheduler")) return parse_sched(f, v);
  if (!strcmp(k, "factor")) return parse_num(k, v, 0, &f->factor);
  if (!strcmp(k, "step")) return parse_int(k, v, 1, &f->step);
  if (!strcmp(k, "steps")) return parse_steps(f, v);
  if (!strcmp(k, "max_update")) return parse_int(k, v, 1, &f->max_update);
  if (!strcmp(k, "final_lr")) return parse_num(k, v, 0, &f->final_lr);
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "fit: unknown key '%s'; expected epochs, progress, "
                        "checkpoint_prefix, checkpoint_period, resume, csv, "
                        "tensorboard, batches_per_epoch, "
                        "early_stopping_patience, early_stopping_min_delta, "
                        "monitor, lr_scheduler, factor, step, steps, "
                        "max_update, final_lr or shard_by_rank",
                        k);
}

/* The monitored value: val_loss, val_accuracy, train_loss or
 * train_accuracy; losses improve downwards. */
static int check_monitor(mxc__fit *f) {
  static const char *const ok[] = {"val_loss", "val_accuracy", "train_loss",
                                   "train_accuracy"};
  for (int i = 0; i < 4; ++i) {
    if (!strcmp(f->monitor, ok[i])) {
      f->monitor_loss = strstr(ok[i], "loss") != NULL;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "fit: monitor is '%s'; expected val_loss, "
                        "val_accuracy, train_loss or train_accuracy",
                        f->monitor);
}

static int check_sched(const mxc__fit *f) {
  MXC_RETURN_ERROR_IF(f->sched == SCHED_FACTOR && !f->step,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: lr_scheduler factor needs step");
  MXC_RETURN_ERROR_IF(f->sched == SCHED_MULTI && !f->n_steps,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: lr_scheduler multifactor needs steps");
  MXC_RETURN_ERROR_IF(f->sched == SCHED_COSINE && !f->max_update,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: lr_scheduler cosine needs max_update");
  return MXC_OK;
}

void mxc__fit_free(mxc__fit *f) {
  if (!f) return;
  for (int i = 0; i < f->n_listeners; ++i) {
    if (f->listeners[i].free_fn) f->listeners[i].free_fn(f->listeners[i].user);
  }
  mxc__free(f->listeners);
  mxc__free(f->ckpt_prefix);
  mxc__free(f->resume);
  mxc__free(f->csv_path);
  mxc__free(f->monitor);
  mxc__free(f->tb_dir);
  mxc__tb_close(f->tb);
  mxc__fit_dist_free(f->dist);
  mxc__block_release(f->net);
  mxc__block_release(f->loss);
  mxc__optimizer_free(f->opt);
  mxc__free(f);
}

int mxc__fit_create(mxc__block *net, mxc__block *loss, mxc__optimizer *opt,
                    int n, const char *const *keys, const char *const *vals,
                    mxc__fit **out) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: n is %d with keys or vals NULL", n);
  MXC_RETURN_ERROR_IF(mxc__optimizer_block(opt) != net,
                      MXC_ERR_INVALID_ARGUMENT,
                      "fit: the optimizer updates block '%s', not '%s'",
                      mxc__optimizer_block(opt)->name, net->name);
  mxc__fit *f = mxc__calloc(1, sizeof *f);
  MXC_RETURN_ERROR_IF(!f, MXC_ERR_OOM, "fit: out of memory");
  f->epochs = 1;
  f->ckpt_period = 1;
  f->factor = 1;
  f->shard = 1;
  f->progress = isatty(STDOUT_FILENO);
  int rc = set_str(&f->monitor, "val_loss");
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = !keys[i] || !vals[i]
             ? mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                              "fit: keys[%d] or vals[%d] is NULL", i, i)
             : set_key(f, keys[i], vals[i]);
  }
  if (rc == MXC_OK) rc = check_monitor(f);
  if (rc == MXC_OK) rc = check_sched(f);
  if (rc != MXC_OK) {
    mxc__fit_free(f);
    return rc;
  }
  mxc__block_retain(net);
  mxc__block_retain(loss);
  mxc__optimizer_retain(opt);
  f->net = net;
  f->loss = loss;
  f->opt = opt;
  *out = f;
  return MXC_OK;
}

int mxc__fit_add_listener(mxc__fit *f, mxc__fit_fn fn, void *user,
                          void (*free_fn)(void *)) {
  fit_listener *l = mxc__realloc(
      f->listeners, (size_t)(f->n_listeners + 1) * sizeof *l);
  if (!l) {
    if (free_fn) free_fn(user);
    return mxc__error_set(MXC_ERR_OOM, "fit: out of memory");
  }
  f->listeners = l;
  l[f->n_listeners++] = (fit_listener){fn, user, free_fn};
  return MXC_OK;
}

void mxc__fit_stop(mxc__fit *f) { f->stop = 1; }

int mxc__fit_set_kvstore(mxc__fit *f, mxc__kvstore *kv) {
  mxc__fit_dist *d = NULL;
  if (kv) MXC_FORWARD_IF_ERROR(mxc__fit_dist_new(kv, &d));
  mxc__fit_dist_free(f->dist);
  f->dist = d;
  return MXC_OK;
}

/* Files (CSV, TensorBoard, checkpoints) and progress lines come from rank
 * 0 alone: every worker holds the same parameters. */
static int writer(const mxc__fit *f) { return mxc__fit_dist_rank(f->dist) == 0; }

/* ---- values ---- */

static double ratio(double a, int64_t b) { return b ? a / (double)b : NAN; }

int mxc__fit_value(const mxc__fit *f, const char *name, double *out) {
  struct { const char *name; double v; } t[] = {
      {"epoch", f->epoch},
      {"batch", (double)f->batch},
      {"num_update", (double)f->num_update},
      {"lr", mxc__optimizer_lr(f->opt)},
      {"train_loss", ratio(f->loss_sum, f->count)},
      {"train_accuracy", ratio((double)f->correct, f->count)},
      {"val_loss", f->have_val ? ratio(f->val_loss_sum, f->val_count) : NAN},
      {"val_accuracy",
       f->have_val ? ratio((double)f->val_correct, f->val_count) : NAN},
      {"samples_per_sec", f->samples_per_sec},
      {"best", f->best},
      {"epochs", f->epochs},
      {"rank", mxc__fit_dist_rank(f->dist)},
      {"num_workers", mxc__fit_dist_workers(f->dist)}};
  for (size_t i = 0; i < sizeof t / sizeof *t; ++i) {
    if (!strcmp(name, t[i].name)) {
      *out = t[i].v;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "fit: no value '%s'; expected epoch, batch, "
                        "num_update, lr, train_loss, train_accuracy, "
                        "val_loss, val_accuracy, samples_per_sec, best, "
                        "epochs, rank or num_workers",
                        name);
}

static int notify(mxc__fit *f, int event) {
  for (int i = 0; i < f->n_listeners; ++i) {
    int rc = f->listeners[i].fn(f->listeners[i].user, event, f);
    MXC_RETURN_ERROR_IF(rc != MXC_OK, rc,
                        "fit: a listener stopped training with error %d", rc);
  }
  return MXC_OK;
}

/* ---- learning-rate schedules ---- */

/* The rate of update k (0-based), from the optimizer's rate at the start. */
static double scheduled_lr(const mxc__fit *f, int64_t k) {
  double base = f->base_lr;
  switch (f->sched) {
    case SCHED_FACTOR:
      return base * pow(f->factor, (double)(k / f->step));
    case SCHED_MULTI: {
      int passed = 0;
      while (passed < f->n_steps && k >= f->steps[passed]) ++passed;
      return base * pow(f->factor, passed);
    }
    case SCHED_COSINE:
      if (k >= f->max_update) return f->final_lr;
      return f->final_lr + (base - f->final_lr) *
                               (1 + cos(3.14159265358979323846 * (double)k /
                                        (double)f->max_update)) / 2;
    default:
      return base;
  }
}

/* ---- batches ---- */

/* Sum over the first n values of a (float32 / float64), read to the host. */
static int host_sum(const mxc__ndarray *a, int64_t n, double *out) {
  int64_t size = mxc__ndarray_size(a);
  MXC_RETURN_ERROR_IF(size < n || (a->dtype != MXC_DTYPE_FLOAT32 &&
                                   a->dtype != MXC_DTYPE_FLOAT64),
                      MXC_ERR_SHAPE,
                      "fit: the loss has %lld values of dtype %d; expected "
                      "one float per example (%lld)",
                      (long long)size, a->dtype, (long long)n);
  size_t es = a->dtype == MXC_DTYPE_FLOAT64 ? 8 : 4;
  void *buf = mxc__malloc((size_t)size * es + 1);
  MXC_RETURN_ERROR_IF(!buf, MXC_ERR_OOM, "fit: out of memory");
  int rc = mxc__ndarray_copy_to_host(a, buf, (size_t)size * es);
  double s = 0;
  for (int64_t i = 0; i < n && rc == MXC_OK; ++i) {
    s += es == 8 ? ((double *)buf)[i] : ((float *)buf)[i];
  }
  mxc__free(buf);
  if (rc == MXC_OK) *out = s;
  return rc;
}

/* Loss sum and, for class scores, correct predictions over valid rows. */
static int measure(const mxc__ndarray *out, const mxc__ndarray *label,
                   const mxc__ndarray *l, int64_t valid, double *loss,
                   int64_t *correct) {
  MXC_FORWARD_IF_ERROR(host_sum(l, valid, loss));
  *correct = 0;
  if (out->shape.ndim != 2 || label->shape.ndim != 1) return MXC_OK;
  mxc__ndarray *o = NULL, *y = NULL;
  int64_t c = 0, count = 0;
  int rc = mxc__ndarray_slice(out, 0, valid, &o);
  if (rc == MXC_OK) rc = mxc__ndarray_slice(label, 0, valid, &y);
  if (rc == MXC_OK) rc = mxc__metric_accuracy(o, y, &c, &count);
  mxc__ndarray_free(o);
  mxc__ndarray_free(y);
  if (rc == MXC_OK) *correct = c;
  return rc;
}

/* Forward (recorded when training) of net and loss on the iterator's
 * current batch: *out and *l new. A hybridized net trains through its
 * executor (hybrid.c): then only the loss is recorded. */
static int run_batch(mxc__fit *f, const mxc__ndarray *x,
                     const mxc__ndarray *y, int train, mxc__ndarray **out,
                     mxc__ndarray **l) {
  int prev_train = mxc__set_training(train);
  int prev_rec = mxc__autograd_set_recording(train);
  mxc__ndarray *in = (mxc__ndarray *)x;
  f->hybrid_step = train && mxc__nn_hybrid_ready(f->net, 1);
  int rc = f->hybrid_step ? mxc__nn_hybrid_train_forward(f->net, x, out)
                          : mxc__block_forward(f->net, 1, &in, out);
  mxc__ndarray *pair[2] = {rc == MXC_OK ? *out : NULL, (mxc__ndarray *)y};
  if (rc == MXC_OK) rc = mxc__block_forward(f->loss, 2, pair, l);
  mxc__autograd_set_recording(prev_rec);
  mxc__set_training(prev_train);
  if (rc != MXC_OK && pair[0]) {
    mxc__ndarray_free(*out);
    *out = NULL;
  }
  return rc;
}

static int batch_of(mxc__iter *it, const mxc__ndarray **x,
                    const mxc__ndarray **y, int64_t *rows, int64_t *valid) {
  int64_t pad = 0;
  MXC_FORWARD_IF_ERROR(mxc__iter_current(it, 0, x));
  MXC_FORWARD_IF_ERROR(mxc__iter_current(it, 1, y));
  MXC_FORWARD_IF_ERROR(mxc__iter_pad(it, &pad));
  *rows = (*x)->shape.ndim ? (*x)->shape.dims[0] : 1;
  *valid = *rows - pad > 0 ? *rows - pad : 0;
  return MXC_OK;
}

static void print_progress(mxc__fit *f, int done) {
  if (!f->progress || !writer(f)) return;
  double t = now_s();
  if (!done && t - f->last_print < 0.1) return;
  f->last_print = t;
  /* The epoch line ends after f->epoch moved on to the next one. */
  printf("\repoch %d/%d batch %lld loss %.4f", f->epoch + !done, f->epochs,
         (long long)f->batch, ratio(f->loss_sum, f->count));
  if (f->correct || f->count) printf(" acc %.4f", ratio((double)f->correct, f->count));
  printf(" %.1f samples/s", f->samples_per_sec);
  if (done && f->have_val) {
    printf(" val_loss %.4f val_acc %.4f", ratio(f->val_loss_sum, f->val_count),
           ratio((double)f->val_correct, f->val_count));
  }
  printf(done ? "\n" : "   ");
  fflush(stdout);
}

static int train_step(mxc__fit *f, mxc__iter *it) {
  const mxc__ndarray *x = NULL, *y = NULL;
  int64_t rows = 0, valid = 0, correct = 0;
  MXC_FORWARD_IF_ERROR(batch_of(it, &x, &y, &rows, &valid));
  mxc__ndarray *out = NULL, *l = NULL;
  MXC_FORWARD_IF_ERROR(run_batch(f, x, y, 1, &out, &l));
  double loss = 0;
  int rc = mxc__autograd_backward(1, &l, NULL, 0);
  if (rc == MXC_OK && f->hybrid_step) rc = mxc__nn_hybrid_backward(f->net, out);
  /* After both backwards: the parameters' gradients are complete. */
  if (rc == MXC_OK) rc = mxc__fit_dist_sum_grads(f->dist, f->net);
  if (rc == MXC_OK) {
    rc = mxc__optimizer_set_lr(f->opt, scheduled_lr(f, f->num_update));
  }
  /* The summed gradients are over every worker's batch of `rows`. */
  int64_t global = rows * mxc__fit_dist_workers(f->dist);
  if (rc == MXC_OK) rc = mxc__optimizer_step(f->opt, global);
  if (rc == MXC_OK) rc = measure(out, y, l, valid, &loss, &correct);
  mxc__ndarray_free(out);
  mxc__ndarray_free(l);
  MXC_FORWARD_IF_ERROR(rc);
  f->num_update++;
  f->batch++;
  f->loss_sum += loss;
  f->correct += correct;
  f->count += valid;
  f->samples_per_sec = (double)f->count / (now_s() - f->t0 + 1e-9);
  print_progress(f, 0);
  return notify(f, MXC__FIT_BATCH_END);
}

static int evaluate(mxc__fit *f, mxc__iter *it) {
  f->val_loss_sum = 0;
  f->val_count = f->val_correct = 0;
  MXC_FORWARD_IF_ERROR(mxc__iter_reset(it));
  for (;;) {
    int has = 0;
    MXC_FORWARD_IF_ERROR(mxc__iter_next(it, &has));
    if (!has) break;
    const mxc__ndarray *x = NULL, *y = NULL;
    int64_t rows = 0, valid = 0, correct = 0;
    MXC_FORWARD_IF_ERROR(batch_of(it, &x, &y, &rows, &valid));
    mxc__ndarray *out = NULL, *l = NULL;
    MXC_FORWARD_IF_ERROR(run_batch(f, x, y, 0, &out, &l));
    double loss = 0;
    int rc = measure(out, y, l, valid, &loss, &correct);
    mxc__ndarray_free(out);
    mxc__ndarray_free(l);
    MXC_FORWARD_IF_ERROR(rc);
    f->val_loss_sum += loss;
    f->val_correct += correct;
    f->val_count += valid;
  }
  f->have_val = 1;
  return MXC_OK;
}

/* ---- epochs: early stopping, CSV ---- */

static void early_stopping(mxc__fit *f) {
  double v = 0;
  if (!f->patience || mxc__fit_value(f, f->monitor, &v) != MXC_OK || v != v) {
    return;
  }
  double gain = f->monitor_loss ? f->best - v : v - f->best;
  if (f->epoch == 1 || gain > f->min_delta) {
    f->best = v;
    f->bad_epochs = 0;
  } else if (++f->bad_epochs >= f->patience) {
    f->stop = 1;
  }
}

static int csv_row(mxc__fit *f, double seconds) {
  if (!f->csv_path || !writer(f)) return MXC_OK;
  FILE *fp = fopen(f->csv_path, f->epoch == 1 && !f->resume ? "w" : "a");
  MXC_RETURN_ERROR_IF(!fp, MXC_ERR_IO, "fit: cannot open the CSV log '%s'",
                      f->csv_path);
  if (f->epoch == 1 && !f->resume) {
    fprintf(fp, "epoch,train_loss,train_accuracy,val_loss,val_accuracy,lr,"
                "samples_per_sec,seconds\n");
  }
  double v[6];
  const char *names[] = {"train_loss", "train_accuracy", "val_loss",
                         "val_accuracy", "lr", "samples_per_sec"};
  for (int i = 0; i < 6; ++i) mxc__fit_value(f, names[i], &v[i]);
  fprintf(fp, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.3f\n", f->epoch, v[0], v[1],
          v[2], v[3], v[4], v[5], seconds);
  int bad = ferror(fp);
  bad |= fclose(fp) != 0;
  MXC_RETURN_ERROR_IF(bad, MXC_ERR_IO, "fit: writing the CSV log '%s' failed",
                      f->csv_path);
  return MXC_OK;
}

/* The epoch's scalars (step = epochs done) into the TensorBoard file. */
static int tb_epoch(mxc__fit *f) {
  if (!f->tb_dir || !writer(f)) return MXC_OK;
  if (!f->tb) MXC_FORWARD_IF_ERROR(mxc__tb_open(f->tb_dir, &f->tb));
  static const char *const names[] = {"train_loss", "train_accuracy",
                                      "val_loss", "val_accuracy", "lr"};
  for (int i = 0; i < 5; ++i) {
    double v = 0;
    mxc__fit_value(f, names[i], &v);
    if (v != v) continue; /* no validation, or no accuracy */
    MXC_FORWARD_IF_ERROR(mxc__tb_scalar(f->tb, names[i], f->epoch, (float)v));
  }
  return mxc__tb_flush(f->tb);
}

static int run_epoch(mxc__fit *f, mxc__iter *train, mxc__iter *val) {
  f->batch = f->count = f->correct = 0;
  f->loss_sum = 0;
  f->have_val = 0;
  f->t0 = now_s();
  MXC_FORWARD_IF_ERROR(mxc__iter_reset(train));
  if (f->shard) MXC_FORWARD_IF_ERROR(mxc__fit_dist_shard(f->dist, train));
  for (;;) {
    int has = 0;
    MXC_FORWARD_IF_ERROR(mxc__iter_next(train, &has));
    int go = has && !f->stop &&
             !(f->max_batches && f->batch >= f->max_batches);
    /* With a store, a batch only when every worker has one. */
    MXC_FORWARD_IF_ERROR(mxc__fit_dist_agree(f->dist, go, &go));
    if (!go) break;
    MXC_FORWARD_IF_ERROR(train_step(f, train));
  }
  if (val) MXC_FORWARD_IF_ERROR(evaluate(f, val));
  f->epoch++;
  early_stopping(f);
  print_progress(f, 1);
  MXC_FORWARD_IF_ERROR(csv_row(f, now_s() - f->t0));
  MXC_FORWARD_IF_ERROR(tb_epoch(f));
  if (f->ckpt_prefix && f->epoch % f->ckpt_period == 0 && writer(f)) {
    char path[4096];
    snprintf(path, sizeof path, "%s-%04d.fit", f->ckpt_prefix, f->epoch);
    MXC_FORWARD_IF_ERROR(mxc__fit_save(f, path));
  }
  return notify(f, MXC__FIT_EPOCH_END);
}

void mxc__fit_progress(mxc__fit *f, int64_t *p, double *v, int get) {
  if (get) {
    uint64_t seed = 0, next = 0;
    mxc__random_get_state(&seed, &next);
    int64_t q[5] = {f->epoch, f->num_update, (int64_t)seed, (int64_t)next,
                    f->bad_epochs};
    memcpy(p, q, sizeof q);
    v[0] = f->base_lr;
    v[1] = f->best;
    return;
  }
  f->epoch = (int)p[0];
  f->num_update = p[1];
  mxc__random_set_state((uint64_t)p[2], (uint64_t)p[3]);
  f->bad_epochs = (int)p[4];
  f->base_lr = v[0];
  f->best = v[1];
}

int mxc__fit_save(mxc__fit *f, const char *path) {
  return mxc__fit_save_parts(f, f->net, f->opt, path);
}

int mxc__fit_load(mxc__fit *f, const char *path) {
  return mxc__fit_load_parts(f, f->net, f->opt, path);
}

int mxc__fit_run(mxc__fit *f, mxc__iter *train, mxc__iter *val) {
  f->stop = 0;
  f->base_lr = mxc__optimizer_lr(f->opt);
  if (f->resume) MXC_FORWARD_IF_ERROR(mxc__fit_load(f, f->resume));
  for (;;) {
    /* With a store, every worker goes on, or none (early stopping and
     * mxc_fit_stop may decide otherwise on one). */
    int more = f->epoch < f->epochs && !f->stop;
    MXC_FORWARD_IF_ERROR(mxc__fit_dist_agree(f->dist, more, &more));
    if (!more) break;
    MXC_FORWARD_IF_ERROR(run_epoch(f, train, val));
  }
  return notify(f, MXC__FIT_TRAIN_END);
}
