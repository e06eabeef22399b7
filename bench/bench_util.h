/* What every benchmark program needs: a monotonic clock and a check that
 * stops the program with mxc's message on failure. Define BENCH_NAME (the
 * prefix of error messages) before including. */
#ifndef MXC_BENCH_BENCH_UTIL_H_
#define MXC_BENCH_BENCH_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mxc/mxc.h"

#ifndef BENCH_NAME
#define BENCH_NAME "bench"
#endif

/* Seconds on the monotonic clock. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of CPU time this process has used, all its threads together:
 * on a machine shared with other jobs, a figure the others' load changes
 * far less than the wall clock (threads waiting for a core do not
 * count), though it also counts threads spinning while they wait for
 * work (OpenMP teams do, for a while, on both sides of a comparison). */
static inline double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Exits with a message naming `what` when rc is not MXC_OK. */
static inline void check(int rc, const char *what) {
  if (rc != MXC_OK) {
    fprintf(stderr, "%s: %s failed: %s\n", BENCH_NAME, what, mxc_last_error());
    exit(1);
  }
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v[0..n) (n >= 1) ascending and returns its median. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* MXC_BENCH_BENCH_UTIL_H_ */
