// The kernels of backends/cuda/train2.h (bgrad.h, red.h, optim.h) called
// directly where the toolkit is installed: what a call answers before
// any device work (shapes refused, write mode NULL, nothing to do), what
// it answers without a usable device (here: no GPU), and that every row
// has a conformance case (tests/gpu/conformance_bwd.cc), which a GPU run
// compares. And nn3.h's: every row has a conformance case
// (conformance_nn3.cc), sort's row limit and the arity are answered
// before any device work.
#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
#include "backends/cuda/nn3.h"
#include "backends/cuda/train2.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"

namespace {

mxc__gpu_array Arr(float *p, std::vector<int64_t> d) {
  mxc__gpu_array a = {};
  a.ptr = p, a.ndim = (int)d.size(), a.size = 1;
  for (size_t i = 0; i < d.size(); ++i) a.dims[i] = d[i], a.size *= d[i];
  a.dtype = MXC_DTYPE_FLOAT32;
  return a;
}

bool HaveGpu() {
  int n = 0;
  return mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0;
}

// The host buffers stand for device memory: these calls must fail or
// return before touching them.
TEST(CudaBwdCall, BroadcastGradientShapesAreCheckedFirst) {
  float buf[24] = {0};
  mxc__gpu_array in[3] = {Arr(buf, {3, 4}), Arr(buf, {3, 4}), Arr(buf, {5})};
  mxc__gpu_array out[2] = {Arr(buf, {3, 4}), Arr(buf, {5})};
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_call c = {0, nullptr, in, 3, out, 2, req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_backward_broadcast_mul(&c, why, sizeof why),
            MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("do not broadcast"), std::string::npos)
      << why;
}

TEST(CudaBwdCall, BroadcastGradientWithBothNullDoesNothing) {
  float buf[12] = {1, 2, 3};
  mxc__gpu_array in[3] = {Arr(buf, {3, 4}), Arr(buf, {3, 4}), Arr(buf, {4})};
  mxc__gpu_array out[2] = {Arr(buf, {3, 4}), Arr(buf, {4})};
  int req[2] = {MXC__GPU_REQ_NULL, MXC__GPU_REQ_NULL};
  mxc__gpu_call c = {0, nullptr, in, 3, out, 2, req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_backward_broadcast_add(&c, why, sizeof why), MXC_OK)
      << why;
  EXPECT_EQ(buf[2], 3.f);
}

// The parsed parameters of op for axis (freed with mxc__free).
void *Axis(const char *op, const char *axis) {
  const char *k[] = {"axis"}, *v[] = {axis};
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find(op), k, v, 1, &param), MXC_OK);
  return param;
}

TEST(CudaBwdCall, ReductionShapesAreCheckedFirst) {
  float buf[24] = {0};
  void *p = Axis("max", "1");
  mxc__gpu_array in = Arr(buf, {2, 3, 4}), out = Arr(buf, {2, 3});
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, p, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_red_max(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("the output has 6 elements; expected 8"),
            std::string::npos)
      << why;
  mxc__free(p);
  c.param = p = Axis("prod", "3");
  EXPECT_EQ(mxc__cuda_red_prod(&c, why, sizeof why), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("axis 3"), std::string::npos) << why;
  mxc__free(p);
}

TEST(CudaBwdCall, ReductionGradientShapesAreCheckedFirst) {
  float buf[24] = {0};
  void *p = Axis("_backward_sum", "1");
  mxc__gpu_array in[2] = {Arr(buf, {2, 3}), Arr(buf, {2, 3, 4})};
  mxc__gpu_array out = Arr(buf, {2, 3, 4});
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, p, in, 2, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_red_backward_sum(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("input 0 (ograd) has 6 elements"),
            std::string::npos)
      << why;
  mxc__free(p);
}

TEST(CudaBwdCall, OptimizerInputsAreCheckedFirst) {
  float buf[8] = {0};
  mxc__gpu_array in[3] = {Arr(buf, {4}), Arr(buf, {4}), Arr(buf, {3})};
  mxc__gpu_array out = Arr(buf, {4});
  int req = MXC__GPU_REQ_WRITE;
  void *p = nullptr;
  const char *k[] = {"lr"}, *v[] = {"0.1"};
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("adagrad_update"), k, v, 1, &p),
            MXC_OK);
  mxc__gpu_call c = {0, p, in, 3, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_adagrad_update(&c, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("input 2 has 3 elements"), std::string::npos)
      << why;
  c.n_in = 2;
  EXPECT_EQ(mxc__cuda_adagrad_update(&c, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("expected 3"), std::string::npos) << why;
  mxc__free(p);
}

// Without a usable GPU (this machine) the call fails with the CUDA
// runtime's reason instead of crashing; on a GPU this test is moot.
TEST(CudaBwdCall, NoDeviceIsAnError) {
  if (HaveGpu()) GTEST_SKIP() << "a GPU is present";
  float buf[12] = {0};
  mxc__gpu_array in[3] = {Arr(buf, {3, 4}), Arr(buf, {3, 4}), Arr(buf, {4})};
  mxc__gpu_array out[2] = {Arr(buf, {3, 4}), Arr(buf, {4})};
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_ADD};
  mxc__gpu_call c = {0, nullptr, in, 3, out, 2, req, 0, {}};
  char why[256] = "";
  EXPECT_NE(mxc__cuda_backward_broadcast_div(&c, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("cudaSetDevice"), std::string::npos) << why;
}

TEST(CudaBwdCall, EveryRowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {MXC__CUDA_TRAIN2_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

// ---- backends/cuda/nn3.h (LayerNorm, Dropout, sorts, ...) ----

TEST(CudaBwdCall, EveryNn3RowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {MXC__CUDA_NN3_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

// Rows longer than the per-element rank handles are refused before any
// device work, naming the limit (so on any machine).
TEST(CudaBwdCall, SortRefusesRowsBeyondItsLimit) {
  float buf[4] = {0};
  mxc__gpu_array in = Arr(buf, {2, 5000}), out = Arr(buf, {2, 5000});
  int req = MXC__GPU_REQ_WRITE;
  void *param = nullptr;
  const char *k[] = {"axis"}, *v[] = {"-1"};
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("sort"), k, v, 1, &param),
            MXC_OK);
  mxc__gpu_call c = {0, param, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_sort(&c, why, sizeof why), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("up to 4096"), std::string::npos) << why;
  // The row's accepts declines the same call, so libmxc runs it on the
  // CPU; rows within the limit, and a query without shapes, are taken.
  why[0] = 0;
  EXPECT_EQ(mxc__cuda_sort_accepts(&c, why, sizeof why), 0);
  EXPECT_NE(std::string(why).find("up to 4096"), std::string::npos) << why;
  in = Arr(buf, {5000, 2}), out = Arr(buf, {5000, 2});
  EXPECT_EQ(mxc__cuda_sort_accepts(&c, why, sizeof why), 1) << why;
  in.ndim = out.ndim = -1;
  EXPECT_EQ(mxc__cuda_argsort_accepts(&c, why, sizeof why), 1) << why;
  mxc__free(param);
}

TEST(CudaBwdCall, Nn3KernelsCheckTheirArity) {
  float buf[4] = {0};
  mxc__gpu_array in = Arr(buf, {2, 2}), out = Arr(buf, {2, 2});
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, nullptr, &in, 1, &out, 1, &req, 0, {}};
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_layer_norm(&c, why, sizeof why),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("expected 3"), std::string::npos) << why;
}

}  // namespace
