/* Element-wise fusion benchmark: y = 1 / (1 + exp(-(a x + b))) on N
 * float32 values (default 2^24), a = 0.5, b = 0.25, built as a symbol of
 * six operators (_mul_scalar, _plus_scalar, negative, exp, _plus_scalar,
 * _rdiv_scalar) through the public C API and run by executors. Prints
 * name=value lines:
 *   fused_sigmoid_ms          executor forward, fusion on (the default),
 *                             median of REPS runs after warm-up, timed
 *                             from forward to the output being readable
 *   unfused_sigmoid_ms        the same with MXC_BIND_NO_FUSION
 *   fused_kernel_sigmoid_ms   the _fused_elemwise operator invoked
 *                             directly (mxc_op_invoke into a preallocated
 *                             output), median
 *   torch_sigmoid_ms          PyTorch on the CPU with 2 threads, the same
 *                             expression, median (bench/fusion_torch.py
 *                             run by /usr/bin/python3 in the same run);
 *                             nan when torch is missing
 *   fused_sigmoid_ratio_vs_torch  fused / torch (goal <= 0.2)
 *   fused_vs_unfused_max_abs_diff
 *   *_best_ms                 the fastest run of each (less sensitive to
 *                             other load on the machine)
 * Usage: fusion [N [REPS [PARTS]]], PARTS a comma-separated subset of
 * fused,unfused,kernel,torch (default all; for profiling one part).
 * MXC_NUM_THREADS sets mxc's threads (default: online CPUs). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

#define BENCH_NAME "bench fusion"
#include "bench/bench_util.h"

/* Sorts t; returns the median and sets *best to the fastest run. */
static double median(double *t, int n, double *best) {
  double m = bench_median(t, n);
  *best = t[0];
  return m;
}

