/* Allreduce throughput of a "dist_sync" KVStore against MPI_Allreduce
 * on buffers of the same sizes (4 KiB .. 64 MiB of float32), run as an MPI
 * job by bench/dist/run.sh, which runs both modes and prints the ratio:
 *
 *   dist --mode mpi       MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) in this
 *                         process's own MPI
 *   dist --mode kvstore   mxc_kvstore_pushpull of one key in place and a
 *                         wait (the plug-in's ring on its thread)
 *
 * Rank 0 prints name=value lines: MODE_gbps_BYTES= (algorithm bandwidth:
 * the buffer's bytes per second of one allreduce). The modes run as two
 * jobs because the plug-in initialises MPI itself, on its thread, and
 * MPI may be initialised once per process. --reps N (default 20). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxc/mxc.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(int rc, const char *what) {
  if (rc != MXC_OK) {
    fprintf(stderr, "bench/dist: %s failed: %s\n", what, mxc_last_error());
    exit(1);
  }
}

#define MIN_BYTES ((int64_t)4 << 10)
#define MAX_BYTES ((int64_t)64 << 20)

typedef double (*time_fn)(void *ctx, float *buf, mxc_ndarray a, int64_t n,
                          int reps);

static double time_mpi(void *ctx, float *buf, mxc_ndarray a, int64_t n,
                       int reps) {
  (void)ctx;
  (void)a;
  MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD); /* warm-up */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_s();
  for (int r = 0; r < reps; ++r) {
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  return now_s() - t0;
}

static double time_kvstore(void *ctx, float *buf, mxc_ndarray a, int64_t n,
                           int reps) {
  mxc_kvstore kv = ctx;
  (void)buf;
  const int64_t key = n; /* one key per size */
  check(mxc_kvstore_init(kv, 1, &key, NULL, &a), "init");
  check(mxc_kvstore_pushpull(kv, 1, &key, NULL, &a, &a, 0), "warm-up");
  check(mxc_ndarray_wait_to_read(a), "wait");
  check(mxc_kvstore_barrier(kv), "barrier");
  double t0 = now_s();
  for (int r = 0; r < reps; ++r) {
    check(mxc_kvstore_pushpull(kv, 1, &key, NULL, &a, &a, 0), "pushpull");
  }
  check(mxc_ndarray_wait_to_read(a), "wait");
  return now_s() - t0;
}

static void run_sizes(const char *mode, time_fn fn, void *ctx, int rank,
                      int reps) {
  for (int64_t bytes = MIN_BYTES; bytes <= MAX_BYTES; bytes *= 4) {
    int64_t n = bytes / 4;
    float *buf = calloc((size_t)n, sizeof *buf);
    mxc_ndarray a = NULL;
    if (!buf) check(MXC_ERR_OOM, "buffer");
    check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                             &a),
          "array");
    double t = fn(ctx, buf, a, n, reps);
    if (rank == 0) {
      printf("%s_gbps_%lld=%.3f\n", mode, (long long)bytes,
             (double)bytes * reps / t / 1e9);
      fflush(stdout);
    }
    mxc_ndarray_free(a);
    free(buf);
  }
}

int main(int argc, char **argv) {
  const char *mode = "kvstore";
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--mode") == 0) mode = argv[i + 1];
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
  }
  if (reps < 1) reps = 1;
  if (strcmp(mode, "mpi") == 0) {
    int rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run_sizes("mpi_allreduce", time_mpi, NULL, rank, reps);
    MPI_Finalize();
    return 0;
  }
  mxc_kvstore kv = NULL;
  int rank = 0;
  check(mxc_kvstore_create("dist_sync", &kv), "mxc_kvstore_create");
  check(mxc_kvstore_rank(kv, &rank), "rank");
  run_sizes("kvstore_allreduce", time_kvstore, kv, rank, reps);
  check(mxc_wait_all(), "wait_all");
  mxc_kvstore_free(kv);
  return 0;
}
