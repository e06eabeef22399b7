// Backends as plug-ins (core/op/backend.h): kernels attached by operator
// name, chosen per call by device, priority and a supports query, with
// the reference CPU kernel behind them; and the query graphs use to see
// what a device supports. The test backends (test_backends.c) register
// from a constructor, as real backends will.
#include "tests/backend/test_backends.h"
#include "tests/ops/op_test_util.h"

using namespace mxct;

TEST(Backend, TestBackendsRegistered) { EXPECT_EQ(tb_register_rc(), MXC_OK); }

TEST(Backend, KernelsAreListedInPriorityOrder) {
  EXPECT_STREQ(tb_kernel_backend("elemwise_add", 0), "testcpu");
  EXPECT_STREQ(tb_kernel_backend("elemwise_add", 1), "cpu");
  EXPECT_EQ(tb_kernel_backend("elemwise_add", 2), nullptr);
  EXPECT_STREQ(tb_kernel_backend("relu", 0), "testcpu");
  EXPECT_STREQ(tb_kernel_backend("relu", 1), "testgpu");
  EXPECT_STREQ(tb_kernel_backend("relu", 2), "cpu");
  EXPECT_STREQ(tb_kernel_backend("exp", 0), "cpu");
  EXPECT_EQ(tb_kernel_backend("exp", 1), nullptr);
}

TEST(Backend, SupportedFloat32CallsRunTheBackendKernel) {
  std::vector<double> a = uniform(24, -2, 2, 3), b = uniform(24, -2, 2, 4);
  Arr x = make({4, 6}, a), y = make({4, 6}, b);
  int before = tb_add_calls();
  auto out = invoke("elemwise_add", {&x, &y});
  ASSERT_EQ(out.size(), 1u) << err();
  std::vector<double> got = read(out[0]);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(tb_add_calls(), before + 1);
  for (int i = 0; i < 24; ++i) {
    EXPECT_FLOAT_EQ(got[i], (float)a[i] + (float)b[i]) << i;
  }
}

TEST(Backend, UnsupportedDtypeFallsBackToTheReferenceKernel) {
  std::vector<double> a = uniform(10, -2, 2, 5), b = uniform(10, -2, 2, 6);
  Arr x = make({10}, a, MXC_DTYPE_FLOAT64), y = make({10}, b, MXC_DTYPE_FLOAT64);
  int before = tb_add_calls();
  auto out = invoke("elemwise_add", {&x, &y});
  ASSERT_EQ(out.size(), 1u) << err();
  std::vector<double> got = read(out[0]);
  EXPECT_EQ(tb_add_calls(), before);  // float64: the test kernel declines
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(got[i], a[i] + b[i]);
}

TEST(Backend, ReluRunsTheHighestPriorityCpuKernel) {
  std::vector<double> a = uniform(12, -1, 1, 7);
  Arr x = make({3, 4}, a);
  int before = tb_relu_calls();
  auto out = invoke("relu", {&x});
  ASSERT_EQ(out.size(), 1u) << err();
  std::vector<double> got = read(out[0]);
  EXPECT_EQ(tb_relu_calls(), before + 1);
  for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(got[i], a[i] > 0 ? (float)a[i] : 0);
}

