/* Operator benchmarks through the public C API, each next to a peer
 * measured in the same run. Prints name=value lines:
 *   dot1024_mxc_gflops        mxc "dot" of two 1024x1024 float32 matrices,
 *                             mxc_op_invoke to wait, best of REPS
 *   dot1024_openblas_gflops   cblas_sgemm on the same sizes, best of REPS
 *   dot1024_ratio_vs_openblas
 *   invoke_tiny_add_us        imperative "add" of two 1-element float32
 *                             arrays, amortized over N calls and one wait
 *                             (falls back to "relu" when "add" is absent;
 *                             invoke_tiny_op names the one used)
 *   invoke_tiny_add_profiled_us  the same with the profiler recording
 *                             each run (and _ratio: over the figure above)
 *   invoke_tiny_add_newout_us the same, letting invoke create each output
 *   conv_lenet_gflops         LeNet's two convolutions at batch 64
 *                             (1x28x28 -> 20 5x5; 20x12x12 -> 50 5x5)
 *   conv_lenet_im2col_cblas_gflops  per-sample im2col + cblas_sgemm + bias
 *   conv_lenet_ratio_vs_im2col_cblas
 * and, first, the machine: cpu_vendor, cpu_family, cpu_model, cpu_isa
 * (core/base/cpu.h), cpu (the whole description), openblas_core (the
 * kernel set OpenBLAS picked) and gemm_float32 (the GEMM mxc's products
 * use: openblas, onednn or portable, from the GEMM_* features; the
 * OpenBLAS peer above always runs OpenBLAS's own choice), and the goals. Usage: ops [N tiny calls (default 200000)] [section: dot,
 * tiny, tiny_prealloc (without the newout variant) or conv; default all;
 * for profiling one part]. */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

#define BENCH_NAME "bench ops"
#include "bench/bench_util.h"
#include "core/base/cpu.h"

#ifndef REPS
#define REPS 7
#endif

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "bench ops: out of memory\n");
    exit(1);
  }
  return p;
}

static void fill(float *p, int64_t n, unsigned seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

/* A float32 array with the given values (NULL: zeros). */
static mxc_ndarray array(const int64_t *shape, int ndim, const float *v) {
  mxc_ndarray a = NULL;
  check(mxc_ndarray_create(shape, ndim, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &a),
        "create");
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  float *z = NULL;
  if (!v) v = z = calloc((size_t)n, sizeof(float));
  check(mxc_ndarray_copy_from_host(a, v, (size_t)n * sizeof(float)), "copy");
  free(z);
  return a;
}

static mxc_op find(const char *name) {
  mxc_op op = NULL;
  check(mxc_op_find(name, &op), name);
  return op;
}

/* ---- dot 1024 ---- */

/* mxc runs OpenBLAS single-threaded and splits large products over its own
 * kernel threads (ops/linalg/gemm.c), and that setting is process-wide.
 * The peer gets as many OpenBLAS threads as mxc has kernel threads for its
 * calls, then the setting goes back to mxc's. */
static int g_peer_threads = 1;

static void peer_sgemm(int m, int n, int k, const float *a, int lda,
                       const float *b, int ldb, float *c, int ldc) {
  openblas_set_num_threads(g_peer_threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a,
              lda, b, ldb, 0.0f, c, ldc);
  openblas_set_num_threads(1);
}

static void bench_dot(void) {
  const int n = 1024;
  int64_t shape[2] = {n, n};
  float *a = xmalloc(sizeof(float) * n * n),
        *b = xmalloc(sizeof(float) * n * n);
  float *c = xmalloc(sizeof(float) * n * n);
  fill(a, (int64_t)n * n, 1);
  fill(b, (int64_t)n * n, 2);
  mxc_ndarray ins[2] = {array(shape, 2, a), array(shape, 2, b)};
  mxc_ndarray out[1] = {array(shape, 2, NULL)};
  mxc_op dot = find("dot");
  double best_mxc = 1e30, best_blas = 1e30;
  /* Interleaved so that both see the same machine state; the first round
   * warms caches, thread pools and the storage pool. */
  for (int rep = 0; rep <= REPS; ++rep) {
    double t0 = now_s();
    check(mxc_op_invoke(dot, NULL, NULL, 0, ins, 2, out, 1, NULL), "dot");
    check(mxc_ndarray_wait_to_read(out[0]), "wait");
    double t1 = now_s();
    peer_sgemm(n, n, n, a, n, b, n, c, n);
    double t2 = now_s();
    if (rep == 0) continue;
    if (t1 - t0 < best_mxc) best_mxc = t1 - t0;
    if (t2 - t1 < best_blas) best_blas = t2 - t1;
  }
  double flop = 2.0 * n * (double)n * n;
  printf("dot1024_mxc_gflops=%.2f\n", flop / best_mxc * 1e-9);
  printf("dot1024_openblas_gflops=%.2f\n", flop / best_blas * 1e-9);
  printf("dot1024_ratio_vs_openblas=%.3f\n", best_blas / best_mxc);
  printf("dot1024_ratio_vs_openblas_goal=0.97\n");
  for (int i = 0; i < 2; ++i) mxc_ndarray_free(ins[i]);
  mxc_ndarray_free(out[0]);
  free(a);
  free(b);
  free(c);
}

/* ---- tiny invoke ---- */

/* Microseconds per call of `calls` invokes into the preallocated c, and
 * one wait. */
static double tiny_loop(mxc_op op, mxc_ndarray *ins, int n_in, mxc_ndarray c,
                        long calls) {
  double t0 = now_s();
  for (long i = 0; i < calls; ++i) {
    mxc_ndarray out[1] = {c};
    check(mxc_op_invoke(op, NULL, NULL, 0, ins, n_in, out, 1, NULL),
          "tiny invoke");
  }
  check(mxc_ndarray_wait_to_read(c), "wait");
  return (now_s() - t0) * 1e6 / (double)calls;
}

/* The same calls with the profiler recording every operator run (the
 * default categories); the events are dropped afterwards. With it off,
 * each hook is one branch: invoke_tiny_add_us is the figure to compare
 * across builds for that cost. */
static double bench_tiny_profiled(mxc_op op, mxc_ndarray *ins, int n_in,
                                  mxc_ndarray c, long calls) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    check(mxc_profiler_set_state(MXC_PROFILER_RUN), "profiler run");
    double us = tiny_loop(op, ins, n_in, c, calls);
    if (us < best) best = us;
    check(mxc_profiler_set_state(MXC_PROFILER_STOP), "profiler stop");
  }
  return best;
}

