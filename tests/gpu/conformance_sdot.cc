// The GPU's sparse dot (backends/cuda/sdot.h, cuSPARSE) against the CPU's
// (ops/sparse/dot.c), and CSR arrays in GPU memory: creation, copies
// between the CPU and GPUs both ways, reading their parts back, and the
// calls a GPU refuses. The plug-in's sparse rows are not in its dense
// table, so this file loops over them itself (each needs a case registered
// as "<op>(sparse)") and prints gpu_check's summary line per row.
//
// With the fake plug-in (test_gpu_conformance_fake) the fake's sparse dot
// runs the real plan on the host and its device memory faults on any host
// access, so the whole path (creation, copies, dispatch, the row) is
// tested on every machine; with the real one on a GPU (gpu_check).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu.h"
}
#include "mxc/mxc.h"
#include "tests/gpu/conformance.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/sdot_cases.h"

namespace {

using mxct::CsrData;
using mxct::SdotCase;

bool HaveGpu() {
  int n = 0;
  return mxc_device_count(MXC_DEVICE_GPU, &n) == MXC_OK && n > 0;
}

// float32: cuSPARSE sums each output element's products in its own order
// (the transposed product with atomics, so not even run to run), the CPU
// in float32 row by row: relative 1e-4 of max(1, |cpu|) covers ~100-term
// sums of values in [-1, 1] (float's epsilon is 1.2e-7). float64: 1e-10.
double Tol(int dtype) { return dtype == MXC_DTYPE_FLOAT64 ? 1e-10 : 1e-4; }

void CompareCase(const SdotCase &c, std::mt19937 *g) {
  SCOPED_TRACE(c.Name());
  CsrData d = mxct::RandomCsr(c, g);
  int64_t n_out = c.M() * c.N();
  auto rhs = mxct::RandomValues(c.K() * c.N(), c.dtype, g);
  auto base = mxct::RandomValues(n_out, c.dtype, g);
  for (int req : {MXC_REQ_WRITE, MXC_REQ_ADD}) {
    int rc = 0;
    auto cpu = mxct::InvokeSdot(c, d, rhs, base, req, MXC_DEVICE_CPU, 0, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    auto init = req == MXC_REQ_WRITE ? mxct::PoisonValues(n_out, c.dtype) : base;
    auto gpu = mxct::InvokeSdot(c, d, rhs, init, req, MXC_DEVICE_GPU, 0, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    mxct::ExpectSdotClose("req " + std::to_string(req), gpu, cpu, c.dtype,
                          Tol(c.dtype));
  }
}

const mxct::RegisterCase kSdotCase("dot(sparse)", [](std::mt19937 *g) {
  for (const SdotCase &c : mxct::SdotCases()) CompareCase(c, g);
});

TEST(GpuConformanceSparse, EverySparseKernelMatchesTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  const mxc__gpu_plugin *p = mxc__gpu_table();
  ASSERT_NE(p, nullptr);
  std::mt19937 g(20261129);
  for (int i = 0; i < p->n_sparse_kernels; ++i) {
    std::string key = std::string(p->sparse_kernels[i].k.op) + "(sparse)";
    SCOPED_TRACE(key);
    const testing::TestResult *r =
        testing::UnitTest::GetInstance()->current_test_info()->result();
    int before = r->total_part_count();
    auto own = mxct::CaseRunners().find(key);
    if (own == mxct::CaseRunners().end()) {
      ADD_FAILURE() << "no conformance case registered as " << key;
    } else {
      own->second(&g);
    }
    std::printf("gpu_conformance: %s: %s\n", key.c_str(),
                r->total_part_count() == before ? "ok" : "FAILED");
  }
}

// The cases are valid calls of the CPU operator (every machine), so a GPU
// run does not spend its minutes on a malformed case.
TEST(GpuConformanceSparse, CasesAreValidCallsOnTheCpu) {
  std::mt19937 g(7);
  for (const SdotCase &c : mxct::SdotCases()) {
    SCOPED_TRACE(c.Name());
    CsrData d = mxct::RandomCsr(c, &g);
    auto rhs = mxct::RandomValues(c.K() * c.N(), c.dtype, &g);
    auto init = mxct::RandomValues(c.M() * c.N(), c.dtype, &g);
    int rc = 0;
    mxct::InvokeSdot(c, d, rhs, init, MXC_REQ_WRITE, MXC_DEVICE_CPU, 0, &rc);
    EXPECT_EQ(rc, MXC_OK) << mxc_last_error();
  }
}

// The parts of a CSR array as host bytes (values, indptr, indices).
std::vector<std::vector<char>> Parts(mxc_ndarray a) {
  std::vector<std::vector<char>> out;
  for (int which = -1; which < 2; ++which) {
    mxc_ndarray part = nullptr;
    int rc = which < 0 ? mxc_ndarray_sparse_data(a, &part)
                       : mxc_ndarray_aux(a, which, &part);
    EXPECT_EQ(rc, MXC_OK) << mxc_last_error();
    int64_t elems = 0;
    int dt = 0;
    EXPECT_EQ(mxc_ndarray_size(part, &elems), MXC_OK);
    EXPECT_EQ(mxc_ndarray_dtype(part, &dt), MXC_OK);
    size_t n = (size_t)elems * (dt == MXC_DTYPE_FLOAT32 || dt == MXC_DTYPE_INT32 ? 4 : 8);
    std::vector<char> v(n);
    if (n) EXPECT_EQ(mxc_ndarray_copy_to_host(part, v.data(), n), MXC_OK);
    out.push_back(v);
    mxc_ndarray_free(part);
  }
  return out;
}

// An empty CSR array of c's shape and dtypes on (dev, id).
mxc_ndarray EmptyCsr(const SdotCase &c, int index_dtype, int dev, int id) {
  const int64_t shape[2] = {c.rows, c.cols};
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create_csr(shape, c.dtype, index_dtype, nullptr,
                                   nullptr, nullptr, 0, dev, id, &a),
            MXC_OK)
      << mxc_last_error();
  return a;
}

// CPU -> gpu(0) -> gpu(last) -> CPU, through an int32 GPU copy of int64
// indices: the parts come back as they went, nnz and the format check
// answer on the GPU arrays, and the device is where the array says.
TEST(GpuSparseArrays, CopiesKeepTheParts) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  int n_gpu = 0;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n_gpu), MXC_OK);
  std::mt19937 g(11);
  SdotCase c = {23, 19, {}, 0, 0.2, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64};
  CsrData d = mxct::RandomCsr(c, &g);
  mxc_ndarray cpu = mxct::MakeCsr(c, d, MXC_DEVICE_CPU, 0);
  mxc_ndarray g0 = EmptyCsr(c, MXC_DTYPE_INT32, MXC_DEVICE_GPU, 0);
  mxc_ndarray g1 = EmptyCsr(c, MXC_DTYPE_INT64, MXC_DEVICE_GPU, n_gpu - 1);
  mxc_ndarray back = EmptyCsr(c, MXC_DTYPE_INT64, MXC_DEVICE_CPU, 0);
  ASSERT_EQ(mxc_ndarray_copy(cpu, g0), MXC_OK) << mxc_last_error();
  ASSERT_EQ(mxc_ndarray_copy(g0, g1), MXC_OK) << mxc_last_error();
  ASSERT_EQ(mxc_ndarray_copy(g1, back), MXC_OK) << mxc_last_error();
  int64_t nnz = -1;
  ASSERT_EQ(mxc_ndarray_nnz(g1, &nnz), MXC_OK) << mxc_last_error();
  EXPECT_EQ(nnz, d.nnz);
  EXPECT_EQ(mxc_ndarray_check_format(g0, 1), MXC_OK) << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_check_format(back, 1), MXC_OK) << mxc_last_error();
  int dev = -1, id = -1, st = -1;
  ASSERT_EQ(mxc_ndarray_device(g1, &dev, &id), MXC_OK);
  ASSERT_EQ(mxc_ndarray_stype(g1, &st), MXC_OK);
  EXPECT_EQ(dev, MXC_DEVICE_GPU);
  EXPECT_EQ(id, n_gpu - 1);
  EXPECT_EQ(st, MXC_STYPE_CSR);
  auto want = Parts(cpu), got = Parts(back), on_gpu = Parts(g1);
  EXPECT_EQ(got, want);
  EXPECT_EQ(on_gpu, want);
  auto narrow = Parts(g0);  // int32 indices: half the bytes
  EXPECT_EQ(narrow[0], want[0]);
  EXPECT_EQ(narrow[1].size() * 2, want[1].size());
  for (mxc_ndarray a : {cpu, g0, g1, back}) mxc_ndarray_free(a);
}

