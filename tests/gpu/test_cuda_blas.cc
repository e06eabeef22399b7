// The real plug-in's cuBLAS kernels where cuBLAS cannot be loaded
// (MXC_CUBLAS_LIBRARY names a missing file, BUILD): every one answers
// MXC_ERR_UNSUPPORTED naming the library and what to install, from its run
// function, before touching a device, so this runs on machines without a
// GPU. A call with nothing to compute needs no library. The same for the
// cuSPARSE kernel (the sparse dot row; MXC_CUSPARSE_LIBRARY names a
// missing file) and the linalg kernels (cuBLAS's float64 calls, and
// cuSOLVER: MXC_CUSOLVER_LIBRARY names a missing file).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/cuda/blas_plan.h"
#include "backends/cuda/la_plan.h"
#include "backends/cuda/sdot_plan.h"
#include "core/base/gpu_plugin.h"

namespace {

const mxc__gpu_plugin *Plugin() {
  const char *path = std::getenv("MXC_CUDA_PLUGIN");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  EXPECT_NE(h, nullptr) << (path ? dlerror() : "MXC_CUDA_PLUGIN unset");
  if (!h) return nullptr;
  auto entry = reinterpret_cast<mxc__gpu_plugin_entry_fn>(
      dlsym(h, MXC__GPU_PLUGIN_ENTRY));
  return entry ? entry() : nullptr;
}

const mxc__gpu_kernel *Find(const mxc__gpu_plugin *p, const char *op) {
  for (int i = 0; i < p->n_kernels; ++i) {
    if (std::string(p->kernels[i].op) == op) return &p->kernels[i];
  }
  return nullptr;
}

mxc__gpu_array Matrix(int64_t r, int64_t c, int dt = MXC_DTYPE_FLOAT32) {
  mxc__gpu_array a = {};
  a.size = r * c;
  a.ndim = 2;
  a.dims[0] = r;
  a.dims[1] = c;
  a.dtype = dt;
  return a;
}

// Every kernel's call in dtype dt without cuBLAS.
void CheckWithoutCublas(const mxc__gpu_plugin *p, int dt) {
  // Shapes every operator accepts: (2, 3) x (3, 2) as dot's operands,
  // FullyConnected data (2, 3) with num_hidden 2 and weight (2, 3).
  mxc__dot_param dot = {0, 0};
  mxc__fc_param fc = {2, 1, 1};
  const char *ops[] = {"dot", "_backward_dot", "FullyConnected",
                       "_backward_FullyConnected"};
  mxc__gpu_array a = Matrix(2, 3, dt), w = Matrix(2, 3, dt),
                 b = Matrix(3, 2, dt);
  mxc__gpu_array g = Matrix(2, 2, dt);
  for (const char *op : ops) {
    SCOPED_TRACE(std::string(op) + " dtype " + std::to_string(dt));
    const mxc__gpu_kernel *k = Find(p, op);
    ASSERT_NE(k, nullptr);
    bool is_fc = std::string(op).find("Fully") != std::string::npos;
    bool bwd = std::string(op).find("_backward") == 0;
    mxc__gpu_array in[3] = {g, a, is_fc ? w : b};
    mxc__gpu_array out[2] = {a, is_fc ? w : b};
    int req[2] = {MXC__GPU_REQ_WRITE, MXC__GPU_REQ_WRITE};
    if (!bwd) in[0] = a, in[1] = is_fc ? w : b, out[0] = g;
    mxc__gpu_call c = {
        0, is_fc ? (const void *)&fc : &dot, in, 2 + bwd, out, 1 + bwd, req, 0, {}};
    char why[512] = "";
    ASSERT_EQ(k->run(&c, why, sizeof why), MXC_ERR_UNSUPPORTED) << why;
    std::string w = why;
    EXPECT_NE(w.find("cuBLAS could not be loaded"), std::string::npos) << w;
    EXPECT_NE(w.find(std::getenv("MXC_CUBLAS_LIBRARY")), std::string::npos) << w;
    EXPECT_NE(w.find("nvidia-cublas"), std::string::npos) << w;
  }
}

TEST(CudaBlas, WithoutCublasEveryKernelSaysWhatToInstall) {
  const mxc__gpu_plugin *p = Plugin();
  ASSERT_NE(p, nullptr);
  // float16 and bfloat16 calls (cublasGemmEx) fail the same way.
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    CheckWithoutCublas(p, dt);
  }
}

