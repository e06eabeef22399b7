// The GPU plug-in interface on the host, through the public API, with the
// fake plug-in (tests/gpu/fake_plugin.c): every reason a GPU is
// unavailable gives its own MXC_ERR_UNSUPPORTED message, and with "GPUs"
// present, arrays live in device memory the host cannot touch (a host
// access faults), copies go through the plug-in, and every other use of a
// GPU array is refused with a message instead of touching its memory.
//
// The plug-in loads once per process, so each mode is its own test target
// (tests/gpu/BUILD sets MXC_FAKE_GPU and runs one suite of this file).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"

namespace {

using mxct::LastError;
using mxct::Make;
using mxct::ToHost;

// mxc_device_check(GPU, id) fails with MXC_ERR_UNSUPPORTED and a message
// containing `reason`; so does creating an array there.
void ExpectGpuRefused(int id, const std::string &reason) {
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, id), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find(reason), std::string::npos) << LastError();
  int64_t shape[1] = {4};
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU,
                               id, 0, &a),
            MXC_ERR_UNSUPPORTED);
  EXPECT_EQ(a, nullptr);
  EXPECT_NE(LastError().find(reason), std::string::npos) << LastError();
}

void ExpectNoGpu(const std::string &reason) {
  int n = -1, on = -1;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK);
  EXPECT_EQ(n, 0);
  ASSERT_EQ(mxc_feature_enabled("CUDA", &on), MXC_OK);
  EXPECT_EQ(on, 0);
  ExpectGpuRefused(0, reason);
  // The CPU is unaffected.
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_CPU, 0), MXC_OK);
}

TEST(NoLibrary, ReasonNamesTheFileAndThePackage) {
  ExpectNoGpu("could not be loaded");
  ExpectGpuRefused(0, "libmxc-cuda1");
  ExpectGpuRefused(0, "does-not-exist.so");
}

TEST(NotAPlugin, ReasonNamesTheEntryPoint) {
  ExpectNoGpu("is not an mxc GPU plug-in (no mxc_gpu_plugin_v1");
}

TEST(NullTable, RefusedLikeAMissingEntry) {
  ExpectNoGpu("is not an mxc GPU plug-in");
}

TEST(BadAbi, ReasonNamesBothVersions) {
  ExpectNoGpu("has plug-in ABI 99");
  ExpectGpuRefused(0, "this libmxc needs ABI 1");
}

TEST(NoDriver, ReasonIsThePluginsOwn) {
  ExpectNoGpu("the CUDA driver (libcuda.so.1) is not installed");
}

TEST(OldDriver, ReasonIsThePluginsOwn) {
  ExpectNoGpu("the plug-in needs 13.0");
}

TEST(NoDevice, ReasonSaysNoGpu) { ExpectNoGpu("reports no GPU"); }

TEST(OldCc, TheOldDeviceAloneIsRefused) {
  int n = -1;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, 0), MXC_OK) << LastError();
  ExpectGpuRefused(1, "has compute capability 5.2");
  ExpectGpuRefused(1, "needs 8.0 or newer");
}

TEST(Many, CappedAtTheTableSize) {
  int n = -1;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK);
  EXPECT_EQ(n, 16);
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, 15), MXC_OK) << LastError();
  ExpectGpuRefused(16, "16 GPU(s) are visible (ids 0 to 15)");
}

// ---- mode ok: two fake GPUs ----

