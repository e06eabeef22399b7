/* Training throughput: the two Fashion-MNIST models of
 * examples/train_fashion_mnist (same code: examples/fmnist.c) against
 * PyTorch on the CPU (bench/train_torch.py, run in the same invocation),
 * as seconds per epoch of 60000 images. Prints name=value lines:
 *   mlp_epoch_s_mxc, mlp_epoch_s_torch, mlp_epoch_ratio_vs_torch (mxc /
 *   torch), the same for lenet, and the ratio goals; then the ResNet-18
 *   training step (bench/train_resnet.h: resnet18_train_ms,
 *   resnet18_train_torch_ms, resnet18_train_ratio_vs_torch and the losses
 *   of both sides, which must agree: exit status 1 otherwise).
 * Each measurement times --batches training steps (forward, backward,
 * sgd_mom_update of every parameter, and the per-batch loss and accuracy
 * the example computes, fed from the IDX iterator as in the example)
 * after a few warm-up steps, and scales to 60000 images. PyTorch runs
 * with 2 threads (torch.set_num_threads(2)), mxc with its default worker
 * count (all CPUs) unless --threads is given (the ResNet-18 peer then
 * runs with as many).
 *
 * Usage: train [--batches N (default 100; 0: a whole epoch)]
 *              [--model mlp|lenet|resnet18|both (mlp and lenet)|all
 *               (default)] [--threads N] [--no-torch]
 *              [--resnet-steps N (5)] [--resnet-batch B (32)]
 *              [--resnet-image-size S (224)] [--resnet-rounds R (3)]
 *              [--profile (time per graph node instead; see profile_model)]
 *              [--python PATH] [--torch-script PATH] [--data-dir DIR]
 * Run as `bazel run -c opt //bench:train` (or bazel-bin/bench/train); the
 * script is bench/train_torch.py under the working directory or in the
 * program's runfiles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/train_resnet.h"
#include "examples/fmnist.h"
#include "mxc/mxc.h"

#define EPOCH_IMAGES 60000.0
#define BATCH 128
#define WARMUP 5

typedef struct opts {
  int64_t batches;
  int run_mlp, run_lenet, run_resnet, threads, torch, profile;
  const char *python, *script, *data_dir;
  resnet_opts resnet;
} opts;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench train: %s failed: %s\n", what, msg);
  exit(1);
}

static void check_mx(int rc, const char *what) {
  if (rc != MXC_OK) die(what, mxc_last_error());
}

static void check_fm(int rc, const char *what) {
  if (rc != MXC_OK) die(what, fm_last_error());
}

/* Fashion-MNIST training batches in the model's layout, shuffled. */
static mxc_data_iter open_train(const opts *o, fm_model model) {
  char img[4096], lab[4096];
  snprintf(img, sizeof img, "%s/train-images-idx3-ubyte.gz", o->data_dir);
  snprintf(lab, sizeof lab, "%s/train-labels-idx1-ubyte.gz", o->data_dir);
  mxc_data_iter it = NULL;
  check_mx(mxc_data_iter_idx_create(img, lab, BATCH, 1, 1, model == FM_MLP, 1,
                                    MXC_LAST_BATCH_DISCARD, &it),
           "mxc_data_iter_idx_create (is dataset-fashion-mnist installed?)");
  return it;
}

/* One training step on the iterator's next batch (a new epoch when the
 * current one ends). */
static void step(fm_net *net, mxc_data_iter it, const fm_opt *opt,
                 fm_stats *st) {
  int has = 0;
  check_mx(mxc_data_iter_next(it, &has), "mxc_data_iter_next");
  if (!has) {
    check_mx(mxc_data_iter_reset(it), "mxc_data_iter_reset");
    check_mx(mxc_data_iter_next(it, &has), "mxc_data_iter_next");
  }
  mxc_ndarray data = NULL, label = NULL;
  check_mx(mxc_data_iter_data(it, &data), "mxc_data_iter_data");
  check_mx(mxc_data_iter_label(it, &label), "mxc_data_iter_label");
  check_fm(fm_net_step(net, data, label, opt, st), "fm_net_step");
  mxc_ndarray_free(data);
  mxc_ndarray_free(label);
}

/* Seconds per 60000-image epoch of `model` through mxc. */
static double mxc_epoch_s(const opts *o, fm_model model) {
  fm_net *net = NULL;
  check_fm(fm_net_create(model, BATCH, &net), "fm_net_create");
  check_fm(fm_net_init(net, 1), "fm_net_init");
  mxc_data_iter it = open_train(o, model);
  fm_opt opt = {model == FM_MLP ? 0.1 : 0.05, 0.9, 0, -1};
  fm_stats st = {0, 0, 0};
  int64_t n = o->batches > 0 ? o->batches : (int64_t)(EPOCH_IMAGES / BATCH);
  for (int i = 0; i < WARMUP; ++i) step(net, it, &opt, &st);
  check_mx(mxc_wait_all(), "mxc_wait_all");
  double t0 = now_s();
  for (int64_t i = 0; i < n; ++i) step(net, it, &opt, &st);
  check_mx(mxc_wait_all(), "mxc_wait_all");
  double dt = now_s() - t0;
  fprintf(stderr, "bench train: mxc %s: %lld batches in %.2f s, mean loss %.3f\n",
          fm_model_name(model), (long long)n, dt,
          st.loss_sum / (double)(st.count > 0 ? st.count : 1));
  mxc_data_iter_free(it);
  fm_net_free(net);
  return dt / ((double)n * BATCH) * EPOCH_IMAGES;
}

