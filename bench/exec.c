/* Executor overhead against imperative calls, in the same run. Prints
 * name=value lines:
 *   exec_mlp_ms          forward + backward of an MLP 784-512-256-10
 *                        (ReLU, SoftmaxOutput) at batch 128 through an
 *                        executor, ms per batch, best of REPS blocks of
 *                        ITERS batches each ending in mxc_wait_all
 *   exec_noplan_mlp_ms   the same with MXC_BIND_NO_MEMORY_PLAN (one buffer
 *                        per value: no reuse dependencies between nodes)
 *   imperative_mlp_ms    the same operators and gradient operators pushed
 *                        one by one with mxc_op_invoke into preallocated
 *                        arrays, measured the same way
 *   exec_vs_imperative_ratio  imperative_mlp_ms / exec_mlp_ms (> 1: the
 *                        executor is faster)
 *   max_abs_grad_diff    largest difference between the two paths'
 *                        fc1_weight gradients (a sanity check)
 *   planned_bytes, unshared_bytes  mxc_executor_memory
 *   threads              engine worker threads
 * Usage: exec [ITERS (default 20)]. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

#define BENCH_NAME "bench exec"
#include "bench/bench_util.h"

#define REPS 5
#define BATCH 128

static const int64_t k_hidden[3] = {512, 256, 10};

static mxc_op find(const char *name) {
  mxc_op op = NULL;
  check(mxc_op_find(name, &op), name);
  return op;
}

static mxc_symbol build_mlp(void) {
  mxc_symbol cur = NULL, label = NULL;
  check(mxc_symbol_variable("data", &cur), "variable");
  check(mxc_symbol_variable("label", &label), "variable");
  for (int i = 0; i < 3; ++i) {
    char name[16], hid[16];
    snprintf(name, sizeof name, "fc%d", i + 1);
    snprintf(hid, sizeof hid, "%lld", (long long)k_hidden[i]);
    const char *k = "num_hidden", *v = hid;
    mxc_symbol fc = NULL, act = NULL;
    check(mxc_symbol_create(find("FullyConnected"), &k, &v, 1, name, NULL, &cur,
                            1, &fc),
          "FullyConnected");
    mxc_symbol_free(cur);
    cur = fc;
    if (i == 2) break;
    const char *ak = "act_type", *av = "relu";
    snprintf(name, sizeof name, "relu%d", i + 1);
    check(mxc_symbol_create(find("Activation"), &ak, &av, 1, name, NULL, &cur,
                            1, &act),
          "Activation");
    mxc_symbol_free(cur);
    cur = act;
  }
  mxc_symbol ins[2] = {cur, label}, out = NULL;
  check(mxc_symbol_create(find("SoftmaxOutput"), NULL, NULL, 0, "sm", NULL, ins,
                          2, &out),
        "SoftmaxOutput");
  mxc_symbol_free(cur);
  mxc_symbol_free(label);
  return out;
}

static mxc_ndarray arg(mxc_executor ex, const char *name, int grad) {
  mxc_ndarray a = NULL;
  check(grad ? mxc_executor_grad(ex, name, &a) : mxc_executor_arg(ex, name, &a),
        name);
  return a;
}

static mxc_ndarray array2(int64_t r, int64_t c) {
  int64_t s[2] = {r, c};
  mxc_ndarray a = NULL;
  check(mxc_ndarray_create(s, c ? 2 : 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                           0, &a),
        "create");
  return a;
}

/* ---- the imperative path ---- */

typedef struct net {
  mxc_ndarray data, label, w[3], b[3];    /* shared with the executor */
  mxc_ndarray h[3], a[2], y;              /* forward values */
  mxc_ndarray gh[3], ga[3], gw[3], gb[3]; /* gradients (ga[0]: data) */
} net;