// The rows take one dtype of float32, float16 and bfloat16 (libmxc then
// routes the call here), and nothing else.
TEST(CudaBlas, RowsTakeFloatAndHalfTypes) {
  const mxc__gpu_plugin *p = Plugin();
  ASSERT_NE(p, nullptr);
  const mxc__gpu_kernel *k = Find(p, "dot");
  ASSERT_NE(k, nullptr);
  ASSERT_NE(k->supports, nullptr);
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16, MXC_DTYPE_BFLOAT16}) {
    int dts[3] = {dt, dt, dt};
    EXPECT_EQ(k->supports(dts, 2, 1), 1) << dt;
  }
  int f64[3] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64};
  int mixed[3] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT16};
  EXPECT_EQ(k->supports(f64, 2, 1), 0);
  EXPECT_EQ(k->supports(mixed, 2, 1), 0);
}

TEST(CudaBlas, NothingToComputeNeedsNoLibrary) {
  const mxc__gpu_plugin *p = Plugin();
  ASSERT_NE(p, nullptr);
  const mxc__gpu_kernel *k = Find(p, "dot");
  ASSERT_NE(k, nullptr);
  mxc__dot_param dot = {0, 0};
  mxc__gpu_array in[2] = {Matrix(0, 3), Matrix(3, 2)};
  mxc__gpu_array out = Matrix(0, 2);
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &dot, in, 2, &out, 1, &req, 0, {}};
  char why[512] = "";
  EXPECT_EQ(k->run(&c, why, sizeof why), MXC_OK) << why;
  req = MXC__GPU_REQ_NULL;
  out = Matrix(2, 2);
  in[0] = Matrix(2, 3);
  EXPECT_EQ(k->run(&c, why, sizeof why), MXC_OK) << why;
}

// A (2, 3) CSR with 2 stored values, device pointers never touched.
mxc__gpu_array Csr() {
  mxc__gpu_array a = Matrix(2, 3);
  a.stype = MXC_STYPE_CSR;
  a.index_dtype = MXC_DTYPE_INT64;
  a.nnz = 2;
  return a;
}

TEST(CudaSparse, WithoutCusparseTheSparseDotSaysWhatToInstall) {
  const mxc__gpu_plugin *p = Plugin();
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->n_sparse_kernels, 1);
  const mxc__gpu_sparse_kernel *k = &p->sparse_kernels[0];
  EXPECT_EQ(std::string(k->k.op), "dot");
  const int st[3] = {MXC_STYPE_CSR, MXC_STYPE_DEFAULT, -1};
  EXPECT_TRUE(k->stypes(st, 2, 1));
  mxc__dot_param dot = {0, 0};
  mxc__gpu_array in[2] = {Csr(), Matrix(3, 2)};
  mxc__gpu_array out = Matrix(2, 2);
  int req = MXC__GPU_REQ_ADD;
  mxc__gpu_call c = {0, &dot, in, 2, &out, 1, &req, 0, {}};
  char why[512] = "";
  ASSERT_EQ(k->k.run(&c, why, sizeof why), MXC_ERR_UNSUPPORTED) << why;
  std::string w = why;
  EXPECT_NE(w.find("cuSPARSE could not be loaded"), std::string::npos) << w;
  EXPECT_NE(w.find(std::getenv("MXC_CUSPARSE_LIBRARY")), std::string::npos)
      << w;
  EXPECT_NE(w.find("nvidia-cusparse"), std::string::npos) << w;
  // Nothing to compute (null write mode, or nnz 0 added): no library.
  req = MXC__GPU_REQ_NULL;
  EXPECT_EQ(k->k.run(&c, why, sizeof why), MXC_OK) << why;
  req = MXC__GPU_REQ_ADD;
  in[0].nnz = 0;
  EXPECT_EQ(k->k.run(&c, why, sizeof why), MXC_OK) << why;
  // A call the CPU would refuse never reaches the library.
  dot.transpose_b = 1;
  EXPECT_EQ(k->k.run(&c, why, sizeof why), MXC_ERR_STYPE) << why;
}

