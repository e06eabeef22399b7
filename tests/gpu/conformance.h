// Conformance cases of their own (test_gpu_conformance.cc): an operator
// the generic same-shape case cannot call (parameters, inputs of other
// shapes, several outputs) registers a case under its name from its own
// file, and the suite runs that instead of the generic one.
#ifndef MXC_TESTS_GPU_CONFORMANCE_H_
#define MXC_TESTS_GPU_CONFORMANCE_H_

#include <functional>
#include <map>
#include <random>
#include <string>

namespace mxct {

using ConformanceCase = std::function<void(std::mt19937 *)>;

// Operator name -> its case, run by the suite's loop in place of the
// generic one (defined in test_gpu_conformance.cc).
std::map<std::string, ConformanceCase> &CaseRunners();

// A static one registers a case: `static RegisterCase r("op", fn);`.
struct RegisterCase {
  RegisterCase(const char *op, ConformanceCase f) { CaseRunners()[op] = f; }
};

}  // namespace mxct

#endif  // MXC_TESTS_GPU_CONFORMANCE_H_