// Live blocks of the fake's device memory, read from the loaded plug-in
// (dlopen of the same file returns the handle mxc holds).
int LiveBlocks() {
  void *h = dlopen(std::getenv("MXC_CUDA_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -1;
  auto fn = reinterpret_cast<int (*)()>(dlsym(h, "mxc_fake_gpu_live_blocks"));
  int n = fn ? fn() : -1;
  dlclose(h);
  return n;
}

TEST(Ok, CountFeatureAndIds) {
  int n = -1, on = -1;
  ASSERT_EQ(mxc_device_count(MXC_DEVICE_GPU, &n), MXC_OK);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(mxc_feature_enabled("CUDA", &on), MXC_OK);
  EXPECT_EQ(on, 1);
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, 1), MXC_OK);
  ExpectGpuRefused(2, "2 GPU(s) are visible");
  EXPECT_EQ(mxc_device_check(MXC_DEVICE_GPU, -1), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_device_check(7, 0), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Ok, CopiesThroughBothDevicesAndBack) {
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = 0.5f * i - 2;
  mxc_ndarray g0 = Make({3, 4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray g1 = Make({3, 4}, MXC_DEVICE_GPU, 1);
  mxc_ndarray c = Make({3, 4}, MXC_DEVICE_CPU, 0);
  int dt = -1, id = -1;
  ASSERT_EQ(mxc_ndarray_device(g1, &dt, &id), MXC_OK);
  EXPECT_EQ(dt, MXC_DEVICE_GPU);
  EXPECT_EQ(id, 1);
  ASSERT_EQ(mxc_ndarray_copy_from_host(g0, src.data(), 48), MXC_OK)
      << LastError();
  ASSERT_EQ(mxc_ndarray_copy(g0, g1), MXC_OK) << LastError();  // gpu -> gpu
  ASSERT_EQ(mxc_ndarray_copy(g1, c), MXC_OK) << LastError();   // gpu -> cpu
  EXPECT_EQ(ToHost(c, 12), src);
  std::vector<float> twice(12);
  for (int i = 0; i < 12; ++i) twice[i] = 2 * src[i];
  mxc_ndarray c2 = Make({3, 4}, MXC_DEVICE_CPU, 0);
  ASSERT_EQ(mxc_ndarray_copy_from_host(c2, twice.data(), 48), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy(c2, g0), MXC_OK) << LastError();  // cpu -> gpu
  EXPECT_EQ(ToHost(g0, 12), twice);
  for (mxc_ndarray a : {g0, g1, c, c2}) mxc_ndarray_free(a);
}

TEST(Ok, ViewsKeepTheirOffset) {
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = (float)i;
  mxc_ndarray g = Make({3, 4}, MXC_DEVICE_GPU, 0);
  ASSERT_EQ(mxc_ndarray_copy_from_host(g, src.data(), 48), MXC_OK);
  mxc_ndarray row = nullptr, rows = nullptr;
  ASSERT_EQ(mxc_ndarray_at(g, 2, &row), MXC_OK) << LastError();
  EXPECT_EQ(ToHost(row, 4), std::vector<float>({8, 9, 10, 11}));
  ASSERT_EQ(mxc_ndarray_slice(g, 1, 3, &rows), MXC_OK) << LastError();
  std::vector<float> ones(8, 1.f);
  ASSERT_EQ(mxc_ndarray_copy_from_host(rows, ones.data(), 32), MXC_OK);
  EXPECT_EQ(ToHost(g, 12),
            std::vector<float>({0, 1, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1}));
  for (mxc_ndarray a : {g, row, rows}) mxc_ndarray_free(a);
}

TEST(Ok, StoragePoolPerDeviceAndNothingLeaks) {
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_GPU, 1), MXC_OK);
  int base = LiveBlocks();
  ASSERT_GE(base, 0);
  mxc_ndarray g = Make({1000}, MXC_DEVICE_GPU, 1);
  ASSERT_EQ(mxc_ndarray_wait_to_write(g), MXC_OK);
  int64_t in_use = -1;
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 1, MXC_STORAGE_BYTES_IN_USE,
                             &in_use),
            MXC_OK);
  EXPECT_GE(in_use, 4000);
  mxc_ndarray_free(g);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_EQ(mxc_storage_stat(MXC_DEVICE_GPU, 1, MXC_STORAGE_BYTES_IN_USE,
                             &in_use),
            MXC_OK);
  EXPECT_EQ(in_use, 0);
  ASSERT_EQ(mxc_storage_release_cached(MXC_DEVICE_GPU, 1), MXC_OK);
  EXPECT_EQ(LiveBlocks(), base);
}