/* 1 when the comma-separated list has the item `part`. */
static int has_part(const char *list, const char *part) {
  size_t len = strlen(part);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && !strncmp(p, part, n)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* One operator applied to one input symbol, with at most one parameter. */
static mxc_symbol apply(const char *op_name, const char *key,
                        const char *val, mxc_symbol in) {
  mxc_op op = NULL;
  check(mxc_op_find(op_name, &op), op_name);
  const char *keys[1] = {key}, *vals[1] = {val};
  mxc_symbol out = NULL;
  check(mxc_symbol_create(op, keys, vals, key ? 1 : 0, NULL, NULL, &in, 1,
                          &out),
        op_name);
  mxc_symbol_free(in);
  return out;
}

static mxc_symbol build_sigmoid(void) {
  mxc_symbol s = NULL;
  check(mxc_symbol_variable("x", &s), "variable");
  s = apply("_mul_scalar", "scalar", "0.5", s);
  s = apply("_plus_scalar", "scalar", "0.25", s);
  s = apply("negative", NULL, NULL, s);
  s = apply("exp", NULL, NULL, s);
  s = apply("_plus_scalar", "scalar", "1", s);
  return apply("_rdiv_scalar", "scalar", "1", s);
}

/* Median forward time of an executor, in ms; leaves the last output in
 * *out (caller frees). */
static double time_executor(mxc_executor ex, int reps, mxc_ndarray *out,
                            double *best) {
  double *t = malloc(sizeof(double) * (size_t)reps);
  if (!t) exit(1);
  for (int r = -2; r < reps; ++r) { /* two warm-up runs */
    mxc_ndarray o = NULL;
    double t0 = now_s();
    check(mxc_executor_forward(ex, 0), "forward");
    check(mxc_executor_output(ex, 0, &o), "output");
    check(mxc_ndarray_wait_to_read(o), "wait");
    double t1 = now_s();
    if (r >= 0) t[r] = (t1 - t0) * 1e3;
    if (r == reps - 1) {
      *out = o;
    } else {
      mxc_ndarray_free(o);
    }
  }
  double m = median(t, reps, best);
  free(t);
  return m;
}

static double time_kernel(mxc_ndarray x, mxc_ndarray y, int reps,
                          double *best) {
  mxc_op op = NULL;
  check(mxc_op_find("_fused_elemwise", &op), "_fused_elemwise");
  const char *keys[2] = {"num_inputs", "program"};
  const char *vals[2] = {
      "1",
      "_mul_scalar(i0,scalar=0.5);_plus_scalar(r0,scalar=0.25);negative(r1);"
      "exp(r2);_plus_scalar(r3,scalar=1);_rdiv_scalar(r4,scalar=1)"};
  double *t = malloc(sizeof(double) * (size_t)reps);
  if (!t) exit(1);
  for (int r = -2; r < reps; ++r) {
    double t0 = now_s();
    check(mxc_op_invoke(op, keys, vals, 2, &x, 1, &y, 1, NULL), "invoke");
    check(mxc_ndarray_wait_to_read(y), "wait");
    if (r >= 0) t[r] = (now_s() - t0) * 1e3;
  }
  double m = median(t, reps, best);
  free(t);
  return m;
}

/* Runs bench/fusion_torch.py; its torch_sigmoid_ms, or NAN. */
static double time_torch(int64_t n, int reps) {
  const char *script = getenv("MXC_FUSION_TORCH_SCRIPT");
  if (!script) script = "bench/fusion_torch.py";
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %lld %d 2>&1", script,
           (long long)n, reps);
  FILE *p = popen(cmd, "r");
  double ms = NAN;
  if (!p) {
    printf("torch_note=could not start /usr/bin/python3\n");
    return ms;
  }
  char line[512];
  while (fgets(line, sizeof line, p)) {
    double v;
    if (sscanf(line, "torch_sigmoid_ms=%lf", &v) == 1) {
      ms = v;
    } else {
      fputs(line, stdout); /* torch_threads=, torch_error=, ... */
    }
  }
  pclose(p);
  if (isnan(ms)) printf("torch_note=torch unavailable; see above\n");
  return ms;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 24;
  int reps = argc > 2 ? atoi(argv[2]) : 15;
  const char *parts = argc > 3 ? argv[3] : "fused,unfused,kernel,torch";
  if (n < 1 || reps < 1) {
    fprintf(stderr, "usage: fusion [N >= 1 [REPS >= 1]]\n");
    return 2;
  }
  int threads = 0;
  check(mxc_get_num_threads(&threads), "get_num_threads");
  float *host = malloc(sizeof(float) * (size_t)n);
  if (!host) return 1;
  uint32_t s = 12345;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    host[i] = (float)(s >> 8) / 16777216.0f * 8.0f - 4.0f;
  }
  mxc_ndarray x = NULL, y = NULL;
  check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &x),
        "create");
  check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &y),
        "create");
  check(mxc_ndarray_copy_from_host(x, host, sizeof(float) * (size_t)n),
        "copy");

  mxc_symbol sym = build_sigmoid();
  mxc_executor fused = NULL, unfused = NULL;
  check(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 1, &x, NULL, NULL, 0, NULL,
                          MXC_BIND_DEFAULT, &fused),
        "bind");
  check(mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, 1, &x, NULL, NULL, 0, NULL,
                          MXC_BIND_NO_FUSION, &unfused),
        "bind no fusion");
  mxc_ndarray of = NULL, ou = NULL;
  double fused_ms = NAN, unfused_ms = NAN, kernel_ms = NAN, torch_ms = NAN;
  double fused_best = NAN, unfused_best = NAN, kernel_best = NAN;
  if (has_part(parts, "fused")) {
    fused_ms = time_executor(fused, reps, &of, &fused_best);
  }
  if (has_part(parts, "unfused")) {
    unfused_ms = time_executor(unfused, reps, &ou, &unfused_best);
  }
  if (has_part(parts, "kernel")) {
    kernel_ms = time_kernel(x, y, reps, &kernel_best);
  }

  /* The two executors must agree (to the vectorized exp's few ulp). */
  double diff = NAN;
  float *a = malloc(sizeof(float) * (size_t)n);
  float *b = malloc(sizeof(float) * (size_t)n);
  if (!a || !b) return 1;
  if (of && ou) {
    check(mxc_ndarray_copy_to_host(of, a, sizeof(float) * (size_t)n), "read");
    check(mxc_ndarray_copy_to_host(ou, b, sizeof(float) * (size_t)n), "read");
    diff = 0;
    for (int64_t i = 0; i < n; ++i) {
      double d = fabs((double)a[i] - (double)b[i]);
      if (!(d <= diff)) diff = d; /* NaN counts as a difference */
    }
  }
  if (has_part(parts, "torch")) torch_ms = time_torch(n, reps);

  printf("n=%lld\nthreads=%d\nreps=%d\n", (long long)n, threads, reps);
  printf("fused_sigmoid_ms=%.3f\n", fused_ms);
  printf("unfused_sigmoid_ms=%.3f\n", unfused_ms);
  printf("fused_kernel_sigmoid_ms=%.3f\n", kernel_ms);
  printf("fused_sigmoid_best_ms=%.3f\n", fused_best);
  printf("unfused_sigmoid_best_ms=%.3f\n", unfused_best);
  printf("fused_kernel_sigmoid_best_ms=%.3f\n", kernel_best);
  printf("torch_sigmoid_ms=%.3f\n", torch_ms);
  printf("fused_sigmoid_ratio_vs_torch=%.3f\n", fused_ms / torch_ms);
  printf("fused_sigmoid_ratio_vs_torch_goal=0.2\n");
  printf("fused_vs_unfused_speedup=%.2f\n", unfused_ms / fused_ms);
  printf("fused_vs_unfused_max_abs_diff=%.3g\n", diff);

  mxc_ndarray_free(of);
  mxc_ndarray_free(ou);
  mxc_executor_free(fused);
  mxc_executor_free(unfused);
  mxc_symbol_free(sym);
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  free(host);
  free(a);
  free(b);
  return mxc_wait_all() == MXC_OK ? 0 : 1;
}
