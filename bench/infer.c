/* Inference latency: torchvision's ResNet-18 and ResNet-50 (graphs and
 * fixed-seed weights from scripts/make_resnet.py, MXNet JSON + .params)
 * through the public API (simple_bind with is_train 0, forward), next to
 * PyTorch (bench/infer_torch.py: the same weights, inference_mode, 2
 * threads) and ONNX Runtime (bench/infer_ort.js under node, npm's
 * onnxruntime-node, intraOpNumThreads 2) run in the same invocation on the
 * same input. Prints the machine (CPU, mxc's features, the switches in
 * the environment) and name=value lines per model M and batch B:
 *   M_bB_ms, M_bB_median_ms            mxc: best and median forward
 *   M_bB_torch_ms, M_bB_ort_ms (and _median_ms): the peers
 *   M_bB_roundK_ratio_vs_torch, ..._vs_ort: round K's mxc best / peer best
 *   M_bB_ratio_vs_torch, M_bB_ratio_vs_ort: the median of the rounds'
 *     ratios (and _min, _max: their spread)
 *   M_bB_maxdiff_torch, M_bB_maxdiff_ort: max |mxc - peer| of the logits
 * Everything runs --rounds times (3), the order of mxc and the peers
 * reversed in odd rounds: the machine's speed drifts (a peer's time has
 * moved by 45% within one session here), and one mxc run against one later
 * peer run measures the drift as much as the code. The per-round _ms
 * lines are printed as each run ends (the last round's are the last).
 * and the goals of issue 16 (resnet18_b1 and resnet50_b1 vs ONNX Runtime,
 * resnet50_b32 vs PyTorch). A fast wrong answer is worthless: the logits
 * of every peer must agree with mxc's within --tolerance times
 * max(1, max |logit|), else the program says which and exits 1. A peer
 * that cannot run (no torch, no node, no onnxruntime-node) is skipped
 * with the reason on stderr.
 *
 * Usage: infer [--models resnet18,resnet50] [--batches 1,32]
 *              [--iters N (20)] [--warmup N (3)] [--image-size S (224)]
 *              [--rounds R (3)]
 *              [--quick (iters 2, warmup 1)] [--threads N]
 *              [--bind-flags N (MXC_BIND_* bits)] [--no-onednn]
 *              [--no-infer-passes] [--tolerance T (1e-3)]
 *              [--no-torch] [--no-ort] [--cache DIR] [--model-dir DIR]
 *              [--python PATH] [--node PATH] [--bf16]
 * --bf16 also times each model and batch bound with MXC_BIND_BF16
 * (M_bB_bf16_ms; M_bB_bf16_values says how many values it applied to, 0
 * on a CPU without native bfloat16) and prints the top-1 agreement of
 * bfloat16 with float32 over 16 fixed images (M_bf16_top1_agreement).
 * The cache (see bench_cache_dir) holds models/ (written on first use by
 * scripts/make_resnet.py; --model-dir: elsewhere) and ort/node_modules
 * (scripts/bench.sh runs `npm install --ignore-scripts onnxruntime-node`
 * there). Run as `bazel run -c opt //bench:infer` or bazel-bin/bench/infer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_NAME "bench infer"
#include "bench/bench_util.h"
#include "bench/resnet_util.h"

/* The bind flags of issue 16 (core/exec defines them once merged). */
#ifndef MXC_BIND_NO_ONEDNN
#define MXC_BIND_NO_ONEDNN 4
#endif
#ifndef MXC_BIND_NO_INFER_PASSES
#define MXC_BIND_NO_INFER_PASSES 8
#endif
/* Images of the bfloat16 top-1 agreement check (one batch). */
#define AGREE_IMAGES 16

#define MAX_MODELS 4
#define MAX_BATCHES 8
#define MAX_ROUNDS 20
/* The peers, in the order of a round's runs after mxc. */
enum { PEER_TORCH, PEER_ORT, N_PEERS };
static const char *const k_peer[N_PEERS] = {"torch", "ort"};
#define CLASSES 1000
#define INPUT_SEED 7