static void bench_tiny(long calls, int with_newout) {
  int64_t shape[1] = {1};
  float one = 1.0f;
  mxc_ndarray a = array(shape, 1, &one), b = array(shape, 1, &one);
  mxc_ndarray c = array(shape, 1, NULL);
  /* "add" comes from another family; fall back to a unary operator when
   * it is not registered in this build. */
  static const char *const candidates[] = {"add", "elemwise_add", NULL};
  mxc_op op = NULL;
  const char *name = NULL;
  for (int i = 0; candidates[i] && !name; ++i) {
    if (mxc_op_find(candidates[i], &op) == MXC_OK) name = candidates[i];
  }
  if (!name) {
    name = "relu";
    op = find("relu");
  }
  int n_in = strcmp(name, "relu") ? 2 : 1;
  mxc_ndarray ins[2] = {a, b};
  double best = 1e30, best_new = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    double us = tiny_loop(op, ins, n_in, c, calls);
    if (us < best) best = us;
    if (!with_newout) continue;
    /* Fresh output per call: adds array creation and handle churn. */
    double t0 = now_s();
    for (long i = 0; i < calls; ++i) {
      mxc_ndarray out[1] = {NULL};
      check(mxc_op_invoke(op, NULL, NULL, 0, ins, n_in, out, 1, NULL),
            "tiny invoke");
      mxc_ndarray_free(out[0]);
    }
    check(mxc_wait_all(), "wait_all");
    us = (now_s() - t0) * 1e6 / (double)calls;
    if (us < best_new) best_new = us;
  }
  double prof = bench_tiny_profiled(op, ins, n_in, c, calls / 4);
  printf("invoke_tiny_op=%s\n", name);
  printf("invoke_tiny_calls=%ld\n", calls);
  printf("invoke_tiny_add_us=%.3f\n", best);
  printf("invoke_tiny_add_profiled_us=%.3f\n", prof);
  printf("invoke_tiny_add_profiled_ratio=%.3f\n", prof / best);
  if (with_newout) printf("invoke_tiny_add_newout_us=%.3f\n", best_new);
  printf("invoke_tiny_add_us_goal=1.0\n");
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
  mxc_ndarray_free(c);
}

