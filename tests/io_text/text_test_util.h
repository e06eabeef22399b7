// Helpers shared by the LibSVM and CSV reader tests: temporary files and
// the fault-injection walks.
#ifndef MXC_TESTS_IO_TEXT_TEXT_TEST_UTIL_H_
#define MXC_TESTS_IO_TEXT_TEXT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/file.h"
}

namespace tt {

inline std::string tmp_path(const std::string &name) {
  const char *d = std::getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

// Writes `content` byte for byte to a temporary file; returns its path.
inline std::string write_file(const std::string &name,
                              const std::string &content) {
  std::string path = tmp_path(name);
  std::ofstream f(path, std::ios::binary);
  f << content;
  return path;
}

inline std::string err() { return mxc__error_msg(); }

// Runs `attempt` (which opens, reads and frees a reader, returning its
// status and, on success, checking the result itself) with the n-th I/O
// operation failing, n = 1, 2, ... until one run sees no failure. Every
// failing run must report MXC_ERR_IO and leave no allocation behind.
inline void io_fault_walk(const std::function<int()> &attempt) {
  const int64_t live0 = mxc__alloc_live();
  for (int n = 1; n < 10000; ++n) {
    mxc__fault_io_arm(n);
    int rc = attempt();
    int fired = mxc__fault_io_fired();
    mxc__fault_io_arm(0);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after I/O failure " << n;
    if (!fired) {
      EXPECT_EQ(rc, MXC_OK) << err();
      EXPECT_GT(n, 2) << "expected several I/O operations";
      return;
    }
    EXPECT_EQ(rc, MXC_ERR_IO) << "I/O failure " << n << ": " << err();
  }
  FAIL() << "the read never completed";
}

// The same with the n-th allocation failing: MXC_ERR_OOM and no leak.
inline void alloc_fault_walk(const std::function<int()> &attempt) {
  const int64_t live0 = mxc__alloc_live();
  for (int n = 1; n < 10000; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = attempt();
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after allocation failure "
                                        << n;
    if (!fired) {
      EXPECT_EQ(rc, MXC_OK) << err();
      EXPECT_GT(n, 3) << "expected several allocations";
      return;
    }
    EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation failure " << n << ": " << err();
  }
  FAIL() << "the read never completed";
}

}  // namespace tt

#endif  // MXC_TESTS_IO_TEXT_TEXT_TEST_UTIL_H_
