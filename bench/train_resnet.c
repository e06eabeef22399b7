#include "bench/train_resnet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_NAME "bench train"
#include "bench/bench_params.h"
#include "bench/bench_util.h"
#include "bench/resnet_util.h"

#define MODEL "resnet18"
#define CLASSES 1000
#define MAX_STEPS 1000
#define DATA_SEED 11
#define LABEL_SEED 12

/* The bound training graph and what the update needs. */
typedef struct net {
  mxc_executor ex;
  mxc_ndarray out, label;
  bench_params p; /* the loaded weights, zero momenta */
} net;

typedef struct paths {
  char models[BENCH_PATH + 16], work[BENCH_PATH];
} paths;

void resnet_opts_init(resnet_opts *o, const char *argv0) {
  memset(o, 0, sizeof *o);
  o->batch = 32;
  o->image = 224;
  o->steps = 5;
  o->warmup = 1;
  o->rounds = 3;
  o->torch = 1;
  o->lr = 0.01;
  o->tolerance = 0.02;
  o->argv0 = argv0;
  o->python = bench_python();
}

static void die(const char *what) {
  fprintf(stderr, "bench train: %s\n", what);
  exit(1);
}

/* ---- the batch ------------------------------------------------------------
 */

static int64_t image_floats(const resnet_opts *o) {
  return (int64_t)o->batch * 3 * o->image * o->image;
}

/* Images of order one and labels spread over the classes: the same values
 * on both sides, through files the peer reads. */
static void make_batch(const resnet_opts *o, const paths *p, float **x,
                       float **y) {
  int64_t n = image_floats(o);
  *x = malloc((size_t)n * sizeof **x);
  *y = malloc((size_t)o->batch * sizeof **y);
  if (*x == NULL || *y == NULL) die("out of memory for the batch");
  bench_fill(*x, n, DATA_SEED);
  bench_fill(*y, o->batch, LABEL_SEED);
  for (int i = 0; i < o->batch; ++i) {
    (*y)[i] = (float)((int)fabsf((*y)[i] * 997.0f) % CLASSES);
  }
  char path[2 * BENCH_PATH];
  snprintf(path, sizeof path, "%s/train_data.f32", p->work);
  if (bench_write_f32(path, *x, n) != 0) exit(1);
  snprintf(path, sizeof path, "%s/train_label.f32", p->work);
  if (bench_write_f32(path, *y, o->batch) != 0) exit(1);
}

/* ---- mxc ---------------------------------------------------------------- */

static mxc_executor bind_train(const resnet_opts *o, const paths *p,
                               mxc_symbol sym) {
  char path[2 * BENCH_PATH];
  const char *names[2] = {"data", "softmax_label"};
  int ndims[2] = {4, 1};
  int64_t dims[5] = {o->batch, 3, o->image, o->image, o->batch};
  int reqs[2] = {MXC_REQ_NULL, MXC_REQ_NULL};
  mxc_executor ex = NULL;
  check(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 2, names, ndims, dims,
                                 NULL, MXC_REQ_WRITE, 2, names, reqs,
                                 MXC_BIND_DEFAULT, &ex),
        "mxc_executor_simple_bind (training)");
  snprintf(path, sizeof path, "%s/" MODEL "-0000.params", p->models);
  check(mxc_executor_load_params(ex, path, 0), path);
  return ex;
}

static void net_create(const resnet_opts *o, const paths *p, const float *x,
                       const float *y, net *nt) {
  memset(nt, 0, sizeof *nt);
  char path[2 * BENCH_PATH];
  snprintf(path, sizeof path, "%s/" MODEL "_train-symbol.json", p->models);
  mxc_symbol sym = NULL;
  check(mxc_symbol_load(path, &sym), path);
  nt->ex = bind_train(o, p, sym);
  bench_params_collect(&nt->p, nt->ex, sym, 0);
  mxc_symbol_free(sym);
  mxc_ndarray data = NULL;
  check(mxc_executor_arg(nt->ex, "data", &data), "mxc_executor_arg data");
  check(
      mxc_ndarray_copy_from_host(data, x, (size_t)image_floats(o) * sizeof *x),
      "copying the images");
  mxc_ndarray_free(data);
  check(mxc_executor_arg(nt->ex, "softmax_label", &nt->label), "label");
  check(mxc_ndarray_copy_from_host(nt->label, y, (size_t)o->batch * sizeof *y),
        "copying the labels");
  check(mxc_executor_output(nt->ex, 0, &nt->out), "mxc_executor_output");
}

static void net_free(net *nt) {
  bench_params_free(&nt->p);
  mxc_ndarray_free(nt->out);
  mxc_ndarray_free(nt->label);
  mxc_executor_free(nt->ex);
}

