/* sparse_linear: a linear softmax classifier trained on sparse features
 * read from LibSVM files, through the public C API only (<mxc/mxc.h>,
 * linked against libmxc.so.1 like any user program).
 *
 *   sparse_linear --train PATH --test PATH --features F [--classes K]
 *       [--batch-size B] [--epochs N] [--lr X] [--momentum X] [--wd X]
 *       [--limit-batches N] [--check]
 *
 * (examples/make_libsvm_data writes such files; scripts/sparse_linear.sh
 * does both.) Per batch, with X the CSR batch (B x F) from the LibSVM
 * iterator, W dense (F x K) and b (1 x K):
 *   forward   p = softmax(dot(X, W) + b)
 *   loss      mean over the batch of -log p[label]          (on the host)
 *   gradient  dZ = (p - onehot(label)) / B                   (on the host)
 *             gW = dot(X, dZ, transpose_a=true)  into a row_sparse array:
 *                  only the rows of features present in the batch
 *             gb = column sums of dZ                         (on the host)
 *   update    sgd_update / sgd_mom_update(W, gW) with a row_sparse
 *             gradient: a lazy update touching only gW's stored rows.
 * Prints, per epoch: time, mean training loss, training accuracy (of the
 * predictions made while training), test loss and accuracy; at the end how
 * many rows of W were ever touched and how many storage fallbacks the
 * library logged (0 when every operator ran its kernel directly).
 * --check: exit status 3 unless the training loss after training is below
 * the loss before it (the smoke test). Exit status 1 on an mxc error (message on stderr), 2 on bad
 * usage. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

typedef struct config {
  const char *train_path, *test_path;
  int64_t features, classes, batch;
  int epochs;
  double lr, momentum, wd;
  int64_t limit_batches; /* 0: whole epochs */
  int check;
} config;

/* The model and the per-batch host buffers. */
typedef struct model {
  mxc_ndarray w, b, mom; /* mom: NULL without momentum */
  mxc_op dot, add, softmax, update;
  float *p, *dz, *bias, *y; /* B x K, B x K, K, B */
  unsigned char *touched;   /* F flags: row of W ever updated */
  int64_t *rows;            /* F: scratch for gW's row indices */
  int64_t grad_rows, updates; /* rows stored by all gradients; updates */
} model;

/* Sums over an evaluation or training pass. */
typedef struct pass_stats {
  double loss;
  int64_t correct, count;
} pass_stats;

#define CHECK_MX(call)                                                   \
  do {                                                                   \
    int rc_ = (call);                                                    \
    if (rc_ != MXC_OK) {                                                 \
      fprintf(stderr, "sparse_linear: %s failed: %s (%s)\n", #call,      \
              mxc_last_error(), mxc_error_name(rc_));                    \
      return 1;                                                          \
    }                                                                    \
  } while (0)

/* Storage fallbacks the library reported (an operator without a kernel
 * for these storage types ran on dense temporaries). Atomic: the log
 * callback may run on engine threads. */
static atomic_int g_fallbacks;

static void on_log(int level, const char *message, void *user_data) {
  (void)user_data;
  if (strstr(message, "fallback")) atomic_fetch_add(&g_fallbacks, 1);
  fprintf(stderr, "[mxc] %s: %s\n",
          level == MXC_LOG_WARNING ? "WARNING" : "INFO", message);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- command line ---- */

static int parse_args(int argc, char **argv, config *c) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--check")) {
      c->check = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "sparse_linear: %s needs a value\n", a);
      return 1;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--train")) c->train_path = v;
    else if (!strcmp(a, "--test")) c->test_path = v;
    else if (!strcmp(a, "--features")) c->features = atoll(v);
    else if (!strcmp(a, "--classes")) c->classes = atoll(v);
    else if (!strcmp(a, "--batch-size")) c->batch = atoll(v);
    else if (!strcmp(a, "--epochs")) c->epochs = atoi(v);
    else if (!strcmp(a, "--lr")) c->lr = atof(v);
    else if (!strcmp(a, "--momentum")) c->momentum = atof(v);
    else if (!strcmp(a, "--wd")) c->wd = atof(v);
    else if (!strcmp(a, "--limit-batches")) c->limit_batches = atoll(v);
    else {
      fprintf(stderr, "sparse_linear: unknown option %s\n", a);
      return 1;
    }
  }
  if (!c->train_path || !c->test_path || c->features < 1 || c->classes < 2 ||
      c->batch < 1 || c->epochs < 1 || !(c->lr > 0) || c->momentum < 0 ||
      c->limit_batches < 0) {
    fprintf(stderr,
            "usage: sparse_linear --train PATH --test PATH --features F>0 "
            "[--classes K>=2] [--batch-size B>0] [--epochs N>0] [--lr X>0] "
            "[--momentum X>=0] [--wd X] [--limit-batches N] [--check]\n");
    return 1;
  }
  return 0;
}

