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

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "mxc/mxc.h"
#include "tests/gpu/gpu_test_util.h"

// Internal hooks (linked from libmxc's archive): the fallback logs'
// reset, allocation fault injection and the live-block count.
extern "C" {
void mxc__fallback_log_reset(void);
void mxc__fault_alloc_arm(int64_t n, int persist);
int mxc__fault_alloc_fired(void);
int64_t mxc__alloc_live(void);
}

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
  ExpectNoGpu("is not an mxc GPU plug-in (no mxc_gpu_plugin_v2");
}

TEST(NullTable, RefusedLikeAMissingEntry) {
  ExpectNoGpu("is not an mxc GPU plug-in");
}

TEST(OldVersion, ReasonNamesBothVersions) {
  ExpectNoGpu("was built from mxc 0.9.0; this libmxc is 1.");
}

TEST(BadAbi, ReasonNamesBothVersions) {
  ExpectNoGpu("has plug-in ABI 99");
  ExpectGpuRefused(0, "this libmxc needs ABI 2");
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

// Random values with negatives, zeros and a NaN.
std::vector<float> Values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = (float)(((i + 1) * 2654435761u * (seed + 1)) % 2001) / 100.f - 10;
  }
  if (n > 3) v[3] = 0.f;
  if (n > 5) v[5] = std::nanf("");
  return v;
}

// Runs op on arrays of one device; returns its first output's values.
std::vector<float> RunOp(const char *name, const std::vector<float> &x,
                       const std::vector<float> &y, int dev_type, int id) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK);
  int64_t n = (int64_t)x.size();
  mxc_ndarray in[2] = {Make({n}, dev_type, id), Make({n}, dev_type, id)};
  EXPECT_EQ(mxc_ndarray_copy_from_host(in[0], x.data(), n * 4), MXC_OK);
  if (!y.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(in[1], y.data(), n * 4), MXC_OK);
  }
  mxc_ndarray out = nullptr;
  int n_in = y.empty() ? 1 : 2;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, n_in, &out, 1, nullptr),
            MXC_OK)
      << LastError();
  int dt = -1, did = -1;
  EXPECT_EQ(mxc_ndarray_device(out, &dt, &did), MXC_OK);
  EXPECT_EQ(dt, dev_type);
  EXPECT_EQ(did, id);
  std::vector<float> v = ToHost(out, x.size());
  for (mxc_ndarray a : {in[0], in[1], out}) mxc_ndarray_free(a);
  return v;
}

// Bitwise: NaN equals NaN.
void ExpectSameBits(const std::vector<float> &a, const std::vector<float> &b) {
  ASSERT_EQ(a.size(), b.size());
  if (a.empty()) return;  // memcmp may not take an empty vector's NULL
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
}

// The plug-in's kernels run through imperative invoke, outputs created on
// the inputs' GPU, and agree with the CPU's reference kernels.
TEST(Ok, KernelsRunAndMatchTheCpu) {
  std::vector<float> x = Values(1000, 1), y = Values(1000, 2);
  ExpectSameBits(RunOp("relu", x, {}, MXC_DEVICE_GPU, 1),
                 RunOp("relu", x, {}, MXC_DEVICE_CPU, 0));
  ExpectSameBits(RunOp("elemwise_add", x, y, MXC_DEVICE_GPU, 0),
                 RunOp("elemwise_add", x, y, MXC_DEVICE_CPU, 0));
}

// ---- operators without a GPU kernel: the CPU fallback ----
// (core/op/device_fallback.c: host copies of the arrays through the
// engine, the CPU kernel, copies back; the fake's device memory faults
// on any host access, so a path that read it would crash here.)

struct HostArr {
  std::vector<int64_t> shape;
  std::vector<float> v;  // empty: left unset
};

using Params = std::vector<std::pair<const char *, const char *>>;

mxc_ndarray Upload(const HostArr &a, int dev, int id) {
  mxc_ndarray x = Make(a.shape, dev, id);
  if (!a.v.empty()) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(x, a.v.data(), a.v.size() * 4),
              MXC_OK)
        << LastError();
  }
  return x;
}

std::vector<float> Read(mxc_ndarray a) {
  int64_t n = -1;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  return ToHost(a, (size_t)n);
}

struct CallResult {
  int rc = MXC_OK;
  std::vector<std::vector<float>> outs, ins;  // after the call
};

