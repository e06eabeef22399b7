/* bench/gpu: the fused element-wise chain of issue 17 on gpu(0),
 *   y = relu((a * b + c)^2 - d) * a    over N = 2^24 float32 values,
 * a symbol of six operators (mul, add, square, sub, relu, mul) whose GPU
 * kernels all exist, so the same graph runs fused (one run-time compiled
 * kernel, backends/cuda/fuse.h) and unfused (six kernels). Prints:
 *   fused_chain_first_ms        the first fused forward: NVRTC compilation
 *                               and module load included (once per
 *                               program and device)
 *   fused_chain_gpu_ms          fused executor forward to the output being
 *                               readable, median of REPS after warm-up
 *   unfused_chain_gpu_ms        the same with MXC_BIND_NO_FUSION
 *   fused_chain_ratio_vs_unfused  fused / unfused
 *   fused_chain_gbps            bytes the fused kernel must move (4 inputs
 *                               read, 1 output written) / its time
 *   torch_chain_gpu_ms          PyTorch eager on the same GPU (cuda:0),
 *                               the same expression, median, run by
 *                               bench/gpu_fused_torch.py with the Python of
 *                               MXC_BENCH_TORCH_PYTHON (scripts/gpu_check.sh
 *                               sets it to PyTorch's venv); when that is
 *                               unset or torch cannot run, a
 *                               fused_chain_peer line says the peer is
 *                               missing and no ratio is printed
 *   fused_chain_ratio_vs_torch  fused / torch (goal <= 0.5 on an H100)
 *   fused_chain_max_abs_diff    fused vs unfused results (the same float
 *                               operations without FMA: 0 expected) */
#include "bench/gpu_fused.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"

#define BENCH_NAME "bench_gpu"
#include "bench/bench_util.h"

#define CHAIN_N ((int64_t)1 << 24)
#define CHAIN_REPS 21
#define CHAIN_INPUTS 4

static int cmp_ms(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static mxc_symbol node(const char *op_name, const char *name, mxc_symbol x,
                       mxc_symbol y) {
  mxc_op op = NULL;
  check(mxc_op_find(op_name, &op), op_name);
  mxc_symbol in[2] = {x, y}, out = NULL;
  check(mxc_symbol_create(op, NULL, NULL, 0, name, NULL, in, y ? 2 : 1,
                          &out),
        op_name);
  return out;
}

/* The chain over variables a, b, c, d (every intermediate symbol is
 * released; the result keeps the graph). */
static mxc_symbol chain(void) {
  mxc_symbol v[CHAIN_INPUTS], s[6];
  const char *names[CHAIN_INPUTS] = {"a", "b", "c", "d"};
  for (int i = 0; i < CHAIN_INPUTS; ++i) {
    check(mxc_symbol_variable(names[i], &v[i]), "variable");
  }
  s[0] = node("mul", "ab", v[0], v[1]);
  s[1] = node("add", "abc", s[0], v[2]);
  s[2] = node("square", "sq", s[1], NULL);
  s[3] = node("sub", "sqd", s[2], v[3]);
  s[4] = node("relu", "r", s[3], NULL);
  s[5] = node("mul", "y", s[4], v[0]);
  for (int i = 0; i < CHAIN_INPUTS; ++i) mxc_symbol_free(v[i]);
  for (int i = 0; i < 5; ++i) mxc_symbol_free(s[i]);
  return s[5];
}

/* gpu(0) arrays a, b, c, d in the symbol's argument order. */
static void make_args(mxc_symbol sym, mxc_ndarray *args) {
  mxc_str_list names = NULL;
  check(mxc_symbol_list_arguments(sym, &names), "list_arguments");
  float *h = malloc(sizeof(float) * (size_t)CHAIN_N);
  if (!h) exit(1);
  for (int i = 0; i < CHAIN_INPUTS; ++i) {
    const char *nm = NULL;
    check(mxc_str_list_get(names, i, &nm), "argument name");
    uint32_t s = 7u + (uint32_t)(nm[0] - 'a');
    for (int64_t k = 0; k < CHAIN_N; ++k) {
      s = s * 1664525u + 1013904223u;
      h[k] = (float)(s >> 8) / 16777216.0f * 4.0f - 2.0f;
    }
    int64_t n = CHAIN_N;
    check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU, 0, 0,
                             &args[i]),
          "gpu array");
    check(mxc_ndarray_copy_from_host(args[i], h, sizeof(float) * (size_t)n),
          "copy to gpu");
  }
  free(h);
  mxc_str_list_free(names);
}

