// Helpers for the nn family's tests on top of tests/ops/op_test_util.h:
// invoking with hidden outputs (BatchNorm's mean/var, Dropout's mask),
// evaluating an operator's gradient with chosen head gradients, and a
// finite-difference check for operators whose gradient reads hidden
// outputs (mxct::grad_check passes the visible outputs only).
#ifndef MXC_TESTS_OPS_NN_NN_TEST_UTIL_H_
#define MXC_TESTS_OPS_NN_NN_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace nnt {

using mxct::Arr;
using mxct::Params;
using mxct::Shape;

// Invokes `name` with n_out output slots: the visible count, or the total
// one to receive hidden outputs too.
std::vector<Arr> invoke_n(const std::string &name,
                          const std::vector<const Arr *> &in, const Params &p,
                          int n_out, int *rc_out = nullptr);

// The operator's gradient (through its gradient function) at inputs `in`
// with forward outputs `out` (all of them, hidden included) and head
// gradients `ograd` (one per visible output). Element i is empty (h null)
// where input i gets no gradient.
std::vector<Arr> eval_grad(const std::string &name,
                           const std::vector<const Arr *> &in,
                           const std::vector<const Arr *> &out,
                           const std::vector<const Arr *> &ograd,
                           const Params &p, int *rc_out = nullptr);

// Central differences of L = sum_k ograd_k . out_k over the n_vis visible
// outputs, in float64, against eval_grad with all n_total outputs. With
// seed != 0 the random stream is re-seeded before every forward pass, so
// random operators draw the same numbers each time.
void grad_check_hidden(const std::string &name,
                       const std::vector<Shape> &shapes,
                       const std::vector<std::vector<double>> &values,
                       const Params &p, int n_total, int n_vis,
                       double eps = 1e-6, double rtol = 1e-4,
                       double atol = 1e-6, std::vector<int> skip = {},
                       uint64_t seed = 0);

// Scoped training mode for the calling thread.
struct Training {
  int prev = 0;
  explicit Training(int on) { mxc_set_training(on, &prev); }
  ~Training() { mxc_set_training(prev, nullptr); }
};

// Expects got ~ want element-wise within atol + rtol * |want|.
void expect_near(const std::vector<double> &got,
                 const std::vector<double> &want, double rtol, double atol,
                 const std::string &what);

}  // namespace nnt

#endif  // MXC_TESTS_OPS_NN_NN_TEST_UTIL_H_