// Runs `name` on dev(id): outputs created by the call (given == nullptr)
// or given, pre-filled and written with reqs. Created outputs must land
// on the call's device.
CallResult Call(const char *name, const Params &params,
                const std::vector<HostArr> &ins, int n_out, int dev, int id,
                const std::vector<HostArr> *given = nullptr,
                const std::vector<int> *reqs = nullptr) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(name, &op), MXC_OK) << name;
  std::vector<const char *> k, v;
  for (const auto &p : params) k.push_back(p.first), v.push_back(p.second);
  std::vector<mxc_ndarray> in, out((size_t)n_out, nullptr);
  for (const auto &a : ins) in.push_back(Upload(a, dev, id));
  for (int j = 0; given && j < n_out; ++j) {
    out[(size_t)j] = Upload((*given)[(size_t)j], dev, id);
  }
  CallResult r;
  r.rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                       (int)in.size(), out.data(), n_out,
                       reqs ? reqs->data() : nullptr);
  for (int j = 0; r.rc == MXC_OK && j < n_out; ++j) {
    r.rc = mxc_ndarray_wait_to_read(out[(size_t)j]);
  }
  for (int j = 0; r.rc == MXC_OK && j < n_out; ++j) {
    int t = -1, d = -1;
    EXPECT_EQ(mxc_ndarray_device(out[(size_t)j], &t, &d), MXC_OK);
    EXPECT_EQ(t, dev) << name;
    EXPECT_EQ(d, id) << name;
    r.outs.push_back(Read(out[(size_t)j]));
  }
  for (size_t i = 0; r.rc == MXC_OK && i < in.size(); ++i) {
    r.ins.push_back(Read(in[i]));
  }
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
  for (mxc_ndarray a : out) mxc_ndarray_free(a);
  return r;
}

// The same call on gpu(id) and on the CPU: both succeed, and every output
// and every input afterwards (updated states) agree bit for bit.
void ExpectLikeCpu(const char *what, const char *name, const Params &params,
                   const std::vector<HostArr> &ins, int n_out, int id = 0,
                   const std::vector<HostArr> *given = nullptr,
                   const std::vector<int> *reqs = nullptr,
                   uint64_t seed = 0) {
  if (seed) {
    ASSERT_EQ(mxc_random_seed(seed), MXC_OK);
  }
  CallResult g = Call(name, params, ins, n_out, MXC_DEVICE_GPU, id, given,
                      reqs);
  if (seed) {
    ASSERT_EQ(mxc_random_seed(seed), MXC_OK);
  }
  CallResult c = Call(name, params, ins, n_out, MXC_DEVICE_CPU, 0, given,
                      reqs);
  ASSERT_EQ(g.rc, MXC_OK) << what << ": " << LastError();
  ASSERT_EQ(c.rc, MXC_OK) << what << ": " << LastError();
  ASSERT_EQ(g.outs.size(), c.outs.size()) << what;
  for (size_t j = 0; j < g.outs.size(); ++j) {
    SCOPED_TRACE(std::string(what) + " output " + std::to_string(j));
    ExpectSameBits(g.outs[j], c.outs[j]);
  }
  for (size_t i = 0; i < g.ins.size(); ++i) {
    SCOPED_TRACE(std::string(what) + " input " + std::to_string(i));
    ExpectSameBits(g.ins[i], c.ins[i]);
  }
}

TEST(Ok, FallbackRunsOperatorsWithoutGpuKernelsLikeTheCpu) {
  HostArr x{{3, 5}, Values(15, 1)}, y{{1, 5}, Values(5, 2)};
  ExpectLikeCpu("tanh", "tanh", {}, {x}, 1);
  ExpectLikeCpu("tanh on gpu(1)", "tanh", {}, {x}, 1, 1);
  ExpectLikeCpu("broadcast", "broadcast_mul", {}, {x, y}, 1);
  // Several outputs.
  HostArr w{{2, 6}, Values(12, 3)};
  ExpectLikeCpu("split", "SliceChannel", {{"num_outputs", "3"}, {"axis", "1"}},
                {w}, 3);
  // Given outputs: add accumulates onto the GPU output's values, write
  // replaces them, null leaves them.
  std::vector<HostArr> given = {{{3, 5}, Values(15, 4)}};
  std::vector<int> add = {MXC_REQ_ADD}, write = {MXC_REQ_WRITE},
                   null = {MXC_REQ_NULL};
  ExpectLikeCpu("tanh add", "tanh", {}, {x}, 1, 0, &given, &add);
  ExpectLikeCpu("tanh write", "tanh", {}, {x}, 1, 0, &given, &write);
  ExpectLikeCpu("tanh null", "tanh", {}, {x}, 1, 0, &given, &null);
  // Some inputs empty, and a call with nothing at all.
  HostArr e{{2, 0}, {}}, f{{2, 3}, Values(6, 5)};
  ExpectLikeCpu("concat with an empty input", "Concat",
                {{"num_args", "2"}, {"dim", "1"}}, {e, f}, 1);
  ExpectLikeCpu("empty", "tanh", {}, {{{0}, {}}}, 1);
  // An optimizer: its momentum input is updated in place.
  HostArr wt{{8}, Values(8, 6)}, gr{{8}, Values(8, 7)}, mom{{8}, Values(8, 8)};
  ExpectLikeCpu("sgd_mom_update", "sgd_mom_update",
                {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}},
                {wt, gr, mom}, 1);
  // Random: the CPU's stream for the seed, a hidden output (Dropout's
  // mask) made and dropped on the CPU, and a call with no input (the
  // given output names the device).
  HostArr big{{40, 10}, Values(400, 9)};
  ExpectLikeCpu("dropout", "Dropout", {{"p", "0.5"}, {"mode", "always"}},
                {big}, 1, 0, nullptr, nullptr, 7);
  std::vector<HostArr> r23 = {{{2, 3}, {}}};
  ExpectLikeCpu("uniform", "_random_uniform",
                {{"low", "-1"}, {"high", "2"}, {"shape", "(2, 3)"}}, {}, 1, 0,
                &r23, &write, 11);
}