/* ---- LeNet convolutions ---- */

typedef struct layer {
  int n, c, h, w, f, k; /* data (n, c, h, w), f filters of k x k */
  float *x, *wt, *bias, *y, *col;
  mxc_ndarray ax, aw, ab, ay;
} layer;

static void layer_init(layer *l, int n, int c, int h, int w, int f, int k,
                       unsigned seed) {
  l->n = n, l->c = c, l->h = h, l->w = w, l->f = f, l->k = k;
  int oh = h - k + 1, ow = w - k + 1;
  size_t nx = (size_t)n * c * h * w, nw = (size_t)f * c * k * k;
  l->x = xmalloc(nx * sizeof(float));
  l->wt = xmalloc(nw * sizeof(float));
  l->bias = xmalloc((size_t)f * sizeof(float));
  l->y = xmalloc((size_t)n * f * oh * ow * sizeof(float));
  l->col = xmalloc((size_t)c * k * k * oh * ow * sizeof(float));
  fill(l->x, (int64_t)nx, seed);
  fill(l->wt, (int64_t)nw, seed + 1);
  fill(l->bias, f, seed + 2);
  int64_t sx[4] = {n, c, h, w}, sw[4] = {f, c, k, k}, sb[1] = {f};
  int64_t sy[4] = {n, f, oh, ow};
  l->ax = array(sx, 4, l->x);
  l->aw = array(sw, 4, l->wt);
  l->ab = array(sb, 1, l->bias);
  l->ay = array(sy, 4, NULL);
}

static void layer_free(layer *l) {
  mxc_ndarray_free(l->ax);
  mxc_ndarray_free(l->aw);
  mxc_ndarray_free(l->ab);
  mxc_ndarray_free(l->ay);
  free(l->x);
  free(l->wt);
  free(l->bias);
  free(l->y);
  free(l->col);
}

static double layer_flop(const layer *l) {
  double oh = l->h - l->k + 1, ow = l->w - l->k + 1;
  return 2.0 * l->n * l->f * oh * ow * l->c * l->k * l->k;
}

/* The classic peer: per sample, im2col (stride 1, no padding) into a
 * (C*K*K, OH*OW) matrix, one sgemm, then the bias. */
static void peer_conv(layer *l) {
  int oh = l->h - l->k + 1, ow = l->w - l->k + 1, p = oh * ow;
  int rows = l->c * l->k * l->k;
  for (int n = 0; n < l->n; ++n) {
    const float *x = l->x + (size_t)n * l->c * l->h * l->w;
    for (int c = 0; c < l->c; ++c)
      for (int i = 0; i < l->k; ++i)
        for (int j = 0; j < l->k; ++j) {
          float *dst = l->col + (size_t)((c * l->k + i) * l->k + j) * p;
          for (int r = 0; r < oh; ++r) {
            memcpy(dst + r * ow, x + ((size_t)c * l->h + r + i) * l->w + j,
                   sizeof(float) * (size_t)ow);
          }
        }
    float *y = l->y + (size_t)n * l->f * p;
    peer_sgemm(l->f, p, rows, l->wt, rows, l->col, p, y, p);
    for (int f = 0; f < l->f; ++f)
      for (int q = 0; q < p; ++q) y[f * p + q] += l->bias[f];
  }
}

static void mxc_conv(mxc_op conv, layer *l) {
  char nf[16], ks[32];
  snprintf(nf, sizeof nf, "%d", l->f);
  snprintf(ks, sizeof ks, "(%d,%d)", l->k, l->k);
  const char *keys[2] = {"kernel", "num_filter"};
  const char *vals[2] = {ks, nf};
  mxc_ndarray ins[3] = {l->ax, l->aw, l->ab};
  mxc_ndarray out[1] = {l->ay};
  check(mxc_op_invoke(conv, keys, vals, 2, ins, 3, out, 1, NULL),
        "Convolution");
}

