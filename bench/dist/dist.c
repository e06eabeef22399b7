/* bench/dist, run as MPI jobs by bench/dist/jobs.sh (bench/dist/run.sh
 * builds and calls it):
 *
 * 1. Allreduce throughput of a "dist_sync" KVStore against MPI_Allreduce
 *    on buffers of the same sizes (4 KiB .. --max-bytes, default 64 MiB,
 *    of float32):
 *      dist --mode mpi       MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) in this
 *                            process's own MPI
 *      dist --mode kvstore   mxc_kvstore_pushpull of one key in place and
 *                            a wait (the plug-in's ring on its thread)
 *    Rank 0 prints MODE_gbps_BYTES= (algorithm bandwidth: the buffer's
 *    bytes per second of one allreduce). The modes run as two jobs
 *    because the plug-in initialises MPI itself, on its thread, and MPI
 *    may be initialised once per process. --reps N (default 20).
 *
 * 2. The per-step time of the main job's MLP (examples/fmnist.c: 784-
 *    512-256-10, sgd_mom_update, the step of train_fashion_mnist) on
 *    synthetic batches of --batch examples per worker (default 64):
 *      dist --mode step --store none        one process, no store
 *      dist --mode step --store dist_sync   every rank of an MPI job,
 *                                           gradients summed by the store
 *    Rank 0 prints mlp_step_ms_npN= (mean over --steps steps after 3
 *    warm-up steps, each step waiting for its forward pass as the main
 *    job does to measure its loss). With the same batch per worker, the
 *    difference between N ranks and 1 is what dist_sync adds per step
 *    (jobs.sh prints it). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "examples/fmnist.h"
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
                      int reps, int64_t max_bytes) {
  for (int64_t bytes = MIN_BYTES; bytes <= max_bytes; bytes *= 4) {
    int64_t n = bytes / 4;
    float *buf = calloc((size_t)n, sizeof *buf);
    mxc_ndarray a = NULL;
    if (!buf) check(MXC_ERR_OOM, "buffer");
    check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                             &a),
          "array");
    double t = fn(ctx, buf, a, n, reps);
    if (rank == 0) {
      printf("%s_gbps_%lld=%.6f\n", mode, (long long)bytes,
             (double)bytes * reps / t / 1e9);
      fflush(stdout);
    }
    mxc_ndarray_free(a);
    free(buf);
  }
}

/* ---- the MLP step ---- */

static void check_fm(int rc, const char *what) {
  if (rc != MXC_OK) {
    fprintf(stderr, "bench/dist: %s failed: %s\n", what, fm_last_error());
    exit(1);
  }
}

/* A synthetic batch: uniform pixels, labels 0..9 in turn. */
static void make_batch(int64_t batch, mxc_ndarray *x, mxc_ndarray *y) {
  int64_t xs[2] = {batch, 784};
  check(mxc_ndarray_create(xs, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, x),
        "data");
  const char *k[] = {"scale"}, *v[] = {"1"};
  check(mxc_init_array(*x, "uniform", k, v, 1), "data values");
  float *labels = calloc((size_t)batch, sizeof *labels);
  if (!labels) check(MXC_ERR_OOM, "labels");
  for (int64_t i = 0; i < batch; ++i) labels[i] = (float)(i % 10);
  check(mxc_ndarray_create(&batch, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           y),
        "label");
  check(mxc_ndarray_copy_from_host(*y, labels, (size_t)batch * 4), "labels");
  free(labels);
}

static double time_steps(fm_net *net, mxc_kvstore kv, int64_t batch,
                         int steps) {
  mxc_ndarray x = NULL, y = NULL;
  make_batch(batch, &x, &y);
  fm_opt opt = {.lr = 0.01, .momentum = 0.9, .wd = 0, .clip_gradient = -1};
  fm_stats stats = {0};
  for (int i = 0; i < 3; ++i) check_fm(fm_net_step(net, x, y, &opt, &stats), "step");
  check(mxc_wait_all(), "warm-up");
  if (kv) check(mxc_kvstore_barrier(kv), "barrier");
  double t0 = now_s();
  for (int i = 0; i < steps; ++i) {
    check_fm(fm_net_step(net, x, y, &opt, &stats), "step");
  }
  check(mxc_wait_all(), "steps");
  double t = now_s() - t0;
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  return t;
}

static void run_steps(const char *store, int64_t batch, int steps) {
  mxc_kvstore kv = NULL;
  int rank = 0, workers = 1;
  if (strcmp(store, "none") != 0) {
    check(mxc_kvstore_create(store, &kv), "mxc_kvstore_create");
    check(mxc_kvstore_rank(kv, &rank), "rank");
    check(mxc_kvstore_num_workers(kv, &workers), "num_workers");
  }
  fm_net *net = NULL;
  check_fm(fm_net_create(FM_MLP, batch, &net), "fm_net_create");
  check_fm(fm_net_init(net, 1), "fm_net_init");
  if (kv) check_fm(fm_net_set_kvstore(net, kv, batch * workers), "kvstore");
  double t = time_steps(net, kv, batch, steps);
  if (rank == 0) {
    printf("mlp_batch_per_worker=%lld\nmlp_step_ms_np%d=%.3f\n",
           (long long)batch, workers, t / steps * 1e3);
    fflush(stdout);
  }
  fm_net_free(net);
  mxc_kvstore_free(kv);
}

typedef struct args {
  const char *mode, *store;
  int reps, steps;
  int64_t max_bytes, batch;
} args;

static args parse(int argc, char **argv) {
  args a = {.mode = "kvstore", .store = "dist_sync", .reps = 20,
            .steps = 50, .max_bytes = (int64_t)64 << 20, .batch = 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--mode") == 0) a.mode = v;
    if (strcmp(k, "--store") == 0) a.store = v;
    if (strcmp(k, "--reps") == 0) a.reps = atoi(v);
    if (strcmp(k, "--steps") == 0) a.steps = atoi(v);
    if (strcmp(k, "--max-bytes") == 0) a.max_bytes = atoll(v);
    if (strcmp(k, "--batch") == 0) a.batch = atoll(v);
  }
  if (a.reps < 1) a.reps = 1;
  if (a.steps < 1) a.steps = 1;
  if (a.batch < 1) a.batch = 1;
  if (a.max_bytes < MIN_BYTES) a.max_bytes = MIN_BYTES;
  return a;
}

int main(int argc, char **argv) {
  args a = parse(argc, argv);
  if (strcmp(a.mode, "step") == 0) {
    run_steps(a.store, a.batch, a.steps);
    return 0;
  }
  if (strcmp(a.mode, "mpi") == 0) {
    int rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run_sizes("mpi_allreduce", time_mpi, NULL, rank, a.reps, a.max_bytes);
    MPI_Finalize();
    return 0;
  }
  mxc_kvstore kv = NULL;
  int rank = 0;
  check(mxc_kvstore_create("dist_sync", &kv), "mxc_kvstore_create");
  check(mxc_kvstore_rank(kv, &rank), "rank");
  run_sizes("kvstore_allreduce", time_kvstore, kv, rank, a.reps, a.max_bytes);
  check(mxc_wait_all(), "wait_all");
  mxc_kvstore_free(kv);
  return 0;
}
