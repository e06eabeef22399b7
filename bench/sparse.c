/* Sparse dot benchmark (issue 5): csr(M x K, PER stored entries per row,
 * float32, int64 indices) x dense(K x N) -> dense(M x N) through the
 * public C API (mxc_op_invoke of dot), against PyTorch's CPU sparse CSR
 * matmul with 2 threads (bench/sparse_torch.py, run by /usr/bin/python3 in
 * the same run). Defaults M = 100000, K = 20000, PER = 20 (2M stored),
 * N = 64. Row r stores one column in each of PER equal strata of the K
 * columns, drawn uniformly from a fixed seed; values uniform in [-1, 1).
 * Prints name=value lines:
 *   csr_dot_ms_mxc            median of REPS runs (after 2 warm-ups; the
 *                             first also format-checks the csr), timed
 *                             from invoke to the output being readable
 *   csr_dot_ms_torch          torch's median (or "skipped")
 *   csr_dot_ratio_vs_torch    mxc / torch (goal <= 0.5)
 *   csr_t_dot_ms_mxc          transpose(csr) x dense(M x N) -> dense
 *                             (K x N), the weight gradient's product
 *   csr_t_dot_rsp_ms_mxc      the same into a row_sparse output
 *   csr_t_dot_ms_torch        torch's csr.t() @ dense, when it has one
 *   csr_dot_max_abs_err       mxc against a naive double-precision loop
 *                             on a sample of rows
 *   *_best_ms                 fastest runs (less sensitive to load)
 * Usage: sparse [REPS [M K PER N]]. MXC_NUM_THREADS sets mxc's threads
 * (default: online CPUs). MXC_SPARSE_TORCH_SCRIPT overrides the script
 * path (default bench/sparse_torch.py, relative to the repository). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxc/mxc.h"

#define BENCH_NAME "bench sparse"
#include "bench/bench_util.h"

static double median(double *t, int n, double *best) {
  double m = bench_median(t, n);
  *best = t[0];
  return m;
}

static uint32_t g_seed = 12345;
static uint32_t rnd(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed >> 8; /* 24 bits */
}
static float rnd_val(void) { return (float)rnd() / 8388608.0f - 1.0f; }

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "%s: out of memory\n", BENCH_NAME);
    exit(1);
  }
  return p;
}

typedef struct host_csr {
  int64_t m, k, nnz;
  int64_t *ptr, *idx;
  float *val;
} host_csr;

static host_csr make_csr(int64_t m, int64_t k, int64_t per) {
  host_csr c = {m, k, m * per, NULL, NULL, NULL};
  c.ptr = xmalloc(sizeof(int64_t) * (size_t)(m + 1));
  c.idx = xmalloc(sizeof(int64_t) * (size_t)c.nnz);
  c.val = xmalloc(sizeof(float) * (size_t)c.nnz);
  int64_t width = k / per;
  c.ptr[0] = 0;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t s = 0; s < per; ++s) {
      int64_t j = r * per + s;
      c.idx[j] = s * width + (int64_t)(rnd() % (uint32_t)width);
      c.val[j] = rnd_val();
    }
    c.ptr[r + 1] = (r + 1) * per;
  }
  return c;
}

static mxc_ndarray dense_random(int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  size_t n = (size_t)(rows * cols);
  float *h = xmalloc(sizeof(float) * n);
  for (size_t i = 0; i < n; ++i) h[i] = rnd_val();
  mxc_ndarray a = NULL;
  check(
      mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a),
      "create dense");
  check(mxc_ndarray_copy_from_host(a, h, sizeof(float) * n), "copy dense");
  free(h);
  return a;
}

/* Median ms of dot(lhs, rhs) into *out (NULL: a new array each run, the
 * last kept in *out). */
static double time_dot(mxc_ndarray lhs, mxc_ndarray rhs, int transpose_a,
                       mxc_ndarray *out, int reps, double *best) {
  mxc_op op = NULL;
  check(mxc_op_find("dot", &op), "find dot");
  const char *keys[1] = {"transpose_a"};
  const char *vals[1] = {transpose_a ? "true" : "false"};
  mxc_ndarray in[2] = {lhs, rhs};
  double *t = xmalloc(sizeof(double) * (size_t)reps);
  for (int r = -2; r < reps; ++r) {
    double t0 = now_s();
    check(mxc_op_invoke(op, keys, vals, 1, in, 2, out, 1, NULL), "dot");
    check(mxc_ndarray_wait_to_read(*out), "wait dot");
    if (r >= 0) t[r] = (now_s() - t0) * 1e3;
  }
  double m = median(t, reps, best);
  free(t);
  return m;
}

/* Max |mxc - naive| over a sample of output rows of csr x W. */
static double check_rows(const host_csr *c, mxc_ndarray w, mxc_ndarray y,
                         int64_t n) {
  float *hw = xmalloc(sizeof(float) * (size_t)(c->k * n));
  float *hy = xmalloc(sizeof(float) * (size_t)(c->m * n));
  check(mxc_ndarray_copy_to_host(w, hw, sizeof(float) * (size_t)(c->k * n)),
        "read W");
  check(mxc_ndarray_copy_to_host(y, hy, sizeof(float) * (size_t)(c->m * n)),
        "read Y");
  double err = 0;
  for (int64_t r = 0; r < c->m; r += 997) {
    for (int64_t q = 0; q < n; ++q) {
      double s = 0;
      for (int64_t j = c->ptr[r]; j < c->ptr[r + 1]; ++j) {
        s += (double)c->val[j] * hw[c->idx[j] * n + q];
      }
      double d = fabs(s - hy[r * n + q]);
      if (!(d <= err)) err = d;
    }
  }
  free(hw);
  free(hy);
  return err;
}