static void invoke(const char *op, const char *k, const char *v,
                   mxc_ndarray *in, int n_in, mxc_ndarray *out, int n_out) {
  check(mxc_op_invoke(find(op), k ? &k : NULL, v ? &v : NULL, k ? 1 : 0, in,
                      n_in, out, n_out, NULL),
        op);
}

static void imperative_step(net *n) {
  const char *hid[3] = {"512", "256", "10"};
  mxc_ndarray x = n->data;
  for (int i = 0; i < 3; ++i) {
    mxc_ndarray in[3] = {x, n->w[i], n->b[i]};
    invoke("FullyConnected", "num_hidden", hid[i], in, 3, &n->h[i], 1);
    if (i == 2) break;
    invoke("Activation", "act_type", "relu", &n->h[i], 1, &n->a[i], 1);
    x = n->a[i];
  }
  mxc_ndarray sm_in[2] = {n->h[2], n->label};
  invoke("SoftmaxOutput", NULL, NULL, sm_in, 2, &n->y, 1);
  mxc_ndarray sb_in[2] = {n->y, n->label};
  invoke("_backward_SoftmaxOutput", NULL, NULL, sb_in, 2, &n->gh[2], 1);
  for (int i = 2; i >= 0; --i) {
    mxc_ndarray src = i ? n->a[i - 1] : n->data;
    mxc_ndarray in[4] = {n->gh[i], src, n->w[i], n->b[i]};
    mxc_ndarray out[3] = {n->ga[i], n->gw[i], n->gb[i]};
    invoke("_backward_FullyConnected", "num_hidden", hid[i], in, 4, out, 3);
    if (i == 0) break;
    mxc_ndarray ain[3] = {n->ga[i], n->h[i - 1], n->a[i - 1]};
    invoke("_backward_Activation", "act_type", "relu", ain, 3, &n->gh[i - 1],
           1);
  }
}

static void net_init(net *n, mxc_executor ex) {
  memset(n, 0, sizeof *n);
  n->data = arg(ex, "data", 0);
  n->label = arg(ex, "label", 0);
  int64_t in = 784;
  for (int i = 0; i < 3; ++i) {
    char name[32];
    snprintf(name, sizeof name, "fc%d_weight", i + 1);
    n->w[i] = arg(ex, name, 0);
    snprintf(name, sizeof name, "fc%d_bias", i + 1);
    n->b[i] = arg(ex, name, 0);
    n->h[i] = array2(BATCH, k_hidden[i]);
    n->gh[i] = array2(BATCH, k_hidden[i]);
    n->ga[i] = array2(BATCH, in);
    n->gw[i] = array2(k_hidden[i], in);
    n->gb[i] = array2(k_hidden[i], 0);
    if (i < 2) n->a[i] = array2(BATCH, k_hidden[i]);
    in = k_hidden[i];
  }
  n->y = array2(BATCH, 10);
}

static void net_free(net *n) {
  mxc_ndarray *all = (mxc_ndarray *)n;
  for (size_t i = 0; i < sizeof *n / sizeof(mxc_ndarray); ++i) {
    mxc_ndarray_free(all[i]);
  }
}

/* ---- timing ---- */

static double time_exec(mxc_executor ex, int iters) {
  double best = 1e30;
  for (int r = 0; r < REPS; ++r) {
    double t0 = now_s();
    for (int i = 0; i < iters; ++i) {
      check(mxc_executor_forward(ex, 1), "forward");
      check(mxc_executor_backward(ex, 0, NULL), "backward");
    }
    check(mxc_wait_all(), "wait_all");
    double t = (now_s() - t0) / iters;
    if (t < best) best = t;
  }
  return best;
}

static double time_imperative(net *n, int iters) {
  int prev = 0;
  check(mxc_set_training(1, &prev), "set_training");
  double best = 1e30;
  for (int r = 0; r < REPS; ++r) {
    double t0 = now_s();
    for (int i = 0; i < iters; ++i) imperative_step(n);
    check(mxc_wait_all(), "wait_all");
    double t = (now_s() - t0) / iters;
    if (t < best) best = t;
  }
  mxc_set_training(prev, NULL);
  return best;
}

