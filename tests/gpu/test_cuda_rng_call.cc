// The random kernels (backends/cuda/rng.h) called directly where the
// toolkit is installed: what a call answers before any device work (a
// slice too small for the output, an output type the CPU operator does not
// write, nothing to do), what it answers without a usable device (here: no
// GPU), and that every row has a conformance case (conformance_rng.cc),
// which a GPU run compares with the CPU.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "backends/cuda/rng.h"
#include "ops/random/sample_params.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"

namespace {

// The host buffer stands for device memory: these calls must fail or
// return before touching it.
struct Call {
  float buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  mxc__gpu_array out = {};
  int req = MXC__GPU_REQ_WRITE;
  mxc__uniform_param p = {};
  mxc__gpu_call c = {};
  Call() {
    out.ptr = buf, out.size = 8, out.ndim = 1, out.dims[0] = 8;
    out.dtype = MXC_DTYPE_FLOAT32;
    p.head.shape.ndim = -1, p.head.dtype = -1, p.low = 0, p.high = 1;
    c.param = &p, c.out = &out, c.n_out = 1, c.req = &req;
    c.rng.key[0] = 7, c.rng.block = 100, c.rng.n_blocks = 9;
  }
};

TEST(CudaRngCall, ASliceTooSmallIsRefusedFirst) {
  Call k;
  k.c.rng.n_blocks = 3;  // 12 words; 8 values need 16
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_random_uniform(&k.c, why, sizeof why), MXC_ERR_INTERNAL);
  EXPECT_NE(std::string(why).find("holds 12 words but 16"), std::string::npos)
      << why;
  EXPECT_EQ(k.buf[7], 8.f);
}

TEST(CudaRngCall, AnotherDtypeIsRefusedFirst) {
  Call k;
  k.out.dtype = MXC_DTYPE_FLOAT32;
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_random_randint(&k.c, why, sizeof why), MXC_ERR_DTYPE);
  EXPECT_NE(std::string(why).find("int32 or int64"), std::string::npos) << why;
}

TEST(CudaRngCall, NothingToDoNeedsNoDevice) {
  Call k;
  k.req = MXC__GPU_REQ_NULL;
  char why[256] = "";
  EXPECT_EQ(mxc__cuda_random_normal(&k.c, why, sizeof why), MXC_OK) << why;
  k.req = MXC__GPU_REQ_WRITE;
  k.out.size = 0, k.out.dims[0] = 0;
  EXPECT_EQ(mxc__cuda_random_exponential(&k.c, why, sizeof why), MXC_OK)
      << why;
  EXPECT_EQ(k.buf[0], 1.f);
}

// Without a usable GPU (this machine) the call fails with the CUDA
// runtime's reason instead of crashing; on a GPU this test is moot.
TEST(CudaRngCall, NoDeviceIsAnError) {
  int n = 0;
  if (mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0) {
    GTEST_SKIP() << "a GPU is present";
  }
  Call k;
  char why[256] = "";
  EXPECT_NE(mxc__cuda_random_uniform(&k.c, why, sizeof why), MXC_OK);
  EXPECT_NE(std::string(why).find("cudaSetDevice"), std::string::npos)
      << why;
}

TEST(CudaRngCall, EveryRowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {MXC__CUDA_RNG_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

}  // namespace
