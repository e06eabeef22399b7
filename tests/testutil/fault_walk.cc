#include "tests/testutil/fault_walk.h"

#include <gtest/gtest.h>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/file.h"
#include "core/base/handle.h"
}

namespace mxct {

void settle() {
  mxc_wait_all();  // also clears failures earlier runs left behind
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

namespace {

struct Injector {
  void (*arm)(int64_t n);
  int (*fired)();
  int expected_rc;
  const char *what;
};

void arm_alloc(int64_t n) { mxc__fault_alloc_arm(n, 0); }
int fired_alloc() { return mxc__fault_alloc_fired(); }
void arm_io(int64_t n) { mxc__fault_io_arm(n); }
int fired_io() { return mxc__fault_io_fired(); }

int walk(const std::function<int()> &scenario, int min_failures,
         int warmups, const Injector &inj) {
  settle();
  // Warm-up: lazily built tables (operator registry, thread pools) are
  // allocated once and would otherwise count as leaks.
  for (int i = 0; i < warmups; ++i) {
    EXPECT_EQ(scenario(), MXC_OK) << "warm-up: " << mxc_last_error();
  }
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 100000; ++n) {
    inj.arm(n);
    int rc = scenario();
    int fired = inj.fired();
    inj.arm(0);
    if (fired && rc != MXC_OK) {
      EXPECT_EQ(rc, inj.expected_rc)
          << inj.what << " failure " << n << ": " << mxc_last_error();
    }
    settle();
    EXPECT_EQ(mxc__alloc_live(), live0)
        << "leak after " << inj.what << " failure " << n;
    EXPECT_EQ(mxc__handle_live(), handles0)
        << "handle leak after " << inj.what << " failure " << n;
    if (!fired) {
      EXPECT_EQ(rc, MXC_OK) << "final run: " << mxc_last_error();
      break;
    }
    ++failures;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GE(failures, min_failures)
      << "expected at least " << min_failures << " " << inj.what
      << " operations in the scenario";
  return failures;
}

}  // namespace

int alloc_failure_walk(const std::function<int()> &scenario,
                       int min_failures, int warmups) {
  return walk(scenario, min_failures, warmups,
              Injector{arm_alloc, fired_alloc, MXC_ERR_OOM, "allocation"});
}

int io_failure_walk(const std::function<int()> &scenario, int min_failures,
                    int warmups) {
  return walk(scenario, min_failures, warmups,
              Injector{arm_io, fired_io, MXC_ERR_IO, "I/O"});
}

}  // namespace mxct