// A custom operator's callback: out = 2 * in (float32), per write mode.
int DoubleFwd(const mxc_custom_call *, int, const mxc_custom_tensor *in, int,
              const mxc_custom_tensor *out, const int *req) {
  int64_t n = 1;
  for (int d = 0; d < in[0].ndim; ++d) n *= in[0].shape[d];
  const float *x = static_cast<const float *>(in[0].data);
  float *y = static_cast<float *>(out[0].data);
  for (int64_t i = 0; i < n && req[0] != MXC_REQ_NULL; ++i) {
    y[i] = (req[0] == MXC_REQ_ADD ? y[i] : 0.f) + 2 * x[i];
  }
  return 0;
}

// Custom operators have no GPU kernel: their callbacks (host code) run
// on the host copies, never on device memory (which would fault here).
TEST(Ok, FallbackRunsCustomOperatorsOnHostCopies) {
  mxc_custom_op_def d = {};
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.forward = DoubleFwd;
  ASSERT_EQ(mxc_custom_op_register("devfb_double", &d), MXC_OK)
      << LastError();
  std::vector<HostArr> given = {{{3, 5}, Values(15, 4)}};
  std::vector<int> add = {MXC_REQ_ADD};
  ExpectLikeCpu("custom", "Custom", {{"op_type", "devfb_double"}},
                {{{3, 5}, Values(15, 1)}}, 1, 0, &given, &add);
  EXPECT_EQ(mxc_custom_op_unregister("devfb_double"), MXC_OK);
}

// The log callback's lines that mention the device fallback.
struct LogLines {
  std::mutex mu;
  std::vector<std::string> lines;
  static void Fn(int, const char *msg, void *self) {
    auto *l = static_cast<LogLines *>(self);
    std::lock_guard<std::mutex> g(l->mu);
    if (std::strstr(msg, "device fallback") || std::strstr(msg, "fused node")) {
      l->lines.push_back(msg);
    }
  }
  size_t Count() {
    std::lock_guard<std::mutex> g(mu);
    return lines.size();
  }
  // The lines holding `what`.
  std::vector<std::string> With(const char *what) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> r;
    for (const auto &l : lines) {
      if (l.find(what) != std::string::npos) r.push_back(l);
    }
    return r;
  }
};

TEST(Ok, FallbackLogsOneLinePerCaseAndCanBeSwitchedOff) {
  LogLines log;
  ASSERT_EQ(mxc_set_log_callback(&LogLines::Fn, &log), MXC_OK);
  mxc__fallback_log_reset();
  HostArr x{{4}, Values(4, 1)};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(Call("tanh", {}, {x}, 1, MXC_DEVICE_GPU, 0).rc, MXC_OK);
  }
  ASSERT_EQ(log.Count(), 1u);
  EXPECT_NE(log.lines[0].find("operator 'tanh' (float32) -> (float32) on "
                              "gpu(0)"),
            std::string::npos)
      << log.lines[0];
  EXPECT_EQ(Call("tanh", {}, {x}, 1, MXC_DEVICE_GPU, 1).rc, MXC_OK);
  EXPECT_EQ(log.Count(), 2u);  // another device: another case
  EXPECT_EQ(Call("SliceChannel", {{"num_outputs", "2"}}, {{{2, 2}, {}}}, 2,
                 MXC_DEVICE_GPU, 0)
                .rc,
            MXC_OK);
  ASSERT_EQ(log.Count(), 3u);
  EXPECT_NE(log.lines[2].find("(float32, float32) on gpu(0), params "
                              "{num_outputs=2"),
            std::string::npos)
      << log.lines[2];
  setenv("MXC_DEVICE_FALLBACK_LOG", "0", 1);
  mxc__fallback_log_reset();
  EXPECT_EQ(Call("tanh", {}, {x}, 1, MXC_DEVICE_GPU, 0).rc, MXC_OK);
  EXPECT_EQ(log.Count(), 3u);
  unsetenv("MXC_DEVICE_FALLBACK_LOG");
  // Off: refused as before the fallback, saying why.
  setenv("MXC_DEVICE_FALLBACK", "0", 1);
  mxc__fallback_log_reset();
  CallResult r = Call("tanh", {}, {x}, 1, MXC_DEVICE_GPU, 0);
  EXPECT_EQ(r.rc, MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find("no kernel for gpu(0)"), std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("MXC_DEVICE_FALLBACK=0"), std::string::npos)
      << LastError();
  unsetenv("MXC_DEVICE_FALLBACK");
  mxc__fallback_log_reset();
  ASSERT_EQ(mxc_set_log_callback(nullptr, nullptr), MXC_OK);
}

