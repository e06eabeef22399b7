/* Engine overhead benchmark. Prints name=value lines:
 *   engine_push_us_naive / _threaded   push + run of a trivial function
 *       reading one var and writing another (the same two every push),
 *       amortized over N pushes and a final wait_all; best of REPS runs
 *   engine_indep_us_threaded   the same over 64 independent var pairs,
 *       pushed round-robin (parallel work for the pool)
 *   direct_call_us   the trivial function called through a pointer
 *   ratios against direct_call_us, and the goals.
 * Usage: engine [N] [workers]   (defaults 1000000, online CPUs) */
#include "core/engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/base/error.h"

#define REPS 5
#define N_INDEP 64

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The trivial function: bumps a counter the arg points to. */
static int trivial(void *arg, mxc__exec *ex) {
  (void)ex;
  (*(long *)arg)++;
  return MXC_OK;
}

static void die(const char *what) {
  fprintf(stderr, "bench engine: %s failed: %s\n", what, mxc__error_msg());
  exit(1);
}

/* Microseconds per push+run over n pushes on pairs of vars (n_pairs of
 * them, round-robin), best of REPS. */
static double bench_engine(int kind, int workers, long n, int n_pairs) {
  double best = 1e30;
  for (int rep = 0; rep < REPS; rep++) {
    mxc__engine *e = NULL;
    if (mxc__engine_create(kind, workers, &e) != MXC_OK) die("create");
    mxc__var *r[N_INDEP], *w[N_INDEP];
    long counters[N_INDEP] = {0};
    for (int i = 0; i < n_pairs; i++) {
      if (mxc__engine_new_var(e, &r[i]) != MXC_OK ||
          mxc__engine_new_var(e, &w[i]) != MXC_OK) {
        die("new_var");
      }
    }
    mxc__push_args a = {0};
    a.sync_fn = trivial;
    a.n_reads = 1;
    a.n_writes = 1;
    a.name = "trivial";
    a.dev.type = MXC_DEVICE_CPU;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
      int k = (int)(i % n_pairs);
      a.arg = &counters[k];
      a.reads = &r[k];
      a.writes = &w[k];
      if (mxc__engine_push(e, &a) != MXC_OK) die("push");
    }
    if (mxc__engine_wait_all(e) != MXC_OK) die("wait_all");
    double us = (now_s() - t0) * 1e6 / (double)n;
    long total = 0;
    for (int i = 0; i < n_pairs; i++) {
      total += counters[i];
      mxc__engine_delete_var(e, r[i], NULL, NULL);
      mxc__engine_delete_var(e, w[i], NULL, NULL);
    }
    mxc__engine_destroy(e);
    if (total != n) {
      fprintf(stderr, "bench engine: ran %ld of %ld functions\n", total, n);
      exit(1);
    }
    if (us < best) best = us;
  }
  return best;
}

/* The same function called directly through a pointer the compiler cannot
 * see through (volatile), so the loop is not folded away. */
static double bench_direct(long n) {
  int (*volatile fn)(void *, mxc__exec *) = trivial;
  long counter = 0;
  double best = 1e30;
  for (int rep = 0; rep < REPS; rep++) {
    double t0 = now_s();
    for (long i = 0; i < n; i++) fn(&counter, NULL);
    double us = (now_s() - t0) * 1e6 / (double)n;
    if (us < best) best = us;
  }
  if (counter != n * REPS) exit(1);
  return best;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int workers = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (workers < 1) workers = 1;
  double direct = bench_direct(n * 10);
  double naive = bench_engine(MXC__ENGINE_NAIVE, 1, n, 1);
  double thr = bench_engine(MXC__ENGINE_THREADED, workers, n, 1);
  double indep = bench_engine(MXC__ENGINE_THREADED, workers, n, N_INDEP);
  printf("engine_pushes=%ld\n", n);
  printf("engine_threaded_workers=%d\n", workers);
  printf("direct_call_us=%.4f\n", direct);
  printf("engine_push_us_naive=%.4f\n", naive);
  printf("engine_push_us_threaded=%.4f\n", thr);
  printf("engine_indep_us_threaded=%.4f\n", indep);
  printf("engine_push_ratio_naive_vs_direct=%.1f\n", naive / direct);
  printf("engine_push_ratio_threaded_vs_direct=%.1f\n", thr / direct);
  printf("engine_indep_ratio_threaded_vs_direct=%.1f\n", indep / direct);
  printf("engine_push_us_naive_goal=0.35\n");
  printf("engine_push_us_threaded_goal=1.0\n");
  return 0;
}