/* Runs the PyTorch peer once for the selected models; fills the epoch
 * times it reports (NAN when it could not run: the reason is on stderr). */
static void torch_epoch_s(const opts *o, double *mlp, double *lenet) {
  *mlp = *lenet = NAN;
  if (!o->torch || !(o->run_mlp || o->run_lenet)) return;
  if (access(o->script, R_OK) != 0) {
    fprintf(stderr, "bench train: %s not found; skipping PyTorch\n", o->script);
    return;
  }
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' '%s' --model %s --batches %lld --data-dir '%s'",
           o->python, o->script,
           o->run_mlp && o->run_lenet ? "both" : o->run_mlp ? "mlp" : "lenet",
           (long long)o->batches, o->data_dir);
  FILE *p = popen(cmd, "r");
  if (p == NULL) {
    fprintf(stderr, "bench train: cannot run '%s'\n", cmd);
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, p) != NULL) {
    double v = 0;
    if (sscanf(line, "mlp_epoch_s_torch=%lf", &v) == 1) *mlp = v;
    if (sscanf(line, "lenet_epoch_s_torch=%lf", &v) == 1) *lenet = v;
    if (strncmp(line, "torch_", 6) == 0) fputs(line, stdout);
  }
  int status = pclose(p);
  if (status != 0) {
    fprintf(stderr, "bench train: '%s' exited with status %d\n", cmd, status);
  }
}

/* ---- --profile: time per graph node through the executor's monitor ---- */

#define MAX_NODES 128

typedef struct profile {
  double last; /* when the previous node finished */
  int n;
  char names[MAX_NODES][64];
  double seconds[MAX_NODES];
} profile;

/* With a monitor set, the executor waits for each node before calling
 * this, so nodes run one at a time and the time since the previous call is
 * this node's (its first output's; further outputs add about 0). */
static void on_node(void *user_data, const char *name, mxc_ndarray arr) {
  (void)arr;
  profile *p = user_data;
  double t = now_s();
  int i = 0;
  while (i < p->n && strcmp(p->names[i], name) != 0) ++i;
  if (i == p->n && p->n < MAX_NODES) {
    snprintf(p->names[p->n], sizeof p->names[0], "%s", name);
    p->seconds[p->n++] = 0;
  }
  if (i < p->n) p->seconds[i] += t - p->last;
  p->last = t;
}

/* Per-node milliseconds per step over --batches steps, largest first, as
 * profile_<model>_<node>_ms lines; the rest of a step (copies, updates,
 * metrics, waiting) is profile_<model>_other_ms. Nodes run serialized, so
 * the sum exceeds a normal step's time when branches would overlap. */
static void profile_model(const opts *o, fm_model model) {
  static profile p;
  memset(&p, 0, sizeof p);
  fm_net *net = NULL;
  check_fm(fm_net_create(model, BATCH, &net), "fm_net_create");
  check_fm(fm_net_init(net, 1), "fm_net_init");
  mxc_data_iter it = open_train(o, model);
  fm_opt opt = {model == FM_MLP ? 0.1 : 0.05, 0.9, 0, -1};
  fm_stats st = {0, 0, 0};
  for (int i = 0; i < WARMUP; ++i) step(net, it, &opt, &st);
  check_mx(mxc_wait_all(), "mxc_wait_all");
  check_mx(mxc_executor_set_monitor(fm_net_executor(net), on_node, &p),
           "mxc_executor_set_monitor");
  int64_t n = o->batches > 0 ? o->batches : 20;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double t0 = now_s();
    p.last = t0;
    step(net, it, &opt, &st);
    check_mx(mxc_wait_all(), "mxc_wait_all");
    total += now_s() - t0;
  }
  double nodes = 0;
  for (int pass = 0; pass < p.n; ++pass) { /* largest first */
    int best = -1;
    for (int i = 0; i < p.n; ++i) {
      if (p.seconds[i] >= 0 && (best < 0 || p.seconds[i] > p.seconds[best])) {
        best = i;
      }
    }
    printf("profile_%s_%s_ms=%.3f\n", fm_model_name(model), p.names[best],
           1e3 * p.seconds[best] / (double)n);
    nodes += p.seconds[best];
    p.seconds[best] = -1;
  }
  printf("profile_%s_other_ms=%.3f\n", fm_model_name(model),
         1e3 * (total - nodes) / (double)n);
  printf("profile_%s_step_ms=%.3f\n", fm_model_name(model),
         1e3 * total / (double)n);
  check_mx(mxc_executor_set_monitor(fm_net_executor(net), NULL, NULL),
           "mxc_executor_set_monitor");
  mxc_data_iter_free(it);
  fm_net_free(net);
}