typedef struct opts {
  char models[MAX_MODELS][16];
  int64_t batches[MAX_BATCHES];
  int n_models, n_batches, iters, warmup, image, threads, flags, rounds;
  int torch, ort, bf16;
  double tolerance;
  const char *python, *node;
  char cache[BENCH_PATH], model_dir[BENCH_PATH + 16], work[BENCH_PATH];
  char gen[BENCH_PATH], torch_py[BENCH_PATH], ort_js[BENCH_PATH];
} opts;

/* One run of mxc on a model and batch: the logits of the last forward. */
typedef struct result {
  float *logits;
  int64_t n;
} result;

/* Per (model, batch) tag and peer, every round's ratio; ran[p]: peer p
 * ran in every round so far. */
typedef struct ratios {
  double v[MAX_MODELS * MAX_BATCHES][N_PEERS][MAX_ROUNDS];
  int n, ran[N_PEERS];
} ratios;

static void die(const char *what) {
  fprintf(stderr, "bench infer: %s\n", what);
  exit(1);
}

/* ---- the machine ------------------------------------------------------- */

/* The ISA extensions that decide GEMM and convolution speed. */
static void print_isa(void) {
  static const char *const wanted[] = {"avx2",        "fma",         "avx512f",
                                       "avx512_vnni", "avx512_bf16", "amx_tile",
                                       "amx_bf16"};
  char flags[8192];
  bench_cpuinfo("flags", flags, sizeof flags);
  printf("cpu_isa=");
  const char *sep = "";
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; ++i) {
    char word[32];
    snprintf(word, sizeof word, " %s ", wanted[i]);
    char padded[8200];
    snprintf(padded, sizeof padded, " %s ", flags);
    if (strstr(padded, word) != NULL) {
      printf("%s%s", sep, wanted[i]);
      sep = ",";
    }
  }
  printf("\n");
}

/* mxc's enabled build/run-time features (GEMM choice, oneDNN, ...). */
static void print_features(void) {
  printf("mxc_version=%s mxc_features=", mxc_version_string());
  const char *sep = "";
  for (int i = 0; i < mxc_feature_count(); ++i) {
    const char *name = mxc_feature_name(i);
    int on = 0;
    if (name != NULL && mxc_feature_enabled(name, &on) == MXC_OK && on) {
      printf("%s%s", sep, name);
      sep = ",";
    }
  }
  printf("\n");
}

static void print_machine(const opts *o) {
  char model[512], family[64], number[64];
  bench_cpuinfo("model name", model, sizeof model);
  bench_cpuinfo("cpu family", family, sizeof family);
  bench_cpuinfo("model\t", number, sizeof number);
  printf("cpu=%s\ncpu_family=%s cpu_model=%s\n", model, family, number);
  print_isa();
  print_features();
  static const char *const env[] = {"MXC_GEMM", "MXC_ONEDNN",
                                    "OPENBLAS_CORETYPE", "MXC_NUM_THREADS"};
  for (size_t i = 0; i < sizeof env / sizeof env[0]; ++i) {
    const char *v = getenv(env[i]);
    printf("env_%s=%s\n", env[i], v ? v : "(unset)");
  }
  int threads = 0;
  check(mxc_get_num_threads(&threads), "mxc_get_num_threads");
  printf("mxc_threads=%d bind_flags=%d image_size=%d iters=%d warmup=%d\n",
         threads, o->flags, o->image, o->iters, o->warmup);
}

/* ---- mxc ---------------------------------------------------------------- */

static int64_t input_size(const opts *o, int64_t batch) {
  return batch * 3 * (int64_t)o->image * o->image;
}

static mxc_executor bind_model(const opts *o, const char *model,
                               int64_t batch, int flags) {
  char path[2 * BENCH_PATH];
  snprintf(path, sizeof path, "%s/%s-symbol.json", o->model_dir, model);
  mxc_symbol sym = NULL;
  check(mxc_symbol_load(path, &sym), path);
  const char *names[1] = {"data"};
  int ndims[1] = {4};
  int64_t dims[4] = {batch, 3, o->image, o->image};
  mxc_executor ex = NULL;
  check(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                                 NULL, MXC_REQ_NULL, 0, NULL, NULL, flags,
                                 &ex),
        "mxc_executor_simple_bind");
  mxc_symbol_free(sym);
  snprintf(path, sizeof path, "%s/%s-0000.params", o->model_dir, model);
  check(mxc_executor_load_params(ex, path, 0), path);
  return ex;
}

