// Shared by the lifetime tests: a watchdog that fails a test instead of
// letting a deadlock hang it, and a few fixtures.
#ifndef MXC_TESTS_LIFETIME_LIFETIME_UTIL_H_
#define MXC_TESTS_LIFETIME_LIFETIME_UTIL_H_

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "mxc/mxc.h"

// Aborts the process (failing the test with the name) if not destroyed
// within `seconds`: a hang is a failure, never a stuck CI job.
class Watchdog {
 public:
  Watchdog(const char *what, int seconds) : what_(what) {
    th_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> l(mu_);
      if (!cv_.wait_for(l, std::chrono::seconds(seconds),
                        [this] { return done_; })) {
        std::fprintf(stderr, "WATCHDOG: '%s' still running after %d s "
                     "(deadlock?)\n", what_.c_str(), seconds);
        std::abort();
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_all();
    th_.join();
  }

 private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread th_;
};

inline mxc_ndarray make_array(float fill, int64_t n = 4) {
  int64_t shape[1] = {n};
  mxc_ndarray a = nullptr;
  if (mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                         &a) != MXC_OK) {
    return nullptr;
  }
  std::string buf((size_t)n * sizeof(float), '\0');
  float *p = reinterpret_cast<float *>(&buf[0]);
  for (int64_t i = 0; i < n; ++i) p[i] = fill;
  mxc_ndarray_copy_from_host(a, p, buf.size());
  return a;
}

inline std::string tmp_path(const char *name) {
  const char *d = std::getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

#endif  // MXC_TESTS_LIFETIME_LIFETIME_UTIL_H_