static void parse_model(opts *o, const char *v) {
  static const char *const names[] = {"mlp", "lenet", "resnet18", "both",
                                      "all"};
  static const int picks[][3] = {
      {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 1, 1}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (strcmp(v, names[i]) == 0) {
      o->run_mlp = picks[i][0];
      o->run_lenet = picks[i][1];
      o->run_resnet = picks[i][2];
      return;
    }
  }
  die("--model", "expected mlp, lenet, resnet18, both or all");
}

/* --resnet-steps/-batch/-image-size/-rounds (what: the text after
 * --resnet-). */
static void parse_resnet(opts *o, const char *what, const char *v) {
  int x = atoi(v);
  if (strcmp(what, "steps") == 0 && x >= 1 && x <= 900) {
    o->resnet.steps = x;
  } else if (strcmp(what, "batch") == 0 && x >= 1 && x <= 1024) {
    o->resnet.batch = x;
  } else if (strcmp(what, "image-size") == 0 && x >= 32 && x <= 1024) {
    o->resnet.image = x;
  } else if (strcmp(what, "rounds") == 0 && x >= 1 &&
             x <= RESNET_MAX_ROUNDS) {
    o->resnet.rounds = x;
  } else {
    char expected[128];
    snprintf(expected, sizeof expected,
             "steps 1..900, batch 1..1024, image-size 32..1024 or rounds "
             "1..%d expected",
             RESNET_MAX_ROUNDS);
    die("parsing --resnet-*", expected);
  }
}

static void parse(int argc, char **argv, opts *o) {
  o->batches = 100;
  o->run_mlp = o->run_lenet = o->run_resnet = 1;
  resnet_opts_init(&o->resnet, argv[0]);
  o->torch = 1;
  o->python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                    : "python3";
  /* bazel run starts in the runfiles tree, where bench/ is; a direct
   * bazel-bin/bench/train finds the script in its runfiles. */
  static char beside[4096];
  snprintf(beside, sizeof beside, "%s.runfiles/mxc/bench/train_torch.py",
           argv[0]);
  o->script = access("bench/train_torch.py", R_OK) == 0 ? "bench/train_torch.py"
                                                       : beside;
  o->resnet.torch_script = o->script;
  o->data_dir = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--no-torch") == 0) {
      o->torch = o->resnet.torch = 0;
      continue;
    }
    if (strcmp(a, "--profile") == 0) {
      o->profile = 1;
      continue;
    }
    if (v == NULL) die("parsing the command line", "an option needs a value");
    if (strcmp(a, "--batches") == 0) {
      o->batches = atoll(v);
    } else if (strcmp(a, "--model") == 0) {
      parse_model(o, v);
    } else if (strncmp(a, "--resnet-", 9) == 0) {
      parse_resnet(o, a + 9, v);
    } else if (strcmp(a, "--threads") == 0) {
      o->threads = o->resnet.threads = atoi(v);
    } else if (strcmp(a, "--python") == 0) {
      o->python = o->resnet.python = v;
    } else if (strcmp(a, "--torch-script") == 0) {
      o->script = o->resnet.torch_script = v;
    } else if (strcmp(a, "--data-dir") == 0) {
      o->data_dir = v;
    } else {
      die("parsing the command line", a);
    }
    ++i;
  }
}

static void print_model(const char *name, double mxc_s, double torch_s,
                        double goal) {
  printf("%s_epoch_s_mxc=%.3f\n", name, mxc_s);
  printf("%s_epoch_s_torch=%.3f\n", name, torch_s);
  printf("%s_epoch_ratio_vs_torch=%.3f\n", name, mxc_s / torch_s);
  printf("%s_epoch_ratio_vs_torch_goal=%.1f\n", name, goal);
}

int main(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof o);
  parse(argc, argv, &o);
  if (o.threads > 0) check_mx(mxc_set_num_threads(o.threads), "threads");
  int threads = 0;
  check_mx(mxc_get_num_threads(&threads), "mxc_get_num_threads");
  printf("mxc_threads=%d\n", threads);
  if (o.run_mlp || o.run_lenet) {
    printf("batch_size=%d timed_batches=%lld\n", BATCH, (long long)o.batches);
  }
  if (o.profile) {
    if (o.run_mlp) profile_model(&o, FM_MLP);
    if (o.run_lenet) profile_model(&o, FM_LENET);
    return 0;
  }
  double mlp = NAN, lenet = NAN, tmlp = NAN, tlenet = NAN;
  if (o.run_mlp) mlp = mxc_epoch_s(&o, FM_MLP);
  if (o.run_lenet) lenet = mxc_epoch_s(&o, FM_LENET);
  torch_epoch_s(&o, &tmlp, &tlenet);
  if (o.run_mlp) print_model("mlp", mlp, tmlp, 0.4);
  if (o.run_lenet) print_model("lenet", lenet, tlenet, 0.5);
  fflush(stdout);
  return o.run_resnet ? resnet_train_bench(&o.resnet) : 0;
}
