// Reader of the golden cases written by make_golden.py (format in its
// docstring) and a runner that invokes each case's operator in float32
// and float64 and compares every visible output.
#ifndef MXC_TESTS_OPS_VISION_GOLDEN_H_
#define MXC_TESTS_OPS_VISION_GOLDEN_H_

#include <string>
#include <utility>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace vist {

struct Tensor {
  mxct::Shape shape;
  std::vector<double> v;
};

struct Case {
  std::string name, op;
  mxct::Params params;
  std::vector<Tensor> in, out;
};

// The vision family's golden file (a runfiles path).
extern const char *const kVisionGolden;

// All cases of a golden file (a test failure and empty when unreadable);
// read once per file.
const std::vector<Case> &golden(const std::string &file);

// The cases of one operator; fails the test when there are none, so a
// broken script cannot make a test pass vacuously.
std::vector<Case> cases_of(const std::string &op,
                           const std::string &file = kVisionGolden);

// Invokes c in `dtype` and expects every output within tolerance.
void run_case(const Case &c, int dtype, double rtol, double atol);

}  // namespace vist

#endif  // MXC_TESTS_OPS_VISION_GOLDEN_H_