/* w += mom = 0.9 mom - lr grad / batch for every parameter: PyTorch's
 * SGD(momentum=0.9) on the mean loss, in MXNet's form. */
static void update(const resnet_opts *o, net *nt) {
  bench_params_sgd(&nt->p, o->lr, 0.9, 1.0 / o->batch);
}

/* One step; returns the mean loss of its forward (which waits for the
 * forward only: backward and the updates go on in the engine). */
static double step(const resnet_opts *o, net *nt) {
  check(mxc_executor_forward(nt->ex, 1), "mxc_executor_forward");
  check(mxc_executor_backward(nt->ex, 0, NULL), "mxc_executor_backward");
  update(o, nt);
  double sum = 0;
  int64_t count = 0;
  check(mxc_metric_cross_entropy(nt->out, nt->label, 1e-12, &sum, &count),
        "the loss");
  return sum / (double)(count > 0 ? count : 1);
}

/* Milliseconds per timed step, and in *cpu_ms the process's CPU
 * milliseconds per timed step; loss[0..warmup+steps) as it went. */
static double run_mxc(const resnet_opts *o, const paths *p, double *loss,
                      double *cpu_ms) {
  float *x = NULL, *y = NULL;
  make_batch(o, p, &x, &y);
  net nt;
  net_create(o, p, x, y, &nt);
  free(x);
  free(y);
  for (int i = 0; i < o->warmup; ++i) loss[i] = step(o, &nt);
  check(mxc_wait_all(), "mxc_wait_all");
  double t0 = now_s(), c0 = cpu_s();
  for (int i = 0; i < o->steps; ++i) loss[o->warmup + i] = step(o, &nt);
  check(mxc_wait_all(), "mxc_wait_all");
  double ms = 1e3 * (now_s() - t0) / o->steps;
  *cpu_ms = 1e3 * (cpu_s() - c0) / o->steps;
  net_free(&nt);
  return ms;
}

/* ---- PyTorch and the comparison --------------------------------------------
 */

static int run_torch(const resnet_opts *o, const paths *p, bench_kvs *kvs) {
  if (!o->torch) return 0;
  if (access(o->torch_script, R_OK) != 0) {
    fprintf(stderr, "bench train: %s not found; skipping PyTorch\n",
            o->torch_script);
    return 0;
  }
  char cmd[4 * BENCH_PATH];
  snprintf(
      cmd, sizeof cmd,
      "'%s' '%s' --model resnet18 --resnet-dir '%s' --work '%s' "
      "--batch-size %d --image-size %d --batches %d --warmup %d --lr %.17g "
      "--threads %d",
      o->python, o->torch_script, p->models, p->work, o->batch, o->image,
      o->steps, o->warmup, o->lr, o->threads > 0 ? o->threads : 2);
  int status = bench_run_peer(cmd, kvs);
  if (status != 0) {
    fprintf(stderr,
            "bench train: PyTorch ResNet-18 peer failed (status %d); "
            "skipping its figures\n",
            status);
  }
  return status == 0;
}

/* Largest |mxc - torch| / max(1, |torch|) over the steps. */
static double loss_diff(const resnet_opts *o, const double *loss,
                        const bench_kvs *kvs) {
  double worst = 0;
  for (int i = 0; i < o->warmup + o->steps; ++i) {
    char key[96];
    snprintf(key, sizeof key, "resnet18_train_torch_loss_%d", i);
    double t = bench_kvs_get(kvs, key);
    double d = fabs(loss[i] - t) / fmax(1.0, fabs(t));
    if (isnan(d) || d > worst) worst = d;
    if (isnan(d)) break;
  }
  return worst;
}

/* The rounds' figures: mxc's and PyTorch's milliseconds per step. */
typedef struct rounds {
  double ms[RESNET_MAX_ROUNDS], torch_ms[RESNET_MAX_ROUNDS];
  double cpu[RESNET_MAX_ROUNDS], torch_cpu[RESNET_MAX_ROUNDS];
  int n, torch; /* torch: PyTorch ran in every round */
} rounds;

/* The median of a[k] / b[k] over the rounds as resnet18_train_<what>_vs_torch
 * and their spread as resnet18_train_<what>_min / _max. */
static void report_ratio(const rounds *r, const double *a, const double *b,
                         const char *what) {
  double ratio[RESNET_MAX_ROUNDS];
  for (int k = 0; k < r->n; ++k) ratio[k] = a[k] / b[k];
  double med = bench_median(ratio, r->n); /* sorts ratio */
  printf("resnet18_train_%s_vs_torch=%.3f\n", what, med);
  printf("resnet18_train_%s_min=%.3f\n", what, ratio[0]);
  printf("resnet18_train_%s_max=%.3f\n", what, ratio[r->n - 1]);
}

