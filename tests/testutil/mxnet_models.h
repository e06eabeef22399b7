// The shared directory of real files written by Apache MXNet
// (../shared/mxnet-models), found the same way by every test that uses
// it: $MXC_MXNET_MODELS, else shared/mxnet-models beside or above the
// source tree, located from the real path of one of the test's runfiles.
// "" when absent (a user's machine): the tests then skip with a message.
#ifndef MXC_TESTS_TESTUTIL_MXNET_MODELS_H_
#define MXC_TESTS_TESTUTIL_MXNET_MODELS_H_

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace mxct {

// runfile: a path, relative to the test's working directory, of a file
// of the source tree under scripts/ that the test lists in its data.
inline std::string mxnet_models_dir(const char *runfile) {
  const char *env = getenv("MXC_MXNET_MODELS");
  if (env && *env) return env;
  char real[PATH_MAX];
  if (!realpath(runfile, real)) return "";
  std::string root = real;
  root = root.substr(0, root.rfind("/scripts/"));
  for (const char *up : {"/../shared", "/../../shared", "/shared"}) {
    std::string d = root + up + "/mxnet-models";
    if (access((d + "/README.md").c_str(), R_OK) == 0) return d;
  }
  return "";
}

}  // namespace mxct

#endif  // MXC_TESTS_TESTUTIL_MXNET_MODELS_H_