// Rows that decline calls by their parameters (core/base/gpu_plugin.h,
// the accepts table): the fake's LeakyReLU takes act_type leaky alone.
// The other forms run on the CPU fallback with the CPU's values (prelu
// with its gamma input, elu), logged with the row's reason; with the
// fallback off they are refused naming the operator and the reason,
// while leaky still runs (on the fake's row: nothing falls back).
TEST(Ok, CallsARowDeclinesRunOnTheCpuFallback) {
  LogLines log;
  ASSERT_EQ(mxc_set_log_callback(&LogLines::Fn, &log), MXC_OK);
  mxc__fallback_log_reset();
  HostArr x{{2, 3, 4}, Values(24, 7)}, gamma{{3}, {0.5f, -2, 0.25f}};
  ExpectLikeCpu("leaky", "LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.3"}},
                {x}, 1);
  EXPECT_EQ(log.Count(), 0u);  // the fake's row ran it
  ExpectLikeCpu("prelu", "LeakyReLU", {{"act_type", "prelu"}}, {x, gamma}, 1);
  ExpectLikeCpu("elu", "LeakyReLU", {{"act_type", "elu"}, {"slope", "0.3"}},
                {x}, 1, 1);
  const char *reason = "fake GPU: LeakyReLU takes act_type leaky only";
  ASSERT_EQ(log.Count(), 2u);
  for (const auto &l : log.lines) {
    EXPECT_NE(l.find(std::string("its kernel there declines the call (") +
                     reason + ")"),
              std::string::npos)
        << l;
  }
  setenv("MXC_DEVICE_FALLBACK", "0", 1);
  mxc__fallback_log_reset();
  EXPECT_EQ(Call("LeakyReLU", {{"act_type", "leaky"}}, {x}, 1, MXC_DEVICE_GPU,
                 0)
                .rc,
            MXC_OK)
      << LastError();
  CallResult r = Call("LeakyReLU", {{"act_type", "prelu"}}, {x, gamma}, 1,
                      MXC_DEVICE_GPU, 0);
  EXPECT_EQ(r.rc, MXC_ERR_UNSUPPORTED);
  for (const std::string &want :
       {std::string("operator 'LeakyReLU': the kernel of gpu(0) declines the "
                    "call (") + reason + ")",
        std::string("MXC_DEVICE_FALLBACK=0")}) {
    EXPECT_NE(LastError().find(want), std::string::npos) << LastError();
  }
  unsetenv("MXC_DEVICE_FALLBACK");
  mxc__fallback_log_reset();
  ASSERT_EQ(mxc_set_log_callback(nullptr, nullptr), MXC_OK);
}

