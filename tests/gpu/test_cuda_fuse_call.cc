// The real _fused_elemwise kernel row (backends/cuda/fuse.h) called
// directly, no GPU needed: what it answers before any device work.
// MXC_NVRTC_LIBRARY (one target per value, NVRTC is opened once per
// process) names a missing file (suite Missing) or a library that is not
// NVRTC (NotNvrtc, libm); suite Call runs with either.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "backends/cuda/fuse.h"
#include "backends/cuda/fuse_nvrtc.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"

namespace {

// Calls the row with program `text` over n_in inputs of 5 elements whose
// pointers are never dereferenced (every answer here comes first).
std::string CallFused(const char *text, int n_prog_in, int n_in, int *rc) {
  void *param = nullptr;
  std::string n = std::to_string(n_prog_in);
  const char *k[] = {"num_inputs", "program"}, *v[] = {n.c_str(), text};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find("_fused_elemwise"), k, v, 2,
                                 &param),
            MXC_OK)
      << mxc_last_error();
  float fake[5] = {0};
  mxc__gpu_array arr[4] = {};
  for (auto &a : arr) {
    a.ptr = fake;
    a.ndim = 1;
    a.dims[0] = a.size = 5;
    a.dtype = MXC_DTYPE_FLOAT32;
  }
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, arr, n_in, &arr[3], 1, &req, 0, {}};
  char why[1024] = "";
  *rc = mxc__cuda_fused(&call, why, sizeof why);
  mxc__free(param);
  return why;
}

void ExpectHas(const std::string &w, const char *part) {
  EXPECT_NE(w.find(part), std::string::npos) << "'" << part << "' in: " << w;
}

TEST(Call, AProgramWithoutMicroOpIsUnsupportedNamingTheOperator) {
  int rc = 0;
  std::string w = CallFused("exp(i0);tanh(r0)", 1, 1, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "program instruction 1 ('tanh') has no GPU micro-op");
  ExpectHas(w, "one instruction at a time");
}

TEST(Call, InputsOtherThanTheProgramsAreRefused) {
  int rc = 0;
  std::string w = CallFused("add(i0,i1)", 2, 1, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  ExpectHas(w, "the program takes 2");
}

// The row's accepts (accepts.h) on program `text` of one input: dev -1
// and no shapes, as the fusion pass asks, or gpu(0) with 5 elements, as
// invoke asks before the push. *why: the reason when it declines.
int AcceptsFused(const char *text, bool on_device, std::string *why) {
  void *param = nullptr;
  const char *k[] = {"num_inputs", "program"}, *v[] = {"1", text};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find("_fused_elemwise"), k, v, 2,
                                 &param),
            MXC_OK)
      << mxc_last_error();
  mxc__gpu_array arr[2] = {};
  for (auto &a : arr) {
    a.ndim = on_device ? 1 : -1;
    a.dims[0] = a.size = on_device ? 5 : -1;
    a.dtype = MXC_DTYPE_FLOAT32;
  }
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {on_device ? 0 : -1, param, arr, 1, &arr[1], 1, &req,
                        0, {}};
  char w[1024] = "";
  int ok = mxc__cuda_fused_accepts(&call, w, sizeof w);
  mxc__free(param);
  *why = w;
  return ok;
}

// Without shapes or a device the generator's plan alone answers: nothing
// is compiled (NVRTC is missing here and the program is still taken).
TEST(Call, AcceptsAnswersByThePlanForTheFusionPass) {
  std::string w;
  EXPECT_EQ(AcceptsFused("exp(i0);tanh(r0)", false, &w), 0);
  ExpectHas(w, "program instruction 1 ('tanh') has no GPU micro-op");
  EXPECT_EQ(AcceptsFused("exp(i0);relu(r0)", false, &w), 1) << w;
}

// Before a push on gpu(0) it compiles: without NVRTC it declines with the
// library's message, so that libmxc runs the program unfused.
TEST(Missing, AcceptsDeclinesWithTheLibrarysMessage) {
  std::string w;
  EXPECT_EQ(AcceptsFused("exp(i0)", true, &w), 0);
  ExpectHas(w, "the fused kernel cannot be built here: NVRTC");
  ExpectHas(w, "no-such-libnvrtc.so.13");
}

TEST(Missing, NamesTheLibraryAndWhatToInstall) {
  int rc = 0;
  std::string w = CallFused("exp(i0)", 1, 1, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "NVRTC (the CUDA run-time compiler");
  ExpectHas(w, "no-such-libnvrtc.so.13");
  ExpectHas(w, "pip's nvidia-cuda-nvrtc wheel");
  // Remembered: the same answer again, and from the compiler itself.
  std::string again = CallFused("exp(i0)", 1, 1, &rc);
  EXPECT_EQ(again, w);
  mxc__fuse_image img;
  char why[1024] = "";
  EXPECT_EQ(mxc__fuse_nvrtc_compile("x", 90, &img, why, sizeof why),
            MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(std::string(why), w);
}

TEST(NotNvrtc, NamesTheMissingSymbol) {
  int rc = 0;
  std::string w = CallFused("exp(i0)", 1, 1, &rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "has no nvrtcGetErrorString");
}

}  // namespace
