// The training-step kernels (backends/cuda/train.h) called directly where
// the toolkit is installed: what a call answers before any device work
// (shape mismatch, write mode NULL), what it answers without a usable
// device (here: no GPU), and that every row of theirs has a conformance
// case (tests/gpu/conformance_train.cc), which a GPU run compares; the
// same for SoftmaxOutput and the reshaping copies (backends/cuda/loss.h,
// conformance_loss.cc) and the math and copy rows (backends/cuda/
// math_rows.h, conformance_math.cc).
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "backends/cuda/bcast.h"
#include "backends/cuda/loss.h"
#include "backends/cuda/copy_plan.h"
#include "backends/cuda/math_rows.h"
#include "backends/cuda/sum.h"
#include "backends/cuda/train.h"
#include "ops/nn/act_params.h"
#include "ops/random/optimizer_params.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"

namespace {

mxc__gpu_array Arr(float *p, int64_t n) {
  mxc__gpu_array a = {};
  a.ptr = p, a.size = n, a.ndim = 1, a.dims[0] = n;
  a.dtype = MXC_DTYPE_FLOAT32;
  return a;
}

// The host buffers stand for device memory: these calls must fail or
// return before touching them.
TEST(CudaTrainCall, ShapeMismatchIsRefusedFirst) {
  float buf[8] = {0};
  mxc__gpu_array in[2] = {Arr(buf, 4), Arr(buf + 4, 3)};
  mxc__gpu_array out = Arr(buf, 4);
  int req = MXC__GPU_REQ_WRITE;
  mxc__opt_param p = {};
  p.lr = 0.1, p.clip_gradient = -1;
  mxc__gpu_call c = {0, &p, in, 2, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_sgd_update(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("input 1 has 3 elements"),
            std::string::npos)
      << why;
}

TEST(CudaTrainCall, BroadcastShapesAreCheckedFirst) {
  float buf[12] = {0};
  mxc__gpu_array in[2] = {Arr(buf, 4), Arr(buf, 5)};
  mxc__gpu_array out = Arr(buf, 4);
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, nullptr, in, 2, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_broadcast_mul(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("do not broadcast"), std::string::npos)
      << why;
}

TEST(CudaTrainCall, WriteModeNullDoesNothing) {
  float buf[4] = {1, 2, 3, 4};
  mxc__gpu_array in = Arr(buf, 4), out = Arr(buf, 4);
  int req = MXC__GPU_REQ_NULL;
  mxc__act_param p = {MXC__ACT_TANH};
  mxc__gpu_call c = {0, &p, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_activation(&c, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(buf[3], 4.f);
}

// Without a usable GPU (this machine) the call fails with the CUDA
// runtime's reason instead of crashing; on a GPU this test is moot.
TEST(CudaTrainCall, NoDeviceIsAnError) {
  int n = 0;
  if (mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0) {
    GTEST_SKIP() << "a GPU is present";
  }
  float buf[4] = {1, 2, 3, 4};
  mxc__gpu_array in = Arr(buf, 4), out = Arr(buf, 4);
  int req = MXC__GPU_REQ_WRITE;
  mxc__act_param p = {MXC__ACT_RELU};
  mxc__gpu_call c = {0, &p, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_NE(mxc__cuda_activation(&c, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("cudaSetDevice"), std::string::npos)
      << why;
}

// SoftmaxOutput's gradient with normalization 'valid' and a reshaping
// copy between different sizes are refused before any device call; a
// valid copy without a GPU answers the runtime's reason.
TEST(CudaTrainCall, LossKernelsRefuseFirst) {
  const char *k = "normalization", *v = "valid";
  void *param = nullptr;
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("_backward_SoftmaxOutput"), &k,
                                 &v, 1, &param),
            MXC_OK);
  float buf[16] = {0};
  mxc__gpu_array in[2] = {Arr(buf, 12), Arr(buf + 12, 4)};
  in[0].ndim = 2, in[0].dims[0] = 4, in[0].dims[1] = 3;
  mxc__gpu_array out = in[0];
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, param, in, 2, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_softmax_output_bwd(&c, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("'valid'"), std::string::npos) << why;
  mxc__free(param);
  mxc__gpu_array small = Arr(buf, 5);
  mxc__gpu_call copy = {0, nullptr, in, 2, &small, 1, &req, 0, {}};
  EXPECT_EQ(mxc__cuda_reshape_copy(&copy, why, sizeof why), MXC_ERR_SHAPE);
  int n = 0;
  if (mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0) return;
  copy.out = &out;
  EXPECT_NE(mxc__cuda_reshape_copy(&copy, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("cudaSetDevice"), std::string::npos)
      << why;
}

// The math and copy kernels (math_rows.h) refuse a call whose arrays do
// not fit before any device work; write mode NULL does nothing; a valid
// call without a GPU answers the runtime's reason.
TEST(CudaMathCall, RefusesFirstAndSaysWhy) {
  float buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  mxc__gpu_array in[3] = {Arr(buf, 4), Arr(buf, 4), Arr(buf, 3)};
  mxc__gpu_array out = Arr(buf + 4, 4);
  int req = MXC__GPU_REQ_WRITE;
  char why[256] = "";
  mxc__gpu_call c = {0, nullptr, in, 3, &out, 1, &req, 0, {}};
  EXPECT_EQ(mxc__cuda_unary_bwd_tanh(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("input 2 has 3 elements"),
            std::string::npos)
      << why;
  mxc__gpu_call sc = {0, nullptr, in, 1, &out, 1, &req, 0, {}};
  EXPECT_EQ(mxc__cuda_bin_sc_add(&sc, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  mxc__gpu_array t_in = Arr(buf, 6), t_out = Arr(buf, 6);
  t_in.ndim = 2, t_in.dims[0] = 2, t_in.dims[1] = 3;
  t_out.ndim = 2, t_out.dims[0] = 2, t_out.dims[1] = 3;  // not (3, 2)
  mxc__cp_transpose_param tp = {};
  mxc__gpu_call tc = {0, &tp, &t_in, 1, &t_out, 1, &req, 0, {}};
  EXPECT_EQ(mxc__cuda_transpose(&tc, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("transpose: output axis 0"),
            std::string::npos)
      << why;
  const char *lk = "act_type", *lv = "prelu";
  void *lp = nullptr;
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("LeakyReLU"), &lk, &lv, 1, &lp),
            MXC_OK);
  mxc__gpu_call pc = {0, lp, in, 2, &out, 1, &req, 0, {}};
  EXPECT_EQ(mxc__cuda_leaky_relu(&pc, why, sizeof why), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("prelu has no GPU kernel"),
            std::string::npos)
      << why;
  mxc__free(lp);
  int null_req = MXC__GPU_REQ_NULL;
  mxc__gpu_call nc = {0, nullptr, in, 1, &out, 1, &null_req, 0, {}};
  EXPECT_EQ(mxc__cuda_unary_exp(&nc, why, sizeof why), MXC_OK) << why;
  EXPECT_EQ(buf[4], 5.f);
  int n = 0;
  if (mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0) return;
  mxc__gpu_call ok = {0, nullptr, in, 1, &out, 1, &req, 0, {}};
  EXPECT_NE(mxc__cuda_unary_exp(&ok, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("cudaSetDevice"), std::string::npos)
      << why;
}

TEST(CudaTrainCall, EveryRowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {
      MXC__CUDA_TRAIN_ROWS MXC__CUDA_BCAST_ROWS MXC__CUDA_SUM_ROWS
          MXC__CUDA_LOSS_ROWS MXC__CUDA_MATH_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

}  // namespace