// A fused node whose program the GPU's fused kernel declines runs one
// instruction at a time on the GPU, each with its own kernel (add, relu,
// _copy: the fake's; tanh, _mul_scalar: their CPU fallback), with the
// fused operator's CPU values and one log line per program and device:
// a program the generator cannot express (tanh), and one whose kernel
// fails to compile (the fake's MXC_FAKE_NVRTC=fail), which then runs on
// the fake's kernels alone, the CPU fallback off.
TEST(Ok, FusedProgramsTheGpuDeclinesRunUnfused) {
  LogLines log;
  ASSERT_EQ(mxc_set_log_callback(&LogLines::Fn, &log), MXC_OK);
  mxc__fallback_log_reset();
  HostArr x{{3, 5}, Values(15, 4)}, y{{3, 5}, Values(15, 5)};
  Params tanh_prog = {
      {"num_inputs", "2"},
      {"program", "add(i0,i1);relu(r0);tanh(r1);_mul_scalar(r2,scalar=3)"}};
  for (int k = 0; k < 3; ++k) {
    ExpectLikeCpu("tanh program", "_fused_elemwise", tanh_prog, {x, y}, 1);
  }
  auto fused = log.With("fused node on gpu(0)");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_NE(fused[0].find("('tanh') has no GPU micro-op"), std::string::npos)
      << fused[0];
  EXPECT_NE(fused[0].find("run one by one"), std::string::npos) << fused[0];
  setenv("MXC_FAKE_NVRTC", "fail", 1);
  setenv("MXC_DEVICE_FALLBACK", "0", 1);
  mxc__fallback_log_reset();
  std::vector<HostArr> given = {{{3, 5}, Values(15, 6)}};
  std::vector<int> add = {MXC_REQ_ADD};
  Params ok_prog = {{"num_inputs", "2"}, {"program", "add(i0,i1);relu(r0)"}};
  ExpectLikeCpu("compile failure", "_fused_elemwise", ok_prog, {x, y}, 1);
  ExpectLikeCpu("compile failure, add", "_fused_elemwise", ok_prog, {x, y}, 1,
                0, &given, &add);
  fused = log.With("fake NVRTC: the fused kernel failed to compile");
  EXPECT_EQ(fused.size(), 1u);
  unsetenv("MXC_DEVICE_FALLBACK");
  unsetenv("MXC_FAKE_NVRTC");
  mxc__fallback_log_reset();
  ASSERT_EQ(mxc_set_log_callback(nullptr, nullptr), MXC_OK);
}

// The fusion pass of a GPU executor asks the device's fused kernel: the
// chain relu, _mul_scalar, tanh, relu, _plus_scalar fuses around tanh
// (which the generator lacks) into two fused nodes on the GPU, where the
// CPU fuses all five into one; the forward gives the CPU's
// values.
TEST(Ok, GpuFusionLeavesOutWhatTheGeneratorLacks) {
  const char *json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "relu", "name": "a", "inputs": [[0, 0, 0]]},
      {"op": "_mul_scalar", "name": "b", "attrs": {"scalar": "2"},
       "inputs": [[1, 0, 0]]},
      {"op": "tanh", "name": "c", "inputs": [[2, 0, 0]]},
      {"op": "relu", "name": "d", "inputs": [[3, 0, 0]]},
      {"op": "_plus_scalar", "name": "e", "attrs": {"scalar": "1"},
       "inputs": [[4, 0, 0]]}],
      "arg_nodes": [0], "heads": [[5, 0, 0]]})";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << LastError();
  std::vector<float> x = Values(12, 8);
  std::vector<std::vector<float>> outs;
  for (int dev : {MXC_DEVICE_GPU, MXC_DEVICE_CPU}) {
    mxc_ndarray g = Upload({{3, 4}, x}, dev, 0);
    mxc_executor ex = nullptr;
    ASSERT_EQ(mxc_executor_bind(sym, dev, 0, 1, &g, nullptr, nullptr, 0,
                                nullptr, 0, &ex),
              MXC_OK)
        << LastError();
    char *dbg = nullptr;
    ASSERT_EQ(mxc_executor_debug_str(ex, &dbg), MXC_OK);
    std::string d(dbg);
    mxc_string_free(dbg);
    size_t n_fused = 0;
    for (size_t at = d.find("_fused_elemwise"); at != std::string::npos;
         at = d.find("_fused_elemwise", at + 1)) {
      ++n_fused;
    }
    EXPECT_EQ(n_fused, dev == MXC_DEVICE_GPU ? 2u : 1u) << d;
    ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << LastError();
    mxc_ndarray y = nullptr;
    ASSERT_EQ(mxc_executor_output(ex, 0, &y), MXC_OK);
    outs.push_back(Read(y));
    mxc_ndarray_free(y);
    mxc_executor_free(ex);
    mxc_ndarray_free(g);
  }
  ExpectSameBits(outs[0], outs[1]);
  mxc_symbol_free(sym);
}

// A CPU kernel failing on the values (an index out of range) surfaces at
// the wait on the GPU output, naming the operator; the engine goes on.
TEST(Ok, FallbackFailuresSurfaceAtTheWait) {
  CallResult r = Call("gather_nd", {}, {{{3}, {1, 2, 3}}, {{1, 1}, {5}}}, 1,
                      MXC_DEVICE_GPU, 0);
  EXPECT_EQ(r.rc, MXC_ERR_INVALID_ARGUMENT) << LastError();
  EXPECT_NE(LastError().find("gather_nd"), std::string::npos) << LastError();
  mxc_wait_all();  // clears the failure
  ExpectLikeCpu("after a failure", "tanh", {}, {{{4}, Values(4, 2)}}, 1);
}