static void set_input(const opts *o, mxc_executor ex, const float *x,
                      int64_t batch) {
  mxc_ndarray data = NULL;
  check(mxc_executor_arg(ex, "data", &data), "mxc_executor_arg data");
  check(mxc_ndarray_copy_from_host(data, x,
                                   (size_t)input_size(o, batch) * sizeof *x),
        "mxc_ndarray_copy_from_host");
  mxc_ndarray_free(data);
}

/* One forward, waited for. */
static double forward_ms(mxc_executor ex, mxc_ndarray out) {
  double t0 = now_s();
  check(mxc_executor_forward(ex, 0), "mxc_executor_forward");
  check(mxc_ndarray_wait_to_read(out), "forward (waiting for the logits)");
  return 1e3 * (now_s() - t0);
}

/* Times the forwards; records M_bB_ms and M_bB_median_ms. */
static void time_forward(const opts *o, mxc_executor ex, mxc_ndarray out,
                         const char *tag, bench_kvs *kvs) {
  for (int i = 0; i < o->warmup; ++i) forward_ms(ex, out);
  double *t = malloc((size_t)o->iters * sizeof *t);
  if (t == NULL) die("out of memory for the timings");
  for (int i = 0; i < o->iters; ++i) t[i] = forward_ms(ex, out);
  double med = bench_median(t, o->iters); /* sorts t */
  char key[96];
  snprintf(key, sizeof key, "%s_ms", tag);
  bench_kvs_set(kvs, key, t[0]);
  printf("%s=%.3f\n", key, t[0]);
  snprintf(key, sizeof key, "%s_median_ms", tag);
  bench_kvs_set(kvs, key, med);
  printf("%s=%.3f\n", key, med);
  fflush(stdout);
  free(t);
}

/* The values MXC_BIND_BF16 applied to in ex (0: not this CPU). */
static int bf16_values(mxc_executor ex) {
  char *s = NULL;
  check(mxc_executor_debug_str(ex, &s), "mxc_executor_debug_str");
  const char *p = strstr(s, "channels-last values: ");
  const char *q = p ? strchr(p, '(') : NULL;
  int n = q ? atoi(q + 1) : 0;
  mxc_string_free(s);
  return n;
}

/* Binds model at batch with flags and input x; the output in *out. */
static mxc_executor bind_with_input(const opts *o, const char *model,
                                    int64_t batch, int flags, const float *x,
                                    mxc_ndarray *out) {
  mxc_executor ex = bind_model(o, model, batch, flags);
  set_input(o, ex, x, batch);
  check(mxc_executor_output(ex, 0, out), "mxc_executor_output");
  int64_t n = 0;
  check(mxc_ndarray_size(*out, &n), "mxc_ndarray_size");
  if (n != batch * CLASSES) die("the model does not output 1000 logits");
  return ex;
}

/* Runs model at batch with flags (tag suffix `suffix`): timings, and the
 * logits of the last forward. */
static result run_mxc(const opts *o, const char *model, int64_t batch,
                      const float *x, int flags, const char *suffix,
                      bench_kvs *kvs) {
  char tag[64];
  snprintf(tag, sizeof tag, "%s_b%lld%s", model, (long long)batch, suffix);
  mxc_ndarray out = NULL;
  mxc_executor ex = bind_with_input(o, model, batch, flags, x, &out);
  if (flags & MXC_BIND_BF16) printf("%s_values=%d\n", tag, bf16_values(ex));
  time_forward(o, ex, out, tag, kvs);
  int64_t n = batch * CLASSES;
  result r = {malloc((size_t)n * sizeof(float)), n};
  if (r.logits == NULL) die("out of memory for the logits");
  check(mxc_ndarray_copy_to_host(out, r.logits, (size_t)n * sizeof(float)),
        "mxc_ndarray_copy_to_host");
  double absmax = 0;
  for (int64_t i = 0; i < n; ++i) absmax = fmax(absmax, fabs(r.logits[i]));
  printf("%s_logit_absmax=%.3g\n", tag, absmax); /* the scale of maxdiff */
  mxc_ndarray_free(out);
  mxc_executor_free(ex);
  return r;
}