typedef struct torch_ms {
  double dot, dot_best, t_dot;
} torch_ms;

/* Runs bench/sparse_torch.py; NAN for what it did not report. */
static torch_ms time_torch(int64_t m, int64_t k, int64_t per, int64_t n,
                           int reps) {
  torch_ms r = {NAN, NAN, NAN};
  const char *script = getenv("MXC_SPARSE_TORCH_SCRIPT");
  if (!script) script = "bench/sparse_torch.py";
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %lld %lld %lld %lld %d 2>&1",
           script, (long long)m, (long long)k, (long long)per, (long long)n,
           reps);
  FILE *p = popen(cmd, "r");
  if (!p) {
    printf("torch_note=could not start /usr/bin/python3\n");
    return r;
  }
  char line[512];
  while (fgets(line, sizeof line, p)) {
    double v;
    if (sscanf(line, "torch_csr_dot_ms=%lf", &v) == 1) {
      r.dot = v;
    } else if (sscanf(line, "torch_csr_dot_best_ms=%lf", &v) == 1) {
      r.dot_best = v;
    } else if (sscanf(line, "torch_csr_t_dot_ms=%lf", &v) == 1) {
      r.t_dot = v;
    } else {
      fputs(line, stdout); /* torch_threads=, torch_error=, ... */
    }
  }
  pclose(p);
  return r;
}

static void print_ms(const char *name, double v) {
  if (isnan(v)) {
    printf("%s=skipped\n", name);
  } else {
    printf("%s=%.3f\n", name, v);
  }
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 11;
  int64_t m = argc > 5 ? atoll(argv[2]) : 100000;
  int64_t k = argc > 5 ? atoll(argv[3]) : 20000;
  int64_t per = argc > 5 ? atoll(argv[4]) : 20;
  int64_t n = argc > 5 ? atoll(argv[5]) : 64;
  if (reps < 1 || m < 1 || per < 1 || k < per || n < 1) {
    fprintf(stderr, "usage: sparse [REPS >= 1 [M K PER N], K >= PER]\n");
    return 2;
  }
  int threads = 0;
  check(mxc_get_num_threads(&threads), "get_num_threads");
  host_csr c = make_csr(m, k, per);
  int64_t shape[2] = {m, k};
  mxc_ndarray a = NULL;
  check(mxc_ndarray_create_csr(shape, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, c.val,
                               c.ptr, c.idx, c.nnz, MXC_DEVICE_CPU, 0, &a),
        "create csr");
  mxc_ndarray w = dense_random(k, n), g = dense_random(m, n);
  mxc_ndarray y = NULL, gw = NULL, gw_rsp = NULL;
  double best, best_t, best_rsp;
  double ms = time_dot(a, w, 0, &y, reps, &best);
  double err = check_rows(&c, w, y, n);
  int64_t gw_shape[2] = {k, n};
  check(mxc_ndarray_create(gw_shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &gw),
        "create gw");
  check(mxc_ndarray_create_row_sparse(gw_shape, 2, MXC_DTYPE_FLOAT32,
                                      MXC_DTYPE_INT64, NULL, NULL, 0,
                                      MXC_DEVICE_CPU, 0, &gw_rsp),
        "create gw row_sparse");
  double ms_t = time_dot(a, g, 1, &gw, reps, &best_t);
  double ms_rsp = time_dot(a, g, 1, &gw_rsp, reps, &best_rsp);
  torch_ms tm = time_torch(m, k, per, n, reps);

  printf("m=%lld\nk=%lld\nnnz=%lld\nn=%lld\nthreads=%d\nreps=%d\n",
         (long long)m, (long long)k, (long long)c.nnz, (long long)n, threads,
         reps);
  print_ms("csr_dot_ms_mxc", ms);
  print_ms("csr_dot_best_ms_mxc", best);
  print_ms("csr_dot_ms_torch", tm.dot);
  print_ms("csr_dot_best_ms_torch", tm.dot_best);
  if (isnan(tm.dot)) {
    printf("csr_dot_ratio_vs_torch=skipped\n");
  } else {
    printf("csr_dot_ratio_vs_torch=%.3f\n", ms / tm.dot);
  }
  printf("csr_dot_ratio_vs_torch_goal=0.5\n");
  print_ms("csr_t_dot_ms_mxc", ms_t);
  print_ms("csr_t_dot_best_ms_mxc", best_t);
  print_ms("csr_t_dot_rsp_ms_mxc", ms_rsp);
  print_ms("csr_t_dot_rsp_best_ms_mxc", best_rsp);
  print_ms("csr_t_dot_ms_torch", tm.t_dot);
  printf("csr_dot_max_abs_err=%.3g\n", err);

  mxc_ndarray all[6] = {a, w, g, y, gw, gw_rsp};
  for (int i = 0; i < 6; ++i) mxc_ndarray_free(all[i]);
  free(c.ptr);
  free(c.idx);
  free(c.val);
  return mxc_wait_all() == MXC_OK ? 0 : 1;
}