// Allocation failures on every step of fallback calls (inputs, add into
// a given output, created outputs): a clean MXC_ERR_OOM, nothing left
// allocated, the library usable after.
TEST(Ok, FallbackAllocationFailuresLeakNothing) {
  HostArr x{{3, 5}, Values(15, 1)};
  std::vector<HostArr> given = {{{3, 5}, Values(15, 2)}};
  std::vector<int> add = {MXC_REQ_ADD};
  mxc_op tanh_op = nullptr, split = nullptr;
  ASSERT_EQ(mxc_op_find("tanh", &tanh_op), MXC_OK);
  ASSERT_EQ(mxc_op_find("SliceChannel", &split), MXC_OK);
  mxc_ndarray in = Upload(x, MXC_DEVICE_GPU, 0);
  mxc_ndarray acc = Upload(given[0], MXC_DEVICE_GPU, 0);
  auto scenario = [&]() {
    mxc_ndarray out[3] = {nullptr, nullptr, nullptr};
    int rc = mxc_op_invoke(tanh_op, nullptr, nullptr, 0, &in, 1, &acc, 1,
                           add.data());
    const char *k[2] = {"num_outputs", "axis"}, *v[2] = {"3", "0"};
    if (rc == MXC_OK) {
      rc = mxc_op_invoke(split, k, v, 2, &in, 1, out, 3, nullptr);
    }
    if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out[2]);
    for (mxc_ndarray a : out) mxc_ndarray_free(a);
    int wrc = mxc_wait_all();
    return rc != MXC_OK ? rc : wrc;
  };
  ASSERT_EQ(scenario(), MXC_OK) << LastError();  // warm: pools, workers
  int64_t base = mxc__alloc_live();
  int n = 1;
  for (; n < 400; ++n) {
    mxc__fault_alloc_arm(n, 0);
    int rc = scenario();
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    mxc_wait_all();
    if (!fired) {
      EXPECT_EQ(rc, MXC_OK) << LastError();
      break;
    }
    EXPECT_TRUE(rc == MXC_OK || rc == MXC_ERR_OOM) << n << ": " << LastError();
    EXPECT_EQ(mxc__alloc_live(), base) << "after failing allocation " << n;
  }
  EXPECT_LT(n, 400);
  EXPECT_EQ(scenario(), MXC_OK) << LastError();
  mxc_ndarray_free(in);
  mxc_ndarray_free(acc);
}

// Autograd over GPU arrays: the recorded tanh and its gradient both fall
// back; the gradient equals the CPU's.
std::vector<float> TanhGrad(int dev, const std::vector<float> &x) {
  mxc_ndarray a = Upload({{6}, x}, dev, 0);
  mxc_ndarray g = Upload({{6}, std::vector<float>(6, 0.f)}, dev, 0);
  EXPECT_EQ(mxc_autograd_mark_variables(1, &a, nullptr, &g), MXC_OK)
      << LastError();
  int prev = 0;
  EXPECT_EQ(mxc_autograd_set_recording(1, &prev), MXC_OK);
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find("tanh", &op), MXC_OK);
  mxc_ndarray y = nullptr;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &y, 1, nullptr),
            MXC_OK)
      << LastError();
  EXPECT_EQ(mxc_autograd_set_recording(prev, nullptr), MXC_OK);
  EXPECT_EQ(mxc_autograd_backward(1, &y, nullptr, 0), MXC_OK) << LastError();
  std::vector<float> v = Read(g);
  for (mxc_ndarray h : {a, g, y}) mxc_ndarray_free(h);
  return v;
}

TEST(Ok, FallbackUnderAutograd) {
  std::vector<float> x = {-2, -0.5f, 0, 0.25f, 1, 3};
  ExpectSameBits(TanhGrad(MXC_DEVICE_GPU, x), TanhGrad(MXC_DEVICE_CPU, x));
}

// An executor on a GPU whose nodes mix GPU kernels (relu, add) and
// fallbacks (tanh, broadcast_mul and the gradients), forward and
// backward with a gradient added into: the CPU executor's values.
struct ExecRun {
  std::vector<float> out, gx, gw;
};