/* The class of each of the batch's images. */
static void top1(const float *logits, int64_t batch, int *cls) {
  for (int64_t i = 0; i < batch; ++i) {
    const float *l = logits + i * CLASSES;
    int best = 0;
    for (int c = 1; c < CLASSES; ++c) best = l[c] > l[best] ? c : best;
    cls[i] = best;
  }
}

/* Logits of AGREE_IMAGES fixed images (seed INPUT_SEED + 1) in one batch,
 * bound with flags; the caller frees them. */
static float *agreement_logits(const opts *o, const char *model, int flags,
                               const float *x) {
  mxc_ndarray out = NULL;
  mxc_executor ex = bind_with_input(o, model, AGREE_IMAGES, flags, x, &out);
  check(mxc_executor_forward(ex, 0), "mxc_executor_forward");
  float *l = malloc((size_t)AGREE_IMAGES * CLASSES * sizeof *l);
  if (l == NULL) die("out of memory for the logits");
  check(mxc_ndarray_copy_to_host(out, l,
                                 (size_t)AGREE_IMAGES * CLASSES * sizeof *l),
        "mxc_ndarray_copy_to_host");
  mxc_ndarray_free(out);
  mxc_executor_free(ex);
  return l;
}

/* bfloat16 against float32 on the fixed images: the share of images with
 * the same top-1 class, and the largest logit difference. */
static void bf16_agreement(const opts *o, const char *model) {
  int64_t n = input_size(o, AGREE_IMAGES);
  float *x = malloc((size_t)n * sizeof *x);
  if (x == NULL) die("out of memory for the agreement images");
  bench_fill(x, n, INPUT_SEED + 1);
  float *f = agreement_logits(o, model, o->flags & ~MXC_BIND_BF16, x);
  float *h = agreement_logits(o, model, o->flags | MXC_BIND_BF16, x);
  int cf[AGREE_IMAGES], ch[AGREE_IMAGES], same = 0;
  top1(f, AGREE_IMAGES, cf);
  top1(h, AGREE_IMAGES, ch);
  double d = 0;
  for (int i = 0; i < AGREE_IMAGES; ++i) same += cf[i] == ch[i];
  for (int64_t i = 0; i < (int64_t)AGREE_IMAGES * CLASSES; ++i) {
    d = fmax(d, fabs((double)f[i] - h[i]));
  }
  printf("%s_bf16_top1_agreement=%.3f (%d images)\n", model,
         (double)same / AGREE_IMAGES, AGREE_IMAGES);
  printf("%s_bf16_maxdiff_f32=%.3g\n", model, d);
  free(x);
  free(f);
  free(h);
}

/* ---- peers --------------------------------------------------------------- */

static void join(char *out, size_t n, const opts *o, int batches) {
  out[0] = '\0';
  int count = batches ? o->n_batches : o->n_models;
  for (int i = 0; i < count; ++i) {
    size_t len = strlen(out);
    if (batches) {
      snprintf(out + len, n - len, "%s%lld", i ? "," : "",
               (long long)o->batches[i]);
    } else {
      snprintf(out + len, n - len, "%s%s", i ? "," : "", o->models[i]);
    }
  }
}

/* 1 when the peer ran; 0 (with the reason on stderr) when skipped. */
static int run_torch(const opts *o, bench_kvs *kvs) {
  if (!o->torch) return 0;
  char models[128], batches[128], cmd[6 * BENCH_PATH];
  join(models, sizeof models, o, 0);
  join(batches, sizeof batches, o, 1);
  snprintf(cmd, sizeof cmd,
           "'%s' '%s' --model-dir '%s' --work '%s' --models %s --batches %s "
           "--image-size %d --iters %d --warmup %d --threads 2",
           o->python, o->torch_py, o->model_dir, o->work, models, batches,
           o->image, o->iters, o->warmup);
  int status = bench_run_peer(cmd, kvs);
  if (status != 0) {
    fprintf(stderr,
            "bench infer: PyTorch peer failed (status %d); skipping "
            "its figures\n",
            status);
  }
  return status == 0;
}