static void bench_conv(void) {
  layer l1, l2;
  layer_init(&l1, 64, 1, 28, 28, 20, 5, 10);
  layer_init(&l2, 64, 20, 12, 12, 50, 5, 20);
  mxc_op conv = find("Convolution");
  double best_mxc = 1e30, best_peer = 1e30, best1 = 1e30, best2 = 1e30;
  double peer1 = 1e30, peer2 = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {
    double t0 = now_s();
    mxc_conv(conv, &l1);
    check(mxc_ndarray_wait_to_read(l1.ay), "wait");
    double t1 = now_s();
    mxc_conv(conv, &l2);
    check(mxc_ndarray_wait_to_read(l2.ay), "wait");
    double t2 = now_s();
    peer_conv(&l1);
    double t2b = now_s();
    peer_conv(&l2);
    double t3 = now_s();
    if (rep == 0) continue;
    if (t2 - t0 < best_mxc) best_mxc = t2 - t0;
    if (t1 - t0 < best1) best1 = t1 - t0;
    if (t2 - t1 < best2) best2 = t2 - t1;
    if (t3 - t2 < best_peer) best_peer = t3 - t2;
    if (t2b - t2 < peer1) peer1 = t2b - t2;
    if (t3 - t2b < peer2) peer2 = t3 - t2b;
  }
  /* The two implementations must agree (catches a broken benchmark). */
  float *got = xmalloc(sizeof(float) * 64 * 50 * 8 * 8);
  check(mxc_ndarray_copy_to_host(l2.ay, got, sizeof(float) * 64 * 50 * 64),
        "copy");
  double maxdiff = 0;
  for (int i = 0; i < 64 * 50 * 64; ++i) {
    double d = got[i] - l2.y[i];
    if (d < 0) d = -d;
    if (d > maxdiff) maxdiff = d;
  }
  free(got);
  double flop = layer_flop(&l1) + layer_flop(&l2);
  printf("conv_lenet_layer1_gflops=%.2f\n", layer_flop(&l1) / best1 * 1e-9);
  printf("conv_lenet_layer2_gflops=%.2f\n", layer_flop(&l2) / best2 * 1e-9);
  printf("conv_lenet_layer1_im2col_cblas_gflops=%.2f\n",
         layer_flop(&l1) / peer1 * 1e-9);
  printf("conv_lenet_layer2_im2col_cblas_gflops=%.2f\n",
         layer_flop(&l2) / peer2 * 1e-9);
  printf("conv_lenet_gflops=%.2f\n", flop / best_mxc * 1e-9);
  printf("conv_lenet_im2col_cblas_gflops=%.2f\n", flop / best_peer * 1e-9);
  printf("conv_lenet_ratio_vs_im2col_cblas=%.3f\n", best_peer / best_mxc);
  printf("conv_lenet_ratio_vs_im2col_cblas_goal=1.0\n");
  printf("conv_lenet_max_abs_diff=%.2e\n", maxdiff);
  layer_free(&l1);
  layer_free(&l2);
}

/* Which CPU this ran on and which GEMM mxc chose for it. */
static void print_machine(void) {
  const mxc__cpu_info *cpu = mxc__cpu_host();
  char desc[256];
  printf("cpu_vendor=%s\n", cpu->vendor);
  printf("cpu_family=%d\ncpu_model=%d\n", cpu->family, cpu->model);
  printf("cpu_isa=%s\n", mxc__cpu_isa_name(mxc__cpu_isa_level(cpu)));
  printf("cpu=%s\n", mxc__cpu_describe(cpu, desc, sizeof desc));
  printf("openblas_core=%s\n", openblas_get_corename());
  static const char *const gemms[] = {"openblas", "onednn", "portable"};
  static const char *const features[] = {"GEMM_OPENBLAS", "GEMM_ONEDNN",
                                         "GEMM_PORTABLE"};
  const char *gemm = "?";
  for (int i = 0; i < 3; ++i) {
    int on = 0;
    check(mxc_feature_enabled(features[i], &on), "feature_enabled");
    if (on) gemm = gemms[i];
  }
  printf("gemm_float32=%s\n", gemm);
}

int main(int argc, char **argv) {
  print_machine();
  long calls = argc > 1 ? atol(argv[1]) : 200000;
  if (calls < 1) calls = 1;
  int threads = 0;
  check(mxc_get_num_threads(&threads), "get_num_threads");
  printf("engine_workers=%d\n", threads);
  g_peer_threads = threads;
  printf("openblas_peer_threads=%d\n", g_peer_threads);
  const char *only = argc > 2 ? argv[2] : "";
  if (!*only || !strcmp(only, "dot")) bench_dot();
  if (!*only || !strcmp(only, "tiny")) bench_tiny(calls, 1);
  if (!strcmp(only, "tiny_prealloc")) bench_tiny(calls, 0);
  if (!*only || !strcmp(only, "conv")) bench_conv();
  return 0;
}