// A copied GPU array computes like one made there, and an empty GPU CSR
// (nnz 0) gives zeros.
TEST(GpuSparseArrays, CopiedAndEmptyArraysCompute) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  std::mt19937 g(13);
  SdotCase c = {9, 6, {4}, 1, 0.3, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32};
  CsrData d = mxct::RandomCsr(c, &g);
  mxc_ndarray cpu = mxct::MakeCsr(c, d, MXC_DEVICE_CPU, 0);
  mxc_ndarray gpu = EmptyCsr(c, MXC_DTYPE_INT32, MXC_DEVICE_GPU, 0);
  mxc_ndarray empty = EmptyCsr(c, MXC_DTYPE_INT64, MXC_DEVICE_GPU, 0);
  ASSERT_EQ(mxc_ndarray_copy(cpu, gpu), MXC_OK) << mxc_last_error();
  auto rhs = mxct::RandomValues(c.K() * c.N(), c.dtype, &g);
  auto poison = mxct::PoisonValues(c.M() * c.N(), c.dtype);
  int rc = 0;
  auto want = mxct::InvokeSdot(c, d, rhs, poison, MXC_REQ_WRITE,
                               MXC_DEVICE_CPU, 0, &rc);
  ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("dot", &op), MXC_OK);
  const char *keys[] = {"transpose_a"}, *vals[] = {"true"};
  for (mxc_ndarray lhs : {gpu, empty}) {
    mxc_ndarray in[2] = {lhs, mxct::MakeDense(c.RhsShape(), c.dtype, rhs,
                                              MXC_DEVICE_GPU, 0)};
    mxc_ndarray out = mxct::MakeDense(c.OutShape(), c.dtype, poison,
                                      MXC_DEVICE_GPU, 0);
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 1, in, 2, &out, 1, nullptr),
              MXC_OK)
        << mxc_last_error();
    std::vector<char> got(poison.size());
    ASSERT_EQ(mxc_ndarray_copy_to_host(out, got.data(), got.size()), MXC_OK)
        << mxc_last_error();
    if (lhs == gpu) {
      mxct::ExpectSdotClose("copied", got, want, c.dtype, 1e-4);
    } else {
      EXPECT_EQ(got, std::vector<char>(got.size(), 0)) << "empty csr";
    }
    mxc_ndarray_free(in[1]);
    mxc_ndarray_free(out);
  }
  for (mxc_ndarray a : {cpu, gpu, empty}) mxc_ndarray_free(a);
}