// An operator with no GPU kernel is refused by name; nothing reads the
// device memory (it would fault).
TEST(Ok, OperatorsWithoutGpuKernelsAreRefused) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("elemwise_add", &op), MXC_OK);
  mxc_ndarray a = Make({4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray b = Make({4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray in[2] = {a, b};
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &out, 1, nullptr),
            MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find("no kernel for gpu(0)"), std::string::npos)
      << LastError();
  mxc_ndarray_free(a);
  mxc_ndarray_free(b);
}

// Both file formats stage a GPU array through host memory.
TEST(Ok, SaveCopiesToTheHost) {
  std::vector<float> src = {1, -2, 3.5f, 4, 5, 6};
  mxc_ndarray g = Make({2, 3}, MXC_DEVICE_GPU, 1);
  ASSERT_EQ(mxc_ndarray_copy_from_host(g, src.data(), 24), MXC_OK);
  const char *names[1] = {"g"};
  for (int format : {MXC_FILE_FORMAT_MXC, MXC_FILE_FORMAT_MXNET}) {
    std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/g" +
                       std::to_string(format) + ".params";
    ASSERT_EQ(mxc_ndarray_save_format(path.c_str(), &g, names, 1, format),
              MXC_OK)
        << LastError();
    mxc_ndarray_list list = nullptr;
    ASSERT_EQ(mxc_ndarray_load(path.c_str(), &list), MXC_OK) << LastError();
    mxc_ndarray back = nullptr;
    ASSERT_EQ(mxc_ndarray_list_get(list, 0, &back), MXC_OK);
    EXPECT_EQ(ToHost(back, 6), src);
    mxc_ndarray_free(back);
    mxc_ndarray_list_free(list);
  }
  mxc_ndarray_free(g);
}

TEST(Ok, HostOnlyUsesAreRefused) {
  mxc_ndarray g = Make({2, 3}, MXC_DEVICE_GPU, 0);
  std::vector<float> zero(6, 0.f);
  ASSERT_EQ(mxc_ndarray_copy_from_host(g, zero.data(), 24), MXC_OK);
  EXPECT_EQ(mxc_init_array(g, "uniform", nullptr, nullptr, 0),
            MXC_ERR_UNSUPPORTED)
      << LastError();
  int64_t shape[2] = {2, 3};
  mxc_ndarray s = nullptr;
  EXPECT_EQ(mxc_ndarray_create_row_sparse(shape, 2, MXC_DTYPE_FLOAT32,
                                          MXC_DTYPE_INT64, nullptr, nullptr,
                                          0, MXC_DEVICE_GPU, 0, &s),
            MXC_ERR_UNSUPPORTED)
      << LastError();
  EXPECT_EQ(mxc_ndarray_cast_storage(g, MXC_STYPE_ROW_SPARSE, &s),
            MXC_ERR_UNSUPPORTED)
      << LastError();
  // A graph with an operator on the GPU fails at bind or at its first
  // forward, naming the operator, without touching device memory.
  const char *json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << LastError();
  mxc_ndarray args[1] = {g};
  mxc_executor ex = nullptr;
  int rc = mxc_executor_bind(sym, MXC_DEVICE_GPU, 0, 1, args, nullptr,
                             nullptr, 0, nullptr, 0, &ex);
  if (rc == MXC_OK) {
    rc = mxc_executor_forward(ex, 0);
    if (rc == MXC_OK) rc = mxc_wait_all();
    mxc_executor_free(ex);
  }
  EXPECT_EQ(rc, MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find("relu"), std::string::npos) << LastError();
  mxc_symbol_free(sym);
  mxc_ndarray_free(g);
}

// Metrics read their inputs through host copies.
TEST(Ok, MetricsCopyToTheHost) {
  std::vector<float> pred = {0.1f, 0.9f, 0.0f, 0.7f, 0.2f, 0.1f};
  std::vector<float> label = {1, 2};
  mxc_ndarray p = Make({2, 3}, MXC_DEVICE_GPU, 0);
  mxc_ndarray l = Make({2}, MXC_DEVICE_GPU, 1);
  ASSERT_EQ(mxc_ndarray_copy_from_host(p, pred.data(), 24), MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_from_host(l, label.data(), 8), MXC_OK);
  int64_t correct = -1, count = -1;
  ASSERT_EQ(mxc_metric_accuracy(p, l, &correct, &count), MXC_OK)
      << LastError();
  EXPECT_EQ(correct, 1);
  EXPECT_EQ(count, 2);
  mxc_ndarray_free(p);
  mxc_ndarray_free(l);
}

// The exported tensor names the GPU; the data pointer is device memory.
TEST(Ok, DlpackExportNamesTheDevice) {
  mxc_ndarray g = Make({2, 2}, MXC_DEVICE_GPU, 1);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(g, &t), MXC_OK) << LastError();
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, 1);
  t->deleter(t);
  mxc_ndarray_free(g);
}

TEST(Oom, DeviceMemoryExhaustedIsOom) {
  mxc_ndarray a = nullptr;
  int64_t shape[1] = {1 << 20};
  int rc = mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_GPU, 0,
                              0, &a);
  EXPECT_EQ(rc, MXC_ERR_OOM) << LastError();
  EXPECT_NE(LastError().find("gpu"), std::string::npos) << LastError();
  mxc_ndarray small = Make({16}, MXC_DEVICE_GPU, 0);  // still works
  EXPECT_NE(small, nullptr);
  mxc_ndarray_free(small);
}

TEST(CopyFail, TheRuntimesReasonReachesTheCaller) {
  mxc_ndarray g = Make({4}, MXC_DEVICE_GPU, 0);
  std::vector<float> v(4, 1.f);
  EXPECT_NE(mxc_ndarray_copy_from_host(g, v.data(), 16), MXC_OK);
  EXPECT_NE(LastError().find("illegal memory access"), std::string::npos)
      << LastError();
  mxc_ndarray c = Make({4}, MXC_DEVICE_CPU, 0);
  ASSERT_EQ(mxc_ndarray_copy(g, c), MXC_OK);  // async: fails at the wait
  EXPECT_NE(mxc_ndarray_wait_to_read(c), MXC_OK);
  EXPECT_NE(LastError().find("illegal memory access"), std::string::npos)
      << LastError();
  mxc_ndarray_free(g);
  mxc_ndarray_free(c);
}

}  // namespace