static int have_node(const opts *o) {
  char cmd[BENCH_PATH + 64];
  snprintf(cmd, sizeof cmd, "'%s' --version >/dev/null 2>&1", o->node);
  return system(cmd) == 0;
}

static int run_ort(const opts *o, bench_kvs *kvs) {
  if (!o->ort) return 0;
  char modules[2 * BENCH_PATH];
  snprintf(modules, sizeof modules, "%s/ort/node_modules", o->cache);
  char probe[2 * BENCH_PATH + 64];
  snprintf(probe, sizeof probe, "%s/onnxruntime-node/package.json", modules);
  if (!have_node(o) || access(probe, R_OK) != 0) {
    fprintf(stderr,
            "bench infer: skipping ONNX Runtime: needs node (%s) and "
            "onnxruntime-node in %s (scripts/bench.sh installs it: npm "
            "install --ignore-scripts onnxruntime-node)\n",
            o->node, modules);
    return 0;
  }
  char models[128], batches[128], cmd[8 * BENCH_PATH];
  join(models, sizeof models, o, 0);
  join(batches, sizeof batches, o, 1);
  snprintf(cmd, sizeof cmd, "NODE_PATH='%s' '%s' '%s' '%s' '%s' %s %s %d %d %d",
           modules, o->node, o->ort_js, o->model_dir, o->work, models, batches,
           o->image, o->iters, o->warmup);
  int status = bench_run_peer(cmd, kvs);
  if (status != 0) {
    fprintf(stderr,
            "bench infer: ONNX Runtime peer failed (status %d); "
            "skipping its figures\n",
            status);
  }
  return status == 0;
}

/* ---- agreement and ratios ------------------------------------------------ */

/* Compares mxc's logits with the peer's file; 0 when they agree. */
static int compare(const opts *o, const char *tag, const char *peer,
                   const result *r) {
  char path[2 * BENCH_PATH];
  snprintf(path, sizeof path, "%s/%s.%s.f32", o->work, tag, peer);
  float *y = malloc((size_t)r->n * sizeof *y);
  if (y == NULL) die("out of memory for the peer's logits");
  int rc = bench_read_f32(path, y, r->n);
  double ref = 0,
         d = rc == 0 ? bench_max_abs_diff(r->logits, y, r->n, &ref) : NAN;
  free(y);
  unlink(path);
  double limit = o->tolerance * (ref > 1 ? ref : 1);
  printf("%s_maxdiff_%s=%.3g\n", tag, peer, d);
  if (d <= limit) return 0;
  fprintf(stderr,
          "bench infer: FAIL: %s logits differ from %s's by %.3g "
          "(max |logit| %.3g, allowed %.3g)\n",
          tag, peer, d, ref, limit);
  return 1;
}

/* Round k's ratio of tag against peer p: printed and kept in *rs. */
static void round_ratio(const bench_kvs *kvs, const char *tag, int t, int p,
                        int k, ratios *rs) {
  char key[96];
  snprintf(key, sizeof key, "%s_ms", tag);
  double mine = bench_kvs_get(kvs, key);
  snprintf(key, sizeof key, "%s_%s_ms", tag, k_peer[p]);
  rs->v[t][p][k] = mine / bench_kvs_get(kvs, key);
  printf("%s_round%d_ratio_vs_%s=%.3f\n", tag, k, k_peer[p], rs->v[t][p][k]);
}

/* The median of the rounds' ratios of tag t against peer p, and their
 * spread. */
static void print_ratio(const char *tag, int t, int p, ratios *rs) {
  double *v = rs->v[t][p];
  double med = bench_median(v, rs->n); /* sorts v */
  printf("%s_ratio_vs_%s=%.3f\n", tag, k_peer[p], med);
  printf("%s_ratio_vs_%s_min=%.3f\n", tag, k_peer[p], v[0]);
  printf("%s_ratio_vs_%s_max=%.3f\n", tag, k_peer[p], v[rs->n - 1]);
}