// 24 independent sparse dots pushed at once, alternating transposes: the
// engine's GPU workers run them concurrently, each thread with its own
// cuSPARSE handle and workspace (grown as the shapes need).
TEST(GpuSparseArrays, ConcurrentCallsAgree) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  const int kCalls = 24;
  std::mt19937 g(19);
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("dot", &op), MXC_OK);
  std::vector<SdotCase> cases;
  std::vector<CsrData> csr;
  std::vector<std::vector<char>> rhs;
  std::vector<mxc_ndarray> outs, keep;
  for (int i = 0; i < kCalls; ++i) {
    cases.push_back({40 + i, 31 + 2 * i, {3 + i % 5}, i % 2, 0.1,
                     MXC_DTYPE_FLOAT32, i % 3 ? MXC_DTYPE_INT64
                                              : MXC_DTYPE_INT32});
    const SdotCase &c = cases.back();
    csr.push_back(mxct::RandomCsr(c, &g));
    rhs.push_back(mxct::RandomValues(c.K() * c.N(), c.dtype, &g));
    mxc_ndarray in[2] = {
        mxct::MakeCsr(c, csr.back(), MXC_DEVICE_GPU, 0),
        mxct::MakeDense(c.RhsShape(), c.dtype, rhs.back(), MXC_DEVICE_GPU, 0)};
    mxc_ndarray out = mxct::MakeDense(c.OutShape(), c.dtype, {},
                                      MXC_DEVICE_GPU, 0);
    const char *keys[] = {"transpose_a"};
    const char *vals[] = {c.ta ? "true" : "false"};
    ASSERT_EQ(mxc_op_invoke(op, keys, vals, 1, in, 2, &out, 1, nullptr),
              MXC_OK)
        << mxc_last_error();
    outs.push_back(out);
    keep.insert(keep.end(), in, in + 2);
  }
  ASSERT_EQ(mxc_wait_all(), MXC_OK) << mxc_last_error();
  for (int i = 0; i < kCalls; ++i) {
    const SdotCase &c = cases[i];
    int rc = 0;
    auto zeros = std::vector<char>(c.M() * c.N() * 4, 0);
    auto cpu = mxct::InvokeSdot(c, csr[i], rhs[i], zeros, MXC_REQ_WRITE,
                                MXC_DEVICE_CPU, 0, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
    std::vector<char> got(cpu.size());
    ASSERT_EQ(mxc_ndarray_copy_to_host(outs[i], got.data(), got.size()),
              MXC_OK);
    mxct::ExpectSdotClose("call " + std::to_string(i), got, cpu, c.dtype,
                          1e-4);
  }
  for (mxc_ndarray a : outs) mxc_ndarray_free(a);
  for (mxc_ndarray a : keep) mxc_ndarray_free(a);
}