/* ---- model ---- */

static int zeros(const int64_t *shape, int ndim, mxc_ndarray *out) {
  CHECK_MX(mxc_ndarray_create(shape, ndim, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU,
                              0, 0, out));
  CHECK_MX(mxc_init_array(*out, "zeros", NULL, NULL, 0));
  return 0;
}

static int model_init(const config *c, model *m) {
  const int64_t wshape[2] = {c->features, c->classes};
  const int64_t bshape[2] = {1, c->classes};
  const size_t bk = (size_t)(c->batch * c->classes);
  m->p = malloc(bk * sizeof *m->p);
  m->dz = malloc(bk * sizeof *m->dz);
  m->bias = calloc((size_t)c->classes, sizeof *m->bias);
  m->y = malloc((size_t)c->batch * sizeof *m->y);
  m->touched = calloc((size_t)c->features, 1);
  m->rows = malloc((size_t)c->features * sizeof *m->rows);
  if (!m->p || !m->dz || !m->bias || !m->y || !m->touched || !m->rows) {
    fprintf(stderr, "sparse_linear: out of memory\n");
    return 1;
  }
  if (zeros(wshape, 2, &m->w) || zeros(bshape, 2, &m->b)) return 1;
  if (c->momentum > 0 && zeros(wshape, 2, &m->mom)) return 1;
  CHECK_MX(mxc_op_find("dot", &m->dot));
  CHECK_MX(mxc_op_find("broadcast_add", &m->add));
  CHECK_MX(mxc_op_find("softmax", &m->softmax));
  CHECK_MX(mxc_op_find(c->momentum > 0 ? "sgd_mom_update" : "sgd_update",
                       &m->update));
  return 0;
}

static void model_free(model *m) {
  mxc_ndarray_free(m->w);
  mxc_ndarray_free(m->b);
  mxc_ndarray_free(m->mom);
  free(m->p);
  free(m->dz);
  free(m->bias);
  free(m->y);
  free(m->touched);
  free(m->rows);
}

/* m->p = softmax(dot(x, W) + b) for a batch of rows (B x K, on the host). */
static int forward(const config *c, model *m, mxc_ndarray x, int64_t rows) {
  mxc_ndarray logits = NULL, z = NULL, p = NULL;
  mxc_ndarray xw[2] = {x, m->w};
  int rc = mxc_op_invoke(m->dot, NULL, NULL, 0, xw, 2, &logits, 1, NULL);
  if (rc == MXC_OK) {
    mxc_ndarray in[2] = {logits, m->b};
    rc = mxc_op_invoke(m->add, NULL, NULL, 0, in, 2, &z, 1, NULL);
  }
  if (rc == MXC_OK) {
    const char *k[] = {"axis"}, *v[] = {"-1"};
    rc = mxc_op_invoke(m->softmax, k, v, 1, &z, 1, &p, 1, NULL);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_copy_to_host(
        p, m->p, (size_t)(rows * c->classes) * sizeof *m->p);
  }
  mxc_ndarray_free(logits);
  mxc_ndarray_free(z);
  mxc_ndarray_free(p);
  CHECK_MX(rc);
  return 0;
}

/* Loss and accuracy of the first `real` rows of m->p against m->y. */
static void score(const config *c, const model *m, int64_t real,
                  pass_stats *s) {
  for (int64_t r = 0; r < real; ++r) {
    const float *pr = m->p + r * c->classes;
    int64_t label = (int64_t)m->y[r], best = 0;
    for (int64_t k = 1; k < c->classes; ++k) {
      if (pr[k] > pr[best]) best = k;
    }
    s->loss += -log(fmax((double)pr[label], 1e-30));
    s->correct += best == label;
    s->count++;
  }
}