static void print_goals(const bench_kvs *kvs) {
  static const struct {
    const char *tag, *peer;
    double goal;
  } goals[] = {{"resnet18_b1", "ort", 1.0},
               {"resnet50_b1", "ort", 1.0},
               {"resnet50_b32", "torch", 0.8}};
  for (size_t i = 0; i < sizeof goals / sizeof goals[0]; ++i) {
    char key[96];
    snprintf(key, sizeof key, "%s_%s_ms", goals[i].tag, goals[i].peer);
    if (isnan(bench_kvs_get(kvs, key))) continue;
    printf("%s_ratio_vs_%s_goal=%.1f\n", goals[i].tag, goals[i].peer,
           goals[i].goal);
  }
}

/* ---- options ---------------------------------------------------------------
 */

static void parse_models(opts *o, const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  o->n_models = 0;
  for (char *s = strtok(buf, ","); s != NULL; s = strtok(NULL, ",")) {
    if (strcmp(s, "resnet18") != 0 && strcmp(s, "resnet50") != 0) {
      die("--models: expected resnet18 and/or resnet50");
    }
    if (o->n_models == MAX_MODELS) die("--models: too many");
    snprintf(o->models[o->n_models++], sizeof o->models[0], "%s", s);
  }
  if (o->n_models == 0) die("--models: none given");
}

static void parse_batches(opts *o, const char *v) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  o->n_batches = 0;
  for (char *s = strtok(buf, ","); s != NULL; s = strtok(NULL, ",")) {
    long long b = atoll(s);
    if (b < 1 || b > 1024) die("--batches: each batch must be 1..1024");
    if (o->n_batches == MAX_BATCHES) die("--batches: too many");
    o->batches[o->n_batches++] = b;
  }
  if (o->n_batches == 0) die("--batches: none given");
}

static int int_arg(const char *v, int lo, int hi, const char *what) {
  char *end = NULL;
  long x = strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < lo || x > hi) {
    fprintf(stderr, "bench infer: %s '%s': expected %d..%d\n", what, v, lo, hi);
    exit(1);
  }
  return (int)x;
}

static void defaults(opts *o, const char *argv0) {
  parse_models(o, "resnet18,resnet50");
  parse_batches(o, "1,32");
  o->iters = 20;
  o->warmup = 3;
  o->rounds = 3;
  o->image = 224;
  o->tolerance = 1e-3;
  o->torch = o->ort = 1;
  o->python = bench_python();
  o->node = "node";
  bench_cache_dir(o->cache);
  bench_find(argv0, "scripts/make_resnet.py", o->gen);
  bench_find(argv0, "bench/infer_torch.py", o->torch_py);
  bench_find(argv0, "bench/infer_ort.js", o->ort_js);
}

/* Options that take no value; 0 when a is none of them. */
static int parse_flag(opts *o, const char *a) {
  if (strcmp(a, "--no-torch") == 0) {
    o->torch = 0;
  } else if (strcmp(a, "--no-ort") == 0) {
    o->ort = 0;
  } else if (strcmp(a, "--no-onednn") == 0) {
    o->flags |= MXC_BIND_NO_ONEDNN;
  } else if (strcmp(a, "--bf16") == 0) {
    o->bf16 = 1;
  } else if (strcmp(a, "--no-infer-passes") == 0) {
    o->flags |= MXC_BIND_NO_INFER_PASSES;
  } else if (strcmp(a, "--quick") == 0) {
    o->iters = 2;
    o->warmup = 1;
  } else {
    return 0;
  }
  return 1;
}

