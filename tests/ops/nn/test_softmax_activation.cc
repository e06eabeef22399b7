// SoftmaxActivation against a loop reference of MXNet's definition
// (instance: softmax over all axes but 0; channel: across axis 1 at each
// position), its gradient by finite differences, and bad input.
#include <cmath>

#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

// Softmax of groups (o, k) of n elements x[(o * n + j) * inner + k].
std::vector<double> softmax_ref(const std::vector<double> &x, int64_t outer,
                                int64_t n, int64_t inner) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, x[(o * n + j) * inner + k]);
      for (int64_t j = 0; j < n; ++j) s += std::exp(x[(o * n + j) * inner + k] - m);
      for (int64_t j = 0; j < n; ++j) {
        int64_t i = (o * n + j) * inner + k;
        y[i] = std::exp(x[i] - m) / s;
      }
    }
  return y;
}

TEST(SoftmaxActivation, InstanceAndChannel) {
  auto x = uniform(2 * 3 * 2 * 2, -3, 3, 51);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    double tol = dt == MXC_DTYPE_FLOAT64 ? 1e-14 : 1e-6;
    Arr in = make({2, 3, 2, 2}, x, dt);
    auto inst = invoke("SoftmaxActivation", {&in});  // default: instance
    ASSERT_EQ(inst.size(), 1u);
    EXPECT_EQ(inst[0].shape(), (Shape{2, 3, 2, 2}));
    expect_near(read(inst[0]), softmax_ref(read(in), 2, 12, 1), tol, tol,
                "instance");
    auto ch = invoke("SoftmaxActivation", {&in}, {{"mode", "channel"}});
    expect_near(read(ch[0]), softmax_ref(read(in), 2, 3, 4), tol, tol,
                "channel");
  }
  // 2-d data: channel mode is the softmax of each row.
  Arr m = make({2, 5}, uniform(10, -1, 1, 52));
  auto ch = invoke("SoftmaxActivation", {&m}, {{"mode", "channel"}});
  expect_near(read(ch[0]), softmax_ref(read(m), 2, 5, 1), 1e-6, 1e-7, "2-d");
  // Large inputs do not overflow.
  Arr big = make({1, 3}, {1000, 999, -1000});
  auto y = read(invoke("SoftmaxActivation", {&big})[0]);
  expect_near(y, softmax_ref({1000, 999, -1000}, 1, 3, 1), 1e-6, 1e-12,
              "large");
}

TEST(SoftmaxActivation, Gradient) {
  for (auto mode : {"instance", "channel"}) {
    grad_check("SoftmaxActivation", {{2, 3, 2}}, {uniform(12, -2, 2, 53)},
               {{"mode", mode}});
  }
}

TEST(SoftmaxActivationBad, ModeAndAxes) {
  Arr v = make({3}, {1, 2, 3});
  int rc = 0;
  invoke("SoftmaxActivation", {&v}, {{"mode", "channel"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("at least 2 axes"), std::string::npos) << err();
  invoke("SoftmaxActivation", {&v}, {{"mode", "spatial"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("mode"), std::string::npos) << err();
  Arr i = make({2, 2}, {1, 2, 3, 4}, MXC_DTYPE_INT32);
  invoke("SoftmaxActivation", {&i}, {}, &rc);
  EXPECT_NE(rc, MXC_OK);
}

}  // namespace