/* Reads the current batch's data and labels; *pad = padded rows. */
static int batch_arrays(const config *c, model *m, mxc_data_iter it,
                        mxc_ndarray *x, int64_t *pad) {
  mxc_ndarray y = NULL;
  CHECK_MX(mxc_data_iter_pad(it, pad));
  CHECK_MX(mxc_data_iter_data(it, x));
  int rc = mxc_data_iter_label(it, &y);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_copy_to_host(y, m->y, (size_t)c->batch * sizeof *m->y);
  }
  mxc_ndarray_free(y);
  for (int64_t r = 0; rc == MXC_OK && r < c->batch; ++r) {
    if (m->y[r] < 0 || m->y[r] >= (float)c->classes) {
      fprintf(stderr, "sparse_linear: label %g outside 0..%lld\n", m->y[r],
              (long long)c->classes - 1);
      return 1;
    }
  }
  CHECK_MX(rc);
  return 0;
}

/* Records which rows of W the row_sparse gradient g stores. */
static int mark_touched(const config *c, model *m, mxc_ndarray g) {
  int stype = -1;
  int64_t nnz = 0;
  CHECK_MX(mxc_ndarray_stype(g, &stype));
  if (stype != MXC_STYPE_ROW_SPARSE) {
    fprintf(stderr, "sparse_linear: the gradient came back with storage "
                    "type %d, not row_sparse\n", stype);
    return 1;
  }
  CHECK_MX(mxc_ndarray_nnz(g, &nnz));
  m->grad_rows += nnz;
  m->updates++;
  if (nnz == 0) return 0;
  mxc_ndarray idx = NULL;
  CHECK_MX(mxc_ndarray_aux(g, MXC_ROW_SPARSE_INDICES, &idx));
  int rc = mxc_ndarray_copy_to_host(idx, m->rows,
                                    (size_t)nnz * sizeof *m->rows);
  mxc_ndarray_free(idx);
  CHECK_MX(rc);
  for (int64_t i = 0; i < nnz; ++i) {
    if (m->rows[i] >= 0 && m->rows[i] < c->features) m->touched[m->rows[i]] = 1;
  }
  return 0;
}

/* One SGD step from the probabilities in m->p (every row of the batch
 * counts, padded ones too: with MXC_LAST_BATCH_DISCARD there are none). */
static int backward_update(const config *c, model *m, mxc_ndarray x) {
  const int64_t B = c->batch, K = c->classes;
  for (int64_t r = 0; r < B; ++r) {
    for (int64_t k = 0; k < K; ++k) {
      float d = (m->p[r * K + k] - (k == (int64_t)m->y[r] ? 1.0f : 0.0f)) /
                (float)B;
      m->dz[r * K + k] = d;
      m->bias[k] -= (float)c->lr * d;
    }
  }
  const int64_t dshape[2] = {B, K}, wshape[2] = {c->features, K};
  mxc_ndarray dz = NULL, g = NULL;
  CHECK_MX(mxc_ndarray_create(dshape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                              0, &dz));
  int rc =
      mxc_ndarray_copy_from_host(dz, m->dz, (size_t)(B * K) * sizeof *m->dz);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(wshape, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, NULL, NULL, 0,
                                       MXC_DEVICE_CPU, 0, &g);
  }
  if (rc == MXC_OK) {
    const char *k[] = {"transpose_a"}, *v[] = {"true"};
    mxc_ndarray in[2] = {x, dz};
    rc = mxc_op_invoke(m->dot, k, v, 1, in, 2, &g, 1, NULL);
  }
  if (rc == MXC_OK) {
    char lr[32], wd[32], mom[32];
    snprintf(lr, sizeof lr, "%.9g", c->lr);
    snprintf(wd, sizeof wd, "%.9g", c->wd);
    snprintf(mom, sizeof mom, "%.9g", c->momentum);
    const char *keys[] = {"lr", "wd", "momentum"};
    const char *vals[] = {lr, wd, mom};
    mxc_ndarray in[3] = {m->w, g, m->mom};
    int with_mom = m->mom != NULL;
    rc = mxc_op_invoke(m->update, keys, vals, 2 + with_mom, in, 2 + with_mom,
                       &m->w, 1, NULL);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_copy_from_host(m->b, m->bias, (size_t)K * sizeof *m->bias);
  }
  int bad = rc == MXC_OK ? mark_touched(c, m, g) : 0;
  mxc_ndarray_free(dz);
  mxc_ndarray_free(g);
  CHECK_MX(rc);
  return bad;
}

/* One pass over it (from its start): trains when `train`, else only
 * scores; padded rows are not scored. */