static double max_diff(mxc_ndarray a, mxc_ndarray b) {
  int64_t n = 0;
  check(mxc_ndarray_size(a, &n), "size");
  float *x = malloc(sizeof(float) * (size_t)n * 2);
  if (!x) exit(1);
  check(mxc_ndarray_copy_to_host(a, x, sizeof(float) * (size_t)n), "copy");
  check(mxc_ndarray_copy_to_host(b, x + n, sizeof(float) * (size_t)n), "copy");
  double m = 0;
  for (int64_t i = 0; i < n; ++i) m = fmax(m, fabs((double)x[i] - x[n + i]));
  free(x);
  return m;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20;
  if (iters < 1) iters = 1;
  mxc_symbol sym = build_mlp();
  const char *names[] = {"data"}, *no_grad[] = {"data", "label"};
  int ndims[] = {2}, reqs[] = {MXC_REQ_NULL, MXC_REQ_NULL};
  int64_t dims[] = {BATCH, 784};
  mxc_executor ex = NULL;
  check(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                                 NULL, MXC_REQ_WRITE, 2, no_grad, reqs,
                                 MXC_BIND_DEFAULT, &ex),
        "simple_bind");
  mxc_executor ex2 = NULL;
  check(mxc_executor_simple_bind(sym, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                                 NULL, MXC_REQ_WRITE, 2, no_grad, reqs,
                                 MXC_BIND_NO_MEMORY_PLAN, &ex2),
        "simple_bind");
  net n;
  net_init(&n, ex);
  for (int i = 0; i < 3; ++i) {
    check(mxc_init_array(n.w[i], "xavier", NULL, NULL, 0), "init");
  }
  check(mxc_init_array(n.data, "uniform", NULL, NULL, 0), "init");
  float labels[BATCH];
  for (int i = 0; i < BATCH; ++i) labels[i] = (float)(i % 10);
  check(mxc_ndarray_copy_from_host(n.label, labels, sizeof labels), "labels");
  const char *params[] = {"data",       "label",    "fc1_weight", "fc1_bias",
                          "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias"};
  for (int i = 0; i < 8; ++i) {
    mxc_ndarray src = arg(ex, params[i], 0), dst = arg(ex2, params[i], 0);
    check(mxc_ndarray_copy(src, dst), "copy");
    mxc_ndarray_free(src);
    mxc_ndarray_free(dst);
  }
  time_exec(ex, 2); /* warm-up: pools, temp space, worker threads */
  time_exec(ex2, 2);
  time_imperative(&n, 2);
  double te = time_exec(ex, iters), ti = time_imperative(&n, iters);
  double tn = time_exec(ex2, iters);
  mxc_ndarray g = arg(ex, "fc1_weight", 1);
  int64_t planned = 0, unshared = 0;
  int threads = 0;
  check(mxc_executor_memory(ex, &planned, &unshared), "memory");
  check(mxc_get_num_threads(&threads), "threads");
  printf("exec_mlp_ms=%.3f\n", te * 1e3);
  printf("exec_noplan_mlp_ms=%.3f\n", tn * 1e3);
  printf("imperative_mlp_ms=%.3f\n", ti * 1e3);
  printf("exec_vs_imperative_ratio=%.3f\n", ti / te);
  printf("max_abs_grad_diff=%.3g\n", max_diff(g, n.gw[0]));
  printf("planned_bytes=%lld\nunshared_bytes=%lld\n", (long long)planned,
         (long long)unshared);
  printf("threads=%d\n", threads);
  mxc_ndarray_free(g);
  net_free(&n);
  mxc_executor_free(ex);
  mxc_executor_free(ex2);
  mxc_symbol_free(sym);
  return 0;
}