ExecRun RunMixedExecutor(int dev, const std::vector<float> &x,
                         const std::vector<float> &w) {
  const char *json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "null", "name": "w", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]},
      {"op": "tanh", "name": "t", "inputs": [[2, 0, 0]]},
      {"op": "broadcast_mul", "name": "m", "inputs": [[3, 0, 0], [1, 0, 0]]},
      {"op": "elemwise_add", "name": "a", "inputs": [[4, 0, 0], [0, 0, 0]]}],
      "arg_nodes": [0, 1], "heads": [[5, 0, 0]]})";
  mxc_symbol sym = nullptr;
  EXPECT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << LastError();
  mxc_ndarray args[2] = {Upload({{3, 4}, x}, dev, 0),
                         Upload({{1, 4}, w}, dev, 0)};
  mxc_ndarray grads[2] = {Upload({{3, 4}, std::vector<float>(12, 0.f)}, dev, 0),
                          Upload({{1, 4}, {1, 2, 3, 4}}, dev, 0)};
  int reqs[2] = {MXC_REQ_WRITE, MXC_REQ_ADD};
  mxc_executor ex = nullptr;
  ExecRun r;
  EXPECT_EQ(mxc_executor_bind(sym, dev, 0, 2, args, grads, reqs, 0, nullptr,
                              0, &ex),
            MXC_OK)
      << LastError();
  if (ex) {
    EXPECT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << LastError();
    mxc_ndarray hg = Upload({{3, 4}, Values(12, 5)}, dev, 0);
    EXPECT_EQ(mxc_executor_backward(ex, 1, &hg), MXC_OK) << LastError();
    mxc_ndarray y = nullptr;
    EXPECT_EQ(mxc_executor_output(ex, 0, &y), MXC_OK);
    r.out = Read(y);
    r.gx = Read(grads[0]);
    r.gw = Read(grads[1]);
    for (mxc_ndarray h : {hg, y}) mxc_ndarray_free(h);
    mxc_executor_free(ex);
  }
  for (mxc_ndarray h : {args[0], args[1], grads[0], grads[1]}) {
    mxc_ndarray_free(h);
  }
  mxc_symbol_free(sym);
  return r;
}

TEST(Ok, ExecutorMixesGpuKernelsAndFallbackNodes) {
  std::vector<float> x = Values(12, 3), w = {0.5f, -1, 2, 0};
  x[5] = 1.5f;  // no NaN: it would spread through the sum of gw
  ExecRun g = RunMixedExecutor(MXC_DEVICE_GPU, x, w);
  ExecRun c = RunMixedExecutor(MXC_DEVICE_CPU, x, w);
  ASSERT_EQ(c.out.size(), 12u);
  ExpectSameBits(g.out, c.out);
  ExpectSameBits(g.gx, c.gx);
  ExpectSameBits(g.gw, c.gw);
}

TEST(Ok, MixedDevicesAreRefused) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("elemwise_add", &op), MXC_OK);
  mxc_ndarray in[2] = {Make({4}, MXC_DEVICE_GPU, 0), Make({4}, MXC_DEVICE_CPU, 0)};
  mxc_ndarray out = nullptr;
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &out, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("input 1 is on cpu(0) but the call runs on "
                             "gpu(0)"),
            std::string::npos)
      << LastError();
  in[1] = Make({4}, MXC_DEVICE_GPU, 1);
  EXPECT_EQ(mxc_op_invoke(op, nullptr, nullptr, 0, in, 2, &out, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("gpu(1)"), std::string::npos) << LastError();
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
}