static int run_pass(const config *c, model *m, mxc_data_iter it, int train,
                    pass_stats *s) {
  memset(s, 0, sizeof *s);
  CHECK_MX(mxc_data_iter_reset(it));
  for (int64_t n = 0; c->limit_batches == 0 || n < c->limit_batches; ++n) {
    int has = 0;
    CHECK_MX(mxc_data_iter_next(it, &has));
    if (!has) break;
    mxc_ndarray x = NULL;
    int64_t pad = 0;
    int bad = batch_arrays(c, m, it, &x, &pad);
    if (!bad) bad = forward(c, m, x, c->batch);
    if (!bad) score(c, m, c->batch - pad, s);
    if (!bad && train) bad = backward_update(c, m, x);
    mxc_ndarray_free(x);
    if (bad) return 1;
  }
  return 0;
}

static double mean_loss(const pass_stats *s) {
  return s->count ? s->loss / (double)s->count : NAN;
}

static double accuracy(const pass_stats *s) {
  return s->count ? (double)s->correct / (double)s->count : NAN;
}

static int train(const config *c, model *m, mxc_data_iter tr,
                 mxc_data_iter te) {
  pass_stats before, s, t;
  if (run_pass(c, m, tr, 0, &before)) return 1;
  printf("epoch 0: train loss %.4f acc %.4f (before training)\n",
         mean_loss(&before), accuracy(&before));
  for (int e = 1; e <= c->epochs; ++e) {
    double t0 = now_s();
    if (run_pass(c, m, tr, 1, &s)) return 1;
    double dt = now_s() - t0;
    if (run_pass(c, m, te, 0, &t)) return 1;
    printf("epoch %d: %.2fs train loss %.4f acc %.4f | test loss %.4f acc "
           "%.4f (%lld examples, %.0f examples/s)\n",
           e, dt, mean_loss(&s), accuracy(&s), mean_loss(&t), accuracy(&t),
           (long long)s.count, (double)s.count / dt);
    fflush(stdout);
  }
  pass_stats after;
  if (run_pass(c, m, tr, 0, &after)) return 1;
  int64_t touched = 0;
  for (int64_t i = 0; i < c->features; ++i) touched += m->touched[i];
  printf("final: train loss %.4f (before %.4f) acc %.4f | test acc %.4f\n",
         mean_loss(&after), mean_loss(&before), accuracy(&after),
         accuracy(&t));
  printf("weight rows touched by row_sparse updates: %lld of %lld (%.1f%%); "
         "rows per update: %.0f on average (%.2f%% of W)\n",
         (long long)touched, (long long)c->features,
         100.0 * (double)touched / (double)c->features,
         m->updates ? (double)m->grad_rows / (double)m->updates : 0.0,
         m->updates ? 100.0 * (double)m->grad_rows / (double)m->updates /
                          (double)c->features
                    : 0.0);
  printf("storage fallbacks logged: %d%s\n", atomic_load(&g_fallbacks),
         atomic_load(&g_fallbacks) ? " (see stderr)"
                                   : " (every operator ran its sparse or "
                                     "dense kernel directly)");
  if (c->check && !(mean_loss(&after) < mean_loss(&before))) {
    fprintf(stderr, "sparse_linear: --check: the loss did not go down\n");
    return 3;
  }
  return 0;
}

int main(int argc, char **argv) {
  config c = {NULL, NULL, 0, 2, 256, 5, 0.5, 0.0, 0.0, 0, 0};
  if (parse_args(argc, argv, &c)) return 2;
  mxc_data_iter tr = NULL, te = NULL;
  model m;
  memset(&m, 0, sizeof m);
  int rc = 0;
  /* Training drops the last short batch; testing pads it and skips the
   * padded rows, so every test example counts once. */
  if (mxc_data_iter_libsvm_create(c.train_path, c.features, c.batch, 0,
                                  MXC_LAST_BATCH_DISCARD, &tr) != MXC_OK ||
      mxc_data_iter_libsvm_create(c.test_path, c.features, c.batch, 0,
                                  MXC_LAST_BATCH_PAD, &te) != MXC_OK) {
    fprintf(stderr, "sparse_linear: %s\n", mxc_last_error());
    rc = 1;
  }
  if (!rc) rc = model_init(&c, &m);
  mxc_set_log_callback(on_log, NULL);
  int threads = 0;
  if (!rc && mxc_get_num_threads(&threads) != MXC_OK) threads = -1;
  if (!rc) {
    printf("sparse_linear: %lld features, %lld classes, batch %lld, lr %g, "
           "momentum %g, %d threads\n",
           (long long)c.features, (long long)c.classes, (long long)c.batch,
           c.lr, c.momentum, threads);
    rc = train(&c, &m, tr, te);
  }
  model_free(&m);
  mxc_data_iter_free(tr);
  mxc_data_iter_free(te);
  return rc;
}