// The linalg kernels: potrf needs cuSOLVER alone, the products and the
// LU-based ones cuBLAS; each names what is missing and what to install,
// before touching a device. An empty batch needs no library.
TEST(CudaLinalg, WithoutTheLibrariesTheKernelsSayWhatToInstall) {
  const mxc__gpu_plugin *p = Plugin();
  ASSERT_NE(p, nullptr);
  mxc__la_param q = {};
  q.alpha = 1;
  q.lower = 1;
  struct {
    const char *op, *lib, *env, *wheel;
  } k[] = {
      {"linalg_potrf", "cuSOLVER", "MXC_CUSOLVER_LIBRARY", "nvidia-cusolver"},
      {"linalg_inverse", "cuBLAS", "MXC_CUBLAS_LIBRARY", "nvidia-cublas"},
      {"linalg_gemm2", "cuBLAS", "MXC_CUBLAS_LIBRARY", "nvidia-cublas"},
      {"_backward_linalg_det", "cuBLAS", "MXC_CUBLAS_LIBRARY", "nvidia-cublas"},
  };
  for (const auto &t : k) {
    SCOPED_TRACE(t.op);
    const mxc__gpu_kernel *kern = Find(p, t.op);
    ASSERT_NE(kern, nullptr);
    bool det_bwd = std::string(t.op) == "_backward_linalg_det";
    int n_in = std::string(t.op) == "linalg_gemm2" ? 2 : det_bwd ? 3 : 1;
    mxc__gpu_array in[3] = {Matrix(3, 3), Matrix(3, 3), Matrix(3, 3)};
    if (det_bwd) in[0] = Matrix(1, 1), in[2] = Matrix(1, 1);
    if (det_bwd) in[0].ndim = in[2].ndim = 1;
    mxc__gpu_array out = Matrix(3, 3);
    int req = MXC__GPU_REQ_WRITE;
    mxc__gpu_call c = {0, &q, in, n_in, &out, 1, &req, 0, {}};
    char why[512] = "";
    ASSERT_EQ(kern->run(&c, why, sizeof why), MXC_ERR_UNSUPPORTED) << why;
    std::string w = why;
    EXPECT_NE(w.find(std::string(t.lib) + " could not be loaded"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find(std::getenv(t.env)), std::string::npos) << w;
    EXPECT_NE(w.find(t.wheel), std::string::npos) << w;
  }
  const mxc__gpu_kernel *inv = Find(p, "linalg_inverse");
  ASSERT_NE(inv, nullptr);
  mxc__gpu_array empty = Matrix(0, 3);
  empty.ndim = 3, empty.dims[0] = 0, empty.dims[1] = 3, empty.dims[2] = 3;
  mxc__gpu_array out = empty;
  int req = MXC__GPU_REQ_WRITE;
  mxc__gpu_call c = {0, &q, &empty, 1, &out, 1, &req, 0, {}};
  char why[512] = "";
  EXPECT_EQ(inv->run(&c, why, sizeof why), MXC_OK) << why;
  // float32 or float64, one for every array
  int f32[2] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT32};
  int f64[2] = {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT64};
  int mixed[2] = {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64};
  int f16[2] = {MXC_DTYPE_FLOAT16, MXC_DTYPE_FLOAT16};
  EXPECT_EQ(inv->supports(f32, 1, 1), 1);
  EXPECT_EQ(inv->supports(f64, 1, 1), 1);
  EXPECT_EQ(inv->supports(mixed, 1, 1), 0);
  EXPECT_EQ(inv->supports(f16, 1, 1), 0);
}

}  // namespace
