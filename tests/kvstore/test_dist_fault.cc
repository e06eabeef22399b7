// A worker that dies or stops: the others must stop, with a message, in
// bounded time. fault_test.sh runs this under mpirun and checks the job's
// status and output. MXC_TEST_FAULT: "die" (rank 1 exits with status 7
// in the middle of training), "hang" (rank 1 stops calling the store:
// rank 0's watchdog ends the job after MXC_KVSTORE_TIMEOUT seconds),
// "oom" (rank 1's fusion buffer cannot be allocated: its pushpull returns
// MXC_ERR_OOM, which it reports before ending as a program would, freeing
// its store; rank 0, waiting for the collective, ends the job through
// its watchdog); "idle" (no fault: every rank frees its store, which
// finalizes MPI, then lives on past MXC_KVSTORE_TIMEOUT, which must not
// make the watchdog end the process).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
}

static int check(int rc, const char *what) {
  if (rc != MXC_OK) {
    std::fprintf(stderr, "%s: %s\n", what, mxc_last_error());
    std::exit(2);
  }
  return rc;
}

// Fails rank 1's pushpull at its n-th allocation, n = 1, 2, ..., until
// the fusion buffer's fails (those before it fail the call too, pushing
// nothing); then reports and ends.
static int oom_and_end(mxc_kvstore kv, const int64_t *keys, mxc_ndarray *a) {
  for (int64_t n = 1; n < 1000; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = mxc_kvstore_pushpull(kv, 2, keys, nullptr, a, a, 0);
    mxc__fault_alloc_arm(0, 0);
    if (rc == MXC_OK) break;
    if (std::strstr(mxc_last_error(), "fusion buffer")) {
      std::fprintf(stderr, "rank 1: pushpull failed with %d: %s\n", rc,
                   mxc_last_error());
      for (int i = 0; i < 2; ++i) mxc_ndarray_free(a[i]);
      mxc_kvstore_free(kv);
      return 5;
    }
  }
  std::fprintf(stderr, "rank 1: no failure reached the fusion buffer\n");
  return 6;
}

int main() {
  const char *fault = std::getenv("MXC_TEST_FAULT");
  mxc_kvstore kv = nullptr;
  check(mxc_kvstore_create("dist_sync", &kv), "create");
  int rank = 0;
  check(mxc_kvstore_rank(kv, &rank), "rank");
  int64_t n = 1000, keys[2] = {1, 2};
  mxc_ndarray a[2] = {nullptr, nullptr};
  for (mxc_ndarray &x : a) {
    check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                             &x),
          "array");
  }
  check(mxc_kvstore_init(kv, 2, keys, nullptr, a), "init");
  for (int step = 0; step < 20; ++step) {
    if (rank == 1 && step == 5 && std::strcmp(fault, "idle") != 0) {
      if (std::strcmp(fault, "die") == 0) _exit(7);
      if (std::strcmp(fault, "oom") == 0) return oom_and_end(kv, keys, a);
      sleep(1000);  // hang: never calls the store again
    }
    // Two keys of 4000 bytes: one fused collective.
    check(mxc_kvstore_pushpull(kv, 2, keys, nullptr, a, a, 0), "pushpull");
    check(mxc_ndarray_wait_to_read(a[0]), "wait");
  }
  for (mxc_ndarray x : a) mxc_ndarray_free(x);
  mxc_kvstore_free(kv);
  if (std::strcmp(fault, "idle") == 0) {
    // Past MXC_KVSTORE_TIMEOUT with MPI finalized: nothing may abort.
    sleep(6);
    std::printf("rank %d stayed alive after freeing its store\n", rank);
    return 0;
  }
  std::printf("rank %d finished all steps (the fault was not noticed)\n",
              rank);
  return 0;
}