static void parse_value(opts *o, const char *a, const char *v) {
  if (strcmp(a, "--models") == 0) {
    parse_models(o, v);
  } else if (strcmp(a, "--batches") == 0) {
    parse_batches(o, v);
  } else if (strcmp(a, "--iters") == 0) {
    o->iters = int_arg(v, 1, 100000, a);
  } else if (strcmp(a, "--warmup") == 0) {
    o->warmup = int_arg(v, 0, 100000, a);
  } else if (strcmp(a, "--rounds") == 0) {
    o->rounds = int_arg(v, 1, MAX_ROUNDS, a);
  } else if (strcmp(a, "--image-size") == 0) {
    o->image = int_arg(v, 32, 1024, a);
  } else if (strcmp(a, "--threads") == 0) {
    o->threads = int_arg(v, 1, 1024, a);
  } else if (strcmp(a, "--bind-flags") == 0) {
    o->flags |= int_arg(v, 0, 1 << 30, a);
  } else if (strcmp(a, "--tolerance") == 0) {
    o->tolerance = atof(v);
  } else if (strcmp(a, "--cache") == 0) {
    snprintf(o->cache, sizeof o->cache, "%s", v);
  } else if (strcmp(a, "--model-dir") == 0) {
    snprintf(o->model_dir, sizeof o->model_dir, "%s", v);
  } else if (strcmp(a, "--python") == 0) {
    o->python = v;
  } else if (strcmp(a, "--node") == 0) {
    o->node = v;
  } else {
    fprintf(stderr, "bench infer: unknown option '%s'\n", a);
    exit(1);
  }
}

static void parse(int argc, char **argv, opts *o) {
  defaults(o, argv[0]);
  for (int i = 1; i < argc; ++i) {
    if (parse_flag(o, argv[i])) continue;
    if (i + 1 >= argc) die("an option needs a value");
    parse_value(o, argv[i], argv[i + 1]);
    ++i;
  }
  if (!(o->tolerance > 0)) die("--tolerance must be > 0");
  if (o->model_dir[0] == '\0') {
    snprintf(o->model_dir, sizeof o->model_dir, "%s/models", o->cache);
  }
}

/* ---- main
 * -------------------------------------------------------------------- */

/* The inputs, one file per batch size for the peers: batch B holds the
 * first B images of one fixed sequence. */
static float **write_inputs(const opts *o) {
  float **x = calloc((size_t)o->n_batches, sizeof *x);
  if (x == NULL) die("out of memory for the inputs");
  for (int i = 0; i < o->n_batches; ++i) {
    int64_t n = input_size(o, o->batches[i]);
    x[i] = malloc((size_t)n * sizeof(float));
    if (x[i] == NULL) die("out of memory for an input");
    bench_fill(x[i], n, INPUT_SEED);
    char path[2 * BENCH_PATH];
    snprintf(path, sizeof path, "%s/input_b%lld.f32", o->work,
             (long long)o->batches[i]);
    if (bench_write_f32(path, x[i], n) != 0) exit(1);
  }
  return x;
}

/* Removes the work folder: the inputs and whatever peer output is left
 * (a peer that failed half way). */
static void remove_work(const opts *o, float **x) {
  char path[2 * BENCH_PATH];
  for (int b = 0; b < o->n_batches; ++b) {
    long long batch = (long long)o->batches[b];
    snprintf(path, sizeof path, "%s/input_b%lld.f32", o->work, batch);
    unlink(path);
    free(x[b]);
    for (int m = 0; m < o->n_models; ++m) {
      snprintf(path, sizeof path, "%s/%s_b%lld.torch.f32", o->work,
               o->models[m], batch);
      unlink(path);
      snprintf(path, sizeof path, "%s/%s_b%lld.ort.f32", o->work, o->models[m],
               batch);
      unlink(path);
    }
  }
  free(x);
  rmdir(o->work);
}

static void make_work_dir(opts *o) {
  const char *tmp = getenv("TMPDIR");
  snprintf(o->work, sizeof o->work, "%s/mxc-bench-infer-XXXXXX",
           tmp && tmp[0] ? tmp : "/tmp");
  if (mkdtemp(o->work) == NULL) die("cannot create a work folder");
}

static void tag_of(const opts *o, int t, char *tag, size_t n) {
  snprintf(tag, n, "%s_b%lld", o->models[t / o->n_batches],
           (long long)o->batches[t % o->n_batches]);
}

/* Agreement of every (model, batch) with the peers that ran in round k,
 * and the round's ratios. Returns the number of disagreements. */