// A kernel's failure surfaces at the next wait, naming the operator and
// carrying the runtime's reason.
TEST(Ok, KernelFailuresSurfaceAtTheWait) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("sigmoid", &op), MXC_OK);
  mxc_ndarray a = Make({4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray out = nullptr;
  int rc = mxc_op_invoke(op, nullptr, nullptr, 0, &a, 1, &out, 1, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  EXPECT_NE(rc, MXC_OK);
  EXPECT_NE(LastError().find("sigmoid"), std::string::npos) << LastError();
  EXPECT_NE(LastError().find("illegal memory access"), std::string::npos)
      << LastError();
  mxc_ndarray_free(out);
  mxc_ndarray_free(a);
  mxc_wait_all();  // clears the failure
}

// An executor bound on a GPU runs its nodes with the GPU kernels.
TEST(Ok, ExecutorRunsOnTheGpu) {
  const char *json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << LastError();
  std::vector<float> x = Values(12, 3);
  mxc_ndarray g = Make({3, 4}, MXC_DEVICE_GPU, 1);
  ASSERT_EQ(mxc_ndarray_copy_from_host(g, x.data(), 48), MXC_OK);
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(sym, MXC_DEVICE_GPU, 1, 1, &g, nullptr, nullptr,
                              0, nullptr, 0, &ex),
            MXC_OK)
      << LastError();
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << LastError();
  mxc_ndarray y = nullptr;
  ASSERT_EQ(mxc_executor_output(ex, 0, &y), MXC_OK);
  ExpectSameBits(ToHost(y, 12), RunOp("relu", x, {}, MXC_DEVICE_CPU, 0));
  mxc_ndarray_free(y);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
  mxc_ndarray_free(g);
}

// simple_bind on a GPU: its arguments and gradients start as zeros, made
// by a copy from host memory (host fills cannot touch device memory), so
// binding succeeds and the arrays read back as zeros.
TEST(Ok, SimpleBindZerosGpuArrays) {
  const char *json = R"({"nodes": [
      {"op": "null", "name": "x", "inputs": []},
      {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  mxc_symbol sym = nullptr;
  ASSERT_EQ(mxc_symbol_from_json(json, &sym), MXC_OK) << LastError();
  const char *names[1] = {"x"};
  int ndims[1] = {2};
  int64_t dims[2] = {2, 3};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(sym, MXC_DEVICE_GPU, 0, 1, names, ndims,
                                     dims, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, MXC_BIND_DEFAULT, &ex),
            MXC_OK)
      << LastError();
  mxc_ndarray x = nullptr, gx = nullptr;
  ASSERT_EQ(mxc_executor_arg(ex, "x", &x), MXC_OK) << LastError();
  ASSERT_EQ(mxc_executor_grad(ex, "x", &gx), MXC_OK) << LastError();
  int t = 0, id = -1;
  ASSERT_EQ(mxc_ndarray_device(x, &t, &id), MXC_OK);
  EXPECT_EQ(t, MXC_DEVICE_GPU);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(ToHost(x, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(ToHost(gx, 6), std::vector<float>(6, 0.0f));
  mxc_ndarray_free(gx);
  mxc_ndarray_free(x);
  mxc_executor_free(ex);
  mxc_symbol_free(sym);
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

// Exported and imported back: the import is gpu(1) over the same device
// memory (no copy), its values the original's; the exported tensor is
// released when the import is freed.
TEST(Ok, DlpackImportOfACudaTensorIsAGpuArray) {
  mxc_ndarray g = Make({2, 3}, MXC_DEVICE_GPU, 1);
  const std::vector<float> v{1, 2, 3, 4, 5, 6};
  ASSERT_EQ(mxc_ndarray_copy_from_host(g, v.data(), 24), MXC_OK);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(g, &t), MXC_OK) << LastError();
  void *data = t->dl_tensor.data;
  mxc_ndarray b = nullptr;
  ASSERT_EQ(mxc_ndarray_from_dlpack(t, &b), MXC_OK) << LastError();
  int type = -1, id = -1;
  ASSERT_EQ(mxc_ndarray_device(b, &type, &id), MXC_OK);
  EXPECT_EQ(type, MXC_DEVICE_GPU);
  EXPECT_EQ(id, 1);
  DLManagedTensor *again = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(b, &again), MXC_OK) << LastError();
  EXPECT_EQ(again->dl_tensor.data, data);  // the same memory
  again->deleter(again);
  std::vector<float> out(6, -1.f);
  ASSERT_EQ(mxc_ndarray_copy_to_host(b, out.data(), 24), MXC_OK);
  EXPECT_EQ(out, v);
  mxc_ndarray_free(b);  // calls t's deleter
  mxc_ndarray_free(g);
}

// A CUDA tensor naming a GPU the plug-in does not have.
TEST(Ok, DlpackImportOfAMissingGpuIsRefused) {
  mxc_ndarray g = Make({2}, MXC_DEVICE_GPU, 0);
  DLManagedTensor *t = nullptr;
  ASSERT_EQ(mxc_ndarray_to_dlpack(g, &t), MXC_OK) << LastError();
  t->dl_tensor.device.device_id = 7;
  mxc_ndarray b = nullptr;
  EXPECT_EQ(mxc_ndarray_from_dlpack(t, &b), MXC_ERR_UNSUPPORTED);
  EXPECT_NE(LastError().find("gpu(7)"), std::string::npos) << LastError();
  t->deleter(t);  // refused: still the caller's
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

// A failing copy of the fallback (here every copy fails) surfaces at the
// wait naming the operator it was for.
TEST(CopyFail, FallbackCopyFailureNamesTheOperator) {
  mxc_op op = nullptr;
  ASSERT_EQ(mxc_op_find("tanh", &op), MXC_OK);
  mxc_ndarray g = Make({4}, MXC_DEVICE_GPU, 0);
  mxc_ndarray out = nullptr;
  int rc = mxc_op_invoke(op, nullptr, nullptr, 0, &g, 1, &out, 1, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  EXPECT_NE(rc, MXC_OK);
  EXPECT_NE(LastError().find("'tanh (CPU fallback: copy from gpu(0))'"),
            std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("illegal memory access"), std::string::npos)
      << LastError();
  mxc_ndarray_free(out);
  mxc_ndarray_free(g);
  mxc_wait_all();
}

}  // namespace
