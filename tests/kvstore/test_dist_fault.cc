// A worker that dies or stops: the others must stop, with a message, in
// bounded time. fault_test.sh runs this under mpirun and checks the job's
// status and output. MXC_TEST_FAULT: "die" (rank 1 exits with status 7
// in the middle of training), "hang" (rank 1 stops calling the store:
// rank 0's watchdog ends the job after MXC_KVSTORE_TIMEOUT seconds).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mxc/mxc.h"

static int check(int rc, const char *what) {
  if (rc != MXC_OK) {
    std::fprintf(stderr, "%s: %s\n", what, mxc_last_error());
    std::exit(2);
  }
  return rc;
}

int main() {
  const char *fault = std::getenv("MXC_TEST_FAULT");
  mxc_kvstore kv = nullptr;
  check(mxc_kvstore_create("dist_sync", &kv), "create");
  int rank = 0;
  check(mxc_kvstore_rank(kv, &rank), "rank");
  int64_t n = 1000, key = 1;
  mxc_ndarray a = nullptr;
  check(mxc_ndarray_create(&n, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0, &a),
        "array");
  check(mxc_kvstore_init(kv, 1, &key, nullptr, &a), "init");
  for (int step = 0; step < 20; ++step) {
    if (rank == 1 && step == 5) {
      if (std::strcmp(fault, "die") == 0) _exit(7);
      sleep(1000);  // hang: never calls the store again
    }
    check(mxc_kvstore_pushpull(kv, 1, &key, nullptr, &a, &a, 0), "pushpull");
    check(mxc_ndarray_wait_to_read(a), "wait");
  }
  std::printf("rank %d finished all steps (the fault was not noticed)\n",
              rank);
  mxc_ndarray_free(a);
  mxc_kvstore_free(kv);
  return 0;
}