static int check_round(const opts *o, int k, result *r, const int *ran,
                       const bench_kvs *kvs, ratios *rs) {
  int bad = 0;
  for (int t = 0; t < o->n_models * o->n_batches; ++t) {
    char tag[64];
    tag_of(o, t, tag, sizeof tag);
    for (int p = 0; p < N_PEERS; ++p) {
      if (!ran[p]) continue;
      bad += compare(o, tag, k_peer[p], &r[t]);
      round_ratio(kvs, tag, t, p, k, rs);
    }
  }
  return bad;
}

/* Every (model, batch) through mxc, logits into r (freed by the caller). */
static void run_mxc_all(const opts *o, float **x, result *r, bench_kvs *kvs) {
  for (int m = 0; m < o->n_models; ++m) {
    for (int b = 0; b < o->n_batches; ++b) {
      r[m * o->n_batches + b] =
          run_mxc(o, o->models[m], o->batches[b], x[b], o->flags, "", kvs);
    }
  }
}

/* The peers that are still in (a peer that fails once is left out). */
static void run_peers(const opts *o, int *ran, bench_kvs *kvs) {
  if (ran[PEER_TORCH]) ran[PEER_TORCH] = run_torch(o, kvs);
  if (ran[PEER_ORT]) ran[PEER_ORT] = run_ort(o, kvs);
}

/* Round k: mxc and the peers, the peers first in odd rounds so that a
 * steady drift of the machine's speed favours neither side. Returns the
 * number of disagreements. */
static int run_round(const opts *o, float **x, int k, ratios *rs,
                     bench_kvs *kvs) {
  int n = o->n_models * o->n_batches;
  result r[MAX_MODELS * MAX_BATCHES];
  printf("round=%d\n", k);
  if (k % 2 == 1) run_peers(o, rs->ran, kvs);
  run_mxc_all(o, x, r, kvs);
  if (k % 2 == 0) run_peers(o, rs->ran, kvs);
  int bad = check_round(o, k, r, rs->ran, kvs, rs);
  for (int t = 0; t < n; ++t) free(r[t].logits);
  rs->n = k + 1;
  return bad;
}

/* The median ratios over the rounds, for the peers that ran in all. */
static void print_ratios(const opts *o, ratios *rs) {
  for (int t = 0; t < o->n_models * o->n_batches; ++t) {
    char tag[64];
    tag_of(o, t, tag, sizeof tag);
    for (int p = 0; p < N_PEERS; ++p) {
      if (rs->ran[p]) print_ratio(tag, t, p, rs);
    }
  }
}

/* --bf16: each model and batch bound with MXC_BIND_BF16, once. */
static void run_bf16(const opts *o, float **x, bench_kvs *kvs) {
  for (int m = 0; m < o->n_models; ++m) {
    for (int b = 0; b < o->n_batches; ++b) {
      result h = run_mxc(o, o->models[m], o->batches[b], x[b],
                         o->flags | MXC_BIND_BF16, "_bf16", kvs);
      free(h.logits);
    }
    bf16_agreement(o, o->models[m]);
  }
}

int main(int argc, char **argv) {
  static opts o;
  static bench_kvs kvs;
  parse(argc, argv, &o);
  if (o.threads > 0) check(mxc_set_num_threads(o.threads), "threads");
  print_machine(&o);
  char models[128];
  join(models, sizeof models, &o, 0);
  if (bench_make_models(o.python, o.gen, o.model_dir, models) != 0) return 1;
  make_work_dir(&o);
  float **x = write_inputs(&o);
  static ratios rs;
  rs.ran[PEER_TORCH] = o.torch;
  rs.ran[PEER_ORT] = o.ort;
  int bad = 0;
  for (int k = 0; k < o.rounds; ++k) bad += run_round(&o, x, k, &rs, &kvs);
  print_ratios(&o, &rs);
  if (o.bf16) run_bf16(&o, x, &kvs);
  print_goals(&kvs);
  printf("rounds=%d agreement_tolerance=%g\n", o.rounds, o.tolerance);
  remove_work(&o, x);
  return bad ? 1 : 0;
}