/* One forward to the output being readable, in ms. */
static double forward_ms(mxc_executor ex) {
  double t0 = now_s();
  check(mxc_executor_forward(ex, 0), "forward");
  mxc_ndarray out = NULL;
  check(mxc_executor_output(ex, 0, &out), "output");
  check(mxc_ndarray_wait_to_read(out), "wait");
  mxc_ndarray_free(out);
  return (now_s() - t0) * 1e3;
}

/* Median forward time of sym bound with flags; *first: the first
 * forward's time; *y: the output (host, CHAIN_N floats). */
static double time_executor(mxc_symbol sym, mxc_ndarray *args, int flags,
                            double *first, float *y) {
  mxc_executor ex = NULL;
  check(mxc_executor_bind(sym, MXC_DEVICE_GPU, 0, CHAIN_INPUTS, args, NULL,
                          NULL, 0, NULL, flags, &ex),
        "bind");
  *first = forward_ms(ex);
  forward_ms(ex);
  double t[CHAIN_REPS];
  for (int r = 0; r < CHAIN_REPS; ++r) t[r] = forward_ms(ex);
  qsort(t, CHAIN_REPS, sizeof t[0], cmp_ms);
  mxc_ndarray out = NULL;
  check(mxc_executor_output(ex, 0, &out), "output");
  check(mxc_ndarray_copy_to_host(out, y, sizeof(float) * (size_t)CHAIN_N),
        "copy to host");
  mxc_ndarray_free(out);
  mxc_executor_free(ex);
  return t[CHAIN_REPS / 2];
}

/* PyTorch eager's median (bench/gpu_fused_torch.py), or NAN with a
 * fused_chain_peer line saying why. */
static double time_torch(void) {
  const char *py = getenv("MXC_BENCH_TORCH_PYTHON");
  const char *script = getenv("MXC_BENCH_GPU_TORCH_SCRIPT");
  if (!script || !*script) script = "bench/gpu_fused_torch.py";
  if (!py || !*py) {
    printf("fused_chain_peer=missing: MXC_BENCH_TORCH_PYTHON is not set "
           "(a Python with PyTorch for CUDA)\n");
    return NAN;
  }
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' '%s' %lld %d 2>&1", py, script,
           (long long)CHAIN_N, CHAIN_REPS);
  FILE *p = popen(cmd, "r");
  double ms = NAN;
  char line[512];
  while (p && fgets(line, sizeof line, p)) {
    if (sscanf(line, "torch_chain_gpu_ms=%lf", &ms) != 1) fputs(line, stdout);
  }
  if (p) pclose(p);
  if (isnan(ms)) printf("fused_chain_peer=missing: PyTorch did not run\n");
  return ms;
}

void bench_gpu_fused_chain(void) {
  mxc_symbol sym = chain();
  mxc_ndarray args[CHAIN_INPUTS];
  make_args(sym, args);
  float *yf = malloc(sizeof(float) * (size_t)CHAIN_N);
  float *yu = malloc(sizeof(float) * (size_t)CHAIN_N);
  if (!yf || !yu) exit(1);
  double first = 0, first_u = 0;
  double fused = time_executor(sym, args, MXC_BIND_DEFAULT, &first, yf);
  double unfused =
      time_executor(sym, args, MXC_BIND_NO_FUSION, &first_u, yu);
  double diff = 0;
  for (int64_t i = 0; i < CHAIN_N; ++i) diff = fmax(diff, fabs(yf[i] - yu[i]));
  printf("fused_chain_first_ms=%.3f\n", first);
  printf("fused_chain_gpu_ms=%.3f\n", fused);
  printf("unfused_chain_gpu_ms=%.3f\n", unfused);
  printf("fused_chain_ratio_vs_unfused=%.3f\n", fused / unfused);
  printf("fused_chain_gbps=%.1f\n",
         5.0 * 4 * (double)CHAIN_N / (fused * 1e-3) * 1e-9);
  printf("fused_chain_max_abs_diff=%g\n", diff);
  double torch = time_torch();
  if (!isnan(torch)) {
    printf("torch_chain_gpu_ms=%.3f\n", torch);
    printf("fused_chain_ratio_vs_torch=%.3f\n", fused / torch);
  }
  for (int i = 0; i < CHAIN_INPUTS; ++i) mxc_ndarray_free(args[i]);
  mxc_symbol_free(sym);
  free(yf);
  free(yu);
}