static void report_ratios(rounds *r) {
  report_ratio(r, r->ms, r->torch_ms, "ratio");
  printf("resnet18_train_ratio_vs_torch_goal=0.7\n");
  if (!isnan(r->torch_cpu[0])) {
    report_ratio(r, r->cpu, r->torch_cpu, "cpu_ratio");
  }
}

static int report(const resnet_opts *o, rounds *r, const double *loss,
                  const bench_kvs *kvs) {
  int last = o->warmup + o->steps - 1;
  double ms[RESNET_MAX_ROUNDS]; /* bench_median sorts: r->ms stays paired */
  memcpy(ms, r->ms, sizeof ms);
  printf("resnet18_train_ms=%.3f\n", bench_median(ms, r->n));
  printf("resnet18_train_loss_first=%.6f\n", loss[0]);
  printf("resnet18_train_loss_last=%.6f\n", loss[last]);
  if (!r->torch) return 0;
  report_ratios(r);
  double d = loss_diff(o, loss, kvs);
  printf("resnet18_train_loss_maxdiff=%.3g\n", d);
  if (d <= o->tolerance) return 0;
  fprintf(stderr,
          "bench train: FAIL: the ResNet-18 losses of mxc and PyTorch "
          "differ by %.3g (relative; allowed %.3g)\n",
          d, o->tolerance);
  return 1;
}

/* Round k: mxc then PyTorch, or PyTorch first in odd rounds, so that a
 * steady drift of the machine's speed favours neither. Every round binds
 * afresh from the same weights and batch, so the losses repeat: round 0's
 * are kept for the comparison. */
static void run_round(const resnet_opts *o, const paths *p, int k, rounds *r,
                      double *loss, bench_kvs *kvs) {
  double scratch[MAX_STEPS];
  if (k % 2 == 1 && r->torch) r->torch = run_torch(o, p, kvs);
  r->ms[k] = run_mxc(o, p, k == 0 ? loss : scratch, &r->cpu[k]);
  if (k % 2 == 0 && r->torch) r->torch = run_torch(o, p, kvs);
  r->torch_ms[k] = bench_kvs_get(kvs, "resnet18_train_torch_ms");
  r->torch_cpu[k] = bench_kvs_get(kvs, "resnet18_train_torch_cpu_ms");
  printf("resnet18_train_round%d_ms=%.3f\n", k, r->ms[k]);
  printf("resnet18_train_round%d_cpu_ms=%.3f\n", k, r->cpu[k]);
  if (!r->torch) return;
  printf("resnet18_train_round%d_torch_ms=%.3f\n", k, r->torch_ms[k]);
  printf("resnet18_train_round%d_ratio=%.3f\n", k, r->ms[k] / r->torch_ms[k]);
  printf("resnet18_train_round%d_cpu_ratio=%.3f\n", k,
         r->cpu[k] / r->torch_cpu[k]);
  fflush(stdout);
}

static void make_work(paths *p) {
  const char *tmp = getenv("TMPDIR");
  snprintf(p->work, sizeof p->work, "%s/mxc-bench-train-XXXXXX",
           tmp && tmp[0] ? tmp : "/tmp");
  if (mkdtemp(p->work) == NULL) die("cannot create a work folder");
}

static void remove_work(const paths *p) {
  static const char *const files[] = {"train_data.f32", "train_label.f32"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[2 * BENCH_PATH];
    snprintf(path, sizeof path, "%s/%s", p->work, files[i]);
    unlink(path);
  }
  rmdir(p->work);
}

int resnet_train_bench(const resnet_opts *o) {
  static bench_kvs kvs;
  if (o->steps < 1 || o->warmup < 0 || o->warmup + o->steps > MAX_STEPS) {
    die("ResNet-18 steps: expected 1.. and warm-up 0.., 1000 in all");
  }
  paths p;
  char cache[BENCH_PATH], gen[BENCH_PATH];
  bench_cache_dir(cache);
  snprintf(p.models, sizeof p.models, "%s/models", cache);
  bench_find(o->argv0, "scripts/make_resnet.py", gen);
  if (bench_make_models(o->python, gen, p.models, MODEL) != 0) return 1;
  make_work(&p);
  double loss[MAX_STEPS];
  printf("resnet18_train_batch=%d image_size=%d steps=%d warmup=%d lr=%g "
         "rounds=%d\n",
         o->batch, o->image, o->steps, o->warmup, o->lr, o->rounds);
  rounds r = {.n = o->rounds, .torch = o->torch};
  for (int k = 0; k < o->rounds; ++k) run_round(o, &p, k, &r, loss, &kvs);
  remove_work(&p);
  return report(o, &r, loss, &kvs);
}
