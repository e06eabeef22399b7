// Each way cuDNN can be unavailable to the real kernels, through a direct
// call (no GPU needed: the library is opened before the device is
// touched). One target per way (the library is opened once per process):
// MXC_CUDNN_LIBRARY names a missing file, a library that is not cuDNN
// (libm), or a fake cuDNN 8 (fake_cudnn.c). Each suite is selected by
// --gtest_filter.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "backends/cuda/dnn.h"
#include "backends/cuda/dnn_rnn.h"
#include "core/base/alloc.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"

namespace {

// A valid 2-D convolution call whose pointers are never dereferenced.
std::string CallConvolution(int *rc) {
  void *param = nullptr;
  const char *k[] = {"kernel", "num_filter"}, *v[] = {"(3,3)", "2"};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find("Convolution"), k, v, 2,
                                 &param),
            MXC_OK);
  float fake[1] = {0};
  mxc__gpu_array in[3] = {}, out = {};
  const int64_t dims[4][4] = {{1, 3, 5, 5}, {2, 3, 3, 3}, {2}, {1, 2, 3, 3}};
  const int nd[4] = {4, 4, 1, 4};
  mxc__gpu_array *arr[4] = {&in[0], &in[1], &in[2], &out};
  for (int a = 0; a < 4; ++a) {
    arr[a]->ptr = fake;
    arr[a]->ndim = nd[a];
    arr[a]->size = 1;
    arr[a]->dtype = MXC_DTYPE_FLOAT32;
    for (int d = 0; d < nd[a]; ++d) {
      arr[a]->dims[d] = dims[a][d], arr[a]->size *= dims[a][d];
    }
  }
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call call = {0, param, in, 3, &out, 1, &req, 0, {}};
  char why[1024] = "";
  *rc = mxc__cuda_conv_forward(&call, why, sizeof why);
  mxc__free(param);
  return why;
}

// A valid RNN call (tanh, 1 layer, T 2, N 1, I 3, H 2): the RNN kernels
// open cuDNN the same way and answer the same.
std::string CallRnn(int *rc) {
  void *param = nullptr;
  const char *k[] = {"mode", "state_size", "num_layers"};
  const char *v[] = {"rnn_tanh", "2", "1"};
  EXPECT_EQ(mxc__op_parse_params(mxc__op_find("RNN"), k, v, 3, &param),
            MXC_OK);
  float fake[1] = {0};
  mxc__gpu_array in[3] = {}, out[2] = {};
  const int64_t dims[5][3] = {{2, 1, 3}, {14}, {1, 1, 2}, {2, 1, 2}, {1}};
  const int nd[5] = {3, 1, 3, 3, 1};
  mxc__gpu_array *arr[5] = {&in[0], &in[1], &in[2], &out[0], &out[1]};
  for (int a = 0; a < 5; ++a) {
    arr[a]->ptr = fake;
    arr[a]->ndim = nd[a];
    arr[a]->size = 1;
    arr[a]->dtype = MXC_DTYPE_FLOAT32;
    for (int d = 0; d < nd[a]; ++d) {
      arr[a]->dims[d] = dims[a][d], arr[a]->size *= dims[a][d];
    }
  }
  int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
  mxc__gpu_call call = {0, param, in, 3, out, 2, req, 0, {}};
  char why[1024] = "";
  *rc = mxc__cuda_rnn_forward(&call, why, sizeof why);
  mxc__free(param);
  return why;
}

void ExpectSameForRnn() {
  int rc = 0, rc_rnn = 0;
  std::string w = CallConvolution(&rc);
  EXPECT_EQ(CallRnn(&rc_rnn), w);
  EXPECT_EQ(rc_rnn, rc);
}

void ExpectHas(const std::string &w, const char *part) {
  EXPECT_NE(w.find(part), std::string::npos) << "'" << part << "' in: " << w;
}

TEST(Missing, NamesTheLibraryAndWhatToInstall) {
  int rc = 0;
  std::string w = CallConvolution(&rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "cuDNN 9 could not be loaded");
  ExpectHas(w, "no-such-libcudnn.so.9");
  ExpectHas(w, "install cuDNN 9 for CUDA 13");
  // Remembered: the same answer again.
  int rc2 = 0;
  EXPECT_EQ(CallConvolution(&rc2), w);
  EXPECT_EQ(rc2, MXC_ERR_UNSUPPORTED);
}

TEST(NotCudnn, SaysTheLibraryLacksAFunction) {
  int rc = 0;
  std::string w = CallConvolution(&rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "has no cudnnGetVersion");
  ExpectHas(w, "install cuDNN 9 for CUDA 13");
}

TEST(OldCudnn, RefusesAnotherMajorVersion) {
  int rc = 0;
  std::string w = CallConvolution(&rc);
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  ExpectHas(w, "cuDNN 8.9 was loaded");
  ExpectHas(w, "built for cuDNN 9");
}

TEST(Missing, RnnSaysTheSame) { ExpectSameForRnn(); }
TEST(NotCudnn, RnnSaysTheSame) { ExpectSameForRnn(); }
TEST(OldCudnn, RnnSaysTheSame) { ExpectSameForRnn(); }

}  // namespace
