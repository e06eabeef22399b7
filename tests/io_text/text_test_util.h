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
#include "tests/testutil/fault_walk.h"

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

// The shared failure walks (tests/testutil/fault_walk.h): `attempt`
// opens, reads and frees a reader, returning its status and, on success,
// checking the result itself.
inline void io_fault_walk(const std::function<int()> &attempt) {
  mxct::io_failure_walk(attempt, 3);
}
inline void alloc_fault_walk(const std::function<int()> &attempt) {
  mxct::alloc_failure_walk(attempt, 4);
}

}  // namespace tt

#endif  // MXC_TESTS_IO_TEXT_TEXT_TEST_UTIL_H_