// dot(lhs, rhs) on gpu(0) with these parameters: its return code; the
// message in *msg.
int GpuDot(mxc_ndarray lhs, mxc_ndarray rhs, const std::vector<int64_t> &os,
           const char *tb, std::string *msg) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find("dot", &op), MXC_OK);
  mxc_ndarray in[2] = {lhs, rhs};
  mxc_ndarray out = mxct::Make(os, MXC_DEVICE_GPU, 0);
  const char *keys[] = {"transpose_b"}, *vals[] = {tb};
  int rc = mxc_op_invoke(op, keys, vals, 1, in, 2, &out, 1, nullptr);
  *msg = mxc_last_error();
  mxc_ndarray_free(out);
  return rc;
}

// Device bytes in use once all work is done (a failed copy below is
// reported by the wait as well: its result is not what is asked here).
int64_t GpuBytesInUse() {
  (void)mxc_wait_all();
  int64_t n = -1;
  EXPECT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 0, MXC_STORAGE_BYTES_IN_USE, &n),
            MXC_OK);
  return n;
}

// What the GPU does not run is refused by name, never crashed on: the
// CPU's other sparse dot kernels, its storage fallback, other operators on
// a GPU CSR, malformed input, row_sparse arrays; nothing is left behind.
TEST(GpuSparseArrays, RefusedClearly) {
  if (!HaveGpu()) GTEST_SKIP() << "no usable GPU";
  int64_t before = GpuBytesInUse();
  std::mt19937 g(17);
  SdotCase c = {5, 5, {5}, 0, 0.4, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64};
  CsrData d = mxct::RandomCsr(c, &g);
  mxc_ndarray csr = mxct::MakeCsr(c, d, MXC_DEVICE_GPU, 0);
  mxc_ndarray dense = mxct::Make({5, 5}, MXC_DEVICE_GPU, 0);
  std::string msg;
  // dense x csr: a CPU sparse kernel, none on the GPU.
  EXPECT_EQ(GpuDot(dense, csr, {5, 5}, "false", &msg), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("'dot'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("default, csr -> default"), std::string::npos) << msg;
  // csr x dense^T: the CPU's dense fallback, which a GPU does not have.
  EXPECT_EQ(GpuDot(csr, dense, {5, 5}, "true", &msg), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(msg.find("no storage fallback"), std::string::npos) << msg;
  // Another operator on a GPU csr.
  mxc_op sq = nullptr;
  ASSERT_EQ(mxc_op_find("square", &sq), MXC_OK);
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(sq, nullptr, nullptr, 0, &csr, 1, &out, 1, nullptr),
            MXC_ERR_UNSUPPORTED)
      << mxc_last_error();
  EXPECT_EQ(out, nullptr);
  // Storage casts on a GPU (host code on the CPU).
  EXPECT_EQ(mxc_ndarray_cast_storage(csr, MXC_STYPE_DEFAULT, &out),
            MXC_ERR_UNSUPPORTED)
      << mxc_last_error();
  EXPECT_EQ(mxc_ndarray_cast_storage(dense, MXC_STYPE_CSR, &out),
            MXC_ERR_UNSUPPORTED)
      << mxc_last_error();
  // Malformed host buffers never reach the GPU.
  const int64_t shape[2] = {2, 3};
  const int64_t ip[3] = {0, 2, 1}, ix[1] = {0};
  const float v[1] = {1.f};
  mxc_ndarray bad = nullptr;
  EXPECT_EQ(mxc_ndarray_create_csr(shape, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, v,
                                   ip, ix, 1, MXC_DEVICE_GPU, 0, &bad),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  // Nor through a copy: a CPU array is created unchecked, its copy to a
  // GPU checks it and fails at the wait.
  ASSERT_EQ(mxc_ndarray_create_csr(shape, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64,
                                   v, ip, ix, 1, MXC_DEVICE_CPU, 0, &bad),
            MXC_OK)
      << mxc_last_error();
  SdotCase c23 = {2, 3, {}, 0, 0.0, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64};
  mxc_ndarray dst = EmptyCsr(c23, MXC_DTYPE_INT64, MXC_DEVICE_GPU, 0);
  int rc = mxc_ndarray_copy(bad, dst);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(dst);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << mxc_last_error();
  EXPECT_NE(std::string(mxc_last_error()).find("indptr"), std::string::npos)
      << mxc_last_error();
  mxc_ndarray_free(bad);
  mxc_ndarray_free(dst);
  // row_sparse stays on the CPU.
  mxc_ndarray rsp = nullptr;
  EXPECT_EQ(mxc_ndarray_create_row_sparse(shape, 2, MXC_DTYPE_FLOAT32,
                                          MXC_DTYPE_INT64, nullptr, nullptr, 0,
                                          MXC_DEVICE_GPU, 0, &rsp),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(mxc_last_error()).find("row_sparse"),
            std::string::npos);
  mxc_ndarray_free(csr);
  mxc_ndarray_free(dense);
  EXPECT_EQ(GpuBytesInUse(), before) << "device memory left behind";
}

}  // namespace
