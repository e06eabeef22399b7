// The real cuDNN kernels (backends/cuda/dnn.h) called directly, on a
// machine without a GPU: what a call answers before it can reach the
// device. A call the plan refuses fails with the plan's reason and never
// opens cuDNN or the runtime; a valid call fails with the reason the
// machine lacks: cuDNN missing (MXC_ERR_UNSUPPORTED naming the library
// and what to install) or, with cuDNN installed, the CUDA runtime's
// error (no driver or no device here). On a GPU the conformance suite
// covers the rest.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "backends/cuda/dnn.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"

namespace {

struct Conv {
  void *param = nullptr;
  float fake[1] = {0};  // never dereferenced: no call reaches the device
  mxc__gpu_array in[3] = {}, out[1] = {};
  int req[1] = {MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {};
  Conv() {
    const char *k[] = {"kernel", "num_filter"}, *v[] = {"(3,3)", "2"};
    EXPECT_EQ(mxc__op_parse_params(mxc__op_find("Convolution"), k, v, 2,
                                   &param),
              MXC_OK);
    Set(&in[0], {1, 3, 5, 5});
    Set(&in[1], {2, 3, 3, 3});
    Set(&in[2], {2});
    Set(&out[0], {1, 2, 3, 3});
    call = {0, param, in, 3, out, 1, req, 0, {}};
  }
  ~Conv() { mxc__free(param); }
  void Set(mxc__gpu_array *a, std::initializer_list<int64_t> d) {
    a->ptr = fake;
    a->ndim = (int)d.size();
    a->size = 1;
    a->dtype = MXC_DTYPE_FLOAT32;
    int i = 0;
    for (int64_t x : d) a->dims[i++] = x, a->size *= x;
  }
};

TEST(CudaDnnCall, ARefusedPlanNeverReachesTheDevice) {
  Conv c;
  c.out[0].dims[3] = 4;  // not what kernel (3,3) gives
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_conv_forward(&c.call, why, sizeof why), MXC_ERR_SHAPE);
  EXPECT_NE(std::string(why).find("does not match"), std::string::npos)
      << why;
}

TEST(CudaDnnCall, AValidCallSaysWhatTheMachineLacks) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    // The call's arrays are host memory: never hand them to a device.
    GTEST_SKIP() << "a GPU is visible: the conformance suite covers it";
  }
  Conv c;
  char why[512] = "";
  int rc = mxc__cuda_conv_forward(&c.call, why, sizeof why);
  ASSERT_NE(rc, MXC_OK) << "no GPU here, yet the call succeeded";
  std::string w = why;
  void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
    EXPECT_NE(w.find("cuDNN 9 could not be loaded"), std::string::npos) << w;
    EXPECT_NE(w.find("install cuDNN 9 for CUDA 13"), std::string::npos) << w;
  } else {
    dlclose(h);
    EXPECT_NE(w.find("cudaSetDevice"), std::string::npos) << w;
  }
  std::printf("CudaDnnCall: Convolution without a GPU: %s\n", why);
}

TEST(CudaDnnCall, NothingToWriteIsNotACall) {
  Conv c;
  c.req[0] = MXC__GPU_REQ_NULL;
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_conv_forward(&c.call, why, sizeof why), MXC_OK) << why;
}

TEST(CudaDnnCall, PoolingCuDnnCannotMatchIsRefusedBeforeTheDevice) {
  void *param = nullptr;
  const char *k[] = {"kernel", "pool_type"}, *v[] = {"(2,2)", "sum"};
  ASSERT_EQ(mxc__op_parse_params(mxc__op_find("Pooling"), k, v, 2, &param),
            MXC_OK);
  float fake[1] = {0};
  mxc__gpu_array in = {}, out = {};
  in.ptr = out.ptr = fake;
  in.ndim = out.ndim = 4;
  int64_t di[4] = {1, 1, 4, 4}, dout[4] = {1, 1, 3, 3};
  for (int i = 0; i < 4; ++i) in.dims[i] = di[i], out.dims[i] = dout[i];
  in.size = 16, out.size = 9;
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, &in, 1, &out, 1, &req, 0, {}};
  char why[512] = "";
  EXPECT_EQ(mxc__cuda_pool_forward(&call, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(why).find("sum or lp"), std::string::npos) << why;
  mxc__free(param);
}

// Every cuDNN row of the kernel table has a conformance case of its own
// (tests/gpu/conformance_dnn.cc): the generic same-shape case cannot call
// these operators, so a row without one would fail only on a GPU.
TEST(CudaDnnCall, EveryRowHasAConformanceCase) {
  const mxc__gpu_kernel rows[] = {MXC__CUDA_DNN_ROWS};
  for (const mxc__gpu_kernel &k : rows) {
    EXPECT_EQ(mxct::CaseRunners().count(k.op), 1u) << k.op;
  }
}

}  // namespace