TEST(Backend, ExecutorNodesRunTheSelectedKernel) {
  // relu(a + b) bound without fusion: each node is one invoke, so the
  // graph path picks kernels exactly as imperative calls do.
  mxc_symbol a = nullptr, b = nullptr, sum = nullptr, act = nullptr;
  mxc_op add_op = nullptr, relu_op = nullptr;
  ASSERT_EQ(mxc_symbol_variable("a", &a), MXC_OK);
  ASSERT_EQ(mxc_symbol_variable("b", &b), MXC_OK);
  ASSERT_EQ(mxc_op_find("elemwise_add", &add_op), MXC_OK);
  ASSERT_EQ(mxc_op_find("relu", &relu_op), MXC_OK);
  mxc_symbol ab[2] = {a, b};
  ASSERT_EQ(mxc_symbol_create(add_op, nullptr, nullptr, 0, "sum", nullptr,
                              ab, 2, &sum),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_symbol_create(relu_op, nullptr, nullptr, 0, "act", nullptr,
                              &sum, 1, &act),
            MXC_OK)
      << err();
  std::vector<double> va = uniform(20, -2, 2, 8), vb = uniform(20, -2, 2, 9);
  Arr xa = make({4, 5}, va), xb = make({4, 5}, vb);
  mxc_ndarray args[2] = {xa.h, xb.h};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(act, MXC_DEVICE_CPU, 0, 2, args, nullptr,
                              nullptr, 0, nullptr, MXC_BIND_NO_FUSION, &ex),
            MXC_OK)
      << err();
  int adds = tb_add_calls(), relus = tb_relu_calls();
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  mxc_ndarray out_h = nullptr;
  ASSERT_EQ(mxc_executor_output(ex, 0, &out_h), MXC_OK);
  Arr out(out_h);
  std::vector<double> got = read(out);
  EXPECT_EQ(tb_add_calls(), adds + 1);
  EXPECT_EQ(tb_relu_calls(), relus + 1);
  for (int i = 0; i < 20; ++i) {
    float s = (float)va[i] + (float)vb[i];
    EXPECT_FLOAT_EQ(got[i], s > 0 ? s : 0) << i;
  }
  mxc_executor_free(ex);
  for (mxc_symbol s : {a, b, sum, act}) mxc_symbol_free(s);
}

TEST(Backend, SupportsQueryPerDevice) {
  // CPU: the reference kernels take everything, sparse included (their
  // storage kernels or the storage fallback).
  EXPECT_EQ(tb_supported("exp", MXC_DEVICE_CPU, MXC_DTYPE_FLOAT64, 0), 1);
  EXPECT_EQ(tb_supported("exp", MXC_DEVICE_CPU, MXC_DTYPE_FLOAT32,
                         MXC_STYPE_CSR), 1);
  // GPU: only what a GPU backend attached.
  EXPECT_EQ(tb_supported("relu", MXC_DEVICE_GPU, MXC_DTYPE_FLOAT32, 0), 1);
  EXPECT_EQ(tb_supported("relu", MXC_DEVICE_GPU, MXC_DTYPE_FLOAT32,
                         MXC_STYPE_ROW_SPARSE), 0);  // dense-only kernel
  EXPECT_EQ(tb_supported("exp", MXC_DEVICE_GPU, MXC_DTYPE_FLOAT32, 0), 0);
}

TEST(Backend, EveryBackendKernelMatchesTheReference) {
  double worst = -1;
  int n = tb_compare_all(&worst);
  EXPECT_EQ(n, 2) << "worst difference " << worst;  // add and relu
  EXPECT_EQ(worst, 0.0);
}

TEST(Backend, LateRegistrationIsRefused) {
  ASSERT_NE(tb_kernel_backend("exp", 0), nullptr);  // builds the registry
  EXPECT_EQ(tb_register_late(), MXC_ERR_INTERNAL);
  EXPECT_NE(std::string(mxc_last_error()).find("after the operator registry"),
            std::string::npos)
      << mxc_last_error();
}

// Channels-last values (core/op/format.h): both directions of the
// conversion for 3 to 5 axes, including extents of 1, against index
// arithmetic written in the test.
TEST(ValueFormat, ConversionsMatchIndexArithmetic) {
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 3, 5}, {1, 4, 2, 3}, {3, 16, 7, 7}, {2, 2, 3, 1, 4}, {1, 1, 5, 5}};
  for (const auto &d : shapes) {
    EXPECT_EQ(tb_fmt_mismatches((int)d.size(), d.data()), 0)
        << d.size() << " axes, C=" << d[1];
  }
}

// A plain-only kernel run through mxc__fmt_compute sees plain copies, and
// its result (accumulated into the output, req add) lands channels-last.
TEST(ValueFormat, PlainKernelsRunOnPlainCopies) {
  EXPECT_EQ(tb_fmt_compute_mismatches(), 0);
}

// bfloat16 channels-last (MXC_BIND_BF16's values): placement, and rounding
// to nearest even.
TEST(ValueFormat, Bfloat16ConversionsPlaceAndRound) {
  EXPECT_EQ(tb_fmt_bf16_mismatches(), 0);
}
